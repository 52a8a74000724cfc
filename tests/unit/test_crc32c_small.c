/* The SF_SMALL_TABLES CRC-32C (bare metal's default: a 16-entry table, a nibble at a time)
 * must compute the same function as the host's paths. The file is compiled here a second
 * time with SF_SMALL_TABLES and without the run-time dispatch, under another name, and
 * checked against a bitwise reference and the library's sf_crc32c. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "crc32c_ref.h"
#include "streamfat/rec.h"

uint32_t crc_small(uint32_t crc, const void *p, size_t n);

#define SF_SMALL_TABLES 1
#define SF_NO_CRC32C_DISPATCH 1
#define sf_crc32c crc_small
#include "../../src/util/crc32c.c"
#undef sf_crc32c

int main(void)
{
    static uint8_t buf[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    CHECK_EQ(crc_small(0, "123456789", 9), 0xE3069283u);   /* the standard check value */
    CHECK_EQ(crc_small(0, "", 0), 0);
    int bad = 0;
    for (size_t al = 0; al < 8; al++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t want = crc_bitwise(0, buf + al, n);
            size_t cut = n / 3;
            if (crc_small(0, buf + al, n) != want ||
                crc_small(crc_small(0, buf + al, cut), buf + al + cut, n - cut) != want ||
                sf_crc32c(0, buf + al, n) != want)
                bad++;
        }
    CHECK_EQ(bad, 0);
    CHECK_EQ(crc_small(0, buf, sizeof buf), sf_crc32c(0, buf, sizeof buf));
    TEST_END();
}
