/* --send ID#DATA@PERIOD[+DELAY]@CHANNEL (docs/LOG.md "Transmit"): the frames the logger
 * sends on its can: interfaces. The schedule is the core's (include/streamfat/tx_schedule.h);
 * this file is its port: the specs parsed against the source's channel names, one sender
 * thread per interface with entries sleeping on CLOCK_MONOTONIC until the next deadline,
 * and a tx hook that writes the frame to the interface's socket without blocking (a full
 * queue is counted as a failed send, never waited on).
 *
 * The sent frame is logged by the receive loop (socketcan.c) from the kernel's echo of it
 * (CAN_RAW_RECV_OWN_MSGS): the echo carries MSG_CONFIRM and the time the driver confirmed
 * the transmission, so the record gets SF_CAN_TX and that time. Frames other sockets of the
 * host send come back without MSG_CONFIRM (the interface's loopback) and stay received
 * frames; the logger's own frames are echoed once, to this socket only. */
#include "source_int.h"
#include "cli.h"
#include "common/units.h"

#include "streamfat/tx_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/can.h>
#include <linux/can/raw.h>

/* One interface's sender. The mutex serialises the schedule between its thread and the
 * receive loops that fire its trigger entries (src_send_on_frame); the condition wakes the
 * thread for a trigger's deadline. */
struct can_tx {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct sf_tx_schedule sch;
    struct sf_tx_entry mem[SRC_TX_PER_IFACE];
    struct producer *p;
    pthread_t th;
    int started;
    int has_trigger;            /* some entry waits for a trigger: the thread stays */
};

/* ID#DATA (candump notation, FD with ##) into e->frame: 0 or -1 with *why. */
static int parse_frame(const char *s, size_t n, struct sf_tx_entry *e, const char **why)
{
    struct src_can_frame f;
    const char *ifc;
    size_t il;
    char line[256];

    if (n == 0 || n >= sizeof line || memchr(s, ' ', n) || !memchr(s, '#', n)) {
        *why = "the frame is not ID#DATA (candump notation; ID##FDATA for CAN FD)";
        return -1;
    }
    memcpy(line, s, n);
    line[n] = 0;
    if (src_parse_candump(line, n, &f, &ifc, &il) != 1 || il || (f.flags & SF_CAN_ERR)) {
        *why = f.why ? f.why : (f.flags & SF_CAN_ERR) ? "error frames are not sent"
                                                      : "the frame is not valid candump "
                                                        "notation (ID#DATA, ID#R, ID##FDATA)";
        return -1;
    }
    e->frame.id = f.id;
    e->frame.flags = f.flags;
    e->frame.len = f.len;
    memcpy(e->frame.data, f.data, sizeof e->frame.data);
    return 0;
}

/* on:can:ID[/MASK] (the condition of --trigger can:): entry e goes once on each received
 * frame that matches; its trigger number is its place in s->send_trig, plus 1. */
static int parse_on(struct log_source *s, const char *spec, const char *cond,
                    struct sf_tx_entry *e, char *err, size_t errlen)
{
    struct src_rule r;
    const char *why = "";

    if (src_parse_rule(cond, &r, &why) || r.kind != RULE_CAN) {
        snprintf(err, errlen, "--send '%s': on:%s: expected on:can:ID/MASK (hexadecimal)",
                 spec, cond);
        return -1;
    }
    if (s->nsend_trig >= SRC_SEND_TRIGGERS) {
        snprintf(err, errlen, "--send '%s': more than %d frames sent on a trigger", spec,
                 SRC_SEND_TRIGGERS);
        return -1;
    }
    s->send_trig[s->nsend_trig].id = r.id;
    s->send_trig[s->nsend_trig].mask = r.mask;
    e->trigger = (uint8_t)(++s->nsend_trig);
    return 0;
}

/* One --send value against the channel names: 0, or -1 with a message in err. */
static int parse_send(struct log_source *s, const char *spec, struct sf_tx_entry *e,
                      char *err, size_t errlen)
{
    const char *at1 = strchr(spec, '@'), *at2 = at1 ? strrchr(spec, '@') : NULL;
    const char *why = NULL, *chan;
    char timing[64];
    unsigned ch;

    memset(e, 0, sizeof *e);
    if (!at1) {
        snprintf(err, errlen, "--send '%s': no channel (ID#DATA@PERIOD[+DELAY]@CHANNEL)",
                 spec);
        return -1;
    }
    if (parse_frame(spec, (size_t)(at1 - spec), e, &why)) {
        snprintf(err, errlen, "--send '%s': %s", spec, why);
        return -1;
    }
    chan = at2 + 1;
    if (at2 > at1) {                          /* @PERIOD[+DELAY]@: empty or 0 is once */
        size_t n = (size_t)(at2 - at1 - 1);
        char *plus;
        if (n >= sizeof timing) {
            snprintf(err, errlen, "--send '%s': bad period", spec);
            return -1;
        }
        memcpy(timing, at1 + 1, n);
        timing[n] = 0;
        plus = strchr(timing, '+');
        if (plus) {
            *plus = 0;
            if (units_parse_duration(plus + 1, &e->delay_ns, &why)) {
                snprintf(err, errlen, "--send '%s': delay '%s': %s", spec, plus + 1, why);
                return -1;
            }
        }
        if (!strncmp(timing, "on:", 3)) {
            if (parse_on(s, spec, timing + 3, e, err, errlen))
                return -1;
        } else if (timing[0] && units_parse_duration(timing, &e->period_ns, &why)) {
            snprintf(err, errlen, "--send '%s': period '%s': %s", spec, timing, why);
            return -1;
        }
        if (e->period_ns && e->period_ns < 100000) {
            snprintf(err, errlen, "--send '%s': period below 100 us", spec);
            return -1;
        }
    }
    for (ch = 0; ch < s->nnames; ch++)
        if (!strcmp(s->names[ch], chan))
            break;
    if (ch == s->nnames || ch >= s->nprod) {
        snprintf(err, errlen, "--send '%s': '%s' is not an interface of --source (nothing "
                 "is sent on an interface the logger does not log)", spec, chan);
        return -1;
    }
    for (unsigned k = 0; k < s->o.nlisten_only; k++)
        if (!strcmp(s->o.listen_only[k], chan)) {
            snprintf(err, errlen, "--send '%s': %s is --listen-only", spec, chan);
            return -1;
        }
    e->channel = (uint8_t)ch;
    if (e->trigger)
        s->send_trig[e->trigger - 1].ch = e->channel;
    return 0;
}

int src_send_parse(struct log_source *s, char *err, size_t errlen)
{
    int can = s->ops == &src_can_ops || s->ops == &src_canpair_ops;

    for (unsigned k = 0; k < s->o.nlisten_only; k++) {
        unsigned ch;
        for (ch = 0; can && ch < s->nnames; ch++)
            if (!strcmp(s->names[ch], s->o.listen_only[k]))
                break;
        if (!can || ch == s->nnames) {
            snprintf(err, errlen, "--listen-only %s: not an interface of --source (can:)",
                     s->o.listen_only[k]);
            return -1;
        }
    }
    if (!s->o.nsend)
        return 0;
    if (!can) {
        snprintf(err, errlen, "--send needs a can: source");
        return -1;
    }
    for (unsigned k = 0; k < s->o.nsend; k++) {
        struct sf_tx_entry e;
        struct producer *p;

        if (parse_send(s, s->o.send[k], &e, err, errlen))
            return -1;
        p = &s->prod[e.channel];
        if (!p->tx) {
            p->tx = calloc(1, sizeof *p->tx);
            if (!p->tx) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            p->tx->p = p;
            sf_tx_init(&p->tx->sch, p->tx->mem, SRC_TX_PER_IFACE, NULL, p->tx);
            pthread_mutex_init(&p->tx->mu, NULL);
            {
                pthread_condattr_t ca;
                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&p->tx->cv, &ca);
                pthread_condattr_destroy(&ca);
            }
        }
        if (e.trigger)
            p->tx->has_trigger = 1;
        if (sf_tx_add(&p->tx->sch, &e)) {
            snprintf(err, errlen, "--send: more than %d frames on %s", SRC_TX_PER_IFACE,
                     s->names[e.channel]);
            return -1;
        }
    }
    return 0;
}

/* The port's tx hook: one write, never waiting (MSG_DONTWAIT); a full transmit queue or a
 * down interface is a failed send the schedule counts. */
static int tx_frame(void *ctx, uint8_t channel, const struct sf_can *f)
{
    struct can_tx *t = ctx;

    (void)channel;
    return src_can_write(t->p, f);
}

int src_can_write(struct producer *p, const struct sf_can *f)
{
    struct canfd_frame cf;
    size_t mtu = (f->flags & SF_CAN_FD) ? CANFD_MTU : CAN_MTU;

    memset(&cf, 0, sizeof cf);
    cf.can_id = f->id | ((f->flags & SF_CAN_EFF) ? CAN_EFF_FLAG : 0) |
                ((f->flags & SF_CAN_RTR) ? CAN_RTR_FLAG : 0);
    cf.len = f->len;
    if (f->flags & SF_CAN_FD)
        cf.flags = (uint8_t)(((f->flags & SF_CAN_BRS) ? CANFD_BRS : 0) |
                             ((f->flags & SF_CAN_ESI) ? CANFD_ESI : 0));
    if (!(f->flags & SF_CAN_RTR))
        memcpy(cf.data, f->data, f->len);
    return send(p->fd, &cf, mtu, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)mtu ? 0 : -1;
}

static void *tx_main(void *arg)
{
    struct can_tx *t = arg;
    struct log_source *s = t->p->s;

    pthread_mutex_lock(&t->mu);
    sf_tx_start(&t->sch, now_ns(CLOCK_MONOTONIC));
    while (!stopping(s)) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        uint64_t next = sf_tx_poll(&t->sch, now), wake = now + POLL_MS * UINT64_C(1000000);
        struct timespec ts;

        atomic_store_explicit(&s->tx_sent[t->p->ch], t->sch.sent, memory_order_relaxed);
        atomic_store_explicit(&s->tx_failed[t->p->ch], t->sch.failed, memory_order_relaxed);
        atomic_store_explicit(&s->tx_skipped[t->p->ch], t->sch.skipped, memory_order_relaxed);
        if (next == SF_TX_NONE && !t->has_trigger)
            break;
        if (next < wake)
            wake = next;                /* wake: to see a stop */
        if (wake <= now)
            continue;
        ts.tv_sec = (time_t)(wake / NS);
        ts.tv_nsec = (long)(wake % NS);
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);   /* or a trigger's signal */
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

void src_send_on_frame(struct log_source *s, const struct src_can_frame *f)
{
    if (f->flags & (SF_CAN_ERR | SF_CAN_TX))
        return;
    for (unsigned k = 0; k < s->nsend_trig; k++) {
        const struct src_send_trig *g = &s->send_trig[k];
        struct can_tx *t = s->prod[g->ch].tx;
        if (((f->id ^ g->id) & g->mask) || !t)
            continue;
        pthread_mutex_lock(&t->mu);
        if (sf_tx_trigger(&t->sch, (uint8_t)(k + 1), now_ns(CLOCK_MONOTONIC)))
            pthread_cond_signal(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
}

int src_send_start(struct producer *p)
{
    struct can_tx *t = p->tx;

    if (!t)
        return 0;
    t->sch.tx = tx_frame;
    if (pthread_create(&t->th, NULL, tx_main, t)) {
        src_set_error(p->s, "%s: cannot start the sender thread", p->s->names[p->ch]);
        return -1;
    }
    t->started = 1;
    return 0;
}

void src_send_join(struct producer *p)
{
    if (p->tx && p->tx->started) {
        pthread_mutex_lock(&p->tx->mu);
        pthread_cond_signal(&p->tx->cv);
        pthread_mutex_unlock(&p->tx->mu);
        pthread_join(p->tx->th, NULL);
        p->tx->started = 0;
    }
}

void src_send_free(struct log_source *s)
{
    for (unsigned i = 0; i < SRC_MAX_CHANNELS; i++) {
        if (s->prod[i].tx) {
            pthread_mutex_destroy(&s->prod[i].tx->mu);
            pthread_cond_destroy(&s->prod[i].tx->cv);
        }
        free(s->prod[i].tx);
        s->prod[i].tx = NULL;
    }
}
