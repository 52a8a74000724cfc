/* DOS/exFAT timestamps <-> sf_time_ms, by proleptic Gregorian arithmetic (no libc time
 * functions: the core is freestanding and time zones are the caller's business). */
#include "streamfat/sf.h"
#include "util/time.h"
#include "util/div64.h"

#define MS_PER_DAY 86400000LL
#define DAYS_1970_TO_1980 3652LL            /* 1970-01-01 .. 1980-01-01 */

/* The dates handled are those of DOS timestamps, 1980..2107 (sf_time_to_dos clamps to
 * them first), so the arithmetic is unsigned 32-bit: no 64-bit divide, which a 32-bit
 * target would take from libgcc (util/div64.h). */

/* Days from 1970-01-01 to y-m-d, y >= 1970. Counts from March so that the leap day ends a
 * year. */
static uint32_t days_from_civil(uint32_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    uint32_t era = y / 400;
    unsigned yoe = y - era * 400;                                   /* 0..399 */
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365 */
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* 0..146096 */
    return era * 146097 + doe - 719468;
}

/* The inverse, for z >= 0 (1970 on). */
static void civil_from_days(uint32_t z, uint32_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    uint32_t era = z / 146097;
    unsigned doe = z - era * 146097;
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* For a DOS year, 1980..2107: of its century years only 2100 is not a leap year. */
static unsigned days_in_month(uint32_t y, unsigned m)
{
    static const uint8_t dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (m == 2 && y % 4 == 0 && y != 2100)
        return 29;
    return dm[m - 1];
}

uint32_t sf_time_to_dos(sf_time_ms t, int utc_offset_min, uint8_t *ms10)
{
    const int64_t first = DAYS_1970_TO_1980 * MS_PER_DAY;
    const int64_t last = (days_from_civil(2108, 1, 1) * MS_PER_DAY) - 1000; /* 2107-12-31 23:59:59 */
    int64_t local;

    /* Far-out inputs are clamped before the offset is added, so nothing overflows. */
    if (t < first - 2 * MS_PER_DAY)
        local = first - 1;
    else if (t > last + 2 * MS_PER_DAY)
        local = last;
    else
        local = t + (int64_t)utc_offset_min * 60000;
    if (local < first) {
        if (ms10)
            *ms10 = 0;
        return (uint32_t)1 << 21 | (uint32_t)1 << 16;  /* 1980-01-01 00:00:00 */
    }
    if (local > last + 999)
        local = last;

    /* In two-second units from 1980 (fewer than 2^31 up to 2107) and the milliseconds
     * left over: one 64-bit divide, the rest in 32 bits. */
    uint32_t ms2;                             /* local >= first here */
    uint32_t units = (uint32_t)sf_udivmod64((uint64_t)(local - first), 2000, &ms2);
    uint32_t in_day = units % 43200;
    uint32_t y;
    unsigned m, d;
    civil_from_days(units / 43200 + DAYS_1970_TO_1980, &y, &m, &d);
    if (ms10)
        *ms10 = (uint8_t)(ms2 / 10);
    return (uint32_t)(y - 1980) << 25 | (uint32_t)m << 21 | (uint32_t)d << 16 |
           in_day / 1800 << 11 | in_day / 30 % 60 << 5 | in_day % 30;
}

sf_time_ms sf_time_from_dos(uint32_t dos, uint8_t ms10, int utc_offset_min)
{
    uint32_t y = 1980 + (dos >> 25);
    unsigned m = dos >> 21 & 0xF, d = dos >> 16 & 0x1F;
    unsigned hh = dos >> 11 & 0x1F, mm = dos >> 5 & 0x3F, s2 = dos & 0x1F;

    if (m < 1)
        m = 1;
    if (m > 12)
        m = 12;
    unsigned dim = days_in_month(y, m);
    if (d < 1)
        d = 1;
    if (d > dim)
        d = dim;
    if (hh > 23)
        hh = 23;
    if (mm > 59)
        mm = 59;
    if (s2 > 29)
        s2 = 29;
    if (ms10 > 199)
        ms10 = 199;
    /* Two-second units from 1970 fit 32 bits up to 2242, past DOS's last year (2107). */
    uint32_t units = days_from_civil(y, m, d) * 43200u + hh * 1800u + mm * 30u + s2;
    return (int64_t)units * 2000 + ms10 * 10 - (int64_t)utc_offset_min * 60000;
}

uint8_t sf_exfat_utc_field(int utc_offset_min)
{
    if (utc_offset_min < -720 || utc_offset_min > 840 || utc_offset_min % 15)
        return 0;                          /* not representable: mark the field invalid */
    return (uint8_t)(0x80 | ((utc_offset_min / 15) & 0x7F));
}

int sf_exfat_utc_minutes(uint8_t field, int fallback)
{
    if (!(field & 0x80))
        return fallback;
    int v = field & 0x7F;
    if (v & 0x40)
        v -= 128;
    return v * 15;
}
