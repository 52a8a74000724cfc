/* The poll client (include/streamfat/poll.h): requests on a schedule, answers through the
 * shared ISO-TP reassembly (isotp.c with report_ff), flow control from here.
 *
 * Invariants: a poll has at most one item outstanding (busy); while one of its multi-frame
 * answers is under way (receiving > 0) its deadline is the reassembly's N_Cr, not P2, so
 * a slow but live answer is never cut; the reassembly ends every session it opened (whole,
 * broken or by its timer, which sf_poll_tick drives through sf_proto_expire), and each end
 * takes one off receiving. Flow controls are sent after the reassembly's queue is drained
 * and then fed to it (as a log reader would see them), so it learns the block size and
 * reports the end of each block. */
#include "streamfat/poll.h"

#include <string.h>

#include "util/div64.h"

#define MS 1000000ull
#define NONE UINT64_MAX

static void set_bit(uint8_t *set, uint8_t i)
{
    set[i >> 3] = (uint8_t)(set[i >> 3] | (1u << (i & 7)));
}

/* Whole periods in `late`, without a 64-bit divide on a 32-bit target (as the transmit
 * schedule's periods_past): a period above 4.29 s fits few times in any stall. */
static uint64_t periods_in(uint64_t late, uint64_t period)
{
    uint64_t k = 0;

    if (period <= UINT32_MAX)
        return sf_udiv64(late, (uint32_t)period);
    while (late >= period) {
        late -= period;
        k++;
    }
    return k;
}

int sf_poll_stmin_code(uint32_t us)
{
    if (us == 0)
        return 0;
    if (us <= 900)
        return 0xF0 + (int)((us + 99) / 100);          /* 0xF1..0xF9: 100..900 us */
    if (us < 1000)
        return 1;
    if (us > 127000)
        return -1;
    return (int)((us + 999) / 1000);
}

int sf_poll_init(struct sf_poll_client *c, const struct sf_poll_config *cfg)
{
    struct sf_proto_config pc;

    if (!cfg->tx || !cfg->polls || !cfg->cap)
        return SF_EINVAL;
    memset(c, 0, sizeof *c);
    c->cfg = *cfg;
    c->timeout = (uint64_t)(cfg->timeout_ms ? cfg->timeout_ms : SF_POLL_TIMEOUT_MS) * MS;
    c->p2_star = (uint64_t)(cfg->p2_star_ms ? cfg->p2_star_ms : SF_POLL_P2_STAR_MS) * MS;
    memset(&pc, 0, sizeof pc);
    pc.sessions = cfg->sessions;
    pc.nsessions = cfg->nsessions;
    pc.arena = cfg->arena;
    pc.arena_size = cfg->arena_size;
    pc.off = SF_PROTO_NO_J1939;
    pc.isotp_pairs = c->pairs;
    pc.n_cr_ms = cfg->n_cr_ms;
    pc.report_ff = 1;
    return sf_proto_init(&c->proto, &pc);
}

int sf_poll_add(struct sf_poll_client *c, const struct sf_poll_def *d)
{
    struct sf_poll *p;

    if (c->n >= c->cfg.cap || !d->nitems || d->nitems > SF_POLL_MAX_ITEMS ||
        !d->period_ns || (d->kind != SF_POLL_OBD && d->kind != SF_POLL_UDS))
        return -1;
    for (unsigned i = 0; i < d->nitems; i++)
        if (d->items[i].len < 1 || d->items[i].len > 7)
            return -1;
    if (d->kind == SF_POLL_UDS) {
        struct sf_isotp_pair *q;
        if (c->npairs >= SF_POLL_MAX_PAIRS)
            return -1;
        q = &c->pairs[c->npairs++];
        memset(q, 0, sizeof *q);
        q->id_a = d->tx_id;
        q->id_b = d->rx_id;
        q->eff = d->eff;
        q->mode = SF_ISOTP_NORMAL;
        q->channel = d->channel;
        c->proto.cfg.n_isotp_pairs = c->npairs;
    }
    p = &c->cfg.polls[c->n++];
    memset(p, 0, sizeof *p);
    p->def = *d;
    return 0;
}

void sf_poll_start(struct sf_poll_client *c, uint64_t now)
{
    for (uint32_t i = 0; i < c->n; i++) {
        c->cfg.polls[i].next = now;
        c->cfg.polls[i].busy = 0;
        c->cfg.polls[i].due = 0;
    }
}

/* Is a frame on (id, eff, channel) an answer to poll p? *who: the responder's byte. */
static int answer_id(const struct sf_poll *p, uint32_t id, int eff, uint8_t channel,
                     uint8_t *who)
{
    if (channel != p->def.channel || !eff != !p->def.eff)
        return 0;
    *who = (uint8_t)id;
    if (p->def.kind == SF_POLL_UDS)
        return id == p->def.rx_id;
    if (!eff)
        return id >= 0x7E8 && id <= 0x7EF;
    return (id & 0x03FFFF00u) == 0x00DAF100u;       /* any priority, SA = responder */
}

/* Which item of p a payload answers: the item's index, or -1. *nrc: the negative response
 * code of a 0x7F answer (to the item's service; the parameters are not in it, so it goes
 * to the outstanding item when its service matches), else 0. */
static int match_item(const struct sf_poll *p, const uint8_t *d, uint32_t n, uint8_t *nrc)
{
    *nrc = 0;
    if (n >= 3 && d[0] == 0x7F) {
        if (p->busy && p->def.items[p->item].req[0] == d[1]) {
            *nrc = d[2];
            return p->item;
        }
        for (unsigned i = 0; i < p->def.nitems; i++)
            if (p->def.items[i].req[0] == d[1]) {
                *nrc = d[2];
                return (int)i;
            }
        return -1;
    }
    /* the outstanding item first: two items may share their first bytes only if the
     * user asked the same twice */
    for (unsigned k = 0; k <= p->def.nitems; k++) {
        unsigned i = k == 0 ? p->item : k - 1u;
        const struct sf_poll_item *it = &p->def.items[i];
        if (k && i == p->item)
            continue;
        if (n < it->len || d[0] != (uint8_t)(it->req[0] + 0x40))
            continue;
        if (!memcmp(d + 1, it->req + 1, it->len - 1u))
            return (int)i;
    }
    return -1;
}

/* The poll and item an answer (or the start of one) belongs to; -1 if none. */
static int find_poll(struct sf_poll_client *c, const struct sf_proto_msg *m, int *item,
                     uint8_t *nrc, uint8_t *who)
{
    int fallback = -1;
    for (uint32_t i = 0; i < c->n; i++) {
        struct sf_poll *p = &c->cfg.polls[i];
        if (!answer_id(p, m->id, (m->flags & SF_CAN_EFF) != 0, m->channel, who))
            continue;
        *item = match_item(p, m->payload, m->length, nrc);
        if (*item >= 0)
            return (int)i;
        if (fallback < 0 && p->receiving)
            fallback = (int)i;      /* a broken answer too short to say what it answers */
    }
    *item = -1;
    *nrc = 0;
    return fallback;
}

static int send_frame(struct sf_poll_client *c, struct sf_poll *p, uint8_t channel,
                      uint32_t id, int eff, const uint8_t *d, uint8_t n)
{
    struct sf_can f;

    memset(&f, 0, sizeof f);
    f.id = id;
    f.flags = eff ? SF_CAN_EFF : 0;
    f.len = 8;                          /* ISO 15765-4: always 8 bytes, padded */
    memset(f.data, c->cfg.pad, 8);
    memcpy(f.data, d, n);
    if (c->cfg.tx(c->cfg.tx_ctx, channel, &f) == 0)
        return 0;
    if (p)
        p->st.failed++;
    return -1;
}

static void request(struct sf_poll_client *c, struct sf_poll *p, uint64_t now)
{
    const struct sf_poll_item *it = &p->def.items[p->item];
    uint8_t d[8];

    d[0] = it->len;                     /* single frame: PCI 0, SF_DL */
    memcpy(d + 1, it->req, it->len);
    p->busy = 1;
    p->receiving = 0;
    p->answered = 0;
    memset(p->got, 0, sizeof p->got);
    p->deadline = now + c->timeout;
    if (send_frame(c, p, p->def.channel, p->def.tx_id, p->def.eff, d,
                   (uint8_t)(it->len + 1u)) == 0)
        p->st.requests++;
}

/* The item is over (answered, refused, broken or timed out): the next one now, or idle
 * until the next period. */
static void advance(struct sf_poll_client *c, struct sf_poll *p, uint64_t now)
{
    if (++p->item < p->def.nitems) {
        request(c, p, now);
        return;
    }
    p->item = 0;
    p->busy = 0;
    if (p->due) {               /* a period came while this cycle ran: its cycle now, late */
        p->due = 0;
        request(c, p, now);
    }
}

/* Every responder known to answer a functional request has answered this item. */
static int all_answered(const struct sf_poll *p)
{
    int any = 0;
    for (unsigned i = 0; i < sizeof p->seen; i++) {
        if (p->seen[i] & ~p->got[i])
            return 0;
        any |= p->seen[i] != 0;
    }
    return any;
}

/* A whole (or broken) answer: count it and maybe end the item. */
static void on_message(struct sf_poll_client *c, const struct sf_proto_msg *m, uint64_t now)
{
    int item;
    uint8_t nrc, who;
    int multi = m->status != SF_MSG_OK || m->frames > 1;
    int i = find_poll(c, m, &item, &nrc, &who);
    struct sf_poll *p;
    int current;

    if (i < 0)
        return;
    p = &c->cfg.polls[i];
    current = p->busy && (item == p->item || item < 0);
    if (multi && current && p->receiving)
        p->receiving--;
    if (c->cfg.answer) {
        struct sf_poll_answer a;
        a.poll = (uint32_t)i;
        a.item = (uint8_t)(item < 0 ? p->item : item);
        a.late = (uint8_t)!current;
        a.status = m->status;
        a.negative = nrc;
        a.id = m->id;
        a.first_ts = m->first_ts;
        a.last_ts = m->last_ts;
        a.length = m->length;
        a.payload = m->payload;
        c->cfg.answer(c->cfg.answer_ctx, &a);
    }
    if (!current) {
        if (nrc != 0x78)
            p->st.late++;
        return;
    }
    if (m->status != SF_MSG_OK) {
        p->st.broken++;
    } else if (nrc == 0x78) {
        p->st.pending++;                /* ISO 14229: wait P2* more, from now */
        p->deadline = now + c->p2_star;
        return;
    } else if (nrc) {
        p->st.negative++;
    } else {
        p->st.answers++;
        if (m->frames > 1)
            p->st.multi_frame++;
    }
    p->answered = 1;
    if (p->def.kind == SF_POLL_UDS) {
        advance(c, p, now);
        return;
    }
    set_bit(p->got, who);
    if (!p->receiving && all_answered(p))
        advance(c, p, now);
}

struct fc_out {
    uint8_t channel, eff, fs;
    uint32_t id;
    int poll;
};

/* The start of a multi-frame answer, or the end of a block: which flow control to send. */
static int on_ff(struct sf_poll_client *c, const struct sf_proto_msg *m, struct fc_out *o)
{
    int item;
    uint8_t nrc, who;
    int i = find_poll(c, m, &item, &nrc, &who);

    if (i < 0 || item < 0 || !m->fc_id)
        return 0;               /* another tester's, or not ours to answer */
    o->channel = m->channel;
    o->eff = (m->flags & SF_CAN_EFF) != 0;
    o->id = m->fc_id;
    o->poll = i;
    if (m->event == SF_PROTO_EV_FF && m->status != SF_MSG_OK) {
        o->fs = 2;              /* OVFLW: no room for FF_DL */
        c->cfg.polls[i].st.overflow++;
        return 1;
    }
    o->fs = 0;
    if (m->event == SF_PROTO_EV_FF) {
        struct sf_poll *p = &c->cfg.polls[i];
        if (p->busy && item == p->item)
            p->receiving++;
    }
    return 1;
}

/* Drain the reassembly; then send (and feed back) the flow controls it asked for. */
static void pump(struct sf_poll_client *c, uint64_t now)
{
    for (;;) {
        struct sf_proto_msg m;
        struct fc_out fc[4];
        unsigned nfc = 0;

        while (sf_proto_next(&c->proto, &m)) {
            if (m.event == SF_PROTO_EV_MESSAGE)
                on_message(c, &m, now);
            else if (nfc < 4 && on_ff(c, &m, &fc[nfc]))
                nfc++;
        }
        if (!nfc)
            return;
        for (unsigned k = 0; k < nfc; k++) {
            struct sf_poll *p = &c->cfg.polls[fc[k].poll];
            uint8_t d[3] = { (uint8_t)(0x30 | fc[k].fs), c->cfg.bs, c->cfg.stmin };
            struct sf_proto_frame f;
            uint8_t full[8];

            if (send_frame(c, p, fc[k].channel, fc[k].id, fc[k].eff, d, 3))
                continue;
            if (!fc[k].fs)
                p->st.flow_controls++;
            memset(full, c->cfg.pad, 8);
            memcpy(full, d, 3);
            f.ts = now;
            f.id = fc[k].id;
            f.flags = fc[k].eff ? SF_CAN_EFF : 0;
            f.channel = fc[k].channel;
            f.len = 8;
            f.data = full;
            sf_proto_feed(&c->proto, &f);
        }
    }
}

int sf_poll_feed(struct sf_poll_client *c, const struct sf_proto_frame *f)
{
    uint8_t who;
    uint32_t i;

    if (f->flags & (SF_CAN_TX | SF_CAN_ERR | SF_CAN_RTR))
        return 0;
    for (i = 0; i < c->n; i++)
        if (answer_id(&c->cfg.polls[i], f->id & 0x1FFFFFFFu, (f->flags & SF_CAN_EFF) != 0,
                      f->channel, &who))
            break;
    if (i == c->n)
        return 0;               /* the common case: a frame that answers no poll */
    sf_proto_feed(&c->proto, f);
    pump(c, f->ts);
    return 1;
}

uint64_t sf_poll_tick(struct sf_poll_client *c, uint64_t now)
{
    uint64_t next = NONE;

    sf_proto_expire(&c->proto, now);    /* multi-frame answers whose N_Cr ran out */
    pump(c, now);
    for (uint32_t i = 0; i < c->n; i++) {
        struct sf_poll *p = &c->cfg.polls[i];

        if (p->busy && !p->receiving && now >= p->deadline) {
            if (!p->answered)
                p->st.timeouts++;
            /* a whole window: who answered is who answers (functional requests) */
            for (unsigned k = 0; k < sizeof p->seen; k++)
                p->seen[k] |= p->got[k];
            advance(c, p, now);
        }
        if (now >= p->next) {
            uint64_t late = now - p->next;
            uint64_t missed = periods_in(late, p->def.period_ns);   /* periods wholly passed over */
            if (p->busy) {
                /* the cycle starts as soon as this one ends (late, not lost); a period
                 * already waiting, or whole periods passed over, are skipped */
                p->st.skipped += missed + p->due;
                p->due = 1;
            } else {
                p->st.skipped += missed;
                p->item = 0;
                request(c, p, now);
            }
            p->next += (missed + 1u) * p->def.period_ns; /* on the grid: no drift */
        }
        if (p->next < next)
            next = p->next;
        if (p->busy && !p->receiving && p->deadline < next)
            next = p->deadline;
    }
    /* the reassembly ends a session once the time is past its deadline */
    if (c->proto.next_deadline != NONE && c->proto.next_deadline + 1u < next)
        next = c->proto.next_deadline + 1u;
    return next;
}
