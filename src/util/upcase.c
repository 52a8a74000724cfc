/* Built-in up-case lookup and the exFAT TableChecksum. The data lives in the generated
 * upcase_table.c (scripts/gen_upcase.py). */
#include "util/upcase.h"

/* Defined in upcase_table.c (scripts/gen_upcase.py): rows (lo, hi, delta, step), sorted by
 * lo and disjoint, packed into 4 bytes each plus a shared delta list: sf_upcase_lo[i] is
 * row i's lo, sf_upcase_row[i] holds hi - lo (bits 0-7), step 2 (bit 8) and the index of
 * its delta in sf_upcase_delta[] (bits 9-15). */
extern const uint16_t sf_upcase_lo[];
extern const uint16_t sf_upcase_row[];
extern const uint16_t sf_upcase_delta[];
extern const uint32_t sf_upcase_range_count;

uint16_t sf_upcase_builtin(uint16_t c)
{
    if (c < 0x80)                       /* the common case: ASCII */
        return (uint16_t)(c >= 'a' && c <= 'z' ? c - 32 : c);
    uint32_t lo = 0, hi = sf_upcase_range_count;
    while (lo < hi) {                   /* first row with lo > c */
        uint32_t mid = lo + (hi - lo) / 2;
        if (sf_upcase_lo[mid] <= c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return c;
    uint32_t off = (uint32_t)(c - sf_upcase_lo[lo - 1]), row = sf_upcase_row[lo - 1];
    if (off <= (row & 0xFFu) && !(off & (row >> 8 & 1u)))
        return (uint16_t)(c + sf_upcase_delta[row >> 9]);
    return c;
}

uint32_t sf_exfat_sum32(uint32_t sum, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + p[i];
    return sum;
}
