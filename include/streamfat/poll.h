/* The poll client: OBD-II (SAE J1979) and UDS (ISO 14229 ReadDataByIdentifier) requests a
 * logger sends on a schedule, and their answers over ISO-TP (ISO 15765-2), counted per
 * poll (docs/LOG.md "Polling"). Freestanding like the rest of the core: the caller gives
 * every byte (the poll table, the reassembly's sessions and arena), the port gives the
 * clock's readings and the tx hook of the transmit schedule (tx_schedule.h), so firmware
 * and the CLI share it.
 *
 * One ISO-TP implementation: the answers are reassembled by the same code every reader
 * runs (proto.h, src/proto/isotp.c) with cfg.report_ff; the client adds the sender's half
 * a tester needs for answers: single-frame requests, padded to 8 bytes, and a flow control
 * (CTS with the configured BS and STmin) for each first frame and each completed block, or
 * OVFLW when the answer does not fit the arena.
 *
 *     sf_poll_init(&c, &cfg);   sf_poll_add(&c, &def) ...;   sf_poll_start(&c, now);
 *     port loop: every received frame -> sf_poll_feed(&c, &frame) (its ts the clock's
 *                reading when it was read); sleep until sf_poll_tick(&c, now) or a frame.
 *
 * Each poll asks its items (PIDs or DIDs) one after another: the first at every period's
 * deadline (drift-free, as the transmit schedule), each next one when the one before is
 * answered or timed out, never two outstanding at once on one poll. A cycle still running
 * at the next deadline delays the next one until it ends (late, not lost); a second
 * deadline passed meanwhile is skipped and counted. An answer ends an
 * item when it is whole: a single frame, or the last consecutive frame. A physical
 * request (uds:) is answered once; a functional one (obd:, 0x7DF / 0x18DB33F1) by any
 * number of ECUs: the item ends at the timeout, or earlier once every responder that
 * answered in an earlier window run to its timeout has answered. Negative response 0x78 (response pending) moves the
 * deadline by p2_star_ms; any other 0x7F ends the item. An answer to an item no longer
 * waited for (after its timeout, or from the cycle before) is counted late. Nothing waits
 * on the bus: a missing ECU costs one timeout per item, the schedule goes on.
 *
 * Threading: one client per thread, or the caller serialises feed and tick. */
#ifndef STREAMFAT_POLL_H
#define STREAMFAT_POLL_H

#include <stdint.h>

#include "streamfat/proto.h"
#include "streamfat/tx_schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_POLL_MAX_ITEMS 16    /* PIDs / DIDs in one poll */
#define SF_POLL_MAX_PAIRS 32    /* polls with their own (uds:) ids, per client */

enum sf_poll_kind {
    SF_POLL_OBD = 1,            /* functional: any responder 0x7E8-0x7EF / 0x18DAF1xx */
    SF_POLL_UDS = 2,            /* physical: tx_id -> rx_id */
};

/* One request of a poll: the service and its parameters, as sent (2..7 bytes):
 * 01 PID, 09 PID (OBD-II), 22 DID-hi DID-lo (UDS). */
struct sf_poll_item {
    uint8_t len;
    uint8_t req[7];
};

/* Counted per poll. */
struct sf_poll_stats {
    uint64_t requests;          /* requests the tx hook took */
    uint64_t failed;            /* requests and flow controls the hook refused */
    uint64_t answers;           /* positive answers, whole */
    uint64_t negative;          /* negative answers (0x7F) other than response pending */
    uint64_t pending;           /* 0x7F ... 0x78 (the deadline moved on) */
    uint64_t timeouts;          /* items nobody answered in time */
    uint64_t late;              /* answers to an item no longer waited for */
    uint64_t broken;            /* answers ISO-TP ended broken (lost or wrong CF, timeout) */
    uint64_t overflow;          /* first frames answered with OVFLW (no room) */
    uint64_t flow_controls;     /* CTS frames sent */
    uint64_t skipped;           /* periods passed over: the cycle before was still busy
                                   past a whole period (one period late is started late,
                                   as soon as the cycle before ends) */
    uint64_t multi_frame;       /* answers that came as first + consecutive frames */
};

/* A poll: what --poll asks. Filled by the caller; the rest is the client's. */
struct sf_poll_def {
    uint8_t kind;               /* enum sf_poll_kind */
    uint8_t eff;                /* nonzero: 29-bit ids */
    uint8_t channel;
    uint8_t nitems;
    uint32_t tx_id;             /* obd: 0x7DF or 0x18DB33F1 */
    uint32_t rx_id;             /* uds: the answer id (obd: unused) */
    uint64_t period_ns;         /* > 0 */
    struct sf_poll_item items[SF_POLL_MAX_ITEMS];
};

struct sf_poll {
    struct sf_poll_def def;
    struct sf_poll_stats st;
    uint64_t next;              /* the next period's deadline */
    uint64_t deadline;          /* the item's answer deadline, while busy */
    uint8_t busy;               /* an item is outstanding */
    uint8_t item;               /* which */
    uint8_t receiving;          /* multi-frame answers to it under way */
    uint8_t answered;           /* someone answered it */
    uint8_t due;                /* a period came while busy: the next cycle starts when
                                   this one ends */
    uint8_t seen[32];           /* functional: responders of the whole windows so far
                                   (bit = the id's low byte) */
    uint8_t got[32];            /* functional: responders that answered this item */
};

/* What an answer looks like, for the optional answer hook. */
struct sf_poll_answer {
    uint32_t poll;              /* index in the client's table */
    uint8_t item;
    uint8_t late;               /* 1: counted late */
    uint8_t status;             /* enum sf_proto_status of the reassembly */
    uint8_t negative;           /* the NRC of a 0x7F answer, else 0 */
    uint32_t id;                /* the answer's CAN id */
    uint64_t first_ts, last_ts;
    uint32_t length;
    const uint8_t *payload;     /* valid during the hook */
};

typedef void (*sf_poll_answer_fn)(void *ctx, const struct sf_poll_answer *a);

struct sf_poll_config {
    struct sf_poll *polls;              /* caller memory, cap entries */
    uint32_t cap;
    struct sf_proto_session *sessions;  /* the reassembly's (proto.h) */
    uint32_t nsessions;
    uint8_t *arena;
    uint32_t arena_size;
    sf_tx_fn tx;                        /* the transmit schedule's hook type */
    void *tx_ctx;
    sf_poll_answer_fn answer;           /* optional */
    void *answer_ctx;
    uint32_t timeout_ms;                /* P2: 0 = SF_POLL_TIMEOUT_MS */
    uint32_t p2_star_ms;                /* after 0x78: 0 = SF_POLL_P2_STAR_MS */
    uint32_t n_cr_ms;                   /* between consecutive frames: 0 = the default */
    uint8_t bs;                         /* flow control: block size (0: no limit) */
    uint8_t stmin;                      /* flow control: STmin as coded (ISO 15765-2) */
    uint8_t pad;                        /* the byte that fills frames to 8 */
};

#define SF_POLL_TIMEOUT_MS 100u         /* J1979's P2 is 50 ms; a margin for busy ECUs */
#define SF_POLL_P2_STAR_MS 5000u        /* ISO 14229-2 P2*server */

struct sf_poll_client {
    struct sf_poll_config cfg;
    struct sf_proto proto;
    struct sf_isotp_pair pairs[SF_POLL_MAX_PAIRS];
    uint32_t n, npairs;
    uint64_t timeout, p2_star;          /* ns */
};

/* SF_EINVAL: no tx hook, no polls memory, or the reassembly refused its memory. */
int sf_poll_init(struct sf_poll_client *c, const struct sf_poll_config *cfg);
/* Adds a poll (copied): 0, or -1 when the table is full, the poll has no item, no
 * period, an item of a bad length, or (uds:) the client has no room for its ids. */
int sf_poll_add(struct sf_poll_client *c, const struct sf_poll_def *d);
/* Arms every poll: its first request at `now`. */
void sf_poll_start(struct sf_poll_client *c, uint64_t now);
/* Takes a frame of the bus (any id: what is not an answer to a poll is ignored; frames
 * with SF_CAN_TX, the echo of what this client sent, too). f->ts is the port's clock.
 * Returns 1 when the frame was taken (an answer id: deadlines may have moved), else 0. */
int sf_poll_feed(struct sf_poll_client *c, const struct sf_proto_frame *f);
/* Sends what is due, ends what timed out; returns the next time to call it (or sooner). */
uint64_t sf_poll_tick(struct sf_poll_client *c, uint64_t now);
/* The STmin byte for a separation time in microseconds (rounded up to what the coding
 * has: 100..900 us, 1..127 ms); -1 above 127 ms. */
int sf_poll_stmin_code(uint32_t us);

#ifdef __cplusplus
}
#endif

#endif
