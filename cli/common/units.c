/* Sizes, rates and durations on the command line (see units.h for the grammar).
 *
 * A number is split into its integer part I and its fraction F / 10^d; the value in base
 * units is I * mult + F * mult / 10^d, which must be a whole number. Both terms are
 * computed exactly in 64 bits (the fraction after reducing F / 10^d), so "1.5K" is 1536
 * and "0.1K" (102.4 bytes) is refused instead of rounded. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "units.h"

#include <stdio.h>
#include <string.h>

struct suffix {
    const char *text;
    uint64_t mult;
};

#define KI 1024ull
#define KD 1000ull

static const struct suffix size_suffixes[] = {
    { "", 1 }, { "B", 1 },
    { "K", KI }, { "M", KI * KI }, { "G", KI * KI * KI }, { "T", KI * KI * KI * KI },
    { "KiB", KI }, { "MiB", KI * KI }, { "GiB", KI * KI * KI }, { "TiB", KI * KI * KI * KI },
    { "KB", KD }, { "MB", KD * KD }, { "GB", KD * KD * KD }, { "TB", KD * KD * KD * KD },
    { NULL, 0 },
};

static const struct suffix rate_suffixes[] = {
    { "B/s", 1 },
    { "KB/s", KD }, { "MB/s", KD * KD }, { "GB/s", KD * KD * KD }, { "TB/s", KD * KD * KD * KD },
    { "KiB/s", KI }, { "MiB/s", KI * KI }, { "GiB/s", KI * KI * KI },
    { "TiB/s", KI * KI * KI * KI },
    { NULL, 0 },
};

#define NS_PER_S 1000000000ull
static const struct suffix duration_suffixes[] = {
    /* us (and µs) because messages offer them: latency:PERIOD "from 10us" (issue 26) */
    { "", NS_PER_S }, { "s", NS_PER_S }, { "ms", 1000000ull }, { "us", 1000ull },
    { "\xc2\xb5s", 1000ull },
    { "m", 60 * NS_PER_S }, { "h", 3600 * NS_PER_S },
    { NULL, 0 },
};

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Parse "digits[.digits]" at s; *end gets the first byte after it. */
static int parse_number(const char *s, const char **end, uint64_t *ip, uint64_t *frac,
                        uint64_t *frac_den, const char **why)
{
    const char *p = s;
    uint64_t i = 0, f = 0, den = 1;
    int digits = 0, frac_digits = 0, pending_zeros = 0;

    if (*p == '-') {
        *why = "negative values are not allowed";
        return -1;
    }
    if (*p == '+' || *p == ' ' || *p == '\t') {
        *why = "expected a number";
        return -1;
    }
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        unsigned d = (unsigned)(*p - '0');
        if (i > (UINT64_MAX - d) / 10) {
            *why = "value too large";
            return -1;
        }
        i = i * 10 + d;
    }
    if (*p == '.') {
        p++;
        /* Trailing zeros of the fraction change nothing: count them and apply them only
         * when a non-zero digit follows, so "1.50000000000000000000" still parses. */
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            unsigned d = (unsigned)(*p - '0');
            if (d == 0) {
                pending_zeros++;
                continue;
            }
            if (frac_digits + pending_zeros + 1 > 19) {
                *why = "too many decimal places";
                return -1;
            }
            for (; pending_zeros; pending_zeros--, frac_digits++) {
                f *= 10;
                den *= 10;
            }
            f = f * 10 + d;
            den *= 10;
            frac_digits++;
        }
    }
    if (digits == 0) {
        *why = "expected a number";
        return -1;
    }
    *end = p;
    *ip = i;
    *frac = f;
    *frac_den = den;
    return 0;
}

static int parse_with(const char *s, const struct suffix *tab, uint64_t *out,
                      const char **why, const char *bad_suffix_why)
{
    const char *rest;
    uint64_t ip, f, den, mult = 0, v;
    const struct suffix *sx;

    if (s == NULL || *s == '\0') {
        *why = "empty value";
        return -1;
    }
    if (parse_number(s, &rest, &ip, &f, &den, why))
        return -1;
    for (sx = tab; sx->text; sx++) {
        if (strcmp(rest, sx->text) == 0) {
            mult = sx->mult;
            break;
        }
    }
    if (mult == 0) {
        *why = bad_suffix_why;
        return -1;
    }
    if (ip > UINT64_MAX / mult) {
        *why = "value too large";
        return -1;
    }
    v = ip * mult;
    if (f) {
        /* f / den in lowest terms; f * mult / den is whole iff den divides mult. */
        uint64_t g = gcd64(f, den), fr;
        f /= g;
        den /= g;
        if (mult % den) {
            *why = tab == duration_suffixes ? "finer than a nanosecond"
                                            : "not a whole number of bytes";
            return -1;
        }
        mult /= den;
        if (f > UINT64_MAX / mult) {
            *why = "value too large";
            return -1;
        }
        fr = f * mult;
        if (v > UINT64_MAX - fr) {
            *why = "value too large";
            return -1;
        }
        v += fr;
    }
    *out = v;
    return 0;
}

int units_parse_size(const char *s, uint64_t *out, const char **why)
{
    return parse_with(s, size_suffixes, out, why,
                      "unknown unit (use bytes, K M G T, KiB MiB GiB TiB or KB MB GB TB)");
}

int units_parse_rate(const char *s, uint64_t *bytes_per_s, const char **why)
{
    return parse_with(s, rate_suffixes, bytes_per_s, why,
                      "unknown unit (use B/s, KB/s MB/s GB/s TB/s or KiB/s MiB/s GiB/s TiB/s)");
}

int units_parse_duration(const char *s, uint64_t *ns, const char **why)
{
    return parse_with(s, duration_suffixes, ns, why,
                      "unknown unit (use a number of seconds, or us, ms, s, m, h)");
}

char *units_format_size(uint64_t bytes, char *buf, unsigned n)
{
    static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    unsigned u = 0;
    uint64_t unit = 1;

    while (u + 1 < sizeof names / sizeof names[0] && bytes / unit >= 1024) {
        unit *= 1024;
        u++;
    }
    if (bytes % unit == 0)
        snprintf(buf, n, "%llu %s", (unsigned long long)(bytes / unit), names[u]);
    else
        snprintf(buf, n, "%.1f %s", (double)bytes / (double)unit, names[u]);
    return buf;
}

/* cli.h: a non-negative decimal integer no larger than max. v * 10 + d <= max is
 * v <= (max - d) / 10, which needs d <= max first: with max 1, "2" passed when
 * max - d wrapped around. */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        uint64_t d = (uint64_t)(*s - '0');
        if (d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
