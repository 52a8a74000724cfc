/* sf_udivmod64_soft: 64-by-32-bit division with 32-bit operations only (util/div64.h says
 * why). The high word divides with the hardware divide; its remainder r < d then takes the
 * low word's 32 bits one at a time (restoring division), r staying below d throughout. */
#include "util/div64.h"

uint64_t sf_udivmod64_soft(uint64_t n, uint32_t d, uint32_t *rem)
{
    uint32_t hi = (uint32_t)(n >> 32), lo = (uint32_t)n;
    uint32_t qlo = 0, r;

    if (!hi) {
        if (rem)
            *rem = lo % d;
        return lo / d;
    }
    r = hi % d;
    for (int i = 31; i >= 0; i--) {
        /* 2r + bit may exceed 32 bits; it is then >= d (d < 2^32), and the wrapped
         * subtraction gives the right remainder, below d again. */
        uint32_t carry = r >> 31;
        r = r << 1 | (lo >> i & 1u);
        qlo <<= 1;
        if (carry || r >= d) {
            r -= d;
            qlo |= 1;
        }
    }
    if (rem)
        *rem = r;
    return (uint64_t)(hi / d) << 32 | qlo;
}
