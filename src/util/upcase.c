/* Built-in up-case lookup and the exFAT TableChecksum. The data lives in the generated
 * upcase_table.c (scripts/gen_upcase.py). */
#include "util/upcase.h"

/* Defined in upcase_table.c (scripts/gen_upcase.py). Rows of one code unit as sorted pairs
 * sf_upcase_one_from[i] -> sf_upcase_one_to[i]. Longer rows (lo, hi, delta, step), sorted
 * by lo and disjoint, packed into 4 bytes each plus a shared delta list: sf_upcase_lo[i] is
 * row i's lo, sf_upcase_row[i] holds hi - lo (bits 0-7), step 2 (bit 8) and the index of
 * its delta in sf_upcase_delta[] (bits 9-15). */
extern const uint16_t sf_upcase_one_from[];
extern const uint16_t sf_upcase_one_to[];
extern const uint32_t sf_upcase_one_count;
extern const uint16_t sf_upcase_lo[];
extern const uint16_t sf_upcase_row[];
extern const uint16_t sf_upcase_delta[];
extern const uint32_t sf_upcase_range_count;

/* How many of the n sorted keys are <= c. */
static uint32_t keys_upto(const uint16_t *keys, uint32_t n, uint16_t c)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] <= c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint16_t sf_upcase_builtin(uint16_t c)
{
    if (c < 0x80)                       /* the common case: ASCII */
        return (uint16_t)(c >= 'a' && c <= 'z' ? c - 32 : c);
    uint32_t i = keys_upto(sf_upcase_one_from, sf_upcase_one_count, c);
    if (i && sf_upcase_one_from[i - 1] == c)
        return sf_upcase_one_to[i - 1];
    i = keys_upto(sf_upcase_lo, sf_upcase_range_count, c);
    if (i == 0)
        return c;
    uint32_t off = (uint32_t)(c - sf_upcase_lo[i - 1]), row = sf_upcase_row[i - 1];
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
