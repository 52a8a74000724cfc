/* poll_bench N POLLS: the poll client's cost (docs/BENCHMARKS.md "Poll stage"): POLLS uds:
 * polls (7E0/7E8 ... with one DID each) on one client, fed N bus frames
 * the way the CLI's receive loop feeds it. Two phases, each N frames:
 *   bus:     frames that answer no poll (ids 0x100-0x1FF): the cost every logged frame
 *            pays when --poll is on (sf_poll_feed returns after the id check);
 *   answers: every poll's request answered by a 20-byte multi-frame answer (FF, flow
 *            control back through the hook, 2 CFs), then the next cycle: the cost of an
 *            answer frame, reassembly and flow control included.
 * Under callgrind, sf_poll_feed inclusive minus the hook (count_tx) per frame of a phase is
 * the stage's instructions per frame; sf_poll_tick's share per request is printed by
 * callgrind too. Each phase is a function of its own so callgrind tells them apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/poll.h"

static unsigned long long hooked;

__attribute__((noinline)) static int count_tx(void *ctx, uint8_t channel, const struct sf_can *f)
{
    (void)ctx;
    (void)channel;
    hooked += f->len;
    return 0;
}

static struct sf_poll polls[SF_POLL_MAX_PAIRS + 1];
static struct sf_proto_session sess[16];
static uint8_t arena[16384];
static struct sf_poll_client c;

__attribute__((noinline)) static void bus_phase(unsigned long long n)
{
    uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    struct sf_proto_frame f = { 0, 0, 0, 0, 8, d };

    for (unsigned long long i = 0; i < n; i++) {
        f.ts = 1000000000ull + i * 1000u;
        f.id = 0x100 + (uint32_t)(i & 0xFF);
        d[0] = (uint8_t)i;
        sf_poll_feed(&c, &f);
    }
}

__attribute__((noinline)) static unsigned long long answer_phase(unsigned long long n,
                                                                 unsigned npolls)
{
    static const uint8_t vin[17] = "WVWZZZ1JZXW000001";
    unsigned long long frames = 0;
    uint64_t now = 2000000000ull;

    while (frames < n) {
        sf_poll_tick(&c, now);          /* every poll's request goes out */
        for (unsigned k = 0; k < npolls; k++) {
            uint8_t msg[20] = { 0x62, 0xF1, (uint8_t)(0x90 + k) }, d[8];
            struct sf_proto_frame f = { now, 0x7E8 + (k & 7), 0, 0, 8, d };
            memcpy(msg + 3, vin, 17);
            if (k >= 8)
                f.id = 0x600 + k;       /* uds: pairs beyond the OBD-II ids */
            d[0] = 0x10;
            d[1] = 20;
            memcpy(d + 2, msg, 6);
            sf_poll_feed(&c, &f);
            d[0] = 0x21;
            memcpy(d + 1, msg + 6, 7);
            sf_poll_feed(&c, &f);
            d[0] = 0x22;
            memcpy(d + 1, msg + 13, 7);
            sf_poll_feed(&c, &f);
            frames += 3;
        }
        now += 1000000000ull;           /* the next period */
    }
    return frames;
}

int main(int argc, char **argv)
{
    struct sf_poll_config cfg;
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000, got;
    unsigned npolls = argc > 2 ? (unsigned)atoi(argv[2]) : 8;

    if (npolls < 1 || npolls > SF_POLL_MAX_PAIRS) {
        fprintf(stderr, "usage: poll_bench N POLLS(1-%d)\n", SF_POLL_MAX_PAIRS);
        return 2;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.polls = polls;
    cfg.cap = SF_POLL_MAX_PAIRS + 1;
    cfg.sessions = sess;
    cfg.nsessions = 16;
    cfg.arena = arena;
    cfg.arena_size = sizeof arena;
    cfg.tx = count_tx;
    cfg.pad = 0xCC;
    if (sf_poll_init(&c, &cfg))
        return 1;
    for (unsigned k = 0; k < npolls; k++) {
        struct sf_poll_def d;
        memset(&d, 0, sizeof d);
        d.kind = SF_POLL_UDS;
        d.tx_id = k < 8 ? 0x7E0 + k : 0x500 + k;
        d.rx_id = k < 8 ? 0x7E8 + k : 0x600 + k;
        d.period_ns = 1000000000ull;
        d.nitems = 1;
        d.items[0].len = 3;
        d.items[0].req[0] = 0x22;
        d.items[0].req[1] = 0xF1;
        d.items[0].req[2] = (uint8_t)(0x90 + k);
        if (sf_poll_add(&c, &d))
            return 1;
    }
    sf_poll_start(&c, 0);
    bus_phase(n);
    got = answer_phase(n, npolls);
    unsigned long long answers = 0, fcs = 0;
    for (unsigned k = 0; k < npolls; k++) {
        answers += polls[k].st.answers;
        fcs += polls[k].st.flow_controls;
    }
    printf("%llu bus frames, %llu answer frames: %llu answers, %llu flow controls, hook saw "
           "%llu bytes\n", n, got, answers, fcs, hooked);
    return answers * 3 == got ? 0 : 1;
}
