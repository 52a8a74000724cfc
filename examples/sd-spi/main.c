/* A CAN logger on an SD card over SPI, under QEMU's lm3s6965evb (Cortex-M3, 64 KiB SRAM):
 * the smallest kind of logger streamfat is for (docs/PORTING.md, "SD card over SPI"), built
 * on the tiny logger (include/streamfat/tiny.h, the `tiny` set) and the core's FAT mkfs.
 *
 *   SysTick (1 kHz)      the producer: FRAMES_PER_TICK frames of the `gen:can` pattern
 *                        (frame k: id 0x100 + k % 16, eight data bytes = k little-endian,
 *                        timestamp k * 1e9 / RATE ns) into sf_tiny_log_append_can
 *   main loop            brings the card up (drivers/sd_spi), mounts it or formats it
 *                        when it holds no file system (FAT16 up to 2 GiB, FAT32 above, in
 *                        an MBR partition as SD cards come), opens the logger (rotation
 *                        by size, checkpoints), calls sf_tiny_log_service until FRAMES frames
 *                        went by, closes the log, unmounts, reports
 *
 * The report goes to UART0, one "sd-spi: ..." line per fact (make hw-sd /
 * tests/scripts/t_hw_sd.sh read it); QEMU exits with main's status through semihosting:
 * 0 ok, 1 a streamfat call failed, 2 the card failed to come up, 3 a CPU fault.
 * Command line (QEMU -append, through semihosting): [fail=N] [crc] [frames=N]: fail=N
 * makes the driver fail command N and every later one (drivers/sd_spi fault injection),
 * crc switches the card's CRC checking on (CMD59) and checks read CRCs. */
#include <stdint.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/tiny.h"
#include "streamfat/vol.h"           /* sf_mkfs, for a card without a file system */

#include "board.h"
#include "report.h"
#include "semihost.h"
#include "sd_spi.h"

#define BLOCK           4096u              /* log block: one multi-block write (CMD25) */
#define RING_BLOCKS        4u              /* 16 KiB of ring: about 128 ms of frames */
#define FRAMES_PER_TICK    4u
#define RATE (FRAMES_PER_TICK * BOARD_TICK_HZ)  /* frames/s */
#define FRAMES_DEFAULT 16000u
#define SPLIT_BYTES  (128u << 10)          /* small files, so rotation happens (4+ files) */
#define EPOCH_MS      1767225600000LL      /* 2026-01-01 00:00 UTC: this board has no RTC */

static uint8_t ring[RING_BLOCKS * BLOCK] __attribute__((aligned(8)));
static uint8_t sector[512] __attribute__((aligned(8)));   /* the volume's sector buffer */

static struct sd_spi sd;
static struct sf_tiny_vol vol;
static struct sf_tiny_log lg;

/* The producer's state: written by the SysTick handler only (main reads it once the
 * producer stopped). */
static volatile uint32_t producing;
static uint32_t frames_total, next_frame, accepted, dropped, append_failed;

/* ---- the report ---------------------------------------------------------------------- */

/* The report goes to UART0 (examples/common/report.h builds its lines). */
void report_puts(const char *s)
{
    board_puts(s);
}

/* "sd-spi: error WHAT ERRNAME (N) ..." with what the driver knows. */
static void report_error(const char *what, int err)
{
    struct rp_line l = { .n = 0 };
    rp_add(&l, "sd-spi: error ");
    rp_add(&l, what);
    rp_add(&l, " ");
    rp_add(&l, err == SF_EIO ? "SF_EIO" : err == SF_ETIMEDOUT ? "SF_ETIMEDOUT" : "other");
    rp_add(&l, " (");
    rp_add_i(&l, err);
    rp_add(&l, ", ");
    rp_add(&l, sf_strerror(err));
    rp_add(&l, ") card: ");
    rp_add(&l, sd.why[0] ? sd.why : "-");
    rp_add(&l, " command ");
    rp_add_u64(&l, sd.commands);
    rp_add(&l, " CMD");
    rp_add_u64(&l, sd.last_cmd);
    rp_add(&l, " r1 ");
    rp_add_u64(&l, sd.last_r1);
    rp_flush(&l);
}

/* ---- the producer ---------------------------------------------------------------------- */

void app_tick(uint32_t ms)
{
    (void)ms;
    if (!producing)
        return;
    for (uint32_t i = 0; i < FRAMES_PER_TICK; i++) {
        uint32_t k = next_frame;
        if (k >= frames_total) {
            producing = 0;
            return;
        }
        uint8_t data[8] = { (uint8_t)k, (uint8_t)(k >> 8), (uint8_t)(k >> 16),
                            (uint8_t)(k >> 24), 0, 0, 0, 0 };
        uint64_t ts = (uint64_t)k * (1000000000u / RATE);
        int e = sf_tiny_log_append_can(&lg, 0, ts, 0x100u + (k & 15u), 0, data, 8);
        if (e == 0)
            accepted++;
        else if (e == SF_EDROPPED)
            dropped++;
        else
            append_failed++;
        next_frame = k + 1;
    }
}

static uint64_t log_clock(void *ctx)
{
    (void)ctx;
    return (uint64_t)board_ticks() * (1000000000u / BOARD_TICK_HZ);
}

/* ---- options ------------------------------------------------------------------------- */

struct options {
    uint32_t fail, frames, crc;
};

static uint32_t parse_u(const char *p)
{
    uint32_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10u + (uint32_t)(*p - '0');
    return v;
}

static void parse_cmdline(struct options *o)
{
    char cmd[128];
    o->fail = o->crc = 0;
    o->frames = FRAMES_DEFAULT;
    if (sh_cmdline(cmd, sizeof cmd))
        return;
    for (char *p = cmd; *p;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, "fail=", 5) == 0)
            o->fail = parse_u(p + 5);
        else if (strncmp(p, "frames=", 7) == 0)
            o->frames = parse_u(p + 7);
        else if (strncmp(p, "crc", 3) == 0 && (p[3] == ' ' || !p[3]))
            o->crc = 1;
        while (*p && *p != ' ')
            p++;
    }
}

/* ---- the steps --------------------------------------------------------------------------- */

static int mount_or_format(void)
{
    struct rp_line l = { .n = 0 };
    int err;

    err = sf_tiny_mount(&vol, &sd.bd, sector);
    if (err == SF_ENOENT || err == SF_ECORRUPT) {
        /* No FAT file system: format the card as the SD specification lays it out (an
         * MBR, FAT16 up to 2 GiB, FAT32 above; sf_mkfs's automatic choice). */
        struct sf_mkfs_opts mo;
        const char *why = "";
        memset(&mo, 0, sizeof mo);
        mo.partition = SF_PART_MBR;
        mo.label = "SDLOG";
        mo.serial = 0x5D5D0001u;
        mo.now = EPOCH_MS;
        mo.buf = ring;                  /* free until the log opens */
        mo.buf_size = sizeof ring;
        rp_add(&l, "sd-spi: no file system (");
        rp_add(&l, sf_strerror(err));
        rp_add(&l, "): formatting");
        rp_flush(&l);
        if ((err = sf_mkfs(&sd.bd, &mo, &why))) {
            report_error("sf_mkfs", err);
            return err;
        }
        err = sf_tiny_mount(&vol, &sd.bd, sector);
    }
    if (err) {
        report_error("sf_tiny_mount", err);
        return err;
    }
    rp_add(&l, "sd-spi: volume at ms ");
    rp_add_u64(&l, board_ticks());
    rp_add(&l, vol.fat32 ? " fat32" : " fat16");
    rp_add(&l, " cluster ");
    rp_add_u64(&l, (uint64_t)vol.ss << vol.cl_shift);
    rp_add(&l, " bytes ");
    rp_add_u64(&l, (uint64_t)vol.sectors * vol.ss);
    rp_add(&l, " offset ");
    rp_add_u64(&l, vol.base * vol.ss);
    rp_flush(&l);
    return 0;
}

static int run_log(uint32_t frames)
{
    static const char *const chans[] = { "can0" };
    static const char *const meta[] = { "board=lm3s6965evb (QEMU), streamfat examples/sd-spi" };
    struct sf_tiny_log_cfg c;
    struct rp_line l = { .n = 0 };
    int err, r;

    memset(&c, 0, sizeof c);
    c.vol = &vol;
    c.ring = ring;
    c.ring_size = sizeof ring;
    c.block_size = BLOCK;
    c.split_bytes = SPLIT_BYTES;
    c.checkpoint_ns = 250000000u;       /* 250 ms */
    c.clock = log_clock;
    c.clock_kind = SF_CLOCK_MONOTONIC;
    c.session_id = 0x5D5B1000000001ull;
    c.channel_names = chans;
    c.channel_count = 1;
    c.meta = meta;
    c.meta_count = 1;
    c.fat_time = (46u << 9 | 1u << 5 | 1u) << 16;   /* 2026-01-01 00:00: no RTC here */
    if ((err = sf_tiny_log_open(&lg, &c))) {
        report_error("sf_tiny_log_open", err);
        return err;
    }
    frames_total = frames;
    producing = 1;                      /* from here on the SysTick handler appends */
    err = 0;
    while (producing) {
        r = sf_tiny_log_service(&lg);
        if (r < 0) {
            producing = 0;              /* producers stop before close */
            report_error("sf_tiny_log_service", r);
            err = r;
            break;
        }
        if (r == 0)
            board_idle();
    }
    r = sf_tiny_log_close(&lg);
    if (r && r != err) {
        report_error("sf_tiny_log_close", r);
        if (!err)
            err = r;
    }

    struct sf_tiny_log_stats st;
    sf_tiny_log_get_stats(&lg, &st);
    rp_add(&l, "sd-spi: frames offered ");
    rp_add_u64(&l, next_frame);
    rp_add(&l, " accepted ");
    rp_add_u64(&l, accepted);
    rp_add(&l, " dropped ");
    rp_add_u64(&l, dropped);
    rp_add(&l, " failed ");
    rp_add_u64(&l, append_failed);
    rp_flush(&l);
    rp_add(&l, "sd-spi: log files ");
    rp_add_u64(&l, st.files);
    rp_add(&l, " bytes_written ");
    rp_add_u64(&l, st.bytes_written);
    rp_add(&l, " records_written ");
    rp_add_u64(&l, st.records_written);
    rp_add(&l, " ring_high_water ");
    rp_add_u64(&l, st.ring_high_water);
    rp_add(&l, " of ");
    rp_add_u64(&l, sizeof ring);
    rp_add(&l, " split_bytes ");
    rp_add_u64(&l, SPLIT_BYTES);
    rp_add(&l, " rate ");
    rp_add_u64(&l, RATE);
    rp_flush(&l);
    return err;
}

static void report_card(void)
{
    static const char *const types[] = { "none", "v1-sdsc", "v2-sdsc", "v2-sdhc" };
    struct rp_line l = { .n = 0 };
    rp_add(&l, "sd-spi: card ");
    rp_add(&l, types[sd.type & 3u]);
    rp_add(&l, " sectors ");
    rp_add_u64(&l, sd.bd.sector_count);
    rp_add(&l, sd.block_addr ? " addressing block" : " addressing byte");
    rp_add(&l, sd.flags & SD_SPI_CRC ? " crc on" : " crc off");
    rp_flush(&l);
}

static void report_driver(void)
{
    struct rp_line l = { .n = 0 };
    rp_add(&l, "sd-spi: sd commands ");
    rp_add_u64(&l, sd.commands);
    rp_add(&l, " reads ");
    rp_add_u64(&l, sd.reads);
    rp_add(&l, " writes ");
    rp_add_u64(&l, sd.writes);
    rp_add(&l, " sectors_read ");
    rp_add_u64(&l, sd.sectors_read);
    rp_add(&l, " sectors_written ");
    rp_add_u64(&l, sd.sectors_written);
    rp_add(&l, " crc_errors ");
    rp_add_u64(&l, sd.crc_errors);
    rp_flush(&l);
    rp_add(&l, "sd-spi: stack used ");
    rp_add_u64(&l, board_stack_used());
    rp_add(&l, " ms ");
    rp_add_u64(&l, board_ticks());
    rp_flush(&l);
}

int main(void)
{
    struct options o;
    int err;

    parse_cmdline(&o);
    board_init();
    board_puts("sd-spi: start\n");
    sd.fail_from = o.fail;
    if ((err = sd_spi_init(&sd, &board_sd_port, o.crc ? SD_SPI_CRC : 0))) {
        report_error("sd_spi_init", err);
        report_driver();
        return 2;
    }
    report_card();
    if (mount_or_format()) {
        report_driver();
        return 1;
    }
    err = run_log(o.frames);
    if (!err && (err = sf_tiny_unmount(&vol)))
        report_error("sf_tiny_unmount", err);
    report_driver();
    if (err)
        return 1;
    board_puts("sd-spi: ok\n");
    return 0;
}
