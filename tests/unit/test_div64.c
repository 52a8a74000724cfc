/* util/div64.h: sf_udivmod64_soft, the 64-by-32-bit division 32-bit targets use instead of
 * libgcc's, must agree with the C operators on quotient and remainder for every dividend
 * width (hardware-divide path below 2^32, bit-serial loop above) and divisors from 1 to
 * 2^32-1, including remainders whose doubling overflows 32 bits. */
#include <stdint.h>
#include "check.h"
#include "util/div64.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)                 /* xorshift64*, fixed seed */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

static int agree(uint64_t n, uint32_t d)
{
    uint32_t r = 0xDEADBEEFu;
    uint64_t q = sf_udivmod64_soft(n, d, &r);
    if (q != n / d || r != n % d) {
        fprintf(stderr, "%" PRIu64 " / %" PRIu32 ": got %" PRIu64 " r %" PRIu32
                ", want %" PRIu64 " r %" PRIu64 "\n", n, d, q, r, n / d, n % d);
        return 0;
    }
    return sf_udivmod64_soft(n, d, NULL) == q;
}

int main(void)
{
    static const uint64_t ns[] = {
        0, 1, 9, 10, 0xFFFFFFFFu, 0x100000000u, 0x100000001u, 86400000ull * 50000,
        0x7FFFFFFFFFFFFFFFu, 0x8000000000000000u, UINT64_MAX, UINT64_MAX - 1,
    };
    static const uint32_t ds[] = {
        1, 2, 3, 10, 63, 255 * 63, 512, 4096, 86400000u, 0x7FFFFFFFu, 0x80000000u,
        0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu,
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof ds / sizeof ds[0]; j++)
            bad += !agree(ns[i], ds[j]);
    CHECK_EQ(bad, 0);

    /* random dividends of every width against random divisors of every width */
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t n = rng() >> (rng() % 64);
        uint32_t d = (uint32_t)(rng() >> (32 + rng() % 32));
        if (!d)
            d = 1;
        bad += !agree(n, d);
    }
    CHECK_EQ(bad, 0);

    /* the wrappers the core calls */
    uint32_t r;
    CHECK_EQ(sf_udivmod64(12345678901234ull, 10, &r), 1234567890123ull);
    CHECK_EQ(r, 4);
    CHECK_EQ(sf_udiv64(UINT64_MAX, 0xFFFFFFFFu), 0x100000001ull);
    CHECK_EQ(sf_umod64(0x100000005ull, 0x100u), 5);
    TEST_END();
}
