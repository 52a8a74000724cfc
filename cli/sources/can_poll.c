/* --poll obd:PID[,PID...]@PERIOD@CHANNEL and --poll uds:TXID/RXID:22DID[,...]@PERIOD@CHANNEL
 * (docs/LOG.md "Polling"): the core's poll client (include/streamfat/poll.h) as a port.
 * One client per interface: the receive loop (socketcan.c) hands it every frame it reads
 * (src_poll_feed, the time the loop read it on CLOCK_MONOTONIC), and a poll thread per
 * interface ticks it at its deadlines; a mutex serialises the two. Requests and flow
 * controls go out through the transmit schedule's hook (src_can_write: one write that
 * never waits), so their echoes are logged with the TX flag as --send's are. */
#include "source_int.h"
#include "cli.h"
#include "common/units.h"

#include "streamfat/poll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_SESSIONS 16            /* multi-frame answers at once on one interface */
#define POLL_ARENA (16 * 1024)      /* their bytes (a VIN is 20, a DTC list a few hundred) */

struct can_poll {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* a frame moved a deadline: the thread looks again */
    struct sf_poll_client c;
    struct sf_poll polls[SRC_MAX_POLLS];
    unsigned spec[SRC_MAX_POLLS];   /* the --poll value each came from */
    struct sf_proto_session sess[POLL_SESSIONS];
    uint8_t arena[POLL_ARENA];
    struct producer *p;
    pthread_t th;
    int started;
};

/* Hex digits only, n of them: 0 and *v, or -1. */
static int hex_n(const char *s, size_t n, uint32_t *v)
{
    if (!n || n > 8)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
              (s[i] >= 'A' && s[i] <= 'F')))
            return -1;
    return src_parse_hex32(s, n, v);
}

/* The item list: obd: PID (2 hex digits, mode 01) or MMPP (mode and PID, 0902: the VIN);
 * uds: DID or 22DID (4 or 6 hex digits). */
static int parse_items(struct sf_poll_def *d, const char *s, size_t n, const char **why)
{
    const char *end = s + n;

    while (s < end) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        size_t len = c ? (size_t)(c - s) : (size_t)(end - s);
        struct sf_poll_item *it;
        uint32_t v;

        if (d->nitems >= SF_POLL_MAX_ITEMS) {
            *why = "more than 16 items in one poll";
            return -1;
        }
        it = &d->items[d->nitems];
        if (hex_n(s, len, &v)) {
            *why = d->kind == SF_POLL_OBD ? "a PID is 2 hex digits (mode 01), or 4 with the "
                                            "mode (0902: the VIN)"
                                          : "a DID is 4 hex digits (or 22 and 4)";
            return -1;
        }
        if (d->kind == SF_POLL_OBD && len == 2) {
            it->len = 2;
            it->req[0] = 0x01;
            it->req[1] = (uint8_t)v;
        } else if (d->kind == SF_POLL_OBD && len == 4 && (v >> 8) >= 1 && (v >> 8) <= 0x0A) {
            it->len = 2;
            it->req[0] = (uint8_t)(v >> 8);
            it->req[1] = (uint8_t)v;
        } else if (d->kind == SF_POLL_UDS && (len == 4 || (len == 6 && (v >> 16) == 0x22))) {
            it->len = 3;
            it->req[0] = 0x22;
            it->req[1] = (uint8_t)(v >> 8);
            it->req[2] = (uint8_t)v;
        } else {
            *why = d->kind == SF_POLL_OBD ? "a PID is 2 hex digits (mode 01), or 4 with the "
                                            "mode 01..0A (0902: the VIN)"
                                          : "a DID is 4 hex digits (or 22 and 4: "
                                            "ReadDataByIdentifier)";
            return -1;
        }
        d->nitems++;
        s += len + (c ? 1 : 0);
        if (c && s == end) {
            *why = "an empty item";
            return -1;
        }
    }
    return 0;
}

/* An id: 3 hex digits or fewer is 11-bit (<= 7FF), 8 is 29-bit. */
static int parse_id(const char *s, size_t n, uint32_t *id, uint8_t *eff)
{
    if (hex_n(s, n, id))
        return -1;
    if (n == 8 && *id <= 0x1FFFFFFF) {
        *eff = 1;
        return 0;
    }
    *eff = 0;
    return n <= 3 && *id <= 0x7FF ? 0 : -1;
}

/* One --poll value: 0, or -1 with a message in err. */
static int parse_poll(struct log_source *s, const char *spec, struct sf_poll_def *d,
                      char *err, size_t errlen)
{
    const char *at1 = strchr(spec, '@'), *at2 = at1 ? strchr(at1 + 1, '@') : NULL;
    const char *body, *why = "", *chan;
    char period[64];
    unsigned ch;

    memset(d, 0, sizeof *d);
    if (!at1 || !at2 || strchr(at2 + 1, '@')) {
        snprintf(err, errlen, "--poll '%s': not obd:PIDS@PERIOD@IFACE or "
                 "uds:TXID/RXID:DIDS@PERIOD@IFACE", spec);
        return -1;
    }
    if (!strncmp(spec, "obd:", 4)) {
        const char *colon = memchr(spec + 4, ':', (size_t)(at1 - spec - 4));
        d->kind = SF_POLL_OBD;
        d->tx_id = 0x7DF;
        body = spec + 4;
        if (colon) {                    /* obd:18DB33F1:PIDS: 29-bit */
            uint8_t eff;
            if (parse_id(body, (size_t)(colon - body), &d->tx_id, &eff) ||
                (d->tx_id != 0x7DF && d->tx_id != 0x18DB33F1)) {
                snprintf(err, errlen, "--poll '%s': the functional id is 7DF or 18DB33F1",
                         spec);
                return -1;
            }
            d->eff = eff;
            body = colon + 1;
        }
    } else if (!strncmp(spec, "uds:", 4)) {
        const char *slash = memchr(spec + 4, '/', (size_t)(at1 - spec - 4));
        const char *colon = slash ? memchr(slash, ':', (size_t)(at1 - slash)) : NULL;
        uint8_t e1, e2;
        d->kind = SF_POLL_UDS;
        if (!colon || parse_id(spec + 4, (size_t)(slash - spec - 4), &d->tx_id, &e1) ||
            parse_id(slash + 1, (size_t)(colon - slash - 1), &d->rx_id, &e2) || e1 != e2 ||
            d->tx_id == d->rx_id) {
            snprintf(err, errlen, "--poll '%s': uds: needs TXID/RXID, two different ids of "
                     "one kind (3 hex digits for 11-bit, 8 for 29-bit)", spec);
            return -1;
        }
        d->eff = e1;
        body = colon + 1;
    } else {
        snprintf(err, errlen, "--poll '%s': obd: or uds: expected", spec);
        return -1;
    }
    if (parse_items(d, body, (size_t)(at1 - body), &why)) {
        snprintf(err, errlen, "--poll '%s': %s", spec, why);
        return -1;
    }
    if ((size_t)(at2 - at1 - 1) >= sizeof period) {
        snprintf(err, errlen, "--poll '%s': bad period", spec);
        return -1;
    }
    memcpy(period, at1 + 1, (size_t)(at2 - at1 - 1));
    period[at2 - at1 - 1] = 0;
    if (units_parse_duration(period, &d->period_ns, &why)) {
        snprintf(err, errlen, "--poll '%s': period '%s': %s", spec, period, why);
        return -1;
    }
    if (d->period_ns < 10 * UINT64_C(1000000)) {
        snprintf(err, errlen, "--poll '%s': the period must be 10 ms or more", spec);
        return -1;
    }
    chan = at2 + 1;
    for (ch = 0; ch < s->nnames; ch++)
        if (!strcmp(s->names[ch], chan))
            break;
    if (ch == s->nnames || ch >= s->nprod) {
        snprintf(err, errlen, "--poll '%s': '%s' is not an interface of --source (nothing "
                 "is sent on an interface the logger does not log)", spec, chan);
        return -1;
    }
    for (unsigned k = 0; k < s->o.nlisten_only; k++)
        if (!strcmp(s->o.listen_only[k], chan)) {
            snprintf(err, errlen, "--poll '%s': %s is --listen-only", spec, chan);
            return -1;
        }
    d->channel = (uint8_t)ch;
    return 0;
}

static int tx_hook(void *ctx, uint8_t channel, const struct sf_can *f)
{
    struct can_poll *cp = ctx;

    (void)channel;
    return src_can_write(cp->p, f);
}

int src_poll_parse(struct log_source *s, char *err, size_t errlen)
{
    int can = s->ops == &src_can_ops || s->ops == &src_canpair_ops;
    int stmin;

    if (!s->o.npoll)
        return 0;
    if (!can) {
        snprintf(err, errlen, "--poll needs a can: source");
        return -1;
    }
    if (s->o.npoll > SRC_MAX_POLLS) {
        snprintf(err, errlen, "--poll: more than %d polls", SRC_MAX_POLLS);
        return -1;
    }
    stmin = sf_poll_stmin_code((uint32_t)(s->o.poll_stmin_ns / 1000u));
    if (s->o.poll_stmin_ns > 127 * UINT64_C(1000000) || stmin < 0) {
        snprintf(err, errlen, "--poll-stmin: 0 to 127 ms");
        return -1;
    }
    for (unsigned k = 0; k < s->o.npoll; k++) {
        struct sf_poll_def d;
        struct producer *p;
        struct can_poll *cp;

        if (parse_poll(s, s->o.poll[k], &d, err, errlen))
            return -1;
        p = &s->prod[d.channel];
        if (!p->poll) {
            struct sf_poll_config cfg;
            cp = p->poll = calloc(1, sizeof *p->poll);
            if (!cp) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            cp->p = p;
            memset(&cfg, 0, sizeof cfg);
            cfg.polls = cp->polls;
            cfg.cap = SRC_MAX_POLLS;
            cfg.sessions = cp->sess;
            cfg.nsessions = POLL_SESSIONS;
            cfg.arena = cp->arena;
            cfg.arena_size = POLL_ARENA;
            cfg.tx = tx_hook;
            cfg.tx_ctx = cp;
            cfg.timeout_ms = (uint32_t)(s->o.poll_timeout_ns / 1000000u);
            cfg.bs = (uint8_t)s->o.poll_bs;
            cfg.stmin = (uint8_t)stmin;
            cfg.pad = 0xCC;
            if (sf_poll_init(&cp->c, &cfg)) {
                snprintf(err, errlen, "--poll: cannot set up the poll client");
                return -1;
            }
            pthread_mutex_init(&cp->mu, NULL);
            {
                pthread_condattr_t ca;
                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&cp->cv, &ca);
                pthread_condattr_destroy(&ca);
            }
        }
        cp = p->poll;
        if (sf_poll_add(&cp->c, &d)) {
            snprintf(err, errlen, "--poll: more than %d polls (or %d uds: id pairs) on %s",
                     SRC_MAX_POLLS, SF_POLL_MAX_PAIRS, s->names[d.channel]);
            return -1;
        }
        cp->spec[cp->c.n - 1] = k;
    }
    return 0;
}

void src_poll_feed(struct producer *p, const struct src_can_frame *f)
{
    struct can_poll *cp = p->poll;
    struct sf_proto_frame pf;

    pf.ts = now_ns(CLOCK_MONOTONIC);
    pf.id = f->id;
    pf.flags = f->flags;
    pf.channel = (uint8_t)p->ch;
    pf.len = f->len;
    pf.data = f->data;
    pthread_mutex_lock(&cp->mu);
    if (sf_poll_feed(&cp->c, &pf))
        pthread_cond_signal(&cp->cv);
    pthread_mutex_unlock(&cp->mu);
}

static void *poll_main(void *arg)
{
    struct can_poll *cp = arg;
    struct log_source *s = cp->p->s;

    pthread_mutex_lock(&cp->mu);
    sf_poll_start(&cp->c, now_ns(CLOCK_MONOTONIC));
    while (!stopping(s)) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        uint64_t next = sf_poll_tick(&cp->c, now), wake = now + POLL_MS * UINT64_C(1000000);
        struct timespec ts;

        if (next < wake)
            wake = next;                /* wake: to see a stop */
        if (wake <= now)
            continue;
        ts.tv_sec = (time_t)(wake / NS);
        ts.tv_nsec = (long)(wake % NS);
        pthread_cond_timedwait(&cp->cv, &cp->mu, &ts);
    }
    pthread_mutex_unlock(&cp->mu);
    return NULL;
}

int src_poll_start(struct producer *p)
{
    struct can_poll *cp = p->poll;

    if (!cp)
        return 0;
    if (pthread_create(&cp->th, NULL, poll_main, cp)) {
        src_set_error(p->s, "%s: cannot start the poll thread", p->s->names[p->ch]);
        return -1;
    }
    cp->started = 1;
    return 0;
}

void src_poll_join(struct producer *p)
{
    if (p->poll && p->poll->started) {
        pthread_mutex_lock(&p->poll->mu);
        pthread_cond_signal(&p->poll->cv);
        pthread_mutex_unlock(&p->poll->mu);
        pthread_join(p->poll->th, NULL);
        p->poll->started = 0;
    }
}

void src_poll_stats(struct log_source *s, struct src_stats *st)
{
    for (unsigned i = 0; i < s->nprod; i++) {
        struct can_poll *cp = s->prod[i].poll;
        if (!cp)
            continue;
        pthread_mutex_lock(&cp->mu);
        for (unsigned k = 0; k < cp->c.n; k++)
            if (cp->spec[k] < SRC_MAX_POLLS)
                st->poll[cp->spec[k]] = cp->polls[k].st;
        pthread_mutex_unlock(&cp->mu);
    }
    st->npolls = s->o.npoll < SRC_MAX_POLLS ? s->o.npoll : SRC_MAX_POLLS;
}

void src_poll_free(struct log_source *s)
{
    for (unsigned i = 0; i < SRC_MAX_CHANNELS; i++) {
        if (!s->prod[i].poll)
            continue;
        pthread_mutex_destroy(&s->prod[i].poll->mu);
        pthread_cond_destroy(&s->prod[i].poll->cv);
        free(s->prod[i].poll);
        s->prod[i].poll = NULL;
    }
}
