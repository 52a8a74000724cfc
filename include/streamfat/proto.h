/* Reassembly of what spans CAN frames (docs/DECODE.md): ISO-TP (ISO 15765-2), the J1939
 * transport protocol (SAE J1939-21 TP.CM / TP.DT: BAM and RTS/CTS) and NMEA 2000 fast
 * packets. Freestanding: no allocation, no globals, no OS calls; the caller owns every byte
 * (the context, a table of sessions and a payload arena), so a firmware can run it beside the
 * logger and every reader (export, the Python package) runs the same code.
 *
 * Frames go in in log order; whole messages come out:
 *
 *     static struct sf_proto_session sess[32];
 *     static uint8_t arena[64 * 1024];
 *     struct sf_proto p;
 *     struct sf_proto_config cfg = {0};          // zero: every protocol, standard timers
 *     cfg.sessions = sess; cfg.nsessions = 32;
 *     cfg.arena = arena; cfg.arena_size = sizeof arena;
 *     sf_proto_init(&p, &cfg);
 *     for each CAN record r:
 *         sf_proto_feed(&p, &(struct sf_proto_frame){r.ts, r.id, r.flags, r.channel,
 *                                                    r.len, r.data});
 *         while (sf_proto_next(&p, &m))
 *             handle(&m);                         // m.payload valid until the next feed
 *     sf_proto_finish(&p);                        // what is still open: status SF_MSG_END
 *     while (sf_proto_next(&p, &m))
 *         handle(&m);
 *
 * Timers run on the frames' own times (ns, as in the log's records), never on a clock: a
 * session whose next frame does not come within its timer (N_Cr; T1..T4) ends with
 * SF_MSG_TIMEOUT when the first frame later than its deadline is fed (of any id or
 * channel), or at sf_proto_expire(now) for a live reader between frames.
 *
 * Broken cases (docs/DECODE.md, "Broken messages"): a session that started but did not
 * finish is handed out with what arrived (the contiguous bytes from the start, `length` <
 * `declared`) and a status other than SF_MSG_OK, and counted in sf_proto_stats. A frame that
 * belongs to no session (a consecutive frame or TP.DT before the log's start, after a
 * session ended, or of a session refused for lack of memory) never makes a message: it is
 * only counted. Nothing is ever invented: every payload byte comes from a frame, in order.
 *
 * Resources: a session takes one slot of `sessions` and `declared` bytes of the arena (at
 * its first frame, first fit). When no slot or no room is free the session is refused and
 * counted (no_session, no_memory), and its later frames count as frames without a session.
 * A message handed out keeps its slot and bytes until the next sf_proto_feed, expire or
 * finish; messages not taken by then are dropped and counted (not_taken).
 *
 * Threading: one context per thread; contexts share nothing. */
#ifndef STREAMFAT_PROTO_H
#define STREAMFAT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One CAN frame, as a record carries it (struct sf_can plus its time and channel). */
struct sf_proto_frame {
    uint64_t ts;                /* ns, the log's clock */
    uint32_t id;                /* 11 or 29 bits */
    uint32_t flags;             /* SF_CAN_*: EFF tells 29-bit ids, FD the frame kind */
    uint8_t channel;
    uint8_t len;                /* data bytes, <= 8 (classic) or <= 64 (FD) */
    const uint8_t *data;
};

enum sf_proto_kind {
    SF_PROTO_ISOTP = 1,
    SF_PROTO_J1939 = 2,         /* a J1939 TP (BAM, RTS/CTS) or ETP message */
    SF_PROTO_FAST = 3,          /* an NMEA 2000 fast packet */
};

/* What sf_proto_next hands out. */
enum sf_proto_event {
    SF_PROTO_EV_MESSAGE = 0,    /* a message, whole (SF_MSG_OK) or broken */
    SF_PROTO_EV_FF = 1,         /* an ISO-TP first frame opened a session (only with
                                   cfg.report_ff): a live client sends its flow control
                                   now, on fc_id; length is what arrived, declared the
                                   FF_DL. Status SF_MSG_ABORTED: the session was refused
                                   (no slot or no arena room for FF_DL): the client sends
                                   flow control OVFLW instead */
    SF_PROTO_EV_BLOCK = 2,      /* an ISO-TP block is complete (only with cfg.report_ff):
                                   the last flow control fed for the session gave a block
                                   size BS and BS consecutive frames have come since, so
                                   the sender waits: a live client sends the next flow
                                   control now, on fc_id */
};

/* How a message ended. Anything but SF_MSG_OK carries only what arrived. */
enum sf_proto_status {
    SF_MSG_OK = 0,
    SF_MSG_TIMEOUT = 1,         /* the next frame came later than the timer allows */
    SF_MSG_BAD_SEQ = 2,         /* a wrong sequence number (missing or repeated frame) */
    SF_MSG_BAD_LENGTH = 3,      /* a J1939 TP.DT or fast packet frame too short */
    SF_MSG_REPLACED = 4,        /* a new first frame (or SF, BAM, RTS) on the same session */
    SF_MSG_ABORTED = 5,         /* J1939 Connection Abort, ISO-TP flow control OVFLW */
    SF_MSG_END = 6,             /* still open at sf_proto_finish (the log ended) */
};

/* ISO-TP addressing of a named pair. */
enum sf_isotp_mode {
    SF_ISOTP_NORMAL = 0,        /* the id is the address (11-bit, or 29-bit normal fixed) */
    SF_ISOTP_EXTENDED = 1,      /* the first data byte is the target address */
    SF_ISOTP_MIXED = 2,         /* the first data byte is the address extension */
};

#define SF_PROTO_ANY_CHANNEL 0xFFu

/* An ISO-TP id pair the user names: data on id_a has its flow control on id_b and the
 * other way round. Either side may carry messages. */
struct sf_isotp_pair {
    uint32_t id_a, id_b;
    uint8_t eff;                /* nonzero: 29-bit ids */
    uint8_t mode;               /* enum sf_isotp_mode */
    uint8_t channel;            /* or SF_PROTO_ANY_CHANNEL */
};

/* cfg.off bits: what not to reassemble. */
#define SF_PROTO_NO_ISOTP       0x01u
#define SF_PROTO_NO_ISOTP_AUTO  0x02u   /* only the named pairs: not the OBD-II / UDS ids
                                           found by themselves (0x7DF, 0x7E0-0x7EF,
                                           0x18DA/0x18DB normal fixed addressing) */
#define SF_PROTO_NO_J1939       0x04u

/* Default timers (ms): ISO 15765-2 N_Cr; SAE J1939-21 T1..T4. The fast-packet gap has no
 * number in what NMEA publishes: 750 ms, J1939's T1, is ours. */
#define SF_PROTO_N_CR_MS 1000u
#define SF_PROTO_T1_MS 750u
#define SF_PROTO_T2_MS 1250u
#define SF_PROTO_T3_MS 1250u
#define SF_PROTO_T4_MS 1050u
#define SF_PROTO_FAST_MS 750u

#define SF_J1939_TP_MAX 1785u   /* 255 packets of 7 bytes */
#define SF_FAST_MAX 223u        /* 6 + 31 * 7 */

struct sf_proto_session;

/* Zero-initialised means: ISO-TP (the OBD-II/UDS ids) and J1939 TP on, no fast-packet
 * PGN, the standard timers. */
struct sf_proto_config {
    struct sf_proto_session *sessions;  /* the caller's table, nsessions entries (>= 1) */
    uint32_t nsessions;
    uint8_t *arena;                     /* payload bytes of open sessions */
    uint32_t arena_size;
    uint32_t off;                       /* SF_PROTO_NO_* */
    const struct sf_isotp_pair *isotp_pairs;  /* read at every frame: keep it alive */
    uint32_t n_isotp_pairs;
    const uint32_t *fast_pgns;          /* NMEA 2000 PGNs sent as fast packets */
    uint32_t n_fast_pgns;
    uint32_t n_cr_ms, t1_ms, t2_ms, t3_ms, t4_ms, fast_ms;   /* 0: the default above */
    uint8_t report_ff;                  /* nonzero: SF_PROTO_EV_FF events */
};

/* A message (or an SF_PROTO_EV_FF event). */
struct sf_proto_msg {
    uint8_t event;              /* enum sf_proto_event */
    uint8_t proto;              /* enum sf_proto_kind */
    uint8_t status;             /* enum sf_proto_status */
    uint8_t channel;
    uint8_t mode;               /* ISO-TP: enum sf_isotp_mode */
    uint8_t addr;               /* ISO-TP extended/mixed: the first data byte */
    uint8_t sa, da;             /* J1939 / fast packet; ISO-TP 0x18DA/0x18DB: from the id */
    uint8_t prio;               /* J1939 / fast packet: priority */
    uint8_t fd;                 /* ISO-TP: the first frame was a CAN FD frame */
    uint32_t id;                /* the id the data came on (J1939: the TP.CM's) */
    uint32_t flags;             /* SF_CAN_EFF for a 29-bit id */
    uint32_t fc_id;             /* ISO-TP: the id flow control goes on (0: unknown) */
    uint32_t pgn;               /* J1939: the PGN carried; fast packet: its PGN */
    uint64_t first_ts, last_ts; /* first and last frame of the message */
    uint32_t length;            /* payload bytes */
    uint32_t declared;          /* the length the first frame announced */
    uint32_t frames;            /* data frames that carried it */
    const uint8_t *payload;     /* caller memory, valid until the next feed/expire/finish */
};

/* Counters. Frames: every frame fed counts once in `frames` and, if it belongs to a
 * protocol, in that protocol's kind counter; each damage counter counts events. */
struct sf_proto_stats {
    uint64_t frames;            /* frames fed */
    uint64_t messages_ok;       /* SF_MSG_OK messages queued */
    uint64_t messages_broken;   /* other statuses queued */
    uint64_t no_session;        /* sessions refused: every slot open */
    uint64_t no_memory;         /* sessions refused: no room in the arena */
    uint64_t not_taken;         /* messages dropped because sf_proto_next did not take them */
    uint64_t timeouts;          /* sessions ended by a timer (any protocol) */
    uint64_t replaced;          /* sessions ended by a new first frame */
    uint64_t ended;             /* sessions open at sf_proto_finish */
    /* ISO-TP */
    uint64_t isotp_sf, isotp_ff, isotp_cf, isotp_fc;
    uint64_t isotp_bad_pci;     /* unknown PCI, impossible lengths, FS > 2 */
    uint64_t isotp_orphan_cf;   /* CF without an open session */
    uint64_t isotp_wrong_sn;    /* CF with a sequence number neither expected nor repeated */
    uint64_t isotp_dup_cf;      /* CF repeating the previous sequence number */
    uint64_t isotp_short_cf;    /* CF with fewer bytes than the session's frame size
                                   (ignored) */
    uint64_t isotp_overflow;    /* FC OVFLW ending a session */
    /* J1939 transport */
    uint64_t j1939_cm, j1939_dt;
    uint64_t j1939_bad_cm;      /* TP.CM with a size/packet count that does not agree */
    uint64_t j1939_orphan;      /* TP.DT or CTS without an open session */
    uint64_t j1939_wrong_seq, j1939_dup_dt;
    uint64_t j1939_short_dt;    /* TP.DT with fewer bytes than the message still needs */
    uint64_t j1939_abort;       /* Connection Abort ending a session */
    /* NMEA 2000 fast packets */
    uint64_t fast_frames;
    uint64_t fast_bad_len;      /* a first frame announcing more than 223 bytes */
    uint64_t fast_orphan;       /* a later frame without an open session of its sequence */
    uint64_t fast_wrong_seq, fast_dup;
};

/* One session. Private fields; sized by the caller's array. */
struct sf_proto_session {
    uint8_t state, proto, channel, addr;
    uint8_t mode, seq, status, sub;
    uint8_t sa, da, prio, fseq;
    uint8_t last_pkt, window_end, fd, pad_;
    uint8_t bs, in_block;       /* ISO-TP: the last flow control's block size, CFs since */
    uint8_t pad2_[2];
    uint32_t id;                /* the key the protocol file chose */
    uint32_t can_id;            /* the first frame's id; bit 31: 29-bit */
    uint32_t fc_id, pgn;
    uint32_t off, cap;          /* arena extent */
    uint32_t have, declared, frames, unit;
    uint32_t order;             /* queue position when handed out, else 0 */
    uint64_t first_ts, last_ts, deadline;
};

/* The context. Private fields; use the functions. */
struct sf_proto {
    struct sf_proto_config cfg;
    uint64_t n_cr, t1, t2, t3, t4, fast;   /* ns */
    uint64_t next_deadline;                /* the earliest open session's, or ~0 */
    uint32_t order;                        /* queue counter */
    uint32_t queued;                       /* messages queued, not yet taken */
    uint32_t held;                         /* queued since the last release */
    struct sf_proto_msg extra[2];          /* a single frame's message, an FF event */
    uint32_t extra_order[2];
    uint8_t single[64];                    /* the single frame's payload */
    struct sf_proto_stats stats;
};

/* Set up; the session table is cleared. SF_EINVAL: no sessions, or a NULL arena with a
 * size. */
int sf_proto_init(struct sf_proto *p, const struct sf_proto_config *cfg);
/* Take one frame; returns how many messages/events sf_proto_next now hands out, or
 * SF_EINVAL for a frame longer than 64 bytes (not taken). Error frames and remote
 * requests are not protocol frames. */
int sf_proto_feed(struct sf_proto *p, const struct sf_proto_frame *f);
/* The next message or event in the order they ended: 1 and *m filled, or 0. */
int sf_proto_next(struct sf_proto *p, struct sf_proto_msg *m);
/* End sessions whose timer ran out by `now` (ns) without a frame; returns as feed. */
int sf_proto_expire(struct sf_proto *p, uint64_t now);
/* The log ended: every open session is handed out with SF_MSG_END. */
int sf_proto_finish(struct sf_proto *p);
const struct sf_proto_stats *sf_proto_stats(const struct sf_proto *p);

/* J1939 fields of a 29-bit id (SAE J1939-21): PDU1 (PF < 240) carries a destination
 * address in PS and its PGN has PS = 0; PDU2 is broadcast (da = 0xFF) with PS in the PGN. */
struct sf_j1939_id {
    uint32_t pgn;
    uint8_t prio, sa, da;
};
void sf_j1939_split(uint32_t id, struct sf_j1939_id *out);

/* Name of a status or protocol, for printing ("ok", "timeout"...; "isotp", "j1939",
 * "fast"). */
const char *sf_proto_status_name(int status);
const char *sf_proto_kind_name(int proto);

#ifdef __cplusplus
}
#endif

#endif
