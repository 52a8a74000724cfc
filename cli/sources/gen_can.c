/* gen:can[,rate=N][,channels=N]: synthetic CAN, one producer per channel; frame k of a
 * channel has id 0x100 + (k mod 16) and k as 8 little-endian data bytes. */
#include "source_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gen_can_match(const char *spec)
{
    return strcmp(spec, "gen:can") == 0 || strncmp(spec, "gen:can,", 8) == 0;
}

/* gen:can options: rate=N, channels=N */
static int parse_gen_can(struct log_source *s, const char *opts, char *err, size_t errlen)
{
    s->nprod = 1;
    while (opts && *opts) {
        const char *end = strchr(opts, ',');
        size_t n = end ? (size_t)(end - opts) : strlen(opts);
        uint64_t v;
        if (n > 5 && strncmp(opts, "rate=", 5) == 0 && !src_parse_u64_dec(opts + 5, n - 5, &v) &&
            v > 0 && v <= 100000000) {
            s->rate = v;
        } else if (n > 9 && strncmp(opts, "channels=", 9) == 0 &&
                   !src_parse_u64_dec(opts + 9, n - 9, &v) && v >= 1 && v <= SRC_MAX_CHANNELS) {
            s->nprod = (unsigned)v;
        } else {
            snprintf(err, errlen, "gen:can: bad option '%.*s' (rate=1..100000000, "
                     "channels=1..%u)", (int)n, opts, SRC_MAX_CHANNELS);
            return -1;
        }
        opts = end ? end + 1 : NULL;
    }
    for (unsigned i = 0; i < s->nprod; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "gen%u", i);
        src_add_name(s, nm, strlen(nm));
    }
    return 0;
}

static int gen_can_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    if (parse_gen_can(s, spec[7] ? spec + 8 : NULL, err, errlen))
        return -1;
    if (s->o.raw) {
        snprintf(err, errlen, "gen:can makes records; use gen:raw with --raw");
        return -1;
    }
    return 0;
}

/* --max-records: split between the channels, the first ones taking the remainder */
static int gen_can_prepare(struct log_source *s, struct producer *p)
{
    unsigned i = (unsigned)(p - s->prod);

    if (s->o.max_records)
        p->quota = s->o.max_records / s->nprod + (i < s->o.max_records % s->nprod);
    return 0;
}

/* Scheduled time of frame k after the start, ns (exact, no drift). */
static uint64_t sched_ns(uint64_t k, uint64_t rate)
{
    return (uint64_t)((unsigned __int128)k * NS / rate);
}

static void *gen_can_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    struct src_can_frame f;
    uint64_t k = 0, t0 = now_ns(CLOCK_MONOTONIC), r0 = now_ns(CLOCK_REALTIME);
    uint64_t limit = s->o.max_records ? p->quota : UINT64_MAX;
    int simple = !s->o.nrules && !s->o.max_bytes;

    memset(&f, 0, sizeof f);
    f.len = 8;
    while (k < limit && !stopping(s)) {
        uint64_t due;
        if (s->rate) {
            uint64_t el = now_ns(CLOCK_MONOTONIC) - t0;
            due = (uint64_t)((unsigned __int128)el * s->rate / NS) + 1;
        } else {
            due = k + 16;
            f.ts = now_ns(CLOCK_REALTIME);   /* unpaced: one clock read per 16 frames */
        }
        if (due > limit)
            due = limit;
        for (; k < due; k++) {
            int rc;
            if (s->rate)
                f.ts = r0 + sched_ns(k, s->rate);
            f.id = 0x100u + (uint32_t)(k & 15);
            put_le64(f.data, k);
            if (simple) {
                /* the hot path: nothing but the append and two counters */
                if (sf_log_append_can(s->lg, (uint8_t)p->ch, f.ts, f.id, 0, f.data, 8))
                    p->dropped++;
                p->offered++;
                continue;
            }
            rc = src_emit_can(p, &f);
            if (rc < 0)
                goto out;
        }
        if (simple && p->offered >= 65536) {
            p->offered_bytes = p->offered * sf_rec_size(SF_CAN_BODY + 8);
            src_flush_counters(p);
        }
        if (s->rate && k < limit)
            src_sleep_until(t0 + sched_ns(k, s->rate));
    }
out:
    if (simple)
        p->offered_bytes = p->offered * sf_rec_size(SF_CAN_BODY + 8);
    src_flush_counters(p);
    if (k >= limit)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

const struct src_ops src_gen_can_ops = {
    .name = "gen:can",
    .match = gen_can_match,
    .parse = gen_can_parse,
    .prepare = gen_can_prepare,
    .run = gen_can_main,
};
