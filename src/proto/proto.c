/* The reassembly's entry points (include/streamfat/proto.h): set up, feed a frame to the
 * protocol it belongs to, hand out what ended, run the timers on the frames' times. */
#include "proto_impl.h"
#include <string.h>

#define MS 1000000ull

static uint64_t ms_or(uint32_t ms, uint32_t dflt)
{
    return (uint64_t)(ms ? ms : dflt) * MS;
}

int sf_proto_init(struct sf_proto *p, const struct sf_proto_config *cfg)
{
    if (!cfg || !cfg->sessions || !cfg->nsessions || (!cfg->arena && cfg->arena_size) ||
        (!cfg->isotp_pairs && cfg->n_isotp_pairs) || (!cfg->fast_pgns && cfg->n_fast_pgns))
        return SF_EINVAL;
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    memset(cfg->sessions, 0, sizeof *cfg->sessions * cfg->nsessions);
    p->n_cr = ms_or(cfg->n_cr_ms, SF_PROTO_N_CR_MS);
    p->t1 = ms_or(cfg->t1_ms, SF_PROTO_T1_MS);
    p->t2 = ms_or(cfg->t2_ms, SF_PROTO_T2_MS);
    p->t3 = ms_or(cfg->t3_ms, SF_PROTO_T3_MS);
    p->t4 = ms_or(cfg->t4_ms, SF_PROTO_T4_MS);
    p->fast = ms_or(cfg->fast_ms, SF_PROTO_FAST_MS);
    p->next_deadline = UINT64_MAX;
    return 0;
}

/* What was handed out before is no longer needed: free its slot and bytes. */
static void release(struct sf_proto *p)
{
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++)
        if (s->state == SESS_DONE) {
            if (s->order)
                p->stats.not_taken++;
            s->state = SESS_FREE;
            s->order = 0;
        }
    for (int i = 0; i < 2; i++)
        if (p->extra_order[i]) {
            p->stats.not_taken++;
            p->extra_order[i] = 0;
        }
    p->queued = 0;
    p->held = 0;
}

static void expire(struct sf_proto *p, uint64_t now)
{
    if (now <= p->next_deadline)
        return;
    uint64_t next = UINT64_MAX;
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++) {
        if (s->state != SESS_OPEN)
            continue;
        if (now > s->deadline)
            sf_proto_close(p, s, SF_MSG_TIMEOUT);
        else if (s->deadline < next)
            next = s->deadline;
    }
    p->next_deadline = next;
}

int sf_proto_feed(struct sf_proto *p, const struct sf_proto_frame *f)
{
    if (f->len > 64 || (f->len && !f->data))
        return SF_EINVAL;
    /* Handed-out payloads stay valid until now (proto.h); the scan only when some were. */
    if (p->held)
        release(p);
    p->stats.frames++;
    expire(p, f->ts);
    if (f->flags & (SF_CAN_ERR | SF_CAN_RTR))
        return (int)p->queued;
    if (!(p->cfg.off & SF_PROTO_NO_ISOTP) && sf_isotp_frame(p, f))
        return (int)p->queued;
    if (f->flags & SF_CAN_EFF) {
        if (!(p->cfg.off & SF_PROTO_NO_J1939) && sf_j1939_frame(p, f))
            return (int)p->queued;
        if (p->cfg.n_fast_pgns)
            sf_fast_frame(p, f);
    }
    return (int)p->queued;
}

int sf_proto_next(struct sf_proto *p, struct sf_proto_msg *m)
{
    if (!p->queued)
        return 0;
    /* the lowest queue position among the done sessions and the extra slots */
    uint32_t best = UINT32_MAX;
    struct sf_proto_session *bs = NULL;
    int bx = -1;
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++)
        if (s->state == SESS_DONE && s->order && s->order < best) {
            best = s->order;
            bs = s;
        }
    for (int i = 0; i < 2; i++)
        if (p->extra_order[i] && p->extra_order[i] < best) {
            best = p->extra_order[i];
            bx = i;
            bs = NULL;
        }
    if (bx >= 0) {
        *m = p->extra[bx];
        p->extra_order[bx] = 0;
    } else if (bs) {
        sf_proto_fill(p, bs, m);
        bs->order = 0;
    } else {
        return 0;
    }
    p->queued--;
    return 1;
}

int sf_proto_expire(struct sf_proto *p, uint64_t now)
{
    if (p->held)
        release(p);
    expire(p, now);
    return (int)p->queued;
}

int sf_proto_finish(struct sf_proto *p)
{
    if (p->held)
        release(p);
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++)
        if (s->state == SESS_OPEN)
            sf_proto_close(p, s, SF_MSG_END);
    p->next_deadline = UINT64_MAX;
    return (int)p->queued;
}

const struct sf_proto_stats *sf_proto_stats(const struct sf_proto *p)
{
    return &p->stats;
}

void sf_j1939_split(uint32_t id, struct sf_j1939_id *out)
{
    uint32_t dp = (id >> 24) & 3u, pf = (id >> 16) & 0xFFu, ps = (id >> 8) & 0xFFu;
    out->prio = (uint8_t)((id >> 26) & 7u);
    out->sa = (uint8_t)(id & 0xFFu);
    if (pf < 240) {
        out->da = (uint8_t)ps;
        out->pgn = dp << 16 | pf << 8;
    } else {
        out->da = 0xFF;
        out->pgn = dp << 16 | pf << 8 | ps;
    }
}

const char *sf_proto_status_name(int status)
{
    static const char *const names[] = {"ok", "timeout", "bad_seq", "bad_length",
                                        "replaced", "aborted", "end"};
    return status >= 0 && status < (int)(sizeof names / sizeof names[0]) ? names[status]
                                                                          : "unknown";
}

const char *sf_proto_kind_name(int proto)
{
    switch (proto) {
    case SF_PROTO_ISOTP: return "isotp";
    case SF_PROTO_J1939: return "j1939";
    case SF_PROTO_FAST: return "fast";
    default: return "unknown";
    }
}
