/* NMEA 2000 fast packets (IEC 61162-3): a message of up to 223 bytes in up to 32 frames of
 * one PGN, for the PGNs the caller names (nothing in a frame says it is one). Data byte 0
 * holds the sequence counter (bits 7-5, the same in every frame of a message) and the frame
 * counter (bits 4-0); frame 0 carries the length in byte 1 and 6 data bytes, the others 7.
 * One session per channel, PGN, source and destination.
 *
 * Rules (proto.h: broken messages):
 *   frame 0 announcing 0 or more than 223 bytes, or carrying fewer bytes than it must;
 *     a later frame too short for what remains      bad_len (a later frame: the session
 *                                                  ends SF_MSG_BAD_LENGTH)
 *   frame 0 while the session is open               the open one ends SF_MSG_REPLACED
 *   a later frame without a session, or of another sequence counter   orphan
 *   a later frame repeating the previous one (counter and bytes)   dup, ends SF_MSG_BAD_SEQ
 *   any other unexpected frame counter              wrong_seq, ends SF_MSG_BAD_SEQ
 *   no frame within cfg.fast_ms (750 ms)            ends SF_MSG_TIMEOUT */
#include "proto_impl.h"

static int named(const struct sf_proto *p, uint32_t pgn)
{
    for (uint32_t i = 0; i < p->cfg.n_fast_pgns; i++)
        if (p->cfg.fast_pgns[i] == pgn)
            return 1;
    return 0;
}

static void start(struct sf_proto *p, const struct sf_proto_frame *f,
                  const struct sf_j1939_id *j, uint32_t key, uint8_t seq)
{
    uint32_t dl = f->len >= 2 ? f->data[1] : 0, need = dl < 6 ? dl : 6;
    if (!dl || dl > SF_FAST_MAX || (uint32_t)f->len < 2u + need) {
        p->stats.fast_bad_len++;
        return;
    }
    struct sf_proto_session *s = sf_proto_find(p, SF_PROTO_FAST, f->channel, key, j->sa);
    if (s)
        sf_proto_close(p, s, SF_MSG_REPLACED);
    s = sf_proto_open(p, SF_PROTO_FAST, f->channel, key, j->sa, dl, f->ts, p->fast);
    if (!s)
        return;
    s->fseq = seq;
    s->seq = 1;
    s->sa = j->sa;
    s->da = j->da;
    s->prio = j->prio;
    s->pgn = j->pgn;
    s->can_id = (f->id & 0x1FFFFFFFu) | 0x80000000u;
    sf_proto_append(p, s, f->data + 2, need, f->ts);
    if (s->have == s->declared)
        sf_proto_close(p, s, SF_MSG_OK);
}

static void more(struct sf_proto *p, const struct sf_proto_frame *f,
                 const struct sf_j1939_id *j, uint32_t key, uint8_t seq, uint8_t fc)
{
    struct sf_proto_session *s = sf_proto_find(p, SF_PROTO_FAST, f->channel, key, j->sa);
    if (!s || s->fseq != seq) {
        p->stats.fast_orphan++;
        return;
    }
    switch (sf_proto_take_packet(p, s, f, fc, 1)) {
    case TAKE_DUP: p->stats.fast_dup++; break;
    case TAKE_WRONG: p->stats.fast_wrong_seq++; break;
    case TAKE_SHORT: p->stats.fast_bad_len++; break;
    case TAKE_DONE: break;
    case TAKE_MORE: sf_proto_arm(p, s, f->ts + p->fast); break;
    }
}

int sf_fast_frame(struct sf_proto *p, const struct sf_proto_frame *f)
{
    struct sf_j1939_id j;
    sf_j1939_split(f->id, &j);
    if (!named(p, j.pgn))
        return 0;
    p->stats.fast_frames++;
    if (!f->len) {
        p->stats.fast_bad_len++;
        return 1;
    }
    uint32_t key = j.pgn | (uint32_t)j.da << 24;
    uint8_t seq = f->data[0] >> 5, fc = f->data[0] & 0x1Fu;
    if (!fc)
        start(p, f, &j, key, seq);
    else
        more(p, f, &j, key, seq, fc);
    return 1;
}
