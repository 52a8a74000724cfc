/* Time conversions between sf_time_ms (ms since 1970 UTC) and FAT/exFAT DOS timestamps. */
#ifndef SF_UTIL_TIME_H
#define SF_UTIL_TIME_H

#include <stdint.h>

/* The same typedef as streamfat/vol.h's (C11 allows repeating it; a file that includes
 * both, as every caller in src/fs does, fails to compile if they drift): util includes
 * nothing from the layers above it (scripts/check_includes.py). */
typedef int64_t sf_time_ms;

/* Encode t in local time (t + utc_offset_min) as a DOS timestamp: bits 0-4 seconds/2,
 * 5-10 minutes, 11-15 hours, 16-20 day, 21-24 month, 25-31 years since 1980. *ms10 (may be
 * NULL) gets the 10 ms increment 0..199 that exFAT adds. Times before 1980 clamp to
 * 1980-01-01 00:00:00, after 2107 to the last representable second. */
uint32_t sf_time_to_dos(sf_time_ms t, int utc_offset_min, uint8_t *ms10);

/* Decode a DOS timestamp taken as local time at utc_offset_min. Invalid fields (month 0,
 * day 0, hour > 23 ...) decode to the nearest valid time, never fail. */
sf_time_ms sf_time_from_dos(uint32_t dos, uint8_t ms10, int utc_offset_min);

/* exFAT UtcOffset field: bit 7 valid, bits 0-6 a signed count of 15-minute intervals. */
uint8_t sf_exfat_utc_field(int utc_offset_min);
/* Offset in minutes from the field, or `fallback` when its valid bit is clear. */
int sf_exfat_utc_minutes(uint8_t field, int fallback);

#endif
