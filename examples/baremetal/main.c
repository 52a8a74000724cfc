/* streamfat on a microcontroller, under QEMU: a logger that formats a RAM disk, records
 * CAN frames from an interrupt, closes its files and hands the volume image to the host.
 *
 * What runs where:
 *   CAN interrupt (priority 0x80)   the producer: sf_log_append_can for each frame the
 *                                   simulated controller "received" this millisecond
 *   SysTick (priority 0x40, 1 kHz)  the time base; raises the CAN interrupt every tick
 *   main loop (thread mode)         sf_log_service until the run ends, then sf_log_close,
 *                                   a directory listing, every file decoded again on the
 *                                   target, the image out by semihosting
 *
 * The simulated bus: ids 0x100..0x103 every millisecond (motor controllers), the 29-bit id
 * 0x18FEF100 every 10 ms, and every 100 ms a burst of 32 frames on 0x7E8 (a diagnostic
 * reply) that the ring absorbs. Each frame's data is its sequence number (u32 LE, counting
 * every frame offered, accepted or not) and the millisecond (u32 LE), so the host can tell
 * that every accepted frame is in the files, in order, and that the gaps are the drops.
 *
 * The command line (QEMU -append) is "OUT.img [exfat|fat16] [busy] [4k]": the host file for
 * the image, the file system (exFAT by default; fat16 lets mkfs choose, FAT16 at this size),
 * "busy" to stall the main loop 600 ms of every second so the ring overflows and the drops
 * show as DROP records, "4k" for a disk of 4096-byte sectors (512 by default), "cut" to send
 * the host the disk as a power cut 1,234 ms (cut=MS: MS) into the run would have left it.
 * The console lines starting with "baremetal:" are the report tests/scripts/t_baremetal.sh
 * reads. Exit status: 0 ok, 1 a streamfat call failed, 3 a fault. */
#include <stdint.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/decode.h"

#include "board.h"
#include "report.h"
#include "semihost.h"

#define DISK_BYTES    (4u << 20)           /* auto-format picks FAT16 at this size */
#define BLOCK         4096u                /* log block: one device write each */
#define RING_BLOCKS   16u                  /* 64 KiB of ring: 2 bursts and then some */
#define RUN_MS        2000u
#define SPLIT_BYTES   (128u << 10)         /* small files, so rotation happens too */
#define BUSY_EVERY_MS 1000u                /* "busy": the main loop stalls this often ... */
#define BUSY_MS       600u                 /* ... for this long: longer than the ring lasts */
#define CUT_MS        1234u                /* "cut": the snapshot this far into the run */
#define EPOCH_MS      1767225600000LL      /* 2026-01-01 00:00 UTC: this board has no RTC */

/* The RAM disk lives in PSRAM (board.h); everything else in SSRAM. */
static uint8_t disk[DISK_BYTES] __attribute__((section(".disk"), aligned(8)));
static uint8_t snapshot[DISK_BYTES] __attribute__((section(".disk"), aligned(8)));
static uint8_t ring[RING_BLOCKS * BLOCK] __attribute__((aligned(8)));
static uint8_t work[BLOCK] __attribute__((aligned(8)));
static uint8_t vol_cache[16u * 1024u] __attribute__((aligned(8)));
static uint8_t fat_cache[512];

static struct sf_rambd ram;
static struct sf_vol vol;
static struct sf_log lg;

/* The producer's counters: written only by the CAN interrupt, read by main after it
 * stopped. */
static uint32_t can_seq, can_accepted, can_dropped, can_failed;
/* The last millisecond of the run (0: not started); set by main once the log is open. */
static volatile uint32_t run_until;

/* "cut": a power cut simulated by the SysTick handler, which copies the disk as it is at that
 * instant (possibly in the middle of a sector the main loop is writing) to `snapshot`; that
 * copy is the image sent to the host. durable_records is kept by main: a lower bound of the
 * records that completed checkpoints made durable. */
static volatile uint32_t cut_at;        /* millisecond of the cut, 0: none */
static volatile uint32_t durable_records;
static volatile uint32_t cut_done, cut_durable, cut_offered;

static sf_time_ms vol_clock(void *ctx)
{
    (void)ctx;
    return EPOCH_MS + (sf_time_ms)(board_now_ns() / 1000000u);
}

static uint64_t log_clock(void *ctx)
{
    (void)ctx;
    return board_now_ns();
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* One received frame: timestamped within its millisecond by its place in the burst, so
 * timestamps strictly increase. */
static void can_frame(uint32_t ms, uint32_t k, uint32_t id, uint32_t flags)
{
    uint8_t data[8];
    put_le32(data, can_seq++);
    put_le32(data + 4, ms);
    uint64_t ts = (uint64_t)ms * 1000000u + (uint64_t)k * 10000u;
    int e = sf_log_append_can(&lg, 0, ts, id, flags, data, 8);
    if (e == 0)
        can_accepted++;
    else if (e == SF_EDROPPED)
        can_dropped++;
    else
        can_failed++;
}

void app_tick(uint32_t ms)
{
    if (cut_at && ms >= cut_at && !cut_done) {
        memcpy(snapshot, disk, sizeof disk);
        cut_durable = durable_records;
        cut_offered = can_seq;          /* every frame in the copy has a lower number */
        cut_done = 1;
    }
    if (ms <= run_until)
        board_can_pend();
}

void app_can_irq(void)
{
    uint32_t ms = board_ticks(), k = 0;
    for (uint32_t id = 0x100; id <= 0x103; id++)
        can_frame(ms, k++, id, 0);
    if (ms % 10u == 0)
        can_frame(ms, k++, 0x18FEF100u, SF_CAN_EFF);
    if (ms % 100u == 0)
        for (uint32_t i = 0; i < 32; i++)
            can_frame(ms, k++, 0x7E8, 0);
}

/* The report goes to the semihosting console. */
void report_puts(const char *s)
{
    sh_puts(s);
}

static int failed(const char *what, int err)
{
    struct rp_line l = { .n = 0 };
    rp_add(&l, "baremetal: ");
    rp_add(&l, what);
    rp_add(&l, " failed: ");
    rp_add(&l, sf_strerror(err));
    rp_add(&l, " (");
    rp_add_i(&l, err);
    rp_add(&l, ")");
    rp_flush(&l);
    return 1;
}

/* Arguments after the kernel's name on the semihosting command line:
 * OUT [exfat|fat16] [busy] [4k] [cut[=MS]]. */
struct options {
    const char *out;
    int fat16;
    int busy;
    uint32_t sector;                    /* "4k": 4096-byte sectors (exFAT only at 4 MiB) */
    uint32_t cut;                       /* "cut[=MS]": the power cut this far into the run */
};

/* A decimal number of milliseconds within the run; anything else gives CUT_MS. */
static uint32_t parse_ms(const char *p)
{
    uint32_t v = 0;
    if (!*p)
        return CUT_MS;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > RUN_MS)
            return CUT_MS;
        v = v * 10 + (uint32_t)(*p - '0');
    }
    return v >= 1 && v < RUN_MS ? v : CUT_MS;
}

static void parse_cmdline(struct options *o)
{
    static char cmd[256];
    char *w[5];
    int n = 0;
    o->out = "baremetal.img";
    o->fat16 = o->busy = o->cut = 0;
    o->sector = 512;
    if (sh_cmdline(cmd, sizeof cmd))
        return;
    for (char *p = cmd; *p && n < 5;) {
        while (*p == ' ')
            *p++ = '\0';
        if (*p)
            w[n++] = p;
        while (*p && *p != ' ')
            p++;
    }
    if (n >= 2)
        o->out = w[1];
    for (int i = 2; i < n; i++) {
        if (strcmp(w[i], "fat16") == 0)
            o->fat16 = 1;
        else if (strcmp(w[i], "busy") == 0)
            o->busy = 1;
        else if (strcmp(w[i], "4k") == 0)
            o->sector = 4096;
        else if (strcmp(w[i], "cut") == 0)
            o->cut = CUT_MS;
        else if (strncmp(w[i], "cut=", 4) == 0)
            o->cut = parse_ms(w[i] + 4);
    }
}

static int format_and_mount(int fat16)
{
    struct sf_mkfs_opts mo;
    struct sf_vol_cfg vc;
    const char *why = "";
    int err;

    memset(&mo, 0, sizeof mo);
    mo.fs_type = fat16 ? 0 : SF_FS_EXFAT;
    mo.label = "BAREMETAL";
    mo.serial = 0x5F0C0DE5u;
    mo.now = EPOCH_MS;
    mo.buf = ring;                      /* the ring is free until the log opens */
    mo.buf_size = sizeof ring;
    if ((err = sf_mkfs(&ram.bd, &mo, &why))) {
        sh_puts("baremetal: mkfs: ");
        sh_puts(why);
        sh_puts("\n");
        return failed("sf_mkfs", err);
    }
    memset(&vc, 0, sizeof vc);
    vc.bd = &ram.bd;
    vc.buf = vol_cache;
    vc.buf_size = sizeof vol_cache;
    vc.clock = vol_clock;
    vc.fat_cache = fat_cache;
    vc.fat_cache_size = sizeof fat_cache;
    if ((err = sf_mount(&vol, &vc)))
        return failed("sf_mount", err);

    struct sf_vol_info vi;
    struct rp_line l = { .n = 0 };
    if ((err = sf_vol_info(&vol, &vi)))
        return failed("sf_vol_info", err);
    rp_add(&l, "baremetal: formatted ");
    rp_add(&l, vi.fs_type == SF_FS_EXFAT ? "exfat" : vi.fs_type == SF_FS_FAT16 ? "fat16" : "fat");
    rp_add(&l, " ");
    rp_add_u64(&l, DISK_BYTES);
    rp_add(&l, " bytes");
    rp_flush(&l);
    return 0;
}

static int run_log(int busy, uint32_t cut)
{
    static const char *const chans[] = { "can0" };
    static const char *const meta[] = { "board=mps2-an386 (QEMU), streamfat examples/baremetal" };
    struct sf_log_cfg c;
    int err;

    memset(&c, 0, sizeof c);
    c.vol = &vol;
    c.ring = ring;
    c.ring_size = sizeof ring;
    c.block_size = BLOCK;
    c.split_bytes = SPLIT_BYTES;
    c.checkpoint_ns = 100000000u;       /* 100 ms */
    c.queue_depth = 1;                  /* a RAM disk completes every write at once */
    c.request_size = BLOCK * 4;
    c.clock = log_clock;
    c.clock_kind = SF_CLOCK_MONOTONIC;  /* time since reset */
    c.session_id = 0xB0A4D0000000001ull;
    c.channel_names = chans;
    c.channel_count = 1;
    c.meta = meta;
    c.meta_count = 1;
    c.work = work;
    c.work_size = sizeof work;
    if ((err = sf_log_open(&lg, &c)))
        return failed("sf_log_open", err);

    run_until = board_ticks() + RUN_MS; /* from here on the CAN interrupt appends */
    uint32_t busy_at = board_ticks() + BUSY_EVERY_MS / 2;
    uint64_t durable_bytes = 0;
    if (cut)
        cut_at = board_ticks() + cut;
    while (board_ticks() <= run_until + 1) {
        struct sf_log_stats before, after;
        if (cut)
            sf_log_get_stats(&lg, &before);
        int r = sf_log_service(&lg);
        if (cut) {
            /* A checkpoint completed in this step: it covered every record handed to the
             * device before the step (it waits for them), maybe more. */
            sf_log_get_stats(&lg, &after);
            if (after.bytes_durable != durable_bytes) {
                durable_bytes = after.bytes_durable;
                durable_records = (uint32_t)before.records_written;
            }
        }
        if (r < 0) {
            board_can_stop();
            return failed("sf_log_service", r);
        }
        if (r == 0)
            board_idle();               /* the next tick wakes us */
        if (busy && board_ticks() >= busy_at) {
            /* The main loop is away (a flash erase, a display refresh): the ring fills,
             * the producer's frames are dropped and counted, DROP records follow. */
            uint32_t t = board_ticks();
            while (board_ticks() < t + BUSY_MS)
                board_idle();
            busy_at = t + BUSY_EVERY_MS;
        }
    }
    board_can_stop();                   /* producers must stop before close */
    if ((err = sf_log_close(&lg)))
        return failed("sf_log_close", err);

    struct sf_log_stats st;
    struct rp_line l = { .n = 0 };
    sf_log_get_stats(&lg, &st);
    rp_add(&l, "baremetal: frames offered ");
    rp_add_u64(&l, can_seq);
    rp_add(&l, " accepted ");
    rp_add_u64(&l, can_accepted);
    rp_add(&l, " dropped ");
    rp_add_u64(&l, can_dropped);
    rp_add(&l, " failed ");
    rp_add_u64(&l, can_failed);
    rp_flush(&l);
    rp_add(&l, "baremetal: log records_in ");
    rp_add_u64(&l, st.records_in);
    rp_add(&l, " own ");
    rp_add_u64(&l, st.records_own);
    rp_add(&l, " written ");
    rp_add_u64(&l, st.records_written);
    rp_add(&l, " dropped ");
    rp_add_u64(&l, st.records_dropped);
    rp_add(&l, " files ");
    rp_add_u64(&l, st.files);
    rp_add(&l, " ring_high_water ");
    rp_add_u64(&l, st.ring_high_water);
    rp_add(&l, " of ");
    rp_add_u64(&l, st.ring_size);
    rp_flush(&l);
    return can_failed ? failed("sf_log_append_can", SF_EINVAL) : 0;
}

/* What the volume holds now, read back on the target: every file listed, every log file
 * decoded (sf_dec over sf_read). Frames must come back in sequence order across the files,
 * and the DROP records must account for the frames that are missing. */
#define MAX_FILES 16

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static sf_ssize_t dec_read(void *ctx, void *buf, size_t n)
{
    return sf_read(ctx, buf, n);
}

struct readback {
    uint32_t frames, drop_records, damage, out_of_order;
    uint64_t dropped;                   /* frames the DROP records account for */
    uint32_t next_seq;                  /* lowest sequence number the next frame may have */
};

static int decode_file(const char *name, struct readback *rb)
{
    struct sf_file f;
    struct sf_dec d;
    struct sf_dec_event ev;
    int err, k;

    if ((err = sf_open(&vol, &f, name, SF_O_RDONLY)))
        return failed("sf_open", err);
    if ((err = sf_dec_init(&d, ring, sizeof ring))) {   /* the log is closed: ring is free */
        sf_close(&f);
        return failed("sf_dec_init", err);
    }
    while ((k = sf_dec_read(&d, dec_read, &f, &ev)) != SF_DEC_END) {
        if (k < 0) {
            sf_close(&f);
            return failed("sf_read", k);
        }
        if (k != SF_DEC_RECORD)
            continue;
        if (ev.rec.type == SF_REC_CAN) {
            struct sf_can c;
            if (sf_rec_get_can(&ev.rec, &c) || c.len != 8) {
                rb->damage++;
                continue;
            }
            uint32_t seq = get_le32(c.data);
            if (seq < rb->next_seq)
                rb->out_of_order++;
            rb->next_seq = seq + 1;
            rb->frames++;
        } else if (ev.rec.type == SF_REC_DROP && ev.rec.length >= 8) {
            rb->drop_records++;
            rb->dropped += get_le32(ev.rec.body) | (uint64_t)get_le32(ev.rec.body + 4) << 32;
        }
    }
    rb->damage += (uint32_t)sf_dec_stats(&d)->damage_events;
    return sf_close(&f) ? failed("sf_close", SF_EIO) : 0;
}

static int read_back(void)
{
    static char names[MAX_FILES][16];   /* the log's 8.3 names: LOG00001.SFL */
    static struct sf_stat s;
    struct sf_dir dir;
    struct readback rb;
    uint32_t n = 0;
    int err, r;

    if ((err = sf_opendir(&vol, &dir, "/")))
        return failed("sf_opendir", err);
    while ((r = sf_readdir(&dir, &s)) == 1) {
        struct rp_line l = { .n = 0 };
        rp_add(&l, "baremetal: file /");
        rp_add(&l, s.name);
        rp_add(&l, " ");
        rp_add_u64(&l, s.size);
        rp_flush(&l);
        if (n < MAX_FILES && strlen(s.name) < sizeof names[0])
            memcpy(names[n++], s.name, strlen(s.name) + 1);
    }
    sf_closedir(&dir);
    if (r < 0)
        return failed("sf_readdir", r);

    memset(&rb, 0, sizeof rb);
    for (uint32_t i = 0; i < n; i++)    /* created in order, listed in order */
        if (decode_file(names[i], &rb))
            return 1;
    struct rp_line l = { .n = 0 };
    rp_add(&l, "baremetal: decoded on target frames ");
    rp_add_u64(&l, rb.frames);
    rp_add(&l, " drop_records ");
    rp_add_u64(&l, rb.drop_records);
    rp_add(&l, " accounting_for ");
    rp_add_u64(&l, rb.dropped);
    rp_add(&l, " damage ");
    rp_add_u64(&l, rb.damage);
    rp_add(&l, " out_of_order ");
    rp_add_u64(&l, rb.out_of_order);
    rp_flush(&l);
    if (rb.frames != can_accepted || rb.dropped != can_dropped || rb.damage || rb.out_of_order) {
        sh_puts("baremetal: the files read back do not hold what was logged\n");
        return 1;
    }
    return 0;
}

static int write_image(const char *path, const uint8_t *img)
{
    int h = sh_open(path, SH_MODE_WB);
    if (h < 0) {
        sh_puts("baremetal: cannot create the image file on the host\n");
        return 1;
    }
    int bad = sh_write(h, img, DISK_BYTES);
    bad |= sh_close(h);
    if (bad) {
        sh_puts("baremetal: writing the image to the host failed\n");
        return 1;
    }
    struct rp_line l = { .n = 0 };
    rp_add(&l, "baremetal: image ");
    rp_add(&l, path);
    rp_add(&l, " ");
    rp_add_u64(&l, DISK_BYTES);
    rp_add(&l, " bytes");
    rp_flush(&l);
    return 0;
}

int main(void)
{
    struct options o;
    int err;

    parse_cmdline(&o);
    board_init();
    if ((err = sf_rambd_init(&ram, disk, o.sector, DISK_BYTES / o.sector)))
        return failed("sf_rambd_init", err);
    if (format_and_mount(o.fat16) || run_log(o.busy, o.cut) || read_back())
        return 1;
    if ((err = sf_unmount(&vol)))
        return failed("sf_unmount", err);
    if (o.cut) {
        struct rp_line l = { .n = 0 };
        rp_add(&l, "baremetal: cut durable_records ");
        rp_add_u64(&l, cut_durable);
        rp_add(&l, " offered ");
        rp_add_u64(&l, cut_offered);
        rp_add(&l, cut_done ? "" : " (not taken)");
        rp_flush(&l);
        if (!cut_done)
            return 1;
    }
    if (write_image(o.out, o.cut ? snapshot : disk))
        return 1;
    struct rp_line l = { .n = 0 };
    rp_add(&l, "baremetal: stack used ");
    rp_add_u64(&l, board_stack_used());
    rp_add(&l, " bytes (interrupts included)");
    rp_flush(&l);
    sh_puts("baremetal: ok\n");
    return 0;
}
