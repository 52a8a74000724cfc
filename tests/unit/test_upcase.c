/* The built-in up-case table: compressed form expands to the lookup, known mappings,
 * checksum. */
#include "check.h"
#include "util/upcase.h"
#include "util/le.h"

int main(void)
{
    static uint16_t full[65536];
    uint32_t n = 0, i = 0;

    while (i < sf_upcase_table_units) {
        uint16_t u = sf_upcase_table[i++];
        if (u == 0xFFFF) {
            REQUIRE(i < sf_upcase_table_units);
            uint32_t run = sf_upcase_table[i++];
            REQUIRE(n + run <= 65536);
            while (run--) {
                full[n] = (uint16_t)n;
                n++;
            }
        } else {
            REQUIRE(n < 65536);
            full[n++] = u;
        }
    }
    CHECK_EQ(n, 65536);
    uint32_t bad = 0;
    for (uint32_t c = 0; c < 65536; c++)
        if (full[c] != sf_upcase_builtin((uint16_t)c))
            bad++;
    CHECK_EQ(bad, 0);

    CHECK_EQ(sf_upcase_builtin('a'), 'A');
    CHECK_EQ(sf_upcase_builtin('z'), 'Z');
    CHECK_EQ(sf_upcase_builtin('A'), 'A');
    CHECK_EQ(sf_upcase_builtin('_'), '_');
    CHECK_EQ(sf_upcase_builtin(0xE9), 0xC9);     /* é */
    CHECK_EQ(sf_upcase_builtin(0xFC), 0xDC);     /* ü */
    CHECK_EQ(sf_upcase_builtin(0xFF), 0x178);    /* ÿ */
    CHECK_EQ(sf_upcase_builtin(0xDF), 0xDF);     /* ß: upper is "SS", not 1:1 */
    CHECK_EQ(sf_upcase_builtin(0x101), 0x100);   /* ā */
    CHECK_EQ(sf_upcase_builtin(0x100), 0x100);
    CHECK_EQ(sf_upcase_builtin(0x3B1), 0x391);   /* α */
    CHECK_EQ(sf_upcase_builtin(0x430), 0x410);   /* а */
    CHECK_EQ(sf_upcase_builtin(0xFF41), 0xFF21); /* fullwidth a */
    CHECK_EQ(sf_upcase_builtin(0x65E5), 0x65E5); /* 日 */
    CHECK_EQ(sf_upcase_builtin(0x672C), 0x672C); /* 本 */
    CHECK_EQ(sf_upcase_builtin(0xD800), 0xD800);
    CHECK_EQ(sf_upcase_builtin(0xFFFF), 0xFFFF);

    uint32_t sum = 0;
    for (i = 0; i < sf_upcase_table_units; i++) {
        uint8_t b[2];
        st_le16(b, sf_upcase_table[i]);
        sum = sf_exfat_sum32(sum, b, 2);
    }
    CHECK_EQ(sum, sf_upcase_table_checksum);
    TEST_END();
}
