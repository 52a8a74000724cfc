/* QEMU virt board support (board.h). */
#include "board.h"
#include "report.h"
#include "semihost.h"

#include <string.h>

/* ---- semihosting (examples/common/semihost.c: HLT #0xF000 on AArch64) ------------------- */

void board_exit(int status)
{
    sh_exit(status);
}

const char *board_cmdline(void)
{
    static char buf[256];
    if (sh_cmdline(buf, sizeof buf) != 0)
        return "";
    /* the first word is the image's name */
    const char *p = buf;
    while (*p && *p != ' ')
        p++;
    while (*p == ' ')
        p++;
    return p;
}

/* ---- PL011 UART ------------------------------------------------------------------------- */

#define UART_DR 0x00u
#define UART_FR 0x18u
#define FR_TXFF 0x20u

static uintptr_t uart;

static void putc_(char c)
{
    if (!uart)
        return;
    while (*(volatile uint32_t *)(uart + UART_FR) & FR_TXFF)
        ;
    *(volatile uint32_t *)(uart + UART_DR) = (uint8_t)c;
}

void board_puts(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            putc_('\r');
        putc_(*s);
    }
}

/* the report's console (examples/common/report.h) */
void report_puts(const char *s)
{
    board_puts(s);
}

void board_put_u64(uint64_t v)
{
    char b[RP_U64_CHARS];
    board_puts(rp_u64(b, v));
}

void board_put_hex(uint64_t v)
{
    char b[RP_HEX_CHARS];
    board_puts(rp_hex(b, v));
}

/* ---- generic timer ---------------------------------------------------------------------- */

uint64_t board_now_us(void)
{
    uint64_t cnt, frq;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(cnt));
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
    if (!frq)
        return 0;
    return cnt / frq * 1000000u + cnt % frq * 1000000u / frq;
}

/* ---- exceptions (start.S) --------------------------------------------------------------- */

void board_fault(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far);
void board_fault(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far)
{
    board_puts("nvme: fault: exception ");
    board_put_u64(kind);
    board_puts(" esr ");
    board_put_hex(esr);
    board_puts(" elr ");
    board_put_hex(elr);
    board_puts(" far ");
    board_put_hex(far);
    board_puts("\n");
    board_exit(3);
}

/* ---- the flattened device tree (Devicetree Specification 0.4, 5) ----------------------- */

#define FDT_MAGIC      0xD00DFEEDu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE   2u
#define FDT_PROP       3u
#define FDT_NOP        4u
#define FDT_END        9u

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t cells(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++)
        v = v << 32 | be32(p + 4u * i);
    return v;
}

/* does the string list (compatible) hold s? */
static int has_string(const uint8_t *list, uint32_t len, const char *s)
{
    uint32_t i = 0;
    while (i < len) {
        const char *w = (const char *)list + i;
        if (strcmp(w, s) == 0)
            return 1;
        i += (uint32_t)strlen(w) + 1u;
    }
    return 0;
}

/* The properties of one node below the root that we look at. */
struct node {
    const uint8_t *compat, *reg, *ranges, *bus_range;
    uint32_t compat_len, reg_len, ranges_len, bus_range_len;
};

int board_init(struct board_pcie *pcie)
{
    const uint8_t *fdt = (const uint8_t *)(uintptr_t)BOARD_FDT;
    if (be32(fdt) != FDT_MAGIC)
        return -1;
    uint32_t total = be32(fdt + 4);
    const uint8_t *st = fdt + be32(fdt + 8), *strs = fdt + be32(fdt + 12);
    const uint8_t *end = fdt + total;
    uint32_t root_ac = 2, root_sc = 2, depth = 0;
    struct node nd;
    int have_uart = 0, have_pcie = 0;

    memset(&nd, 0, sizeof nd);
    memset(pcie, 0, sizeof *pcie);
    for (const uint8_t *p = st; p + 4 <= end;) {
        uint32_t tok = be32(p);
        p += 4;
        if (tok == FDT_BEGIN_NODE) {
            p += (strlen((const char *)p) + 1u + 3u) & ~3u;
            depth++;
            if (depth == 2)
                memset(&nd, 0, sizeof nd);
        } else if (tok == FDT_END_NODE) {
            if (depth == 2 && nd.compat) {
                uint32_t entry = 4u * (root_ac + root_sc);
                if (!have_uart && has_string(nd.compat, nd.compat_len, "arm,pl011") &&
                    nd.reg && nd.reg_len >= entry) {
                    uart = (uintptr_t)cells(nd.reg, root_ac);
                    have_uart = 1;
                }
                if (!have_pcie && has_string(nd.compat, nd.compat_len, "pci-host-ecam-generic") &&
                    nd.reg && nd.reg_len >= entry && nd.ranges) {
                    pcie->ecam = cells(nd.reg, root_ac);
                    pcie->ecam_size = cells(nd.reg + 4u * root_ac, root_sc);
                    pcie->bus_first = 0;
                    pcie->bus_last = 255;
                    if (nd.bus_range && nd.bus_range_len >= 8) {
                        pcie->bus_first = be32(nd.bus_range);
                        pcie->bus_last = be32(nd.bus_range + 4);
                    }
                    /* ranges: child (3 cells: phys.hi, address) parent (root_ac) size (2) */
                    uint32_t rl = 4u * (3u + root_ac + 2u);
                    for (uint32_t o = 0; o + rl <= nd.ranges_len; o += rl) {
                        const uint8_t *r = nd.ranges + o;
                        uint32_t space = (be32(r) >> 24) & 3u;     /* 2: 32-bit memory */
                        if (space == 2u && !(be32(r) & 0x40000000u)) {  /* not prefetchable */
                            pcie->mem_pci = cells(r + 4, 2);
                            pcie->mem_cpu = cells(r + 12, root_ac);
                            pcie->mem_size = cells(r + 12 + 4u * root_ac, 2);
                            have_pcie = 1;
                            break;
                        }
                    }
                }
            }
            if (depth == 0)
                return -1;
            depth--;
        } else if (tok == FDT_PROP) {
            uint32_t len = be32(p), nameoff = be32(p + 4);
            const uint8_t *val = p + 8;
            const char *name = (const char *)strs + nameoff;
            p += 8u + ((len + 3u) & ~3u);
            if (depth == 1) {
                if (strcmp(name, "#address-cells") == 0 && len == 4)
                    root_ac = be32(val);
                else if (strcmp(name, "#size-cells") == 0 && len == 4)
                    root_sc = be32(val);
            } else if (depth == 2) {
                if (strcmp(name, "compatible") == 0) {
                    nd.compat = val;
                    nd.compat_len = len;
                } else if (strcmp(name, "reg") == 0) {
                    nd.reg = val;
                    nd.reg_len = len;
                } else if (strcmp(name, "ranges") == 0) {
                    nd.ranges = val;
                    nd.ranges_len = len;
                } else if (strcmp(name, "bus-range") == 0) {
                    nd.bus_range = val;
                    nd.bus_range_len = len;
                }
            }
        } else if (tok == FDT_NOP) {
            continue;
        } else {
            break;                      /* FDT_END or garbage */
        }
    }
    if (!have_uart)
        return -2;
    return have_pcie ? 0 : -3;
}
