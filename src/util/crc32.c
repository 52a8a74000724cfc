/* CRC-32 (IEEE) with a 16-entry nibble table: 64 bytes of table, two lookups per byte.
 * GPT checksums a few sectors at mount and mkfs, so speed does not matter here. */
#include "util/crc32.h"

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
    0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

uint32_t sf_crc32(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= b[i];
        crc = (crc >> 4) ^ crc_nibble[crc & 0xF];
        crc = (crc >> 4) ^ crc_nibble[crc & 0xF];
    }
    return ~crc;
}
