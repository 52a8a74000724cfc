/* examples/common/report.c, the firmware examples' report line builder, on the host: rp_u64
 * (its 32-bit-word division, RP_U64_SPLIT32, as on the Cortex-M cores) and rp_hex against
 * printf for the edges and seeded random values of every magnitude; rp_add_i at INT_MIN;
 * rp_flush's newline and reset; a line longer than the buffer is cut, never overrun. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <limits.h>
#include "check.h"

#define RP_U64_SPLIT32
#include "../../examples/common/report.c"

static char printed[512];
static int nprinted;

void report_puts(const char *s)
{
    snprintf(printed, sizeof printed, "%s", s);
    nprinted++;
}

int main(void)
{
    static const uint64_t edge[] = {
        0, 1, 9, 10, 99, 100, 65535, 65536, 655359, 655360, 999999999, 1000000000,
        4294967295u, 4294967296u, 42949672950u, 42949672959u, 10000000000000000000u,
        9999999999999999999u, UINT64_MAX - 1, UINT64_MAX,
    };
    uint64_t seed = 0x5eed2026u;
    char want[32], got[RP_U64_CHARS], hex[RP_HEX_CHARS];

    printf("seed %" PRIu64 "\n", seed);
    for (unsigned k = 0; k < 200000; k++) {
        uint64_t v;
        if (k < sizeof edge / sizeof edge[0]) {
            v = edge[k];
        } else {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            v = seed >> (seed >> 58);           /* every magnitude from 64 bits down */
        }
        snprintf(want, sizeof want, "%" PRIu64, v);
        const char *d = rp_u64(got, v);
        if (strcmp(d, want) != 0) {
            fprintf(stderr, "rp_u64(%s) gave %s (seed %" PRIu64 ", k %u)\n", want, d, seed, k);
            CHECK(0);
            break;
        }
        CHECK(d >= got && d + strlen(d) == got + RP_U64_CHARS - 1);
        snprintf(want, sizeof want, "0x%" PRIx64, v);
        const char *h = rp_hex(hex, v);
        if (strcmp(h, want) != 0) {
            fprintf(stderr, "rp_hex(%s) gave %s (seed %" PRIu64 ", k %u)\n", want, h, seed, k);
            CHECK(0);
            break;
        }
    }

    struct rp_line l = { .n = 0 };
    rp_add(&l, "x: ");
    rp_add_i(&l, INT_MIN);
    rp_add(&l, " ");
    rp_add_i(&l, 7);
    rp_add(&l, " ");
    rp_add_u64(&l, UINT64_MAX);
    rp_add(&l, " ");
    rp_add_hex(&l, 0xd00dfeedu);
    rp_flush(&l);
    CHECK_EQ(nprinted, 1);
    CHECK(strcmp(printed, "x: -2147483648 7 18446744073709551615 0xd00dfeed\n") == 0);
    CHECK_EQ(l.n, 0);

    /* 400 characters into a 160-byte line: 158 kept, then "\n" and the NUL */
    for (int i = 0; i < 40; i++)
        rp_add(&l, "0123456789");
    CHECK_EQ(l.n, sizeof l.buf - 2);
    rp_flush(&l);
    CHECK_EQ(strlen(printed), sizeof l.buf - 1);
    CHECK(printed[sizeof l.buf - 2] == '\n');
    TEST_END();
}
