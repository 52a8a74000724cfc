/* Trigger rules and limits of the log sources (log_sources.h): parsing --filter (which the
 * core's control stage applies, cli/commands/log_control.c) and --trigger, and applying the
 * rules with the --max-records / --max-bytes budget to what a producer offers the log. CAN
 * rules act in src_emit_can; latency rules in latency.c through src_fire. */
#include "source_int.h"
#include "common/units.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int src_parse_filter(const char *s, struct src_filter *f)
{
    const char *slash;

    memset(f, 0, sizeof *f);
    if (*s == '!') {
        f->reject = 1;
        s++;
    }
    slash = strchr(s, '/');
    if (src_parse_hex32(s, slash ? (size_t)(slash - s) : strlen(s), &f->id))
        return -1;
    if (!slash) {
        f->mask = f->id > 0x7FF ? 0x1FFFFFFFu : 0x7FFu;
        return 0;
    }
    if (src_parse_hex32(slash + 1, strlen(slash + 1), &f->mask))
        return -1;
    return 0;
}

int src_parse_rule(const char *s, struct src_rule *r, const char **why)
{
    memset(r, 0, sizeof *r);
    if (strncmp(s, "can:", 4) == 0) {
        struct src_filter f;
        if (src_parse_filter(s + 4, &f) || f.reject) {
            *why = "expected can:ID/MASK (hexadecimal)";
            return -1;
        }
        r->kind = RULE_CAN;
        r->id = f.id;
        r->mask = f.mask;
        return 0;
    }
    if (strncmp(s, "latency>", 8) == 0) {
        const char *w = "", *v = s + 8;
        size_t n = strlen(v);
        /* the units table has no us / ns; thresholds need them: "100us", "500ns" */
        if (n > 2 && (strcmp(v + n - 2, "us") == 0 || strcmp(v + n - 2, "ns") == 0)) {
            char num[32];
            uint64_t sec_ns;
            if (n - 2 >= sizeof num) {
                *why = "value too long";
                return -1;
            }
            memcpy(num, v, n - 2);
            num[n - 2] = '\0';
            if (units_parse_duration(num, &sec_ns, &w)) {  /* the number, read as seconds */
                *why = w;
                return -1;
            }
            r->ns = sec_ns / (v[n - 2] == 'u' ? 1000000u : 1000000000u);
            r->kind = RULE_LATENCY;
            return 0;
        }
        if (units_parse_duration(v, &r->ns, &w)) {
            *why = w;
            return -1;
        }
        r->kind = RULE_LATENCY;
        return 0;
    }
    *why = "expected can:ID/MASK or latency>DURATION";
    return -1;
}

int src_take_budget(struct log_source *s, uint64_t bytes)
{
    if (s->o.max_records) {
        uint64_t n = atomic_fetch_add_explicit(&s->budget_rec, 1, memory_order_relaxed);
        if (n >= s->o.max_records) {
            atomic_store(&s->limit_hit, 1);
            return 0;
        }
        if (n + 1 == s->o.max_records)      /* the last one: nobody waits for more input */
            atomic_store(&s->limit_hit, 1);
    }
    if (s->o.max_bytes) {
        uint64_t b = atomic_fetch_add_explicit(&s->budget_bytes, bytes, memory_order_relaxed);
        if (b + bytes > s->o.max_bytes) {
            atomic_store(&s->limit_hit, 1);
            return 0;
        }
        if (b + bytes == s->o.max_bytes)
            atomic_store(&s->limit_hit, 1);
    }
    return 1;
}

void src_fire(struct log_source *s, uint64_t ts, const char *fmt, ...)
{
    va_list ap;

    atomic_fetch_add_explicit(&s->rules_fired, 1, memory_order_relaxed);
    if (pthread_mutex_trylock(&s->lock))
        return;
    if (!s->trig_pending) {
        s->trig_pending = 1;
        s->trig_ts = ts;
        va_start(ap, fmt);
        vsnprintf(s->trig_why, sizeof s->trig_why, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&s->lock);
}

static void check_can_rules(struct log_source *s, uint64_t ts, uint32_t id)
{
    for (unsigned i = 0; i < s->o.nrules; i++) {
        const struct src_rule *r = &s->o.rules[i];
        if (r->kind == RULE_CAN && ((id ^ r->id) & r->mask) == 0) {
            src_fire(s, ts, "trigger: CAN id 0x%" PRIX32 " matches %" PRIX32 "/%" PRIX32, id,
                     r->id, r->mask);
            return;
        }
    }
}

int src_emit_can(struct producer *p, const struct src_can_frame *f)
{
    struct log_source *s = p->s;
    int rc;

    if ((s->o.max_records || s->o.max_bytes) &&
        !src_take_budget(s, sf_rec_size(SF_CAN_BODY + f->len)))
        return -1;
    rc = sf_log_append_can(s->lg, (uint8_t)p->ch, f->ts, f->id, f->flags, f->data, f->len);
    p->offered++;
    p->offered_bytes += sf_rec_size(SF_CAN_BODY + f->len);
    if (rc)
        p->dropped++;
    if (s->o.nrules)
        check_can_rules(s, f->ts, f->id);
    if ((p->offered & (FLUSH_EVERY - 1)) == 0)
        src_flush_counters(p);
    return 1;
}
