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

#endif
