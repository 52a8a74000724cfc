/* FAT short names: code page 437, decoding, the 8.3 test with the NT case byte, alias
 * basis and numeric tails, the long-name checksum.
 *
 * Aliases use only ASCII: a character outside it becomes '_' (Windows would try the OEM
 * code page first; '_' is always safe and the long name keeps the real spelling). */
#include <string.h>
#include "streamfat/config.h"
#include "fs/fat_name.h"
#include "util/upcase.h"

/* Unicode of the OEM bytes 0x80..0xFF, code page 437 (IBM PC). */
static const uint16_t cp437_high[128] = {
    0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7,
    0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE, 0x00EC, 0x00C4, 0x00C5,
    0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9,
    0x00FF, 0x00D6, 0x00DC, 0x00A2, 0x00A3, 0x00A5, 0x20A7, 0x0192,
    0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA, 0x00BA,
    0x00BF, 0x2310, 0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB,
    0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556,
    0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510,
    0x2514, 0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F,
    0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256C, 0x2567,
    0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B,
    0x256A, 0x2518, 0x250C, 0x2588, 0x2584, 0x258C, 0x2590, 0x2580,
    0x03B1, 0x00DF, 0x0393, 0x03C0, 0x03A3, 0x03C3, 0x00B5, 0x03C4,
    0x03A6, 0x0398, 0x03A9, 0x03B4, 0x221E, 0x03C6, 0x03B5, 0x2229,
    0x2261, 0x00B1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00F7, 0x2248,
    0x00B0, 0x2219, 0x00B7, 0x221A, 0x207F, 0x00B2, 0x25A0, 0x00A0,
};

uint16_t fat_cp437(uint8_t b)
{
    return b < 0x80 ? b : cp437_high[b - 0x80];
}

uint8_t fat_lfn_checksum(const uint8_t sfn[FAT_SFN_LEN])
{
    uint8_t sum = 0;
    for (int i = 0; i < FAT_SFN_LEN; i++)
        sum = (uint8_t)(((sum & 1) << 7) + (sum >> 1) + sfn[i]);
    return sum;
}

static uint32_t trimmed(const uint8_t *p, uint32_t n)
{
    while (n && p[n - 1] == ' ')
        n--;
    return n;
}

static uint16_t lower_ascii(uint16_t c, int lower)
{
    return lower && c >= 'A' && c <= 'Z' ? (uint16_t)(c + 32) : c;
}

uint32_t fat_sfn_decode(const uint8_t sfn[FAT_SFN_LEN], uint8_t ntres, uint16_t *out)
{
    uint32_t nb = trimmed(sfn, 8), ne = trimmed(sfn + 8, 3), k = 0;
    for (uint32_t i = 0; i < nb; i++) {
        uint8_t b = (i == 0 && sfn[0] == 0x05) ? 0xE5 : sfn[i];
        out[k++] = lower_ascii(fat_cp437(b), ntres & 0x08);
    }
    if (ne) {
        out[k++] = '.';
        for (uint32_t i = 0; i < ne; i++)
            out[k++] = lower_ascii(fat_cp437(sfn[8 + i]), ntres & 0x10);
    }
    return k;
}

/* The short-name byte for an upper-cased character, or 0 when it has none: A-Z, 0-9 and
 * the special characters below. */
static uint8_t sfn_char(uint16_t c)
{
    static const char special[] = "!#$%&'()-@^_`{}~";
    if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return (uint8_t)c;
    for (const char *p = special; *p; p++)
        if (c == (uint8_t)*p)
            return (uint8_t)c;
    return 0;
}

/* Copy name[from..to) into the `room` bytes at out as short-name characters: spaces are
 * dropped, characters a short name cannot hold become '_'. Returns how many bytes were
 * written; sets *lossy when anything was dropped, replaced or cut off. */
static uint32_t sfn_part(const uint16_t *name, uint32_t from, uint32_t to, uint8_t *out,
                         uint32_t room, int *lossy)
{
    uint32_t n = 0;
    for (uint32_t i = from; i < to; i++) {
        uint16_t u = name[i];
        /* Without long names and exFAT there is no up-case table (config.h, SF_NO_LFN):
         * ASCII only; what else could fold to a short-name character ('ı' to 'I') is then
         * not an exact 8.3 name. */
        if (SF_HAVE_LFN || SF_HAVE_EXFAT)
            u = sf_upcase_builtin(u);
        else if (u >= 'a' && u <= 'z')
            u = (uint16_t)(u - 32u);
        uint8_t b = sfn_char(u);
        if (u == ' ') {
            *lossy = 1;
            continue;
        }
        if (!b) {
            b = '_';
            *lossy = 1;
        }
        if (n == room) {
            *lossy = 1;
            break;
        }
        out[n++] = b;
    }
    return n;
}

int fat_sfn_basis(const uint16_t *name, uint32_t len, uint8_t basis[FAT_SFN_LEN])
{
    uint32_t start = 0, first_dot = len, last_dot = len;
    int lossy = 0;
    memset(basis, ' ', FAT_SFN_LEN);
    while (start < len && name[start] == '.')
        start++;
    lossy = start != 0;
    for (uint32_t i = start; i < len; i++) {
        if (name[i] == '.') {
            if (first_dot == len)
                first_dot = i;
            last_dot = i;
        }
    }
    if (first_dot != last_dot)
        lossy = 1;               /* more than one period: only the last one's part is kept */
    uint32_t nb = sfn_part(name, start, first_dot, basis, 8, &lossy);
    uint32_t ne = sfn_part(name, last_dot + 1, len, basis + 8, 3, &lossy);
    if (last_dot < len && ne == 0)
        lossy = 1;               /* "NAME." */
    if (nb == 0) {
        basis[0] = '_';          /* nothing usable before the period */
        lossy = 1;
    }
    return !lossy;
}

int fat_sfn_exact(const uint16_t *name, uint32_t len, uint8_t sfn[FAT_SFN_LEN], uint8_t *ntres)
{
    if (!fat_sfn_basis(name, len, sfn))
        return 0;
    int upper[2] = { 0, 0 }, lower[2] = { 0, 0 }, part = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint16_t c = name[i];
        if (c == '.')
            part = 1;
        else if (c >= 'a' && c <= 'z')
            lower[part] = 1;
        else if (c >= 'A' && c <= 'Z')
            upper[part] = 1;
    }
    if ((upper[0] && lower[0]) || (upper[1] && lower[1]))
        return 0;                /* mixed case needs a long name to keep it */
    *ntres = (uint8_t)((lower[0] ? 0x08 : 0) | (lower[1] ? 0x10 : 0));
    return 1;
}

void fat_sfn_tail(const uint8_t basis[FAT_SFN_LEN], uint32_t n, uint8_t out[FAT_SFN_LEN])
{
    uint8_t tail[8];             /* "~" and up to 7 digits, built from the end */
    uint32_t t = sizeof tail;
    do {
        tail[--t] = (uint8_t)('0' + n % 10);
        n /= 10;
    } while (n && t > 1);
    tail[--t] = '~';
    uint32_t len = sizeof tail - t, nb = trimmed(basis, 8);
    if (nb > 8 - len)
        nb = 8 - len;
    memcpy(out, basis, FAT_SFN_LEN);
    memset(out + nb, ' ', 8 - nb);
    memcpy(out + nb, tail + t, len);
}

int fat_sfn_tail_of(const uint8_t basis[FAT_SFN_LEN], const uint8_t sfn[FAT_SFN_LEN],
                    uint32_t *n)
{
    /* sfn must be exactly fat_sfn_tail(basis, val): the basis's first t characters, "~",
     * the digits of val (no leading zero, at most 6), spaces; t = min(base, 8 - tail).
     * Only a "~" followed by nothing but digits and spaces can start the tail, so at most
     * one (the last) qualifies; the scan goes from the left, where tails are short. */
    if (sfn[0] != basis[0] || sfn[8] != basis[8] || sfn[9] != basis[9] || sfn[10] != basis[10])
        return 0;
    for (uint32_t t = 1; t < 7; t++) {
        if (sfn[t] != '~')
            continue;
        uint32_t k = t + 1, val = 0;
        for (; k < 8 && sfn[k] >= '0' && sfn[k] <= '9'; k++)
            val = val * 10 + (uint32_t)(sfn[k] - '0');
        uint32_t d = k - t - 1, keep = trimmed(basis, 8);
        while (k < 8 && sfn[k] == ' ')
            k++;
        if (k < 8)
            continue;
        if (!d || sfn[t + 1] == '0' || t != (keep < 7 - d ? keep : 7 - d) ||
            memcmp(sfn + 1, basis + 1, t - 1))
            return 0;
        *n = val;
        return 1;
    }
    return 0;
}

uint32_t fat_name_entries(const uint16_t *name, uint32_t len)
{
    uint8_t sfn[FAT_SFN_LEN], nt;
    if (fat_sfn_exact(name, len, sfn, &nt))
        return 1;
    return 1 + (len + 12) / 13;
}
