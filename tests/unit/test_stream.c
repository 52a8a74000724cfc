/* The streaming write path on RAM-backed exFAT volumes: byte-exact content for every write
 * size and alignment, synchronous and asynchronous, across cluster and extent boundaries;
 * what reaches the device (metadata writes per checkpoint, no metadata between checkpoints,
 * nothing read); fragmented volumes; the volume filling up; the trimmed allocation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fragment.h"
#include "streamfat/sf.h"
#include "streamfat/stream.h"
#include "fs/fs.h"              /* clus_lba: where the file's data lies */

#define SS 512u
static uint8_t *disk;
static uint64_t disk_sectors;
static struct sf_rambd ram;
static struct sf_faultbd fb;
static struct sf_vol vol;
static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
static uint8_t work[64 * 1024] __attribute__((aligned(64)));

static uint8_t pat(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13); }

static void format_type(uint64_t bytes, uint32_t cluster, uint8_t type)
{
    static uint8_t mbuf[1 << 20];
    free(disk);
    disk_sectors = bytes / SS;
    disk = calloc(disk_sectors, SS);
    REQUIRE(disk);
    REQUIRE(sf_rambd_init(&ram, disk, SS, disk_sectors) == 0);
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = cluster, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    int err = sf_mkfs(&ram.bd, &o, &why);
    if (err)
        fprintf(stderr, "mkfs: %s\n", why);
    REQUIRE(err == 0);
    REQUIRE(sf_faultbd_init(&fb, &ram.bd, NULL, 0) == 0);
}

static void format(uint64_t bytes, uint32_t cluster)
{
    format_type(bytes, cluster, SF_FS_EXFAT);
}

static void mount(void)
{
    struct sf_vol_cfg cfg = { .bd = &fb.bd, .buf = cache, .buf_size = sizeof cache };
    int err = sf_mount(&vol, &cfg);
    if (err)
        fprintf(stderr, "mount: %d %s\n", err, sf_mount_error(&vol));
    REQUIRE(err == 0);
}

/* The file holds pat(0..size-1), and its allocation is exactly what the size needs. */
static void verify(const char *path, uint64_t size)
{
    struct sf_file f;
    struct sf_stat st;
    static uint8_t rb[100000];
    REQUIRE(sf_open(&vol, &f, path, SF_O_RDONLY) == 0);
    CHECK_EQ(sf_fsize(&f), size);
    uint64_t off = 0;
    for (;;) {
        sf_ssize_t n = sf_read(&f, rb, sizeof rb);
        REQUIRE(n >= 0);
        if (!n)
            break;
        for (sf_ssize_t i = 0; i < n; i++) {
            if (rb[i] != pat(off + (uint64_t)i)) {
                fprintf(stderr, "%s: byte %llu differs\n", path, (unsigned long long)(off + (uint64_t)i));
                CHECK(0);
                sf_close(&f);
                return;
            }
        }
        off += (uint64_t)n;
    }
    CHECK_EQ(off, size);
    sf_close(&f);
    REQUIRE(sf_stat(&vol, path, &st) == 0);
    uint64_t cs = vol.info.cluster_size;
    CHECK_EQ(st.alloc_size, (size + cs - 1) / cs * cs);
}

/* Synchronous writes of awkward sizes from awkward addresses. */
static void test_sync_sizes(void)
{
    static const size_t sizes[] = { 1, 7, 511, 512, 513, 4096, 5000, 65536, 65537, 300000 };
    format(64 << 20, 4096);
    mount();
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char path[32];
        struct sf_stream s;
        struct sf_stream_cfg cfg = { .prealloc_step = 1 << 20 };
        snprintf(path, sizeof path, "s%u.bin", k);
        REQUIRE(sf_stream_open(&vol, &s, path, &cfg, work, sizeof work) == 0);
        static uint8_t src[300000 + 1];
        uint64_t total = 0, want = 3 * 1024 * 1024 + 17;
        while (total < want) {
            size_t n = sizes[k];
            if (n > want - total)
                n = (size_t)(want - total);
            for (size_t i = 0; i < n; i++)
                src[1 + i] = pat(total + i);
            REQUIRE(sf_stream_write(&s, src + 1, n) == (sf_ssize_t)n);   /* misaligned */
            total += n;
        }
        CHECK(sf_stream_stats(&s)->extents >= 3);
        CHECK_EQ(sf_stream_close(&s), 0);
        verify(path, want);
    }
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Asynchronous whole-sector requests, queue depth 4; requests come back in order. */
static void test_async(void)
{
    static uint8_t bufs[4][64 * 1024] __attribute__((aligned(64)));
    format(64 << 20, 32768);
    mount();
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .queue_depth = 4, .prealloc_step = 256 * 1024 };
    REQUIRE(sf_stream_open(&vol, &s, "a.bin", &cfg, work, sizeof work) == 0);
    uint64_t off = 0, expect_next = 0;
    unsigned submitted = 0, done = 0, total = 200;
    while (done < total) {
        while (submitted < total && sf_stream_in_flight(&s) < 4) {
            uint8_t *b = bufs[submitted % 4];
            for (size_t i = 0; i < sizeof bufs[0]; i++)
                b[i] = pat(off + i);
            REQUIRE(sf_stream_submit(&s, b, sizeof bufs[0], (void *)(uintptr_t)(submitted + 1)) == 0);
            off += sizeof bufs[0];
            submitted++;
        }
        void *out[4];
        int k = sf_stream_poll(&s, out, 4, 1);
        REQUIRE(k > 0);
        for (int i = 0; i < k; i++)
            CHECK_EQ((uintptr_t)out[i], ++expect_next);
        done += (unsigned)k;
    }
    CHECK_EQ(sf_stream_close(&s), 0);
    verify("a.bin", off);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* Between checkpoints only data is written; a checkpoint costs at most 3 metadata writes
 * (tail sector, entry; allocation happens per step) and nothing is read while streaming. */
static void test_device_ops(void)
{
    static uint8_t b[1 << 20] __attribute__((aligned(64)));
    format(256 << 20, 32768);
    mount();
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .prealloc_step = 64 << 20 };
    REQUIRE(sf_stream_open(&vol, &s, "ops.bin", &cfg, work, sizeof work) == 0);
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = pat(i);
    REQUIRE(sf_stream_write(&s, b, sizeof b) == (sf_ssize_t)sizeof b);  /* first step */
    struct sf_faultbd_counters c0 = fb.c;
    for (int i = 1; i < 32; i++) {
        for (size_t k = 0; k < sizeof b; k++)
            b[k] = pat((uint64_t)i * sizeof b + k);
        REQUIRE(sf_stream_write(&s, b, sizeof b) == (sf_ssize_t)sizeof b);
    }
    CHECK_EQ(fb.c.writes - c0.writes, 31);      /* one request per MiB, nothing else */
    CHECK_EQ(fb.c.reads - c0.reads, 0);
    c0 = fb.c;
    REQUIRE(sf_stream_checkpoint(&s) == 0);
    CHECK(fb.c.writes - c0.writes <= 3);
    CHECK_EQ(fb.c.reads - c0.reads, 0);
    CHECK_EQ(fb.c.flushes - c0.flushes, 2);
    CHECK_EQ(sf_stream_close(&s), 0);
    verify("ops.bin", 32ull << 20);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* ---- a device whose FLUSH requests wait until the test lets them go ----
 * Asynchronous requests complete from poll in submission order, except a FLUSH while
 * `hold` is set: it stays (writes after it complete past it, which the bdev contract allows).
 * Every completed request and synchronous write is logged in order. */
struct slowbd {
    struct sf_bdev bd;
    struct sf_bdev *lower;
    struct sf_bio *q[64];
    unsigned nq;
    int hold;
    char log[4096];        /* 'D' data write done, 'w' synchronous write, 'F' FLUSH done */
    uint64_t log_lba[4096];
    unsigned nlog;
};
static struct slowbd sb;

static void sb_log(char op, uint64_t lba)
{
    REQUIRE(sb.nlog < sizeof sb.log);
    sb.log_lba[sb.nlog] = lba;
    sb.log[sb.nlog++] = op;
}
static int sb_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t n)
{
    (void)bd;
    return sf_bdev_read(sb.lower, lba, buf, n);
}
static int sb_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t n)
{
    (void)bd;
    sb_log('w', lba);
    return sf_bdev_write(sb.lower, lba, buf, n);
}
static int sb_flush(struct sf_bdev *bd)
{
    (void)bd;
    REQUIRE(sb.nq == 0);          /* the synchronous flush comes only when nothing is queued */
    sb_log('F', 0);
    return sf_bdev_flush(sb.lower);
}
static int sb_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    (void)bd;
    REQUIRE(sb.nq < 64);
    sb.q[sb.nq++] = bio;
    return 0;
}
static int sb_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    (void)bd;
    (void)wait;               /* nothing here waits for anything but the test */
    unsigned k = 0, i = 0;
    while (i < sb.nq && k < max) {
        struct sf_bio *b = sb.q[i];
        if (b->op == SF_BIO_FLUSH) {
            if (sb.hold) {
                i++;
                continue;
            }
            for (unsigned j = 0; j < i; j++)   /* everything before it is done already */
                REQUIRE(sb.q[j]->op == SF_BIO_FLUSH);
            b->result = sf_bdev_flush(sb.lower);
            sb_log('F', 0);
        } else {
            REQUIRE(b->op == SF_BIO_WRITE);
            b->result = sf_bdev_write(sb.lower, b->lba, b->buf, b->count);
            sb_log('D', b->lba);
        }
        out[k++] = b;
        memmove(sb.q + i, sb.q + i + 1, (sb.nq - i - 1) * sizeof sb.q[0]);
        sb.nq--;
    }
    return (int)k;
}

/* Mount `vol` over a fresh slow device on top of `fb`. */
static void sb_mount(void)
{
    memset(&sb, 0, sizeof sb);
    sb.lower = &fb.bd;
    sb.bd.sector_size = fb.bd.sector_size;
    sb.bd.sector_count = fb.bd.sector_count;
    sb.bd.align_sectors = 1;
    sb.bd.mem_align = 1;
    sb.bd.read = sb_read;
    sb.bd.write = sb_write;
    sb.bd.flush = sb_flush;
    sb.bd.submit = sb_submit;
    sb.bd.poll = sb_poll;
    struct sf_vol_cfg vc = { .bd = &sb.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&vol, &vc) == 0);
}

/* A checkpoint behind the data: while its FLUSH is held, data requests keep completing and
 * nothing else is written; when the FLUSH completes, the entry (the size at the moment the
 * checkpoint started, not later) is written, then a second FLUSH; only then is the size
 * durable. The entry on disk says so, read through a second, read-only mount. */
static void test_checkpoint_behind(uint8_t type)
{
    static uint8_t bufs[4][64 * 1024] __attribute__((aligned(64)));
    static uint8_t cache2[16 * 1024] __attribute__((aligned(64)));
    format_type(64 << 20, type == SF_FS_FAT32 ? 512 : 4096, type);
    sb_mount();
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .queue_depth = 4, .prealloc_step = 16 << 20,
                                 .checkpoint_bytes = 256 * 1024 };
    REQUIRE(sf_stream_open(&vol, &s, "ck.bin", &cfg, work, sizeof work) == 0);
    sb.hold = 1;
    uint64_t off = 0;
    unsigned submitted = 0, done = 0, start_log = 0;
    void *out[4];
    /* 4 requests (256 KiB) start the checkpoint; 36 more go through while it waits */
    while (submitted < 40) {
        while (submitted < 40 && sf_stream_in_flight(&s) < 4) {
            uint8_t *b = bufs[submitted % 4];
            for (size_t i = 0; i < sizeof bufs[0]; i++)
                b[i] = pat(off + i);
            REQUIRE(sf_stream_submit(&s, b, sizeof bufs[0], b) == 0);
            off += sizeof bufs[0];
            if (++submitted == 4) {
                CHECK(sf_stream_checkpoint_busy(&s));
                start_log = sb.nlog;
            }
        }
        int k = sf_stream_poll(&s, out, 4, 1);
        REQUIRE(k > 0);
        done += (unsigned)k;
    }
    while (sf_stream_in_flight(&s))
        done += (unsigned)sf_stream_poll(&s, out, 4, 1);
    CHECK_EQ(done, 40);                               /* the data never waited */
    CHECK(sf_stream_checkpoint_busy(&s));
    CHECK_EQ(sf_stream_stats(&s)->checkpoints, 0);
    CHECK_EQ(sf_stream_stats(&s)->bytes_durable, 0);
    for (unsigned i = start_log; i < sb.nlog; i++)    /* only data while the FLUSH waits */
        CHECK_EQ(sb.log[i], 'D');
    CHECK_EQ(sb.nlog - start_log, 40);
    CHECK_EQ(sf_stream_checkpoint_start(&s), SF_EBUSY);   /* one at a time */
    /* Let the FLUSH go: the entry follows it, then the second FLUSH. */
    sb.hold = 0;
    unsigned before = sb.nlog;
    for (int i = 0; i < 4 && sf_stream_checkpoint_busy(&s); i++)
        CHECK_EQ(sf_stream_poll(&s, out, 4, 0), 0);
    CHECK(!sf_stream_checkpoint_busy(&s));
    CHECK_EQ(sb.nlog - before, 3);
    CHECK_EQ(sb.log[before], 'F');
    CHECK_EQ(sb.log[before + 1], 'w');
    CHECK_EQ(sb.log[before + 2], 'F');
    CHECK_EQ(sf_stream_stats(&s)->checkpoints, 1);
    CHECK_EQ(sf_stream_stats(&s)->bytes_durable, 256 * 1024);
    /* What a power cut now would leave: the entry says 256 KiB. */
    struct sf_vol v2;
    struct sf_vol_cfg vc2 = { .bd = &fb.bd, .buf = cache2, .buf_size = sizeof cache2,
                              .flags = SF_VOL_RDONLY };
    REQUIRE(sf_mount(&v2, &vc2) == 0);
    struct sf_stat st;
    REQUIRE(sf_stat(&v2, "ck.bin", &st) == 0);
    CHECK_EQ(st.size, 256 * 1024);
    CHECK_EQ(sf_unmount(&v2), 0);
    /* The next one covers the 36 requests that went through meanwhile. */
    CHECK_EQ(sf_stream_checkpoint_start(&s), 0);
    CHECK(sf_stream_checkpoint_busy(&s));
    for (int i = 0; i < 4 && sf_stream_checkpoint_busy(&s); i++)
        sf_stream_poll(&s, out, 4, 0);
    CHECK_EQ(sf_stream_stats(&s)->bytes_durable, off);
    before = sb.nlog;
    CHECK_EQ(sf_stream_checkpoint_start(&s), 0);       /* nothing new: nothing happens */
    CHECK_EQ(sb.nlog, before);
    CHECK(!sf_stream_checkpoint_busy(&s));
    CHECK_EQ(sf_stream_close(&s), 0);
    CHECK_EQ(sf_unmount(&vol), 0);
    REQUIRE(sf_mount(&vol, &(struct sf_vol_cfg){ .bd = &fb.bd, .buf = cache,
                                                 .buf_size = sizeof cache }) == 0);
    verify("ck.bin", off);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* The file holds pat(0..size-1) (after a power cut: its allocation may run longer). */
static void verify_content(const char *path, uint64_t size)
{
    struct sf_file f;
    static uint8_t rb[65536];
    REQUIRE(sf_open(&vol, &f, path, SF_O_RDONLY) == 0);
    CHECK_EQ(sf_fsize(&f), size);
    uint64_t off = 0, bad = 0;
    sf_ssize_t n;
    while ((n = sf_read(&f, rb, sizeof rb)) > 0) {
        for (sf_ssize_t i = 0; i < n; i++)
            bad += rb[i] != pat(off + (uint64_t)i);
        off += (uint64_t)n;
    }
    CHECK_EQ(n, 0);
    CHECK_EQ(off, size);
    CHECK_EQ(bad, 0);
    sf_close(&f);
}

/* Power cuts around a checkpoint behind the data, with every policy for what was not yet
 * flushed: while its first FLUSH waits (point 0), after the entry was written and while the
 * second FLUSH waits (1), after it completed (2). The entry may say the old size (0) or the
 * checkpoint's (256 KiB) - never more - and whatever it says is there; after point 2 it
 * must say 256 KiB. Data submitted after the checkpoint started never shows. */
static void test_checkpoint_behind_cut(uint8_t type)
{
    static uint8_t bufs[4][64 * 1024] __attribute__((aligned(64)));
    static uint8_t ovl[(8 + 512) * 8192];
    for (int point = 0; point < 3; point++) {
        for (uint8_t policy = SF_FAULT_KEEP; policy <= SF_FAULT_TEAR; policy++) {
            format_type(64 << 20, type == SF_FS_FAT32 ? 512 : 4096, type);
            REQUIRE(sf_faultbd_init(&fb, &ram.bd, ovl, sizeof ovl) == 0);
            fb.policy = policy;
            fb.seed = (uint32_t)(point * 3 + policy + 1);
            sb_mount();
            struct sf_stream s;
            struct sf_stream_cfg cfg = { .queue_depth = 4, .prealloc_step = 16 << 20,
                                         .checkpoint_bytes = 256 * 1024 };
            REQUIRE(sf_stream_open(&vol, &s, "cut.bin", &cfg, work, sizeof work) == 0);
            sb.hold = 1;
            uint64_t off = 0;
            void *out[4];
            for (unsigned submitted = 0; submitted < 8;) {
                while (submitted < 8 && sf_stream_in_flight(&s) < 4) {
                    uint8_t *b = bufs[submitted % 4];
                    for (size_t i = 0; i < sizeof bufs[0]; i++)
                        b[i] = pat(off + i);
                    REQUIRE(sf_stream_submit(&s, b, sizeof bufs[0], b) == 0);
                    off += sizeof bufs[0];
                    submitted++;
                }
                REQUIRE(sf_stream_poll(&s, out, 4, 1) > 0);
            }
            while (sf_stream_in_flight(&s))
                REQUIRE(sf_stream_poll(&s, out, 4, 1) > 0);
            REQUIRE(sf_stream_checkpoint_busy(&s));
            if (point >= 1) {
                sb.hold = 0;
                CHECK_EQ(sf_stream_poll(&s, out, 4, 0), 0);   /* FLUSH 1 done: entry, FLUSH 2 */
                sb.hold = 1;
                CHECK_EQ(sb.log[sb.nlog - 2], 'F');
                CHECK_EQ(sb.log[sb.nlog - 1], 'w');
                CHECK(sf_stream_checkpoint_busy(&s));
            }
            if (point == 2) {
                sb.hold = 0;
                CHECK_EQ(sf_stream_poll(&s, out, 4, 0), 0);
                CHECK(!sf_stream_checkpoint_busy(&s));
                CHECK_EQ(sf_stream_stats(&s)->bytes_durable, 256 * 1024);
            }
            sf_faultbd_cut(&fb);         /* the stream and its volume are gone with it */
            struct sf_vol_cfg rc = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
            REQUIRE(sf_mount(&vol, &rc) == 0);
            struct sf_stat st;
            int err = sf_stat(&vol, "cut.bin", &st);
            uint64_t size = err ? 0 : st.size;
            printf("%s cut at point %d, policy %u: %s, size %llu\n",
                   type == SF_FS_EXFAT ? "exFAT" : "FAT32", point, policy,
                   err ? "no file" : "file", (unsigned long long)size);
            CHECK(err == 0 || (err == SF_ENOENT && point < 2));
            if (point == 2)
                CHECK_EQ(size, 256 * 1024);
            else
                CHECK(size == 0 || size == 256 * 1024);
            if (!err)
                verify_content("cut.bin", size);
            CHECK_EQ(sf_unmount(&vol), 0);
        }
    }
}

/* A data write under a checkpoint behind the data fails and the caller has not polled it
 * back yet when the checkpoint's FLUSH completes: the entry must not be written (the size
 * would cover the failed data); the stream fails with the write's error. */
static void test_checkpoint_behind_eio(void)
{
    static uint8_t bufs[4][64 * 1024] __attribute__((aligned(64)));
    static uint8_t cache2[16 * 1024] __attribute__((aligned(64)));
    format_type(64 << 20, 4096, SF_FS_EXFAT);
    sb_mount();
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .queue_depth = 4, .prealloc_step = 16 << 20,
                                 .checkpoint_bytes = 256 * 1024 };
    REQUIRE(sf_stream_open(&vol, &s, "eio.bin", &cfg, work, sizeof work) == 0);
    sb.hold = 1;
    for (unsigned i = 0; i < 4; i++) {
        memset(bufs[i], (int)i + 1, sizeof bufs[0]);
        REQUIRE(sf_stream_submit(&s, bufs[i], sizeof bufs[0], bufs[i]) == 0);
        if (i == 0)        /* the second request's first sector will fail */
            fb.eio_write_lba = clus_lba(&vol, s.f.chain.first) + (64 * 1024) / SS;
    }
    CHECK(sf_stream_checkpoint_busy(&s));
    unsigned nlog0 = sb.nlog;
    sb.hold = 0;
    void *out[4];
    /* the device hands back all four writes and the FLUSH at once: the stream fails */
    CHECK_EQ(sf_stream_poll(&s, out, 1, 0), SF_EIO);
    for (unsigned i = nlog0; i < sb.nlog; i++)
        CHECK(sb.log[i] != 'w');               /* no entry written */
    CHECK(!sf_stream_checkpoint_busy(&s));
    CHECK_EQ(sf_stream_stats(&s)->bytes_durable, 0);
    CHECK_EQ(sf_stream_poll(&s, out, 4, 0), SF_EIO);
    fb.eio_write_lba = UINT64_MAX;
    struct sf_vol v2;
    struct sf_vol_cfg vc2 = { .bd = &fb.bd, .buf = cache2, .buf_size = sizeof cache2,
                              .flags = SF_VOL_RDONLY };
    REQUIRE(sf_mount(&v2, &vc2) == 0);
    struct sf_stat st;
    REQUIRE(sf_stat(&v2, "eio.bin", &st) == 0);
    CHECK_EQ(st.size, 0);
    CHECK_EQ(sf_unmount(&v2), 0);
    CHECK_EQ(sf_stream_close(&s), SF_EIO);
    sf_unmount(&vol);
}

/* A fresh 32 MiB volume, mounted, whose free space starts with 100 holes of 5 clusters. */
static void format_fragmented(void)
{
    format(32 << 20, 4096);
    mount();
    fragment_volume(&vol, 200, 20000);
}

/* A fragmented volume: the stream chains extents; the file reads back. */
static void test_fragmented(void)
{
    static uint8_t b[20000];
    format_fragmented();
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .prealloc_step = 16384 };
    REQUIRE(sf_stream_open(&vol, &s, "frag.bin", &cfg, work, sizeof work) == 0);
    uint64_t total = 0;
    while (total < (8u << 20)) {
        for (size_t i = 0; i < 12345; i++)
            b[i] = pat(total + i);
        REQUIRE(sf_stream_write(&s, b, 12345) == 12345);
        total += 12345;
    }
    CHECK_EQ(sf_stream_close(&s), 0);
    verify("frag.bin", total);
    struct sf_stat st;
    REQUIRE(sf_stat(&vol, "frag.bin", &st) == 0);
    CHECK_EQ(st.contiguous, 0);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* A preallocation at open (expected_size, as the logger asks for every file) on a volume
 * whose free space is in more pieces than the stream tracks ahead of the data
 * (SF_STREAM_EXTENTS): open takes what the table holds instead of failing (it failed with
 * SF_EINVAL once), the writes allocate the rest as they pass extents, and the file reads
 * back. With and without a configured step. */
static void test_fragmented_expected(void)
{
    static uint8_t b[20000];
    for (int with_step = 0; with_step < 2; with_step++) {
        format_fragmented();
        struct sf_stream s;
        struct sf_stream_cfg cfg = { .expected_size = 4u << 20,
                                     .prealloc_step = with_step ? 1u << 20 : 0 };
        int oerr = sf_stream_open(&vol, &s, "fx.bin", &cfg, work, sizeof work);
        CHECK_EQ(oerr, 0);
        if (oerr) {
            sf_unmount(&vol);
            continue;
        }
        CHECK(s.ext_n <= SF_STREAM_EXTENTS);
        uint64_t total = 0;
        while (total < (4u << 20)) {
            for (size_t i = 0; i < 12345; i++)
                b[i] = pat(total + i);
            sf_ssize_t n = sf_stream_write(&s, b, 12345);
            CHECK_EQ(n, 12345);
            if (n != 12345)
                break;
            total += 12345;
        }
        CHECK_EQ(sf_stream_close(&s), 0);
        verify("fx.bin", total);
        CHECK_EQ(sf_unmount(&vol), 0);
    }
}

/* The volume fills up: a clean SF_ENOSPC, the file closed at what was written. */
static void test_full(void)
{
    static uint8_t b[100000];
    format(8 << 20, 4096);
    mount();
    struct sf_stream s;
    REQUIRE(sf_stream_open(&vol, &s, "full.bin", NULL, work, sizeof work) == 0);
    uint64_t total = 0;
    sf_ssize_t n;
    for (;;) {
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = pat(total + i);
        n = sf_stream_write(&s, b, sizeof b);
        if (n < 0)
            break;
        total += (uint64_t)n;
    }
    CHECK_EQ(n, SF_ENOSPC);
    CHECK(total > (6u << 20));
    CHECK_EQ(sf_stream_close(&s), 0);
    verify("full.bin", total);
    CHECK_EQ(sf_unmount(&vol), 0);
}

/* FAT32: each allocation step's FAT sectors go out as one request per FAT copy (the
 * stream lends its work buffer), and nothing else but data between checkpoints. */
static void test_fat32_steps(void)
{
    static uint8_t b[1 << 20] __attribute__((aligned(64)));
    format_type(300ull << 20, 4096, SF_FS_FAT32);
    mount();
    CHECK_EQ(vol.info.fs_type, SF_FS_FAT32);
    struct sf_stream s;
    struct sf_stream_cfg cfg = { .prealloc_step = 8 << 20 };    /* 2048 clusters: 16 sectors */
    REQUIRE(sf_stream_open(&vol, &s, "fat.bin", &cfg, work, sizeof work) == 0);
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = pat(i);
    REQUIRE(sf_stream_write(&s, b, sizeof b) == (sf_ssize_t)sizeof b);  /* first step */
    struct sf_faultbd_counters c0 = fb.c;
    uint64_t steps0 = sf_stream_stats(&s)->extents, data0 = sf_stream_stats(&s)->data_requests;
    for (int i = 1; i < 40; i++) {
        for (size_t k = 0; k < sizeof b; k++)
            b[k] = pat((uint64_t)i * sizeof b + k);
        REQUIRE(sf_stream_write(&s, b, sizeof b) == (sf_ssize_t)sizeof b);
    }
    uint64_t steps = sf_stream_stats(&s)->extents - steps0;
    uint64_t data = sf_stream_stats(&s)->data_requests - data0;
    CHECK(steps >= 4);
    /* per step: one FAT request per copy (2 copies) */
    CHECK_EQ(fb.c.writes - c0.writes - data, steps * 2);
    CHECK_EQ(sf_stream_close(&s), 0);
    verify("fat.bin", 40ull << 20);
    CHECK_EQ(sf_unmount(&vol), 0);
}

int main(void)
{
    test_fat32_steps();
    test_sync_sizes();
    test_async();
    test_device_ops();
    test_fragmented();
    test_fragmented_expected();
    test_full();
    test_checkpoint_behind(SF_FS_EXFAT);
    test_checkpoint_behind(SF_FS_FAT32);
    test_checkpoint_behind_cut(SF_FS_EXFAT);
    test_checkpoint_behind_cut(SF_FS_FAT32);
    test_checkpoint_behind_eio();
    free(disk);
    TEST_END();
}
