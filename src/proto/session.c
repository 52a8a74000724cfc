/* The session table, the payload arena and the output queue of the reassembly
 * (include/streamfat/proto.h): what ISO-TP, J1939 TP and fast packets share, and the
 * packet take of the two that number 7-byte packets (J1939 TP.DT / ETP.DT, fast packets).
 *
 * Invariants: an open or done session owns arena[off, off + cap) and no two sessions'
 * extents overlap; a done session (a message queued for sf_proto_next) keeps its slot and
 * bytes until the next feed/expire/finish releases it, so the payload pointer stays valid
 * that long. p->next_deadline is never later than the earliest open session's deadline
 * (it may be earlier: a stale value only costs one scan). */
#include "proto_impl.h"
#include <string.h>

struct sf_proto_session *sf_proto_find(struct sf_proto *p, uint8_t proto, uint8_t channel,
                                       uint32_t id, uint8_t addr)
{
    struct sf_proto_session *s = p->cfg.sessions;
    for (uint32_t i = 0; i < p->cfg.nsessions; i++, s++)
        if (s->state == SESS_OPEN && s->proto == proto && s->channel == channel &&
            s->id == id && s->addr == addr)
            return s;
    return NULL;
}

/* First fit: the lowest offset (0 or the end of a held extent) where `len` bytes overlap no
 * held extent. Quadratic in the sessions, which are few; found once per session. */
static int arena_fit(const struct sf_proto *p, uint32_t len, uint32_t *off)
{
    const struct sf_proto_session *t = p->cfg.sessions;
    uint32_t n = p->cfg.nsessions;
    for (uint32_t c = 0; c <= n; c++) {
        uint32_t at;
        if (c == n)
            at = 0;
        else if (t[c].state != SESS_FREE && t[c].cap)
            at = t[c].off + t[c].cap;
        else
            continue;
        if (len > p->cfg.arena_size || at > p->cfg.arena_size - len)
            continue;
        int clash = 0;
        for (uint32_t j = 0; j < n && !clash; j++)
            clash = t[j].state != SESS_FREE && t[j].cap &&
                    at < t[j].off + t[j].cap && t[j].off < at + len;
        if (!clash) {
            *off = at;
            return 1;
        }
    }
    return 0;
}

struct sf_proto_session *sf_proto_open(struct sf_proto *p, uint8_t proto, uint8_t channel,
                                       uint32_t id, uint8_t addr, uint32_t declared,
                                       uint64_t ts, uint64_t timeout)
{
    struct sf_proto_session *s = NULL;
    for (uint32_t i = 0; i < p->cfg.nsessions && !s; i++)
        if (p->cfg.sessions[i].state == SESS_FREE)
            s = &p->cfg.sessions[i];
    if (!s) {
        p->stats.no_session++;
        return NULL;
    }
    uint32_t off = 0;
    if (declared && !arena_fit(p, declared, &off)) {
        p->stats.no_memory++;
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->state = SESS_OPEN;
    s->proto = proto;
    s->channel = channel;
    s->id = id;
    s->addr = addr;
    s->off = off;
    s->cap = declared;
    s->declared = declared;
    s->first_ts = s->last_ts = ts;
    sf_proto_arm(p, s, ts + timeout);
    return s;
}

void sf_proto_append(struct sf_proto *p, struct sf_proto_session *s, const uint8_t *d,
                     uint32_t n, uint64_t ts)
{
    if (n)
        memcpy(p->cfg.arena + s->off + s->have, d, n);
    s->have += n;
    s->frames++;
    s->last_ts = ts;
}

/* A repeat: the previous number again, carrying the bytes taken last (7 of them: only a
 * message's last packet is shorter, and after it the session is closed). The number alone
 * does not tell: ETP numbers restart in every window, so after a lost packet and a lost
 * DPO the next window's packets carry numbers the last one had. */
static int repeats(const struct sf_proto *p, const struct sf_proto_session *s,
                   const struct sf_proto_frame *f, uint8_t number)
{
    return s->seq > 1 && number == s->seq - 1u && s->have >= 7 && f->len >= 8 &&
           !memcmp(f->data + 1, p->cfg.arena + s->off + s->have - 7, 7);
}

enum sf_take sf_proto_take_packet(struct sf_proto *p, struct sf_proto_session *s,
                                  const struct sf_proto_frame *f, uint8_t number,
                                  int in_window)
{
    if (number != s->seq || !in_window) {
        enum sf_take t = repeats(p, s, f, number) ? TAKE_DUP : TAKE_WRONG;
        sf_proto_close(p, s, SF_MSG_BAD_SEQ);
        return t;
    }
    uint32_t need = s->declared - s->have;
    if (need > 7)
        need = 7;
    if ((uint32_t)f->len - 1u < need) {
        sf_proto_close(p, s, SF_MSG_BAD_LENGTH);
        return TAKE_SHORT;
    }
    sf_proto_append(p, s, f->data + 1, need, f->ts);
    s->seq++;
    if (s->have == s->declared) {
        sf_proto_close(p, s, SF_MSG_OK);
        return TAKE_DONE;
    }
    return TAKE_MORE;
}

void sf_proto_arm(struct sf_proto *p, struct sf_proto_session *s, uint64_t deadline)
{
    s->deadline = deadline;
    if (deadline < p->next_deadline)
        p->next_deadline = deadline;
}

void sf_proto_close(struct sf_proto *p, struct sf_proto_session *s, uint8_t status)
{
    s->state = SESS_DONE;
    s->status = status;
    s->order = ++p->order;
    p->queued++;
    p->held++;
    if (status == SF_MSG_OK)
        p->stats.messages_ok++;
    else
        p->stats.messages_broken++;
    if (status == SF_MSG_TIMEOUT)
        p->stats.timeouts++;
    else if (status == SF_MSG_REPLACED)
        p->stats.replaced++;
    else if (status == SF_MSG_END)
        p->stats.ended++;
}

void sf_proto_queue_extra(struct sf_proto *p, int slot)
{
    p->extra_order[slot] = ++p->order;
    p->queued++;
    p->held++;
    if (p->extra[slot].event == SF_PROTO_EV_MESSAGE)
        p->stats.messages_ok++;
}

void sf_proto_fill(const struct sf_proto *p, const struct sf_proto_session *s,
                   struct sf_proto_msg *m)
{
    memset(m, 0, sizeof *m);
    m->event = SF_PROTO_EV_MESSAGE;
    m->proto = s->proto;
    m->status = s->status;
    m->channel = s->channel;
    m->mode = s->mode;
    m->addr = s->proto == SF_PROTO_ISOTP ? s->addr : 0;
    m->sa = s->sa;
    m->da = s->da;
    m->prio = s->prio;
    m->fd = s->fd;
    m->id = s->can_id & 0x1FFFFFFFu;
    m->flags = s->can_id >> 31 ? SF_CAN_EFF : 0;
    m->fc_id = s->fc_id;
    m->pgn = s->pgn;
    m->first_ts = s->first_ts;
    m->last_ts = s->last_ts;
    m->length = s->have;
    m->declared = s->declared;
    m->frames = s->frames;
    m->payload = p->cfg.arena ? p->cfg.arena + s->off : NULL;
}
