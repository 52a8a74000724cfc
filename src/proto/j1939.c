/* The J1939 transport protocol (SAE J1939-21): TP.CM (PGN 0xEC00: RTS, CTS, EndOfMsgAck,
 * BAM, Connection Abort) and TP.DT (PGN 0xEB00), one session per channel and
 * source/destination pair, up to 1,785 bytes. ETP (PGNs 0xC800/0xC700, more than 1,785
 * bytes) is left out: its frames are not taken.
 *
 * A reader sees both directions, so the data decide: a TP.DT with the expected packet
 * number is taken even when the CTS that asked for it is not in the log (a filtered
 * logger); a CTS asking for an earlier packet (a retransmission) rolls the message back to
 * that packet. The message is handed out at its last TP.DT; EndOfMsgAck only confirms.
 *
 * Rules (proto.h: broken messages):
 *   TP.CM RTS/BAM whose size is outside 9..1785 or whose packet count is not
 *     ceil(size / 7); an unknown control byte          bad_cm, ignored
 *   RTS or BAM while the pair's session is open        the open one ends SF_MSG_REPLACED
 *   TP.DT or CTS without a session                     orphan
 *   TP.DT repeating the previous packet number         dup_dt, ends SF_MSG_BAD_SEQ
 *   TP.DT with any other unexpected number, CTS asking for a packet beyond the next
 *                                                      wrong_seq, ends SF_MSG_BAD_SEQ
 *   TP.DT too short for what the message still needs  short_dt, ends SF_MSG_BAD_LENGTH
 *   Connection Abort by either side                    abort, ends SF_MSG_ABORTED
 *   timers, from the last frame of the session: T1 (750 ms) between TP.DTs, T2 (1250 ms)
 *     from a CTS to its data, T3 (1250 ms) from RTS or the last TP.DT of a CTS window to
 *     the next CTS, T4 (1050 ms) from a CTS holding the connection (0 packets) to the next
 *                                                      ends SF_MSG_TIMEOUT */
#include "proto_impl.h"

#define PF_CM 0xECu
#define PF_DT 0xEBu
enum { CM_RTS = 16, CM_CTS = 17, CM_EOMA = 19, CM_BAM = 32, CM_ABORT = 255 };
enum { SUB_BAM = 1, SUB_DATA = 2, SUB_WAIT_CTS = 3 };

static uint32_t pair_key(uint8_t sa, uint8_t da)
{
    return (uint32_t)sa << 8 | da;
}

static void announce(struct sf_proto *p, const struct sf_proto_frame *f,
                     const struct sf_j1939_id *j, int bam)
{
    const uint8_t *d = f->data;
    uint32_t size = d[1] | (uint32_t)d[2] << 8, pk = d[3];
    if (size < 9 || size > SF_J1939_TP_MAX || pk != (size + 6) / 7) {
        p->stats.j1939_bad_cm++;
        return;
    }
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da), 0);
    if (s)
        sf_proto_close(p, s, SF_MSG_REPLACED);
    s = sf_proto_open(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da), 0, size, f->ts,
                      bam ? p->t1 : p->t3);
    if (!s)
        return;
    s->sub = bam ? SUB_BAM : SUB_WAIT_CTS;
    s->seq = 1;
    s->last_pkt = (uint8_t)pk;
    s->window_end = (uint8_t)pk;
    s->sa = j->sa;
    s->da = j->da;
    s->prio = j->prio;
    s->can_id = (f->id & 0x1FFFFFFFu) | 0x80000000u;
    s->pgn = d[5] | (uint32_t)d[6] << 8 | (uint32_t)d[7] << 16;
}

static void clear_to_send(struct sf_proto *p, const struct sf_proto_frame *f,
                          const struct sf_j1939_id *j)
{
    /* from the responder (sa) to the originator (da) */
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->da, j->sa), 0);
    if (!s || s->sub == SUB_BAM) {
        p->stats.j1939_orphan++;
        return;
    }
    uint8_t n = f->data[1], next = f->data[2];
    if (!n) {
        s->sub = SUB_WAIT_CTS;
        sf_proto_arm(p, s, f->ts + p->t4);
        return;
    }
    if (!next || next > s->seq) {
        p->stats.j1939_wrong_seq++;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return;
    }
    s->have = (uint32_t)(next - 1u) * 7u;   /* a retransmission starts over from there */
    s->seq = next;
    uint32_t end = (uint32_t)next + n - 1u;
    s->window_end = (uint8_t)(end < s->last_pkt ? end : s->last_pkt);
    s->sub = SUB_DATA;
    sf_proto_arm(p, s, f->ts + p->t2);
}

static void abort_session(struct sf_proto *p, const struct sf_proto_frame *f,
                          const struct sf_j1939_id *j)
{
    uint32_t pgn = f->data[5] | (uint32_t)f->data[6] << 8 | (uint32_t)f->data[7] << 16;
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da), 0);
    if (!s || s->pgn != pgn)
        s = sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->da, j->sa), 0);
    if (s && s->pgn == pgn) {
        p->stats.j1939_abort++;
        sf_proto_close(p, s, SF_MSG_ABORTED);
    }
}

static void data(struct sf_proto *p, const struct sf_proto_frame *f,
                 const struct sf_j1939_id *j)
{
    p->stats.j1939_dt++;
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da), 0);
    if (!s || !f->len) {
        p->stats.j1939_orphan++;
        return;
    }
    uint8_t pk = f->data[0];
    if (pk != s->seq) {
        if (s->seq > 1 && pk == s->seq - 1u)
            p->stats.j1939_dup_dt++;
        else
            p->stats.j1939_wrong_seq++;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return;
    }
    uint32_t need = s->declared - s->have;
    if (need > 7)
        need = 7;
    if ((uint32_t)f->len - 1u < need) {
        p->stats.j1939_short_dt++;
        sf_proto_close(p, s, SF_MSG_BAD_LENGTH);
        return;
    }
    sf_proto_append(p, s, f->data + 1, need, f->ts);
    s->seq++;
    if (s->have == s->declared)
        sf_proto_close(p, s, SF_MSG_OK);
    else if (s->sub != SUB_BAM && pk == s->window_end) {
        s->sub = SUB_WAIT_CTS;
        sf_proto_arm(p, s, f->ts + p->t3);
    } else
        sf_proto_arm(p, s, f->ts + p->t1);
}

int sf_j1939_frame(struct sf_proto *p, const struct sf_proto_frame *f)
{
    uint32_t pf = (f->id >> 16) & 0x3FFu;   /* EDP, DP and PF: 0 and 0 for TP */
    if (pf != PF_CM && pf != PF_DT)
        return 0;
    struct sf_j1939_id j;
    sf_j1939_split(f->id, &j);
    if (pf == PF_DT) {
        data(p, f, &j);
        return 1;
    }
    p->stats.j1939_cm++;
    if (f->len < 8) {
        p->stats.j1939_bad_cm++;
        return 1;
    }
    switch (f->data[0]) {
    case CM_RTS: announce(p, f, &j, 0); break;
    case CM_BAM: announce(p, f, &j, 1); break;
    case CM_CTS: clear_to_send(p, f, &j); break;
    case CM_EOMA: break;
    case CM_ABORT: abort_session(p, f, &j); break;
    default: p->stats.j1939_bad_cm++; break;
    }
    return 1;
}
