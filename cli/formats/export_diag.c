/* The decoded views' shared part (export_diag.h): the reassembly around a view, and the
 * JSON line writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_diag.h"
#include "cli.h"

static int room(struct export_ctx *x, struct diag_state *s, size_t n)
{
    if ((size_t)(s->w - s->line) + n <= sizeof s->line)
        return 0;
    if (export_write(x, s->line, (size_t)(s->w - s->line)))
        return -1;
    s->w = s->line;
    return 0;
}

int dj_s(struct export_ctx *x, struct diag_state *s, const char *t)
{
    size_t n = strlen(t);
    while (n) {
        size_t k = n < 256 ? n : 256;
        if (room(x, s, k))
            return -1;
        memcpy(s->w, t, k);
        s->w += k;
        t += k;
        n -= k;
    }
    return 0;
}

int dj_hex(struct export_ctx *x, struct diag_state *s, const uint8_t *d, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (room(x, s, 2))
            return -1;
        *s->w++ = export_hexu[d[i] >> 4];
        *s->w++ = export_hexu[d[i] & 0xF];
    }
    return 0;
}

int dj_dec(struct export_ctx *x, struct diag_state *s, uint64_t v)
{
    if (room(x, s, 24))
        return -1;
    s->w = export_put_dec(s->w, v, 1);
    return 0;
}

int dj_sdec(struct export_ctx *x, struct diag_state *s, int64_t v)
{
    if (v < 0) {
        if (dj_s(x, s, "-"))
            return -1;
        return dj_dec(x, s, (uint64_t)0 - (uint64_t)v);
    }
    return dj_dec(x, s, (uint64_t)v);
}

int dj_num(struct export_ctx *x, struct diag_state *s, uint32_t v, int digits)
{
    if (room(x, s, 10))
        return -1;
    s->w = export_put_hex(s->w, v, digits);
    return 0;
}

int dj_double(struct export_ctx *x, struct diag_state *s, double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.10g", v);
    return dj_s(x, s, b);
}

int dj_str(struct export_ctx *x, struct diag_state *s, const char *t, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (dj_s(x, s, "\""))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (room(x, s, 6))
            return -1;
        if (c == '"' || c == '\\') {
            *s->w++ = '\\';
            *s->w++ = (char)c;
        } else if (c < 0x20 || c >= 0x7F) {
            /* bytes, not text: each one as \u00XX so the line stays valid JSON */
            memcpy(s->w, "\\u00", 4);
            s->w[4] = hex[c >> 4];
            s->w[5] = hex[c & 0xF];
            s->w += 6;
        } else {
            *s->w++ = (char)c;
        }
    }
    return dj_s(x, s, "\"");
}

int dj_ts(struct export_ctx *x, struct diag_state *s, uint64_t ts)
{
    if (x->relative) {
        if (ts < x->log_start)
            return dj_sdec(x, s, -(int64_t)(x->log_start - ts));
        ts -= x->log_start;
    }
    return dj_dec(x, s, ts);
}

int dj_head(struct export_ctx *x, struct diag_state *s, uint64_t first, uint64_t last,
            uint8_t channel, uint32_t id, uint32_t flags)
{
    char ifn[EXPORT_IFNAME_INLINE + 8];
    const char *name = ifn;
    char *q = export_put_ifname(x, ifn, channel);
    if (q)
        *q = '\0';
    else
        name = x->ifname[channel];
    int eff = (flags & SF_CAN_EFF) != 0;
    if (dj_s(x, s, "{\"ts_first\":") || dj_ts(x, s, first) || dj_s(x, s, ",\"ts_last\":") ||
        dj_ts(x, s, last) || dj_s(x, s, ",\"channel\":") || dj_dec(x, s, channel) ||
        dj_s(x, s, ",\"iface\":") || dj_str(x, s, name, (uint32_t)strlen(name)) ||
        dj_s(x, s, ",\"id\":\"") || dj_num(x, s, id, eff ? 8 : 3) ||
        dj_s(x, s, eff ? "\",\"eff\":true" : "\",\"eff\":false"))
        return -1;
    return 0;
}

int dj_end(struct export_ctx *x, struct diag_state *s)
{
    if (dj_s(x, s, "}\n") || export_write(x, s->line, (size_t)(s->w - s->line)))
        return -1;
    s->w = s->line;
    x->written++;
    return 0;
}

static int drain(struct export_ctx *x, struct diag_state *s)
{
    struct sf_proto_msg m;
    while (sf_proto_next(&s->p, &m))
        if (s->v->msg(x, s, &m))
            return -1;
    return 0;
}

int diag_begin(struct export_ctx *x, const struct diag_view *v)
{
    struct diag_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    struct sf_proto_config cfg = {0};
    cfg.sessions = s->sess;
    cfg.nsessions = sizeof s->sess / sizeof s->sess[0];
    cfg.arena = s->arena;
    cfg.arena_size = sizeof s->arena;
    cfg.isotp_pairs = x->isotp_pairs;
    cfg.n_isotp_pairs = x->n_isotp_pairs;
    if (sf_proto_init(&s->p, &cfg)) {
        free(s);
        return -1;
    }
    s->v = v;
    s->w = s->line;
    x->priv = s;
    return 0;
}

int diag_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    struct diag_state *s = x->priv;
    if (s->v->frame && s->v->frame(x, s, r, c))
        return -1;
    struct sf_proto_frame f = {r->ts, c->id, c->flags, r->channel, c->len, c->data};
    if (sf_proto_feed(&s->p, &f) > 0 && drain(x, s))
        return -1;
    return 1;
}

int diag_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

int diag_end(struct export_ctx *x)
{
    struct diag_state *s = x->priv;
    if (!s)
        return 0;
    sf_proto_finish(&s->p);
    int rc = drain(x, s);
    const struct sf_proto_stats *st = sf_proto_stats(&s->p);
    if (st->messages_broken)
        cli_err("%s: %llu broken messages not decoded (-f messages shows them; "
                "docs/DECODE.md)", x->out_name, (unsigned long long)st->messages_broken);
    free(s);
    x->priv = NULL;
    return rc;
}
