/* The logger's control stage: filters, prescalers, signals, start/stop, signal triggers and
 * their per-channel counters (contract in include/streamfat/log.h, "The control stage").
 * Left out with SF_NO_LOG_CONTROL (control_off.c instead).
 *
 * Sections: validation - signals and thresholds - compilation (sf_log_open) - the producer
 * path (ctl_append_can) - the writer's side (service, statistics).
 *
 * Compiled form, in the caller's memory (struct sfl_ctl, then one struct ctl_filt per
 * filter, then one struct ctl_chan per counted channel):
 * - Standard ids (11 bits) are looked up in one table of 2048 entries per filter (and one
 *   for channels without a filter), built at open: each entry holds in 16 bits the verdict
 *   (INFO_REJECT), the first matching prescaler and the "group" (signals to decode, frame
 *   conditions) of the id, so a frame costs one load. Masks cost nothing at run time;
 *   first match is decided when the table is built.
 * - Extended ids (29 bits): a sorted table of the exact-id rules (mask covering all 29
 *   bits), searched by bisection, and the masked rules in their order. First-match is kept
 *   although the two are searched apart: for an exact entry the value stored is that of the
 *   first rule in the whole list that matches its id (computed at open over all rules,
 *   masked ones included), and an id with no exact entry can only be matched by masked
 *   rules, whose list keeps the original order.
 * - Conditions compare raw signal values against [lo, hi] ranges computed once from the
 *   physical threshold, scale and offset (so the producer does no floating point); signed
 *   values are compared with their sign bit flipped, which orders them as unsigned. */
#include "log_impl.h"
#include "rec_layout.h"

#define STD_IDS 2048u
#define NCOND (2u + SF_CTL_MAX_TRIGGERS)     /* start, stop, triggers */
#define C_START 0u
#define C_STOP 1u
#define C_TRIG 2u
#define NOMATCH 0xFFu
#define TRIG_QUEUE 8u                        /* fires between two service steps */

enum { K_LOGGED, K_FILTERED, K_PRESCALED, K_PAUSED, K_N };   /* one per frame */

struct ext_exact {
    uint32_t id;
    uint8_t val;
};
struct ext_mask {
    uint32_t id, mask;
    uint8_t val;
};
/* Extended-id matcher: exact ids sorted, masked rules in order. */
struct ext_tab {
    uint32_t n_exact, n_mask;
    struct ext_exact exact[SF_CTL_MAX_EXT_RULES];
    struct ext_mask mask[SF_CTL_MAX_EXT_RULES];
};

#define INFO_REJECT 0xFFFFu

struct ctl_filt {
    uint16_t std_info[STD_IDS];        /* the logger's std_info, INFO_REJECT where rejected */
    uint8_t ext_default;               /* reject when no extended rule matches */
    struct ext_tab ext;                /* val: 1 reject, 0 accept */
};

struct ctl_sig {
    uint8_t b0, sh, nb, need;          /* first byte, shift, bytes spanned, frame bytes needed */
    uint8_t len, motorola, is_signed;
    uint8_t fast;                      /* within 8 bytes: one shift of the frame's first 8 */
    uint8_t fsh;                       /* that shift: Intel right by start, Motorola left by
                                          the MSB's big-endian position */
    uint64_t mask;                     /* Intel: 2^len - 1 */
    uint8_t lsh, rsh;                  /* fast: the field is (frame's first 8 bytes, little-
                                          endian or, Motorola, big-endian) << lsh >> rsh */
    uint32_t conds;                    /* conditions on this signal (bit per C_*), those that
                                          can never hold left out */
};

struct ctl_cond {
    uint8_t never;
    uint64_t lo, hi;                   /* biased raw range (see the top of this file) */
    uint64_t span;                     /* hi - lo: holds when biased - lo <= span */
};

struct ctl_group {
    uint32_t sigs;                     /* signals of this id that some condition uses */
    uint32_t frame_conds;              /* SF_CTL_FRAME conditions on this id */
    uint8_t slow;                      /* a signal reaches past the first 8 data bytes */
    uint8_t chk0, nchk;                /* not slow: its checks, check[chk0 .. chk0 + nchk) */
    uint8_t single;                    /* one check, no frame condition (ctl_group's way) */
    uint8_t pad[3];                    /* 16 bytes: indexed by a shift */
};

/* One condition on one signal, self-contained for an 8-byte frame: w = the frame's first 8
 * bytes as a little-endian (Intel) or big-endian (Motorola) word; the condition holds when
 * ((w * mul & top) ^ flip) - lo <= span. w * mul (mul = 2^lsh: a shift without a shift
 * count register) puts the field at the top of the word, top keeps only it; flip (the sign
 * bit, for a signed signal) maps the field's two's complement values in order onto 0 ..
 * 2^len - 1; lo and span are the condition's bounds in that order, moved up by the same
 * 64 - len bits. Modulo 2^64 the top len bits compute modulo 2^len, where v in [lo, hi]
 * is exactly (v - lo) mod 2^len <= hi - lo, so one unsigned comparison decides. */
struct ctl_check {
    uint32_t motorola;
    uint32_t bit;                      /* 1 << the condition's C_* */
    uint64_t mul, top, flip, lo, span;
    uint64_t pad[2];                   /* 64 bytes: indexed by a shift */
};

struct ctl_presc {
    _Atomic uint32_t lock;             /* try-lock over the rest; busy: the frame is kept */
    uint8_t kind;                      /* copies of the cfg's, next to the state */
    uint32_t n;
    uint64_t period_ns, mask;
    _Atomic uint32_t count;            /* every: outside the lock (ctl_append_can) */
    uint8_t have, last_len;
    uint64_t last_ts, last_data;
    uint8_t pad[8];                    /* 64 bytes: indexed by a shift */
};

struct ctl_chan {
    _Atomic uint32_t c[K_N];           /* producers: counts mod 2^32 */
    uint32_t last[K_N];                /* writer: c when last folded */
    uint64_t tot[K_N];                 /* writer: folded totals */
};

struct sfl_ctl {
    const struct sf_ctl_cfg *cfg;
    uint32_t nfilt, nchan;
    uint8_t have_runctl, rotate_on_start;
    struct ctl_route {                      /* per channel */
        const uint16_t *std;                /* std_info, or its filter's */
        struct ctl_chan *ch;                /* counters */
    } route[SF_LOG_CHANNELS];
    uint8_t chan_filter[SF_LOG_CHANNELS];   /* 1 + filter index; 0: none */
    uint16_t std_info[STD_IDS];             /* per standard id: 1 + group index (0: none)
                                               | (1 + prescaler index) << 8 (0: none); the
                                               one table of the standard ids, built in place */
    struct ext_tab ext_presc;               /* val: prescaler index */
    struct ext_tab ext_group;               /* val: group index (exact only) */
    struct ctl_group group[SF_CTL_MAX_SIGNALS + NCOND];
    struct ctl_sig sig[SF_CTL_MAX_SIGNALS];
    struct ctl_cond cond[NCOND];
    struct ctl_check check[NCOND];          /* by group (fast groups only) */
    struct ctl_presc presc[SF_CTL_MAX_PRESCALERS];
    /* start/stop: bit 0 running, bits 1..31 stops so far (mod 2^31) */
    _Atomic uint32_t run;
    /* triggers: hold-off times and the pending request, under trig_lock */
    _Atomic uint32_t trig_lock;
    uint8_t trig_have[SF_CTL_MAX_TRIGGERS];
    uint64_t trig_last[SF_CTL_MAX_TRIGGERS];
    uint8_t trig_n, trig_which[TRIG_QUEUE];   /* fires waiting for the writer, oldest first */
    uint64_t trig_ts[TRIG_QUEUE];
    /* writer */
    uint32_t stops_seen;
    struct ctl_filt *filt;
    struct ctl_chan *chan;
};

/* ---- validation ---- */

static uint32_t id_limit(uint8_t ext)
{
    return ext ? 0x1FFFFFFFu : 0x7FFu;
}

static int finite(double v)
{
    return v == v && v - v == 0.0;             /* not NaN, not infinite */
}

static int sig_check(const struct sf_ctl_signal *s)
{
    if (s->ext > 1 || s->id > id_limit(s->ext) || s->motorola > 1 || s->is_signed > 1 ||
        s->scale == 0.0 || !finite(s->scale) || !finite(s->offset))
        return SF_CTL_BAD_SIGNAL;
    if (s->length == 0 || s->length > 64)
        return SF_CTL_BAD_LENGTH;
    if (s->start >= 512)
        return SF_CTL_BAD_START_BIT;
    uint32_t sh = s->motorola ? 7u - (s->start & 7u) : s->start & 7u;
    uint32_t bytes = (s->start >> 3) + ((sh + s->length + 7u) >> 3);
    return bytes > 64 ? SF_CTL_BAD_START_BIT : SF_CTL_OK;
}

static int cond_check(const struct sf_ctl_cfg *c, const struct sf_ctl_cond *k)
{
    switch (k->kind) {
    case SF_CTL_NONE:
        return SF_CTL_OK;
    case SF_CTL_SIGNAL:
        if (k->signal >= c->signal_count)
            return SF_CTL_UNKNOWN_SIGNAL;
        if (k->op < SF_CTL_GE || k->op > SF_CTL_EQ)
            return SF_CTL_BAD_OP;
        return finite(k->value) ? SF_CTL_OK : SF_CTL_BAD_VALUE;
    case SF_CTL_FRAME:
        return k->ext > 1 || k->id > id_limit(k->ext) ? SF_CTL_BAD_RULE_ID : SF_CTL_OK;
    default:
        return SF_CTL_BAD_OP;
    }
}

int sf_log_control_check(const struct sf_ctl_cfg *c, uint32_t *index)
{
    uint32_t dummy, seen[SF_LOG_CHANNELS / 32] = { 0 }, any = 0;
    int bad;
    if (!index)
        index = &dummy;
    *index = 0;
    if (c->stat_channels > SF_LOG_CHANNELS)
        return SF_CTL_BAD_CHANNELS;
    if (c->filter_count > 255)
        return SF_CTL_TOO_MANY;              /* filter indexes are bytes */
    for (uint32_t f = 0; f < c->filter_count; f++) {
        const struct sf_ctl_filter *fl = &c->filters[f];
        uint32_t ext = 0;
        *index = f;
        if (fl->all > 1)
            return SF_CTL_DUP_CHANNEL;
        if (fl->all) {
            if (any++)
                return SF_CTL_DUP_CHANNEL;
        } else {
            if (seen[fl->channel >> 5] & 1u << (fl->channel & 31))
                return SF_CTL_DUP_CHANNEL;
            seen[fl->channel >> 5] |= 1u << (fl->channel & 31);
        }
        if (fl->count > SF_CTL_MAX_RULES || (fl->count && !fl->rules))
            return SF_CTL_TOO_MANY_RULES;
        for (uint32_t i = 0; i < fl->count; i++) {
            const struct sf_ctl_rule *r = &fl->rules[i];
            if (r->ext > 1 || r->id > id_limit(r->ext) || r->mask > id_limit(r->ext) ||
                r->reject > 1)
                return SF_CTL_BAD_RULE_ID;
            ext += r->ext;
        }
        if (ext > SF_CTL_MAX_EXT_RULES)
            return SF_CTL_TOO_MANY_RULES;
    }
    *index = 0;
    if (c->prescaler_count > SF_CTL_MAX_PRESCALERS || c->signal_count > SF_CTL_MAX_SIGNALS ||
        c->trigger_count > SF_CTL_MAX_TRIGGERS ||
        (c->prescaler_count && !c->prescalers) || (c->signal_count && !c->signals) ||
        (c->trigger_count && !c->triggers))
        return SF_CTL_TOO_MANY;
    for (uint32_t i = 0; i < c->prescaler_count; i++) {
        const struct sf_ctl_prescale *p = &c->prescalers[i];
        *index = i;
        if (p->ext > 1 || p->id > id_limit(p->ext) || p->mask > id_limit(p->ext) ||
            (p->kind == SF_CTL_EVERY && !p->n) || (p->kind == SF_CTL_PERIOD && !p->period_ns) ||
            p->kind < SF_CTL_EVERY || p->kind > SF_CTL_CHANGE)
            return SF_CTL_BAD_PRESCALER;
    }
    for (uint32_t i = 0; i < c->signal_count; i++) {
        *index = i;
        if ((bad = sig_check(&c->signals[i])))
            return bad;
    }
    for (uint32_t i = 0; i < 2 + c->trigger_count; i++) {
        *index = i;
        if ((bad = cond_check(c, i == 0 ? &c->start : i == 1 ? &c->stop : &c->triggers[i - 2])))
            return bad;
        if (i >= 2 && c->triggers[i - 2].kind == SF_CTL_NONE)
            return SF_CTL_BAD_OP;
    }
    *index = 0;
    return SF_CTL_OK;
}

const char *sf_log_control_why(int bad)
{
    switch (bad) {
    case SF_CTL_OK: return "valid";
    case SF_CTL_BAD_RULE_ID: return "an id or mask beyond 11 bits (standard) or 29 (extended)";
    case SF_CTL_TOO_MANY_RULES: return "too many filter rules for one channel";
    case SF_CTL_DUP_CHANNEL: return "two filters for one channel";
    case SF_CTL_TOO_MANY: return "too many filters, prescalers, signals or triggers";
    case SF_CTL_BAD_PRESCALER: return "invalid prescaler (kind, n or period)";
    case SF_CTL_BAD_START_BIT: return "signal reaches past 64 data bytes";
    case SF_CTL_BAD_LENGTH: return "signal length not 1 to 64 bits";
    case SF_CTL_BAD_SIGNAL: return "invalid signal (id, scale or offset)";
    case SF_CTL_UNKNOWN_SIGNAL: return "condition on an unknown signal";
    case SF_CTL_BAD_OP: return "invalid condition operator";
    case SF_CTL_BAD_VALUE: return "condition threshold not a finite number";
    case SF_CTL_BAD_CHANNELS: return "more than 256 counted channels";
    default: return "invalid control configuration";
    }
}

uint32_t sf_log_control_mem_size(const struct sf_ctl_cfg *c)
{
    if (!c)
        return 0;
    uint32_t nchan = c->stat_channels ? c->stat_channels : 1;
    uint32_t nfilt = c->filter_count <= 255 ? c->filter_count : 255;
    return (uint32_t)((sizeof(struct sfl_ctl) + 7u) & ~7u) +
           nfilt * (uint32_t)((sizeof(struct ctl_filt) + 7u) & ~7u) +
           nchan * (uint32_t)sizeof(struct ctl_chan);
}

/* ---- signals and thresholds ---- */

static void sig_compile(struct ctl_sig *k, const struct sf_ctl_signal *s)
{
    k->b0 = (uint8_t)(s->start >> 3);
    k->sh = (uint8_t)(s->motorola ? 7u - (s->start & 7u) : s->start & 7u);
    k->nb = (uint8_t)((k->sh + s->length + 7u) >> 3);
    k->need = (uint8_t)(k->b0 + k->nb);
    k->len = s->length;
    k->motorola = s->motorola;
    k->is_signed = s->is_signed;
    k->fast = k->need <= 8;
    k->fsh = (uint8_t)(s->motorola ? 8u * k->b0 + k->sh : s->start);
    k->mask = s->length < 64 ? (1ull << s->length) - 1 : ~0ull;
    /* fast: the field's most significant bit at 64 - lsh - 1 of the 64-bit word, its
     * least at rsh - lsh (Intel: start + length <= 64; Motorola: fsh + length <= 64) */
    k->lsh = (uint8_t)(k->fast ? (s->motorola ? k->fsh : 64u - s->start - s->length) : 0);
    k->rsh = (uint8_t)(64u - s->length);
}

/* Intel: the bits from the least significant up, byte 0 first. Motorola (DBC): start is
 * the most significant bit; going down a byte's bits, then to bit 7 of the next byte, i.e.
 * big-endian bit order from the start bit's position. With sh leading bits skipped the
 * field spans nb <= 9 bytes. */
static uint64_t sig_extract(const struct ctl_sig *k, const uint8_t *d)
{
    uint32_t n = k->nb < 8 ? k->nb : 8;
    uint64_t v = 0;
    d += k->b0;
    if (!k->motorola) {
        for (uint32_t i = 0; i < n; i++)
            v |= (uint64_t)d[i] << (8 * i);
        v >>= k->sh;
        if (k->nb == 9)
            v |= (uint64_t)d[8] << (64 - k->sh);
        if (k->len < 64)
            v &= (1ull << k->len) - 1;
    } else {
        for (uint32_t i = 0; i < n; i++)
            v |= (uint64_t)d[i] << (56 - 8 * i);
        v <<= k->sh;
        if (k->nb == 9)
            v |= (uint64_t)d[8] >> (8 - k->sh);
        v >>= 64 - k->len;
    }
    if (k->is_signed && k->len < 64 && (v >> (k->len - 1) & 1))
        v |= ~0ull << k->len;
    return v;
}

int sf_ctl_signal_raw(const struct sf_ctl_signal *s, const uint8_t *data, uint8_t len,
                      int64_t *raw)
{
    struct ctl_sig k;
    if (sig_check(s))
        return SF_EINVAL;
    sig_compile(&k, s);
    if (len < k.need)
        return SF_EINVAL;
    *raw = (int64_t)sig_extract(&k, data);
    return 0;
}

#define SIGN64 0x8000000000000000ull

/* The condition raw OP q over the signal's raw domain, as a biased range [lo, hi] (or never).
 * q is the threshold in raw units, op already flipped for a negative scale. */
static void cond_range(struct ctl_cond *cc, double q, uint8_t op, int sgn, uint32_t len)
{
    /* the domain: [dmin, dtop) in doubles; [bmin, bmax] biased */
    double half = (double)(1ull << 62) * 2.0;            /* 2^63 */
    double dtop = len == 64 ? (sgn ? half : half * 2.0) :
                  (double)(1ull << (sgn ? len - 1 : len));
    double dmin = sgn ? -dtop : 0.0;
    uint64_t bmin = sgn ? SIGN64 - (len == 64 ? SIGN64 : 1ull << (len - 1)) : 0;
    uint64_t bmax = sgn ? SIGN64 + ((len == 64 ? SIGN64 : 1ull << (len - 1)) - 1) :
                    (len == 64 ? ~0ull : (1ull << len) - 1);
    int where = q < dmin ? -1 : q >= dtop ? 1 : 0;       /* below, above, inside */
    uint64_t fl = 0, ce = 0;
    int is_int = 0;
    if (!where) {
        if (sgn) {
            int64_t t = (int64_t)q;
            if ((double)t > q)
                t--;
            fl = (uint64_t)t ^ SIGN64;
            is_int = (double)t == q;
        } else {
            uint64_t t = (uint64_t)q;
            fl = t;
            is_int = (double)t == q;
        }
        ce = is_int ? fl : fl + 1;                         /* may be bmax + 1 */
    }
    cc->never = 0;
    cc->lo = bmin;
    cc->hi = bmax;
    switch (op) {
    case SF_CTL_GE:                                       /* raw >= ceil(q) */
        if (where > 0 || (!where && ce > bmax))
            cc->never = 1;
        else if (!where)
            cc->lo = ce;
        break;
    case SF_CTL_GT:                                       /* raw >= floor(q) + 1 */
        if (where > 0 || (!where && fl >= bmax))
            cc->never = 1;
        else if (!where)
            cc->lo = fl + 1;
        break;
    case SF_CTL_LE:                                       /* raw <= floor(q) */
        if (where < 0)
            cc->never = 1;
        else if (!where)
            cc->hi = fl;
        break;
    case SF_CTL_LT:                                       /* raw <= ceil(q) - 1 */
        if (where < 0 || (!where && ce <= bmin))
            cc->never = 1;
        else if (!where)
            cc->hi = ce - 1;
        break;
    default:                                              /* SF_CTL_EQ */
        if (where || !is_int)
            cc->never = 1;
        else
            cc->lo = cc->hi = fl;
        break;
    }
}

static void cond_compile(struct ctl_cond *cc, const struct sf_ctl_cfg *c,
                         const struct sf_ctl_cond *k)
{
    const struct sf_ctl_signal *s = &c->signals[k->signal];
    uint8_t op = k->op;
    if (s->scale < 0) {                     /* raw * scale >= x  <=>  raw <= x / scale */
        static const uint8_t flip[6] = { 0, SF_CTL_LE, SF_CTL_LT, SF_CTL_GE, SF_CTL_GT,
                                         SF_CTL_EQ };
        op = flip[op];
    }
    cond_range(cc, (k->value - s->offset) / s->scale, op, s->is_signed, s->length);
    cc->span = cc->hi - cc->lo;
}

/* ---- compilation ---- */

static int rule_exact(uint32_t mask, uint8_t ext)
{
    return (mask & id_limit(ext)) == id_limit(ext);
}

static void ext_sort(struct ext_tab *t)
{
    for (uint32_t i = 1; i < t->n_exact; i++) {          /* insertion sort: <= 64 entries */
        struct ext_exact e = t->exact[i];
        uint32_t j = i;
        for (; j && t->exact[j - 1].id > e.id; j--)
            t->exact[j] = t->exact[j - 1];
        t->exact[j] = e;
    }
}

/* First match for an extended id: NOMATCH when nothing matches. */
static inline uint8_t ext_lookup(const struct ext_tab *t, uint32_t id)
{
    uint32_t lo = 0, hi = t->n_exact;
    while (lo < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (t->exact[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n_exact && t->exact[lo].id == id)
        return t->exact[lo].val;
    for (uint32_t i = 0; i < t->n_mask; i++)
        if (((id ^ t->mask[i].id) & t->mask[i].mask) == 0)
            return t->mask[i].val;
    return NOMATCH;
}

static void filt_compile(struct ctl_filt *f, const struct sf_ctl_filter *fl)
{
    memset(f, 0, sizeof *f);
    for (uint32_t id = 0; id < STD_IDS; id++) {
        uint8_t rej = fl->default_reject;
        for (uint32_t i = 0; i < fl->count; i++) {
            const struct sf_ctl_rule *r = &fl->rules[i];
            if (!r->ext && ((id ^ r->id) & r->mask) == 0) {
                rej = r->reject;
                break;
            }
        }
        if (rej)
            f->std_info[id] = INFO_REJECT;      /* the others: the logger's, at the end */
    }
    f->ext_default = fl->default_reject;
    for (uint32_t i = 0; i < fl->count; i++) {
        const struct sf_ctl_rule *r = &fl->rules[i];
        if (!r->ext)
            continue;
        if (rule_exact(r->mask, 1)) {
            int dup = 0;
            for (uint32_t j = 0; j < f->ext.n_exact; j++)
                dup |= f->ext.exact[j].id == r->id;
            if (dup)
                continue;                   /* an earlier rule decides this id already */
            /* the first rule of the whole list matching this id decides it */
            uint8_t v = r->reject;
            for (uint32_t j = 0; j < i; j++) {
                const struct sf_ctl_rule *q = &fl->rules[j];
                if (q->ext && ((r->id ^ q->id) & q->mask) == 0) {
                    v = q->reject;
                    break;
                }
            }
            f->ext.exact[f->ext.n_exact].id = r->id;
            f->ext.exact[f->ext.n_exact++].val = v;
        } else {
            f->ext.mask[f->ext.n_mask].id = r->id & r->mask;
            f->ext.mask[f->ext.n_mask].mask = r->mask;
            f->ext.mask[f->ext.n_mask++].val = r->reject;
        }
    }
    ext_sort(&f->ext);
}

/* The group of (id, ext), created when missing: index, or NOMATCH when full (cannot
 * happen: at most one per signal and condition). */
static uint8_t group_of(struct sfl_ctl *x, uint32_t *ngroups, uint32_t id, uint8_t ext)
{
    if (!ext) {
        if (!(x->std_info[id] & 0xFFu)) {
            if (*ngroups >= sizeof x->group / sizeof x->group[0])
                return NOMATCH;
            x->std_info[id] |= (uint16_t)(++*ngroups);
        }
        return (uint8_t)((x->std_info[id] & 0xFFu) - 1);
    }
    for (uint32_t i = 0; i < x->ext_group.n_exact; i++)
        if (x->ext_group.exact[i].id == id)
            return x->ext_group.exact[i].val;
    if (*ngroups >= sizeof x->group / sizeof x->group[0])
        return NOMATCH;
    x->ext_group.exact[x->ext_group.n_exact].id = id;
    x->ext_group.exact[x->ext_group.n_exact++].val = (uint8_t)*ngroups;
    return (uint8_t)(*ngroups)++;
}

static int ctl_append_can(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                          uint32_t flags, const uint8_t *data, uint32_t len);
static int ctl_service(struct sf_log *lg, uint64_t now);
static void ctl_stats(const struct sf_log *lg, struct sf_log_stats *st);
static int ctl_append_measured(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                               uint32_t flags, const uint8_t *data, uint32_t len);
static const struct sfl_ctl_ops ctl_ops = { ctl_append_can, ctl_service, ctl_stats };
static const struct sfl_ctl_ops ctl_ops_measured = { ctl_append_measured, ctl_service,
                                                     ctl_stats };

int sf_log_control(struct sf_log *lg, const struct sf_ctl_cfg *c, void *mem, uint32_t mem_size)
{
    if (!c || lg->ctl || lg->flags & SF_LOG_RAW || !mem || ((uintptr_t)mem & 7u) ||
        mem_size < sf_log_control_mem_size(c) || sf_log_control_check(c, NULL) != SF_CTL_OK ||
        (c->trigger_count && !lg->fr))
        return SF_EINVAL;
    struct sfl_ctl *x = mem;
    memset(x, 0, sizeof *x);
    x->cfg = c;
    x->nfilt = c->filter_count;
    x->nchan = c->stat_channels ? c->stat_channels : 1;
    x->filt = (struct ctl_filt *)(void *)((uint8_t *)x + ((sizeof *x + 7u) & ~7u));
    x->chan = (struct ctl_chan *)(void *)((uint8_t *)x->filt +
                                          x->nfilt * ((sizeof(struct ctl_filt) + 7u) & ~7u));
    uint32_t all = 0;
    for (uint32_t f = 0; f < x->nfilt; f++) {
        filt_compile(&x->filt[f], &c->filters[f]);
        if (c->filters[f].all)
            all = f + 1;
        else
            x->chan_filter[c->filters[f].channel] = (uint8_t)(f + 1);
    }
    for (uint32_t ch = 0; all && ch < SF_LOG_CHANNELS; ch++)
        if (!x->chan_filter[ch])
            x->chan_filter[ch] = (uint8_t)all;
    /* prescalers: the first matching one decides */
    for (uint32_t id = 0; id < STD_IDS; id++) {
        for (uint32_t i = 0; i < c->prescaler_count; i++) {
            const struct sf_ctl_prescale *p = &c->prescalers[i];
            if (!p->ext && ((id ^ p->id) & p->mask) == 0) {
                x->std_info[id] = (uint16_t)((i + 1) << 8);
                break;
            }
        }
    }
    for (uint32_t i = 0; i < c->prescaler_count; i++) {
        const struct sf_ctl_prescale *p = &c->prescalers[i];
        if (!p->ext)
            continue;
        if (rule_exact(p->mask, 1)) {
            /* an earlier prescaler matching this id (exact or masked) decides it, and the
             * lookup finds that one without an entry for this id */
            if (ext_lookup(&x->ext_presc, p->id) != NOMATCH)
                continue;
            x->ext_presc.exact[x->ext_presc.n_exact].id = p->id;
            x->ext_presc.exact[x->ext_presc.n_exact++].val = (uint8_t)i;
            ext_sort(&x->ext_presc);
        } else {
            x->ext_presc.mask[x->ext_presc.n_mask].id = p->id & p->mask;
            x->ext_presc.mask[x->ext_presc.n_mask].mask = p->mask;
            x->ext_presc.mask[x->ext_presc.n_mask++].val = (uint8_t)i;
        }
    }
    for (uint32_t i = 0; i < c->prescaler_count; i++) {
        const struct sf_ctl_prescale *p = &c->prescalers[i];
        uint64_t m = 0;
        for (uint32_t b = 0; b < 8; b++)
            m |= (uint64_t)p->bytes[b] << (8 * b);
        x->presc[i].mask = m;
        x->presc[i].kind = p->kind;
        x->presc[i].n = p->n;
        x->presc[i].period_ns = p->period_ns;
        atomic_init(&x->presc[i].lock, 0);
        atomic_init(&x->presc[i].count, 0);
    }
    /* conditions and the signals they use, grouped by id */
    uint32_t ngroups = 0;
    uint8_t cond_group[NCOND];
    memset(cond_group, NOMATCH, sizeof cond_group);
    for (uint32_t k = 0; k < 2 + c->trigger_count; k++) {
        const struct sf_ctl_cond *cd = k == 0 ? &c->start : k == 1 ? &c->stop :
                                       &c->triggers[k - 2];
        uint8_t g;
        if (cd->kind == SF_CTL_SIGNAL) {
            const struct sf_ctl_signal *s = &c->signals[cd->signal];
            sig_compile(&x->sig[cd->signal], s);
            cond_compile(&x->cond[k], c, cd);
            if (x->cond[k].never)
                continue;                       /* nothing to evaluate */
            x->sig[cd->signal].conds |= 1u << k;
            if ((g = group_of(x, &ngroups, s->id, s->ext)) == NOMATCH)
                return SF_EINVAL;
            x->group[g].sigs |= 1u << cd->signal;
            x->group[g].slow |= !x->sig[cd->signal].fast;
            cond_group[k] = g;
        } else if (cd->kind == SF_CTL_FRAME) {
            if ((g = group_of(x, &ngroups, cd->id, cd->ext)) == NOMATCH)
                return SF_EINVAL;
            x->group[g].frame_conds |= 1u << k;
        }
    }
    ext_sort(&x->ext_group);
    /* the checks of the fast groups, each group's together */
    uint32_t nchk = 0;
    for (uint32_t g = 0; g < ngroups; g++) {
        struct ctl_group *gr = &x->group[g];
        gr->chk0 = (uint8_t)nchk;
        for (uint32_t k = 0; k < 2 + c->trigger_count && !gr->slow; k++) {
            if (cond_group[k] != g)
                continue;
            const struct sf_ctl_cond *cd = k == 0 ? &c->start : k == 1 ? &c->stop :
                                           &c->triggers[k - 2];
            const struct ctl_sig *sg = &x->sig[cd->signal];
            struct ctl_check *ck = &x->check[nchk++];
            uint64_t lo = x->cond[k].lo;
            if (sg->is_signed)         /* from "sign bit flipped" to "+ 2^(len - 1)" */
                lo = lo - SIGN64 + (1ull << (sg->len - 1));
            ck->motorola = sg->motorola;
            ck->bit = 1u << k;
            ck->mul = 1ull << sg->lsh;
            ck->top = ~0ull << sg->rsh;
            ck->flip = sg->is_signed ? SIGN64 : 0;
            ck->lo = lo << sg->rsh;
            ck->span = x->cond[k].span << sg->rsh;
        }
        gr->nchk = (uint8_t)(nchk - gr->chk0);
        gr->single = gr->sigs && !gr->slow && gr->nchk == 1 && !gr->frame_conds;
    }
    for (uint32_t id = 0; id < STD_IDS; id++) {
        for (uint32_t f = 0; f < x->nfilt; f++)
            if (x->filt[f].std_info[id] != INFO_REJECT)
                x->filt[f].std_info[id] = x->std_info[id];
    }
    for (uint32_t ch = 0; ch < SF_LOG_CHANNELS; ch++) {
        struct ctl_route *r = &x->route[ch];
        uint8_t filt = x->chan_filter[ch];
        r->std = filt ? x->filt[filt - 1].std_info : x->std_info;
        r->ch = &x->chan[ch < x->nchan ? ch : x->nchan - 1];
    }
    x->have_runctl = c->start.kind != SF_CTL_NONE || c->stop.kind != SF_CTL_NONE;
    x->rotate_on_start = (c->flags & SF_CTL_ROTATE_ON_START) && !lg->fr;
    atomic_init(&x->run, c->start.kind != SF_CTL_NONE ? 0u : 1u);
    atomic_init(&x->trig_lock, 0);
    for (uint32_t ch = 0; ch < x->nchan; ch++) {
        for (uint32_t k = 0; k < K_N; k++) {
            atomic_init(&x->chan[ch].c[k], 0);
            x->chan[ch].last[k] = 0;
            x->chan[ch].tot[k] = 0;
        }
    }
    lg->ctl_ops = lg->flags & SF_LOG_MEASURE ? &ctl_ops_measured : &ctl_ops;
    lg->ctl = x;                        /* the producers start after this call */
    return 0;
}

/* ---- the producer path ---- */

static inline void count(struct ctl_chan *ch, uint32_t k)
{
    atomic_fetch_add_explicit(&ch->c[k], 1, memory_order_relaxed);
}

static inline int cond_holds(const struct ctl_cond *cc, uint64_t biased)
{
    return !cc->never && biased >= cc->lo && biased <= cc->hi;
}

static void run_set(struct sfl_ctl *x, int stop)
{
    uint32_t r = atomic_load_explicit(&x->run, memory_order_relaxed);
    for (;;) {
        uint32_t nr;
        if (stop) {
            if (!(r & 1u))
                return;
            nr = (r & ~1u) + 2u;                /* one more stop, not running */
        } else {
            if (r & 1u)
                return;
            nr = r | 1u;
        }
        if (atomic_compare_exchange_weak_explicit(&x->run, &r, nr, memory_order_release,
                                                  memory_order_relaxed))
            return;
    }
}

static void trig_fire(struct sfl_ctl *x, uint32_t t, uint64_t ts)
{
    if (atomic_exchange_explicit(&x->trig_lock, 1, memory_order_acquire))
        return;                 /* the writer or another producer is in: this one is lost */
    if (!x->trig_have[t] || ts < x->trig_last[t] ||
        ts - x->trig_last[t] >= x->cfg->trigger_holdoff_ns) {
        x->trig_have[t] = 1;
        x->trig_last[t] = ts;
        if (x->trig_n < TRIG_QUEUE) {          /* more before the writer runs: lost */
            x->trig_which[x->trig_n] = (uint8_t)t;
            x->trig_ts[x->trig_n++] = ts;
        }
    }
    atomic_store_explicit(&x->trig_lock, 0, memory_order_release);
}

/* The rare part of a frame's way: the signals of its group (those a condition uses) and
 * the conditions on them and on its id; start/stop and triggers follow. */
static SF_NOINLINE void on_group(struct sfl_ctl *x, uint32_t gi, uint64_t ts, uint32_t flags,
                                 const uint8_t *data, uint8_t len)
{
    const struct ctl_group *g = &x->group[gi];
    uint32_t hold = g->frame_conds;
    uint64_t le = 0, be = 0;
    if (flags & SF_CAN_RTR)
        data = NULL;                            /* a remote frame carries no signal */
    if (data && len >= 8) {                     /* the first 8 bytes both ways, once */
        le = ld_le64(data);
        be = __builtin_bswap64(le);
    }
    for (uint32_t sigs = g->sigs; sigs; sigs &= sigs - 1) {
        const struct ctl_sig *k = &x->sig[__builtin_ctz(sigs)];
        uint64_t v;
        if (len < k->need || !data)
            continue;                           /* the frame does not carry it */
        if (k->fast && len >= 8) {
            if (k->motorola)
                v = (be << k->fsh) >> (64 - k->len);
            else
                v = (le >> k->fsh) & k->mask;
            if (k->is_signed && k->len < 64 && (v >> (k->len - 1) & 1))
                v |= ~k->mask;
        } else {
            v = sig_extract(k, data);
        }
        if (k->is_signed)
            v ^= SIGN64;
        for (uint32_t cs = k->conds; cs; cs &= cs - 1) {
            uint32_t ci = (uint32_t)__builtin_ctz(cs);
            if (cond_holds(&x->cond[ci], v))
                hold |= 1u << ci;
        }
    }
    if (hold & (1u << C_STOP))
        run_set(x, 1);
    else if (hold & (1u << C_START))
        run_set(x, 0);
    for (uint32_t t = hold >> C_TRIG; t; t &= t - 1)
        trig_fire(x, (uint32_t)__builtin_ctz(t), ts);
}

/* A prescaler of kind every: 1 in n, lock-free. One compare-and-swap of the count: a
 * producer that interrupts another between its load and its swap makes that one retry
 * (once per interruption), and no frame is kept or dropped twice. */
SF_ALWAYS_INLINE int every_keep(struct ctl_presc *ps)
{
    uint32_t c = atomic_load_explicit(&ps->count, memory_order_relaxed), nc;
    do
        nc = c + 1 >= ps->n ? 0 : c + 1;
    while (!atomic_compare_exchange_weak_explicit(&ps->count, &c, nc, memory_order_relaxed,
                                                  memory_order_relaxed));
    return c == 0;
}

/* Prescaler i on a frame: keep it (1) or not (0). The state of kinds period and change sits
 * under a try-lock: the prescalers are shared by every producer (threads, interrupts), and
 * a producer that finds another inside (it interrupted that one, or runs beside it on
 * another core) keeps the frame instead of waiting, so no producer ever blocks. */
SF_ALWAYS_INLINE int presc_step(struct sfl_ctl *x, uint32_t i, uint64_t ts,
                                const uint8_t *data, uint8_t len)
{
    struct ctl_presc *ps = &x->presc[i];
    int keep;
    if (ps->kind == SF_CTL_EVERY)
        return every_keep(ps);
    if (atomic_exchange_explicit(&ps->lock, 1, memory_order_acquire))
        return 1;                               /* another producer is in: keep */
    switch (ps->kind) {
    case SF_CTL_PERIOD:
        keep = !ps->have || ts < ps->last_ts || ts - ps->last_ts >= ps->period_ns;
        if (keep) {
            ps->have = 1;
            ps->last_ts = ts;
        }
        break;
    default: {                                  /* SF_CTL_CHANGE */
        uint64_t d = 0;
        uint32_t n = len < 8 ? len : 8;
        if (data && n == 8)
            d = ld_le64(data);
        else if (data)
            for (uint32_t b = 0; b < n; b++)
                d |= (uint64_t)data[b] << (8 * b);
        d &= ps->mask;
        keep = !ps->have || d != ps->last_data || len != ps->last_len;
        ps->have = 1;
        ps->last_data = d;
        ps->last_len = len;
        break;
    }
    }
    atomic_store_explicit(&ps->lock, 0, memory_order_release);
    return keep;
}

static SF_NOINLINE int presc_keep(struct sfl_ctl *x, uint32_t i, uint64_t ts,
                                  const uint8_t *data, uint8_t len)
{
    return presc_step(x, i, ts, data, len);
}

/* 29-bit ids: the filter, then group and prescaler, by bisection and scan. */
static SF_NOINLINE uint32_t ext_info(const struct sfl_ctl *x, uint32_t filt, uint32_t id)
{
    if (filt) {
        const struct ctl_filt *fl = &x->filt[filt - 1];
        uint8_t v = ext_lookup(&fl->ext, id);
        if (v == NOMATCH ? fl->ext_default : v)
            return INFO_REJECT;
    }
    uint8_t g = ext_lookup(&x->ext_group, id), p = ext_lookup(&x->ext_presc, id);
    return (g == NOMATCH ? 0u : g + 1u) | (p == NOMATCH ? 0u : p + 1u) << 8;
}

/* Everything but the common case (see ctl_append_can): frames with flags, invalid ones,
 * and those the common path hands over. */
static SF_TAIL_STEP int ctl_slow(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                                uint32_t flags, const uint8_t *data, uint32_t len)
{
    struct sfl_ctl *x = lg->ctl;
    const struct ctl_route *r = &x->route[channel];
    struct ctl_chan *ch = r->ch;
    if (!rec_can_valid_fast(id, flags, len) || (len && !data && !(flags & SF_CAN_RTR)))
        return SF_EINVAL;           /* as sf_log_append_can: refused, nothing counted */
    if (flags & SF_CAN_ERR)
        return sfl_ring_put_can(lg, channel, ts, id, flags, data, len);   /* not controlled */
    /* 1. the channel's filter, the id's group (signals, conditions) and prescaler: one
     * table entry for an 11-bit id */
    uint32_t info = flags & SF_CAN_EFF ? ext_info(x, x->chan_filter[channel], id) : r->std[id];
    if (info == INFO_REJECT) {
        count(ch, K_FILTERED);
        return 0;
    }
    /* 2. signals and conditions of this id */
    if (info & 0xFFu)
        on_group(x, (info & 0xFFu) - 1, ts, flags, data, len);
    /* 3. start/stop */
    if (x->have_runctl && !(atomic_load_explicit(&x->run, memory_order_relaxed) & 1u)) {
        count(ch, K_PAUSED);
        return 0;
    }
    /* 4. prescaler */
    if ((info >> 8) && !presc_keep(x, (info >> 8) - 1, ts, flags & SF_CAN_RTR ? NULL : data,
                                   len)) {
        count(ch, K_PRESCALED);
        return 0;
    }
    count(ch, K_LOGGED);
    return sfl_ring_put_can(lg, channel, ts, id, flags, data, len);
}

/* The conditions (bit per C_*) that hold on an 8-byte frame of group g, whose signals all
 * lie in the first 8 bytes: per condition (struct ctl_check) a multiplication, a mask and a
 * flip of the frame's 64-bit word, a subtraction and a comparison against bounds computed
 * at open (no floating point, no store). */
SF_ALWAYS_INLINE uint32_t group_hold8(const struct sfl_ctl *x, const struct ctl_group *g,
                                      const uint8_t *data)
{
    uint32_t hold = g->frame_conds;
    const struct ctl_check *ck = &x->check[g->chk0];
    for (uint32_t n = g->nchk; n; n--, ck++) {
        uint64_t w = ld_le64(data);            /* a load again: fewer registers held */
        if (ck->motorola)
            w = __builtin_bswap64(w);
        w = (w * ck->mul & ck->top) ^ ck->flip;
        hold |= w - ck->lo <= ck->span ? ck->bit : 0;
    }
    return hold;
}

/* After the filter and the conditions, on the way of ctl_append_can: the prescaler of
 * kind period or change (the every kind is inline there), and the rest. The argument
 * `flags` carries the id's table entry instead (the frame's flags are 0; the same argument
 * list as the callers' keeps the calls tail calls). */
static SF_TAIL_STEP int ctl_presc_other(struct sf_log *lg, uint32_t channel, uint64_t ts,
                                        uint32_t id, uint32_t info, const uint8_t *data,
                                        uint32_t len)
{
    struct sfl_ctl *x = lg->ctl;
    if (!presc_step(x, (info >> 8) - 1u, ts, data, len)) {
        count(x->route[channel].ch, K_PRESCALED);
        return 0;
    }
    count(x->route[channel].ch, K_LOGGED);
    return sfl_ring_put_can(lg, channel, ts, id, 0, data, len);
}

/* The end of the usual frame's way (ctl_append_can, ctl_group): start/stop state, the
 * prescaler (of kind every inline), the counter, the ring. */
SF_ALWAYS_INLINE int ctl_tail(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                              const uint8_t *data, uint32_t len, struct sfl_ctl *x,
                              uint32_t info)
{
    if (!(atomic_load_explicit(&x->run, memory_order_relaxed) & 1u)) {
        count(x->route[channel].ch, K_PAUSED);
        return 0;
    }
    uint32_t k = K_LOGGED;
    if (info >> 8) {
        struct ctl_presc *ps = &x->presc[(info >> 8) - 1];
        if (ps->kind != SF_CTL_EVERY)
            return ctl_presc_other(lg, channel, ts, id, info, data, len);
        k = every_keep(ps) ? K_LOGGED : K_PRESCALED;
    }
    count(x->route[channel].ch, k);         /* one counter address for both outcomes */
    if (k != K_LOGGED)
        return 0;
    return sfl_ring_put_can(lg, channel, ts, id, 0, data, len);
}

/* The usual frame (flags 0) of an id with a group (signals, frame conditions) that is not
 * `single`: its conditions, then ctl_tail. The argument `flags` carries the id's table
 * entry instead (the same argument list as the caller's keeps the calls tail calls). What
 * changes state - a start or a stop to make, a trigger condition that holds - and signals
 * beyond the first 8 bytes, or frames shorter than 8 bytes with signals, go to ctl_slow,
 * which decides everything again from the start (nothing has been changed here). */
static SF_TAIL_STEP int ctl_group_n(struct sf_log *lg, uint32_t channel, uint64_t ts,
                                    uint32_t id, uint32_t info, const uint8_t *data,
                                    uint32_t len)
{
    struct sfl_ctl *x = lg->ctl;
    const struct ctl_group *g = &x->group[(info & 0xFFu) - 1];
    if (g->sigs && (g->slow || len != 8))
        return ctl_slow(lg, channel, ts, id, 0, data, len);
    uint32_t hold = group_hold8(x, g, data);
    if (hold) {
        uint32_t act = atomic_load_explicit(&x->run, memory_order_relaxed) & 1u ?
                       ~(1u << C_START) : ~(1u << C_STOP);
        if (hold & act)
            return ctl_slow(lg, channel, ts, id, 0, data, len);
    }
    return ctl_tail(lg, channel, ts, id, data, len, x, info);
}

/* An id with a group goes on here (a function of its own, so that ctl_append_can needs
 * few registers). The usual group - one condition on one signal in the first 8 bytes, no
 * frame condition - on an 8-byte frame: its one check in straight code that needs no
 * register beyond x, the check and the word, so that nothing is saved; the others:
 * ctl_group_n. As there, what changes state goes to ctl_slow. */
static SF_TAIL_STEP int ctl_group(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                                  uint32_t info, const uint8_t *data, uint32_t len)
{
    struct sfl_ctl *x = lg->ctl;
    const struct ctl_group *g = &x->group[(info & 0xFFu) - 1];
    if (!g->single || len != 8)
        return ctl_group_n(lg, channel, ts, id, info, data, len);
    const struct ctl_check *ck = x->check + (uint32_t)g->chk0;
    uint64_t w = ld_le64(data);
    if (ck->motorola)
        w = __builtin_bswap64(w);
    w = (w * ck->mul & ck->top) ^ ck->flip;
    if (w - ck->lo <= ck->span) {
        uint32_t act = atomic_load_explicit(&x->run, memory_order_relaxed) & 1u ?
                       ~(1u << C_START) : ~(1u << C_STOP);
        if (ck->bit & act)
            return ctl_slow(lg, channel, ts, id, 0, data, len);
    }
    return ctl_tail(lg, channel, ts, id, data, len, x, info);
}

/* The producer's path (sf_log_append_can with a control stage), with no call but tail
 * calls (so that it saves few registers). Frames with flags and invalid ones: ctl_slow
 * (which validates). The usual frame (no flags, 11-bit id, <= 8 bytes): one table load
 * gives the filter's verdict, the group and the prescaler; an id with a group goes on in
 * ctl_group; start/stop and a prescaler of kind every follow inline (ctl_tail). Without
 * start/stop conditions run is 1 from open on, so one load says whether logging runs. */
static int ctl_append_can(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                          uint32_t flags, const uint8_t *data, uint32_t len)
{
    struct sfl_ctl *x = lg->ctl;
    /* (len + 7) >> 4: nonzero when len > 8, without a setcc GCC needs a byte register for */
    if ((flags | (id >> 11) | ((uint32_t)len + 7u) >> 4) || (!data && len))
        return ctl_slow(lg, channel, ts, id, flags, data, len);
    uint32_t info = x->route[channel].std[id];
    if (info == INFO_REJECT) {
        count(x->route[channel].ch, K_FILTERED);
        return 0;
    }
    if (info & 0xFFu)
        return ctl_group(lg, channel, ts, id, info, data, len);
    return ctl_tail(lg, channel, ts, id, data, len, x, info);
}

/* SF_LOG_MEASURE: the whole call timed, the stage included (frames it keeps out too);
 * the ring's own timing of CAN frames is off while a stage is attached. */
static int ctl_append_measured(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                               uint32_t flags, const uint8_t *data, uint32_t len)
{
    uint64_t t0 = log_now(lg);
    int r = ctl_append_can(lg, channel, ts, id, flags, data, len);
    if (r != SF_EINVAL)
        sfl_measure_end(lg, t0);
    return r;
}

/* ---- the writer's side ---- */

static int ctl_service(struct sf_log *lg, uint64_t now)
{
    struct sfl_ctl *x = lg->ctl;
    int did = 0;
    for (uint32_t c = 0; c < x->nchan; c++) {
        struct ctl_chan *ch = &x->chan[c];
        for (uint32_t k = 0; k < K_N; k++) {
            uint32_t v = atomic_load_explicit(&ch->c[k], memory_order_relaxed);
            ch->tot[k] += v - ch->last[k];
            ch->last[k] = v;
        }
    }
    uint32_t stops = atomic_load_explicit(&x->run, memory_order_acquire) >> 1;
    if (stops != x->stops_seen) {
        /* a stop: what was logged before it is made durable now; with rotate_on_start the
         * file ends here, so the next start's frames go to a new one */
        x->stops_seen = stops;
        if (lg->cur_open && !lg->fr) {
            if (x->rotate_on_start)
                lg->rotate_req = 1;
            else
                lg->next_ckpt_ns = now;
        }
        did = 1;
    }
    if (x->cfg->trigger_count && !atomic_exchange_explicit(&x->trig_lock, 1, memory_order_acquire)) {
        uint8_t n = x->trig_n, which[TRIG_QUEUE];
        uint64_t tss[TRIG_QUEUE];
        memcpy(which, x->trig_which, n);
        memcpy(tss, x->trig_ts, n * sizeof tss[0]);
        x->trig_n = 0;
        atomic_store_explicit(&x->trig_lock, 0, memory_order_release);
        for (uint8_t q = 0; q < n; q++) {
            const struct sf_ctl_cond *cd = &x->cfg->triggers[which[q]];
            uint64_t ts = tss[q];
            char why[80];
            uint32_t wl = 0;
            static const char head[] = "signal ";
            const char *name = cd->kind == SF_CTL_SIGNAL ? x->cfg->signals[cd->signal].name : NULL;
            if (cd->kind == SF_CTL_FRAME)
                name = "frame";
            for (const char *h = head; *h; h++)
                why[wl++] = *h;
            for (; name && *name && wl < sizeof why - 1; name++)
                why[wl++] = *name;
            why[wl] = 0;
            int err = sf_log_trigger(lg, ts, why);
            if (err < 0)
                return err;
            did = 1;
        }
    }
    return did;
}

static void chan_counts(const struct sfl_ctl *x, uint32_t c, uint64_t out[K_N])
{
    const struct ctl_chan *ch = &x->chan[c];
    for (uint32_t k = 0; k < K_N; k++)
        out[k] = ch->tot[k] + (uint32_t)(atomic_load_explicit(&ch->c[k], memory_order_relaxed) -
                                         ch->last[k]);
}

static void ctl_stats(const struct sf_log *lg, struct sf_log_stats *st)
{
    const struct sfl_ctl *x = lg->ctl;
    st->records_filtered = st->records_prescaled = st->records_paused = 0;
    if (!x)
        return;
    for (uint32_t c = 0; c < x->nchan; c++) {
        uint64_t v[K_N];
        chan_counts(x, c, v);
        st->records_filtered += v[K_FILTERED];
        st->records_prescaled += v[K_PRESCALED];
        st->records_paused += v[K_PAUSED];
    }
}

int sf_log_get_chan_stats(const struct sf_log *lg, uint32_t channel,
                          struct sf_log_chan_stats *cs)
{
    const struct sfl_ctl *x = lg->ctl;
    if (!x || channel >= x->nchan)
        return SF_EINVAL;
    uint64_t v[K_N];
    chan_counts(x, channel, v);
    cs->filtered = v[K_FILTERED];
    cs->prescaled = v[K_PRESCALED];
    cs->paused = v[K_PAUSED];
    cs->logged = v[K_LOGGED];
    cs->seen = v[K_LOGGED] + v[K_FILTERED] + v[K_PRESCALED] + v[K_PAUSED];
    return 0;
}
