/* CSV, two layouts.
 *
 * csv: python-can's CSV layout, so can.CSVReader reads it back:
 *   timestamp,arbitration_id,extended,remote,error,dlc,data
 *   1700000000.123456,0x123,0,0,0,4,ESIzRA==
 * timestamp in seconds (six decimals), the id in lower-case hex with 0x, flags as 0/1, dlc
 * the data length (remote frames: the requested length, no data), data base64. The layout
 * has no channel and no CAN FD columns: FD frames come out with their data and length
 * only; error frames carry the error class as their id and the 8 error bytes as data.
 *
 * csv-wide: one column per channel for the non-CAN values, for spreadsheets and plotting:
 *   timestamp,temp,can3
 *   1700000000.123456,21.5,
 *   1700000000.223456,,0x0a0b
 * The columns are the channels that carry SAMPLE or LATENCY records (found by a first
 * pass over the log), headed by the channel's name (quoted as RFC 4180 says when needed)
 * or can<N>. One row per record, its value in its channel's column: a SAMPLE's bytes as
 * text when they are printable ASCII (a trailing line ending dropped, quoted as RFC 4180
 * says when needed), else 0x and lower-case hex of every byte; a LATENCY record's latency in ns. CAN frames and text records are not
 * in this layout. */
#include "export.h"

#include <stdlib.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *put_base64(char *p, const uint8_t *d, unsigned n)
{
    unsigned i = 0;

    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        *p++ = b64[v >> 18];
        *p++ = b64[(v >> 12) & 63];
        *p++ = b64[(v >> 6) & 63];
        *p++ = b64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)d[i] << 16;
        *p++ = b64[v >> 18];
        *p++ = b64[(v >> 12) & 63];
        *p++ = '=';
        *p++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8;
        *p++ = b64[v >> 18];
        *p++ = b64[(v >> 12) & 63];
        *p++ = b64[(v >> 6) & 63];
        *p++ = '=';
    }
    return p;
}

static char *put_hex_lower(char *p, uint32_t v)
{
    static const char hx[] = "0123456789abcdef";
    int i = 7;

    while (i > 0 && !((v >> (4 * i)) & 0xF))
        i--;
    for (; i >= 0; i--)
        *p++ = hx[(v >> (4 * i)) & 0xF];
    return p;
}

static int csv_begin(struct export_ctx *x)
{
    static const char head[] = "timestamp,arbitration_id,extended,remote,error,dlc,data\n";
    return export_write(x, head, sizeof head - 1);
}

static int csv_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    char line[160], *p = line;

    p = export_put_time(x, p, r->ts);
    *p++ = ',';
    *p++ = '0';
    *p++ = 'x';
    p = put_hex_lower(p, c->id);
    *p++ = ',';
    *p++ = (c->flags & SF_CAN_EFF) ? '1' : '0';
    *p++ = ',';
    *p++ = (c->flags & SF_CAN_RTR) ? '1' : '0';
    *p++ = ',';
    *p++ = (c->flags & SF_CAN_ERR) ? '1' : '0';
    *p++ = ',';
    p = export_put_dec(p, c->len, 1);
    *p++ = ',';
    if (!(c->flags & SF_CAN_RTR))
        p = put_base64(p, c->data, c->len);
    *p++ = '\n';
    x->written++;
    return export_write(x, line, (size_t)(p - line)) ? -1 : 1;
}

static int csv_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

static int csv_end(struct export_ctx *x)
{
    (void)x;
    return 0;
}

const struct export_writer export_csv = {
    "csv", "csv", 0, 0, csv_begin, csv_can, csv_other, csv_end,
};

/* ---- csv-wide ---------------------------------------------------------------------------- */

struct wide {
    int16_t col[256];              /* channel -> column, -1 when it has none */
    char commas[256];
};

static int put_name(struct export_ctx *x, uint8_t ch)
{
    const char *n = x->ifname[ch];

    if (!*n)
        return fprintf(x->out, ",can%u", (unsigned)ch) > 0 ? 0 : -1;
    if (!strpbrk(n, ",\""))
        return fprintf(x->out, ",%s", n) > 0 ? 0 : -1;
    if (fputs(",\"", x->out) == EOF)      /* RFC 4180 quoting; names are whole */
        return -1;
    for (; *n; n++)
        if ((*n == '"' && fputc('"', x->out) == EOF) || fputc(*n, x->out) == EOF)
            return -1;
    return fputc('"', x->out) == EOF ? -1 : 0;
}

static int wide_begin(struct export_ctx *x)
{
    struct wide *w = malloc(sizeof *w);

    if (!w)
        return -1;
    x->priv = w;
    memset(w->commas, ',', sizeof w->commas);
    for (unsigned i = 0; i < 256; i++)
        w->col[i] = -1;
    if (export_write(x, "timestamp", 9))
        return -1;
    for (unsigned i = 0; i < x->n_wide_cols; i++) {
        w->col[x->wide_cols[i]] = (int16_t)i;
        if (put_name(x, x->wide_cols[i]))
            return -1;
    }
    return export_write(x, "\n", 1);
}

static int wide_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    (void)x;
    (void)r;
    (void)c;
    return 0;   /* not in this layout; the caller counts it */
}

static int put_commas(struct export_ctx *x, unsigned n)
{
    const struct wide *w = x->priv;

    return export_write(x, w->commas, n);
}

/* A SAMPLE's bytes as a CSV cell: text when they are printable ASCII but for a trailing
 * line ending (dropped), else every byte in hex, a trailing 0a or 0d0a included. */
static int put_sample(struct export_ctx *x, const uint8_t *b, size_t n)
{
    int quote = 0;
    size_t i, all = n;

    if (n && b[n - 1] == '\n')
        n--;
    if (n && b[n - 1] == '\r')
        n--;
    for (i = 0; i < n; i++) {
        if (b[i] < 0x20 || b[i] > 0x7E)
            break;
        if (b[i] == ',' || b[i] == '"')
            quote = 1;
    }
    if (n && i == n && !quote)
        return export_write(x, b, n);
    if (n && i == n) {
        if (fputc('"', x->out) == EOF)
            return -1;
        for (i = 0; i < n; i++)
            if ((b[i] == '"' && fputc('"', x->out) == EOF) || fputc(b[i], x->out) == EOF)
                return -1;
        return fputc('"', x->out) == EOF ? -1 : 0;
    }
    if (export_write(x, "0x", 2))
        return -1;
    for (i = 0; i < all; i++) {
        char h[2] = { "0123456789abcdef"[b[i] >> 4], "0123456789abcdef"[b[i] & 0xF] };
        if (export_write(x, h, 2))
            return -1;
    }
    return 0;
}

static int wide_other(struct export_ctx *x, const struct sf_rec *r)
{
    struct wide *w = x->priv;
    char t[40], *p = t;
    int col = w->col[r->channel];

    if (col < 0 || (r->type != SF_REC_SAMPLE && r->type != SF_REC_LATENCY) ||
        (r->type == SF_REC_LATENCY && r->length < 8))
        return 0;
    p = export_put_time(x, p, r->ts);
    if (export_write(x, t, (size_t)(p - t)) || put_commas(x, (unsigned)col + 1))
        return -1;
    if (r->type == SF_REC_SAMPLE) {
        if (put_sample(x, r->body, r->length))
            return -1;
    } else {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
            v = v << 8 | r->body[i];
        p = t;
        if ((int64_t)v < 0) {
            *p++ = '-';
            v = (uint64_t)0 - v;
        }
        p = export_put_dec(p, v, 1);
        if (export_write(x, t, (size_t)(p - t)))
            return -1;
    }
    if (put_commas(x, x->n_wide_cols - (unsigned)col - 1) || export_write(x, "\n", 1))
        return -1;
    x->written++;
    return 1;
}

static int wide_end(struct export_ctx *x)
{
    free(x->priv);
    x->priv = NULL;
    return 0;
}

const struct export_writer export_csv_wide = {
    "csv-wide", "csv", 1, 0, wide_begin, wide_can, wide_other, wide_end,
};
