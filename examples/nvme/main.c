/* streamfat on bare-metal AArch64 with an NVMe SSD, under QEMU's virt board: the shape of
 * an FPGA/SoC capture system that streams to its own NVMe queue.
 *
 * The run: find the PCIe host and the UART in the device tree, find the NVMe controller on
 * the root bus, give it its BAR and bus mastering, start the driver (drivers/nvme), format
 * the namespace exFAT with 1 MiB clusters, then
 *   1. stream RAW.BIN: `raw` MiB (default 256) of the `gen:raw` pattern of the CLI (byte i
 *      of the stream is byte i mod 8 of the little-endian u64 i / 8) through sf_stream in
 *      1 MiB asynchronous requests, `qd` (default 8) in flight;
 *   2. log `can` (default 200,000) CAN frames of the `gen:can` pattern (frame k: id
 *      0x100 + k mod 16, 8 data bytes = k as u64 LE, 100 us apart) through the logger
 *      into CAN/LOG*.SFL, rotating every 2 MiB;
 * unmount, report over the UART what the controller saw (commands by kind and size, the
 * deepest queue), shut the controller down, exit through semihosting.
 *
 * Command line (QEMU -append): "raw=MiB can=N qd=N fault=N lost=N timeout=MS", all
 * optional; fault=N makes the driver's fault hook fail the Nth write command of the raw
 * stream with a Write Fault status (SCT 2, SC 0x80), lost=N drop that command's completion
 * (the driver times out after timeout=MS, default 5000).
 * The lines starting with "nvme:" are the report tests/scripts/t_hw_nvme.sh reads.
 * Exit status: 0 ok, 1 a streamfat or driver call failed, 2 no controller / no PCIe host,
 * 3 a CPU exception, 4 no UART. */
#include <stdint.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/stream.h"

#include "board.h"
#include "nvme.h"
#include "pcie.h"

#define MIB           (1u << 20)
#define RAW_NAME      "/RAW.BIN"
#define NBUF          8u                     /* raw buffers: queue depth at most */
#define CAN_BLOCK     (64u << 10)
#define CAN_RING      (1u << 20)
#define CAN_SPLIT     (2u << 20)
#define NVME_QD       16u
#define EPOCH_MS      1767225600000ull       /* 2026-01-01 00:00 UTC: no RTC here */
#define NVME_CLASS    0x010802u              /* mass storage, NVM, NVMe */

/* Everything the controller reads or writes: in .bufs (not zeroed at start-up). */
static uint8_t rawbuf[NBUF][MIB] __attribute__((section(".bufs"), aligned(4096)));
static uint8_t ring[CAN_RING] __attribute__((section(".bufs"), aligned(4096)));
static uint8_t nvme_mem[SF_NVME_MEM_SIZE(NVME_QD)] __attribute__((section(".bufs"), aligned(4096)));
static uint8_t work[CAN_BLOCK] __attribute__((section(".bufs"), aligned(4096)));
static uint8_t vol_cache[64u << 10] __attribute__((section(".bufs"), aligned(4096)));

static struct sf_nvme nv;
static struct sf_vol vol;
static struct sf_stream raw;
static struct sf_log lg;

/* ---- options ------------------------------------------------------------------------------- */

static struct {
    uint32_t raw_mib, can, qd, fault, lost, timeout_ms;
} opt = { 256, 200000, 8, 0, 0, 0 };

static uint32_t parse_u32(const char *p)
{
    uint32_t v = 0;
    while (*p >= '0' && *p <= '9' && v < 100000000u)
        v = v * 10u + (uint32_t)(*p++ - '0');
    return v;
}

static void parse_options(const char *p)
{
    while (*p) {
        if (strncmp(p, "raw=", 4) == 0)
            opt.raw_mib = parse_u32(p + 4);
        else if (strncmp(p, "can=", 4) == 0)
            opt.can = parse_u32(p + 4);
        else if (strncmp(p, "qd=", 3) == 0)
            opt.qd = parse_u32(p + 3);
        else if (strncmp(p, "fault=", 6) == 0)
            opt.fault = parse_u32(p + 6);
        else if (strncmp(p, "lost=", 5) == 0)
            opt.lost = parse_u32(p + 5);
        else if (strncmp(p, "timeout=", 8) == 0)
            opt.timeout_ms = parse_u32(p + 8);
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    if (opt.qd < 1 || opt.qd > NBUF)
        opt.qd = NBUF;
}

/* ---- report -------------------------------------------------------------------------------- */

static void kv(const char *k, uint64_t v)
{
    board_puts(" ");
    board_puts(k);
    board_puts(" ");
    board_put_u64(v);
}

static void report_nvme(void)
{
    const struct sf_nvme_stats *s = &nv.st;
    board_puts("nvme: commands");
    kv("read", s->reads);
    kv("write", s->writes);
    kv("flush", s->flushes);
    kv("admin", s->admin);
    kv("errors", s->errors);
    board_puts("\n");
    board_puts("nvme: bytes");
    kv("read", s->bytes_read);
    kv("written", s->bytes_written);
    board_puts("\n");
    for (unsigned k = 0; k < SF_NVME_HIST; k++) {
        if (!s->size_hist[k])
            continue;
        board_puts("nvme: size");
        kv("from", 1ull << k);
        kv("count", s->size_hist[k]);
        board_puts("\n");
    }
    board_puts("nvme: max_depth ");
    board_put_u64(s->max_depth);
    board_puts("\n");
}

static int failed(const char *what, int err)
{
    board_puts("nvme: ");
    board_puts(what);
    board_puts(" failed: ");
    board_puts(sf_strerror(err));
    board_puts(" (");
    if (err < 0) {
        board_puts("-");
        board_put_u64((uint64_t)-(int64_t)err);
    } else {
        board_put_u64((uint64_t)err);
    }
    board_puts(")");
    if (nv.st.last_status) {
        board_puts(" status ");
        board_put_hex(nv.st.last_status);
    }
    board_puts("\n");
    return 1;
}

/* ---- fault injection ------------------------------------------------------------------- */

static uint64_t writes_seen;
static int fault_armed;                 /* counting: from the start of the raw stream */

static uint16_t fault_hook(void *ctx, uint8_t opcode, uint64_t lba, uint32_t count)
{
    (void)ctx;
    (void)lba;
    (void)count;
    if (!fault_armed || opcode != 1)
        return 0;
    writes_seen++;
    if (writes_seen == opt.fault)
        return 2u << 8 | 0x80u;         /* SCT 2 (media), SC 0x80: Write Fault */
    if (writes_seen == opt.lost)
        return SF_NVME_FAULT_LOST;      /* never completes: the driver's timeout */
    return 0;
}

/* ---- clocks -------------------------------------------------------------------------------- */

static uint64_t clock_us(void *ctx)
{
    (void)ctx;
    return board_now_us();
}

static sf_time_ms vol_clock(void *ctx)
{
    (void)ctx;
    return (sf_time_ms)(EPOCH_MS + board_now_us() / 1000u);
}

static uint64_t log_clock(void *ctx)
{
    (void)ctx;
    return board_now_us() * 1000u;
}

/* ---- bring-up ------------------------------------------------------------------------------ */

static int bring_up(void)
{
    struct board_pcie bp;
    int e = board_init(&bp);
    if (e == -1 || e == -2)
        return 4;                       /* nowhere to report: the exit status says it */
    if (e) {
        board_puts("nvme: no PCIe host (pci-host-ecam-generic) in the device tree\n");
        return 2;
    }
    board_puts("nvme: pcie ecam ");
    board_put_hex(bp.ecam);
    board_puts(" mem ");
    board_put_hex(bp.mem_cpu);
    board_puts(" size ");
    board_put_hex(bp.mem_size);
    board_puts("\n");

    struct sf_pcie_host h;
    struct sf_pcie_fn f;
    memset(&h, 0, sizeof h);
    h.ecam = (uintptr_t)bp.ecam;
    h.bus = (uint8_t)bp.bus_first;
    h.mem_cpu = bp.mem_cpu;
    h.mem_pci = bp.mem_pci;
    h.mem_size = bp.mem_size;
    h.bus_last = (uint8_t)bp.bus_last;
    if (sf_pcie_find_class(&h, NVME_CLASS, &f)) {
        board_puts("nvme: no NVMe controller on the PCIe bus\n");
        return 2;
    }
    if ((e = sf_pcie_enable_bar0(&h, &f)))
        return failed("sf_pcie_enable_bar0", e);
    board_puts("nvme: controller ");
    board_put_hex(f.vendor);
    board_puts(":");
    board_put_hex(f.device);
    kv("bus", f.bus);
    kv("dev", f.dev);
    kv("bridges", f.nbridges);
    board_puts(" bar0 ");
    board_put_hex(f.bar0);
    board_puts("\n");

    struct sf_nvme_cfg c;
    memset(&c, 0, sizeof c);
    c.regs = f.bar0;
    c.mem = nvme_mem;
    c.mem_size = sizeof nvme_mem;
    c.queue_depth = NVME_QD;
    c.clock = clock_us;
    c.timeout_ms = opt.timeout_ms;
    if (opt.fault || opt.lost)
        c.fault = fault_hook;
    if ((e = sf_nvme_init(&nv, &c)))
        return failed("sf_nvme_init", e);
    board_puts("nvme: model ");
    board_puts(nv.model);
    board_puts(" serial ");
    board_puts(nv.serial);
    kv("mdts", nv.mdts);
    kv("max_transfer", nv.max_bytes);
    kv("sector", nv.bd.sector_size);
    kv("sectors", nv.bd.sector_count);
    kv("queue_depth", nv.cfg.queue_depth);
    board_puts("\n");
    return 0;
}

static int format_and_mount(void)
{
    struct sf_mkfs_opts mo;
    struct sf_vol_cfg vc;
    const char *why = "";
    int e;

    memset(&mo, 0, sizeof mo);
    mo.fs_type = SF_FS_EXFAT;
    mo.cluster_size = MIB;
    mo.label = "NVME";
    mo.serial = 0x4E564D45u;
    mo.now = (sf_time_ms)EPOCH_MS;
    mo.buf = rawbuf[0];                 /* free until the stream starts */
    mo.buf_size = MIB;
    if ((e = sf_mkfs(&nv.bd, &mo, &why))) {
        board_puts("nvme: mkfs: ");
        board_puts(why);
        board_puts("\n");
        return failed("sf_mkfs", e);
    }
    memset(&vc, 0, sizeof vc);
    vc.bd = &nv.bd;
    vc.buf = vol_cache;
    vc.buf_size = sizeof vol_cache;
    vc.clock = vol_clock;
    if ((e = sf_mount(&vol, &vc)))
        return failed("sf_mount", e);
    struct sf_vol_info vi;
    if ((e = sf_vol_info(&vol, &vi)))
        return failed("sf_vol_info", e);
    board_puts("nvme: formatted exfat");
    kv("cluster", vi.cluster_size);
    kv("clusters", vi.cluster_count);
    kv("writes", nv.st.writes);
    kv("bytes", nv.st.bytes_written);
    board_puts("\n");
    return 0;
}

/* ---- 1. the raw stream --------------------------------------------------------------------- */

static void fill_pattern(uint8_t *b, uint64_t off)
{
    uint64_t *w = (uint64_t *)(void *)b, word = off >> 3;   /* off and b: 8-aligned */
    for (uint32_t i = 0; i < MIB / 8u; i++)
        w[i] = word + i;                /* little-endian: the CLI's put_le64 */
}

static int run_raw(void)
{
    struct sf_stream_cfg sc;
    uint64_t total = (uint64_t)opt.raw_mib * MIB, off = 0;
    void *free_bufs[NBUF];
    unsigned nfree = 0;
    int e;

    for (unsigned i = 0; i < opt.qd; i++)
        free_bufs[nfree++] = rawbuf[i];
    memset(&sc, 0, sizeof sc);
    sc.expected_size = total;
    sc.checkpoint_bytes = 64ull * MIB;
    sc.queue_depth = opt.qd;
    if ((e = sf_stream_open(&vol, &raw, RAW_NAME, &sc, work, sizeof work)))
        return failed("sf_stream_open", e);
    fault_armed = 1;
    uint64_t t0 = board_now_us();
    while (off < total || sf_stream_in_flight(&raw)) {
        /* Fill every free buffer, then hand them over together, as a capture DMA engine
         * hands over the buffers it filled: the emulated controller completes a 1 MiB write
         * faster than the CPU fills the next one, so one at a time would never queue. */
        unsigned nfill = 0;
        uint8_t *filled[NBUF];
        while (off + (uint64_t)nfill * MIB < total && nfree) {
            filled[nfill] = free_bufs[--nfree];
            fill_pattern(filled[nfill], off + (uint64_t)nfill * MIB);
            nfill++;
        }
        for (unsigned i = 0; i < nfill; i++) {
            if ((e = sf_stream_submit(&raw, filled[i], MIB, filled[i]))) {
                sf_stream_close(&raw);
                return failed("sf_stream_submit", e);
            }
            off += MIB;
        }
        void *done[NBUF];
        int k = sf_stream_poll(&raw, done, NBUF, 1);
        if (k < 0) {
            sf_stream_close(&raw);
            return failed("sf_stream_poll", k);
        }
        for (int i = 0; i < k; i++)
            free_bufs[nfree++] = done[i];
    }
    if ((e = sf_stream_close(&raw)))
        return failed("sf_stream_close", e);
    uint64_t us = board_now_us() - t0;
    const struct sf_stream_stats *st = sf_stream_stats(&raw);
    board_puts("nvme: raw");
    kv("bytes", total);
    kv("requests", st->data_requests);
    kv("checkpoints", st->checkpoints);
    kv("max_in_flight", st->max_in_flight);
    kv("ms", us / 1000u);
    board_puts("\n");
    return 0;
}

/* ---- 2. the framed CAN log ----------------------------------------------------------------- */

static int run_can(void)
{
    static const char *const chans[] = { "can0" };
    static const char *const meta[] = { "board=QEMU virt (AArch64), streamfat examples/nvme" };
    struct sf_log_cfg c;
    struct sf_log_stats st;
    uint64_t dropped = 0;
    int e;

    if ((e = sf_mkdir(&vol, "/CAN")))
        return failed("sf_mkdir", e);
    memset(&c, 0, sizeof c);
    c.vol = &vol;
    c.ring = ring;
    c.ring_size = sizeof ring;
    c.block_size = CAN_BLOCK;
    c.dir = "/CAN";
    c.split_bytes = CAN_SPLIT;
    c.checkpoint_ns = 100000000u;
    c.queue_depth = 4;
    c.clock = log_clock;
    c.clock_kind = SF_CLOCK_MONOTONIC;
    c.session_id = 0x4E564D4500000001ull;
    c.channel_names = chans;
    c.channel_count = 1;
    c.meta = meta;
    c.meta_count = 1;
    c.work = work;
    c.work_size = sizeof work;
    if ((e = sf_log_open(&lg, &c)))
        return failed("sf_log_open", e);

    uint64_t ts0 = EPOCH_MS * 1000000ull;
    for (uint32_t k = 0; k < opt.can;) {
        /* one producer here, so the room seen is the room there is: no drops unless the
         * device is slower than we wait for */
        sf_log_get_stats(&lg, &st);
        if (st.ring_size - st.ring_used < 4u * CAN_BLOCK) {
            if ((e = sf_log_service(&lg)) < 0)
                break;
            continue;
        }
        for (uint32_t i = 0; i < 1024u && k < opt.can; i++, k++) {
            uint8_t d[8];
            uint64_t v = k;
            for (int j = 0; j < 8; j++, v >>= 8)
                d[j] = (uint8_t)v;
            if (sf_log_append_can(&lg, 0, ts0 + (uint64_t)k * 100000u, 0x100u + (k & 15u), 0,
                                  d, 8))
                dropped++;
        }
        if ((e = sf_log_service(&lg)) < 0)
            break;
    }
    if (e < 0) {
        sf_log_close(&lg);
        return failed("sf_log_service", e);
    }
    if ((e = sf_log_close(&lg)))
        return failed("sf_log_close", e);
    sf_log_get_stats(&lg, &st);
    board_puts("nvme: can");
    kv("frames", opt.can);
    kv("written", st.records_written);
    kv("dropped", st.records_dropped + dropped);
    kv("files", st.files);
    board_puts("\n");
    return 0;
}

/* ---- stack use: painted at the start, the untouched part counted at the end ------------ */

extern uint8_t __stack_bottom[], __stack_top[];

static void stack_paint(void)
{
    uint8_t *sp = __builtin_frame_address(0);
    for (uint8_t *p = __stack_bottom; p < sp - 256; p++)
        *p = 0xA5;
}

static uint64_t stack_used(void)
{
    const uint8_t *p = __stack_bottom;
    while (p < __stack_top && *p == 0xA5)
        p++;
    return (uint64_t)(__stack_top - p);
}

int main(void);
int main(void)
{
    int rc;

    stack_paint();
    parse_options(board_cmdline());
    if ((rc = bring_up()))
        return rc;
    board_puts("nvme: options");
    kv("raw_mib", opt.raw_mib);
    kv("can", opt.can);
    kv("qd", opt.qd);
    kv("fault", opt.fault);
    kv("lost", opt.lost);
    board_puts("\n");
    if (!(rc = format_and_mount()) && !(rc = run_raw()) && !(rc = run_can())) {
        int e = sf_unmount(&vol);
        if (e)
            rc = failed("sf_unmount", e);
    }
    report_nvme();
    board_puts("nvme: stack used ");
    board_put_u64(stack_used());
    board_puts(" of ");
    board_put_u64((uint64_t)(__stack_top - __stack_bottom));
    board_puts("\n");
    int e = sf_nvme_shutdown(&nv);
    if (e) {
        int r = failed("sf_nvme_shutdown", e);
        rc = rc ? rc : r;
    } else {
        board_puts("nvme: controller shut down\n");
    }
    if (!rc)
        board_puts("nvme: ok\n");
    return rc;
}
