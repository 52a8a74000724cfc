/* The simulated SSD (sf_simbd): the model's arithmetic (completion times, the cache filling
 * and draining), the data reaching the lower device, completion order, FLUSH waiting for
 * the writes before it, the in-flight limit, and sleeping synchronous writes. Times are
 * read back from the model's state, which is exact, rather than from the clock, which a
 * loaded machine disturbs; only lower bounds are checked against the clock. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/bdev.h"
#include "streamfat/simbd.h"

#define SS 512
#define N 8192                      /* 4 MiB */
#define MIB (1u << 20)

static uint8_t mem[SS * N];
static uint8_t buf[2 * MIB];

/* ns to move n bytes at bps */
static int64_t ns(uint64_t n, uint64_t bps)
{
    return (int64_t)((long double)n * 1e9L / (long double)bps);
}

static void setup(struct sf_rambd *r, struct sf_simbd *s, struct sf_simbd_state *st,
                  uint64_t cache, uint64_t fast, uint64_t slow, uint64_t idle)
{
    struct sf_simbd_model m = { cache, fast, slow, idle };

    memset(mem, 0, sizeof mem);
    memset(st, 0, sizeof *st);
    REQUIRE(sf_rambd_init(r, mem, SS, N) == 0);
    REQUIRE(sf_simbd_init(s, &r->bd, &m, st) == 0);
}

static void test_init(void)
{
    static struct sf_simbd s;
    struct sf_simbd_state st;
    struct sf_rambd r;
    struct sf_simbd_model m = { 0, 0, 100, 0 };

    REQUIRE(sf_rambd_init(&r, mem, SS, N) == 0);
    CHECK_EQ(sf_simbd_init(&s, &r.bd, &m, &st), SF_EINVAL);      /* fast = 0 */
    m.fast_bps = 100;
    m.slow_bps = 0;
    CHECK_EQ(sf_simbd_init(&s, &r.bd, &m, &st), SF_EINVAL);
    m.slow_bps = 100;
    CHECK_EQ(sf_simbd_init(&s, NULL, &m, &st), SF_EINVAL);
    CHECK_EQ(sf_simbd_init(&s, &r.bd, &m, &st), 0);
    CHECK_EQ(s.bd.sector_size, SS);
    CHECK_EQ(s.bd.sector_count, N);
    CHECK(s.bd.submit && s.bd.poll);
}

/* Four 1 MiB writes queued at once on a device with a 1.5 MiB cache: 1.5 MiB at fast,
 * 2.5 MiB at slow; the second write is split at the boundary. */
static void test_queue_and_cache(void)
{
    static struct sf_simbd s;
    struct sf_simbd_state st;
    struct sf_rambd r;
    struct sf_bio bio[4], flush, *out[8];
    const uint64_t fast = 2000000000, slow = 500000000;   /* 2 GB/s, 500 MB/s */
    int64_t t0, want, prev = 0;
    unsigned i, got = 0;
    int n;

    setup(&r, &s, &st, 3 * MIB / 2, fast, slow, 0);
    for (i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 13 + 1);
    t0 = sf_simbd_now_ns();
    for (i = 0; i < 4; i++) {
        /* the model's time for this write: 1.5 MiB of cache, then slow */
        const int64_t d[4] = { ns(MIB, fast), ns(MIB / 2, fast) + ns(MIB / 2, slow),
                               ns(MIB, slow), ns(MIB, slow) };
        int64_t before, after;

        memset(&bio[i], 0, sizeof bio[i]);
        bio[i].op = SF_BIO_WRITE;
        bio[i].lba = (uint64_t)i * (MIB / SS);
        bio[i].count = MIB / SS;
        bio[i].buf = buf;
        before = sf_simbd_now_ns();
        CHECK_EQ(sf_bdev_submit(&s.bd, &bio[i]), 0);
        after = sf_simbd_now_ns();
        /* It starts at the later of its arrival (the model read the clock between before
         * and after) and the previous write's completion, and takes d[i]: bounds from the
         * clock reads around the call, not a fixed window a preempted test overruns, and
         * exact while the device is still busy with the previous write (the usual case:
         * storing 1 MiB takes less than the 0.52 ms the first write needs). */
        CHECK(st.busy_until_ns >= (before > prev ? before : prev) + d[i]);
        CHECK(st.busy_until_ns <= (after > prev ? after : prev) + d[i]);
        prev = st.busy_until_ns;
    }
    memset(&flush, 0, sizeof flush);
    flush.op = SF_BIO_FLUSH;
    CHECK_EQ(sf_bdev_submit(&s.bd, &flush), 0);
    /* data is with the lower device at once */
    CHECK(memcmp(mem + 3 * MIB, buf, MIB) == 0);
    CHECK_EQ(st.cache_used, 3 * MIB / 2);
    CHECK_EQ(st.bytes_written, 4 * MIB);
    want = ns(3 * MIB / 2, fast) + ns(5 * MIB / 2, slow);
    /* busy_until = first start + the model's durations (each rounded down separately); the
     * upper side is checked write by write above */
    CHECK(st.busy_until_ns - t0 >= want - 4);
    /* nothing is complete at once: the first write needs 0.52 ms */
    n = sf_bdev_poll(&s.bd, out, 8, 0);
    CHECK(n == 0 || sf_simbd_now_ns() - t0 >= ns(MIB, fast));
    got = n > 0 ? (unsigned)n : 0;
    while (got < 5) {
        n = sf_bdev_poll(&s.bd, out + got, 8 - got, 1);
        REQUIRE(n > 0);
        got += (unsigned)n;
    }
    /* in submission order, the flush last, and not before the writes' time */
    for (i = 0; i < 4; i++)
        CHECK(out[i] == &bio[i] && bio[i].result == 0);
    CHECK(out[4] == &flush && flush.result == 0);
    CHECK(sf_simbd_now_ns() >= st.busy_until_ns);
    CHECK(sf_simbd_now_ns() - t0 >= want);
    CHECK_EQ(sf_bdev_poll(&s.bd, out, 8, 1), 0);          /* nothing in flight */
}

/* A full cache drains at idle_flush while the device is idle, and is used again. */
static void test_idle_flush(void)
{
    static struct sf_simbd s;
    struct sf_simbd_state st;
    struct sf_rambd r;
    const uint64_t cache = MIB, idle = 1000000000;        /* drains 1 MB per ms */

    setup(&r, &s, &st, cache, 4000000000u, 1000000000u, idle);
    CHECK_EQ(sf_bdev_write(&s.bd, 0, buf, 2 * MIB / SS), 0);   /* sleeps ~1.3 ms */
    CHECK_EQ(st.cache_used, cache);
    /* at least 2 ms idle: 2 MB drained, the cache is empty when the next write starts */
    {
        int64_t until = sf_simbd_now_ns() + 2000000;
        while (sf_simbd_now_ns() < until)
            ;
    }
    CHECK_EQ(sf_bdev_write(&s.bd, 0, buf, MIB / 2 / SS), 0);
    CHECK_EQ(st.cache_used, MIB / 2);
    /* without idle flush nothing drains */
    setup(&r, &s, &st, cache, 4000000000u, 1000000000u, 0);
    CHECK_EQ(sf_bdev_write(&s.bd, 0, buf, 2 * MIB / SS), 0);
    CHECK_EQ(sf_bdev_write(&s.bd, 0, buf, 1), 0);
    CHECK_EQ(st.cache_used, cache);
}

/* A synchronous write sleeps until its completion time; flush waits for submitted ones. */
static void test_sync(void)
{
    static struct sf_simbd s;
    struct sf_simbd_state st;
    struct sf_rambd r;
    struct sf_bio b, *out;
    int64_t t0;

    setup(&r, &s, &st, 0, 100000000, 100000000, 0);        /* 100 MB/s, no cache */
    t0 = sf_simbd_now_ns();
    CHECK_EQ(sf_bdev_write(&s.bd, 0, buf, MIB / SS), 0);
    CHECK(sf_simbd_now_ns() - t0 >= ns(MIB, 100000000));   /* 10.5 ms */
    CHECK_EQ(st.cache_used, 0);
    memset(&b, 0, sizeof b);
    b.op = SF_BIO_WRITE;
    b.count = MIB / SS;
    b.buf = buf;
    t0 = sf_simbd_now_ns();
    CHECK_EQ(sf_bdev_submit(&s.bd, &b), 0);
    CHECK_EQ(sf_bdev_flush(&s.bd), 0);
    CHECK(sf_simbd_now_ns() - t0 >= ns(MIB, 100000000));
    CHECK_EQ(sf_bdev_poll(&s.bd, &out, 1, 0), 1);           /* its completion stays for poll */
    CHECK(out == &b);
}

/* More than SF_SIMBD_QMAX in flight is refused, not lost. */
static void test_qmax(void)
{
    static struct sf_simbd s;
    static struct sf_bio b[SF_SIMBD_QMAX + 1];
    struct sf_simbd_state st;
    struct sf_rambd r;
    struct sf_bio *out[64];
    unsigned i, got = 0;
    int n;

    setup(&r, &s, &st, 0, 4000000000u, 4000000000u, 0);
    for (i = 0; i <= SF_SIMBD_QMAX; i++) {
        b[i].op = SF_BIO_WRITE;
        b[i].lba = i % N;
        b[i].count = 1;
        b[i].buf = buf;
        CHECK_EQ(sf_bdev_submit(&s.bd, &b[i]), i < SF_SIMBD_QMAX ? 0 : SF_EBUSY);
    }
    while ((n = sf_bdev_poll(&s.bd, out, 64, 1)) > 0) {
        for (i = 0; i < (unsigned)n; i++)
            CHECK(out[i] == &b[got + i]);
        got += (unsigned)n;
    }
    CHECK_EQ(got, SF_SIMBD_QMAX);
}

int main(void)
{
    test_init();
    test_queue_and_cache();
    test_idle_flush();
    test_sync();
    test_qmax();
    TEST_END();
}
