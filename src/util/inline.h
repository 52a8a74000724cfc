/* Inlining hints of the core, for code size on a Cortex-M at -Os (each use was checked with
 * arm-none-eabi-nm on the scripts/size.sh build). Empty for compilers without GNU
 * attributes: the code is correct either way. */
#ifndef SF_UTIL_INLINE_H
#define SF_UTIL_INLINE_H

#if defined(__GNUC__)
/* A static function that -Os would inline into each caller where one call is smaller (never
 * on the logger's producer paths: their speed comes first). */
#define SF_NOINLINE __attribute__((noinline))
/* A tiny helper (one load) that -Os would otherwise keep out of line in every object. */
#define SF_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define SF_NOINLINE
#define SF_ALWAYS_INLINE static inline
#endif
/* An out-of-line step of a producer path, reached by a tail call with the caller's
 * arguments: GCC must not clone it with a constant argument folded in, as the clone's
 * shorter argument list turns its own tail calls into calls that save registers. */
#if defined(__GNUC__) && !defined(__clang__)
#define SF_TAIL_STEP __attribute__((noinline, noclone))
#else
#define SF_TAIL_STEP SF_NOINLINE
#endif

#endif
