/* Sources for `streamfat log` (log_sources.h): parsing --source, one producer thread per
 * channel, filters, trigger rules, limits, and the waits of sources that can wait.
 *
 * Sections: parsing; shared producer helpers (budget, counters, filters, rules, waiting);
 * gen:can; gen:raw; candump lines (stdin, file:); ASC and BLF logs (file:, import.h); CAN
 * datagrams (can:, canpair:); udp:; latency:; start and stop. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "log_sources.h"
#include "cli.h"
#include "formats/import.h"
#include "common/units.h"

#include "streamfat/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/can.h>
#include <linux/can/raw.h>

#ifndef AF_CAN
#define AF_CAN 29
#endif
#ifndef SOL_CAN_RAW
#define SOL_CAN_RAW (SOL_CAN_BASE + CAN_RAW)
#endif

#define NS UINT64_C(1000000000)
#define POLL_MS 100                 /* how often a blocked producer looks at the stop flag */
#define FLUSH_EVERY 4096u           /* records between flushes of a producer's counters */

enum kind { K_GEN_CAN = 1, K_GEN_RAW, K_STDIN, K_FILE, K_CAN, K_CANPAIR, K_UDP, K_LATENCY };

struct log_source;

struct producer {
    struct log_source *s;
    pthread_t th;
    int started;
    unsigned ch;                    /* channel (index into the channel table) */
    int fd;
    uint64_t quota;                 /* gen:can with --max-records: this channel's share */
    /* counters, flushed into the source's atomics every FLUSH_EVERY records */
    uint64_t offered, offered_bytes, dropped, filtered;
};

struct log_source {
    enum kind kind;
    struct src_opts o;
    struct sf_log *lg;
    uint64_t rate;                  /* gen:can frames/s per channel (0: unpaced) */
    uint64_t period_ns;             /* latency: */
    char *path;                     /* file: */
    enum imp_format fmt;            /* file: candump, ASC or BLF (by content) */
    struct imp_reader *imp;         /* file: ASC and BLF */
    unsigned chan_num[SRC_MAX_CHANNELS];    /* ASC, BLF: the file's number of names[i] */
    char host[64];
    uint16_t port;
    char *names[SRC_MAX_CHANNELS];  /* channel names (malloc'd) */
    unsigned nnames;
    /* candump lines, ASC and BLF frames (one producer): each channel's last time, for the
     * order docs/FORMAT.md promises; the input's line (or frame) number; bad lines shown */
    uint64_t last_ts[SRC_MAX_CHANNELS];
    uint8_t have_last[SRC_MAX_CHANNELS];
    uint64_t lineno;
    unsigned bad_shown;
    unsigned nprod;
    struct producer prod[SRC_MAX_CHANNELS];
    int has_accept;

    atomic_int stop;
    atomic_uint finished;
    atomic_int limit_hit;
    _Atomic uint64_t offered, offered_bytes, dropped, filtered, bad, waits;
    _Atomic uint64_t lat_n, lat_max, rules_fired;
    _Atomic uint64_t budget_rec, budget_bytes;   /* taken so far, when limits are set */
    _Atomic uint64_t ring_free;                  /* published by the writer */
    atomic_uint ring_epoch;

    pthread_mutex_t lock;           /* trigger request and error text */
    int trig_pending;
    uint64_t trig_ts;
    char trig_why[128];
    char err[256];
    int has_err;
};

/* ---- parsing --------------------------------------------------------------------------- */

static int parse_hex32(const char *s, size_t n, uint32_t *out)
{
    uint32_t v = 0;
    size_t i;

    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    }
    if (n == 0 || n > 8)
        return -1;
    for (i = 0; i < n; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 0;
}

int src_parse_filter(const char *s, struct src_filter *f)
{
    const char *slash;

    memset(f, 0, sizeof *f);
    if (*s == '!') {
        f->reject = 1;
        s++;
    }
    slash = strchr(s, '/');
    if (parse_hex32(s, slash ? (size_t)(slash - s) : strlen(s), &f->id))
        return -1;
    if (!slash) {
        f->mask = f->id > 0x7FF ? 0x1FFFFFFFu : 0x7FFu;
        return 0;
    }
    if (parse_hex32(slash + 1, strlen(slash + 1), &f->mask))
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

static int parse_u64_dec(const char *s, size_t n, uint64_t *out)
{
    char buf[32];

    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return cli_parse_uint(buf, UINT64_MAX, out);
}

static void add_name(struct log_source *s, const char *name, size_t n)
{
    char *p = malloc(n + 1);

    if (!p) {
        fprintf(stderr, "streamfat: out of memory\n");
        exit(CLI_ERR);
    }
    memcpy(p, name, n);
    p[n] = '\0';
    s->names[s->nnames++] = p;
}

/* gen:can options: rate=N, channels=N */
static int parse_gen_can(struct log_source *s, const char *opts, char *err, size_t errlen)
{
    s->nprod = 1;
    while (opts && *opts) {
        const char *end = strchr(opts, ',');
        size_t n = end ? (size_t)(end - opts) : strlen(opts);
        uint64_t v;
        if (n > 5 && strncmp(opts, "rate=", 5) == 0 && !parse_u64_dec(opts + 5, n - 5, &v) &&
            v > 0 && v <= 100000000) {
            s->rate = v;
        } else if (n > 9 && strncmp(opts, "channels=", 9) == 0 &&
                   !parse_u64_dec(opts + 9, n - 9, &v) && v >= 1 && v <= SRC_MAX_CHANNELS) {
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
        add_name(s, nm, strlen(nm));
    }
    return 0;
}

/* Channel names of a candump log: the interfaces in order of first appearance. */
static void prescan_names(struct log_source *s)
{
    FILE *f = fopen(s->path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    if (!f)
        return;
    while ((n = getline(&line, &cap, f)) > 0) {
        struct src_can_frame fr;
        const char *ifc;
        size_t il;
        unsigned i;
        if (src_parse_candump(line, (size_t)n, &fr, &ifc, &il) != 1 || il == 0)
            continue;
        for (i = 0; i < s->nnames; i++)
            if (strlen(s->names[i]) == il && memcmp(s->names[i], ifc, il) == 0)
                break;
        if (i == s->nnames) {
            if (s->nnames == SRC_MAX_CHANNELS)
                break;
            add_name(s, ifc, il);
        }
    }
    free(line);
    fclose(f);
}

/* Channel names of an ASC, BLF or MF4 log: its channel numbers in order of first
 * appearance, named as python-can numbers them (channel N of the file is can<N-1>) unless
 * the file names them itself (MF4: streamfat's SI comment). A file that does
 * not read to the end stops the scan here; the replay reports the same error. */
static void prescan_import(struct log_source *s)
{
    struct imp_reader *r;
    struct imp_frame fr;
    enum imp_format fmt;
    char err[64];

    if (imp_open(s->path, &fmt, &r, err, sizeof err) || !r)
        return;
    while (imp_next(r, &fr) > 0) {
        unsigned i;
        for (i = 0; i < s->nnames; i++)
            if (s->chan_num[i] == fr.channel)
                break;
        if (i == s->nnames) {
            char nm[16];
            const char *own = imp_channel_name(r, fr.channel);
            if (s->nnames == SRC_MAX_CHANNELS)
                break;
            s->chan_num[s->nnames] = fr.channel;
            if (own) {
                add_name(s, own, strlen(own));
                continue;
            }
            if (fr.channel)
                snprintf(nm, sizeof nm, "can%u", fr.channel - 1);
            else
                snprintf(nm, sizeof nm, "ch0");
            s->chan_num[s->nnames] = fr.channel;
            add_name(s, nm, strlen(nm));
        }
    }
    imp_close(r);
}

static void prescan_file(struct log_source *s)
{
    struct imp_reader *r = NULL;
    char err[64];

    s->fmt = IMP_CANDUMP;
    if (imp_open(s->path, &s->fmt, &r, err, sizeof err))
        return;                 /* src_prepare says why */
    imp_close(r);
    if (s->fmt == IMP_CANDUMP)
        prescan_names(s);
    else
        prescan_import(s);
}

struct log_source *src_parse(const char *spec, const struct src_opts *o, char *err,
                             size_t errlen)
{
    struct log_source *s = calloc(1, sizeof *s);

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    pthread_mutex_init(&s->lock, NULL);
    for (unsigned i = 0; i < SRC_MAX_CHANNELS; i++)
        s->prod[i].fd = -1;
    for (unsigned i = 0; i < o->nfilters; i++)
        if (!o->filters[i].reject)
            s->has_accept = 1;

    if (strcmp(spec, "gen:can") == 0 || strncmp(spec, "gen:can,", 8) == 0) {
        s->kind = K_GEN_CAN;
        if (parse_gen_can(s, spec[7] ? spec + 8 : NULL, err, errlen))
            goto bad;
        if (o->raw) {
            snprintf(err, errlen, "gen:can makes records; use gen:raw with --raw");
            goto bad;
        }
    } else if (strcmp(spec, "gen:raw") == 0) {
        s->kind = K_GEN_RAW;
        s->nprod = 1;
        if (!o->raw) {
            snprintf(err, errlen, "gen:raw needs --raw");
            goto bad;
        }
    } else if (strcmp(spec, "stdin") == 0 || strcmp(spec, "-") == 0) {
        s->kind = K_STDIN;
        s->nprod = 1;
        s->prod[0].fd = 0;
    } else if (strncmp(spec, "file:", 5) == 0 && spec[5]) {
        s->kind = K_FILE;
        s->nprod = 1;
        s->path = strdup(spec + 5);
        if (o->raw) {
            snprintf(err, errlen, "file: replays CAN logs; --raw does not apply");
            goto bad;
        }
    } else if ((strncmp(spec, "can:", 4) == 0 || strncmp(spec, "canpair:", 8) == 0) &&
               spec[spec[3] == ':' ? 4 : 8]) {
        const char *p = spec + (spec[3] == ':' ? 4 : 8);
        s->kind = spec[3] == ':' ? K_CAN : K_CANPAIR;
        if (o->raw) {
            snprintf(err, errlen, "CAN sources make records; --raw does not apply");
            goto bad;
        }
        while (*p) {
            const char *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            if (n == 0 || n >= IFNAMSIZ || s->nprod == SRC_MAX_CHANNELS) {
                snprintf(err, errlen, "bad interface list '%s'", spec);
                goto bad;
            }
            if (s->kind == K_CANPAIR) {
                uint64_t fd;
                if (parse_u64_dec(p, n, &fd) || fd > 1000000) {
                    snprintf(err, errlen, "canpair: expects descriptor numbers");
                    goto bad;
                }
                s->prod[s->nprod].fd = (int)fd;
                char nm[24];
                snprintf(nm, sizeof nm, "pair%u", s->nprod);
                add_name(s, nm, strlen(nm));
            } else {
                add_name(s, p, n);
            }
            s->nprod++;
            p = end ? end + 1 : p + n;
        }
    } else if (strncmp(spec, "udp:", 4) == 0) {
        const char *p = spec + 4, *colon = strrchr(p, ':');
        uint64_t port;
        snprintf(s->host, sizeof s->host, "127.0.0.1");
        if (colon) {
            if ((size_t)(colon - p) >= sizeof s->host || colon == p) {
                snprintf(err, errlen, "udp: bad host in '%s'", spec);
                goto bad;
            }
            memcpy(s->host, p, (size_t)(colon - p));
            s->host[colon - p] = '\0';
            p = colon + 1;
        }
        if (cli_parse_uint(p, 65535, &port) || port == 0) {
            snprintf(err, errlen, "udp: expects a port 1..65535: '%s'", spec);
            goto bad;
        }
        s->kind = K_UDP;
        s->port = (uint16_t)port;
        s->nprod = 1;
        if (o->raw) {
            snprintf(err, errlen, "udp: makes records; --raw does not apply");
            goto bad;
        }
        add_name(s, spec, strlen(spec));
    } else if (strncmp(spec, "latency:", 8) == 0) {
        const char *why = "";
        if (units_parse_duration(spec + 8, &s->period_ns, &why) || s->period_ns < 10000 ||
            s->period_ns > 10 * NS) {
            snprintf(err, errlen, "latency: expects a period from 10us to 10s: '%s'%s%s",
                     spec, *why ? ": " : "", why);
            goto bad;
        }
        s->kind = K_LATENCY;
        s->nprod = 1;
        if (o->raw) {
            snprintf(err, errlen, "latency: makes records; --raw does not apply");
            goto bad;
        }
        add_name(s, "latency", 7);
    } else {
        snprintf(err, errlen, "unknown source '%s' (gen:can, gen:raw, stdin, file:PATH, "
                 "can:IFACE, udp:PORT, latency:PERIOD)", spec);
        goto bad;
    }
    if (s->kind == K_STDIN && o->raw)
        ;
    else if (s->kind == K_FILE)
        prescan_file(s);
    return s;
bad:
    src_free(s);
    return NULL;
}

void src_free(struct log_source *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->path);
    imp_close(s->imp);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int src_can_wait(const struct log_source *s)
{
    return s->kind == K_STDIN || s->kind == K_FILE || s->kind == K_GEN_RAW;
}

unsigned src_channels(const struct log_source *s, const char *const **names)
{
    *names = (const char *const *)s->names;
    return s->nnames;
}

uint32_t src_clock_kind(const struct log_source *s)
{
    (void)s;
    return SF_CLOCK_REALTIME;
}

/* ---- shared producer helpers --------------------------------------------------------- */

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t mono_ns)
{
    struct timespec ts = { (time_t)(mono_ns / NS), (long)(mono_ns % NS) };

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void sleep_ns(uint64_t ns)
{
    sleep_until(now_ns(CLOCK_MONOTONIC) + ns);
}

static int stopping(struct log_source *s)
{
    return atomic_load_explicit(&s->stop, memory_order_relaxed) ||
           atomic_load_explicit(&s->limit_hit, memory_order_relaxed);
}

static void set_error(struct log_source *s, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&s->lock);
    if (!s->has_err) {
        va_start(ap, fmt);
        vsnprintf(s->err, sizeof s->err, fmt, ap);
        va_end(ap);
        s->has_err = 1;
    }
    pthread_mutex_unlock(&s->lock);
}

static void flush_counters(struct producer *p)
{
    struct log_source *s = p->s;

    atomic_fetch_add_explicit(&s->offered, p->offered, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->offered_bytes, p->offered_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dropped, p->dropped, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->filtered, p->filtered, memory_order_relaxed);
    p->offered = p->offered_bytes = p->dropped = p->filtered = 0;
}

/* Take one record of `bytes` from the --max-records / --max-bytes budget: 1, or 0 when a
 * limit is reached (then every producer ends). */
static int take_budget(struct log_source *s, uint64_t bytes)
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

static int filter_pass(const struct log_source *s, uint32_t id)
{
    int pass = !s->has_accept;

    for (unsigned i = 0; i < s->o.nfilters; i++) {
        const struct src_filter *f = &s->o.filters[i];
        if (((id ^ f->id) & f->mask) == 0) {
            if (f->reject)
                return 0;
            pass = 1;
        }
    }
    return pass;
}

/* A rule fired: leave a request for the writer (never blocks: a request being recorded
 * by another producer at the same moment stands for this one too). */
static void fire(struct log_source *s, uint64_t ts, const char *fmt, ...)
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
            fire(s, ts, "trigger: CAN id 0x%" PRIX32 " matches %" PRIX32 "/%" PRIX32, id,
                 r->id, r->mask);
            return;
        }
    }
}

/* Sources that can wait (stdin, file:, gen:raw) keep this much ring free rather than drop.
 * The writer publishes the free space after each step; `since` counts what this producer
 * appended after the last publication it saw. */
struct waiter {
    unsigned epoch;
    uint64_t since;
    uint64_t margin;
};

static void wait_for_room(struct log_source *s, struct waiter *w, uint64_t need)
{
    for (;;) {
        unsigned e = atomic_load_explicit(&s->ring_epoch, memory_order_acquire);
        uint64_t freeb = atomic_load_explicit(&s->ring_free, memory_order_relaxed);
        if (e != w->epoch) {
            w->epoch = e;
            w->since = 0;
        }
        if (freeb >= w->since + need + w->margin || stopping(s))
            break;
        atomic_fetch_add_explicit(&s->waits, 1, memory_order_relaxed);
        sleep_ns(50000);
    }
    w->since += need;
}

/* One CAN frame through filters, budget and rules into the log. 1 appended (or dropped and
 * counted), 0 filtered, -1 the budget is used up. */
static int emit_can(struct producer *p, const struct src_can_frame *f)
{
    struct log_source *s = p->s;
    int rc;

    if (s->o.nfilters && !filter_pass(s, f->id)) {
        p->filtered++;
        return 0;
    }
    if ((s->o.max_records || s->o.max_bytes) &&
        !take_budget(s, sf_rec_size(SF_CAN_BODY + f->len)))
        return -1;
    rc = sf_log_append_can(s->lg, (uint8_t)p->ch, f->ts, f->id, f->flags, f->data, f->len);
    p->offered++;
    p->offered_bytes += sf_rec_size(SF_CAN_BODY + f->len);
    if (rc)
        p->dropped++;
    if (s->o.nrules)
        check_can_rules(s, f->ts, f->id);
    if ((p->offered & (FLUSH_EVERY - 1)) == 0)
        flush_counters(p);
    return 1;
}

/* ---- gen:can ----------------------------------------------------------------------------- */

/* v as 8 little-endian bytes; written out so the compiler makes it one store */
static inline void put_le64(uint8_t *p, uint64_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    p[4] = (uint8_t)(v >> 32);
    p[5] = (uint8_t)(v >> 40);
    p[6] = (uint8_t)(v >> 48);
    p[7] = (uint8_t)(v >> 56);
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
    int simple = !s->o.nfilters && !s->o.nrules && !s->o.max_bytes;

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
            rc = emit_can(p, &f);
            if (rc < 0)
                goto out;
        }
        if (simple && p->offered >= 65536) {
            p->offered_bytes = p->offered * sf_rec_size(SF_CAN_BODY + 8);
            flush_counters(p);
        }
        if (s->rate && k < limit)
            sleep_until(t0 + sched_ns(k, s->rate));
    }
out:
    if (simple)
        p->offered_bytes = p->offered * sf_rec_size(SF_CAN_BODY + 8);
    flush_counters(p);
    if (k >= limit)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* ---- gen:raw ----------------------------------------------------------------------------- */

#define RAW_CHUNK 65536u

static void *gen_raw_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    uint8_t *buf = malloc(RAW_CHUNK);
    uint64_t total = 0;
    struct waiter wt = { 0, 0, 0 };
    int done = 0;

    if (!buf) {
        set_error(s, "out of memory");
        return NULL;
    }
    wt.margin = RAW_CHUNK;
    while (!stopping(s)) {
        uint64_t n = RAW_CHUNK;
        sf_ssize_t got;
        if (s->o.max_bytes && total + n > s->o.max_bytes)
            n = s->o.max_bytes - total;
        if (n == 0) {
            done = 1;
            break;
        }
        /* the pattern: byte i of the stream is byte (i mod 8) of the u64 word i / 8. total
         * is a multiple of 8 here (n is RAW_CHUNK except at the very end of --max-bytes),
         * so whole words are one store each; a source must cost less than what it measures
         * (byte by byte this loop took 9 instructions per byte, the append 1) */
        uint64_t whole = (total & 7) ? 0 : n >> 3, word = total >> 3;
        for (uint64_t i = 0; i < whole; i++)
            put_le64(buf + 8 * i, word + i);
        for (uint64_t k = 8 * whole; k < n; k++)
            buf[k] = (uint8_t)(((total + k) >> 3) >> (8 * ((total + k) & 7)));
        wait_for_room(s, &wt, n);
        got = sf_log_write_raw(s->lg, buf, (size_t)n);
        if (got < 0) {
            set_error(s, "raw write: %s", sf_strerror((int)got));
            break;
        }
        p->offered += n;
        p->offered_bytes += n;
        p->dropped += n - (uint64_t)got;
        total += n;
    }
    flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* ---- candump lines ------------------------------------------------------------------- */

static const uint8_t fd_lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64 };

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int src_parse_candump(const char *line, size_t n, struct src_can_frame *f, const char **iface,
                      size_t *iface_len)
{
    const char *p = line, *end = line + n, *tok, *hash;
    size_t i;
    uint32_t raw;

    memset(f, 0, sizeof *f);
    *iface = "";
    *iface_len = 0;
    while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p == '#')
        return 0;
    if (*p == '(') {
        uint64_t sec = 0, frac = 0;
        unsigned digits = 0;
        p++;
        if (p == end || hexval(*p) < 0 || *p > '9')
            return -1;
        while (p < end && *p >= '0' && *p <= '9') {
            if (sec > UINT64_MAX / 10 / NS) {
                f->why = "timestamp out of range (after 2554-07-21)";
                return -1;
            }
            sec = sec * 10 + (uint64_t)(*p++ - '0');
        }
        if (p < end && *p == '.') {
            p++;
            while (p < end && *p >= '0' && *p <= '9') {
                if (digits < 9) {
                    frac = frac * 10 + (uint64_t)(*p - '0');
                    digits++;
                }
                p++;
            }
        }
        if (p == end || *p != ')')
            return -1;
        p++;
        while (digits < 9) {
            frac *= 10;
            digits++;
        }
        if (sec > (UINT64_MAX - frac) / NS) {
            f->why = "timestamp out of range (after 2554-07-21)";
            return -1;
        }
        f->ts = sec * NS + frac;
        f->has_ts = 1;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
    }
    /* [iface] frame */
    tok = p;
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    if (!memchr(tok, '#', (size_t)(p - tok))) {
        *iface = tok;
        *iface_len = (size_t)(p - tok);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        tok = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
    }
    end = p;                    /* anything after the frame (candump -x extras) is ignored */
    hash = memchr(tok, '#', (size_t)(end - tok));
    if (!hash || parse_hex32(tok, (size_t)(hash - tok), &raw))
        return -1;
    if (hash - tok > 3) {
        f->id = raw & CAN_EFF_MASK;
        /* docs/FORMAT.md: an error class above 0x7FF carries EFF like any such id */
        if (!(raw & CAN_ERR_FLAG) || f->id > CAN_SFF_MASK)
            f->flags |= SF_CAN_EFF;
        if (raw & CAN_ERR_FLAG)
            f->flags |= SF_CAN_ERR;
    } else {
        if (raw > CAN_SFF_MASK)
            return -1;
        f->id = raw;
    }
    p = hash + 1;
    if (p < end && *p == '#') {                 /* CAN FD: ##<flags nibble><data> */
        int fl;
        p++;
        if (p == end || (fl = hexval(*p)) < 0)
            return -1;
        p++;
        f->flags |= SF_CAN_FD;
        if (fl & CANFD_BRS)
            f->flags |= SF_CAN_BRS;
        if (fl & CANFD_ESI)
            f->flags |= SF_CAN_ESI;
    } else if (p < end && (*p == 'R' || *p == 'r')) {
        f->flags |= SF_CAN_RTR;
        p++;
        if (p < end && *p >= '0' && *p <= '8')
            f->len = (uint8_t)(*p++ - '0');
        /* an error frame cannot be a remote frame: sf_rec_can_valid would refuse it, and the
         * logger would count a malformed line as a drop (found by fuzz/fuzz_candump.c) */
        return p == end && sf_rec_can_valid(f->id, f->flags, f->len) ? 1 : -1;
    }
    i = 0;
    while (p < end) {
        int hi, lo;
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '_' && !(f->flags & SF_CAN_FD))   /* _<len8_dlc>: not kept */
            break;
        if (p + 1 >= end || (hi = hexval(p[0])) < 0 || (lo = hexval(p[1])) < 0)
            return -1;
        if (i == ((f->flags & SF_CAN_FD) ? 64u : 8u))
            return -1;
        f->data[i++] = (uint8_t)(hi << 4 | lo);
        p += 2;
    }
    if (f->flags & SF_CAN_FD) {
        unsigned k;
        for (k = 0; k < sizeof fd_lens; k++)
            if (fd_lens[k] == i)
                break;
        if (k == sizeof fd_lens)
            return -1;
    }
    f->len = (uint8_t)i;
    return sf_rec_can_valid(f->id, f->flags, f->len) ? 1 : -1;   /* e.g. no CAN FD error frames */
}

#define BAD_SHOWN_MAX 10            /* bad input lines reported one by one, then counted */

static const char *src_name(const struct log_source *s)
{
    return s->kind == K_FILE ? s->path : "stdin";
}

/* Input that does not fit: counted as bad input, and the first few reported with their
 * line (or frame) number. */
static void bad_input(struct log_source *s, const char *what, uint64_t n, const char *why)
{
    atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
    if (s->bad_shown < BAD_SHOWN_MAX)
        cli_err("%s %s %" PRIu64 ": %s%s", src_name(s), what, n, why,
                ++s->bad_shown == BAD_SHOWN_MAX ? " (further bad input is only counted)" : "");
}

/* The channel of the interface a candump line names (channel 0 for none). New names (stdin
 * only: file: knows them all before the start) are named in the log (sf_log_name_channel:
 * this file and every later one). -1: the line is bad input (*why); -2: the run cannot go
 * on (error set: more interfaces than channels). */
static int line_channel(struct producer *p, const char *ifc, size_t il, uint64_t ts,
                        struct waiter *w, const char **why)
{
    struct log_source *s = p->s;
    unsigned i;

    if (il == 0)
        return 0;
    for (i = 0; i < s->nnames; i++)
        if (strlen(s->names[i]) == il && memcmp(s->names[i], ifc, il) == 0)
            return (int)i;
    if (s->nnames < SRC_MAX_CHANNELS && s->kind != K_STDIN) {
        set_error(s, "%s line %" PRIu64 ": interface '%.*s' was not there when the file was "
                  "scanned (did it change?)", src_name(s), s->lineno, il > 64 ? 64 : (int)il,
                  ifc);
        return -2;
    }
    if (s->nnames == SRC_MAX_CHANNELS) {
        set_error(s, "%s line %" PRIu64 ": more than %u interfaces ('%.*s'): the log has "
                  "channels 0 to %u", src_name(s), s->lineno, SRC_MAX_CHANNELS,
                  il > 64 ? 64 : (int)il, ifc, SRC_MAX_CHANNELS - 1);
        return -2;
    }
    if (il > s->o.max_body - SF_FILE_HDR) {     /* sf_log_name_channel's limit, B - 96 */
        *why = "interface name too long";
        return -1;
    }
    pthread_mutex_lock(&s->lock);  /* src_channels readers are done by now; names grow only */
    add_name(s, ifc, il);
    pthread_mutex_unlock(&s->lock);
    wait_for_room(s, w, sf_rec_size((uint32_t)il));
    sf_log_name_channel(s->lg, (uint8_t)i, s->names[i], ts);   /* a refusal is a drop */
    return (int)i;
}

/* docs/FORMAT.md: each channel's records in a file have non-decreasing times. A time earlier
 * than the channel's last: 0 (the caller refuses it); else 1, and it is the last. */
static int in_order(struct log_source *s, unsigned ch, uint64_t ts)
{
    if (s->have_last[ch] && ts < s->last_ts[ch])
        return 0;
    s->have_last[ch] = 1;
    s->last_ts[ch] = ts;
    return 1;
}

/* file: at the recorded speed: wait until the frame's time relative to the first frame
 * has passed since the start (--fast: no waiting). */
struct pacer {
    int started;
    uint64_t ts0, t0;
};

static void pace(struct log_source *s, struct pacer *pc, uint64_t ts)
{
    uint64_t at;

    if (s->o.fast)
        return;
    if (!pc->started) {
        pc->started = 1;
        pc->ts0 = ts;
        pc->t0 = now_ns(CLOCK_MONOTONIC);
    }
    if (ts <= pc->ts0)
        return;
    at = pc->t0 + (ts - pc->ts0);
    while (!stopping(s)) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now >= at)
            break;
        sleep_until(at - now > 100000000 ? now + 100000000 : at);
    }
}

/* A file: replay that read to its end without one usable frame is an error (issue 15). */
static void no_frames_check(struct log_source *s)
{
    uint64_t bad = atomic_load(&s->bad);

    if (atomic_load(&s->offered) + atomic_load(&s->filtered) == 0)
        set_error(s, "%s: no CAN frame in it (%" PRIu64 " unreadable line%s): not a candump, "
                  "ASC or BLF log", s->path, bad, bad == 1 ? "" : "s");
}

/* Handle one line; -1 when the budget is used up, -2 on an error that ends the run. */
static int handle_line(struct producer *p, const char *line, size_t n, struct waiter *w,
                       struct pacer *pc)
{
    struct log_source *s = p->s;
    struct src_can_frame f;
    const char *ifc;
    size_t il;
    int rc = src_parse_candump(line, n, &f, &ifc, &il), ch;
    const char *why = NULL;

    s->lineno++;
    if (rc == 0)
        return 0;
    if (rc < 0) {
        bad_input(s, "line", s->lineno, f.why ? f.why : "not a candump -L frame");
        return 0;
    }
    if (!f.has_ts)
        f.ts = now_ns(CLOCK_REALTIME);         /* no time in the line: when it came */
    ch = line_channel(p, ifc, il, f.ts, w, &why);
    if (ch == -2)
        return -2;
    if (ch < 0) {
        bad_input(s, "line", s->lineno, why);
        return 0;
    }
    if (!in_order(s, (unsigned)ch, f.ts)) {
        if (f.has_ts) {
            bad_input(s, "line", s->lineno, "timestamp earlier than the previous line's on "
                      "the same interface");
            return 0;
        }
        f.ts = s->last_ts[ch];                 /* the host's clock went back */
    }
    if (s->kind == K_FILE)
        pace(s, pc, f.ts);
    p->ch = (unsigned)ch;
    wait_for_room(s, w, sf_rec_size(SF_CAN_BODY + f.len));
    return emit_can(p, &f) < 0 ? -1 : 0;
}

static void *lines_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    struct waiter w = { 0, 0, 65536 };
    struct pacer pc = { 0, 0, 0 };
    int fd = p->fd, eof = 0, limit = 0, failed = 0;

    if (!buf) {
        set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s) && !eof && !limit && !failed) {
        struct pollfd pf = { fd, POLLIN, 0 };
        ssize_t r;
        char *nl, *start;
        if (s->kind == K_STDIN) {
            int pr = poll(&pf, 1, POLL_MS);
            if (pr == 0 || (pr < 0 && errno == EINTR))
                continue;
        }
        if (len == cap) {                       /* a line longer than the buffer: skip it */
            bad_input(s, "line", s->lineno + 1, "longer than 64 KiB");
            len = 0;
        }
        r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            set_error(s, "%s: read: %s", s->kind == K_FILE ? s->path : "stdin",
                      strerror(errno));
            break;
        }
        if (r == 0) {
            eof = 1;
            if (len && len < cap)
                buf[len++] = '\n';              /* a last line without a newline */
        }
        len += (size_t)r;
        start = buf;
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
            int hr = handle_line(p, start, (size_t)(nl - start + 1), &w, &pc);
            if (hr == -2) {
                failed = 1;
                break;
            }
            if (hr < 0) {
                limit = 1;
                break;
            }
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
    }
    flush_counters(p);
    free(buf);
    if (eof && s->kind == K_FILE)
        no_frames_check(s);
    if (eof || limit)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* ---- ASC and BLF logs ------------------------------------------------------------------ */

/* file: with an ASC or BLF log: frames from the reader (import.h), on the channel the
 * prescan named after the file's channel number. A read error ends the run with it. */
static void *import_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    struct waiter w = { 0, 0, 65536 };
    struct pacer pc = { 0, 0, 0 };
    struct imp_frame fr;
    int rc = 1, done = 0;

    while (!stopping(s) && (rc = imp_next(s->imp, &fr)) > 0) {
        unsigned i;
        for (i = 0; i < s->nnames; i++)
            if (s->chan_num[i] == fr.channel)
                break;
        if (i == s->nnames) {
            set_error(s, "%s: more than %u channels", s->path, SRC_MAX_CHANNELS);
            break;
        }
        s->lineno++;                            /* here: the frame's number */
        if (!in_order(s, i, fr.f.ts)) {
            bad_input(s, "frame", s->lineno, "timestamp earlier than the previous frame's "
                      "on the same channel");
            continue;
        }
        pace(s, &pc, fr.f.ts);
        p->ch = i;
        wait_for_room(s, &w, sf_rec_size(SF_CAN_BODY + fr.f.len));
        if (emit_can(p, &fr.f) < 0) {
            done = 1;
            break;
        }
    }
    flush_counters(p);
    if (rc < 0)
        set_error(s, "%s", imp_error(s->imp));
    else if (rc == 0) {
        done = 1;
        no_frames_check(s);
    }
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* stdin --raw: bytes as they come, in pieces no larger than a block's worth. */
static void *stdin_raw_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = 65536;
    uint8_t *buf = malloc(cap);
    struct waiter w = { 0, 0, 65536 };
    uint64_t total = 0;
    int done = 0;

    if (!buf) {
        set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s)) {
        struct pollfd pf = { p->fd, POLLIN, 0 };
        size_t want = cap;
        ssize_t r;
        sf_ssize_t got;
        int pr = poll(&pf, 1, POLL_MS);
        if (pr == 0 || (pr < 0 && errno == EINTR))
            continue;
        if (s->o.max_bytes && s->o.max_bytes - total < want)
            want = (size_t)(s->o.max_bytes - total);
        if (want == 0) {
            done = 1;
            break;
        }
        r = read(p->fd, buf, want);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            set_error(s, "stdin: read: %s", strerror(errno));
            break;
        }
        if (r == 0) {
            done = 1;
            break;
        }
        wait_for_room(s, &w, (uint64_t)r);
        got = sf_log_write_raw(s->lg, buf, (size_t)r);
        if (got < 0) {
            set_error(s, "raw write: %s", sf_strerror((int)got));
            break;
        }
        p->offered += (uint64_t)r;
        p->offered_bytes += (uint64_t)r;
        p->dropped += (uint64_t)r - (uint64_t)got;
        total += (uint64_t)r;
    }
    flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* ---- CAN datagrams ------------------------------------------------------------------- */

int src_can_decode(const void *buf, size_t len, struct src_can_frame *f)
{
    uint32_t id;

    memset(f, 0, sizeof *f);
    if (len == CAN_MTU) {
        struct can_frame cf;
        memcpy(&cf, buf, sizeof cf);
        if (cf.len > CAN_MAX_DLEN)
            return -1;
        id = cf.can_id;
        f->len = cf.len;
        memcpy(f->data, cf.data, cf.len);
    } else if (len == CANFD_MTU) {
        struct canfd_frame cf;
        unsigned k;
        memcpy(&cf, buf, sizeof cf);
        for (k = 0; k < sizeof fd_lens; k++)
            if (fd_lens[k] == cf.len)
                break;
        if (k == sizeof fd_lens)
            return -1;
        id = cf.can_id;
        f->len = cf.len;
        f->flags |= SF_CAN_FD;
        if (cf.flags & CANFD_BRS)
            f->flags |= SF_CAN_BRS;
        if (cf.flags & CANFD_ESI)
            f->flags |= SF_CAN_ESI;
        memcpy(f->data, cf.data, cf.len);
    } else {
        return -1;
    }
    if (id & CAN_ERR_FLAG) {
        f->flags |= SF_CAN_ERR;
        f->id = id & CAN_ERR_MASK;
        if (f->id > CAN_SFF_MASK)
            f->flags |= SF_CAN_EFF;        /* docs/FORMAT.md: like any id above 0x7FF */
    } else if (id & CAN_EFF_FLAG) {
        f->flags |= SF_CAN_EFF;
        f->id = id & CAN_EFF_MASK;
    } else {
        f->id = id & CAN_SFF_MASK;
    }
    if ((id & CAN_RTR_FLAG) && !(f->flags & SF_CAN_FD)) {
        f->flags |= SF_CAN_RTR;
    }
    return 0;
}

/* One datagram from a socket source and its kernel receive time (SO_TIMESTAMPNS; *ts is 0
 * where the kernel gave none): its size, or -1 with errno set, EAGAIN or EINTR when there
 * was nothing within POLL_MS (poll again after checking for a stop). *msg_flags gets
 * recvmsg's flags (MSG_TRUNC). */
static ssize_t recv_stamped(int fd, void *buf, size_t cap, uint64_t *ts, int *msg_flags)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(struct timespec)) * 2];
    } ctl;
    struct pollfd pf = { fd, POLLIN, 0 };
    struct iovec iov = { buf, cap };
    struct msghdr mh;
    struct cmsghdr *cm;
    ssize_t r;
    int pr = poll(&pf, 1, POLL_MS);

    *ts = 0;
    if (pr == 0 || (pr < 0 && errno == EINTR)) {
        errno = EAGAIN;
        return -1;
    }
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    r = recvmsg(fd, &mh, MSG_DONTWAIT);
    if (r < 0)
        return -1;
    for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec t;
            memcpy(&t, CMSG_DATA(cm), sizeof t);
            *ts = (uint64_t)t.tv_sec * NS + (uint64_t)t.tv_nsec;
        }
    }
    *msg_flags = mh.msg_flags;
    return r;
}

/* The last step of opening a socket source: bind, naming the socket `what` in the error;
 * from then on the producer owns fd. */
static int bind_source(struct producer *p, int fd, const void *addr, socklen_t len,
                       const char *what)
{
    if (bind(fd, addr, len) < 0) {
        cli_err("%s: %s", what, strerror(errno));
        close(fd);
        return -1;
    }
    p->fd = fd;
    return 0;
}

/* The reading loop of can: and canpair: (and anything else delivering SocketCAN frames as
 * datagrams). Ends at end of file (the peer closed), an error, the budget, or stop. */
static void *can_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    union {
        struct canfd_frame fd;
        uint8_t bytes[CANFD_MTU + 16];
    } u;
    int done = 0;

    while (!stopping(s)) {
        struct src_can_frame f;
        uint64_t ts;
        int mflags;
        ssize_t r = recv_stamped(p->fd, u.bytes, sizeof u.bytes, &ts, &mflags);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            set_error(s, "%s: receive: %s", s->names[p->ch], strerror(errno));
            break;
        }
        if (r == 0) {
            done = 1;
            break;
        }
        if ((mflags & MSG_TRUNC) || src_can_decode(u.bytes, (size_t)r, &f)) {
            atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
            continue;
        }
        f.ts = ts ? ts : now_ns(CLOCK_REALTIME);
        if (emit_can(p, &f) < 0) {
            done = 1;
            break;
        }
    }
    flush_counters(p);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static int open_can(struct log_source *s, struct producer *p)
{
    struct sockaddr_can addr;
    int on = 1, fd;
    unsigned idx;
    const char *name = s->names[p->ch];
    char what[128];

    fd = socket(AF_CAN, SOCK_RAW, CAN_RAW);
    if (fd < 0) {
        cli_err("can:%s: cannot open a CAN socket: %s%s", name, strerror(errno),
                errno == EAFNOSUPPORT ? " (this kernel has no SocketCAN)" : "");
        return -1;
    }
    idx = if_nametoindex(name);
    if (!idx) {
        cli_err("can:%s: no such interface", name);
        close(fd);
        return -1;
    }
    /* CAN FD frames too; a classic-only interface refuses this, which is fine */
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof on);
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_ERR_FILTER, &(can_err_mask_t){ CAN_ERR_MASK },
               sizeof(can_err_mask_t));
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
        cli_err("can:%s: note: no kernel timestamps (%s)", name, strerror(errno));
    memset(&addr, 0, sizeof addr);
    addr.can_family = AF_CAN;
    addr.can_ifindex = (int)idx;
    snprintf(what, sizeof what, "can:%s: bind", name);
    return bind_source(p, fd, &addr, sizeof addr, what);
}

/* ---- udp: -------------------------------------------------------------------------------- */

static void *udp_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = s->o.max_body + 1;
    uint8_t *buf = malloc(cap);
    int done = 0;

    if (!buf) {
        set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s)) {
        uint64_t ts;
        int mflags;
        ssize_t r = recv_stamped(p->fd, buf, cap, &ts, &mflags);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            set_error(s, "udp: receive: %s", strerror(errno));
            break;
        }
        if ((size_t)r > s->o.max_body || (mflags & MSG_TRUNC)) {
            atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
            continue;
        }
        if (!ts)
            ts = now_ns(CLOCK_REALTIME);
        if ((s->o.max_records || s->o.max_bytes) &&
            !take_budget(s, sf_rec_size((uint32_t)r))) {
            done = 1;
            break;
        }
        if (sf_log_append(s->lg, SF_REC_SAMPLE, (uint8_t)p->ch, 0, ts, buf, (uint16_t)r))
            p->dropped++;
        p->offered++;
        p->offered_bytes += sf_rec_size((uint32_t)r);
    }
    flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static int open_udp(struct log_source *s, struct producer *p)
{
    struct sockaddr_in a;
    int fd, on = 1;
    char what[128];

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(s->port);
    if (inet_pton(AF_INET, s->host, &a.sin_addr) != 1) {
        cli_err("udp: '%s' is not an IPv4 address", s->host);
        return -1;
    }
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        cli_err("udp: socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    {
        int rcvbuf = 8 << 20;            /* ride out short writer stalls in the kernel */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    snprintf(what, sizeof what, "udp: bind %s:%u", s->host, (unsigned)s->port);
    return bind_source(p, fd, &a, sizeof a, what);
}

/* ---- latency: ---------------------------------------------------------------------------- */

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
        sleep_until(next);
        now = now_ns(CLOCK_MONOTONIC);
        ts = now_ns(CLOCK_REALTIME);
        late = (int64_t)(now - next);
        for (unsigned b = 0; b < 8; b++) {
            body[b] = (uint8_t)((uint64_t)late >> (8 * b));
            body[8 + b] = (uint8_t)(s->period_ns >> (8 * b));
        }
        if ((s->o.max_records || s->o.max_bytes) && !take_budget(s, sf_rec_size(16))) {
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
                fire(s, ts, "trigger: timer latency %" PRId64 " ns over %" PRIu64 " ns", late,
                     s->o.rules[i].ns);
                break;
            }
        if (now > next + s->period_ns)          /* overrun: skip the missed periods */
            next = now - (now - next) % s->period_ns;
    }
    flush_counters(p);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* ---- start and stop -------------------------------------------------------------------- */

int src_prepare(struct log_source *s)
{
    for (unsigned i = 0; i < s->nprod; i++) {
        struct producer *p = &s->prod[i];
        p->s = s;
        p->ch = i;
        if (s->kind == K_CAN && open_can(s, p))
            return -1;
        if (s->kind == K_CANPAIR) {
            int on = 1;
            if (fcntl(p->fd, F_GETFD) < 0) {
                cli_err("canpair:%d: not an open descriptor", p->fd);
                return -1;
            }
            setsockopt(p->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
        }
        if (s->kind == K_UDP && open_udp(s, p))
            return -1;
        if (s->kind == K_FILE && s->fmt != IMP_CANDUMP) {
            char err[600];
            enum imp_format fmt;
            if (imp_open(s->path, &fmt, &s->imp, err, sizeof err)) {
                cli_err("%s", err);
                return -1;
            }
            if (fmt != s->fmt || !s->imp) {
                cli_err("%s: changed while starting", s->path);
                return -1;
            }
        } else if (s->kind == K_FILE) {
            p->fd = open(s->path, O_RDONLY | O_CLOEXEC);
            if (p->fd < 0) {
                cli_err("%s: %s", s->path, strerror(errno));
                return -1;
            }
        }
    }
    if (s->kind == K_GEN_CAN && s->o.max_records) {
        for (unsigned i = 0; i < s->nprod; i++)
            s->prod[i].quota = s->o.max_records / s->nprod + (i < s->o.max_records % s->nprod);
    }
    return 0;
}

int src_start(struct log_source *s, struct sf_log *lg)
{
    void *(*fn)(void *) = NULL;

    s->lg = lg;
    switch (s->kind) {
    case K_GEN_CAN: fn = gen_can_main; break;
    case K_GEN_RAW: fn = gen_raw_main; break;
    case K_STDIN:   fn = s->o.raw ? stdin_raw_main : lines_main; break;
    case K_FILE:    fn = s->fmt == IMP_CANDUMP ? lines_main : import_main; break;
    case K_CAN:
    case K_CANPAIR: fn = can_main; break;
    case K_UDP:     fn = udp_main; break;
    case K_LATENCY: fn = latency_main; break;
    }
    atomic_store(&s->ring_free, UINT64_MAX / 2);
    for (unsigned i = 0; i < s->nprod; i++) {
        int err = pthread_create(&s->prod[i].th, NULL, fn, &s->prod[i]);
        if (err) {
            cli_err("cannot start a producer thread: %s", strerror(err));
            src_stop(s);
            src_join(s);
            return -1;
        }
        s->prod[i].started = 1;
    }
    return 0;
}

void src_stop(struct log_source *s)
{
    atomic_store(&s->stop, 1);
}

void src_join(struct log_source *s)
{
    for (unsigned i = 0; i < s->nprod; i++) {
        struct producer *p = &s->prod[i];
        if (p->started)
            pthread_join(p->th, NULL);
        p->started = 0;
        if (p->fd > 2 && s->kind != K_CANPAIR) {
            close(p->fd);
            p->fd = -1;
        }
    }
}

int src_finished(const struct log_source *s)
{
    return atomic_load(&((struct log_source *)s)->finished) >= s->nprod ||
           atomic_load(&((struct log_source *)s)->limit_hit);
}

void src_set_ring_free(struct log_source *s, uint64_t bytes)
{
    atomic_store_explicit(&s->ring_free, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->ring_epoch, 1, memory_order_release);
}

int src_take_trigger(struct log_source *s, uint64_t *ts, char *why, size_t n)
{
    int got = 0;

    pthread_mutex_lock(&s->lock);
    if (s->trig_pending) {
        *ts = s->trig_ts;
        snprintf(why, n, "%s", s->trig_why);
        s->trig_pending = 0;
        got = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return got;
}

void src_get_stats(const struct log_source *cs, struct src_stats *st)
{
    struct log_source *s = (struct log_source *)cs;

    memset(st, 0, sizeof *st);
    st->offered = atomic_load(&s->offered);
    st->offered_bytes = atomic_load(&s->offered_bytes);
    st->dropped = atomic_load(&s->dropped);
    st->filtered = atomic_load(&s->filtered);
    st->bad_input = atomic_load(&s->bad);
    st->waits = atomic_load(&s->waits);
    st->latency_samples = atomic_load(&s->lat_n);
    st->latency_max_ns = atomic_load(&s->lat_max);
    st->rules_fired = atomic_load(&s->rules_fired);
}

const char *src_error(const struct log_source *cs)
{
    struct log_source *s = (struct log_source *)cs;
    const char *e;

    pthread_mutex_lock(&s->lock);
    e = s->has_err ? s->err : NULL;
    pthread_mutex_unlock(&s->lock);
    return e;
}
