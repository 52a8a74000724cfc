/* The CRC-32C by its definition, a bit at a time (reflected polynomial 0x82F63B78): the
 * reference the unit tests hold the library's table and instruction paths against. */
#ifndef SF_TEST_CRC32C_REF_H
#define SF_TEST_CRC32C_REF_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#endif
