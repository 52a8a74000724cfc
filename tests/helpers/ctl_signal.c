/* The control stage's signal extraction (sf_ctl_signal_raw) for tests/scripts/ctl_signals.py:
 * each input line "START LENGTH MOTOROLA SIGNED HEXDATA" gives one output line, the raw value
 * (decimal, signed when SIGNED is 1) or "short" when the frame does not carry the signal, or
 * "invalid" when the spec is refused. */
#include <stdio.h>
#include <string.h>
#include "streamfat/log.h"

int main(void)
{
    char line[512], hex[200];
    unsigned start, length, mot, sgn;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "%u %u %u %u %199s", &start, &length, &mot, &sgn, hex) != 5) {
            fprintf(stderr, "ctl_signal: bad line: %s", line);
            return 2;
        }
        uint8_t d[64];
        size_t n = strlen(hex) / 2;
        if (n > sizeof d)
            return 2;
        for (size_t i = 0; i < n; i++) {
            unsigned b;
            if (sscanf(hex + 2 * i, "%2x", &b) != 1)
                return 2;
            d[i] = (uint8_t)b;
        }
        struct sf_ctl_signal s = { .name = "s", .id = 1, .start = (uint16_t)start,
                                   .length = (uint8_t)length, .motorola = (uint8_t)mot,
                                   .is_signed = (uint8_t)sgn, .scale = 1 };
        int64_t v;
        if (sf_log_control_check(&(struct sf_ctl_cfg){ .signals = &s, .signal_count = 1 },
                                 NULL) != SF_CTL_OK)
            puts("invalid");
        else if (sf_ctl_signal_raw(&s, d, (uint8_t)n, &v))
            puts("short");
        else if (sgn)
            printf("%lld\n", (long long)v);
        else
            printf("%llu\n", (unsigned long long)(uint64_t)v);
    }
    return 0;
}
