/* latency:PERIOD: a cyclictest-style probe, one LATENCY record per period (how late the
 * timer woke this thread), with the latency trigger rules. */
#include "source_int.h"
#include "common/units.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static int latency_match(const char *spec)
{
    return strncmp(spec, "latency:", 8) == 0;
}

static int latency_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    const char *why = "";

    if (units_parse_duration(spec + 8, &s->period_ns, &why) || s->period_ns < 10000 ||
        s->period_ns > 10 * NS) {
        snprintf(err, errlen, "latency: expects a period from 10us to 10s: '%s'%s%s",
                 spec, *why ? ": " : "", why);
        return -1;
    }
    s->nprod = 1;
    if (s->o.raw) {
        snprintf(err, errlen, "latency: makes records; --raw does not apply");
        return -1;
    }
    src_add_name(s, "latency", 7);
    return 0;
}

static void *latency_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    struct sched_param sp = { .sched_priority = 80 };
    uint64_t next = now_ns(CLOCK_MONOTONIC), maxl = 0, n = 0;
    int done = 0;

    /* real-time priority where allowed, like cyclictest; a normal thread otherwise */
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    while (!stopping(s)) {
        uint8_t body[16];
        int64_t late;
        uint64_t now, ts;
        next += s->period_ns;
        src_sleep_until(next);
        now = now_ns(CLOCK_MONOTONIC);
        ts = now_ns(CLOCK_REALTIME);
        late = (int64_t)(now - next);
        for (unsigned b = 0; b < 8; b++) {
            body[b] = (uint8_t)((uint64_t)late >> (8 * b));
            body[8 + b] = (uint8_t)(s->period_ns >> (8 * b));
        }
        if ((s->o.max_records || s->o.max_bytes) && !src_take_budget(s, sf_rec_size(16))) {
            done = 1;
            break;
        }
        if (sf_log_append(s->lg, SF_REC_LATENCY, (uint8_t)p->ch, 0, ts, body, 16))
            p->dropped++;
        p->offered++;
        p->offered_bytes += sf_rec_size(16);
        n++;
        if (late > 0 && (uint64_t)late > maxl) {
            maxl = (uint64_t)late;
            atomic_store_explicit(&s->lat_max, maxl, memory_order_relaxed);
        }
        atomic_store_explicit(&s->lat_n, n, memory_order_relaxed);
        for (unsigned i = 0; i < s->o.nrules; i++)
            if (s->o.rules[i].kind == RULE_LATENCY && late > 0 &&
                (uint64_t)late > s->o.rules[i].ns) {
                src_fire(s, ts, "trigger: timer latency %" PRId64 " ns over %" PRIu64 " ns", late,
                         s->o.rules[i].ns);
                break;
            }
        if (now > next + s->period_ns)          /* overrun: skip the missed periods */
            next = now - (now - next) % s->period_ns;
    }
    src_flush_counters(p);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

const struct src_ops src_latency_ops = {
    .name = "latency:",
    .match = latency_match,
    .parse = latency_parse,
    .run = latency_main,
};
