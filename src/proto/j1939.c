/* The J1939 transport protocols (SAE J1939-21): TP.CM (PGN 0xEC00: RTS, CTS, EndOfMsgAck,
 * BAM, Connection Abort) and TP.DT (PGN 0xEB00), up to 1,785 bytes; and the extended
 * transport ETP.CM (0xC800: RTS, CTS, DPO, EndOfMsgAck, Connection Abort) and ETP.DT
 * (0xC700), destination-specific only, 1,786 to 117,440,505 bytes. One session per
 * channel, source/destination pair and protocol (TP and ETP are distinct connections).
 *
 * A reader sees both directions, so the data decide: a TP.DT with the expected packet
 * number is taken even when the CTS that asked for it is not in the log (a filtered
 * logger); a CTS asking for an earlier packet (a retransmission) rolls the message back to
 * that packet. The message is handed out at its last TP.DT; EndOfMsgAck only confirms.
 * ETP.DT numbers its packets 1..255 from the offset of the Data Packet Offset (DPO) that
 * opened the window, so an ETP.DT is placed by its DPO: the DPO's offset must be the
 * packets already taken (or fewer: a retransmission rolls back to it), and ETP.DTs without
 * a DPO before them since the last window ended are wrong sequence numbers.
 *
 * Rules (proto.h: broken messages):
 *   TP.CM RTS/BAM whose size is outside 9..1785 or whose packet count is not
 *     ceil(size / 7); ETP RTS whose size is outside 1786..117440505; a DPO for 0
 *     packets; an unknown control byte                bad_cm, ignored
 *   RTS or BAM while the pair's session is open        the open one ends SF_MSG_REPLACED
 *   TP.DT, CTS or DPO without a session                orphan
 *   (E)TP.DT repeating the previous packet (its number and its bytes: ETP numbers
 *     restart in every window)                         dup_dt, ends SF_MSG_BAD_SEQ
 *   TP.DT with any other unexpected number, CTS or DPO asking for a packet beyond the
 *     next, ETP.DT before a DPO                        wrong_seq, ends SF_MSG_BAD_SEQ
 *   TP.DT too short for what the message still needs  short_dt, ends SF_MSG_BAD_LENGTH
 *   Connection Abort by either side                    abort, ends SF_MSG_ABORTED
 *   timers, from the last frame of the session: T1 (750 ms) between TP.DTs (and from a
 *     DPO to its first), T2 (1250 ms) from a CTS to its data (ETP: to the DPO), T3 (1250
 *     ms) from RTS or the last TP.DT of a CTS window to the next CTS, T4 (1050 ms) from a
 *     CTS holding the connection (0 packets) to the next
 *                                                      ends SF_MSG_TIMEOUT
 *
 * Fields of a J1939 session beyond the common ones: seq the next packet number (TP: of
 * the message, ETP: of the window, 1..255), window_end the last packet number of the
 * window, last_pkt the message's last packet (TP), unit the DPO's offset (ETP). */
#include "proto_impl.h"

#define PF_CM 0xECu
#define PF_DT 0xEBu
#define PF_ETP_CM 0xC8u
#define PF_ETP_DT 0xC7u
#define ETP_MAX (7u * 0xFFFFFFu)
enum { CM_RTS = 16, CM_CTS = 17, CM_EOMA = 19, CM_BAM = 32, CM_ABORT = 255 };
enum { ETP_RTS = 20, ETP_CTS = 21, ETP_DPO = 22, ETP_EOMA = 23 };
enum { SUB_BAM = 1, SUB_DATA = 2, SUB_WAIT_CTS = 3, SUB_WAIT_DPO = 4 };

/* Session key: the pair, and bit 16 for ETP (a TP and an ETP connection of one pair are
 * two sessions). */
static uint32_t pair_key(uint8_t sa, uint8_t da, int etp)
{
    return (uint32_t)etp << 16 | (uint32_t)sa << 8 | da;
}

static uint32_t le24(const uint8_t *d)
{
    return d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16;
}

/* Packets of 7 bytes already taken: the next packet number of the message is this + 1. */
static uint32_t packets_taken(const struct sf_proto_session *s)
{
    return s->have / 7u;
}

/* TP RTS / BAM, or ETP RTS (etp) */
static void announce(struct sf_proto *p, const struct sf_proto_frame *f,
                     const struct sf_j1939_id *j, int bam, int etp)
{
    const uint8_t *d = f->data;
    uint32_t size, pk;
    if (etp) {
        size = d[1] | (uint32_t)d[2] << 8 | (uint32_t)d[3] << 16 | (uint32_t)d[4] << 24;
        pk = 0;   /* ETP numbers packets per window */
        if (size <= SF_J1939_TP_MAX || size > ETP_MAX) {
            p->stats.j1939_bad_cm++;
            return;
        }
    } else {
        size = d[1] | (uint32_t)d[2] << 8;
        pk = d[3];
        if (size < 9 || size > SF_J1939_TP_MAX || pk != (size + 6) / 7) {
            p->stats.j1939_bad_cm++;
            return;
        }
    }
    uint32_t key = pair_key(j->sa, j->da, etp);
    struct sf_proto_session *s = sf_proto_find(p, SF_PROTO_J1939, f->channel, key, 0);
    if (s)
        sf_proto_close(p, s, SF_MSG_REPLACED);
    s = sf_proto_open(p, SF_PROTO_J1939, f->channel, key, 0, size, f->ts,
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
    s->pgn = le24(d + 5);
}

static void clear_to_send(struct sf_proto *p, const struct sf_proto_frame *f,
                          const struct sf_j1939_id *j, int etp)
{
    /* from the responder (sa) to the originator (da) */
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->da, j->sa, etp), 0);
    if (!s || s->sub == SUB_BAM) {
        p->stats.j1939_orphan++;
        return;
    }
    uint8_t n = f->data[1];
    uint32_t next = etp ? le24(f->data + 2) : f->data[2];
    if (!n) {
        s->sub = SUB_WAIT_CTS;
        sf_proto_arm(p, s, f->ts + p->t4);
        return;
    }
    if (!next || next > packets_taken(s) + 1u) {
        p->stats.j1939_wrong_seq++;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return;
    }
    s->have = (next - 1u) * 7u;   /* a retransmission starts over from there */
    if (etp) {
        s->sub = SUB_WAIT_DPO;    /* the DPO places the window */
    } else {
        s->seq = (uint8_t)next;
        uint32_t end = next + n - 1u;
        s->window_end = (uint8_t)(end < s->last_pkt ? end : s->last_pkt);
        s->sub = SUB_DATA;
    }
    sf_proto_arm(p, s, f->ts + p->t2);
}

/* ETP Data Packet Offset, from the originator: the next window is packets offset + 1 ..
 * offset + n, its ETP.DTs numbered 1..n. */
static void packet_offset(struct sf_proto *p, const struct sf_proto_frame *f,
                          const struct sf_j1939_id *j)
{
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da, 1), 0);
    if (!s) {
        p->stats.j1939_orphan++;
        return;
    }
    uint8_t n = f->data[1];
    uint32_t off = le24(f->data + 2);
    if (!n) {
        p->stats.j1939_bad_cm++;
        return;
    }
    if (off > packets_taken(s)) {
        p->stats.j1939_wrong_seq++;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return;
    }
    s->have = off * 7u;
    s->unit = off;
    s->seq = 1;
    uint32_t left = (s->declared - s->have + 6u) / 7u;
    s->window_end = (uint8_t)(n < left ? n : left);
    s->sub = SUB_DATA;
    sf_proto_arm(p, s, f->ts + p->t1);
}

static void abort_session(struct sf_proto *p, const struct sf_proto_frame *f,
                          const struct sf_j1939_id *j, int etp)
{
    uint32_t pgn = le24(f->data + 5);
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da, etp), 0);
    if (!s || s->pgn != pgn)
        s = sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->da, j->sa, etp), 0);
    if (s && s->pgn == pgn) {
        p->stats.j1939_abort++;
        sf_proto_close(p, s, SF_MSG_ABORTED);
    }
}

static void data(struct sf_proto *p, const struct sf_proto_frame *f,
                 const struct sf_j1939_id *j, int etp)
{
    p->stats.j1939_dt++;
    struct sf_proto_session *s =
        sf_proto_find(p, SF_PROTO_J1939, f->channel, pair_key(j->sa, j->da, etp), 0);
    if (!s || !f->len) {
        p->stats.j1939_orphan++;
        return;
    }
    uint8_t pk = f->data[0];
    /* an ETP.DT outside a window (no DPO has placed it) is expected by no number */
    switch (sf_proto_take_packet(p, s, f, pk, !etp || s->sub == SUB_DATA)) {
    case TAKE_DUP: p->stats.j1939_dup_dt++; return;
    case TAKE_WRONG: p->stats.j1939_wrong_seq++; return;
    case TAKE_SHORT: p->stats.j1939_short_dt++; return;
    case TAKE_DONE: return;
    case TAKE_MORE: break;
    }
    if (s->sub != SUB_BAM && pk == s->window_end) {
        s->sub = SUB_WAIT_CTS;
        sf_proto_arm(p, s, f->ts + p->t3);
    } else
        sf_proto_arm(p, s, f->ts + p->t1);
}

int sf_j1939_frame(struct sf_proto *p, const struct sf_proto_frame *f)
{
    uint32_t pf = (f->id >> 16) & 0x3FFu;   /* EDP, DP and PF: 0 and 0 for (E)TP */
    int etp = pf == PF_ETP_CM || pf == PF_ETP_DT;
    if (pf != PF_CM && pf != PF_DT && !etp)
        return 0;
    struct sf_j1939_id j;
    sf_j1939_split(f->id, &j);
    if (pf == PF_DT || pf == PF_ETP_DT) {
        data(p, f, &j, etp);
        return 1;
    }
    p->stats.j1939_cm++;
    if (f->len < 8) {
        p->stats.j1939_bad_cm++;
        return 1;
    }
    switch (etp << 8 | f->data[0]) {
    case CM_RTS: announce(p, f, &j, 0, 0); break;
    case CM_BAM: announce(p, f, &j, 1, 0); break;
    case CM_CTS: clear_to_send(p, f, &j, 0); break;
    case CM_EOMA: break;
    case CM_ABORT: abort_session(p, f, &j, 0); break;
    case 1 << 8 | ETP_RTS: announce(p, f, &j, 0, 1); break;
    case 1 << 8 | ETP_CTS: clear_to_send(p, f, &j, 1); break;
    case 1 << 8 | ETP_DPO: packet_offset(p, f, &j); break;
    case 1 << 8 | ETP_EOMA: break;
    case 1 << 8 | CM_ABORT: abort_session(p, f, &j, 1); break;
    default: p->stats.j1939_bad_cm++; break;
    }
    return 1;
}
