/* UTF-8 <-> UTF-16 conversion for names, strict in both directions (contracts in utf.h). */
#include "util/utf.h"
#include "streamfat/sf.h"

int sf_utf8_to_utf16(const char *s, size_t len, uint16_t *out, size_t cap)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0, n = 0;

    while (i < len) {
        uint32_t c = p[i], min;
        unsigned extra;
        if (c < 0x80) {
            extra = 0;
            min = 0;
        } else if ((c & 0xE0) == 0xC0) {
            extra = 1;
            c &= 0x1F;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            c &= 0x0F;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3;
            c &= 0x07;
            min = 0x10000;
        } else {
            return SF_EBADNAME;             /* continuation byte or 0xF8..0xFF as a lead */
        }
        if (len - i <= extra)
            return SF_EBADNAME;             /* truncated */
        for (unsigned k = 1; k <= extra; k++) {
            uint8_t b = p[i + k];
            if ((b & 0xC0) != 0x80)
                return SF_EBADNAME;
            c = c << 6 | (b & 0x3Fu);
        }
        i += extra + 1;
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return SF_EBADNAME;             /* overlong, out of range, or a surrogate */
        if (c >= 0x10000) {
            if (cap - n < 2 || n >= cap)
                return SF_ENAMETOOLONG;
            c -= 0x10000;
            out[n++] = (uint16_t)(0xD800 | (c >> 10));
            out[n++] = (uint16_t)(0xDC00 | (c & 0x3FF));
        } else {
            if (n >= cap)
                return SF_ENAMETOOLONG;
            out[n++] = (uint16_t)c;
        }
    }
    return (int)n;
}

int sf_utf16_to_utf8(const uint16_t *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t c = in[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00u);
            i++;
        } else if (c >= 0xD800 && c <= 0xDFFF) {
            c = 0xFFFD;                     /* unpaired surrogate */
        }
        unsigned need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (cap - o < need + 1u || o >= cap)
            return SF_ENAMETOOLONG;         /* room for the bytes and the NUL */
        /* Continuation bytes from the last, 6 bits each; the lead byte takes the rest. */
        static const uint8_t lead[4] = { 0x00, 0xC0, 0xE0, 0xF0 };
        for (unsigned k = need - 1; k; k--) {
            out[o + k] = (char)(0x80 | (c & 0x3F));
            c >>= 6;
        }
        out[o] = (char)(lead[need - 1] | c);
        o += need;
    }
    if (o >= cap)
        return SF_ENAMETOOLONG;
    out[o] = '\0';
    return (int)o;
}

size_t sf_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}
