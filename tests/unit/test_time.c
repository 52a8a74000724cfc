/* DOS/exFAT timestamp conversions against known values. */
#include "check.h"
#include "streamfat/sf.h"  /* vol.h (via time.h) needs sf_ssize_t from sf.h */
#include "util/time.h"

#define DOS(y, mo, d, h, mi, s) \
    ((uint32_t)((y) - 1980) << 25 | (uint32_t)(mo) << 21 | (uint32_t)(d) << 16 | \
     (uint32_t)(h) << 11 | (uint32_t)(mi) << 5 | (uint32_t)(s) / 2)

int main(void)
{
    uint8_t ms10;

    /* 1980-01-01 00:00:00 UTC = 315532800 s. */
    CHECK_EQ(sf_time_to_dos(315532800000LL, 0, &ms10), DOS(1980, 1, 1, 0, 0, 0));
    CHECK_EQ(ms10, 0);
    CHECK_EQ(sf_time_from_dos(DOS(1980, 1, 1, 0, 0, 0), 0, 0), 315532800000LL);

    /* 2026-11-30 12:34:56.780 UTC = 1796042096.780 s; local at +60 min is 13:34:56.78. */
    sf_time_ms t = 1796042096780LL;
    CHECK_EQ(sf_time_to_dos(t, 60, &ms10), DOS(2026, 11, 30, 13, 34, 56));
    CHECK_EQ(ms10, 78);
    CHECK_EQ(sf_time_from_dos(DOS(2026, 11, 30, 13, 34, 56), 78, 60), t);
    CHECK_EQ(sf_time_to_dos(t, 0, &ms10), DOS(2026, 11, 30, 12, 34, 56));
    /* Odd seconds go to the 10 ms field. */
    CHECK_EQ(sf_time_to_dos(t + 1000, 0, &ms10), DOS(2026, 11, 30, 12, 34, 56));
    CHECK_EQ(ms10, 178);
    CHECK_EQ(sf_time_from_dos(DOS(2026, 11, 30, 12, 34, 56), 178, 0), t + 1000);
    /* Negative offset crossing midnight back into the previous day. */
    CHECK_EQ(sf_time_to_dos(t, -780, NULL), DOS(2026, 11, 29, 23, 34, 56));

    /* Leap day 2024-02-29 23:59:58 UTC = 1709251198 s; next second into March. */
    CHECK_EQ(sf_time_to_dos(1709251198000LL, 0, NULL), DOS(2024, 2, 29, 23, 59, 58));
    CHECK_EQ(sf_time_to_dos(1709251200000LL, 0, NULL), DOS(2024, 3, 1, 0, 0, 0));
    /* 2000-02-29 (400-year leap) = 951782400 s; 2100 is not a leap year. */
    CHECK_EQ(sf_time_to_dos(951782400000LL, 0, NULL), DOS(2000, 2, 29, 0, 0, 0));
    CHECK_EQ(sf_time_from_dos(DOS(2100, 3, 1, 0, 0, 0), 0, 0) -
             sf_time_from_dos(DOS(2100, 2, 28, 0, 0, 0), 0, 0), 86400000LL);

    /* Clamping. */
    CHECK_EQ(sf_time_to_dos(0, 0, &ms10), DOS(1980, 1, 1, 0, 0, 0));
    CHECK_EQ(ms10, 0);
    CHECK_EQ(sf_time_to_dos(INT64_MIN, 840, &ms10), DOS(1980, 1, 1, 0, 0, 0));
    CHECK_EQ(sf_time_to_dos(315532800000LL, -60, NULL), DOS(1980, 1, 1, 0, 0, 0));
    CHECK_EQ(sf_time_to_dos(INT64_MAX, -720, &ms10), DOS(2107, 12, 31, 23, 59, 58));
    CHECK_EQ(ms10, 100);
    /* 2107-12-31 23:59:59.5 is still representable. */
    sf_time_ms end = sf_time_from_dos(DOS(2107, 12, 31, 23, 59, 58), 150, 0);
    CHECK_EQ(sf_time_to_dos(end, 0, &ms10), DOS(2107, 12, 31, 23, 59, 58));
    CHECK_EQ(ms10, 150);

    /* Invalid fields decode to the nearest valid time. */
    CHECK_EQ(sf_time_from_dos(DOS(2021, 0, 0, 0, 0, 0), 0, 0),
             sf_time_from_dos(DOS(2021, 1, 1, 0, 0, 0), 0, 0));
    CHECK_EQ(sf_time_from_dos(DOS(2021, 2, 31, 0, 0, 0), 0, 0),
             sf_time_from_dos(DOS(2021, 2, 28, 0, 0, 0), 0, 0));
    CHECK_EQ(sf_time_from_dos(DOS(2021, 15, 1, 0, 0, 0), 0, 0),
             sf_time_from_dos(DOS(2021, 12, 1, 0, 0, 0), 0, 0));
    CHECK_EQ(sf_time_from_dos(DOS(2021, 1, 1, 31, 63, 62), 250, 0),
             sf_time_from_dos(DOS(2021, 1, 1, 23, 59, 58), 199, 0));

    /* Round trip over a range of times, every ~17 hours for 100 years, 10 ms resolution. */
    int bad = 0;
    for (sf_time_ms x = 315532800000LL; x < 315532800000LL + 100LL * 366 * 86400000; x += 61234560LL) {
        uint32_t d = sf_time_to_dos(x, 330, &ms10);
        if (sf_time_from_dos(d, ms10, 330) != x)
            bad++;
    }
    CHECK_EQ(bad, 0);

    /* exFAT UtcOffset field. */
    CHECK_EQ(sf_exfat_utc_field(0), 0x80);
    CHECK_EQ(sf_exfat_utc_field(60), 0x84);
    CHECK_EQ(sf_exfat_utc_field(-60), 0x80 | 0x7C);
    CHECK_EQ(sf_exfat_utc_field(840), 0x80 | 56);
    CHECK_EQ(sf_exfat_utc_field(-720), 0x80 | (128 - 48));
    CHECK_EQ(sf_exfat_utc_field(7), 0);
    CHECK_EQ(sf_exfat_utc_field(900), 0);
    CHECK_EQ(sf_exfat_utc_minutes(0x84, 99), 60);
    CHECK_EQ(sf_exfat_utc_minutes(0xFC, 99), -60);
    CHECK_EQ(sf_exfat_utc_minutes(0x80 | (128 - 48), 99), -720);
    CHECK_EQ(sf_exfat_utc_minutes(0x04, 99), 99);
    for (int m = -720; m <= 840; m += 15)
        CHECK_EQ(sf_exfat_utc_minutes(sf_exfat_utc_field(m), 9999), m);
    TEST_END();
}
