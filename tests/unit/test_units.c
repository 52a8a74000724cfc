/* Command-line units (cli/common/units.c): sizes, rates and durations exactly per the units
 * table, and refusal of garbage, signs, overflow and inexact fractions. The CLI is not
 * part of the library, so its source is compiled in here. */
#include "check.h"
#include "../../cli/common/units.c"

static uint64_t size_ok(const char *s)
{
    uint64_t v = 0xDEAD;
    const char *why = "";
    int err = units_parse_size(s, &v, &why);
    if (err)
        fprintf(stderr, "size '%s' refused: %s\n", s, why);
    CHECK_EQ(err, 0);
    return v;
}

static int size_bad(const char *s)
{
    uint64_t v = 0xDEAD;
    const char *why = NULL;
    int err = units_parse_size(s, &v, &why);
    CHECK(why != NULL && why[0] != '\0');
    CHECK_EQ(v, 0xDEAD);
    return err == -1;
}

static uint64_t rate_ok(const char *s)
{
    uint64_t v = 0;
    const char *why = "";
    CHECK_EQ(units_parse_rate(s, &v, &why), 0);
    return v;
}

static int rate_bad(const char *s)
{
    uint64_t v;
    const char *why = NULL;
    int err = units_parse_rate(s, &v, &why);
    CHECK(why != NULL && why[0] != '\0');
    return err == -1;
}

static uint64_t dur_ok(const char *s)
{
    uint64_t v = 0;
    const char *why = "";
    CHECK_EQ(units_parse_duration(s, &v, &why), 0);
    return v;
}

static int dur_bad(const char *s)
{
    uint64_t v;
    const char *why = NULL;
    int err = units_parse_duration(s, &v, &why);
    CHECK(why != NULL && why[0] != '\0');
    return err == -1;
}

int main(void)
{
    char buf[32];
    const uint64_t Ki = 1024, Mi = Ki * Ki, Gi = Mi * Ki, Ti = Gi * Ki;

    /* Sizes: plain bytes, binary K M G T and KiB.., decimal KB.. */
    CHECK_EQ(size_ok("0"), 0);
    CHECK_EQ(size_ok("4096"), 4096);
    CHECK_EQ(size_ok("512B"), 512);
    CHECK_EQ(size_ok("256M"), 256 * Mi);
    CHECK_EQ(size_ok("256MiB"), 256 * Mi);
    CHECK_EQ(size_ok("4K"), 4096);
    CHECK_EQ(size_ok("4KiB"), 4096);
    CHECK_EQ(size_ok("1G"), Gi);
    CHECK_EQ(size_ok("2GiB"), 2 * Gi);
    CHECK_EQ(size_ok("3T"), 3 * Ti);
    CHECK_EQ(size_ok("3TiB"), 3 * Ti);
    CHECK_EQ(size_ok("120GB"), 120000000000ull);
    CHECK_EQ(size_ok("1KB"), 1000);
    CHECK_EQ(size_ok("5MB"), 5000000);
    CHECK_EQ(size_ok("2TB"), 2000000000000ull);
    CHECK_EQ(size_ok("1.5G"), Gi + Gi / 2);
    CHECK_EQ(size_ok("1.5K"), 1536);
    CHECK_EQ(size_ok("0.5KB"), 500);
    CHECK_EQ(size_ok("1.25MB"), 1250000);
    CHECK_EQ(size_ok("007"), 7);
    CHECK_EQ(size_ok("1.000000000000000000000000000000K"), 1024);
    CHECK_EQ(size_ok("18446744073709551615"), UINT64_MAX);
    CHECK_EQ(size_ok("16777215.5T"), 18446743523953737728ull);
    CHECK_EQ(size_ok("15T"), 15 * Ti);

    CHECK(size_bad(""));
    CHECK(size_bad("M"));
    CHECK(size_bad("-1"));
    CHECK(size_bad("-1M"));
    CHECK(size_bad("+1"));
    CHECK(size_bad(" 1"));
    CHECK(size_bad("1 "));
    CHECK(size_bad("1 M"));
    CHECK(size_bad("12X"));
    CHECK(size_bad("1m"));        /* case matters: m is minutes elsewhere */
    CHECK(size_bad("1Mi"));
    CHECK(size_bad("1MiBs"));
    CHECK(size_bad("1M/s"));
    CHECK(size_bad("0x10"));
    CHECK(size_bad("1e6"));
    CHECK(size_bad("."));
    CHECK(size_bad("1.5"));       /* 1.5 bytes */
    CHECK(size_bad("0.1K"));      /* 102.4 bytes */
    CHECK(size_bad("18446744073709551616"));
    CHECK(size_bad("16777216T"));
    CHECK(size_bad("99999999999999999999999"));
    CHECK(size_bad("1.00000000000000000001K"));

    /* Rates: decimal KB/s.., binary KiB/s.. */
    CHECK_EQ(rate_ok("500MB/s"), 500000000ull);
    CHECK_EQ(rate_ok("500MiB/s"), 500 * Mi);
    CHECK_EQ(rate_ok("1KB/s"), 1000);
    CHECK_EQ(rate_ok("1KiB/s"), 1024);
    CHECK_EQ(rate_ok("2GB/s"), 2000000000ull);
    CHECK_EQ(rate_ok("2GiB/s"), 2 * Gi);
    CHECK_EQ(rate_ok("100B/s"), 100);
    CHECK_EQ(rate_ok("1.5MB/s"), 1500000);
    CHECK(rate_bad("500"));
    CHECK(rate_bad("500M"));
    CHECK(rate_bad("500M/s"));
    CHECK(rate_bad("500MB"));
    CHECK(rate_bad("500mb/s"));
    CHECK(rate_bad("-5MB/s"));
    CHECK(rate_bad("MB/s"));
    CHECK(rate_bad("0.0001B/s"));
    CHECK(rate_bad("99999999999TB/s"));

    /* Durations in nanoseconds: bare = seconds. */
    CHECK_EQ(dur_ok("1"), 1000000000ull);
    CHECK_EQ(dur_ok("1.5"), 1500000000ull);
    CHECK_EQ(dur_ok("200ms"), 200000000ull);
    CHECK_EQ(dur_ok("10s"), 10000000000ull);
    CHECK_EQ(dur_ok("10m"), 600000000000ull);
    CHECK_EQ(dur_ok("2h"), 7200000000000ull);
    CHECK_EQ(dur_ok("0.5ms"), 500000ull);
    CHECK_EQ(dur_ok("0.000000001"), 1);
    CHECK_EQ(dur_ok("0"), 0);
    CHECK_EQ(dur_ok("1.25h"), 4500000000000ull);
    CHECK(dur_bad(""));
    CHECK(dur_bad("s"));
    CHECK(dur_bad("-1"));
    CHECK(dur_bad("1d"));
    CHECK(dur_bad("1 s"));
    CHECK(dur_bad("10M"));        /* M is mebi for sizes, not minutes */
    CHECK(dur_bad("0.0000000001"));
    CHECK(dur_bad("18446744073709551615h"));
    CHECK(dur_bad("5124096h"));   /* > 2^64 ns */
    CHECK_EQ(dur_ok("5124095h"), 5124095ull * 3600 * 1000000000ull);

    /* Formatting for messages. */
    CHECK(strcmp(units_format_size(0, buf, sizeof buf), "0 B") == 0);
    CHECK(strcmp(units_format_size(1023, buf, sizeof buf), "1023 B") == 0);
    CHECK(strcmp(units_format_size(4095, buf, sizeof buf), "4.0 KiB") == 0);
    CHECK(strcmp(units_format_size(64 * Mi, buf, sizeof buf), "64 MiB") == 0);
    CHECK(strcmp(units_format_size(Gi + Gi / 2, buf, sizeof buf), "1.5 GiB") == 0);
    CHECK(strcmp(units_format_size(UINT64_MAX, buf, sizeof buf), "16.0 EiB") == 0);

    /* Plain counts (cli_parse_uint): the bound holds for every digit, also one above max
     * (with max 1, "2" was taken: max - 2 wrapped around) */
    uint64_t n = 0xDEAD;
    CHECK(cli_parse_uint("2", 1, &n) == -1 && n == 0xDEAD);
    CHECK(cli_parse_uint("9", 8, &n) == -1 && n == 0xDEAD);
    CHECK(cli_parse_uint("1", 0, &n) == -1 && n == 0xDEAD);
    CHECK(cli_parse_uint("0", 0, &n) == 0 && n == 0);
    CHECK(cli_parse_uint("1", 1, &n) == 0 && n == 1);
    CHECK(cli_parse_uint("10", 9, &n) == -1);
    CHECK(cli_parse_uint("9", 9, &n) == 0 && n == 9);
    CHECK(cli_parse_uint("255", 255, &n) == 0 && n == 255);
    CHECK(cli_parse_uint("256", 255, &n) == -1);
    CHECK(cli_parse_uint("18446744073709551615", UINT64_MAX, &n) == 0 && n == UINT64_MAX);
    CHECK(cli_parse_uint("18446744073709551616", UINT64_MAX, &n) == -1);
    CHECK(cli_parse_uint("", 10, &n) == -1);
    CHECK(cli_parse_uint("1a", 10, &n) == -1);
    CHECK(cli_parse_uint("-1", 10, &n) == -1);

    TEST_END();
}
