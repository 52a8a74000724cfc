/* The report line builder (report.h). */
#include "report.h"

char *rp_u64(char *t, uint64_t v)
{
    uint32_t i = RP_U64_CHARS - 1u;
    t[i] = '\0';
#if UINTPTR_MAX > 0xffffffffu && !defined(RP_U64_SPLIT32)
    /* a 64-bit core divides 64-bit words in hardware (RP_U64_SPLIT32: the 32-bit way
     * anyway, for tests/unit/test_report.c on the host) */
    do {
        t[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
#else
    /* Digits from the right, v / 10 in 32-bit steps: the high word, then the low word in two
     * 16-bit halves, each with the remainder of the step before on top (below 10 << 16, so
     * it fits). Cortex-M3/M4 divide 32-bit words in hardware: no libgcc call. */
    uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
    do {
        uint32_t r = hi % 10u, m, l;
        hi /= 10u;
        m = r << 16 | lo >> 16;
        r = m % 10u;
        l = r << 16 | (lo & 0xffffu);
        lo = (m / 10u) << 16 | l / 10u;
        t[--i] = (char)('0' + l % 10u);
    } while (hi | lo);
#endif
    return t + i;
}

char *rp_hex(char *t, uint64_t v)
{
    uint32_t i = RP_HEX_CHARS - 1u;
    t[i] = '\0';
    do {
        t[--i] = "0123456789abcdef"[v & 15u];
        v >>= 4;
    } while (v);
    t[--i] = 'x';
    t[--i] = '0';
    return t + i;
}

void rp_add(struct rp_line *l, const char *s)
{
    while (*s && l->n < sizeof l->buf - 2)
        l->buf[l->n++] = *s++;
}

void rp_add_u64(struct rp_line *l, uint64_t v)
{
    char t[RP_U64_CHARS];
    rp_add(l, rp_u64(t, v));
}

void rp_add_i(struct rp_line *l, int v)
{
    if (v < 0) {
        rp_add(l, "-");
        rp_add_u64(l, (uint64_t)-(int64_t)v);
    } else {
        rp_add_u64(l, (uint64_t)v);
    }
}

void rp_add_hex(struct rp_line *l, uint64_t v)
{
    char t[RP_HEX_CHARS];
    rp_add(l, rp_hex(t, v));
}

void rp_flush(struct rp_line *l)
{
    l->buf[l->n++] = '\n';
    l->buf[l->n] = '\0';
    report_puts(l->buf);
    l->n = 0;
}
