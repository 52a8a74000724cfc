/* CRC-32C: sf_crc32c (declared for applications in streamfat/rec.h) and its internals. On
 * x86-64 built without -msse4.2, sf_crc32c picks the crc32 instruction or the tables at run
 * time (CRC32C_DISPATCH); the table path stays callable so the tests check it on CPUs that
 * have the instruction too. */
#ifndef SF_UTIL_CRC32C_H
#define SF_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The declaration of streamfat/rec.h repeated, so that util includes nothing from the
 * record codec above it (scripts/check_includes.py); src/log/rec.c includes both, so the
 * compiler checks they agree. */
uint32_t sf_crc32c(uint32_t crc, const void *p, size_t n);

/* Hosted builds only: a freestanding one may link without libgcc's CPU model. */
#if !defined(__SSE4_2__) && defined(__x86_64__) && defined(__GNUC__) && __STDC_HOSTED__ && \
    !defined(SF_NO_CRC32C_DISPATCH)
#define CRC32C_DISPATCH 1
/* The portable (table) CRC-32C, the same function as sf_crc32c. */
uint32_t sfu_crc32c_tables(uint32_t crc, const void *p, size_t n);
#else
#define CRC32C_DISPATCH 0
#endif

#endif
