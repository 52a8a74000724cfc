/* JSON string escaping and key/value helpers for the CLI's --json output. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "json.h"

#include <inttypes.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not valid. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n, i;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

void json_str(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', out);
    while (*p) {
        int n;
        switch (*p) {
        case '"':  fputs("\\\"", out); p++; continue;
        case '\\': fputs("\\\\", out); p++; continue;
        case '\n': fputs("\\n", out); p++; continue;
        case '\r': fputs("\\r", out); p++; continue;
        case '\t': fputs("\\t", out); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7F) {
            fprintf(out, "\\u%04x", *p);
            p++;
            continue;
        }
        n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        fwrite(p, 1, (size_t)n, out);
        p += n;
    }
    fputc('"', out);
}

static void key(FILE *out, int *first, const char *k)
{
    if (!*first)
        fputs(", ", out);
    *first = 0;
    json_str(out, k);
    fputs(": ", out);
}

void json_kv_str(FILE *out, int *first, const char *k, const char *value)
{
    key(out, first, k);
    json_str(out, value);
}

void json_kv_u64(FILE *out, int *first, const char *k, uint64_t value)
{
    key(out, first, k);
    fprintf(out, "%" PRIu64, value);
}

void json_kv_i64(FILE *out, int *first, const char *k, int64_t value)
{
    key(out, first, k);
    fprintf(out, "%" PRId64, value);
}

void json_kv_bool(FILE *out, int *first, const char *k, int value)
{
    key(out, first, k);
    fputs(value ? "true" : "false", out);
}
