/* Vector ASC (ASCII logging format), the subset CANalyzer/CANoe and python-can's ASCReader
 * agree on:
 *
 *   date Tue Nov 14 11:13:20.123 pm 2023          measurement start, local time, ms
 *   base hex  timestamps absolute                 ids and data in hex; event times count
 *   internal events logged                          from the start (not from the last event)
 *   // version 9.0.0
 *   Begin Triggerblock Tue Nov 14 11:13:20.123 pm 2023
 *      0.000000 Start of measurement
 *      0.001234 1  123             Rx   d 8 11 22 33 44 55 66 77 88
 *      0.001235 1  1ABCDEF0x       Rx   d 2 DE AD              'x': 29-bit id
 *      0.001236 2  7FF             Rx   r 5                    remote frame of length 5
 *      0.001237 1  ErrorFrame                                  error frame (no id or data)
 *      0.001238 CANFD   1 Rx        321  1 0 9 12 01 ... 0 0 3000 0 0 0 0 0
 *   End TriggerBlock
 *
 * CAN FD lines: channel, direction, id, BRS, ESI, DLC code (hex), data length (decimal),
 * data, then message duration, message length, flags (0x1000 EDL, 0x2000 BRS, 0x4000 ESI),
 * CRC and four bit-timing fields, which streamfat does not know (0).
 * Channels count from 1: can<N> is channel N+1, other channels their number + 1.
 *
 * The start is the log's start or the oldest frame, if that is earlier (x->min_ts from a
 * first pass over the log; on a pipe, the oldest of the first 4096 frames), rounded down to
 * the millisecond because the date line has no finer field; event times carry the rest, to
 * the microsecond. A later frame older than the start is put at it and counted. An ASC file
 * is always absolute-from-start; --relative does not apply. */
#include "export.h"
#include "blf_format.h"

#include <stdlib.h>
#include <time.h>

/* Frames held back until the start time is known (see start()). */
#define ASC_HOLD 4096

struct asc_held {
    uint64_t ts;
    uint8_t ch;
    struct sf_can c;
};

struct asc {
    int started;
    uint64_t start;                /* ns, a whole millisecond */
    uint64_t min;                  /* the oldest held frame or the log's start */
    unsigned nheld;
    struct asc_held held[ASC_HOLD];
};

static const char *const wday[7] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const mon[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* "Tue Nov 14 11:13:20.123 pm 2023" in local time, English names whatever the locale. */
static int put_date(char *buf, size_t n, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    unsigned ms = (unsigned)(ns % 1000000000u / 1000000u);
    struct tm tm;
    int h;

    if (!localtime_r(&s, &tm))
        return -1;
    h = tm.tm_hour % 12 ? tm.tm_hour % 12 : 12;
    return snprintf(buf, n, "%s %s %02d %02d:%02d:%02d.%03u %s %d", wday[tm.tm_wday],
                    mon[tm.tm_mon], tm.tm_mday, h, tm.tm_min, tm.tm_sec, ms,
                    tm.tm_hour < 12 ? "am" : "pm", tm.tm_year + 1900) > 0 ? 0 : -1;
}

static int put_line(struct export_ctx *x, struct asc *a, uint64_t ts, uint8_t channel,
                    const struct sf_can *c);

/* The header, then the held frames. The start is the oldest frame (first pass) or of the
 * first ASC_HOLD frames, or the log's start: a logger's producers deliver frames out of
 * order, and an ASC event time cannot be negative. */
static int start(struct export_ctx *x, struct asc *a)
{
    char date[64];

    a->start = a->min - a->min % 1000000u;
    a->started = 1;
    if (put_date(date, sizeof date, a->start))
        return -1;
    if (fprintf(x->out,
                "date %s\n"
                "base hex  timestamps absolute\n"
                "internal events logged\n"
                "// version 9.0.0\n"
                "// streamfat export\n"
                "Begin Triggerblock %s\n"
                "   0.000000 Start of measurement\n", date, date) < 0)
        return -1;
    for (unsigned i = 0; i < a->nheld; i++)
        if (put_line(x, a, a->held[i].ts, a->held[i].ch, &a->held[i].c))
            return -1;
    return 0;
}

static int asc_begin(struct export_ctx *x)
{
    struct asc *a = calloc(1, sizeof *a);

    if (!a)
        return -1;
    x->priv = a;
    a->min = x->log_start;
    if (x->have_min && x->min_ts < a->min)
        a->min = x->min_ts;
    return 0;
}

/* Event time: seconds.microseconds since the start, right-aligned as Vector writes it. */
static char *put_ts(struct export_ctx *x, struct asc *a, char *p, uint64_t ts)
{
    char tmp[32], *q = tmp;
    size_t n;

    if (ts < a->start) {
        x->clamped++;
        ts = a->start;
    }
    ts = export_round_us(ts - a->start);     /* to the nearest microsecond */
    q = export_put_dec(q, ts / 1000000u, 1);
    *q++ = '.';
    q = export_put_dec(q, ts % 1000000u, 6);
    n = (size_t)(q - tmp);
    for (; n < 11; n++)
        *p++ = ' ';
    memcpy(p, tmp, (size_t)(q - tmp));
    return p + (q - tmp);
}

static char *pad_to(char *p, char *from, size_t width)
{
    while ((size_t)(p - from) < width)
        *p++ = ' ';
    return p;
}

static int asc_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    struct asc *a = x->priv;

    x->written++;
    if (a->started)
        return put_line(x, a, r->ts, r->channel, c) ? -1 : 1;
    if (r->ts < a->min)
        a->min = r->ts;
    a->held[a->nheld].ts = r->ts;
    a->held[a->nheld].ch = r->channel;
    a->held[a->nheld].c = *c;
    if (++a->nheld == ASC_HOLD && start(x, a))
        return -1;
    return 1;
}

static int put_line(struct export_ctx *x, struct asc *a, uint64_t ts, uint8_t channel,
                    const struct sf_can *c)
{
    char line[512], *p = line, *f;
    unsigned ch = export_vector_channel(x, channel);

    p = put_ts(x, a, p, ts);
    *p++ = ' ';
    if (c->flags & SF_CAN_FD) {
        uint32_t flags = 0x1000u | ((c->flags & SF_CAN_BRS) ? 0x2000u : 0) |
                         ((c->flags & SF_CAN_ESI) ? 0x4000u : 0);
        memcpy(p, "CANFD ", 6);
        p += 6;
        f = p;
        p = export_put_dec(p, ch, 1);
        if (p - f < 3) {                    /* right-align the channel in 3 columns */
            size_t n = (size_t)(p - f);
            memmove(f + 3 - n, f, n);
            memset(f, ' ', 3 - n);
            p = f + 3;
        }
        memcpy(p, (c->flags & SF_CAN_TX) ? " Tx   " : " Rx   ", 6);   /* docs/FORMAT.md bit 6 */
        p += 6;
        f = p;
        p = export_put_hex(p, c->id, (c->flags & SF_CAN_EFF) ? 8 : 3);
        if (c->flags & SF_CAN_EFF)
            *p++ = 'x';
        p = pad_to(p, f, 9);
        *p++ = ' ';
        *p++ = (c->flags & SF_CAN_BRS) ? '1' : '0';
        *p++ = ' ';
        *p++ = (c->flags & SF_CAN_ESI) ? '1' : '0';
        *p++ = ' ';
        *p++ = "0123456789abcdef"[blf_len_to_dlc(c->len)];
        *p++ = ' ';
        if (c->len < 10)
            *p++ = ' ';
        p = export_put_dec(p, c->len, 1);
        for (unsigned i = 0; i < c->len; i++) {
            *p++ = ' ';
            *p++ = export_hexu[c->data[i] >> 4];
            *p++ = export_hexu[c->data[i] & 0xF];
        }
        memcpy(p, "        0    0 ", 15);
        p += 15;
        p = export_put_hex(p, flags, 8);
        memcpy(p, "        0        0        0        0        0\n", 46);
        p += 46;
    } else if (c->flags & SF_CAN_ERR) {
        p = export_put_dec(p, ch, 1);
        memcpy(p, "  ErrorFrame\n", 13);
        p += 13;
    } else {
        p = export_put_dec(p, ch, 1);
        *p++ = ' ';
        *p++ = ' ';
        f = p;
        p = export_put_hex(p, c->id, (c->flags & SF_CAN_EFF) ? 8 : 3);
        if (c->flags & SF_CAN_EFF)
            *p++ = 'x';
        p = pad_to(p, f, 15);
        memcpy(p, (c->flags & SF_CAN_TX) ? " Tx   " : " Rx   ", 6);   /* docs/FORMAT.md bit 6 */
        p += 6;
        *p++ = (c->flags & SF_CAN_RTR) ? 'r' : 'd';
        *p++ = ' ';
        *p++ = export_hexu[c->len & 0xF];
        if (!(c->flags & SF_CAN_RTR))
            for (unsigned i = 0; i < c->len; i++) {
                *p++ = ' ';
                *p++ = export_hexu[c->data[i] >> 4];
                *p++ = export_hexu[c->data[i] & 0xF];
            }
        *p++ = '\n';
    }
    return export_write(x, line, (size_t)(p - line));
}

static int asc_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

static int asc_end(struct export_ctx *x)
{
    struct asc *a = x->priv;
    int rc = 0;

    if (a) {
        if (!a->started)
            rc = start(x, a);
        if (!rc && fputs("End TriggerBlock\n", x->out) == EOF)
            rc = -1;
    }
    free(a);
    x->priv = NULL;
    return rc;
}

const struct export_writer export_asc = {
    "asc", "asc", 0, 1, asc_begin, asc_can, asc_other, asc_end,
};
