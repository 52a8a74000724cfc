/* The transmit schedule (src/log/tx_schedule.c) against a model bus: the hook records
 * what it was given and when, so the tests check periods in the schedule's own time
 * (exact, drift-free), single-shots with delays, many entries, a hook that fails or
 * would block (counted, and the schedule goes on), short and long stalls of the caller. */
#include "check.h"

#include <string.h>

#include "streamfat/tx_schedule.h"

#define MS 1000000ull

struct bus {
    uint64_t now;               /* the model clock: the time of the poll */
    uint32_t n;
    uint32_t id[4096];
    uint8_t ch[4096];
    uint64_t at[4096];
    int fail_every;             /* refuse every k-th frame (0: never) */
    uint32_t calls;
};

static int bus_tx(void *ctx, uint8_t channel, const struct sf_can *f)
{
    struct bus *b = ctx;

    b->calls++;
    if (b->fail_every && b->calls % (uint32_t)b->fail_every == 0)
        return -1;
    if (b->n < 4096) {
        b->id[b->n] = f->id;
        b->ch[b->n] = channel;
        b->at[b->n] = b->now;
        b->n++;
    }
    return 0;
}

static struct sf_tx_entry entry(uint32_t id, uint64_t period, uint64_t delay, uint8_t ch)
{
    struct sf_tx_entry e;

    memset(&e, 0, sizeof e);
    e.frame.id = id;
    e.frame.len = 2;
    e.frame.data[0] = 0x11;
    e.frame.data[1] = 0x22;
    e.period_ns = period;
    e.delay_ns = delay;
    e.channel = ch;
    return e;
}

/* Runs the schedule as a port would: sleep until the returned deadline, plus a jitter
 * (how late the port wakes), then poll. */
static void run(struct sf_tx_schedule *s, struct bus *b, uint64_t start, uint64_t end,
                uint64_t jitter)
{
    uint64_t next;

    sf_tx_start(s, start);
    b->now = start;
    for (;;) {
        next = sf_tx_poll(s, b->now);
        if (next == SF_TX_NONE || next + jitter > end)
            break;
        b->now = next + jitter;
    }
}

/* A late wake-up does not shift the grid: deadline k is start + k * period exactly, and
 * each frame goes at its deadline plus the port's lateness, not later and later. */
static void test_periodic_no_drift(void)
{
    static struct sf_tx_entry mem[4];
    static struct bus b;
    struct sf_tx_schedule s;
    struct sf_tx_entry e = entry(0x123, 10 * MS, 0, 0);

    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 4, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &e) == 0);
    run(&s, &b, 1000 * MS, 2000 * MS, 3 * MS / 10);     /* 0.3 ms late each time */
    CHECK_EQ(b.n, 100);                                  /* 1000..1990 ms */
    for (uint32_t k = 0; k < b.n; k++)
        CHECK_EQ(b.at[k], 1000 * MS + k * 10 * MS + (k ? 3 * MS / 10 : 0));
    CHECK_EQ(s.sent, 100);
    CHECK_EQ(s.failed, 0);
    CHECK_EQ(s.skipped, 0);
}

/* Single-shot with and without a delay: once each, at start + delay. */
static void test_single_shot(void)
{
    static struct sf_tx_entry mem[4];
    static struct bus b;
    struct sf_tx_schedule s;
    struct sf_tx_entry a = entry(0x1, 0, 0, 0), c = entry(0x2, 0, 250 * MS, 1);

    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 4, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &a) == 0 && sf_tx_add(&s, &c) == 0);
    run(&s, &b, 5 * MS, 10000 * MS, 0);
    REQUIRE(b.n == 2);
    CHECK_EQ(b.id[0], 0x1);
    CHECK_EQ(b.at[0], 5 * MS);
    CHECK_EQ(b.id[1], 0x2);
    CHECK_EQ(b.ch[1], 1);
    CHECK_EQ(b.at[1], 255 * MS);
    CHECK(sf_tx_poll(&s, 20000 * MS) == SF_TX_NONE);
    CHECK_EQ(b.n, 2);
}

/* 64 entries on each of two channels, different periods and delays: every entry's frames
 * come exactly on its own grid, and the table refuses entry cap + 1. */
static void test_many_entries(void)
{
    static struct sf_tx_entry mem[128];
    static struct bus b;
    struct sf_tx_schedule s;
    uint32_t count[128] = { 0 };

    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 128, bus_tx, &b);
    for (uint32_t i = 0; i < 128; i++) {
        struct sf_tx_entry e = entry(i, (10 + i % 7) * MS, (i % 5) * MS, (uint8_t)(i / 64));
        REQUIRE(sf_tx_add(&s, &e) == 0);
    }
    {
        struct sf_tx_entry e = entry(999, MS, 0, 0);
        CHECK(sf_tx_add(&s, &e) == -1);
    }
    run(&s, &b, 0, 100 * MS, 0);
    for (uint32_t k = 0; k < b.n; k++) {
        uint32_t i = b.id[k];
        uint64_t period = (10 + i % 7) * MS, delay = (i % 5) * MS;
        REQUIRE(i < 128);
        CHECK_EQ(b.ch[k], i / 64);
        CHECK_EQ(b.at[k], delay + count[i] * period);
        count[i]++;
    }
    for (uint32_t i = 0; i < 128; i++) {
        uint64_t period = (10 + i % 7) * MS, delay = (i % 5) * MS;
        CHECK_EQ(count[i], (100 * MS - delay) / period + 1);     /* deadlines up to 100 ms */
    }
}

/* A hook that fails (or would block) is counted and the schedule keeps its grid. */
static void test_failing_hook(void)
{
    static struct sf_tx_entry mem[2];
    static struct bus b;
    struct sf_tx_schedule s;
    struct sf_tx_entry e = entry(0x7DF, MS, 0, 0);

    memset(&b, 0, sizeof b);
    b.fail_every = 3;
    sf_tx_init(&s, mem, 2, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &e) == 0);
    run(&s, &b, 0, 30 * MS - 1, 0);
    CHECK_EQ(b.calls, 30);
    CHECK_EQ(s.failed, 10);
    CHECK_EQ(s.sent, 20);
    CHECK_EQ(b.n, 20);
    CHECK_EQ(b.at[2], 3 * MS);      /* the 3rd (2 ms) failed; the 4th went on time */
}

/* A caller stalled for many periods sends once, counts the periods passed over, and
 * comes back on the original grid. */
static void test_stalled_caller(void)
{
    static struct sf_tx_entry mem[1];
    static struct bus b;
    struct sf_tx_schedule s;
    struct sf_tx_entry e = entry(0x100, 10 * MS, 0, 0), big = entry(0x200, 5000 * MS, 0, 0);
    uint64_t next;

    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 1, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &e) == 0);
    sf_tx_start(&s, 0);
    b.now = 0;
    CHECK_EQ(sf_tx_poll(&s, 0), 10 * MS);
    b.now = 395 * MS;                               /* deadlines 10..390 ms missed */
    next = sf_tx_poll(&s, b.now);
    CHECK_EQ(next, 400 * MS);
    CHECK_EQ(b.n, 2);
    CHECK_EQ(s.skipped, 38);                        /* 20..390 ms */

    /* a short hiccup (under SF_TX_CATCHUP periods): every missed frame goes, back to back */
    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 1, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &e) == 0);
    sf_tx_start(&s, 0);
    sf_tx_poll(&s, 0);
    b.now = 35 * MS;
    while ((next = sf_tx_poll(&s, b.now)) <= b.now)
        ;
    CHECK_EQ(next, 40 * MS);
    CHECK_EQ(b.n, 4);                               /* 0, and 10 20 30 at 35 ms */
    CHECK_EQ(s.skipped, 0);

    /* a period above 32 bits of nanoseconds takes the counting path */
    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 1, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &big) == 0);
    sf_tx_start(&s, 0);
    sf_tx_poll(&s, 0);
    CHECK_EQ(sf_tx_poll(&s, 200000 * MS), 205000 * MS);   /* 10..200 s passed over */
    CHECK_EQ(s.skipped, 39);
    CHECK_EQ(s.sent, 2);
}

/* Trigger entries: nothing at the start; each trigger of their number sends them once,
 * their delay after it; a trigger while one is armed does not send twice; other numbers
 * and the periodic entries are not touched. */
static void test_trigger(void)
{
    static struct sf_tx_entry mem[4];
    static struct bus b;
    struct sf_tx_schedule s;
    struct sf_tx_entry t1 = entry(0x7E0, 0, 10 * MS, 0), t2 = entry(0x7E1, 0, 0, 0),
                       per = entry(0x100, 100 * MS, 0, 0);

    t1.trigger = 1;
    t2.trigger = 2;
    memset(&b, 0, sizeof b);
    sf_tx_init(&s, mem, 4, bus_tx, &b);
    REQUIRE(sf_tx_add(&s, &t1) == 0 && sf_tx_add(&s, &t2) == 0 && sf_tx_add(&s, &per) == 0);
    sf_tx_start(&s, 0);
    b.now = 0;
    CHECK_EQ(sf_tx_poll(&s, 0), 100 * MS);          /* only the periodic one went */
    CHECK_EQ(b.n, 1);
    CHECK_EQ(b.id[0], 0x100);
    b.now = 50 * MS;
    CHECK_EQ(sf_tx_trigger(&s, 1, 50 * MS), 1);
    CHECK_EQ(sf_tx_trigger(&s, 1, 55 * MS), 0);     /* still armed: coalesced */
    CHECK_EQ(sf_tx_poll(&s, 50 * MS), 60 * MS);
    b.now = 60 * MS;
    CHECK_EQ(sf_tx_poll(&s, 60 * MS), 100 * MS);
    CHECK_EQ(b.n, 2);
    CHECK_EQ(b.id[1], 0x7E0);
    CHECK_EQ(b.at[1], 60 * MS);
    b.now = 70 * MS;
    CHECK_EQ(sf_tx_poll(&s, 70 * MS), 100 * MS);    /* once per trigger */
    CHECK_EQ(b.n, 2);
    CHECK_EQ(sf_tx_trigger(&s, 2, 70 * MS), 1);
    CHECK_EQ(sf_tx_trigger(&s, 1, 70 * MS), 1);     /* sent: armed again */
    sf_tx_poll(&s, 70 * MS);
    b.now = 80 * MS;
    sf_tx_poll(&s, 80 * MS);
    CHECK_EQ(b.n, 4);
    CHECK_EQ(b.id[2], 0x7E1);
    CHECK_EQ(b.id[3], 0x7E0);
    CHECK_EQ(b.at[3], 80 * MS);
    CHECK_EQ(s.triggers, 3);
    CHECK_EQ(s.coalesced, 1);
    CHECK_EQ(sf_tx_trigger(&s, 0, 90 * MS), 0);     /* 0 is no trigger */
}

int main(void)
{
    test_trigger();
    test_periodic_no_drift();
    test_single_shot();
    test_many_entries();
    test_failing_hook();
    test_stalled_caller();
    TEST_END();
}
