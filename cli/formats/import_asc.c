/* Vector ASC import (import.h): the pure line parser and a streaming line reader over it.
 *
 * What is read:
 *   date Thu Nov 30 01:02:03.456 pm 2026    start time (local time; 12- or 24-hour clock,
 *                                           English month names and python-can's German ones)
 *   base hex|dec  [timestamps absolute|relative]
 *   Begin Triggerblock <date as above>      the start from here on (python-can writes the
 *                                           first message's time here, to the millisecond)
 *   internal events logged, End TriggerBlock, // comments, blank lines
 *   <t> <ch> <id>[x] Rx|Tx d <dlc> <data...> [...]        classic frame (x: 29-bit id)
 *   <t> <ch> <id>[x] Rx|Tx r [<dlc>] [...]                remote frame
 *   <t> <ch> ErrorFrame [...]                             error frame
 *   <t> CANFD <ch> Rx|Tx <id>[x] [<name>] <brs> <esi> <dlc> <len> <data...>
 *         [<duration> <length> <flags> ...]               CAN FD (flags bit 12 clear: a
 *                                                         classic frame, bit 4 remote)
 *   <t> CANFD <ch> Rx|Tx ErrorFrame [...]
 * A frame's time is the start plus <t> seconds ("timestamps relative": plus the sum of the
 * <t>s so far, Vector's meaning; python-can ignores the word). Other event lines (those
 * with a time first: statistics, chip states, J1939, markers) are skipped; a frame line
 * that does not parse and a line that is none of the above are errors.
 *
 * Sections: tokens and numbers; dates; frame lines; the line parser; the reader. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "import.h"
#include "streamfat/rec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define LINE_CAP (64u * 1024u)
#define NS 1000000000u

/* ---- tokens and numbers ---------------------------------------------------------------- */

struct tok {
    const char *p;
    size_t n;
};

static int next_tok(const char **p, const char *end, struct tok *t)
{
    const char *s = *p;

    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
        s++;
    t->p = s;
    while (s < end && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
        s++;
    t->n = (size_t)(s - t->p);
    *p = s;
    return t->n != 0;
}

static int tok_is(const struct tok *t, const char *w)
{
    return t->n == strlen(w) && strncasecmp(t->p, w, t->n) == 0;
}

static int all_digits(const struct tok *t)
{
    if (t->n == 0)
        return 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->p[i] < '0' || t->p[i] > '9')
            return 0;
    return 1;
}

static int num(const struct tok *t, unsigned base, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (t->n == 0 || t->n > 20)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        char c = t->p[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        if (d >= base || v > (max - d) / base)
            return -1;
        v = v * base + d;
    }
    *out = v;
    return 0;
}

/* "12.345678" seconds (up to 9 decimals kept) into ns. */
static int seconds_ns(const struct tok *t, uint64_t *out)
{
    const char *s = t->p, *end = t->p + t->n;
    uint64_t sec = 0, frac = 0;
    unsigned digits = 0;

    if (s == end || *s < '0' || *s > '9')
        return -1;
    while (s < end && *s >= '0' && *s <= '9') {
        if (sec > UINT64_MAX / 10 / NS - 1)
            return -1;
        sec = sec * 10 + (uint64_t)(*s++ - '0');
    }
    if (s < end && *s == '.') {
        s++;
        while (s < end && *s >= '0' && *s <= '9') {
            if (digits < 9) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                digits++;
            }
            s++;
        }
    }
    if (s != end)
        return -1;
    for (; digits < 9; digits++)
        frac *= 10;
    *out = sec * NS + frac;
    return 0;
}

/* ---- dates ----------------------------------------------------------------------------- */

static int month_of(const struct tok *t)
{
    static const char *const en[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    static const struct { const char *name; int m; } de[] = {
        { "M\xc3\xa4r", 3 }, { "Mai", 5 }, { "Okt", 10 }, { "Dez", 12 },
    };
    uint64_t v;

    for (int i = 0; i < 12; i++)
        if (tok_is(t, en[i]))
            return i + 1;
    for (size_t i = 0; i < sizeof de / sizeof de[0]; i++)
        if (t->n == strlen(de[i].name) && memcmp(t->p, de[i].name, t->n) == 0)
            return de[i].m;
    if (!num(t, 10, 12, &v) && v >= 1)
        return (int)v;
    return -1;
}

/* "<weekday> <month> <day> <hh:mm:ss[.fff]> [am|pm] <year>" from *p. */
static int parse_date(const char *p, const char *end, uint64_t *out)
{
    struct tok wd, mo, dy, tm, t5, yr;
    uint64_t day, year, h = 0, m = 0, s = 0, frac = 0;
    unsigned digits = 0;
    int month, pm = -1;
    const char *c, *ce;

    if (!next_tok(&p, end, &wd) || !next_tok(&p, end, &mo) || !next_tok(&p, end, &dy) ||
        !next_tok(&p, end, &tm) || !next_tok(&p, end, &t5))
        return -1;
    if (tok_is(&t5, "am") || tok_is(&t5, "pm")) {
        pm = tok_is(&t5, "pm");
        if (!next_tok(&p, end, &yr))
            return -1;
    } else {
        yr = t5;
    }
    if ((month = month_of(&mo)) < 0 || num(&dy, 10, 31, &day) || num(&yr, 10, 9999, &year))
        return -1;
    /* hh:mm:ss[.frac] */
    c = tm.p;
    ce = tm.p + tm.n;
    {
        uint64_t *f[3] = { &h, &m, &s };
        for (int i = 0; i < 3; i++) {
            unsigned nd = 0;
            while (c < ce && *c >= '0' && *c <= '9' && nd < 2) {
                *f[i] = *f[i] * 10 + (uint64_t)(*c++ - '0');
                nd++;
            }
            if (nd == 0)
                return -1;
            if (i < 2) {
                if (c == ce || *c != ':')
                    return -1;
                c++;
            }
        }
    }
    if (c < ce && *c == '.') {
        c++;
        while (c < ce && *c >= '0' && *c <= '9') {
            if (digits < 9) {
                frac = frac * 10 + (uint64_t)(*c - '0');
                digits++;
            }
            c++;
        }
    }
    if (c != ce)
        return -1;
    for (; digits < 9; digits++)
        frac *= 10;
    if (pm >= 0) {                      /* 12-hour clock: 12 am is 0 h, 12 pm is 12 h */
        if (h < 1 || h > 12)
            return -1;
        h = h % 12 + (pm ? 12 : 0);
    }
    return imp_local_time((int)year, month, (int)day, (int)h, (int)m, (int)s, (uint32_t)frac,
                          out);
}

/* ---- frame lines ----------------------------------------------------------------------- */

static int parse_id(const struct tok *t, unsigned base, struct src_can_frame *f,
                    const char **why)
{
    struct tok d = *t;
    uint64_t v;

    if (d.n > 1 && (d.p[d.n - 1] == 'x' || d.p[d.n - 1] == 'X')) {
        d.n--;
        f->flags |= SF_CAN_EFF;
    }
    if (num(&d, base, 0x1FFFFFFFu, &v) || (!(f->flags & SF_CAN_EFF) && v > 0x7FFu)) {
        *why = "bad CAN id";
        return -1;
    }
    f->id = (uint32_t)v;
    return 0;
}

static int parse_data(const char **p, const char *end, unsigned base, unsigned len,
                      uint8_t *data, const char **why)
{
    for (unsigned i = 0; i < len; i++) {
        struct tok t;
        uint64_t v;
        if (!next_tok(p, end, &t) || num(&t, base, 255, &v)) {
            *why = "data bytes missing or not bytes";
            return -1;
        }
        data[i] = (uint8_t)v;
    }
    return 0;
}

static void error_frame(struct src_can_frame *f)
{
    f->flags = SF_CAN_ERR;
    f->id = IMP_ERR_CLASS;
    f->len = 8;
    memset(f->data, 0, sizeof f->data);
}

static int dir_tok(const struct tok *t)
{
    return tok_is(t, "Rx") || tok_is(t, "Tx");
}

static const uint8_t dlc_len[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64 };

/* After "<t> <ch> <id> Rx|Tx": "d <dlc> <data>" or "r [<dlc>]". */
static int classic_frame(const struct asc_state *st, const char *p, const char *end,
                         struct src_can_frame *f, const char **why)
{
    struct tok t, d;
    uint64_t dlc;

    if (!next_tok(&p, end, &t) || !(tok_is(&t, "d") || tok_is(&t, "r"))) {
        *why = "expected 'd' or 'r' after the direction";
        return -1;
    }
    if (tok_is(&t, "r")) {
        const char *q = p;
        f->flags |= SF_CAN_RTR;
        if (next_tok(&q, end, &d) && all_digits(&d)) {
            if (num(&d, st->base, 15, &dlc)) {
                *why = "bad DLC";
                return -1;
            }
            f->len = (uint8_t)(dlc > 8 ? 8 : dlc);
        }
        return 1;
    }
    if (!next_tok(&p, end, &d) || num(&d, st->base, 15, &dlc)) {
        *why = "bad DLC";
        return -1;
    }
    f->len = (uint8_t)(dlc > 8 ? 8 : dlc);      /* DLC 9..15 of CAN 2.0: 8 bytes */
    return parse_data(&p, end, st->base, f->len, f->data, why) ? -1 : 1;
}

/* After "<t> CANFD <ch> Rx|Tx <id>". */
static int fd_frame(const struct asc_state *st, const char *p, const char *end,
                    struct src_can_frame *f, const char **why)
{
    struct tok t, esi, dl, ln, x;
    uint64_t brs, e, dlc, len, flags = 0x1000;   /* no flags field: EDL */

    if (!next_tok(&p, end, &t)) {
        *why = "CANFD line ends after the id";
        return -1;
    }
    if (!all_digits(&t) && !next_tok(&p, end, &t)) {    /* a symbolic name before BRS */
        *why = "CANFD line ends after the name";
        return -1;
    }
    if (num(&t, 10, 1, &brs) || !next_tok(&p, end, &esi) || num(&esi, 10, 1, &e) ||
        !next_tok(&p, end, &dl) || num(&dl, st->base, 15, &dlc) ||
        !next_tok(&p, end, &ln) || num(&ln, 10, 64, &len)) {
        *why = "bad BRS, ESI, DLC or data length";
        return -1;
    }
    if (parse_data(&p, end, st->base, (unsigned)len, f->data, why))
        return -1;
    /* <duration> <length> <flags>: flags (hex) bit 12 EDL, bit 4 remote */
    {
        struct tok dur, mlen;
        if (next_tok(&p, end, &dur) && next_tok(&p, end, &mlen) && next_tok(&p, end, &x) &&
            num(&x, 16, 0xFFFFFFFFu, &flags)) {
            *why = "bad flags field";
            return -1;
        }
    }
    if (flags & 0x1000) {
        unsigned k;
        for (k = 0; k < 16 && dlc_len[k] != len; k++)
            ;
        if (k == 16) {
            *why = "not a CAN FD data length";
            return -1;
        }
        f->flags |= SF_CAN_FD | (brs ? SF_CAN_BRS : 0) | (e ? SF_CAN_ESI : 0);
        f->len = (uint8_t)len;
    } else if (flags & 0x10) {
        f->flags |= SF_CAN_RTR;
        f->len = (uint8_t)(dlc > 8 ? 8 : dlc);
        memset(f->data, 0, sizeof f->data);
    } else {
        if (len > 8) {
            *why = "a classic frame with more than 8 bytes";
            return -1;
        }
        f->len = (uint8_t)len;
    }
    return 1;
}

/* ---- the line parser ------------------------------------------------------------------- */

static const char bad_date[] = "cannot read the date";

void asc_init(struct asc_state *st)
{
    memset(st, 0, sizeof *st);
    st->base = 16;
}

static int event_line(struct asc_state *st, const struct tok *tt, const char *p,
                      const char *end, struct imp_frame *fr, const char **why)
{
    struct src_can_frame *f = &fr->f;
    struct tok a, b, c;
    uint64_t t, ch, off;
    int rc, tx = 0;

    if (seconds_ns(tt, &t)) {
        *why = "bad time";
        return -1;
    }
    if (st->delta) {            /* every event counts, whether imported or not */
        if (t > UINT64_MAX - st->last_ns) {
            *why = "time out of range";
            return -1;
        }
        st->last_ns += t;
        off = st->last_ns;
    } else {
        off = t;
    }
    if (!next_tok(&p, end, &a))
        return 0;
    if (tok_is(&a, "CANFD")) {
        if (!next_tok(&p, end, &b) || num(&b, 10, 0xFFFF, &ch) || !next_tok(&p, end, &c)) {
            *why = "bad CANFD channel";
            return -1;
        }
        if (tok_is(&c, "ErrorFrame")) {
            error_frame(f);
            rc = 1;
        } else if (tok_is(&c, "TxRq")) {
            return 0;               /* a transmit request, not a frame on the bus */
        } else if (!dir_tok(&c)) {
            *why = "expected Rx or Tx";
            return -1;
        } else if ((tx = tok_is(&c, "Tx")), !next_tok(&p, end, &c)) {
            *why = "CANFD line ends after the direction";
            return -1;
        } else if (tok_is(&c, "ErrorFrame")) {
            error_frame(f);
            rc = 1;
        } else {
            rc = parse_id(&c, st->base, f, why) ? -1 : fd_frame(st, p, end, f, why);
        }
    } else if (all_digits(&a)) {
        if (num(&a, 10, 0xFFFF, &ch)) {
            *why = "bad channel";
            return -1;
        }
        if (!next_tok(&p, end, &b))
            return 0;
        if (tok_is(&b, "ErrorFrame")) {
            error_frame(f);
            rc = 1;
        } else {
            const char *q = p;
            if (!next_tok(&q, end, &c) || !dir_tok(&c))
                return 0;           /* an event of another kind on this channel */
            tx = tok_is(&c, "Tx");
            rc = parse_id(&b, st->base, f, why) ? -1 : classic_frame(st, q, end, f, why);
        }
    } else {
        return 0;                   /* not a channel event: skipped */
    }
    if (rc <= 0)
        return rc;
    if (tx && !(f->flags & SF_CAN_ERR))
        f->flags |= SF_CAN_TX;      /* sent by the logger that wrote the file (FORMAT.md) */
    if (st->date_bad) {         /* a frame with no start time to add its offset to */
        *why = bad_date;
        return -1;
    }
    if (off > UINT64_MAX - st->start_ns) {
        *why = "time out of range";
        return -1;
    }
    f->ts = st->start_ns + off;
    fr->channel = (unsigned)ch;
    return 1;
}

int asc_parse_line(struct asc_state *st, const char *line, size_t n, struct imp_frame *fr,
                   const char **why)
{
    const char *p = line, *end = line + n;
    struct tok t, u;

    memset(fr, 0, sizeof *fr);
    if (!next_tok(&p, end, &t))
        return 0;
    if (t.n >= 2 && t.p[0] == '/' && t.p[1] == '/')
        return 0;
    if (t.p[0] >= '0' && t.p[0] <= '9')
        return event_line(st, &t, p, end, fr, why);
    if (tok_is(&t, "date")) {
        /* python-can's ASCWriter (4.x) cuts the microseconds to 3 digits with a str.replace
         * that also removes the same 3 digits elsewhere: ".123202 PM 2026" becomes ".123 PM
         * 6". Its Begin Triggerblock line carries a good date, so the error waits for a frame
         * that would need this one. */
        st->date_bad = parse_date(p, end, &st->start_ns) != 0;
        return 0;
    }
    if (tok_is(&t, "base")) {
        if (!next_tok(&p, end, &u) || !(tok_is(&u, "hex") || tok_is(&u, "dec"))) {
            *why = "base is neither hex nor dec";
            return -1;
        }
        st->base = tok_is(&u, "hex") ? 16 : 10;
        if (next_tok(&p, end, &u)) {
            if (!tok_is(&u, "timestamps") || !next_tok(&p, end, &u) ||
                !(tok_is(&u, "absolute") || tok_is(&u, "relative"))) {
                *why = "expected 'timestamps absolute|relative'";
                return -1;
            }
            st->delta = tok_is(&u, "relative");
        }
        return 0;
    }
    if (tok_is(&t, "Begin")) {
        if (!next_tok(&p, end, &u) || !tok_is(&u, "Triggerblock")) {
            *why = "unknown Begin block";
            return -1;
        }
        {
            const char *q = p;
            if (!next_tok(&q, end, &u))
                return 0;           /* no date: the start stays */
        }
        if (parse_date(p, end, &st->start_ns)) {
            *why = "cannot read the Triggerblock date";
            return -1;
        }
        st->date_bad = 0;
        st->last_ns = 0;
        return 0;
    }
    if (tok_is(&t, "End") || tok_is(&t, "internal") || tok_is(&t, "no"))
        return 0;
    *why = "not an ASC line";
    return -1;
}

/* ---- the reader ------------------------------------------------------------------------ */

struct asc_reader {
    int fd;
    const char *name;
    struct asc_state st;
    char *buf;                      /* LINE_CAP bytes */
    size_t pos, len;
    uint64_t line;
    uint64_t date_line;             /* the "date" line that did not parse (st.date_bad) */
    int eof, failed;
    char err[512];
};

struct asc_reader *asc_reader_open(int fd, const char *name, char *err, size_t errlen)
{
    struct asc_reader *r = calloc(1, sizeof *r);

    if (r)
        r->buf = malloc(LINE_CAP);
    if (!r || !r->buf) {
        snprintf(err, errlen, "out of memory");
        if (r)
            free(r);
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->name = name;
    asc_init(&r->st);
    return r;
}

int asc_reader_next(struct asc_reader *r, struct imp_frame *fr)
{
    for (;;) {
        char *nl;
        size_t n;
        const char *why = "";
        int rc;

        if (r->failed)
            return -1;
        nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (!nl && !r->eof) {
            ssize_t got;
            if (r->pos) {
                memmove(r->buf, r->buf + r->pos, r->len - r->pos);
                r->len -= r->pos;
                r->pos = 0;
            }
            if (r->len == LINE_CAP) {
                snprintf(r->err, sizeof r->err, "%s:%llu: ASC: line longer than %u bytes",
                         r->name, (unsigned long long)r->line + 1, LINE_CAP);
                r->failed = 1;
                return -1;
            }
            got = read(r->fd, r->buf + r->len, LINE_CAP - r->len);
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                snprintf(r->err, sizeof r->err, "%s: read: %s", r->name, strerror(errno));
                r->failed = 1;
                return -1;
            }
            if (got == 0)
                r->eof = 1;
            r->len += (size_t)got;
            continue;
        }
        if (!nl && r->pos == r->len) {
            if (r->st.date_bad) {   /* nothing replaced the date: still an error */
                snprintf(r->err, sizeof r->err, "%s:%llu: ASC: %s", r->name,
                         (unsigned long long)r->date_line, bad_date);
                r->failed = 1;
                return -1;
            }
            return 0;
        }
        n = nl ? (size_t)(nl - (r->buf + r->pos)) + 1 : r->len - r->pos;
        r->line++;
        if (r->line == 1 && n >= 3 && memcmp(r->buf + r->pos, "\xef\xbb\xbf", 3) == 0) {
            r->pos += 3;        /* a UTF-8 byte order mark */
            n -= 3;
        }
        rc = asc_parse_line(&r->st, r->buf + r->pos, n, fr, &why);
        r->pos += n;
        if (r->st.date_bad && !r->date_line)
            r->date_line = r->line;
        else if (!r->st.date_bad)
            r->date_line = 0;
        if (rc > 0)
            return 1;
        if (rc < 0) {
            snprintf(r->err, sizeof r->err, "%s:%llu: ASC: %s", r->name,
                     (unsigned long long)(why == bad_date ? r->date_line : r->line), why);
            r->failed = 1;
            return -1;
        }
    }
}

const char *asc_reader_error(const struct asc_reader *r)
{
    return r->failed ? r->err : NULL;
}

void asc_reader_close(struct asc_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->buf);
    free(r);
}
