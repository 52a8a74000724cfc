/* Plain CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as GPT headers and entry
 * arrays use it. Not CRC32C: the record format has its own. */
#ifndef SF_UTIL_CRC32_H
#define SF_UTIL_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC of n bytes continuing from crc (0 to start): sf_crc32(sf_crc32(0, a, n), b, m) is the
 * CRC of a followed by b. "123456789" gives 0xCBF43926. */
uint32_t sf_crc32(uint32_t crc, const void *p, size_t n);

#endif
