/* Asynchronous file device (aiobd.h) on regular files, through both backends: io_uring
 * (when this machine can set up a ring: probed here, and then the device must choose it)
 * and the threads fallback, forced with SF_AIOBD_NO_URING. For 512-byte sectors, 4096-byte
 * sectors and 4096 with O_DIRECT, at queue depths 1, 4 and 32: many writes of mixed sizes
 * at shuffled LBAs, submitted all at once (so most wait in the device's FIFO), polled back
 * exactly once each, then read back synchronously and asynchronously; FLUSH ordering;
 * flush draining the queue; refusals at submit; a read past a shrunken file; polls with
 * nothing in flight. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SF_HAVE_URING
#include <liburing.h>
#endif

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/aiobd.h"

#define DEV_BYTES (8u << 20)
#define MAX_BIOS 4096

static char dir[256];
static uint32_t rng = 12345;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static const char *tpath(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed | 1;
    for (size_t i = 0; i < n; i += 4) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        memcpy(p + i, &x, 4);
    }
}

/* Does io_uring work here? Decided independently of the library. */
static int uring_probe(void)
{
#ifdef SF_HAVE_URING
    struct io_uring r;
    if (io_uring_queue_init(4, &r, 0) == 0) {
        io_uring_queue_exit(&r);
        return 1;
    }
#endif
    return 0;
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(4096, n);
    REQUIRE(p != NULL);
    return p;
}

/* Poll with wait until `want` requests came back; each exactly once (user = index).
 * Returns the order of completion in order[] (if not NULL). */
static void collect(struct sf_bdev *bd, struct sf_bio *bios, unsigned want, unsigned *order,
                    uint8_t *seen)
{
    struct sf_bio *out[16];
    unsigned got = 0, polls = 0;

    /* Poll sizes from a counter, not rnd(): the number of polls depends on timing, and
     * the extents drawn next must not. */
    while (got < want) {
        int n = sf_bdev_poll(bd, out, 1 + (polls++ * 7) % 16, 1);
        REQUIRE(n > 0);
        for (int i = 0; i < n; i++) {
            unsigned k = (unsigned)(uintptr_t)out[i]->user;
            REQUIRE(out[i] == &bios[k]);
            CHECK_EQ(seen[k], 0);
            seen[k] = 1;
            if (order)
                order[got] = k;
            got++;
        }
    }
}

/* Split the device into extents of mixed sizes and shuffle them. */
static unsigned make_extents(struct sf_bio *bios, uint64_t sectors, uint32_t ss)
{
    unsigned n = 0;
    uint64_t lba = 0;
    uint32_t per_page = ss < 4096 ? 4096 / ss : 1;  /* keep O_DIRECT-sized steps harmless */

    while (lba < sectors && n < MAX_BIOS) {
        uint32_t c;
        switch (rnd() % 4) {
        case 0: c = 1; break;
        case 1: c = 1 + rnd() % 8; break;
        case 2: c = 8 + rnd() % 64; break;
        default: c = (1u << 20) / ss; break;               /* 1 MiB */
        }
        c = (c + per_page - 1) / per_page * per_page;
        if (c > sectors - lba)
            c = (uint32_t)(sectors - lba);
        memset(&bios[n], 0, sizeof(bios[n]));
        bios[n].lba = lba;
        bios[n].count = c;
        lba += c;
        n++;
    }
    for (unsigned i = n - 1; i > 0; i--) {
        unsigned j = rnd() % (i + 1);
        struct sf_bio t = bios[i];
        bios[i] = bios[j];
        bios[j] = t;
    }
    for (unsigned i = 0; i < n; i++)
        bios[i].user = (void *)(uintptr_t)i;
    return n;
}

struct cfg {
    uint32_t ss;
    int direct;
    unsigned depth;
    unsigned flags;
};

static int open_dev(struct sf_filebd *f, struct sf_aiobd *a, const struct cfg *c,
                    const char *name, int *expect_uring)
{
    unsigned ff = SF_FILEBD_CREATE | (c->direct ? SF_FILEBD_DIRECT : 0);
    int err;

    unlink(tpath(name));
    err = sf_filebd_open(f, tpath(name), ff, c->ss, DEV_BYTES);
    if (err == SF_ENOTSUP || (err == SF_EINVAL && c->direct)) {
        printf("O_DIRECT with %u-byte sectors not supported in %s: skipped\n", c->ss, dir);
        return 1;
    }
    REQUIRE(err == 0);
    REQUIRE(sf_aiobd_init(a, f, c->depth, c->flags) == 0);
    if (c->flags & SF_AIOBD_NO_URING) {
        CHECK(strcmp(a->backend, "threads") == 0);
        CHECK_EQ(a->uring_status, SF_ENOTSUP);
    } else if (*expect_uring) {
        if (strcmp(a->backend, "io_uring") != 0) {
            fprintf(stderr, "io_uring works here (probe) but the device chose %s (status %d)\n",
                    a->backend, a->uring_status);
            CHECK(0);
        }
    }
    CHECK_EQ(a->bd.sector_size, c->ss);
    CHECK_EQ(a->bd.sector_count, DEV_BYTES / c->ss);
    CHECK_EQ(a->bd.mem_align, c->direct ? 4096 : 1);
    return 0;
}

/* Writes everywhere in shuffled order, all submitted before the first poll. */
static void test_rw(const struct cfg *c, int *expect_uring)
{
    struct sf_filebd f;
    struct sf_aiobd a;
    static struct sf_bio bios[MAX_BIOS];
    static uint8_t seen[MAX_BIOS];
    struct sf_bio *out[4];
    uint8_t *src = xalloc(DEV_BYTES), *dst = xalloc(DEV_BYTES);
    uint64_t sectors = DEV_BYTES / c->ss;
    unsigned n;

    if (open_dev(&f, &a, c, "rw.img", expect_uring)) {
        free(src);
        free(dst);
        return;
    }
    printf("rw: backend=%s ss=%u direct=%d depth=%u\n", a.backend, c->ss, c->direct, c->depth);

    CHECK_EQ(sf_bdev_poll(&a.bd, out, 4, 0), 0);      /* nothing in flight */
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 4, 1), 0);
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 0, 1), 0);

    fill(src, DEV_BYTES, rnd());
    n = make_extents(bios, sectors, c->ss);
    memset(seen, 0, n);
    for (unsigned i = 0; i < n; i++) {
        bios[i].op = SF_BIO_WRITE;
        bios[i].buf = src + bios[i].lba * c->ss;
        bios[i].result = 1;
        REQUIRE(sf_bdev_submit(&a.bd, &bios[i]) == 0);
    }
    collect(&a.bd, bios, n, NULL, seen);
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(bios[i].result, 0);
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 4, 1), 0);

    memset(dst, 0, DEV_BYTES);
    CHECK_EQ(sf_bdev_read(&a.bd, 0, dst, (uint32_t)sectors), 0);
    CHECK(memcmp(src, dst, DEV_BYTES) == 0);

    /* the same back through asynchronous reads, with a bounded number in flight */
    memset(dst, 0, DEV_BYTES);
    n = make_extents(bios, sectors, c->ss);
    memset(seen, 0, n);
    {
        unsigned next = 0, got = 0, limit = 2 * c->depth;
        while (got < n) {
            while (next < n && next - got < limit) {
                bios[next].op = SF_BIO_READ;
                bios[next].buf = dst + bios[next].lba * c->ss;
                REQUIRE(sf_bdev_submit(&a.bd, &bios[next]) == 0);
                next++;
            }
            int k = sf_bdev_poll(&a.bd, out, 4, 1);
            REQUIRE(k > 0);
            for (int i = 0; i < k; i++) {
                unsigned idx = (unsigned)(uintptr_t)out[i]->user;
                CHECK_EQ(seen[idx], 0);
                seen[idx] = 1;
                CHECK_EQ(out[i]->result, 0);
            }
            got += (unsigned)k;
        }
    }
    CHECK(memcmp(src, dst, DEV_BYTES) == 0);

    CHECK_EQ(sf_aiobd_close(&a), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    /* and from a fresh open, as the file holds it */
    REQUIRE(sf_filebd_open(&f, tpath("rw.img"), 0, c->ss, 0) == 0);
    memset(dst, 0, DEV_BYTES);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, dst, (uint32_t)sectors), 0);
    CHECK(memcmp(src, dst, DEV_BYTES) == 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    unlink(tpath("rw.img"));
    free(src);
    free(dst);
}

/* A FLUSH comes back after every write submitted before it; the synchronous flush leaves
 * nothing in flight; refusals at submit; a failing read; close with work in flight. */
static void test_flush_and_errors(const struct cfg *c, int *expect_uring)
{
    struct sf_filebd f;
    struct sf_aiobd a;
    static struct sf_bio bios[64];
    uint8_t seen[64];
    unsigned order[64];
    struct sf_bio *out[64];
    uint32_t ss = c->ss, per = 64 * 1024 / ss;
    uint8_t *buf = xalloc(64 * 64 * 1024);
    uint64_t sectors = DEV_BYTES / ss;
    int pos_flush = -1;

    if (open_dev(&f, &a, c, "fl.img", expect_uring)) {
        free(buf);
        return;
    }
    fill(buf, 64 * 64 * 1024, rnd());

    /* 20 writes, FLUSH, 20 writes, FLUSH */
    memset(bios, 0, sizeof(bios));
    memset(seen, 0, sizeof(seen));
    for (unsigned i = 0; i < 42; i++) {
        bios[i].user = (void *)(uintptr_t)i;
        if (i == 20 || i == 41) {
            bios[i].op = SF_BIO_FLUSH;
        } else {
            bios[i].op = SF_BIO_WRITE;
            bios[i].lba = (uint64_t)i * per;
            bios[i].count = per;
            bios[i].buf = buf + (size_t)i * per * ss;
        }
        bios[i].result = 1;
        REQUIRE(sf_bdev_submit(&a.bd, &bios[i]) == 0);
    }
    collect(&a.bd, bios, 42, order, seen);
    for (unsigned i = 0; i < 42; i++) {
        CHECK_EQ(bios[i].result, 0);
        if (order[i] == 20)
            pos_flush = (int)i;
    }
    REQUIRE(pos_flush >= 0);
    for (int i = pos_flush + 1; i < 42; i++)
        CHECK(order[i] > 20);           /* nothing before the flush comes back after it */
    CHECK_EQ(order[41], 41);            /* the last flush comes back last */

    /* sf_bdev_flush waits for the requests in flight; their completions stay for poll */
    for (unsigned i = 0; i < 40; i++) {
        bios[i].op = SF_BIO_WRITE;
        bios[i].lba = sectors / 2 + (uint64_t)i * per;
        bios[i].count = per;
        bios[i].buf = buf + (size_t)i * per * ss;
        bios[i].result = 1;
        REQUIRE(sf_bdev_submit(&a.bd, &bios[i]) == 0);
    }
    CHECK_EQ(sf_bdev_flush(&a.bd), 0);
    {
        int k = sf_bdev_poll(&a.bd, out, 64, 0);
        CHECK_EQ(k, 40);
        for (int i = 0; i < k; i++)
            CHECK_EQ(out[i]->result, 0);
    }
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 64, 1), 0);

    /* refused at submit, and then not in flight */
    bios[0].op = SF_BIO_WRITE;
    bios[0].lba = sectors - 1;
    bios[0].count = 2;
    bios[0].buf = buf;
    CHECK_EQ(sf_bdev_submit(&a.bd, &bios[0]), SF_EINVAL);          /* beyond the device */
    bios[0].lba = sectors;
    bios[0].count = 1;
    CHECK_EQ(sf_bdev_submit(&a.bd, &bios[0]), SF_EINVAL);
    bios[0].lba = 0;
    bios[0].count = 0;
    CHECK_EQ(sf_bdev_submit(&a.bd, &bios[0]), SF_EINVAL);
    bios[0].count = 1;
    bios[0].op = 7;
    CHECK_EQ(sf_bdev_submit(&a.bd, &bios[0]), SF_EINVAL);
    bios[0].op = SF_BIO_WRITE;
    if (c->direct) {
        bios[0].buf = buf + 512;
        CHECK_EQ(sf_bdev_submit(&a.bd, &bios[0]), SF_EINVAL);      /* misaligned */
    }
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 64, 1), 0);

    /* a read past the end of a file that shrank: the error comes back in the bio */
    REQUIRE(ftruncate(f.fd, (off_t)(DEV_BYTES / 2)) == 0);
    memset(&bios[0], 0, sizeof(bios[0]));
    bios[0].op = SF_BIO_READ;
    bios[0].lba = sectors - 4;
    bios[0].count = 4;
    bios[0].buf = buf;
    bios[0].result = 1;
    REQUIRE(sf_bdev_submit(&a.bd, &bios[0]) == 0);
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 64, 1), 1);
    CHECK(out[0] == &bios[0]);
    CHECK_EQ(bios[0].result, SF_EIO);
    /* across the new end: a short read, then nothing where the rest should continue */
    bios[0].lba = sectors / 2 - 2 * per;
    bios[0].count = 4 * per;
    bios[0].result = 1;
    REQUIRE(sf_bdev_submit(&a.bd, &bios[0]) == 0);
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 64, 1), 1);
    CHECK_EQ(bios[0].result, SF_EIO);

    /* close while requests are in flight: it waits for them */
    for (unsigned i = 0; i < 16; i++) {
        memset(&bios[i], 0, sizeof(bios[i]));
        bios[i].op = SF_BIO_WRITE;
        bios[i].lba = (uint64_t)i * per;
        bios[i].count = per;
        bios[i].buf = buf + (size_t)i * per * ss;
        bios[i].result = 1;
        REQUIRE(sf_bdev_submit(&a.bd, &bios[i]) == 0);
    }
    CHECK_EQ(sf_aiobd_close(&a), 0);
    for (unsigned i = 0; i < 16; i++)
        CHECK_EQ(bios[i].result, 0);
    CHECK_EQ(sf_aiobd_close(&a), SF_EINVAL);
    CHECK_EQ(sf_filebd_close(&f), 0);
    unlink(tpath("fl.img"));
    free(buf);
}

static void test_readonly(unsigned flags)
{
    struct sf_filebd f;
    struct sf_aiobd a;
    struct sf_bio bio, *out[2];
    uint8_t *buf = xalloc(4096);
    int fd = open(tpath("ro.img"), O_CREAT | O_TRUNC | O_WRONLY, 0644);

    REQUIRE(fd >= 0);
    fill(buf, 4096, 99);
    REQUIRE(write(fd, buf, 4096) == 4096);
    close(fd);
    REQUIRE(sf_filebd_open(&f, tpath("ro.img"), SF_FILEBD_RDONLY, 512, 0) == 0);
    REQUIRE(sf_aiobd_init(&a, &f, 4, flags) == 0);
    CHECK(a.bd.flags & SF_BDEV_READONLY);
    memset(&bio, 0, sizeof(bio));
    bio.op = SF_BIO_WRITE;
    bio.lba = 0;
    bio.count = 1;
    bio.buf = buf;
    CHECK_EQ(sf_bdev_submit(&a.bd, &bio), SF_EROFS);
    CHECK_EQ(sf_bdev_write(&a.bd, 0, buf, 1), SF_EROFS);
    bio.op = SF_BIO_READ;
    bio.count = 8;
    bio.result = 1;
    memset(buf, 0, 4096);
    CHECK_EQ(sf_bdev_submit(&a.bd, &bio), 0);
    CHECK_EQ(sf_bdev_poll(&a.bd, out, 2, 1), 1);
    CHECK_EQ(bio.result, 0);
    {
        uint8_t want[4096];
        fill(want, 4096, 99);
        CHECK(memcmp(buf, want, 4096) == 0);
    }
    CHECK_EQ(sf_aiobd_close(&a), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    unlink(tpath("ro.img"));
    free(buf);
}

static void test_init_args(void)
{
    struct sf_filebd f;
    struct sf_aiobd a;

    REQUIRE(sf_filebd_open(&f, tpath("args.img"), SF_FILEBD_CREATE, 512, 1 << 20) == 0);
    CHECK_EQ(sf_aiobd_init(&a, &f, 0, 0), SF_EINVAL);
    CHECK_EQ(sf_aiobd_init(&a, &f, SF_AIOBD_MAX_DEPTH + 1, 0), SF_EINVAL);
    CHECK_EQ(sf_aiobd_init(&a, &f, 4, 0x80), SF_EINVAL);
    CHECK_EQ(sf_aiobd_init(&a, NULL, 4, 0), SF_EINVAL);
    CHECK_EQ(sf_aiobd_init(NULL, &f, 4, 0), SF_EINVAL);
    CHECK_EQ(sf_aiobd_init(&a, &f, SF_AIOBD_MAX_DEPTH, 0), 0);
    CHECK_EQ(sf_aiobd_close(&a), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    unlink(tpath("args.img"));
}

int main(void)
{
    static const struct { uint32_t ss; int direct; } geo[] = {
        { 512, 0 }, { 4096, 0 }, { 4096, 1 },
    };
    static const unsigned depths[] = { 1, 4, 32 };
    const char *tmp = getenv("TMPDIR");
    int have_uring = uring_probe();

    snprintf(dir, sizeof(dir), "%s/sf_aiobd_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
#ifdef SF_HAVE_URING
    printf("built with liburing; io_uring %s on this kernel\n",
           have_uring ? "works" : "is unavailable");
#else
    printf("built without liburing: threads backend only\n");
#endif

    test_init_args();
    for (unsigned b = 0; b < 2; b++) {
        unsigned flags = b ? SF_AIOBD_NO_URING : 0;
        printf("== %s\n", b ? "forced fallback (SF_AIOBD_NO_URING)" : "default backend");
        for (unsigned g = 0; g < sizeof(geo) / sizeof(geo[0]); g++)
            for (unsigned d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
                struct cfg c = { geo[g].ss, geo[g].direct, depths[d], flags };
                test_rw(&c, &have_uring);
                test_flush_and_errors(&c, &have_uring);
            }
        test_readonly(flags);
    }
    rmdir(dir);
    TEST_END();
}
