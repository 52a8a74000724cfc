/* ISO-TP receive (ISO 15765-2:2016): single, first, consecutive and flow-control frames,
 * classic CAN and CAN FD, normal, normal fixed, extended and mixed addressing, the 32-bit
 * first-frame length escape. One state machine per session, keyed by channel, data id
 * and (extended/mixed) the address byte; the live poll client feeds the same code and
 * answers SF_PROTO_EV_FF events with its flow control.
 *
 * Which frames are ISO-TP: the pairs the user names, and (unless SF_PROTO_NO_ISOTP_AUTO)
 * the OBD-II / UDS ids that say so themselves: 0x7DF (functional), 0x7E0-0x7E7 requests
 * answered on id + 8, and the 29-bit normal fixed addressing PGNs 0xDA00 (physical: TA in
 * PS, SA in the low byte, answered with the two swapped) and 0xDB00 (functional), any
 * priority.
 *
 * Rules for what does not follow the standard (proto.h: broken messages):
 *   SF / FF with an impossible length (SF_DL 0 or beyond the frame, FF_DL not above what
 *     the FF carries, a truncated escape), an SF in a frame of more than 8 bytes without
 *     the escape, an FF shorter than 8 bytes or of a length no CAN FD DLC gives
 *                                                bad_pci, ignored
 *   SF or FF while a session is open             the open one ends SF_MSG_REPLACED
 *   CF without a session                         orphan_cf
 *   CF with the previous SN again                dup_cf, the session ends SF_MSG_BAD_SEQ
 *   CF with any other unexpected SN              wrong_sn, the session ends SF_MSG_BAD_SEQ
 *   CF with fewer bytes than the FF's frame size (or than what remains)
 *                                                short_cf, ignored: the session waits
 *                                                for that SN again (the standard's rule
 *                                                for CAN FD, here for classic CAN too)
 *   no CF within N_Cr of the FF, the last CF or an FC (WAIT)  ends SF_MSG_TIMEOUT
 *   FC with FS OVFLW                             overflow, the session it answers ends
 *                                                SF_MSG_ABORTED; FS > 2: bad_pci
 * These are the rules of can-isotp 2.0.7's receiver too (t_proto_isotp_ref), but for a
 * short classic CF, which it takes as it is. */
#include "proto_impl.h"
#include <string.h>

#define EFF_BIT 0x80000000u

/* The addressing of a frame's id, or 0 if the id is not ISO-TP. */
static int classify(const struct sf_proto *p, const struct sf_proto_frame *f, uint32_t key,
                    uint8_t *mode, uint32_t *partner)
{
    const struct sf_isotp_pair *q = p->cfg.isotp_pairs;
    for (uint32_t i = 0; i < p->cfg.n_isotp_pairs; i++, q++) {
        uint32_t a = q->id_a | (q->eff ? EFF_BIT : 0), b = q->id_b | (q->eff ? EFF_BIT : 0);
        if ((key != a && key != b) ||
            (q->channel != SF_PROTO_ANY_CHANNEL && q->channel != f->channel))
            continue;
        *mode = q->mode;
        *partner = key == a ? b : a;
        return 1;
    }
    if (p->cfg.off & SF_PROTO_NO_ISOTP_AUTO)
        return 0;
    *mode = SF_ISOTP_NORMAL;
    if (!(key & EFF_BIT)) {
        if (key == 0x7DF) {
            *partner = 0;
            return 1;
        }
        if (key >= 0x7E0 && key <= 0x7EF) {
            *partner = key ^ 8u;
            return 1;
        }
        return 0;
    }
    uint32_t pf = (key >> 16) & 0x3FFu;   /* EDP, DP and PF */
    if (pf == 0xDA) {
        *partner = (key & 0xFFFF0000u) | (key & 0xFFu) << 8 | ((key >> 8) & 0xFFu);
        return 1;
    }
    if (pf == 0xDB) {
        *partner = 0;
        return 1;
    }
    return 0;
}

/* A frame length a first frame may have: 8, or a CAN FD DLC's length above 8. */
static int dlc_length(uint8_t len)
{
    return len == 8 || len == 12 || len == 16 || len == 20 || len == 24 || len == 32 ||
           len == 48 || len == 64;
}

static void single(struct sf_proto *p, const struct sf_proto_frame *f, uint32_t key,
                   uint8_t mode, uint32_t partner, uint8_t addr, const uint8_t *d,
                   uint32_t n)
{
    struct sf_proto_msg *m = &p->extra[0];
    memset(m, 0, sizeof *m);
    memcpy(p->single, d, n);
    m->event = SF_PROTO_EV_MESSAGE;
    m->proto = SF_PROTO_ISOTP;
    m->status = SF_MSG_OK;
    m->channel = f->channel;
    m->mode = mode;
    m->addr = addr;
    m->fd = (f->flags & SF_CAN_FD) != 0;
    m->id = key & ~EFF_BIT;
    m->flags = key & EFF_BIT ? SF_CAN_EFF : 0;
    m->fc_id = partner & ~EFF_BIT;
    if ((key & EFF_BIT) && ((key >> 16) & 0xFEu) == 0xDA) {
        m->sa = (uint8_t)key;
        m->da = (uint8_t)(key >> 8);
    }
    m->first_ts = m->last_ts = f->ts;
    m->length = m->declared = n;
    m->frames = 1;
    m->payload = p->single;
    sf_proto_queue_extra(p, 0);
}

static void first(struct sf_proto *p, const struct sf_proto_frame *f, uint32_t key,
                  uint8_t mode, uint32_t partner, uint8_t addr, uint32_t dl, uint32_t start,
                  uint32_t off)
{
    struct sf_proto_session *s =
        sf_proto_open(p, SF_PROTO_ISOTP, f->channel, key, addr, dl, f->ts, p->n_cr);
    if (!s) {
        /* refused (counted by sf_proto_open): a live client must still answer the sender,
         * with OVFLW, or it would send its consecutive frames into nothing */
        if (p->cfg.report_ff) {
            struct sf_proto_msg *m = &p->extra[1];
            memset(m, 0, sizeof *m);
            m->event = SF_PROTO_EV_FF;
            m->proto = SF_PROTO_ISOTP;
            m->status = SF_MSG_ABORTED;
            m->channel = f->channel;
            m->mode = mode;
            m->addr = addr;
            m->id = key & ~EFF_BIT;
            m->flags = key & EFF_BIT ? SF_CAN_EFF : 0;
            m->fc_id = partner & ~EFF_BIT;
            m->first_ts = m->last_ts = f->ts;
            m->length = f->len - start;
            m->declared = dl;
            m->frames = 1;
            memcpy(p->single, f->data + start, m->length);   /* no SF in this frame */
            m->payload = p->single;
            sf_proto_queue_extra(p, 1);
        }
        return;
    }
    s->mode = mode;
    s->can_id = key;
    s->fc_id = partner & ~EFF_BIT;
    s->fd = (f->flags & SF_CAN_FD) != 0;
    s->seq = 1;
    s->unit = f->len - off - 1u;
    if ((key & EFF_BIT) && ((key >> 16) & 0xFEu) == 0xDA) {
        s->sa = (uint8_t)key;
        s->da = (uint8_t)(key >> 8);
    }
    sf_proto_append(p, s, f->data + start, f->len - start, f->ts);
    if (p->cfg.report_ff) {
        sf_proto_fill(p, s, &p->extra[1]);
        p->extra[1].event = SF_PROTO_EV_FF;
        sf_proto_queue_extra(p, 1);
    }
}

static void consecutive(struct sf_proto *p, const struct sf_proto_frame *f,
                        struct sf_proto_session *s, uint32_t off)
{
    uint8_t sn = f->data[off] & 0xFu;
    if (sn != s->seq) {
        if (s->frames >= 2 && sn == ((s->seq - 1u) & 0xFu))
            p->stats.isotp_dup_cf++;
        else
            p->stats.isotp_wrong_sn++;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return;
    }
    uint32_t need = s->declared - s->have;
    if (need > s->unit)
        need = s->unit;
    if ((uint32_t)f->len - off - 1u < need) {
        p->stats.isotp_short_cf++;
        return;
    }
    sf_proto_append(p, s, f->data + off + 1, need, f->ts);
    s->seq = (uint8_t)((s->seq + 1u) & 0xFu);
    if (s->have == s->declared) {
        sf_proto_close(p, s, SF_MSG_OK);
        return;
    }
    sf_proto_arm(p, s, f->ts + p->n_cr);
    if (s->bs && ++s->in_block == s->bs) {
        /* the sender now waits for the next flow control (ISO 15765-2 BS) */
        s->in_block = 0;
        if (p->cfg.report_ff) {
            sf_proto_fill(p, s, &p->extra[1]);
            p->extra[1].event = SF_PROTO_EV_BLOCK;
            sf_proto_queue_extra(p, 1);
        }
    }
}

/* A flow control answers the session whose data flows on the partner id. */
static void flow_control(struct sf_proto *p, const struct sf_proto_frame *f,
                         uint32_t partner, uint8_t fs, uint8_t bs)
{
    if (!partner)
        return;
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++) {
        if (s->state != SESS_OPEN || s->proto != SF_PROTO_ISOTP ||
            s->channel != f->channel || s->id != partner)
            continue;
        if (fs == 2) {
            p->stats.isotp_overflow++;
            sf_proto_close(p, s, SF_MSG_ABORTED);
        } else {
            sf_proto_arm(p, s, f->ts + p->n_cr);
            if (fs == 0) {          /* CTS: a new block of BS frames (0: no limit) */
                s->bs = bs;
                s->in_block = 0;
            }
        }
        return;
    }
}

int sf_isotp_frame(struct sf_proto *p, const struct sf_proto_frame *f)
{
    uint32_t key = (f->id & 0x1FFFFFFFu) | (f->flags & SF_CAN_EFF ? EFF_BIT : 0);
    uint8_t mode;
    uint32_t partner;
    if (!classify(p, f, key, &mode, &partner))
        return 0;
    uint32_t off = mode == SF_ISOTP_NORMAL ? 0 : 1;
    const uint8_t *d = f->data;
    if (f->len < off + 1) {
        p->stats.isotp_bad_pci++;
        return 1;
    }
    uint8_t addr = off ? d[0] : 0;
    uint8_t pci = d[off] >> 4, nib = d[off] & 0xFu;
    struct sf_proto_session *s;
    switch (pci) {
    case 0: {
        uint32_t dl = nib, start = off + 1;
        if (!nib) {
            if (f->len < off + 2) {
                p->stats.isotp_bad_pci++;
                return 1;
            }
            dl = d[off + 1];
            start = off + 2;
        }
        if (!dl || start + dl > f->len || (nib && f->len > 8)) {
            p->stats.isotp_bad_pci++;
            return 1;
        }
        p->stats.isotp_sf++;
        if ((s = sf_proto_find(p, SF_PROTO_ISOTP, f->channel, key, addr)))
            sf_proto_close(p, s, SF_MSG_REPLACED);
        single(p, f, key, mode, partner, addr, d + start, dl);
        return 1;
    }
    case 1: {
        if (f->len < off + 2) {
            p->stats.isotp_bad_pci++;
            return 1;
        }
        uint32_t dl = (uint32_t)nib << 8 | d[off + 1], start = off + 2;
        if (!dl) {
            if (f->len < off + 6) {
                p->stats.isotp_bad_pci++;
                return 1;
            }
            dl = (uint32_t)d[off + 2] << 24 | (uint32_t)d[off + 3] << 16 |
                 (uint32_t)d[off + 4] << 8 | d[off + 5];
            start = off + 6;
        }
        if (dl <= (uint32_t)f->len - start || !dlc_length(f->len)) {
            p->stats.isotp_bad_pci++;
            return 1;
        }
        p->stats.isotp_ff++;
        if ((s = sf_proto_find(p, SF_PROTO_ISOTP, f->channel, key, addr)))
            sf_proto_close(p, s, SF_MSG_REPLACED);
        first(p, f, key, mode, partner, addr, dl, start, off);
        return 1;
    }
    case 2:
        p->stats.isotp_cf++;
        if ((s = sf_proto_find(p, SF_PROTO_ISOTP, f->channel, key, addr)))
            consecutive(p, f, s, off);
        else
            p->stats.isotp_orphan_cf++;
        return 1;
    case 3:
        p->stats.isotp_fc++;
        if (nib > 2)
            p->stats.isotp_bad_pci++;
        else
            flow_control(p, f, partner, nib, f->len > off + 1 ? d[off + 1] : 0);
        return 1;
    default:
        p->stats.isotp_bad_pci++;
        return 1;
    }
}
