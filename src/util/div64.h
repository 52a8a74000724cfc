/* 64-bit by 32-bit unsigned division for the core.
 *
 * A Cortex-M has a 32-bit hardware divide only: `n / d` on a uint64_t there links libgcc's
 * __aeabi_uldivmod and __udivmoddi4, about 900 bytes of flash for a handful of divisions
 * by sector sizes, cluster sizes, cache sizes and 10. Every such division in the core
 * divides by a 32-bit quantity, so it goes through sf_udivmod64 instead: the plain
 * operators on 64-bit hosts (identical code there), and on 32-bit targets the hardware
 * divide when the dividend fits 32 bits (sector numbers on any card below 2 TiB) or a
 * bit-serial loop of a few dozen bytes when it does not. d must not be 0. */
#ifndef SF_UTIL_DIV64_H
#define SF_UTIL_DIV64_H

#include <stdint.h>

/* n / d, and n % d in *rem when rem is not NULL; always out of line (the tests call it on
 * hosts to check it against the operators). */
uint64_t sf_udivmod64_soft(uint64_t n, uint32_t d, uint32_t *rem);

#if UINTPTR_MAX > 0xFFFFFFFFu
static inline uint64_t sf_udivmod64(uint64_t n, uint32_t d, uint32_t *rem)
{
    if (rem)
        *rem = (uint32_t)(n % d);
    return n / d;
}
#else
#define sf_udivmod64 sf_udivmod64_soft
#endif

static inline uint64_t sf_udiv64(uint64_t n, uint32_t d)
{
    return sf_udivmod64(n, d, 0);
}

static inline uint32_t sf_umod64(uint64_t n, uint32_t d)
{
    uint32_t r;
    sf_udivmod64(n, d, &r);
    return r;
}

#endif
