/* The per-file sector buffer of sf_write (issue 18; include/streamfat/vol.h, SF_FILE_BUF_SIZE).
 *
 *  1. Cost: 1,000 appends of 16 bytes make at most 32 device writes and no read on exFAT
 *     with 32 KiB clusters (calls 2-1,001; issue 18's goal; unbuffered, each was a read and a write of its
 *     sector); on FAT32 with 512-byte clusters (32 new clusters per 1,000 calls, the FAT
 *     sector of 128 written in both FATs) at most 36 and no read, once the file is under way
 *     (calls 1,001-2,000).
 *  2. Contract at a power cut: rows of 1..60 bytes (and now and then 1,500 bytes) with sf_sync
 *     every 64 rows; the fault device cuts the power after every device write N of the
 *     workload, with each policy (keep, drop, tear: unsynced sectors kept, dropped, or each at
 *     random). After the cut the volume mounts, and the file holds at least every byte up to
 *     the last sf_sync that returned 0, and every byte it holds is the byte written there.
 *  3. A seeded random mix of writes (any position and length), reads, seeks, truncates and
 *     syncs on an RDWR file against a model in memory: reads see buffered bytes, writes
 *     around the buffered sector keep it right; the file reads back the same after remount.
 * exFAT (32 KiB clusters) and FAT32 (512-byte clusters on a 40 MiB volume: FAT32's smallest). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"

#define DISK_BYTES (40ull << 20)
#define MAX_RANGES 8192

/* A RAM device that notes the sectors written, so that a run's image is put back from the
 * formatted one by copying only those. */
struct trk {
    struct sf_bdev bd;
    struct sf_rambd ram;
    uint64_t lba[MAX_RANGES];
    uint32_t cnt[MAX_RANGES];
    size_t n;
    int overflow;
};

static int trk_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct trk *t = (struct trk *)bd;
    return t->ram.bd.read(&t->ram.bd, lba, buf, count);
}

static int trk_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct trk *t = (struct trk *)bd;
    if (t->n < MAX_RANGES) {
        t->lba[t->n] = lba;
        t->cnt[t->n++] = count;
    } else {
        t->overflow = 1;
    }
    return t->ram.bd.write(&t->ram.bd, lba, buf, count);
}

static int trk_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static uint8_t *disk, *base;
static struct trk dev;

static void restore(void)
{
    if (dev.overflow) {
        memcpy(disk, base, DISK_BYTES);
    } else {
        for (size_t i = 0; i < dev.n; i++)
            memcpy(disk + dev.lba[i] * 512, base + dev.lba[i] * 512, (size_t)dev.cnt[i] * 512);
    }
    dev.n = 0;
    dev.overflow = 0;
}

static void format(uint8_t type)
{
    static uint8_t mbuf[1 << 20];
    memset(disk, 0xA5, DISK_BYTES);       /* stale data: nothing may read as written by chance */
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = type == SF_FS_FAT32 ? 512 : 32768,
                              .serial = 1, .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&dev.ram.bd, &o, &why) == 0);
    memcpy(base, disk, DISK_BYTES);
    dev.n = 0;
    dev.overflow = 0;
}

static uint8_t cache[16 * 1024] __attribute__((aligned(64)));

static int mount_on(struct sf_vol *v, struct sf_bdev *bd)
{
    struct sf_vol_cfg c = { .bd = bd, .buf = cache, .buf_size = sizeof cache };
    return sf_mount(v, &c);
}

static uint8_t pat(uint64_t off)
{
    return (uint8_t)(off * 131u + (off >> 8) * 7u + 3u);
}

/* ---- 1. cost of small appends ---- */
static void appends(uint8_t type)
{
    static uint8_t ovl[64 * (8 + 512)];
    struct sf_faultbd fb;
    struct sf_vol v;
    struct sf_file f;
    restore();
    REQUIRE(sf_faultbd_init(&fb, &dev.bd, ovl, sizeof ovl) == 0);
    REQUIRE(mount_on(&v, &fb.bd) == 0);
    REQUIRE(sf_open(&v, &f, "ROWS.BIN", SF_O_WRONLY | SF_O_CREAT) == 0);
    struct sf_faultbd_counters c0 = fb.c;
    uint8_t row[16];
    int fat = type == SF_FS_FAT32;
    /* from the second call on: the first allocates the file's first cluster */
    for (int i = 0; i < (fat ? 2000 : 1001); i++) {
        if (i == (fat ? 1000 : 1))
            c0 = fb.c;
        for (int k = 0; k < 16; k++)
            row[k] = pat((uint64_t)i * 16 + (uint64_t)k);
        REQUIRE(sf_write(&f, row, 16) == 16);
    }
    uint64_t w = fb.c.writes - c0.writes, r = fb.c.reads - c0.reads;
    printf("%s: 1,000 appends of 16 bytes: %llu device writes, %llu reads\n",
           type == SF_FS_EXFAT ? "exFAT" : "FAT32", (unsigned long long)w, (unsigned long long)r);
    CHECK(w <= (fat ? 36u : 32u));
    CHECK_EQ(r, 0);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
}

/* ---- 2. power cuts ---- */
#define ROWS 640

/* The workload; returns the bytes made durable by the last sf_sync that returned 0 (or, when
 * the close returned 0, all). *total: bytes handed to sf_write. Stops at the first error. */
static uint64_t workload(struct sf_vol *v, uint64_t *total)
{
    static uint8_t buf[1500];
    struct sf_file f;
    uint64_t off = 0, durable = 0;
    *total = 0;
    if (sf_open(v, &f, "LOG.BIN", SF_O_WRONLY | SF_O_CREAT))
        return 0;
    for (int i = 0; i < ROWS; i++) {
        uint32_t len = i % 200 == 100 ? 1500u : 1u + (uint32_t)(i * 37 % 60);
        for (uint32_t k = 0; k < len; k++)
            buf[k] = pat(off + k);
        if (sf_write(&f, buf, len) != (sf_ssize_t)len)
            goto out;
        off += len;
        *total = off;
        if (i % 64 == 63) {
            if (sf_sync(&f))
                goto out;
            durable = off;
        }
    }
    if (sf_close(&f) == 0)
        return off;
out:
    sf_close(&f);
    return durable;
}

static int verify(uint64_t durable, uint64_t total, uint64_t n, const char *pol)
{
    static uint8_t rb[4096];
    struct sf_vol v;
    struct sf_file f;
    int bad = 0;
    if (mount_on(&v, &dev.bd)) {
        fprintf(stderr, "cut %llu (%s): no mount\n", (unsigned long long)n, pol);
        return 1;
    }
    int err = sf_open(&v, &f, "LOG.BIN", SF_O_RDONLY);
    if (err) {
        if (durable) {
            fprintf(stderr, "cut %llu (%s): file gone (%d)\n", (unsigned long long)n, pol, err);
            bad = 1;
        }
        sf_unmount(&v);
        return bad;
    }
    uint64_t size = sf_fsize(&f), got = 0;
    if (size < durable || size > total) {
        fprintf(stderr, "cut %llu (%s): size %llu, durable %llu, written %llu\n",
                (unsigned long long)n, pol, (unsigned long long)size,
                (unsigned long long)durable, (unsigned long long)total);
        bad = 1;
    }
    sf_ssize_t k;
    while (!bad && (k = sf_read(&f, rb, sizeof rb)) > 0) {
        for (sf_ssize_t i = 0; i < k; i++) {
            if (rb[i] != pat(got + (uint64_t)i)) {
                fprintf(stderr, "cut %llu (%s): byte %llu wrong (size %llu, durable %llu)\n",
                        (unsigned long long)n, pol, (unsigned long long)(got + (uint64_t)i),
                        (unsigned long long)size, (unsigned long long)durable);
                bad = 1;
                break;
            }
        }
        got += (uint64_t)k;
    }
    if (!bad && got != size) {
        fprintf(stderr, "cut %llu (%s): read %llu of %llu\n", (unsigned long long)n, pol,
                (unsigned long long)got, (unsigned long long)size);
        bad = 1;
    }
    sf_close(&f);
    sf_unmount(&v);
    return bad;
}

static void cuts(uint8_t type)
{
    static uint8_t ovl[512 * (8 + 512)];
    static const char *names[] = { "keep", "drop", "tear" };
    struct sf_faultbd fb;
    struct sf_vol v;
    uint64_t total;
    /* reference run: how many device writes the workload makes */
    restore();
    REQUIRE(sf_faultbd_init(&fb, &dev.bd, ovl, sizeof ovl) == 0);
    REQUIRE(mount_on(&v, &fb.bd) == 0);
    fb.c.writes = 0;
    uint64_t all = workload(&v, &total);
    uint64_t writes = fb.c.writes;
    REQUIRE(sf_unmount(&v) == 0);
    CHECK_EQ(all, total);
    CHECK_EQ(verify(all, total, 0, "none"), 0);
    printf("%s: workload of %llu bytes, %llu device writes; cutting after each\n",
           type == SF_FS_EXFAT ? "exFAT" : "FAT32", (unsigned long long)total,
           (unsigned long long)writes);
    int failed = 0;
    for (uint64_t n = 1; n <= writes; n++) {
        for (int p = 0; p < 3; p++) {
            restore();
            REQUIRE(sf_faultbd_init(&fb, &dev.bd, ovl, sizeof ovl) == 0);
            if (p == 2)
                fb.bd.flags |= SF_BDEV_ATOMIC_SECTOR;
            fb.policy = (uint8_t)(p == 0 ? SF_FAULT_KEEP : p == 1 ? SF_FAULT_DROP : SF_FAULT_TEAR);
            fb.seed = (uint32_t)(n * 3 + (uint64_t)p);
            REQUIRE(mount_on(&v, &fb.bd) == 0);
            fb.c.writes = 0;
            fb.cut_after_writes = n;
            uint64_t durable = workload(&v, &total);
            if (!fb.dead)
                sf_faultbd_cut(&fb);           /* the unmount's writes are not waited for */
            failed += verify(durable, total, n, names[p]);
        }
    }
    CHECK_EQ(failed, 0);
}

/* ---- 3. random operations against a model ---- */
#define MODEL_MAX (48u * 1024)

static uint32_t rnd_state;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

static void model(uint8_t type, uint32_t seed)
{
    static uint8_t m[MODEL_MAX + 4096], buf[4096], rb[4096];
    struct sf_vol v;
    struct sf_file f;
    uint64_t size = 0, pos = 0;
    int bad = 0;
    rnd_state = seed;
    restore();
    REQUIRE(mount_on(&v, &dev.bd) == 0);
    REQUIRE(sf_open(&v, &f, "RND.BIN", SF_O_RDWR | SF_O_CREAT) == 0);
    memset(m, 0, sizeof m);
    for (int op = 0; op < 3000 && !bad; op++) {
        uint32_t r = rnd() % 100;
        if (r < 55) {                                  /* write */
            uint32_t len = rnd() % 8 == 0 ? rnd() % 4096 + 1 : rnd() % 80 + 1;
            if (pos + len > MODEL_MAX)
                continue;
            for (uint32_t k = 0; k < len; k++)
                buf[k] = m[pos + k] = (uint8_t)rnd();
            if (sf_write(&f, buf, len) != (sf_ssize_t)len)
                bad = 1;
            pos += len;
            if (pos > size)
                size = pos;          /* a gap before it reads as zeros: m holds zeros there */
        } else if (r < 75) {                           /* read */
            uint32_t len = rnd() % 1500 + 1;
            sf_ssize_t want = pos >= size ? 0 : (sf_ssize_t)(size - pos < len ? size - pos : len);
            sf_ssize_t k = sf_read(&f, rb, len);
            if (k != want || memcmp(rb, m + pos, (size_t)(k > 0 ? k : 0)))
                bad = 2;
            if (k > 0)
                pos += (uint64_t)k;
        } else if (r < 92) {                           /* seek */
            pos = rnd() % (size + 600);
            if (pos > MODEL_MAX)
                pos = MODEL_MAX;
            if (sf_seek(&f, (int64_t)pos, SF_SEEK_SET) != (int64_t)pos)
                bad = 3;
        } else if (r < 96) {                           /* truncate */
            uint64_t ns = rnd() % (size + 2000);
            if (ns > MODEL_MAX)
                ns = MODEL_MAX;
            if (ns < size)
                memset(m + ns, 0, (size_t)(size - ns));
            size = ns;
            if (sf_truncate(&f, ns))
                bad = 4;
        } else if (sf_sync(&f)) {
            bad = 5;
        }
        if (!bad && sf_fsize(&f) != size)
            bad = 6;
        if (bad)
            fprintf(stderr, "model %s seed %u: op %d failed (%d)\n",
                    type == SF_FS_EXFAT ? "exFAT" : "FAT32", seed, op, bad);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    REQUIRE(mount_on(&v, &dev.bd) == 0);
    REQUIRE(sf_open(&v, &f, "RND.BIN", SF_O_RDONLY) == 0);
    CHECK_EQ(sf_fsize(&f), size);
    static uint8_t all[MODEL_MAX + 4096];
    CHECK_EQ(sf_read(&f, all, sizeof all), (sf_ssize_t)size);
    CHECK(memcmp(all, m, (size_t)size) == 0);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
}

int main(void)
{
    disk = malloc(DISK_BYTES);
    base = malloc(DISK_BYTES);
    REQUIRE(disk && base);
    REQUIRE(sf_rambd_init(&dev.ram, disk, 512, DISK_BYTES / 512) == 0);
    dev.bd = dev.ram.bd;
    dev.bd.read = trk_read;
    dev.bd.write = trk_write;
    dev.bd.flush = trk_flush;
    dev.bd.trim = NULL;
    static const uint8_t types[] = { SF_FS_EXFAT, SF_FS_FAT32 };
    for (int t = 0; t < 2; t++) {
        format(types[t]);
        appends(types[t]);
        cuts(types[t]);
        for (uint32_t seed = 1; seed <= 4; seed++)
            model(types[t], seed);
    }
    free(disk);
    free(base);
    TEST_END();
}
