/* Little-endian load/store of on-disk fields, byte by byte: no casts of packed structs, no
 * alignment assumptions, the same result on big-endian hosts. */
#ifndef SF_UTIL_LE_H
#define SF_UTIL_LE_H

#include <stdint.h>
#include "util/inline.h"

/* Loads always inline: each is one load on a Cortex-M (unaligned access is allowed), smaller
 * than the call -Os would otherwise make to an out-of-line copy in every object file (about
 * 300 bytes of the read-only set). Stores are left to the compiler: forced inline, mkfs
 * (which writes many fields) grew by about 500 bytes. */
SF_ALWAYS_INLINE uint16_t ld_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

SF_ALWAYS_INLINE uint32_t ld_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

SF_ALWAYS_INLINE uint64_t ld_le64(const uint8_t *p)
{
    return (uint64_t)ld_le32(p) | (uint64_t)ld_le32(p + 4) << 32;
}

static inline void st_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void st_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void st_le64(uint8_t *p, uint64_t v)
{
    st_le32(p, (uint32_t)v);
    st_le32(p + 4, (uint32_t)(v >> 32));
}

#endif
