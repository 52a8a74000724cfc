/* `streamfat log`'s control options (cli/log_control.h): parsing, building the core's
 * struct sf_ctl_cfg, attaching it. */
#include "log_control.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/units.h"

static int parse_hex(const char *s, size_t n, uint32_t *out)
{
    char buf[16];
    char *end;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2, n -= 2;
    if (!n || n > 8)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)buf[i]))
            return -1;
    unsigned long v = strtoul(buf, &end, 16);
    if (*end)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static uint32_t exact_mask(uint32_t id)
{
    return id > 0x7FF ? 0x1FFFFFFFu : 0x7FFu;
}

int lctl_parse_filter(struct lctl *c, const char *s)
{
    const char *orig = s, *slash, *at;
    struct lctl_filter f = { .channel = -1 };
    if (c->nfilters == LCTL_MAX_FILTERS)
        return cli_usage("at most %d --filter options", LCTL_MAX_FILTERS);
    if (*s == '!') {
        f.reject = 1;
        s++;
    }
    at = strchr(s, '@');
    slash = strchr(s, '/');
    if (slash && at && slash > at)
        slash = NULL;
    size_t idlen = slash ? (size_t)(slash - s) : at ? (size_t)(at - s) : strlen(s);
    if (parse_hex(s, idlen, &f.id))
        goto bad;
    f.mask = exact_mask(f.id);
    if (slash && parse_hex(slash + 1, at ? (size_t)(at - slash - 1) : strlen(slash + 1),
                           &f.mask))
        goto bad;
    if (at && at[1] && !(at[1] >= '0' && at[1] <= '9')) {     /* a channel's name */
        if (strlen(at + 1) >= sizeof f.chan_name || strchr(at + 1, '@'))
            goto bad;
        strcpy(f.chan_name, at + 1);
        f.channel = -2;
    } else if (at) {
        char *end;
        errno = 0;
        long ch = strtol(at + 1, &end, 10);
        if (!at[1] || *end || errno || ch < 0 || ch > 255)
            goto bad;
        f.channel = (int)ch;
    }
    c->filters[c->nfilters++] = f;
    return 0;
bad:
    return cli_usage("invalid filter '%s' ([!]ID[/MASK][@CHANNEL], hexadecimal ids, "
                     "CHANNEL 0..255 or a channel's name)", orig);
}

int lctl_has_channel_names(const struct lctl *c)
{
    for (unsigned i = 0; i < c->nfilters; i++)
        if (c->filters[i].channel == -2)
            return 1;
    return 0;
}

int lctl_resolve_channels(struct lctl *c, const char *const *names, unsigned n)
{
    for (unsigned i = 0; i < c->nfilters; i++) {
        struct lctl_filter *f = &c->filters[i];
        int found = -1, count = 0;
        if (f->channel != -2)
            continue;
        for (unsigned k = 0; k < n && k < 256; k++)
            if (names[k] && !strcmp(names[k], f->chan_name)) {
                found = found < 0 ? (int)k : found;
                count++;
            }
        if (count > 1)
            return cli_usage("--filter ...@%s: %d channels have that name; give its number",
                             f->chan_name, count);
        if (found < 0) {
            char known[200] = "";
            size_t kl = 0;
            for (unsigned k = 0; k < n && kl < sizeof known - 40; k++)
                kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%u=%s", k ? ", " : "",
                                       k, names[k] ? names[k] : "?");
            return cli_usage("--filter ...@%s: the source has no channel of that name "
                             "(known at start: %s)", f->chan_name, n ? known : "none");
        }
        f->channel = found;
    }
    return 0;
}

int lctl_parse_prescale(struct lctl *c, const char *s)
{
    const char *colon, *slash, *why;
    struct sf_ctl_prescale p;
    memset(&p, 0, sizeof p);
    if (c->npresc == SF_CTL_MAX_PRESCALERS)
        return cli_usage("at most %d --prescale options", SF_CTL_MAX_PRESCALERS);
    /* "change/BYTEMASK" holds a slash too: the id part ends at the first ':' */
    colon = strchr(s, ':');
    if (!colon)
        goto bad;
    slash = memchr(s, '/', (size_t)(colon - s));
    if (parse_hex(s, slash ? (size_t)(slash - s) : (size_t)(colon - s), &p.id))
        goto bad;
    p.mask = exact_mask(p.id);
    if (slash && parse_hex(slash + 1, (size_t)(colon - slash - 1), &p.mask))
        goto bad;
    p.ext = p.id > 0x7FF || p.mask > 0x7FF;
    const char *arg = colon + 1;
    if (strncmp(arg, "change", 6) == 0 && (arg[6] == 0 || arg[6] == '/')) {
        p.kind = SF_CTL_CHANGE;
        if (!arg[6]) {
            memset(p.bytes, 0xFF, sizeof p.bytes);
        } else {
            const char *h = arg + 7;
            size_t n = strlen(h);
            if (!n || n % 2 || n > 16)
                return cli_usage("invalid --prescale '%s': BYTEMASK is 1 to 8 bytes in hex "
                                 "(first data byte first)", s);
            for (size_t i = 0; i < n / 2; i++) {
                uint32_t b;
                if (parse_hex(h + 2 * i, 2, &b))
                    return cli_usage("invalid --prescale '%s': BYTEMASK is hex", s);
                p.bytes[i] = (uint8_t)b;
            }
        }
    } else if (*arg && strspn(arg, "0123456789") == strlen(arg)) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(arg, &end, 10);
        if (errno || !n || n > 0xFFFFFFFFul)
            return cli_usage("invalid --prescale '%s': N is 1 to 4294967295", s);
        p.kind = SF_CTL_EVERY;
        p.n = (uint32_t)n;
    } else {
        if (units_parse_duration(arg, &p.period_ns, &why) || !p.period_ns)
            return cli_usage("invalid --prescale '%s': %s", s,
                             p.period_ns ? why : "the period must be above 0");
        p.kind = SF_CTL_PERIOD;
    }
    c->presc[c->npresc++] = p;
    return 0;
bad:
    return cli_usage("invalid --prescale '%s' (ID[/MASK]:N, ID[/MASK]:T or "
                     "ID[/MASK]:change[/BYTEMASK], hexadecimal ids)", s);
}

/* Split buf at ':' into fields; returns their count, or max + 1 when there are more. */
static unsigned split(char *buf, char **f, unsigned max)
{
    unsigned k = 0;
    char *p = buf;
    for (;;) {
        if (k == max)
            return max + 1;
        f[k++] = p;
        if (!(p = strchr(p, ':')))
            return k;
        *p++ = 0;
    }
}

static int parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return !*s || *end || errno || !isfinite(*v) ? -1 : 0;
}

int lctl_parse_signal(struct lctl *c, const char *s)
{
    char buf[256], *f[8];
    const char *eq = strchr(s, '=');
    if (c->nsig == SF_CTL_MAX_SIGNALS)
        return cli_usage("at most %d --signal options", SF_CTL_MAX_SIGNALS);
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof c->names[0] || strlen(eq + 1) >= sizeof buf)
        goto bad;
    struct sf_ctl_signal *g = &c->sig[c->nsig];
    memset(g, 0, sizeof *g);
    memcpy(c->names[c->nsig], s, (size_t)(eq - s));
    c->names[c->nsig][eq - s] = 0;
    for (const char *q = c->names[c->nsig]; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '_' && *q != '.')
            return cli_usage("invalid --signal '%s': NAME is letters, digits, '_' and '.'", s);
    for (unsigned i = 0; i < c->nsig; i++)
        if (!strcmp(c->names[i], c->names[c->nsig]))
            return cli_usage("invalid --signal '%s': '%s' is defined twice", s,
                             c->names[i]);
    strcpy(buf, eq + 1);
    unsigned n = split(buf, f, 7);
    if (n < 3 || n > 7)
        goto bad;
    char *end;
    uint32_t id;
    if (parse_hex(f[0], strlen(f[0]), &id))
        goto bad;
    g->id = id;
    g->ext = id > 0x7FF;
    errno = 0;
    unsigned long start = strtoul(f[1], &end, 10);
    if (!*f[1] || *end || errno || start > 0xFFFF)
        goto bad;
    unsigned long len = strtoul(f[2], &end, 10);
    if (!*f[2] || *end || errno || len > 255)
        goto bad;
    g->start = (uint16_t)start;
    g->length = (uint8_t)len;
    g->scale = 1.0;
    unsigned k = 3;
    if (k < n && (!strcmp(f[k], "le") || !strcmp(f[k], "be")))
        g->motorola = !strcmp(f[k++], "be");
    if (k < n && (!strcmp(f[k], "u") || !strcmp(f[k], "s")))
        g->is_signed = !strcmp(f[k++], "s");
    if (k < n && parse_num(f[k++], &g->scale))
        goto bad;
    if (k < n && parse_num(f[k++], &g->offset))
        goto bad;
    if (k != n)
        goto bad;
    g->name = c->names[c->nsig];
    struct sf_ctl_cfg one = { .signals = g, .signal_count = 1 };
    int why = sf_log_control_check(&one, NULL);
    if (why)
        return cli_usage("invalid --signal '%s': %s", s, sf_log_control_why(why));
    c->nsig++;
    return 0;
bad:
    return cli_usage("invalid --signal '%s' (NAME=ID:START:LENGTH[:le|be][:u|s][:SCALE"
                     "[:OFFSET]], ID hexadecimal)", s);
}

static int keep_text(char **dst, const char *s)
{
    free(*dst);
    *dst = strdup(s);
    if (!*dst) {
        fprintf(stderr, "streamfat log: out of memory\n");
        return -1;
    }
    return 0;
}

int lctl_set_start(struct lctl *c, const char *s)
{
    return keep_text(&c->start_text, s);
}

int lctl_set_stop(struct lctl *c, const char *s)
{
    return keep_text(&c->stop_text, s);
}

int lctl_parse_trigger(struct lctl *c, const char *s)
{
    if (c->ntrig == SF_CTL_MAX_TRIGGERS)
        return cli_usage("at most %d signal triggers", SF_CTL_MAX_TRIGGERS);
    c->trig_text[c->ntrig] = NULL;
    if (keep_text(&c->trig_text[c->ntrig], s))
        return -1;
    c->ntrig++;
    return 0;
}

int lctl_parse_holdoff(struct lctl *c, const char *s)
{
    const char *why;
    if (units_parse_duration(s, &c->holdoff_ns, &why))
        return cli_usage("invalid --trigger-holdoff '%s': %s", s, why);
    return 0;
}

int lctl_active(const struct lctl *c)
{
    return c->nfilters || c->npresc || c->nsig || c->start_text || c->stop_text || c->ntrig;
}

/* "NAME OP VALUE" or "can:ID" into k. */
static int parse_cond(struct lctl *c, const char *opt, const char *s, struct sf_ctl_cond *k)
{
    memset(k, 0, sizeof *k);
    if (!strncmp(s, "can:", 4)) {
        uint32_t id;
        if (parse_hex(s + 4, strlen(s + 4), &id) || id > 0x1FFFFFFF)
            return cli_usage("invalid %s '%s': can:ID takes a hexadecimal id", opt, s);
        k->kind = SF_CTL_FRAME;
        k->id = id;
        k->ext = id > 0x7FF;
        return 0;
    }
    const char *p = s;
    while (*p == ' ')
        p++;
    const char *name = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
        p++;
    size_t nlen = (size_t)(p - name);
    while (*p == ' ')
        p++;
    static const struct { const char *t; uint8_t op; } ops[] = {
        { ">=", SF_CTL_GE }, { "<=", SF_CTL_LE }, { "==", SF_CTL_EQ }, { ">", SF_CTL_GT },
        { "<", SF_CTL_LT },
    };
    unsigned o;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        if (!strncmp(p, ops[o].t, strlen(ops[o].t)))
            break;
    if (!nlen)
        return cli_usage("invalid %s '%s': 'NAME OP VALUE' or 'can:ID'", opt, s);
    if (o == sizeof ops / sizeof ops[0] || strchr("<>=!", p[strlen(ops[o].t)]))
        return cli_usage("invalid %s '%s': bad operator (use >= > <= < ==)", opt, s);
    p += strlen(ops[o].t);
    while (*p == ' ')
        p++;
    char val[64];
    size_t vl = strlen(p);
    while (vl && p[vl - 1] == ' ')
        vl--;
    if (vl >= sizeof val)
        return cli_usage("invalid %s '%s': bad value", opt, s);
    memcpy(val, p, vl);
    val[vl] = 0;
    double v;
    if (parse_num(val, &v))
        return cli_usage("invalid %s '%s': '%s' is not a number", opt, s, val);
    unsigned i;
    for (i = 0; i < c->nsig; i++)
        if (strlen(c->names[i]) == nlen && !strncmp(c->names[i], name, nlen))
            break;
    if (i == c->nsig)
        return cli_usage("invalid %s '%s': unknown signal '%.*s' (define it with --signal)",
                         opt, s, (int)nlen, name);
    k->kind = SF_CTL_SIGNAL;
    k->op = ops[o].op;
    k->signal = (uint8_t)i;
    k->value = v;
    return 0;
}

/* The core's rules for CLI filter f: one for 11-bit and one for 29-bit frames (a CLI rule
 * matches both, as before the core ran them), either left out when it cannot match. */
static unsigned core_rules(const struct lctl_filter *f, struct sf_ctl_rule *out)
{
    unsigned n = 0;
    if (!(f->id & f->mask & ~0x7FFu))
        out[n++] = (struct sf_ctl_rule){ .id = f->id & f->mask & 0x7FFu,
                                         .mask = f->mask & 0x7FFu, .ext = 0,
                                         .reject = (uint8_t)f->reject };
    if (!(f->id & f->mask & ~0x1FFFFFFFu))
        out[n++] = (struct sf_ctl_rule){ .id = f->id & f->mask & 0x1FFFFFFFu,
                                         .mask = f->mask & 0x1FFFFFFFu, .ext = 1,
                                         .reject = (uint8_t)f->reject };
    return n;
}

/* One channel's (or, ch < 0, every channel's) rules: rejects first, then accepts, which is
 * today's meaning in a first-match list; the default rejects when there are accepts. */
static void build_filter(struct lctl *c, int ch, struct sf_ctl_filter *out,
                         struct sf_ctl_rule *rules)
{
    unsigned n = 0, accepts = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (unsigned i = 0; i < c->nfilters; i++) {
            const struct lctl_filter *f = &c->filters[i];
            if (f->reject != pass || (f->channel >= 0 && f->channel != ch))
                continue;
            n += core_rules(f, rules + n);
            accepts += !f->reject;
        }
    out->rules = rules;
    out->count = n;
    out->default_reject = accepts > 0;
    out->all = ch < 0;
    out->channel = (uint8_t)(ch < 0 ? 0 : ch);
}

int lctl_build(struct lctl *c, unsigned channels, int recorder)
{
    struct sf_ctl_cfg *g = &c->cfg;
    memset(g, 0, sizeof *g);
    if (c->nfilters) {
        int chans[LCTL_MAX_FILTERS];
        unsigned nch = 0;
        for (unsigned i = 0; i < c->nfilters; i++) {
            int ch = c->filters[i].channel, seen = 0;
            for (unsigned j = 0; j < nch; j++)
                seen |= chans[j] == ch;
            if (ch >= 0 && !seen)
                chans[nch++] = ch;
        }
        c->cfilters = calloc(nch + 1, sizeof *c->cfilters);
        c->crules = calloc((size_t)(nch + 1) * 2 * c->nfilters, sizeof *c->crules);
        if (!c->cfilters || !c->crules) {
            fprintf(stderr, "streamfat log: out of memory\n");
            return -1;
        }
        build_filter(c, -1, &c->cfilters[0], c->crules);
        for (unsigned j = 0; j < nch; j++)
            build_filter(c, chans[j], &c->cfilters[j + 1],
                         c->crules + (size_t)(j + 1) * 2 * c->nfilters);
        g->filters = c->cfilters;
        g->filter_count = nch + 1;
    }
    g->prescalers = c->presc;
    g->prescaler_count = c->npresc;
    g->signals = c->sig;
    g->signal_count = c->nsig;
    if (c->start_text && parse_cond(c, "--start", c->start_text, &g->start))
        return -1;
    if (c->stop_text && parse_cond(c, "--stop", c->stop_text, &g->stop))
        return -1;
    for (unsigned i = 0; i < c->ntrig; i++) {
        if (parse_cond(c, "--trigger", c->trig_text[i], &c->trig[i]))
            return -1;
        if (c->trig[i].kind != SF_CTL_SIGNAL)
            return cli_usage("invalid --trigger 'signal:%s': 'signal:NAME OP VALUE'",
                             c->trig_text[i]);
    }
    if (c->ntrig && !recorder)
        return cli_usage("--trigger needs the flight recorder (--pre and/or --post)");
    g->triggers = c->trig;
    g->trigger_count = c->ntrig;
    g->trigger_holdoff_ns = c->holdoff_ns;
    g->flags = c->rotate_on_start ? SF_CTL_ROTATE_ON_START : 0;
    g->stat_channels = channels ? (channels > 256 ? 256 : channels) : 1;
    uint32_t idx;
    int why = sf_log_control_check(g, &idx);
    if (why) {
        if (why == SF_CTL_TOO_MANY_RULES || why == SF_CTL_BAD_RULE_ID)
            return cli_usage("invalid --filter set: %s", sf_log_control_why(why));
        return cli_usage("invalid control options: %s", sf_log_control_why(why));
    }
    return 0;
}

int lctl_attach(struct lctl *c, struct sf_log *lg)
{
    uint32_t size = sf_log_control_mem_size(&c->cfg);
    if (posix_memalign(&c->mem, 64, size)) {
        fprintf(stderr, "streamfat log: out of memory\n");
        return -1;
    }
    int err = sf_log_control(lg, &c->cfg, c->mem, size);
    if (err) {
        fprintf(stderr, "streamfat log: the control stage: %s\n", sf_strerror(err));
        return -1;
    }
    return 0;
}

void lctl_free(struct lctl *c)
{
    free(c->start_text);
    free(c->stop_text);
    for (unsigned i = 0; i < c->ntrig; i++)
        free(c->trig_text[i]);
    free(c->cfilters);
    free(c->crules);
    free(c->mem);
    memset(c, 0, sizeof *c);
}
