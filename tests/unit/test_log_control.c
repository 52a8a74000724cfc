/* The logger's control stage (include/streamfat/log.h, src/log/control.c) with the gen:can
 * pattern (frame k: id 0x100 + (k mod 16), data k as 8 little-endian bytes, as
 * cli/log_sources.c makes it): prescalers (1 in n, per period, on change under a byte mask),
 * a signal start/stop window, stop checkpoints and rotate-on-start, 192 filter rules per
 * channel on two channels against a naive first-match reference on seeded random frames,
 * signal triggers with a hold-off, Motorola/signed decoding and thresholds in raw units, and
 * the validation codes of invalid configurations. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/log.h"

#define SS 512u
static uint8_t *disk;
static struct sf_rambd ram;
static struct sf_vol vol;
static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
static uint8_t ring[1 << 20] __attribute__((aligned(4096)));
static uint8_t work[1 << 16] __attribute__((aligned(4096)));
static uint64_t ctl_mem[(64 << 10) / 8];
static struct sf_log lg;
static _Atomic uint64_t fake_now;
static uint64_t fake_clock(void *ctx) { (void)ctx; return atomic_load(&fake_now); }

static void format(void)
{
    static uint8_t mbuf[1 << 20];
    if (!disk) {
        disk = calloc((64u << 20) / SS, SS);
        REQUIRE(disk);
    } else {
        sf_unmount(&vol);
        memset(disk, 0, 64u << 20);
    }
    REQUIRE(sf_rambd_init(&ram, disk, SS, (64u << 20) / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = 4096, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    struct sf_vol_cfg cfg = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&vol, &cfg) == 0);
}

static const struct sf_ctl_cfg *ctl_of;
static uint32_t ctl_mem_size;

/* A log configuration; open_log attaches ctl to the log it opens. */
static struct sf_log_cfg base_cfg(const struct sf_ctl_cfg *ctl)
{
    struct sf_log_cfg c = {
        .vol = &vol, .ring = ring, .ring_size = sizeof ring, .block_size = 4096,
        .clock = fake_clock, .session_id = 7, .work = work, .work_size = sizeof work,
    };
    REQUIRE(sf_log_control_mem_size(ctl) <= sizeof ctl_mem);
    ctl_of = ctl;
    ctl_mem_size = sizeof ctl_mem;
    return c;
}

/* sf_log_open, then sf_log_control: 0 or the first error (the log is closed again when
 * sf_log_control fails). */
static int open_log(const struct sf_log_cfg *c)
{
    int err = sf_log_open(&lg, c);
    if (err)
        return err;
    if ((err = sf_log_control(&lg, ctl_of, ctl_mem, ctl_mem_size))) {
        CHECK_EQ(sf_log_close(&lg), 0);
        return err;
    }
    return 0;
}

static void gen_frame(uint64_t k, uint32_t *id, uint8_t d[8])
{
    *id = 0x100u + (uint32_t)(k % 16);
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)(k >> (8 * i));
}

/* Feed frames 0 .. n-1 of gen:can on channel 0 at ts = k ms, service every 64. */
static void feed(uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        uint32_t id;
        uint8_t d[8];
        gen_frame(k, &id, d);
        atomic_store(&fake_now, k * 1000000ull);
        CHECK_EQ(sf_log_append_can(&lg, 0, k * 1000000ull, id, 0, d, 8), 0);
        if (k % 64 == 63)
            CHECK(sf_log_service(&lg) >= 0);
    }
}

/* ---- reading the files back ---- */

struct frame {
    uint32_t id, file;
    uint64_t k;
};
static struct frame *got;
static size_t ngot, capgot;

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Append the CAN frames of file `index` to got; 0 when it does not exist. */
static int read_file(uint32_t index)
{
    char path[32];
    struct sf_file f;
    snprintf(path, sizeof path, "LOG%05u.SFL", index);
    if (sf_open(&vol, &f, path, SF_O_RDONLY))
        return 0;
    uint64_t size = sf_fsize(&f);
    uint8_t *b = malloc(size + 1);
    REQUIRE(b);
    REQUIRE(sf_read(&f, b, size) == (sf_ssize_t)size);
    sf_close(&f);
    uint32_t bs = 4096;
    for (uint64_t off = bs; off + bs <= size; off += bs) {
        struct sf_block_info bi;
        REQUIRE(sf_block_check(b + off, bs, &bi) == 0);
        uint32_t o = 0;
        struct sf_rec r;
        while (sf_rec_next(b + off, &bi, &o, &r) == 1) {
            if (r.type != SF_REC_CAN)
                continue;
            struct sf_can c;
            REQUIRE(sf_rec_get_can(&r, &c) == 0);
            if (ngot == capgot) {
                capgot = capgot ? 2 * capgot : 4096;
                got = realloc(got, capgot * sizeof *got);
                REQUIRE(got);
            }
            got[ngot].id = c.id;
            got[ngot].k = le64(c.data);
            got[ngot++].file = index;
        }
    }
    free(b);
    return 1;
}

static uint32_t read_all_files(void)
{
    uint32_t files = 0;
    ngot = 0;
    while (read_file(files + 1))
        files++;
    return files;
}

/* ---- prescalers ---- */

static void test_prescale_every(void)
{
    format();
    const uint64_t N = 20007;
    struct sf_ctl_prescale p = { .id = 0x100, .mask = 0x7FF, .kind = SF_CTL_EVERY, .n = 10 };
    struct sf_ctl_cfg ctl = { .prescalers = &p, .prescaler_count = 1 };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    feed(N);
    CHECK_EQ(sf_log_close(&lg), 0);
    read_all_files();
    uint64_t of100 = (N + 15) / 16, want100 = (of100 + 9) / 10, n100 = 0, nother = 0;
    for (size_t i = 0; i < ngot; i++) {
        CHECK_EQ(got[i].id, 0x100 + got[i].k % 16);
        if (got[i].id == 0x100) {
            CHECK_EQ(got[i].k, n100 * 160);       /* every tenth 0x100 frame, the first kept */
            n100++;
        } else {
            nother++;
        }
    }
    CHECK_EQ(n100, want100);
    CHECK_EQ(nother, N - of100);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_prescaled, of100 - want100);
    CHECK_EQ(st.records_dropped, 0);
    CHECK_EQ(st.records_written, ngot);
    struct sf_log_chan_stats cs;
    REQUIRE(sf_log_get_chan_stats(&lg, 0, &cs) == 0);
    CHECK_EQ(cs.seen, N);
    CHECK_EQ(cs.prescaled, of100 - want100);
    CHECK_EQ(cs.logged, ngot);
    printf("prescale 100/7FF:10: %llu of %llu frames of 0x100 kept\n",
           (unsigned long long)n100, (unsigned long long)of100);
}

static uint64_t change_kept(const uint8_t bytes[8], uint64_t n)
{
    format();
    struct sf_ctl_prescale p = { .id = 0x102, .mask = 0x7FF, .kind = SF_CTL_CHANGE };
    memcpy(p.bytes, bytes, 8);
    struct sf_ctl_cfg ctl = { .prescalers = &p, .prescaler_count = 1 };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    feed(n);
    CHECK_EQ(sf_log_close(&lg), 0);
    read_all_files();
    uint64_t kept = 0, other = 0;
    for (size_t i = 0; i < ngot; i++) {
        if (got[i].id == 0x102)
            kept++;
        else
            other++;
    }
    CHECK_EQ(other, n - (n + 13) / 16);
    return kept;
}

static void test_prescale_change(void)
{
    const uint64_t N = 5000, of102 = (N + 13) / 16;
    static const uint8_t first[8] = { 0xFF }, last[8] = { 0, 0, 0, 0, 0, 0, 0, 0xFF };
    CHECK_EQ(change_kept(first, N), of102);   /* k's low byte changes every time */
    CHECK_EQ(change_kept(last, N), 1);        /* byte 7 of k never changes */
}

static void test_prescale_period(void)
{
    format();
    /* 0x103 comes every 16 ms; at most one per 50 ms: every fourth (0, 64, 128 ms ...) */
    struct sf_ctl_prescale p = { .id = 0x103, .mask = 0x7FF, .kind = SF_CTL_PERIOD,
                                 .period_ns = 50000000ull };
    struct sf_ctl_cfg ctl = { .prescalers = &p, .prescaler_count = 1 };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    feed(1600);
    CHECK_EQ(sf_log_close(&lg), 0);
    read_all_files();
    uint64_t n = 0;
    for (size_t i = 0; i < ngot; i++)
        if (got[i].id == 0x103) {
            CHECK_EQ(got[i].k, 3 + 64 * n);
            n++;
        }
    CHECK_EQ(n, 25);
}

/* ---- start/stop ---- */

static const struct sf_ctl_signal sig_k = { .name = "k", .id = 0x101, .length = 32,
                                            .scale = 1.0 };

static void test_start_stop(void)
{
    format();
    struct sf_ctl_cfg ctl = {
        .signals = &sig_k, .signal_count = 1,
        .start = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 1000 },
        .stop = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 5000 },
    };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    feed(8000);
    CHECK_EQ(sf_log_close(&lg), 0);
    CHECK_EQ(read_all_files(), 1);
    CHECK_EQ(ngot, 5008 - 1009 + 1);
    for (size_t i = 0; i < ngot; i++)
        CHECK_EQ(got[i].k, 1009 + i);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_paused, 8000 - ngot);
    CHECK_EQ(st.records_written, ngot);
    printf("start k >= 1000, stop k >= 5000: frames %llu .. %llu logged\n",
           (unsigned long long)(ngot ? got[0].k : 0),
           (unsigned long long)(ngot ? got[ngot - 1].k : 0));
}

/* A stop checkpoints: with a clock that never reaches the time-based checkpoint, what was
 * logged before the stop becomes durable. */
static void test_stop_checkpoint(void)
{
    format();
    struct sf_ctl_cfg ctl = {
        .signals = &sig_k, .signal_count = 1,
        .stop = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 3000 },
    };
    struct sf_log_cfg c = base_cfg(&ctl);
    atomic_store(&fake_now, 1);
    REQUIRE(open_log(&c) == 0);
    for (uint64_t k = 0; k < 4000; k++) {
        uint32_t id;
        uint8_t d[8];
        gen_frame(k, &id, d);
        CHECK_EQ(sf_log_append_can(&lg, 0, k, id, 0, d, 8), 0);
        CHECK(sf_log_service(&lg) >= 0);
    }
    for (int i = 0; i < 100; i++)
        CHECK(sf_log_service(&lg) >= 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_in, 3009);
    CHECK(st.bytes_durable >= 3009 * 32);          /* the stop's checkpoint covered them */
    CHECK(st.bytes_durable == st.bytes_written);
    CHECK_EQ(sf_log_close(&lg), 0);
}

/* Runs of a signal on k's low byte (0x101 frames: 1, 17, ..., 241): start at >= 200,
 * stop at <= 16: running from k = 256 r + 209 to 256 r + 256 (the stop: 256 r + 257); with rotate-on-start each run is a
 * file of its own. */
static void runs(int rotate)
{
    format();
    static const struct sf_ctl_signal b = { .name = "b", .id = 0x101, .length = 8,
                                            .scale = 1.0 };
    struct sf_ctl_cfg ctl = {
        .signals = &b, .signal_count = 1,
        .start = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 200 },
        .stop = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_LE, .signal = 0, .value = 16 },
        .flags = rotate ? SF_CTL_ROTATE_ON_START : 0,
    };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    for (uint64_t k = 0; k < 256 * 5 + 2; k++) {       /* the 5th run's stop: 1281 */
        uint32_t id;
        uint8_t d[8];
        gen_frame(k, &id, d);
        atomic_store(&fake_now, k);
        CHECK_EQ(sf_log_append_can(&lg, 0, k, id, 0, d, 8), 0);
        CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    uint32_t files = read_all_files();
    CHECK_EQ(ngot, 5 * 48);                   /* low bytes 209 .. 255 and the next 0 */
    for (size_t i = 0; i < ngot; i++) {
        uint64_t run = i / 48;
        CHECK_EQ(got[i].k, run * 256 + 209 + i % 48);
        if (rotate)
            CHECK_EQ(got[i].file, run + 1);       /* each run in a file of its own */
        else
            CHECK_EQ(got[i].file, 1);
    }
    CHECK_EQ(files, rotate ? 6 : 1);   /* rotate: the file the last stop started stays empty */
}

static void test_rotate_on_start(void)
{
    runs(0);
    runs(1);
}

/* ---- filters: 192 rules per channel on two channels against a naive first match ---- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static int naive_reject(const struct sf_ctl_filter *f, uint32_t id, uint8_t ext)
{
    for (uint32_t i = 0; i < f->count; i++) {
        const struct sf_ctl_rule *r = &f->rules[i];
        if (r->ext == ext && ((id ^ r->id) & r->mask) == 0)
            return r->reject;
    }
    return f->default_reject;
}

static void make_rules(struct sf_ctl_rule *r, uint32_t n_std, uint32_t n_ext)
{
    /* interleaved: exact and masked, standard and extended, duplicates of exact ids */
    for (uint32_t i = 0; i < n_std + n_ext; i++) {
        uint8_t ext = i % 3 == 2 && n_ext ? 1 : 0;
        if (ext)
            n_ext--;
        else if (n_std)
            n_std--;
        else {
            ext = 1;
            n_ext--;
        }
        uint32_t lim = ext ? 0x1FFFFFFFu : 0x7FFu;
        uint32_t id = ext ? 0x1000000u + (rnd() & 0xFFF) : 0x100u + (rnd() & 0xFF);
        uint32_t mask = lim;
        switch (rnd() % 4) {
        case 0: mask = lim & ~0xFu; break;
        case 1: mask = lim & ~(rnd() & 0xFFu); break;
        default: break;
        }
        if (i && rnd() % 8 == 0)
            id = r[rnd() % i].id & lim;
        r[i].id = id & lim;
        r[i].mask = mask;
        r[i].ext = ext;
        r[i].reject = (uint8_t)(rnd() & 1);
    }
}

static void test_filters(void)
{
    static struct sf_ctl_rule r0[192], r1[192];
    uint64_t seed = 0x51DE5EEDull;
    rng ^= seed;
    printf("filters: seed %llx\n", (unsigned long long)seed);
    make_rules(r0, 128, 64);
    make_rules(r1, 128, 64);
    /* channel 0 its own, channels 1 and 2 the `all` filter */
    struct sf_ctl_filter f[2] = { { .channel = 0, .default_reject = 1, .count = 192, .rules = r0 },
                                  { .all = 1, .default_reject = 0, .count = 192, .rules = r1 } };
    struct sf_ctl_cfg ctl = { .filters = f, .filter_count = 2, .stat_channels = 3 };
    uint32_t idx;
    CHECK_EQ(sf_log_control_check(&ctl, &idx), SF_CTL_OK);
    format();
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    uint64_t mism = 0, rejected = 0, n = 200000;
    struct sf_log_chan_stats before[3], after;
    for (int ch = 0; ch < 3; ch++)
        REQUIRE(sf_log_get_chan_stats(&lg, (uint32_t)ch, &before[ch]) == 0);
    for (uint64_t k = 0; k < n; k++) {
        uint8_t ch = (uint8_t)(rnd() % 3), ext = (uint8_t)(rnd() % 3 == 0);
        const struct sf_ctl_filter *fl = &f[ch ? 1 : 0];
        uint32_t id;
        if (rnd() % 2) {                          /* near some rule's id */
            const struct sf_ctl_rule *r = &fl->rules[rnd() % 192];
            ext = r->ext;
            id = r->id ^ (rnd() % 4 == 0 ? rnd() & 0x1F : 0);
        } else {
            id = ext ? 0x1000000u + (rnd() & 0x1FFF) : 0x100u + (rnd() & 0x1FF);
        }
        id &= ext ? 0x1FFFFFFFu : 0x7FFu;
        uint8_t d[8] = { 0 };
        int want = naive_reject(fl, id, ext);
        CHECK_EQ(sf_log_append_can(&lg, ch, k, id, ext ? SF_CAN_EFF : 0, d, 8), 0);
        REQUIRE(sf_log_get_chan_stats(&lg, ch, &after) == 0);
        int rej = after.filtered != before[ch].filtered;
        if (rej != want && mism++ < 10)
            fprintf(stderr, "channel %u id %x ext %u: core %s, reference %s\n", ch, id, ext,
                    rej ? "rejects" : "accepts", want ? "rejects" : "accepts");
        rejected += (uint64_t)want;
        before[ch] = after;
        if (k % 4096 == 0)
            CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(mism, 0);
    struct sf_log_stats st;
    CHECK_EQ(sf_log_close(&lg), 0);
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_filtered, rejected);
    CHECK_EQ(st.records_written, n - rejected);
    CHECK(rejected > n / 10 && rejected < n * 9 / 10);   /* both outcomes well exercised */
    printf("filters: %llu of %llu frames rejected, as the reference\n",
           (unsigned long long)rejected, (unsigned long long)n);
}

/* ---- triggers on signals ---- */

static void test_signal_trigger(void)
{
    format();
    const uint64_t MS = 1000000ull;
    struct sf_ctl_cond t = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0,
                             .value = 3000 };
    struct sf_ctl_cfg ctl = { .signals = &sig_k, .signal_count = 1, .triggers = &t,
                              .trigger_count = 1, .trigger_holdoff_ns = 2000 * MS };
    struct sf_log_cfg c = base_cfg(&ctl);
    c.pre_ns = 100 * MS;
    c.post_ns = 100 * MS;
    REQUIRE(open_log(&c) == 0);
    for (uint64_t k = 0; k < 10000; k++) {
        uint32_t id;
        uint8_t d[8];
        gen_frame(k, &id, d);
        atomic_store(&fake_now, k * MS);
        CHECK_EQ(sf_log_append_can(&lg, 0, k * MS, id, 0, d, 8), 0);
        CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    /* the condition holds on every 0x101 frame from k = 3009 on; once per 2 s: 3009, 5009,
     * 7009, 9009 */
    CHECK_EQ(st.triggers, 4);
    CHECK_EQ(read_all_files(), 4);
    for (uint32_t f = 1; f <= 4; f++) {
        uint64_t at = 3009 + 2000 * (f - 1), lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < ngot; i++) {
            if (got[i].file != f)
                continue;
            lo = got[i].k < lo ? got[i].k : lo;
            hi = got[i].k > hi ? got[i].k : hi;
        }
        printf("trigger file %u: frames %llu .. %llu\n", f, (unsigned long long)lo,
               (unsigned long long)hi);
        /* pre window 100 ms, kept in whole blocks of 126 records (the block being filled
         * at the trigger is not yet the writer's, so up to two), post window 100 ms */
        CHECK(lo <= at - 100 && lo + 100 + 2 * 126 >= at);
        CHECK(hi >= at + 100 && hi <= at + 102);
    }
}

/* ---- signals: decoding and thresholds ---- */

static void test_signal_decode(void)
{
    static const uint8_t d[8] = { 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0 };
    struct sf_ctl_signal s = { .name = "s", .id = 1, .scale = 1 };
    int64_t v;
    s.start = 0, s.length = 16;
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == 0x3412);
    s.start = 4, s.length = 8;
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == 0x41);
    s.motorola = 1, s.start = 7, s.length = 16;              /* bytes 0-1 big-endian */
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == 0x1234);
    s.start = 3, s.length = 8;                /* byte 0 bits 3..0, then byte 1 bits 7..4 */
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == 0x23);
    s.start = 7, s.length = 64;
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && (uint64_t)v == 0x123456789ABCDEF0ull);
    s.is_signed = 1, s.start = 55, s.length = 8;             /* byte 6: 0xDE = -34 */
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == -34);
    s.motorola = 0, s.start = 60, s.length = 4;              /* 0xF = -1 */
    CHECK(sf_ctl_signal_raw(&s, d, 8, &v) == 0 && v == -1);
    s.start = 60, s.length = 8;                              /* needs a ninth byte */
    CHECK_EQ(sf_ctl_signal_raw(&s, d, 8, &v), SF_EINVAL);
}

/* A logger whose start condition is `op value` on signal s (over byte 0 of id 0x10) and
 * whose stop is any frame of 0x11: for each raw value a stop frame, then a frame with
 * byte 0 = raw, logged exactly when the condition holds. Bit i of the result: raws[i]. */
static uint32_t holds(const struct sf_ctl_signal *s, uint8_t op, double value,
                      const uint8_t *raws, int n)
{
    struct sf_ctl_cfg ctl = { .signals = s, .signal_count = 1,
                              .start = { .kind = SF_CTL_SIGNAL, .op = op, .value = value },
                              .stop = { .kind = SF_CTL_FRAME, .id = 0x11 } };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    uint32_t res = 0;
    uint64_t logged = 0;
    for (int i = 0; i < n; i++) {
        uint8_t d[8] = { raws[i] }, z[8] = { 0 };
        CHECK_EQ(sf_log_append_can(&lg, 0, 1, 0x11, 0, z, 8), 0);
        CHECK_EQ(sf_log_append_can(&lg, 0, 1, s->id, 0, d, 8), 0);
        struct sf_log_chan_stats cs;
        REQUIRE(sf_log_get_chan_stats(&lg, 0, &cs) == 0);
        if (cs.logged != logged)
            res |= 1u << i;
        logged = cs.logged;
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    CHECK_EQ(sf_unlink(&vol, "LOG00001.SFL"), 0);
    return res;
}

static void test_thresholds(void)
{
    format();
    struct sf_ctl_signal u = { .name = "u", .id = 0x10, .length = 8, .scale = 0.5 };
    struct sf_ctl_signal sg = { .name = "s", .id = 0x10, .length = 8, .is_signed = 1,
                                .scale = 1 };
    struct sf_ctl_signal neg = { .name = "n", .id = 0x10, .length = 8, .scale = -1,
                                 .offset = 10 };
    /* every op at and around each threshold, against the physical value computed here */
    static const double thr[] = { 2.5, 3, -3, 0, 127.5, 128, -200, 300, 7.25, 63.5 };
    static const uint8_t raws[] = { 0, 1, 5, 6, 7, 13, 14, 15, 127, 128, 200, 253, 254, 255 };
    const int nr = (int)sizeof raws;
    const struct sf_ctl_signal *sigs[] = { &u, &sg, &neg };
    uint32_t cases = 0, wrong = 0;
    for (int si = 0; si < 3; si++) {
        for (int op = SF_CTL_GE; op <= SF_CTL_EQ; op++) {
            for (size_t ti = 0; ti < sizeof thr / sizeof thr[0]; ti++) {
                const struct sf_ctl_signal *s = sigs[si];
                uint32_t h = holds(s, (uint8_t)op, thr[ti], raws, nr);
                for (int i = 0; i < nr; i++) {
                    int64_t r = s->is_signed ? (int8_t)raws[i] : raws[i];
                    double x = (double)r * s->scale + s->offset, t = thr[ti];
                    int want = op == SF_CTL_GE ? x >= t : op == SF_CTL_GT ? x > t :
                               op == SF_CTL_LE ? x <= t : op == SF_CTL_LT ? x < t : x == t;
                    cases++;
                    if ((int)(h >> i & 1) != want && wrong++ < 10)
                        fprintf(stderr, "signal %s raw %d op %d threshold %g: %d, want %d\n",
                                s->name, raws[i], op, t, (int)(h >> i & 1), want);
                }
            }
        }
    }
    CHECK_EQ(wrong, 0);
    printf("thresholds: %u cases\n", cases);
}

/* The field of s (Intel or Motorola, within the first 8 bytes) set to raw in d. */
static void put_field(const struct sf_ctl_signal *s, uint64_t raw, uint8_t d[8])
{
    uint64_t m = s->length < 64 ? (1ull << s->length) - 1 : ~0ull, w = 0;
    if (!s->motorola) {
        w = (raw & m) << s->start;
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(w >> (8 * i));
    } else {                                  /* MSB at big-endian bit 8*(start/8) + 7 - start%8 */
        uint32_t fsh = 8u * (s->start >> 3) + 7u - (s->start & 7u);
        w = (raw & m) << (64 - fsh - s->length);
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(w >> (56 - 8 * i));
    }
}

static int op_holds(uint8_t op, long double x, long double t)
{
    return op == SF_CTL_GE ? x >= t : op == SF_CTL_GT ? x > t : op == SF_CTL_LE ? x <= t :
           op == SF_CTL_LT ? x < t : x == t;
}

/* For each raw, a frame of s carrying it: logged exactly when `s op value` holds. For >=,
 * >, <=, <: start on the condition, stop on its complement (so both the start and the stop
 * check decide, each in the state where it acts); for ==: start on it, stop on any frame of
 * 0x11 sent before each. Bit i of the result: raws[i] logged. */
static uint64_t holds_field(const struct sf_ctl_signal *s, uint8_t op, double value,
                            const uint64_t *raws, int n, int alone)
{
    static const uint8_t comp[6] = { 0, SF_CTL_LT, SF_CTL_LE, SF_CTL_GT, SF_CTL_GE, 0 };
    struct sf_ctl_cfg ctl = { .signals = s, .signal_count = 1,
                              .start = { .kind = SF_CTL_SIGNAL, .op = op, .value = value } };
    if (alone)                          /* the start condition alone on its id */
        op = SF_CTL_EQ;
    if (op == SF_CTL_EQ)
        ctl.stop = (struct sf_ctl_cond){ .kind = SF_CTL_FRAME, .id = 0x11 };
    else
        ctl.stop = (struct sf_ctl_cond){ .kind = SF_CTL_SIGNAL, .op = comp[op], .value = value };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    uint64_t res = 0, logged = 0;
    for (int i = 0; i < n; i++) {
        uint8_t d[8], z[8] = { 0 };
        put_field(s, raws[i], d);
        if (op == SF_CTL_EQ)
            CHECK_EQ(sf_log_append_can(&lg, 0, 1, 0x11, 0, z, 8), 0);
        CHECK_EQ(sf_log_append_can(&lg, 0, 1, s->id, s->ext ? SF_CAN_EFF : 0, d, 8), 0);
        struct sf_log_chan_stats cs;
        REQUIRE(sf_log_get_chan_stats(&lg, 0, &cs) == 0);
        if (cs.logged != logged)
            res |= 1ull << i;
        logged = cs.logged;
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    CHECK_EQ(sf_unlink(&vol, "LOG00001.SFL"), 0);
    return res;
}

/* Conditions on random fields within the first 8 bytes (Intel and Motorola, signed and
 * unsigned, 1 to 64 bits, positive and negative scales with offsets), each operator at,
 * just below and just above the physical value of a raw value: 8-byte frames of an 11-bit
 * id take the producer's inline checks (bounds folded into the raw, left-aligned domain at
 * open), a 29-bit id the general path; both against the physical value computed here
 * (exactly: powers of two as scales, fields up to 40 bits, 64-bit ones with scale 1). Each
 * case twice: the start and the stop condition on the signal's id (two checks), and the
 * start condition alone on it, the stop on a frame of another id (one check: ctl_group's
 * straight way). */
static void test_thresholds_fields(void)
{
    format();
    static const double scales[] = { 1, 0.5, 0.25, 2, -1, -0.5, -4 };
    static const double offsets[] = { 0, 10, -3.5, 0.25 };
    static const uint8_t lens[] = { 1, 2, 7, 8, 9, 12, 16, 23, 31, 32, 33, 40, 64, 64 };
    uint64_t seed = rng;
    uint32_t cases = 0, wrong = 0;
    for (int si = 0; si < 28; si++) {
        struct sf_ctl_signal s = { .name = "f", .length = lens[rnd() % sizeof lens],
                                   .motorola = (uint8_t)(rnd() & 1),
                                   .is_signed = (uint8_t)(si % 2) };
        uint32_t len = s.length, pos = rnd() % (65 - len);       /* Intel start / Motorola fsh */
        s.start = (uint16_t)(s.motorola ? 8 * (pos >> 3) + 7 - (pos & 7) : pos);
        s.scale = len == 64 ? 1 : scales[rnd() % 7];
        s.offset = len == 64 ? 0 : offsets[rnd() % 4];
        if (si % 4 == 3)
            s.scale = s.scale > 0 ? -s.scale : s.scale;           /* some negative always */
        uint64_t m = len < 64 ? (1ull << len) - 1 : ~0ull;
        uint64_t smin = s.is_signed ? 1ull << (len - 1) : 0;     /* field bits of the least */
        uint64_t raws[16] = { smin, smin + 1, (smin - 1) & m, (smin - 2) & m, 0, 1, m, m >> 1 };
        for (int i = 8; i < 16; i++)
            raws[i] = ((uint64_t)rnd() << 32 | rnd()) & m;
        long double xs[16];
        for (int i = 0; i < 16; i++) {
            raws[i] &= m;
            int64_t v = (int64_t)raws[i];
            if (s.is_signed && len < 64 && (raws[i] >> (len - 1) & 1))
                v = (int64_t)(raws[i] | ~m);
            xs[i] = (s.is_signed ? (long double)v : (long double)raws[i]) * s.scale + s.offset;
        }
        for (int tries = 0; tries < 3; tries++) {
            int pick = (int)(rnd() % 16);
            double half = s.scale < 0 ? -s.scale / 2 : s.scale / 2;
            double t = (double)xs[pick] + (tries == 0 ? 0 : tries == 1 ? -half : half);
            if (len == 64 && tries)
                t = (double)xs[pick];                  /* a double: only some raws exactly */
            for (int op = SF_CTL_GE; op <= SF_CTL_EQ; op++) {
                for (int way = 0; way < 4; way++) {
                    int ext = way & 1, alone = way >> 1;
                    s.ext = (uint8_t)ext;
                    s.id = ext ? 0x18000010u : 0x10u;
                    uint64_t h = holds_field(&s, (uint8_t)op, t, raws, 16, alone);
                    for (int i = 0; i < 16; i++) {
                        int want = op_holds((uint8_t)op, xs[i], (long double)t);
                        cases++;
                        if ((int)(h >> i & 1) != want && wrong++ < 10)
                            fprintf(stderr, "field %s len %u start %u %s scale %g offset %g "
                                    "%s%s raw %llx op %d threshold %.17g: %d, want %d "
                                    "(seed %llx)\n", s.motorola ? "be" : "le", len, s.start,
                                    s.is_signed ? "s" : "u", s.scale, s.offset,
                                    ext ? "ext" : "std", alone ? " alone" : "",
                                    (unsigned long long)raws[i], op, t,
                                    (int)(h >> i & 1), want, (unsigned long long)seed);
                    }
                }
            }
        }
    }
    CHECK_EQ(wrong, 0);
    printf("thresholds on fields: %u cases\n", cases);
}

/* SF_LOG_MEASURE with a control stage: every call is timed once, the stage included, the
 * frames it keeps out too (filtered, prescaled, paused); invalid frames are not. */
static _Atomic uint64_t tick;
static uint64_t tick_clock(void *ctx) { (void)ctx; return atomic_fetch_add(&tick, 100) + 100; }

static void test_measure(void)
{
    format();
    struct sf_ctl_rule r = { .id = 0x105, .mask = 0x7FF, .reject = 1 };
    struct sf_ctl_filter f = { .channel = 0, .count = 1, .rules = &r };
    struct sf_ctl_prescale p = { .id = 0x101, .mask = 0x7FF, .kind = SF_CTL_EVERY, .n = 2 };
    struct sf_ctl_cfg ctl = { .filters = &f, .filter_count = 1, .prescalers = &p,
                              .prescaler_count = 1, .signals = &sig_k, .signal_count = 1,
                              .start = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .value = 100 } };
    struct sf_log_cfg c = base_cfg(&ctl);
    c.flags = SF_LOG_MEASURE;
    c.clock = tick_clock;
    REQUIRE(open_log(&c) == 0);
    feed(1600);
    uint8_t d[8] = { 0 };
    CHECK_EQ(sf_log_append_can(&lg, 0, 1, 0x800, 0, d, 8), SF_EINVAL);   /* not timed */
    struct sf_log_stats st;
    struct sf_hist ha;
    sf_log_get_stats(&lg, &st);
    sf_log_get_hist(&lg, &ha, NULL, NULL);
    CHECK(st.records_filtered > 0 && st.records_prescaled > 0 && st.records_paused > 0);
    CHECK_EQ(ha.count, 1600);
    CHECK(ha.max_ns >= 100);
    CHECK_EQ(sf_log_close(&lg), 0);
    CHECK_EQ(sf_unlink(&vol, "LOG00001.SFL"), 0);
    printf("measure: %llu appends timed (%llu filtered, %llu prescaled, %llu paused)\n",
           (unsigned long long)ha.count, (unsigned long long)st.records_filtered,
           (unsigned long long)st.records_prescaled, (unsigned long long)st.records_paused);
}

/* ---- threads: two producers sharing prescalers and a stop condition, a writer ---- */

static _Atomic int thr_done, thr_err;   /* CHECK is not for other threads */
static _Atomic uint64_t thr_retries[2];

static void *thr_producer(void *arg)
{
    uint8_t ch = (uint8_t)(uintptr_t)arg;
    for (uint64_t k = 0; k < 100000; k++) {
        uint32_t id;
        uint8_t d[8];
        gen_frame(k, &id, d);
        while (sf_log_append_can(&lg, ch, k, id, 0, d, 8) == SF_EDROPPED)
            atomic_fetch_add(&thr_retries[ch], 1);   /* the ring was full: counted, again */
    }
    atomic_fetch_add(&thr_done, 1);
    return NULL;
}

static void *thr_writer(void *arg)
{
    (void)arg;
    while (atomic_load(&thr_done) < 2)
        if (sf_log_service(&lg) < 0)
            atomic_store(&thr_err, 1);
    return NULL;
}

static void test_threads(void)
{
    format();
    struct sf_ctl_prescale p[2] = {
        { .id = 0x100, .mask = 0x7FC, .kind = SF_CTL_EVERY, .n = 3 },
        { .id = 0x108, .mask = 0x7F8, .kind = SF_CTL_CHANGE, .bytes = { 0xF0 } },
    };
    static struct sf_ctl_rule r[2] = { { .id = 0x10F, .mask = 0x7FF, .reject = 1 } };
    struct sf_ctl_filter f = { .all = 1, .count = 1, .rules = r };
    struct sf_ctl_cfg ctl = {
        .filters = &f, .filter_count = 1, .prescalers = p, .prescaler_count = 2,
        .signals = &sig_k, .signal_count = 1, .stat_channels = 2,
        .stop = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 90000 },
    };
    struct sf_log_cfg c = base_cfg(&ctl);
    REQUIRE(open_log(&c) == 0);
    pthread_t th[3];
    atomic_store(&thr_done, 0);
    atomic_store(&thr_retries[0], 0);
    atomic_store(&thr_retries[1], 0);
    REQUIRE(pthread_create(&th[0], NULL, thr_writer, NULL) == 0);
    REQUIRE(pthread_create(&th[1], NULL, thr_producer, (void *)(uintptr_t)0) == 0);
    REQUIRE(pthread_create(&th[2], NULL, thr_producer, (void *)(uintptr_t)1) == 0);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(atomic_load(&thr_err), 0);
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    uint64_t seen = 0, logged = 0;
    for (uint32_t ch = 0; ch < 2; ch++) {
        struct sf_log_chan_stats cs;
        REQUIRE(sf_log_get_chan_stats(&lg, ch, &cs) == 0);
        CHECK_EQ(cs.seen, 100000 + atomic_load(&thr_retries[ch]));   /* a retry is seen again */
        CHECK_EQ(cs.filtered, 100000 / 16);            /* 0x10F, each channel */
        CHECK(cs.paused >= 9000);                      /* stopped by k >= 90000 at the latest */
        seen += cs.seen;
        logged += cs.logged;
    }
    CHECK_EQ(seen, 200000 + st.records_dropped);
    CHECK_EQ(st.records_filtered + st.records_prescaled + st.records_paused + logged, seen);
    /* "logged" counts offers to the ring: a frame refused by a full ring and offered again
     * counts twice, as it does in records_in (written + dropped) */
    CHECK_EQ(st.records_in, logged);
    CHECK_EQ(st.records_in, st.records_written + st.records_dropped);
    CHECK_EQ(read_all_files(), 1);
    CHECK_EQ(ngot, st.records_written);
    printf("threads: %llu logged, %llu prescaled, %llu paused, %llu dropped and retried\n",
           (unsigned long long)logged, (unsigned long long)st.records_prescaled,
           (unsigned long long)st.records_paused, (unsigned long long)st.records_dropped);
}

/* ---- validation ---- */

static void bad(const struct sf_ctl_cfg *ctl, int code, uint32_t where)
{
    uint32_t idx = 99;
    int got_code = sf_log_control_check(ctl, &idx);
    CHECK_EQ(got_code, code);
    CHECK_EQ(idx, where);
    CHECK(sf_log_control_why(got_code)[0]);
    struct sf_log_cfg c = base_cfg(ctl);
    CHECK_EQ(open_log(&c), SF_EINVAL);
}

static void test_invalid(void)
{
    format();
    struct sf_ctl_signal s[2] = { sig_k, sig_k };
    struct sf_ctl_cfg ctl = { .signals = s, .signal_count = 2 };
    s[1].start = 510, s[1].length = 8;                         /* past 64 bytes */
    bad(&ctl, SF_CTL_BAD_START_BIT, 1);
    s[1].start = 0, s[1].length = 0;
    bad(&ctl, SF_CTL_BAD_LENGTH, 1);
    s[1].length = 65;
    bad(&ctl, SF_CTL_BAD_LENGTH, 1);
    s[1].length = 8, s[1].motorola = 1, s[1].start = 504 + 3;  /* 3..0 of byte 63, then 64 */
    bad(&ctl, SF_CTL_BAD_START_BIT, 1);
    s[1].start = 7, s[1].scale = 0;
    bad(&ctl, SF_CTL_BAD_SIGNAL, 1);
    s[1].scale = 1;
    ctl.stop = (struct sf_ctl_cond){ .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 2 };
    bad(&ctl, SF_CTL_UNKNOWN_SIGNAL, 1);
    ctl.stop.signal = 1, ctl.stop.op = 9;
    bad(&ctl, SF_CTL_BAD_OP, 1);
    ctl.stop.op = SF_CTL_LT;
    CHECK_EQ(sf_log_control_check(&ctl, NULL), SF_CTL_OK);
    struct sf_ctl_prescale p = { .id = 0x100, .mask = 0x7FF, .kind = SF_CTL_EVERY, .n = 0 };
    ctl.prescalers = &p, ctl.prescaler_count = 1;
    bad(&ctl, SF_CTL_BAD_PRESCALER, 0);
    p.n = 1;
    static struct sf_ctl_rule r[80];
    for (int i = 0; i < 80; i++)
        r[i] = (struct sf_ctl_rule){ .id = (uint32_t)i, .mask = 0x1FFFFFFF, .ext = 1 };
    struct sf_ctl_filter f[2] = { { .channel = 3, .count = 64, .rules = r },
                                  { .channel = 3, .count = 1, .rules = r } };
    ctl.filters = f, ctl.filter_count = 2;
    bad(&ctl, SF_CTL_DUP_CHANNEL, 1);
    f[1].channel = 4, f[1].count = 65;
    bad(&ctl, SF_CTL_TOO_MANY_RULES, 1);
    f[1].count = 64;
    r[5].mask = 0x3FFFFFFF;
    bad(&ctl, SF_CTL_BAD_RULE_ID, 0);
    r[5].mask = 0x1FFFFFFF;
    /* a trigger without the flight recorder */
    struct sf_ctl_cond t = { .kind = SF_CTL_FRAME, .id = 0x100 };
    ctl.triggers = &t, ctl.trigger_count = 1;
    CHECK_EQ(sf_log_control_check(&ctl, NULL), SF_CTL_OK);
    struct sf_log_cfg c = base_cfg(&ctl);
    CHECK_EQ(open_log(&c), SF_EINVAL);
    /* too little memory */
    ctl.trigger_count = 0;
    c = base_cfg(&ctl);
    ctl_mem_size = sf_log_control_mem_size(&ctl) - 8;
    CHECK_EQ(open_log(&c), SF_EINVAL);
    ctl_mem_size = sf_log_control_mem_size(&ctl);
    CHECK_EQ(open_log(&c), 0);
    CHECK_EQ(sf_log_control(&lg, &ctl, ctl_mem, ctl_mem_size), SF_EINVAL);   /* twice */
    CHECK_EQ(sf_log_close(&lg), 0);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(t) do { if (!only || !strcmp(only, #t)) { printf("-- %s\n", #t); fflush(stdout); test_##t(); } } while (0)
    RUN(signal_decode);
    RUN(prescale_every);
    RUN(prescale_change);
    RUN(prescale_period);
    RUN(start_stop);
    RUN(stop_checkpoint);
    RUN(rotate_on_start);
    RUN(filters);
    RUN(signal_trigger);
    RUN(thresholds);
    RUN(thresholds_fields);
    RUN(measure);
    RUN(invalid);
    RUN(threads);
    sf_unmount(&vol);
    free(disk);
    free(got);
    TEST_END();
}
