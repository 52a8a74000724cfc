/* Small formatting helpers the text exporters share (cli/formats/export.h): fixed-width hex and
 * decimal without printf (export runs at hundreds of MB/s), timestamps, interface names. */
#include "export.h"

#include <string.h>

const char export_hexu[16] = "0123456789ABCDEF";

char *export_put_hex(char *p, uint32_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--)
        *p++ = export_hexu[(v >> (4 * i)) & 0xF];
    return p;
}

char *export_put_dec(char *p, uint64_t v, int min_digits)
{
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < min_digits)
        tmp[n++] = '0';
    while (n)
        *p++ = tmp[--n];
    return p;
}

char *export_put_time(const struct export_ctx *x, char *p, uint64_t ts)
{
    if (x->relative) {
        if (ts < x->log_start) {
            *p++ = '-';
            ts = x->log_start - ts;
        } else {
            ts -= x->log_start;
        }
    }
    /* to the nearest microsecond (docs/EXPORT.md, Timestamps): a time imported from float
     * seconds (python-can's MF4) is a few tens of ns off its microsecond either way */
    ts = export_round_us(ts);
    p = export_put_dec(p, ts / 1000000u, x->relative ? 1 : 10);
    *p++ = '.';
    return export_put_dec(p, ts % 1000000u, 6);
}

char *export_put_ifname(const struct export_ctx *x, char *p, uint8_t ch)
{
    const char *ifn = x->ifname[ch];

    if (*ifn) {
        size_t n = strlen(ifn);
        if (n > EXPORT_IFNAME_INLINE)
            return NULL;
        memcpy(p, ifn, n);
        return p + n;
    }
    memcpy(p, "can", 3);
    return export_put_dec(p + 3, ch, 1);
}

int export_write(struct export_ctx *x, const void *p, size_t n)
{
    return fwrite(p, 1, n, x->out) == n ? 0 : -1;
}

unsigned export_vector_channel(const struct export_ctx *x, uint8_t ch)
{
    const char *n = x->ifname[ch];
    unsigned v = 0;

    if (n[0] != 'c' || n[1] != 'a' || n[2] != 'n' || !n[3])
        return ch + 1u;
    for (n += 3; *n; n++) {
        if (*n < '0' || *n > '9' || v > 6553)
            return ch + 1u;
        v = v * 10 + (unsigned)(*n - '0');
    }
    return v < 65535 ? v + 1 : ch + 1u;
}
