/* The logger on RAM-backed exFAT volumes: every record back in order (decoded with rec.h's
 * block check and record walk), drops counted exactly and accounted for by DROP records,
 * four producer threads against a writer thread, rotation by size and on demand, cyclic
 * deletion on a small volume, flight-recorder windows, checkpoints by a fake clock, raw
 * mode byte for byte; and the single-producer append rate. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "fragment.h"
#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/check.h"

#define SS 512u
static uint8_t *disk;
static struct sf_rambd ram;
static struct sf_vol vol;
static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
static uint8_t *ring;
static uint8_t work[1 << 20] __attribute__((aligned(4096)));
static struct sf_log lg;

static _Atomic uint64_t fake_now;
static uint64_t fake_clock(void *ctx) { (void)ctx; return atomic_load(&fake_now); }

static uint64_t real_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static uint64_t real_clock(void *ctx) { (void)ctx; return real_ns(); }

static void format(uint64_t bytes, uint32_t cluster)
{
    static uint8_t mbuf[1 << 20];
    free(disk);
    disk = calloc(bytes / SS, SS);
    REQUIRE(disk);
    REQUIRE(sf_rambd_init(&ram, disk, SS, bytes / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = cluster, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    struct sf_vol_cfg cfg = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&vol, &cfg) == 0);
}

static void set_ring(size_t bytes)
{
    free(ring);
    ring = aligned_alloc(4096, bytes);
    REQUIRE(ring);
    memset(ring, 0xA5, bytes);           /* touch the pages: measure appends, not faults */
}

static struct sf_log_cfg base_cfg(size_t ring_bytes, uint32_t block)
{
    static const char *const chans[] = { "can0", "can1" };
    static const char *const meta[] = { "test=log" };
    set_ring(ring_bytes);
    struct sf_log_cfg c = {
        .vol = &vol, .ring = ring, .ring_size = ring_bytes, .block_size = block,
        .clock = fake_clock, .session_id = 0x1234, .channel_names = chans, .channel_count = 2,
        .meta = meta, .meta_count = 1, .work = work, .work_size = sizeof work,
    };
    return c;
}

/* ---- decoding ---- */

struct rec_out {
    uint8_t type, channel;
    uint64_t ts;
    uint32_t id;
    uint64_t v, v2;             /* CAN data / SAMPLE body as u64s */
    uint64_t d[3];              /* DROP */
    uint32_t file;
};
static struct rec_out *recs;
static size_t nrecs, caprecs;

static uint8_t *read_all(const char *path, uint64_t *size)
{
    struct sf_file f;
    REQUIRE(sf_open(&vol, &f, path, SF_O_RDONLY) == 0);
    *size = sf_fsize(&f);
    uint8_t *b = malloc(*size + 1);
    REQUIRE(b);
    REQUIRE(sf_read(&f, b, *size) == (sf_ssize_t)*size);
    sf_close(&f);
    return b;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The decoder above reads bodies as little-endian: write them so on any host. */
static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

/* Decode a whole file: header block valid, every block valid, seq 0..n-1, one file id.
 * Appends its records to recs; returns the file index from its header. */
static uint32_t decode_file(const char *path)
{
    uint64_t size;
    uint8_t *b = read_all(path, &size);
    uint32_t bs = 0;
    struct sf_block_info bi;
    REQUIRE(size >= 512 && sf_block_peek_size(b, &bs) == 0);
    CHECK_EQ(size % bs, 0);
    REQUIRE(sf_block_check(b, bs, &bi) == 0);
    CHECK_EQ(bi.kind, SF_BLOCK_FILE_HEADER);
    CHECK_EQ(bi.seq, 0);
    uint64_t fid = bi.file_id;
    struct sf_file_header fh;
    sf_file_header_get(b + SF_BLOCK_HDR, &fh);
    CHECK_EQ(fh.session_id, 0x1234);
    uint32_t off = SF_FILE_HDR, chans = 0;
    struct sf_rec r;
    while (sf_rec_next(b, &bi, &off, &r) == 1)
        chans += r.type == SF_REC_CHANNEL;
    CHECK_EQ(chans, 2);
    for (uint64_t k = 1; k < size / bs; k++) {
        const uint8_t *blk = b + k * bs;
        int e = sf_block_check(blk, bs, &bi);
        CHECK_EQ(e, 0);
        if (e)
            continue;
        CHECK_EQ(bi.seq, k);
        CHECK(bi.file_id == fid);
        CHECK_EQ(bi.kind, SF_BLOCK_RECORDS);
        off = 0;
        int got;
        uint32_t n = 0;
        while ((got = sf_rec_next(blk, &bi, &off, &r)) == 1) {
            if (nrecs == caprecs) {
                caprecs = caprecs ? caprecs * 2 : 1 << 16;
                recs = realloc(recs, caprecs * sizeof *recs);
                REQUIRE(recs);
            }
            struct rec_out *o = &recs[nrecs++];
            memset(o, 0, sizeof *o);
            o->type = r.type;
            o->channel = r.channel;
            o->ts = r.ts;
            o->file = fh.file_index;
            if (r.type == SF_REC_CAN) {
                struct sf_can c;
                CHECK_EQ(sf_rec_get_can(&r, &c), 0);
                o->id = c.id;
                o->v = le64(c.data);
            } else if (r.type == SF_REC_SAMPLE && r.length >= 16) {
                o->v = le64(r.body);
                o->v2 = le64(r.body + 8);
            } else if (r.type == SF_REC_DROP) {
                CHECK_EQ(r.length, 24);
                for (int i = 0; i < 3; i++)
                    o->d[i] = le64(r.body + 8 * i);
            }
            n++;
        }
        CHECK_EQ(got, 0);
        CHECK_EQ(n, bi.count);
    }
    free(b);
    return fh.file_index;
}

static void put_can(uint64_t k, uint64_t ts, int expect_ok)
{
    uint8_t d[8];
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)(k >> (8 * i));
    int e = sf_log_append_can(&lg, 0, ts, 0x100 + (uint32_t)(k % 16), 0, d, 8);
    if (expect_ok)
        REQUIRE(e == 0);
}

static void check_can_seq(size_t from, size_t to, uint64_t first_k)
{
    uint64_t k = first_k;
    for (size_t i = from; i < to; i++) {
        if (recs[i].type != SF_REC_CAN)
            continue;
        if (recs[i].v != k || recs[i].id != 0x100 + k % 16) {
            fprintf(stderr, "record %zu: k %llu, expected %llu\n", i,
                    (unsigned long long)recs[i].v, (unsigned long long)k);
            CHECK(0);
            return;
        }
        k++;
    }
}

/* ---- tests ---- */

/* N CAN frames, decoded back exactly; open to first record in well under 0.5 s. */
static void test_basic(void)
{
    format(256 << 20, 32768);
    struct sf_log_cfg c = base_cfg(1 << 20, 0);
    atomic_store(&fake_now, 1000);
    uint64_t t0 = real_ns();
    REQUIRE(sf_log_open(&lg, &c) == 0);
    put_can(0, 1000, 1);
    uint64_t t1 = real_ns();
    printf("open to first record: %.3f ms\n", (t1 - t0) / 1e6);
    CHECK(t1 - t0 < 500000000ull);
    const uint64_t N = 500000;
    for (uint64_t k = 1; k < N; k++) {
        put_can(k, 1000 + k, 1);
        if (k % 1000 == 0)
            CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_in, N);
    CHECK_EQ(st.records_written, N);
    CHECK_EQ(st.records_dropped, 0);
    CHECK_EQ(st.files, 1);
    nrecs = 0;
    CHECK_EQ(decode_file("LOG00001.SFL"), 1);
    CHECK_EQ(nrecs, N);
    check_can_seq(0, nrecs, 0);
    struct sf_stat ss;
    REQUIRE(sf_stat(&vol, "LOG00001.SFL", &ss) == 0);
    CHECK_EQ(ss.size, st.bytes_written);
    CHECK_EQ(st.bytes_durable, ss.size);
    CHECK(sf_stat(&vol, "LOG00002.SFL", &ss) == SF_ENOENT);   /* the prepared file is gone */
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* A producer faster than the writer: exact drop counts, DROP records account for each gap. */
static void test_overflow(void)
{
    format(64 << 20, 4096);
    struct sf_log_cfg c = base_cfg(8 * 4096, 4096);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    uint64_t k = 0, refused = 0;
    for (int burst = 0; burst < 20; burst++) {
        for (int i = 0; i < 5000; i++, k++) {
            uint8_t d[8];
            for (int j = 0; j < 8; j++)
                d[j] = (uint8_t)(k >> (8 * j));
            int e = sf_log_append_can(&lg, 0, k, 0x100 + (uint32_t)(k % 16), 0, d, 8);
            CHECK(e == 0 || e == SF_EDROPPED);
            refused += e == SF_EDROPPED;
        }
        for (int i = 0; i < 50; i++)
            CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK(refused > 0);
    CHECK_EQ(st.records_dropped, refused);
    CHECK_EQ(st.records_in, k);                 /* offered: written + dropped (log.h) */
    CHECK_EQ(st.records_written + st.records_dropped, st.records_in);
    CHECK(st.records_own > 0);                  /* the DROP records, counted apart */
    nrecs = 0;
    decode_file("LOG00001.SFL");
    /* Walk: each gap in k is exactly the DROP record written where the gap starts. */
    uint64_t expect = 0, drops = 0, ndrop = 0;
    for (size_t i = 0; i < nrecs; i++) {
        if (recs[i].type == SF_REC_DROP) {
            CHECK_EQ(recs[i].d[1], expect);
            CHECK_EQ(recs[i].d[2] - recs[i].d[1] + 1, recs[i].d[0]);
            drops += recs[i].d[0];
            expect = recs[i].d[2] + 1;
            ndrop++;
            continue;
        }
        if (recs[i].v != expect) {
            fprintf(stderr, "record %zu: k %llu, expected %llu\n", i,
                    (unsigned long long)recs[i].v, (unsigned long long)expect);
            CHECK(0);
        }
        expect = recs[i].v + 1;
    }
    CHECK_EQ(expect, k);
    CHECK_EQ(drops, refused);
    CHECK(ndrop >= 2);
    printf("overflow: %llu of %llu refused, %llu DROP records\n", (unsigned long long)refused,
           (unsigned long long)k, (unsigned long long)ndrop);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* ---- four producers, one writer thread ---- */

#define PRODUCERS 4
static _Atomic int producers_done;
static uint64_t accepted[PRODUCERS], refused_by[PRODUCERS];
static uint64_t PER_PRODUCER;

static void *producer(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint64_t s = 0; s < PER_PRODUCER; s++) {
        uint8_t body[16];
        uint64_t v = s, w = ~s ^ ((uint64_t)id << 56);
        put_le64(body, v);
        put_le64(body + 8, w);
        int e;
        if (s & 1) {
            e = sf_log_append(&lg, SF_REC_SAMPLE, (uint8_t)id, 0, real_ns(), body, 16);
        } else {
            struct sf_log_resv r;
            e = sf_log_reserve(&lg, SF_REC_SAMPLE, (uint8_t)id, 0, real_ns(), 16, &r);
            if (!e) {
                memcpy(r.body, body, 16);
                sf_log_commit(&lg, &r);
            }
        }
        if (e == 0)
            accepted[id]++;
        else if (e == SF_EDROPPED)
            refused_by[id]++;
        else
            abort();
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    while (atomic_load(&producers_done) < PRODUCERS) {
        if (sf_log_service(&lg) < 0)
            abort();
    }
    return NULL;
}

/* ring: a small one (producers outrun the writer: drops, each accounted for) or one that
 * holds everything (no drop may happen). */
static void run_threads(size_t ring_bytes, uint64_t per_producer)
{
    PER_PRODUCER = per_producer;
    memset(accepted, 0, sizeof accepted);
    memset(refused_by, 0, sizeof refused_by);
    format(512 << 20, 32768);
    struct sf_log_cfg c = base_cfg(ring_bytes, 65536);
    c.clock = real_clock;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    pthread_t p[PRODUCERS], w;
    atomic_store(&producers_done, 0);
    REQUIRE(pthread_create(&w, NULL, writer, NULL) == 0);
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        REQUIRE(pthread_create(&p[i], NULL, producer, (void *)i) == 0);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    pthread_join(w, NULL);
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    nrecs = 0;
    decode_file("LOG00001.SFL");
    uint64_t next[PRODUCERS] = { 0 }, found[PRODUCERS] = { 0 }, drops = 0, refused = 0;
    int bad = 0;
    for (size_t i = 0; i < nrecs; i++) {
        if (recs[i].type == SF_REC_DROP) {
            drops += recs[i].d[0];
            continue;
        }
        uint32_t id = recs[i].channel;
        if (recs[i].type != SF_REC_SAMPLE || id >= PRODUCERS ||
            recs[i].v2 != (~recs[i].v ^ ((uint64_t)id << 56)) || recs[i].v < next[id]) {
            bad++;
            continue;
        }
        next[id] = recs[i].v + 1;
        found[id]++;
    }
    CHECK_EQ(bad, 0);
    for (int i = 0; i < PRODUCERS; i++) {
        CHECK_EQ(found[i], accepted[i]);
        refused += refused_by[i];
    }
    CHECK_EQ(drops, refused);
    CHECK_EQ(st.records_dropped, refused);
    if (ring_bytes >= PRODUCERS * per_producer * 64)
        CHECK_EQ(refused, 0);
    printf("threads: %d x %llu appends, %llu refused, high water %llu of %llu bytes\n",
           PRODUCERS, (unsigned long long)PER_PRODUCER, (unsigned long long)refused,
           (unsigned long long)st.ring_high_water, (unsigned long long)st.ring_size);
    CHECK_EQ(sf_unmount(&vol), 0);
}

static void test_threads(void)
{
    run_threads(2 << 20, 400000);
    run_threads(64 << 20, 200000);
}

/* Rotation by size and on demand; numbering continues after the highest existing file. */
static void test_rotation(void)
{
    format(128 << 20, 4096);
    REQUIRE(sf_mkdir(&vol, "logs") == 0);
    struct sf_file f;
    REQUIRE(sf_open(&vol, &f, "logs/LOG00007.SFL", SF_O_WRONLY | SF_O_CREAT) == 0);
    sf_close(&f);
    struct sf_log_cfg c = base_cfg(64 * 4096, 4096);
    c.dir = "logs";
    c.split_bytes = 256 * 1024;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    const uint64_t N = 60000;
    for (uint64_t k = 0; k < N; k++) {
        put_can(k, k, 1);
        if (k % 500 == 0)
            CHECK(sf_log_service(&lg) >= 0);
        if (k == 30000) {
            CHECK_EQ(sf_log_rotate(&lg), 0);
            CHECK(sf_log_service(&lg) >= 0);
        }
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    nrecs = 0;
    uint32_t files = 0, short_files = 0;
    for (uint32_t i = 8;; i++) {
        char path[64];
        struct sf_stat ss;
        snprintf(path, sizeof path, "logs/LOG%05u.SFL", i);
        if (sf_stat(&vol, path, &ss))
            break;
        CHECK(ss.size <= c.split_bytes);
        short_files += ss.size < c.split_bytes;
        CHECK_EQ(decode_file(path), i);
        files++;
    }
    CHECK_EQ(files, st.files);
    CHECK(files >= 6);
    CHECK(short_files >= 2);     /* the one cut by sf_log_rotate, and the last */
    CHECK_EQ(nrecs, N);
    check_can_seq(0, nrecs, 0);
    printf("rotation: %u files\n", files);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Cyclic mode on a small volume: the oldest files go, the newest data stays intact. */
static void test_cyclic(void)
{
    format(8 << 20, 4096);
    struct sf_log_cfg c = base_cfg(64 * 4096, 4096);
    c.split_bytes = 512 * 1024;
    c.flags = SF_LOG_CYCLIC;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    const uint64_t N = 1000000;     /* 24 MB of records on an 8 MB volume */
    for (uint64_t k = 0; k < N; k++) {
        put_can(k, k, 0);
        if (k % 200 == 0)
            REQUIRE(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK(st.files_deleted > 0);
    CHECK_EQ(st.records_dropped, 0);
    CHECK_EQ(st.last_error, 0);
    nrecs = 0;
    uint32_t first = 0, last = 0;
    struct sf_dir d;
    struct sf_stat ss;
    REQUIRE(sf_opendir(&vol, &d, "/") == 0);
    while (sf_readdir(&d, &ss) == 1) {
        unsigned n;
        if (sscanf(ss.name, "LOG%5u.SFL", &n) == 1) {
            if (!first || n < first)
                first = n;
            if (n > last)
                last = n;
        }
    }
    sf_closedir(&d);
    CHECK_EQ(last, st.files);
    for (uint32_t i = first; i <= last; i++) {
        char path[32];
        snprintf(path, sizeof path, "LOG%05u.SFL", i);
        decode_file(path);       /* every file from the oldest kept to the newest is there */
    }
    REQUIRE(nrecs > 0);
    CHECK_EQ(recs[nrecs - 1].v, N - 1);
    check_can_seq(0, nrecs, recs[0].v);
    printf("cyclic: %llu files written, %llu deleted, kept %u..%u (%zu records)\n",
           (unsigned long long)st.files, (unsigned long long)st.files_deleted, first, last, nrecs);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Flight recorder: one record per ms; pre 1 s, post 1 s; triggers at 5 s, 5.5 s (extends)
 * and 9 s. */
static void test_flight_recorder(void)
{
    format(64 << 20, 4096);
    struct sf_log_cfg c = base_cfg(64 * 1024, 1024);
    const uint64_t MS = 1000000, S = 1000 * MS;
    c.pre_ns = S;
    c.post_ns = S;
    atomic_store(&fake_now, 0);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    struct sf_stat ss;
    for (uint64_t k = 0; k < 10000; k++) {
        atomic_store(&fake_now, k * MS);
        put_can(k, k * MS, 1);
        if (k == 5000)
            CHECK_EQ(sf_log_trigger(&lg, k * MS, "test A"), 0);
        if (k == 5500)
            CHECK_EQ(sf_log_trigger(&lg, k * MS, "test B"), 0);
        if (k == 9000)
            CHECK_EQ(sf_log_trigger(&lg, k * MS, NULL), 0);
        if (k == 4000)
            CHECK(sf_stat(&vol, "LOG00001.SFL", &ss) == 0 && ss.size == 0);  /* prepared */
        CHECK(sf_log_service(&lg) >= 0);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.records_dropped, 0);
    CHECK_EQ(st.triggers, 3);
    CHECK_EQ(st.files, 2);
    uint64_t span = (1024 - 48) / 32;   /* records per block: the window is kept in blocks */
    for (int file = 1; file <= 2; file++) {
        nrecs = 0;
        char path[32];
        snprintf(path, sizeof path, "LOG%05d.SFL", file);
        decode_file(path);
        uint64_t lo = file == 1 ? 4000 : 8000, hi = file == 1 ? 6500 : 9999;
        uint64_t first = UINT64_MAX, last = 0, ann = 0;
        for (size_t i = 0; i < nrecs; i++) {
            if (recs[i].type == SF_REC_ANNOTATION) {
                ann++;
                continue;
            }
            if (recs[i].type != SF_REC_CAN)
                continue;
            if (first == UINT64_MAX)
                first = recs[i].v;
            last = recs[i].v;
        }
        CHECK(first <= lo && first + span >= lo);   /* pre window present, nothing older */
        CHECK(last >= hi && last <= hi + 2);         /* post window (extended) present */
        CHECK_EQ(ann, file == 1 ? 2 : 1);
        check_can_seq(0, nrecs, first);              /* and nothing missing in between */
        printf("flight recorder file %d: frames %llu..%llu\n", file, (unsigned long long)first,
               (unsigned long long)last);
    }
    CHECK(sf_stat(&vol, "LOG00003.SFL", &ss) == SF_ENOENT);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Rotation on a volume whose free space is in many small pieces (as a flight recorder's
 * short trigger files leave it): every file is prepared with one allocation step, more
 * pieces than the stream tracks at once; each must still open (the 33rd once failed with
 * SF_EINVAL) and the frames must all be there. */
static void test_fragmented(void)
{
    format(64 << 20, 4096);
    fragment_volume(&vol, 300, 20000);                 /* 150 holes of 5 clusters */
    char p[32];
    struct sf_log_cfg c = base_cfg(64 * 1024, 1024);
    c.split_bytes = 64 * 1024;
    atomic_store(&fake_now, 0);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    const uint64_t frames = 90000;                     /* about 47 files */
    for (uint64_t k = 0; k < frames; k++) {
        atomic_store(&fake_now, k * 1000);
        put_can(k, k * 1000, 1);
        int r = sf_log_service(&lg);
        CHECK(r >= 0);
        if (r < 0)
            break;
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK_EQ(st.last_error, 0);
    CHECK_EQ(st.records_dropped, 0);
    CHECK(st.files > 33);
    uint64_t seen = 0;
    for (uint64_t file = 1; file <= st.files; file++) {
        nrecs = 0;
        snprintf(p, sizeof p, "LOG%05llu.SFL", (unsigned long long)file);
        decode_file(p);
        for (size_t i = 0; i < nrecs; i++)
            if (recs[i].type == SF_REC_CAN)
                CHECK_EQ(recs[i].v, seen++);           /* in order, none missing */
    }
    CHECK_EQ(seen, frames);
    printf("fragmented volume: %llu files, %llu frames\n", (unsigned long long)st.files,
           (unsigned long long)seen);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Configurations sf_log_open must refuse at once. */
static void test_bad_cfg(void)
{
    format(16 << 20, 4096);
    struct sf_log_cfg c = base_cfg(64 * 1024, 0x80000001u);   /* not a power of two; its */
    CHECK_EQ(sf_log_open(&lg, &c), SF_EINVAL);               /* check once never ended */
    c.block_size = 3000;
    CHECK_EQ(sf_log_open(&lg, &c), SF_EINVAL);
    c.block_size = 1024;
    c.ring_size = 1024;                                       /* fewer than 4 blocks */
    CHECK_EQ(sf_log_open(&lg, &c), SF_EINVAL);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* A checkpoint by time makes the file's size on disk cover the records. */
static void test_checkpoint(void)
{
    format(64 << 20, 4096);
    struct sf_log_cfg c = base_cfg(64 * 4096, 4096);
    atomic_store(&fake_now, 1000);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    for (uint64_t k = 0; k < 1000; k++)
        put_can(k, 1000 + k, 1);
    CHECK(sf_log_service(&lg) >= 0);
    struct sf_stat ss;
    struct sf_log_stats st;
    REQUIRE(sf_stat(&vol, "LOG00001.SFL", &ss) == 0);
    CHECK_EQ(ss.size, 4096);          /* the header's checkpoint only (issue 26 item 3) */
    atomic_store(&fake_now, 1000 + 1100000000ull);
    for (int i = 0; i < 4; i++)
        CHECK(sf_log_service(&lg) >= 0);
    sf_log_get_stats(&lg, &st);
    REQUIRE(sf_stat(&vol, "LOG00001.SFL", &ss) == 0);
    /* 1000 CAN records of 32 bytes, 126 in a 4048-byte payload: 8 blocks, the last one
     * partial, after the header block. */
    CHECK_EQ(ss.size, 9 * 4096);
    CHECK_EQ(st.bytes_durable, ss.size);
    CHECK_EQ(st.records_written, 1000);
    for (uint64_t k = 1000; k < 1100; k++)
        put_can(k, 1000 + k, 1);
    CHECK_EQ(sf_log_close(&lg), 0);
    nrecs = 0;
    decode_file("LOG00001.SFL");
    CHECK_EQ(nrecs, 1100);
    check_can_seq(0, nrecs, 0);
    struct sf_hist hd, hu;
    sf_log_get_hist(&lg, NULL, &hd, &hu);
    CHECK(hd.count >= 2);
    CHECK(hu.count >= 1);
    CHECK(sf_hist_percentile(&hu, 99.9) >= 1000000000ull);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Issue 26 item 3: a cut before a file's first regular checkpoint (the first file, and one
 * a rotation started) loses nothing that reached the device. The header's checkpoint names
 * each file from its first record on, and repair (sf_check, as `streamfat fsck --repair`)
 * attaches the blocks written after it. The RAM disk as the log left it, never closed, is
 * the cut with every write kept. Before: repair removed the files as empty (first cluster
 * 0) and every frame in them was gone. */
static void test_cut_before_checkpoint(void)
{
    format(64 << 20, 4096);
    struct sf_log_cfg c = base_cfg(64 * 4096, 4096);
    c.split_bytes = 40 * 4096;                   /* rotations */
    c.checkpoint_ns = 3600 * 1000000000ull;      /* no regular checkpoint */
    atomic_store(&fake_now, 1000);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    for (uint64_t k = 0; k < 12000; k++) {
        put_can(k, 1000 + k, 1);
        if (k % 100 == 99)
            REQUIRE(sf_log_service(&lg) >= 0);
    }
    for (int i = 0; i < 8; i++)
        REQUIRE(sf_log_service(&lg) >= 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK(st.files >= 3);
    CHECK(st.records_written >= 10000);
    /* The cut: nothing more is written (the log and the volume are left as they are). */
    sf_ssize_t need = sf_check_work_size(&ram.bd);
    REQUIRE(need > 0);
    void *wk = malloc((size_t)need);
    REQUIRE(wk);
    struct sf_check_opts o = { .flags = SF_CHECK_REPAIR, .work = wk, .work_size = (size_t)need };
    struct sf_check_result r;
    int rc = sf_check(&ram.bd, &o, &r);
    CHECK(rc == 0 || rc == 1);
    o.flags = 0;
    CHECK_EQ(sf_check(&ram.bd, &o, &r), 0);
    free(wk);
    struct sf_vol_cfg cfg = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&vol, &cfg) == 0);
    nrecs = 0;
    uint32_t files = 0;
    for (uint32_t i = 1; i <= st.files; i++) {
        char path[32];
        struct sf_stat ss;
        snprintf(path, sizeof path, "LOG%05u.SFL", i);
        if (sf_stat(&vol, path, &ss) || !ss.size)
            continue;
        decode_file(path);
        files++;
    }
    size_t can = 0;
    for (size_t i = 0; i < nrecs; i++)
        can += recs[i].type == SF_REC_CAN;
    if (can < st.records_written)
        fprintf(stderr, "cut before checkpoint: %zu frames back in %u files, %llu written "
                "in %llu files\n", can, files, (unsigned long long)st.records_written,
                (unsigned long long)st.files);
    CHECK_EQ(can, st.records_written);
    check_can_seq(0, nrecs, 0);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Raw mode: the bytes back exactly; a checkpoint covers whole sectors. */
static void test_raw(void)
{
    format(64 << 20, 4096);
    struct sf_log_cfg c = base_cfg(16 * 4096, 4096);
    c.flags = SF_LOG_RAW;
    c.split_bytes = 300000;      /* rotated at a sector boundary: 299,520 bytes */
    atomic_store(&fake_now, 0);
    REQUIRE(sf_log_open(&lg, &c) == 0);
    static uint8_t src[5000];
    uint64_t total = 0, want = 1000003, seed = 1;
    int checked = 0;
    while (total < want) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = 1 + (size_t)(seed >> 33) % sizeof src;
        if (n > want - total)
            n = (size_t)(want - total);
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)((total + i) * 2654435761u >> 13);
        size_t done = 0;
        while (done < n) {
            sf_ssize_t w = sf_log_write_raw(&lg, src + done, n - done);
            REQUIRE(w >= 0);
            done += (size_t)w;
            if (done < n)
                REQUIRE(sf_log_service(&lg) >= 0);
        }
        total += n;
        if (total > 500000 && !checked++) {
            atomic_store(&fake_now, 2000000000ull);
            for (int i = 0; i < 4; i++)      /* the checkpoint completes over a few steps */
                REQUIRE(sf_log_service(&lg) >= 0);
            struct sf_stat ss;
            REQUIRE(sf_stat(&vol, "LOG00002.BIN", &ss) == 0);
            CHECK_EQ(ss.size, ((total - 299520) & ~511ull));
        }
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    uint64_t off = 0;
    for (int i = 1; i <= 4; i++) {
        char path[32];
        snprintf(path, sizeof path, "LOG%05d.BIN", i);
        uint64_t size;
        uint8_t *b = read_all(path, &size);
        CHECK(i == 4 || size == 299520);
        for (uint64_t j = 0; j < size; j++) {
            if (b[j] != (uint8_t)((off + j) * 2654435761u >> 13)) {
                fprintf(stderr, "raw: byte %llu differs\n", (unsigned long long)(off + j));
                CHECK(0);
                break;
            }
        }
        off += size;
        free(b);
    }
    CHECK_EQ(off, want);
    CHECK_EQ(st.bytes_in, want);
    CHECK_EQ(st.bytes_written, want);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Appends per second, one producer, nothing else running (the writer runs between rounds). */
static void test_rate(void)
{
    format(256 << 20, 32768);
    struct sf_log_cfg c = base_cfg(64 << 20, 65536);
    c.clock = real_clock;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    uint64_t k = 0, ns = 0, n = 0;
    uint8_t d[8] = { 0 };
    for (int round = 0; round < 3; round++) {
        uint64_t t0 = real_ns();
        for (uint32_t i = 0; i < 2000000; i++, k++) {
            d[0] = (uint8_t)k;
            if (sf_log_append_can(&lg, 0, k, 0x100, 0, d, 8))
                break;
            n++;
        }
        ns += real_ns() - t0;
        while (sf_log_service(&lg) > 0)
            ;
        struct sf_log_stats st;
        do {
            REQUIRE(sf_log_service(&lg) >= 0);
            sf_log_get_stats(&lg, &st);
        } while (st.ring_used > 65536);
    }
    CHECK_EQ(sf_log_close(&lg), 0);
    printf("append rate, one producer, CAN 8 bytes (32-byte records): %.1f M/s (%.1f ns each)\n",
           n * 1e3 / ns, (double)ns / n);
    /* And with SF_LOG_MEASURE: the latency histogram. */
    format(256 << 20, 32768);
    c = base_cfg(64 << 20, 65536);
    c.clock = real_clock;
    c.flags = SF_LOG_MEASURE;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    for (uint32_t i = 0; i < 2000000; i++)
        sf_log_append_can(&lg, 0, i, 0x100, 0, d, 8);
    struct sf_hist ha;
    sf_log_get_hist(&lg, &ha, NULL, NULL);
    printf("append latency (incl. two clock reads): p50 %llu ns, p99 %llu ns, p99.9 %llu ns, "
           "max %llu ns\n", (unsigned long long)sf_hist_percentile(&ha, 0.5),
           (unsigned long long)sf_hist_percentile(&ha, 0.99),
           (unsigned long long)sf_hist_percentile(&ha, 0.999), (unsigned long long)ha.max_ns);
    CHECK_EQ(ha.count, 2000000);
    CHECK_EQ(sf_log_close(&lg), 0);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Issue 15 item 4: every file names every channel it uses, before using it. 512-byte
 * blocks (a header block holds ~10 names), 16 KiB files, 100 names given at open and 156
 * more named while logging (sf_log_name_channel), a work buffer of two blocks (the names
 * at a file's start take more: written and waited for piecewise). Each file is walked in
 * order: a CAN record's channel must have had its CHANNEL record earlier in the same file,
 * with the one name the channel has. Then the calls' refusals. */
static char names_buf[256][40];

static void walk_named(const char *path, uint32_t *frames)
{
    uint64_t size;
    uint8_t *b = read_all(path, &size);
    uint8_t named[256] = { 0 };
    uint32_t bs = 512;
    REQUIRE(size % bs == 0 && size >= bs);
    for (uint64_t k = 0; k < size / bs; k++) {
        struct sf_block_info bi;
        struct sf_rec r;
        REQUIRE(sf_block_check(b + k * bs, bs, &bi) == 0);
        CHECK_EQ(bi.seq, k);
        uint32_t off = k ? 0 : SF_FILE_HDR;
        while (sf_rec_next(b + k * bs, &bi, &off, &r) == 1) {
            if (r.type == SF_REC_CHANNEL) {
                size_t n = strlen(names_buf[r.channel]);
                CHECK(r.length == n && memcmp(r.body, names_buf[r.channel], n) == 0);
                named[r.channel] = 1;
            } else if (r.type == SF_REC_CAN) {
                CHECK(named[r.channel]);
                (*frames)++;
            }
        }
    }
    free(b);
}

/* Threads: a producer names channels 0..255 as it goes while the writer rotates often; a
 * name whose CHANNEL record lands before a rotation must still reach the next file. */
static _Atomic int names_done;
static _Atomic uint32_t names_loops;    /* the writer's service loops so far */
static uint64_t names_sent;

static void *name_producer(void *arg)
{
    uint8_t data[8] = { 0 };
    uint32_t named = 0;
    (void)arg;
    for (uint64_t k = 0; k < 60000; k++) {
        if (k % 200 == 0 && named < 256) {
            int e;
            while ((e = sf_log_name_channel(&lg, (uint8_t)named, names_buf[named],
                                            real_ns())) == SF_EDROPPED)
                sched_yield();
            if (e)
                abort();
            named++;
            /* Let the writer run past a rotation request (one every 50 loops) before the
             * next name, however the two threads are scheduled: rotations then fall
             * between the names on a loaded machine too. */
            uint32_t seen = atomic_load(&names_loops);
            for (uint64_t t0 = real_ns(); atomic_load(&names_loops) < seen + 60 &&
                                          real_ns() - t0 < 200000000u;)
                sched_yield();
        }
        int e = sf_log_append_can(&lg, (uint8_t)((k * 7919) % named), real_ns(), 0x100, 0,
                                  data, 8);
        if (e == 0)
            names_sent++;
        else if (e != SF_EDROPPED)
            abort();
    }
    atomic_store(&names_done, 1);
    return NULL;
}

static void *name_writer(void *arg)
{
    uint32_t n = 0;
    (void)arg;
    while (!atomic_load(&names_done)) {
        struct sf_log_stats st;
        if (sf_log_service(&lg) < 0)
            abort();
        sf_log_get_stats(&lg, &st);
        if (++n % 50 == 0 && st.files < 80)
            sf_log_rotate(&lg);
        atomic_fetch_add(&names_loops, 1);
    }
    return NULL;
}

static void test_channel_names(void)
{
    static const char *cfg_names[100];
    format(64 << 20, 4096);
    for (int i = 0; i < 256; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "channel-%03d-%s", i, i % 2 ? "x" : "long-name");
        if (i < 100)
            cfg_names[i] = names_buf[i];
    }
    struct sf_log_cfg c = base_cfg(64 * 512, 512);
    c.channel_names = cfg_names;
    c.channel_count = 100;
    c.split_bytes = 16 * 1024;
    c.work_size = 1024;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    uint8_t data[8] = { 0 };
    uint32_t named = 100, sent = 0;
    for (uint64_t k = 0; k < 20000; k++) {
        if (k % 100 == 50 && named < 256) {
            CHECK_EQ(sf_log_name_channel(&lg, (uint8_t)named, names_buf[named], k), 0);
            named++;
        }
        uint8_t ch = (uint8_t)((k * 7919) % named);
        int e = sf_log_append_can(&lg, ch, k, 0x100, 0, data, 8);
        CHECK(e == 0 || e == SF_EDROPPED);
        sent += e == 0;
        if (k % 8 == 0)
            CHECK(sf_log_service(&lg) >= 0);
    }
    /* a name is fixed; the same name again is fine; too long is refused */
    char same[40], longname[512];
    memcpy(same, names_buf[5], sizeof same);
    CHECK_EQ(sf_log_name_channel(&lg, 5, same, 1), 0);
    CHECK_EQ(sf_log_name_channel(&lg, 5, "another", 1), SF_EEXIST);
    memset(longname, 'n', 512 - 96 + 1);
    longname[512 - 96 + 1] = 0;
    CHECK_EQ(sf_log_name_channel(&lg, 7, longname, 1), SF_EINVAL);
    CHECK_EQ(sf_log_close(&lg), 0);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    CHECK(st.files >= 10);
    uint32_t frames = 0;
    for (uint32_t i = 1; i <= st.files; i++) {
        char path[32];
        snprintf(path, sizeof path, "LOG%05u.SFL", i);
        walk_named(path, &frames);
    }
    CHECK_EQ(frames, sent);
    printf("channel names: %llu files, %u frames\n", (unsigned long long)st.files, frames);
    CHECK_EQ(sf_unmount(&vol), 0);

    format(64 << 20, 4096);
    c = base_cfg(256 * 512, 512);
    c.channel_names = NULL;
    c.channel_count = 0;
    c.clock = real_clock;
    REQUIRE(sf_log_open(&lg, &c) == 0);
    pthread_t pt, wt;
    atomic_store(&names_done, 0);
    atomic_store(&names_loops, 0);
    names_sent = 0;
    REQUIRE(pthread_create(&wt, NULL, name_writer, NULL) == 0);
    REQUIRE(pthread_create(&pt, NULL, name_producer, NULL) == 0);
    pthread_join(pt, NULL);
    pthread_join(wt, NULL);
    CHECK_EQ(sf_log_close(&lg), 0);
    sf_log_get_stats(&lg, &st);
    CHECK(st.files >= 10);
    frames = 0;
    for (uint32_t i = 1; i <= st.files; i++) {
        char path[32];
        snprintf(path, sizeof path, "LOG%05u.SFL", i);
        walk_named(path, &frames);
    }
    CHECK_EQ(frames, names_sent);
    printf("channel names, threads: %llu files, %u frames\n", (unsigned long long)st.files,
           frames);
    CHECK_EQ(sf_unmount(&vol), 0);

    /* open refuses a name that cannot fit a header block */
    format(16 << 20, 4096);
    const char *bad[1] = { longname };
    c = base_cfg(64 * 512, 512);
    c.channel_names = bad;
    c.channel_count = 1;
    CHECK_EQ(sf_log_open(&lg, &c), SF_EINVAL);
    CHECK_EQ(sf_unmount(&vol), 0);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(t) do { if (!only || !strcmp(only, #t)) { printf("-- %s\n", #t); fflush(stdout); test_##t(); } } while (0)
    RUN(basic);
    RUN(checkpoint);
    RUN(cut_before_checkpoint);
    RUN(overflow);
    RUN(rotation);
    RUN(channel_names);
    RUN(raw);
    RUN(flight_recorder);
    RUN(cyclic);
    RUN(fragmented);
    RUN(bad_cfg);
    RUN(threads);
    RUN(rate);
    free(disk);
    free(ring);
    free(recs);
    TEST_END();
}
