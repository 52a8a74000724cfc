/* Built-in up-case lookup and the exFAT TableChecksum. The data lives in the generated
 * upcase_table.c (scripts/gen_upcase.py). */
#include "util/upcase.h"

/* Defined in upcase_table.c: rows (lo, hi, delta mod 2^16, step), sorted by lo, disjoint. */
extern const uint16_t sf_upcase_ranges[][4];
extern const uint32_t sf_upcase_range_count;

uint16_t sf_upcase_builtin(uint16_t c)
{
    if (c < 0x80)                       /* the common case: ASCII */
        return (uint16_t)(c >= 'a' && c <= 'z' ? c - 32 : c);
    uint32_t lo = 0, hi = sf_upcase_range_count;
    while (lo < hi) {                   /* first row with lo > c */
        uint32_t mid = lo + (hi - lo) / 2;
        if (sf_upcase_ranges[mid][0] <= c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return c;
    const uint16_t *r = sf_upcase_ranges[lo - 1];
    if (c <= r[1] && (uint16_t)(c - r[0]) % r[3] == 0)
        return (uint16_t)(c + r[2]);
    return c;
}

uint32_t sf_exfat_sum32(uint32_t sum, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + p[i];
    return sum;
}
