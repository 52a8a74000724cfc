/* The poll client (src/log/poll.c) against model ECUs on a model bus, in the model's own
 * time: the client's tx hook puts its frames on the bus (the ECUs see them at once), the
 * ECUs' answers are queued with the times they go out, and the loop feeds them to the
 * client or ticks it, whichever comes first. The ECU speaks ISO-TP from the standard (not
 * from src/proto): single frames, first + consecutive frames that obey the flow control's
 * BS and STmin, and faults on request: a lost or misnumbered consecutive frame, response
 * pending, silence, a late answer, padding bytes, a negative answer. */
#include "check.h"

#include <string.h>

#include "streamfat/poll.h"

#define MS 1000000ull

struct ev {
    uint64_t t;
    uint32_t id;
    uint8_t eff, len;
    uint8_t d[8];
};

struct ecu {
    uint32_t phys, func, resp;  /* request ids it listens to, its answer id */
    uint8_t eff, pad;
    uint8_t payload[512];       /* the answer it is sending */
    uint32_t plen, off;
    uint8_t sn, bs, in_block, stmin, sending;
    /* faults */
    int silent;                 /* never answers */
    uint64_t delay;             /* answer this long after the request (default 1 ms) */
    int pending;                /* 0x78 answers before the real one */
    uint8_t nrc;                /* answer 7F SID nrc instead */
    int lose_cf;                /* the k-th CF (from 1) never goes out */
    int bad_sn_cf;              /* the k-th CF carries a wrong SN */
    uint32_t vin_len;           /* 22 F190 / 09 02: this many payload bytes */
    uint32_t fcs;               /* flow controls it got */
    uint8_t last_fc[3];
};

static struct {
    uint64_t now;
    struct ev q[4096];
    unsigned nq;
    struct ecu *ecu[4];
    unsigned necu;
    /* what the client sent */
    struct ev sent[4096];
    unsigned nsent;
    /* what the answer hook got */
    uint8_t ans[8][512];
    uint32_t alen[8];
    uint32_t aid[8];
    unsigned nans;
    unsigned late_hooks;
} B;

static void put(uint64_t t, uint32_t id, uint8_t eff, const uint8_t *d, uint8_t n, uint8_t pad)
{
    struct ev e;
    unsigned i;

    memset(&e, 0, sizeof e);
    e.t = t;
    e.id = id;
    e.eff = eff;
    e.len = 8;
    memset(e.d, pad, 8);
    memcpy(e.d, d, n);
    REQUIRE(B.nq < 4096);
    for (i = B.nq; i > 0 && B.q[i - 1].t > t; i--)
        B.q[i] = B.q[i - 1];
    B.q[i] = e;
    B.nq++;
}

/* The ECU sends consecutive frames from `t` until its block ends or the payload does. */
static void send_cfs(struct ecu *e, uint64_t t)
{
    uint64_t gap = e->stmin <= 0x7F ? e->stmin * MS : 100000ull * (e->stmin - 0xF0u);
    if (gap == 0)
        gap = MS / 10;
    while (e->off < e->plen) {
        uint8_t d[8];
        uint32_t n = e->plen - e->off < 7 ? e->plen - e->off : 7;
        int k = (int)(e->sn ? e->sn : 16);  /* CF number, for the faults (first 15) */
        d[0] = (uint8_t)(0x20 | (e->bad_sn_cf == k ? (e->sn + 3) & 0xF : e->sn));
        memcpy(d + 1, e->payload + e->off, n);
        if (e->lose_cf != k)
            put(t, e->resp, e->eff, d, (uint8_t)(n + 1), e->pad);
        e->off += n;
        e->sn = (uint8_t)((e->sn + 1) & 0xF);
        t += gap;
        if (e->bs && ++e->in_block == e->bs && e->off < e->plen) {
            e->in_block = 0;
            return;             /* waits for the next flow control */
        }
    }
    e->sending = 0;
}

static void ecu_answer(struct ecu *e, const uint8_t *req, uint8_t n)
{
    uint64_t t = B.now + (e->delay ? e->delay : MS);
    uint8_t d[8];

    if (e->silent)
        return;
    for (int k = 0; k < e->pending; k++) {
        uint8_t p[3] = { 0x7F, req[0], 0x78 };
        d[0] = 3;
        memcpy(d + 1, p, 3);
        put(t, e->resp, e->eff, d, 4, e->pad);
        t += 80 * MS;               /* each within the client's P2 of 100 ms */
    }
    if (e->nrc) {
        uint8_t p[4] = { 3, 0x7F, req[0], e->nrc };
        put(t, e->resp, e->eff, p, 4, e->pad);
        return;
    }
    e->payload[0] = (uint8_t)(req[0] + 0x40);
    memcpy(e->payload + 1, req + 1, n - 1u);
    e->plen = n;
    if (e->vin_len && (req[0] == 0x22 || req[0] == 0x09)) {
        for (uint32_t i = 0; i < e->vin_len; i++)
            e->payload[e->plen + i] = (uint8_t)('A' + (i + (e->resp & 7)) % 26);
        e->plen += e->vin_len;
    } else {
        e->payload[e->plen++] = 0x12;
        e->payload[e->plen++] = (uint8_t)e->resp;
    }
    if (e->plen <= 7) {
        d[0] = (uint8_t)e->plen;
        memcpy(d + 1, e->payload, e->plen);
        put(t, e->resp, e->eff, d, (uint8_t)(e->plen + 1), e->pad);
        return;
    }
    d[0] = (uint8_t)(0x10 | (e->plen >> 8));
    d[1] = (uint8_t)e->plen;
    memcpy(d + 2, e->payload, 6);
    e->off = 6;
    e->sn = 1;
    e->sending = 1;
    put(t, e->resp, e->eff, d, 8, e->pad);
}

/* A request on the bus, as an ECU sees it. */
static void ecu_see(struct ecu *e, uint32_t id, const uint8_t *d)
{
    if ((id == e->phys || id == e->func) && (d[0] >> 4) == 0 && d[0] >= 1 && d[0] <= 7)
        ecu_answer(e, d + 1, d[0]);
}

static void ecu_fc(struct ecu *e, uint32_t id, const uint8_t *d)
{
    if (id != e->phys || (d[0] >> 4) != 3 || !e->sending)
        return;
    e->fcs++;
    memcpy(e->last_fc, d, 3);
    if ((d[0] & 0xF) == 2) {            /* OVFLW: abandon */
        e->sending = 0;
        return;
    }
    if ((d[0] & 0xF) == 1)              /* WAIT */
        return;
    e->bs = d[1];
    e->stmin = d[2];
    e->in_block = 0;
    send_cfs(e, B.now + MS);
}

static int bus_tx(void *ctx, uint8_t ch, const struct sf_can *f)
{
    (void)ctx;
    (void)ch;
    REQUIRE(B.nsent < 4096);
    struct ev *e = &B.sent[B.nsent++];
    e->t = B.now;
    e->id = f->id;
    e->eff = (f->flags & SF_CAN_EFF) != 0;
    e->len = f->len;
    memcpy(e->d, f->data, 8);
    for (unsigned i = 0; i < B.necu; i++) {
        if ((f->data[0] >> 4) == 3)
            ecu_fc(B.ecu[i], f->id, f->data);
        else
            ecu_see(B.ecu[i], f->id, f->data);
    }
    return 0;
}

static void on_answer(void *ctx, const struct sf_poll_answer *a)
{
    (void)ctx;
    if (a->late)
        B.late_hooks++;
    if (a->status != SF_MSG_OK || a->negative || B.nans >= 8)
        return;
    memcpy(B.ans[B.nans], a->payload, a->length);
    B.alen[B.nans] = a->length;
    B.aid[B.nans] = a->id;
    B.nans++;
}

static struct sf_poll polls[4];
static struct sf_proto_session sess[8];
static uint8_t arena[4096];
static struct sf_poll_client C;

static void setup(uint8_t bs, uint8_t stmin, uint32_t arena_size)
{
    struct sf_poll_config cfg;

    memset(&B, 0, sizeof B);
    memset(&cfg, 0, sizeof cfg);
    cfg.polls = polls;
    cfg.cap = 4;
    cfg.sessions = sess;
    cfg.nsessions = 8;
    cfg.arena = arena;
    cfg.arena_size = arena_size;
    cfg.tx = bus_tx;
    cfg.answer = on_answer;
    cfg.bs = bs;
    cfg.stmin = stmin;
    cfg.pad = 0xCC;
    REQUIRE(sf_poll_init(&C, &cfg) == 0);
}

static void ecu_init(struct ecu *e, uint32_t phys, uint32_t func, uint32_t resp, uint8_t eff)
{
    memset(e, 0, sizeof *e);
    e->phys = phys;
    e->func = func;
    e->resp = resp;
    e->eff = eff;
    e->pad = 0xAA;
    B.ecu[B.necu++] = e;
}

static struct sf_poll_def uds(uint32_t tx, uint32_t rx, uint16_t did, uint64_t period)
{
    struct sf_poll_def d;

    memset(&d, 0, sizeof d);
    d.kind = SF_POLL_UDS;
    d.tx_id = tx;
    d.rx_id = rx;
    d.eff = tx > 0x7FF;
    d.period_ns = period;
    d.nitems = 1;
    d.items[0].len = 3;
    d.items[0].req[0] = 0x22;
    d.items[0].req[1] = (uint8_t)(did >> 8);
    d.items[0].req[2] = (uint8_t)did;
    return d;
}

static struct sf_poll_def obd(int eff, uint64_t period)
{
    struct sf_poll_def d;

    memset(&d, 0, sizeof d);
    d.kind = SF_POLL_OBD;
    d.eff = (uint8_t)eff;
    d.tx_id = eff ? 0x18DB33F1u : 0x7DF;
    d.period_ns = period;
    d.nitems = 2;
    d.items[0].len = 2;
    d.items[0].req[0] = 0x01;
    d.items[0].req[1] = 0x0C;
    d.items[1].len = 2;
    d.items[1].req[0] = 0x09;
    d.items[1].req[1] = 0x02;
    return d;
}

/* Run the model from 0 to `end`. */
static void run(uint64_t end)
{
    uint64_t next;

    B.now = 0;
    sf_poll_start(&C, 0);
    next = sf_poll_tick(&C, 0);
    for (;;) {
        uint64_t t = next;
        if (B.nq && B.q[0].t <= t)
            t = B.q[0].t;
        if (t >= end)
            break;
        B.now = t;
        if (B.nq && B.q[0].t == t) {
            struct ev e = B.q[0];
            struct sf_proto_frame f;
            memmove(B.q, B.q + 1, (B.nq - 1) * sizeof B.q[0]);
            B.nq--;
            f.ts = t;
            f.id = e.id;
            f.flags = e.eff ? SF_CAN_EFF : 0;
            f.channel = 0;
            f.len = e.len;
            f.data = e.d;
            sf_poll_feed(&C, &f);
        }
        next = sf_poll_tick(&C, t);
    }
}

static unsigned count_sent(uint32_t id, uint8_t pci_hi)
{
    unsigned n = 0;
    for (unsigned i = 0; i < B.nsent; i++)
        n += B.sent[i].id == id && (B.sent[i].d[0] >> 4) == pci_hi;
    return n;
}

/* Single-frame answers, on the period, and the request frames as ISO 15765-4 wants them. */
static void test_single_and_period(void)
{
    struct ecu e;
    struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF40C, 100 * MS);

    setup(0, 0, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(1000 * MS - 1);
    CHECK_EQ(polls[0].st.requests, 10);
    CHECK_EQ(polls[0].st.answers, 10);
    CHECK_EQ(polls[0].st.timeouts, 0);
    CHECK_EQ(count_sent(0x7E0, 0), 10);
    for (unsigned i = 0; i < B.nsent; i++) {
        CHECK_EQ(B.sent[i].t, i * 100 * MS);        /* exactly on the grid */
        CHECK_EQ(B.sent[i].len, 8);
        CHECK(!memcmp(B.sent[i].d, "\x03\x22\xF4\x0C\xCC\xCC\xCC\xCC", 8));
    }
    CHECK_EQ(B.alen[0], 5);             /* padding 0xAA not taken: SF_DL */
    CHECK(!memcmp(B.ans[0], "\x62\xF4\x0C\x12\xE8", 5));
}

/* A VIN over first + consecutive frames with BS 2 and STmin 5 ms: every block asked for. */
static void test_multi_frame_bs(void)
{
    struct ecu e;
    struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF190, 500 * MS);

    setup(2, 5, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.vin_len = 30;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(400 * MS);
    /* 33 bytes: FF 6, then 4 CFs: 2 in the first block, 2 in the second */
    CHECK_EQ(polls[0].st.answers, 1);
    CHECK_EQ(polls[0].st.multi_frame, 1);
    CHECK_EQ(polls[0].st.flow_controls, 2);
    CHECK_EQ(e.fcs, 2);
    CHECK(!memcmp(e.last_fc, "\x30\x02\x05", 3));
    CHECK_EQ(B.alen[0], 33);
    CHECK(!memcmp(B.ans[0], "\x62\xF1\x90", 3));
    for (unsigned i = 0; i < 30; i++)
        CHECK_EQ(B.ans[0][3 + i], 'A' + (i + 0) % 26);
    /* STmin coding */
    CHECK_EQ(sf_poll_stmin_code(0), 0);
    CHECK_EQ(sf_poll_stmin_code(100), 0xF1);
    CHECK_EQ(sf_poll_stmin_code(950), 1);     /* above 900 us: 1 ms */
    CHECK_EQ(sf_poll_stmin_code(5000), 5);
    CHECK_EQ(sf_poll_stmin_code(127000), 127);
    CHECK_EQ(sf_poll_stmin_code(128000), -1);
}

/* A lost consecutive frame and a wrong sequence number: broken, counted, the next cycle
 * is fine. */
static void test_lost_and_wrong_sn(void)
{
    for (int fault = 0; fault < 2; fault++) {
        struct ecu e;
        struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF190, 2000 * MS);
        setup(0, 0, sizeof arena);
        ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
        e.vin_len = 17;
        if (fault)
            e.bad_sn_cf = 2;
        else
            e.lose_cf = 2;
        REQUIRE(sf_poll_add(&C, &d) == 0);
        run(1900 * MS);
        CHECK_EQ(polls[0].st.broken, 1);
        CHECK_EQ(polls[0].st.answers, 0);
        CHECK_EQ(polls[0].busy, 0);         /* the item ended: not stuck */
        /* the next cycle without the fault */
        e.lose_cf = e.bad_sn_cf = 0;
        B.nans = 0;
        polls[0].st.broken = 0;
        run(100 * MS);                      /* restarts the schedule at 0 */
        CHECK_EQ(polls[0].st.answers, 1);
        CHECK_EQ(B.alen[0], 20);
    }
}

/* An answer larger than the arena: flow control OVFLW, counted, nothing stuck. */
static void test_overflow(void)
{
    struct ecu e;
    struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF190, 500 * MS);

    setup(0, 0, 16);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.vin_len = 100;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(400 * MS);
    CHECK_EQ(polls[0].st.overflow, 1);
    CHECK_EQ(e.fcs, 1);
    CHECK_EQ(e.last_fc[0], 0x32);
    CHECK_EQ(polls[0].st.answers, 0);
    CHECK_EQ(polls[0].st.timeouts, 1);
    CHECK_EQ(polls[0].busy, 0);
}

/* A slow sender: STmin 127 ms spreads a 33-byte answer over 4 consecutive frames and
 * about 400 ms, four times P2; the client waits for it (N_Cr between frames, not P2). */
static void test_slow_sender(void)
{
    struct ecu e;
    struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF190, 5000 * MS);

    setup(0, 127, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.vin_len = 30;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(3000 * MS);
    CHECK_EQ(polls[0].st.answers, 1);
    CHECK_EQ(polls[0].st.timeouts, 0);
    CHECK_EQ(polls[0].st.flow_controls, 1);
    CHECK_EQ(B.alen[0], 33);
}

/* Response pending twice, then the answer 160 ms after the request (past P2): no
 * timeout. A plain negative answer is counted as such. */
static void test_pending_and_negative(void)
{
    struct ecu e;
    struct sf_poll_def d = uds(0x7E0, 0x7E8, 0xF40C, 1000 * MS);

    setup(0, 0, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.pending = 2;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(900 * MS);
    CHECK_EQ(polls[0].st.pending, 2);
    CHECK_EQ(polls[0].st.answers, 1);
    CHECK_EQ(polls[0].st.timeouts, 0);
    CHECK_EQ(polls[0].st.late, 0);

    setup(0, 0, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.nrc = 0x31;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(900 * MS);
    CHECK_EQ(polls[0].st.negative, 1);
    CHECK_EQ(polls[0].st.answers, 0);
    CHECK_EQ(polls[0].st.timeouts, 0);
}

/* No ECU: a timeout per item, the requests keep their period. An ECU answering after the
 * timeout: a timeout and a late answer. */
static void test_timeout_and_late(void)
{
    struct ecu e;
    struct sf_poll_def d = obd(0, 250 * MS);

    setup(0, 0, sizeof arena);
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(1000 * MS - 1);
    CHECK_EQ(polls[0].st.requests, 8);  /* 4 cycles, 2 items */
    CHECK_EQ(polls[0].st.timeouts, 8);
    CHECK_EQ(polls[0].st.skipped, 0);
    for (unsigned i = 0; i < B.nsent; i += 2)
        CHECK_EQ(B.sent[i].t, (i / 2) * 250 * MS);

    d = uds(0x7E0, 0x7E8, 0xF40C, 1000 * MS);
    setup(0, 0, sizeof arena);
    ecu_init(&e, 0x7E0, 0x7DF, 0x7E8, 0);
    e.delay = 150 * MS;
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(900 * MS);
    CHECK_EQ(polls[0].st.timeouts, 1);
    CHECK_EQ(polls[0].st.late, 1);
    CHECK_EQ(polls[0].st.answers, 0);
    CHECK_EQ(B.late_hooks, 1);
}

/* A cycle longer than the period (two items timing out, 100 ms each, every 150 ms): the
 * next cycle starts late, as soon as the one before ends, none is lost until the lag is a
 * whole period; then one is skipped and counted. */
static void test_overrun(void)
{
    struct sf_poll_def d = obd(0, 150 * MS);

    setup(0, 0, sizeof arena);
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(450 * MS - 1);
    CHECK_EQ(polls[0].st.skipped, 0);
    REQUIRE(B.nsent == 5);
    for (unsigned i = 0; i < 5; i++)
        CHECK_EQ(B.sent[i].t, i * 100 * MS);        /* cycles at 0, 200, 400 */
    setup(0, 0, sizeof arena);
    REQUIRE(sf_poll_add(&C, &d) == 0);
    run(1500 * MS - 1);                 /* lag 50 ms a cycle: 150 ms by the 4th */
    CHECK(polls[0].st.skipped >= 1);
    CHECK_EQ(polls[0].st.requests, B.nsent);
}

/* Two ECUs answer a functional request with interleaved multi-frame answers (11-bit and
 * 29-bit): both whole, each flow control to its sender; once both are known, an item
 * ends as soon as both answered, not at the timeout. */
static void test_interleaved(void)
{
    for (int eff = 0; eff < 2; eff++) {
        struct ecu a, b;
        struct sf_poll_def d = obd(eff, 1000 * MS);
        setup(0, 0, sizeof arena);
        if (eff) {
            ecu_init(&a, 0x18DA10F1u, 0x18DB33F1u, 0x18DAF110u, 1);
            ecu_init(&b, 0x18DA18F1u, 0x18DB33F1u, 0x18DAF118u, 1);
        } else {
            ecu_init(&a, 0x7E0, 0x7DF, 0x7E8, 0);
            ecu_init(&b, 0x7E1, 0x7DF, 0x7E9, 0);
        }
        a.vin_len = b.vin_len = 17;
        b.delay = 2 * MS;           /* b's frames fall between a's */
        REQUIRE(sf_poll_add(&C, &d) == 0);
        run(1900 * MS);
        CHECK_EQ(polls[0].st.requests, 4);
        CHECK_EQ(polls[0].st.answers, 8);       /* 2 cycles x 2 items x 2 ECUs */
        CHECK_EQ(polls[0].st.multi_frame, 4);
        CHECK_EQ(polls[0].st.broken, 0);
        CHECK_EQ(polls[0].st.timeouts, 0);
        CHECK_EQ(a.fcs, 2);
        CHECK_EQ(b.fcs, 2);
        /* cycle 2: item 2's request follows item 1's answers, not the 100 ms timeout */
        unsigned k = 0;
        for (unsigned i = 0; i < B.nsent; i++)
            if (B.sent[i].id == d.tx_id && ++k == 4)
                CHECK(B.sent[i].t < 1000 * MS + 50 * MS);
        /* the answers: SF for 01 0C from each, the VINs whole */
        unsigned vins = 0;
        for (unsigned i = 0; i < B.nans; i++)
            if (B.alen[i] == 19) {
                CHECK(!memcmp(B.ans[i], "\x49\x02", 2));
                CHECK_EQ(B.ans[i][2], 'A' + (B.aid[i] & 7) % 26);
                vins++;
            }
        CHECK(vins >= 2);
    }
}

int main(void)
{
    test_single_and_period();
    test_multi_frame_bs();
    test_lost_and_wrong_sn();
    test_overflow();
    test_slow_sender();
    test_pending_and_negative();
    test_timeout_and_late();
    test_interleaved();
    test_overrun();
    TEST_END();
}
