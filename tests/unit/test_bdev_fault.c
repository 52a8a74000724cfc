/* Fault-injection device: counters, injected EIO, power cuts under each policy, overlay
 * overflow, the window device on top of it, and the asynchronous paths (fallback and a
 * window over a natively asynchronous device). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/bdev.h"

#define SS 512
#define N 128
#define ENT (8 + SS)
#define OVL_MEM(n) ((n) * ENT)       /* n overlay entries */

static uint8_t disk[SS * N];
static uint8_t ovl[OVL_MEM(64)];

static void fill(uint8_t *p, size_t n, uint8_t v)
{
    memset(p, v, n);
}

/* A fresh RAM disk filled with 0xAA and a fault device over it with `cap` overlay sectors. */
static void setup(struct sf_rambd *r, struct sf_faultbd *f, size_t cap)
{
    memset(disk, 0xAA, sizeof(disk));
    REQUIRE(sf_rambd_init(r, disk, SS, N) == 0);
    REQUIRE(sf_faultbd_init(f, &r->bd, cap ? ovl : NULL, cap ? OVL_MEM(cap) : 0) == 0);
    REQUIRE(f->ovl_cap == cap);
}

static int sector_is(const uint8_t *p, uint8_t v)
{
    for (size_t i = 0; i < SS; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void test_init_and_counters(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS * 4], b[SS * 4];

    memset(disk, 0, sizeof(disk));
    REQUIRE(sf_rambd_init(&r, disk, SS, N) == 0);
    CHECK_EQ(sf_faultbd_init(&f, NULL, ovl, sizeof(ovl)), SF_EINVAL);
    CHECK_EQ(sf_faultbd_init(&f, &r.bd, NULL, 100), SF_EINVAL);
    CHECK_EQ(sf_faultbd_init(&f, &r.bd, ovl, OVL_MEM(3) + ENT - 1), 0);
    CHECK_EQ(f.ovl_cap, 3);
    CHECK_EQ(f.bd.sector_size, SS);
    CHECK_EQ(f.bd.sector_count, N);
    CHECK(f.eio_read_lba == UINT64_MAX && f.eio_write_lba == UINT64_MAX);
    CHECK(f.eio_after_writes == 0 && f.cut_after_writes == 0 && !f.dead);

    setup(&r, &f, 16);
    fill(a, sizeof(a), 1);
    CHECK_EQ(sf_bdev_write(&f.bd, 10, a, 2), 0);     /* first write: a jump */
    CHECK_EQ(sf_bdev_write(&f.bd, 12, a, 4), 0);     /* seq */
    CHECK_EQ(sf_bdev_write(&f.bd, 16, a, 1), 0);     /* seq */
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 1), 0);      /* jump */
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 1), 0);      /* jump (rewrite) */
    CHECK_EQ(sf_bdev_write(&f.bd, 4, a, 1), 0);      /* seq */
    CHECK_EQ(sf_bdev_read(&f.bd, 10, b, 4), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, b, 1), 0);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    CHECK_EQ(sf_bdev_trim(&f.bd, 0, 8), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, b, 0), SF_EINVAL); /* refused by the wrapper: not counted */
    CHECK_EQ(f.c.writes, 6);
    CHECK_EQ(f.c.seq_writes, 3);
    CHECK_EQ(f.c.jumps, 3);
    CHECK_EQ(f.c.sectors_written, 10);
    CHECK_EQ(f.c.reads, 2);
    CHECK_EQ(f.c.sectors_read, 5);
    CHECK_EQ(f.c.flushes, 1);
    CHECK_EQ(f.c.trims, 1);
}

/* Unsynced writes are visible to reads but not on the medium; flush moves them. */
static void test_overlay_basics(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS * 2], b[SS * 4];

    setup(&r, &f, 8);
    fill(a, sizeof(a), 0x11);
    CHECK_EQ(sf_bdev_write(&f.bd, 5, a, 2), 0);
    CHECK_EQ(f.ovl_n, 2);
    CHECK(sector_is(disk + 5 * SS, 0xAA));
    CHECK_EQ(sf_bdev_read(&f.bd, 4, b, 4), 0);
    CHECK(sector_is(b, 0xAA) && sector_is(b + SS, 0x11) && sector_is(b + 2 * SS, 0x11) &&
          sector_is(b + 3 * SS, 0xAA));

    /* a rewrite replaces the entry: reads see the newest data, the overlay does not grow */
    fill(a, SS, 0x22);
    CHECK_EQ(sf_bdev_write(&f.bd, 6, a, 1), 0);
    CHECK_EQ(f.ovl_n, 2);
    CHECK_EQ(sf_bdev_read(&f.bd, 6, b, 1), 0);
    CHECK(sector_is(b, 0x22));

    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    CHECK_EQ(f.ovl_n, 0);
    CHECK(sector_is(disk + 5 * SS, 0x11) && sector_is(disk + 6 * SS, 0x22));

    /* trim forgets unsynced data of trimmed sectors, keeps the rest */
    fill(a, sizeof(a), 0x33);
    CHECK_EQ(sf_bdev_write(&f.bd, 20, a, 2), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 30, a, 1), 0);
    CHECK_EQ(sf_bdev_trim(&f.bd, 20, 2), 0);
    CHECK_EQ(f.ovl_n, 1);
    CHECK_EQ(sf_bdev_read(&f.bd, 30, b, 1), 0);
    CHECK(sector_is(b, 0x33));
    CHECK_EQ(sf_bdev_read(&f.bd, 20, b, 1), 0);
    CHECK(sector_is(b, 0x00));               /* RAM trim zeroes */
}

static void test_eio(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS * 4];

    setup(&r, &f, 8);
    fill(a, sizeof(a), 0x44);
    f.eio_read_lba = 7;
    CHECK_EQ(sf_bdev_read(&f.bd, 5, a, 4), SF_EIO);
    CHECK_EQ(sf_bdev_read(&f.bd, 7, a, 1), SF_EIO);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, a, 4), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 8, a, 4), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 7, a, 1), 0);      /* writes unaffected */
    f.eio_read_lba = UINT64_MAX;

    fill(a, sizeof(a), 0x55);
    f.eio_write_lba = 40;
    CHECK_EQ(sf_bdev_write(&f.bd, 38, a, 3), SF_EIO);
    CHECK_EQ(f.ovl_n, 1);                           /* nothing of the failed write queued */
    CHECK_EQ(sf_bdev_write(&f.bd, 41, a, 3), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 40, a, 1), 0);     /* reads unaffected */
    f.eio_write_lba = UINT64_MAX;

    /* the write numbered 3 (1-based, counting all write calls) and later fail */
    f.c.writes = 0;
    f.eio_after_writes = 3;
    CHECK_EQ(sf_bdev_write(&f.bd, 0, a, 1), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 1, a, 1), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 2, a, 1), SF_EIO);
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 1), SF_EIO);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, a, 1), 0);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    f.eio_after_writes = 0;
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 1), 0);
}

/* Writes 1..3 flushed as 0x01; then writes of 0x02 unsynced; cut after write N. */
static void test_cut_at_n(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS], b[SS];

    setup(&r, &f, 16);
    f.policy = SF_FAULT_DROP;
    f.cut_after_writes = 5;
    fill(a, SS, 1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(sf_bdev_write(&f.bd, (uint64_t)i, a, 1), 0);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    fill(a, SS, 2);
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 1), 0);
    CHECK(!f.dead);
    CHECK_EQ(sf_bdev_write(&f.bd, 4, a, 1), 0);     /* write 5 is accepted, then the cut */
    CHECK(f.dead);
    CHECK_EQ(f.c.writes, 5);
    CHECK_EQ(f.ovl_n, 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 5, a, 1), SF_EIO);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, b, 1), SF_EIO);
    CHECK_EQ(sf_bdev_flush(&f.bd), SF_EIO);
    CHECK_EQ(sf_bdev_trim(&f.bd, 0, 1), SF_EIO);
    CHECK_EQ(f.c.writes, 5);                        /* calls while dead are not counted */

    sf_faultbd_revive(&f);
    CHECK(!f.dead);
    CHECK_EQ(f.cut_after_writes, 0);
    for (uint64_t i = 0; i < 6; i++) {
        CHECK_EQ(sf_bdev_read(&f.bd, i, b, 1), 0);
        CHECK(sector_is(b, i < 3 ? 1 : 0xAA));
    }
    CHECK_EQ(sf_bdev_write(&f.bd, 5, a, 1), 0);    /* alive again */
}

static void test_policies(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS * 4], b[SS];

    /* KEEP: everything accepted survives */
    setup(&r, &f, 16);
    f.policy = SF_FAULT_KEEP;
    fill(a, sizeof(a), 0x5A);
    CHECK_EQ(sf_bdev_write(&f.bd, 8, a, 4), 0);
    sf_faultbd_cut(&f);
    CHECK(f.dead);
    for (int i = 8; i < 12; i++)
        CHECK(sector_is(disk + i * SS, 0x5A));
    sf_faultbd_revive(&f);
    CHECK_EQ(sf_bdev_read(&f.bd, 8, b, 1), 0);
    CHECK(sector_is(b, 0x5A));

    /* DROP: nothing since the last flush survives */
    setup(&r, &f, 16);
    f.policy = SF_FAULT_DROP;
    CHECK_EQ(sf_bdev_write(&f.bd, 8, a, 2), 0);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    fill(a, sizeof(a), 0x6B);
    CHECK_EQ(sf_bdev_write(&f.bd, 9, a, 4), 0);
    sf_faultbd_cut(&f);
    sf_faultbd_revive(&f);
    CHECK(sector_is(disk + 8 * SS, 0x5A) && sector_is(disk + 9 * SS, 0x5A));
    for (int i = 10; i < 13; i++)
        CHECK(sector_is(disk + i * SS, 0xAA));
}

/* Classify each of `n` sectors from lba 0 after a TEAR cut: old 0xAA, new 0xBB, or torn
 * (a prefix of 0xBB, the rest 0xAA). Returns 0 if some sector is none of these. */
static int classify(int n, int *kept, int *dropped, int *torn)
{
    *kept = *dropped = *torn = 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *p = disk + (size_t)i * SS;
        size_t k = 0;
        while (k < SS && p[k] == 0xBB)
            k++;
        for (size_t j = k; j < SS; j++)
            if (p[j] != 0xAA)
                return 0;
        if (k == SS)
            (*kept)++;
        else if (k == 0)
            (*dropped)++;
        else
            (*torn)++;
    }
    return 1;
}

static void tear_run(uint32_t seed, int atomic, uint8_t *result)
{
    static struct sf_rambd r;
    static struct sf_faultbd f;
    uint8_t a[SS * 8];

    setup(&r, &f, 64);
    f.policy = SF_FAULT_TEAR;
    f.seed = seed;
    if (atomic)
        f.bd.flags |= SF_BDEV_ATOMIC_SECTOR;
    fill(a, sizeof(a), 0xBB);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(sf_bdev_write(&f.bd, (uint64_t)i * 8, a, 8), 0);
    sf_faultbd_cut(&f);
    memcpy(result, disk, (size_t)64 * SS);
}

static void test_tear(void)
{
    static uint8_t r1[64 * SS], r2[64 * SS], r3[64 * SS];
    int kept, dropped, torn;

    tear_run(1234, 0, r1);
    CHECK(classify(64, &kept, &dropped, &torn));
    CHECK(kept > 0 && dropped > 0 && torn > 0);
    CHECK_EQ(kept + dropped + torn, 64);
    tear_run(1234, 0, r2);
    CHECK(memcmp(r1, r2, sizeof(r1)) == 0);      /* same seed, same outcome */
    tear_run(99, 0, r3);
    CHECK(memcmp(r1, r3, sizeof(r1)) != 0);
    tear_run(0, 0, r3);                          /* seed 0 is usable too */
    CHECK(classify(64, &kept, &dropped, &torn));
    CHECK(torn > 0);

    tear_run(1234, 1, r3);                       /* atomic sectors: never torn */
    CHECK(classify(64, &kept, &dropped, &torn));
    CHECK_EQ(torn, 0);
    CHECK(kept > 0 && dropped > 0);
}

/* When the overlay is full it is written through (the device flushed by itself). */
static void test_overflow(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    uint8_t a[SS * 8];

    setup(&r, &f, 4);
    f.policy = SF_FAULT_DROP;
    fill(a, sizeof(a), 0x77);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(sf_bdev_write(&f.bd, (uint64_t)i, a, 1), 0);
    CHECK_EQ(f.ovl_n, 4);
    CHECK(sector_is(disk, 0xAA));
    CHECK_EQ(sf_bdev_write(&f.bd, 2, a, 1), 0);  /* a rewrite needs no new entry */
    CHECK_EQ(f.ovl_n, 4);
    CHECK(sector_is(disk, 0xAA));
    CHECK_EQ(sf_bdev_write(&f.bd, 4, a, 1), 0);  /* the fifth sector forces write-through */
    CHECK_EQ(f.ovl_n, 1);
    for (int i = 0; i < 4; i++)
        CHECK(sector_is(disk + i * SS, 0x77));
    CHECK(sector_is(disk + 4 * SS, 0xAA));
    sf_faultbd_cut(&f);
    sf_faultbd_revive(&f);
    CHECK(sector_is(disk + 3 * SS, 0x77) && sector_is(disk + 4 * SS, 0xAA));

    /* one write larger than the overlay: all but the last partial batch reach the medium */
    setup(&r, &f, 4);
    f.policy = SF_FAULT_DROP;
    fill(a, sizeof(a), 0x78);
    CHECK_EQ(sf_bdev_write(&f.bd, 10, a, 6), 0);
    CHECK_EQ(f.ovl_n, 2);
    sf_faultbd_cut(&f);
    for (int i = 10; i < 14; i++)
        CHECK(sector_is(disk + i * SS, 0x78));
    CHECK(sector_is(disk + 14 * SS, 0xAA) && sector_is(disk + 15 * SS, 0xAA));

    /* no overlay memory: every write is durable at once */
    setup(&r, &f, 0);
    f.policy = SF_FAULT_DROP;
    CHECK_EQ(sf_bdev_write(&f.bd, 1, a, 1), 0);
    sf_faultbd_cut(&f);
    CHECK(sector_is(disk + SS, 0x78));
}

static void test_window_on_fault(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    struct sf_bdev_window w;
    uint8_t a[SS * 2], b[SS * 2];

    setup(&r, &f, 8);
    REQUIRE(sf_bdev_window_init(&w, &f.bd, 32, 64) == 0);
    f.eio_write_lba = 40;
    fill(a, sizeof(a), 0x99);
    CHECK_EQ(sf_bdev_write(&w.bd, 8, a, 1), SF_EIO);   /* window LBA 8 = device LBA 40 */
    CHECK_EQ(sf_bdev_write(&w.bd, 9, a, 2), 0);
    CHECK_EQ(sf_bdev_write(&w.bd, 11, a, 1), 0);
    CHECK_EQ(f.c.writes, 3);
    CHECK_EQ(f.c.jumps, 1);                            /* the first, at 40 (failed) */
    CHECK_EQ(f.c.seq_writes, 2);                       /* 41 and 43 */
    CHECK_EQ(sf_bdev_read(&w.bd, 9, b, 2), 0);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    CHECK(sector_is(disk + 41 * SS, 0xAA));             /* still unsynced */
    CHECK_EQ(sf_bdev_flush(&w.bd), 0);
    CHECK(sector_is(disk + 40 * SS, 0xAA) && sector_is(disk + 41 * SS, 0x99) &&
          sector_is(disk + 43 * SS, 0x99) && sector_is(disk + 44 * SS, 0xAA));
    CHECK_EQ(sf_bdev_write(&w.bd, 63, a, 2), SF_EINVAL);
}

/* The synchronous fallback on the fault device: completions in submission order, an
 * injected error arrives as the bio's result, a cut mid-queue fails the rest. */
static void test_async_fault(void)
{
    struct sf_rambd r;
    struct sf_faultbd f;
    struct sf_bio bio[6], *out[8];
    uint8_t a[SS], b[SS];

    setup(&r, &f, 8);
    f.policy = SF_FAULT_KEEP;
    fill(a, SS, 0x12);
    f.eio_write_lba = 2;
    f.cut_after_writes = 4;
    for (int i = 0; i < 5; i++)
        bio[i] = (struct sf_bio){ .lba = (uint64_t)i, .count = 1, .op = SF_BIO_WRITE, .buf = a };
    bio[5] = (struct sf_bio){ .op = SF_BIO_FLUSH };
    for (int i = 0; i < 6; i++)
        CHECK_EQ(sf_bdev_submit(&f.bd, &bio[i]), 0);
    CHECK_EQ(sf_bdev_poll(&f.bd, out, 8, 1), 6);
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == &bio[i]);
    CHECK_EQ(bio[0].result, 0);
    CHECK_EQ(bio[1].result, 0);
    CHECK_EQ(bio[2].result, SF_EIO);
    CHECK_EQ(bio[3].result, 0);      /* write 4: accepted, then the cut (KEEP) */
    CHECK_EQ(bio[4].result, SF_EIO);
    CHECK_EQ(bio[5].result, SF_EIO);
    sf_faultbd_revive(&f);
    CHECK_EQ(sf_bdev_read(&f.bd, 3, b, 1), 0);
    CHECK(sector_is(b, 0x12));
    CHECK_EQ(sf_bdev_read(&f.bd, 4, b, 1), 0);
    CHECK(sector_is(b, 0xAA));
}

/* ---- a natively asynchronous toy device, to check the window's LBA translation ---- */

struct toy {
    struct sf_rambd r;
    struct sf_bio *q;           /* LIFO: completes in reverse order */
};

static int toy_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    struct toy *t = (struct toy *)bd;
    bio->next = t->q;
    t->q = bio;
    return 0;
}

static int toy_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    struct toy *t = (struct toy *)bd;
    unsigned n = 0;
    (void)wait;
    while (n < max && t->q) {
        struct sf_bio *bio = t->q;
        t->q = bio->next;
        if (bio->op == SF_BIO_READ)
            bio->result = bd->read(bd, bio->lba, bio->buf, bio->count);
        else if (bio->op == SF_BIO_WRITE)
            bio->result = bd->write(bd, bio->lba, bio->buf, bio->count);
        else
            bio->result = 0;
        out[n++] = bio;
    }
    return (int)n;
}

static void test_window_async(void)
{
    static struct toy t;
    struct sf_bdev_window w;
    struct sf_bio bio[3], *out[4];
    uint8_t a[SS], b[SS];

    memset(disk, 0, sizeof(disk));
    memset(&t, 0, sizeof(t));
    REQUIRE(sf_rambd_init(&t.r, disk, SS, N) == 0);
    t.r.bd.submit = toy_submit;
    t.r.bd.poll = toy_poll;
    REQUIRE(sf_bdev_window_init(&w, &t.r.bd, 100, 20) == 0);
    CHECK(w.bd.submit != NULL && w.bd.poll != NULL);
    fill(a, SS, 0x3C);
    bio[0] = (struct sf_bio){ .lba = 5, .count = 1, .op = SF_BIO_WRITE, .buf = a };
    bio[1] = (struct sf_bio){ .op = SF_BIO_FLUSH };
    bio[2] = (struct sf_bio){ .lba = 19, .count = 2, .op = SF_BIO_WRITE, .buf = a };
    CHECK_EQ(sf_bdev_submit(&w.bd, &bio[0]), 0);
    CHECK_EQ(sf_bdev_submit(&w.bd, &bio[1]), 0);
    CHECK_EQ(sf_bdev_submit(&w.bd, &bio[2]), SF_EINVAL);  /* past the window */
    CHECK_EQ(bio[2].lba, 19);
    CHECK_EQ(sf_bdev_poll(&w.bd, out, 4, 0), 2);
    CHECK(out[0] == &bio[1] && out[1] == &bio[0]);
    CHECK_EQ(bio[0].lba, 5);                               /* restored for the caller */
    CHECK_EQ(bio[1].lba, 0);
    CHECK(sector_is(disk + 105 * SS, 0x3C));
    bio[0] = (struct sf_bio){ .lba = 5, .count = 1, .op = SF_BIO_READ, .buf = b };
    CHECK_EQ(sf_bdev_submit(&w.bd, &bio[0]), 0);
    CHECK_EQ(sf_bdev_poll(&w.bd, out, 4, 1), 1);
    CHECK_EQ(bio[0].result, 0);
    CHECK(sector_is(b, 0x3C));
}

int main(void)
{
    test_init_and_counters();
    test_overlay_basics();
    test_eio();
    test_cut_at_n();
    test_policies();
    test_tear();
    test_overflow();
    test_window_on_fault();
    test_async_fault();
    test_window_async();
    TEST_END();
}
