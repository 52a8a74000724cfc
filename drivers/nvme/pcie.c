/* PCIe configuration through ECAM (pcie.h): find a class code below the root bus (numbering
 * bridges), place BAR0, open the bridges' windows. */
#include "pcie.h"

#include "streamfat/sf.h"

/* Type-0 configuration header offsets (PCI Local Bus 3.0, 6.1). */
#define CFG_ID        0x00u   /* vendor (16) | device (16) << 16 */
#define CFG_CMD       0x04u   /* command (16) | status (16) << 16 */
#define CFG_CLASS     0x08u   /* revision (8) | class code (24) << 8 */
#define CFG_HDR       0x0Cu   /* header type in bits 23:16, bit 23: multi-function */
#define CFG_BAR0      0x10u
/* Type-1 (bridge) header (PCI-to-PCI Bridge 1.2, 3.2) */
#define CFG_BUSES     0x18u   /* primary | secondary << 8 | subordinate << 16 | latency << 24 */
#define CFG_IO_WIN    0x1Cu   /* I/O base (8) | limit (8) << 8 | secondary status << 16 */
#define CFG_MEM_WIN   0x20u   /* memory base [31:20] in 15:4 | limit [31:20] in 31:20 */
#define CFG_PREF_WIN  0x24u   /* prefetchable base | limit, same layout */

#define CMD_MEM       0x0002u
#define CMD_MASTER    0x0004u
#define CMD_INTX_OFF  0x0400u

static volatile uint32_t *cfg(const struct sf_pcie_host *h, unsigned bus, unsigned dev,
                              unsigned fn, unsigned off)
{
    /* ECAM: 1 MiB per bus, 32 KiB per device, 4 KiB per function (PCIe 3.0, 7.2.2) */
    return (volatile uint32_t *)(h->ecam + ((uintptr_t)bus << 20) + ((uintptr_t)dev << 15) +
                                 ((uintptr_t)fn << 12) + off);
}

static int scan(struct sf_pcie_host *h, unsigned bus, uint32_t class_code,
                struct sf_pcie_fn *out, unsigned depth)
{
    for (unsigned dev = 0; dev < 32; dev++) {
        for (unsigned fn = 0; fn < 8; fn++) {
            uint32_t id = *cfg(h, bus, dev, fn, CFG_ID);
            if ((id & 0xFFFFu) == 0xFFFFu) {
                if (fn == 0)
                    break;              /* no device: no other function either */
                continue;
            }
            uint32_t cls = *cfg(h, bus, dev, fn, CFG_CLASS) >> 8;
            uint32_t hdr = *cfg(h, bus, dev, fn, CFG_HDR) >> 16;
            if (cls == class_code && (hdr & 0x7Fu) == 0) {
                out->bus = (uint8_t)bus;
                out->dev = (uint8_t)dev;
                out->fn = (uint8_t)fn;
                out->vendor = (uint16_t)id;
                out->device = (uint16_t)(id >> 16);
                out->class_code = cls;
                out->bar0 = 0;
                out->bar0_size = 0;
                out->nbridges = (uint8_t)depth;
                return 0;
            }
            if ((hdr & 0x7Fu) == 1 && depth < SF_PCIE_MAX_BRIDGES &&
                h->bus_max < (h->bus_last ? h->bus_last : 255u)) {
                /* number the bridge: everything up to 255 below it while we look, then
                 * the highest bus found below it */
                volatile uint32_t *buses = cfg(h, bus, dev, fn, CFG_BUSES);
                unsigned sec = ++h->bus_max;
                *buses = (*buses & 0xFF000000u) | 0xFF0000u | sec << 8 | bus;
                int found = scan(h, sec, class_code, out, depth + 1) == 0;
                *buses = (*buses & 0xFF000000u) | (uint32_t)h->bus_max << 16 | sec << 8 | bus;
                if (found) {
                    out->bridge[depth].bus = (uint8_t)bus;
                    out->bridge[depth].dev = (uint8_t)dev;
                    out->bridge[depth].fn = (uint8_t)fn;
                    return 0;
                }
            }
            if (fn == 0 && !(hdr & 0x80u))
                break;                  /* single-function device */
        }
    }
    return SF_ENOENT;
}

int sf_pcie_find_class(struct sf_pcie_host *h, uint32_t class_code, struct sf_pcie_fn *out)
{
    h->bus_max = h->bus;
    return scan(h, h->bus, class_code, out, 0);
}

int sf_pcie_enable_bar0(struct sf_pcie_host *h, struct sf_pcie_fn *f)
{
    volatile uint32_t *cmd = cfg(h, f->bus, f->dev, f->fn, CFG_CMD);
    volatile uint32_t *bar = cfg(h, f->bus, f->dev, f->fn, CFG_BAR0);
    uint32_t orig = bar[0];
    int is64;
    uint64_t mask;

    if (orig & 1u)
        return SF_ENOTSUP;              /* an I/O BAR */
    is64 = ((orig >> 1) & 3u) == 2u;
    /* size it with decoding off: all ones in, the address bits that stick out */
    *cmd = (*cmd & 0xFFFFu & ~(uint32_t)(CMD_MEM | CMD_MASTER));
    bar[0] = 0xFFFFFFFFu;
    mask = bar[0] & ~0xFull;
    if (is64) {
        bar[1] = 0xFFFFFFFFu;
        mask |= (uint64_t)bar[1] << 32;
    } else {
        mask |= 0xFFFFFFFF00000000ull;
    }
    uint64_t size = ~mask + 1;
    if ((mask & 0xFFFFFFF0u) == 0 || size == 0 || (size & (size - 1)))
        return SF_ENOTSUP;              /* no BAR0 */

    uint64_t next = h->mem_next ? h->mem_next : h->mem_pci;
    uint64_t align = f->nbridges && size < (1u << 20) ? (1u << 20) : size;
    uint64_t at = (next + align - 1) & ~(align - 1);
    if (at < h->mem_pci || at + size > h->mem_pci + h->mem_size || at + size > 0x100000000ull)
        return SF_ENOSPC;
    bar[0] = (uint32_t)at | (orig & 0xFu);
    if (is64)
        bar[1] = (uint32_t)(at >> 32);
    h->mem_next = f->nbridges ? (at + size + 0xFFFFFu) & ~0xFFFFFull : at + size;
    f->bar0 = (uintptr_t)(at - h->mem_pci + h->mem_cpu);
    f->bar0_size = size;
    /* the bridges above: a memory window of whole MiBs around the BAR, no I/O or
     * prefetchable window (base above limit), forwarding and bus mastering on */
    uint32_t win = (uint32_t)((at >> 16) & 0xFFF0u) | (uint32_t)((at + size - 1) & 0xFFF00000u);
    for (unsigned i = 0; i < f->nbridges; i++) {
        unsigned b = f->bridge[i].bus, d = f->bridge[i].dev, fn = f->bridge[i].fn;
        *cfg(h, b, d, fn, CFG_MEM_WIN) = win;
        *cfg(h, b, d, fn, CFG_PREF_WIN) = 0x0000FFF0u;
        *cfg(h, b, d, fn, CFG_IO_WIN) = 0x000000F0u;
        volatile uint32_t *bc = cfg(h, b, d, fn, CFG_CMD);
        *bc = (*bc & 0xFFFFu) | CMD_MEM | CMD_MASTER;
    }
    *cmd = (*cmd & 0xFFFFu) | CMD_MEM | CMD_MASTER | CMD_INTX_OFF;
    return 0;
}
