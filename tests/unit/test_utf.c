/* UTF-8 <-> UTF-16 conversion: round trips, strict rejection of malformed input, limits. */
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "util/utf.h"

static int to16(const char *s, uint16_t *out, size_t cap)
{
    return sf_utf8_to_utf16(s, strlen(s), out, cap);
}

int main(void)
{
    uint16_t u[64];
    char b[256];

    CHECK_EQ(sf_strlen(""), 0);
    CHECK_EQ(sf_strlen("Día_日本"), strlen("Día_日本"));

    CHECK_EQ(to16("abc", u, 64), 3);
    CHECK(u[0] == 'a' && u[2] == 'c');
    CHECK_EQ(to16("Día_日本", u, 64), 6);
    CHECK_EQ(u[1], 0xED);
    CHECK_EQ(u[4], 0x65E5);
    CHECK_EQ(u[5], 0x672C);
    CHECK_EQ(sf_utf16_to_utf8(u, 6, b, sizeof b), (int)strlen("Día_日本"));
    CHECK(strcmp(b, "Día_日本") == 0);

    /* U+1F600 as a surrogate pair, and back. */
    CHECK_EQ(to16("\xF0\x9F\x98\x80", u, 64), 2);
    CHECK_EQ(u[0], 0xD83D);
    CHECK_EQ(u[1], 0xDE00);
    CHECK_EQ(sf_utf16_to_utf8(u, 2, b, sizeof b), 4);
    CHECK(memcmp(b, "\xF0\x9F\x98\x80", 5) == 0);
    /* U+10FFFF, the last code point. */
    CHECK_EQ(to16("\xF4\x8F\xBF\xBF", u, 64), 2);
    CHECK_EQ(u[0], 0xDBFF);
    CHECK_EQ(u[1], 0xDFFF);
    /* U+FFFF and U+0800 boundaries. */
    CHECK_EQ(to16("\xEF\xBF\xBF", u, 64), 1);
    CHECK_EQ(u[0], 0xFFFF);
    CHECK_EQ(to16("\xE0\xA0\x80", u, 64), 1);
    CHECK_EQ(u[0], 0x800);
    CHECK_EQ(to16("\xC2\x80", u, 64), 1);
    CHECK_EQ(u[0], 0x80);

    /* Malformed input. */
    CHECK_EQ(to16("\xC0\xAF", u, 64), SF_EBADNAME);          /* overlong '/' */
    CHECK_EQ(to16("\xC1\xBF", u, 64), SF_EBADNAME);
    CHECK_EQ(to16("\xE0\x80\xAF", u, 64), SF_EBADNAME);      /* overlong */
    CHECK_EQ(to16("\xE0\x9F\xBF", u, 64), SF_EBADNAME);      /* overlong U+07FF */
    CHECK_EQ(to16("\xF0\x80\x80\xAF", u, 64), SF_EBADNAME);  /* overlong */
    CHECK_EQ(to16("\xF0\x8F\xBF\xBF", u, 64), SF_EBADNAME);  /* overlong U+FFFF */
    CHECK_EQ(to16("\xED\xA0\x80", u, 64), SF_EBADNAME);      /* surrogate D800 */
    CHECK_EQ(to16("\xED\xBF\xBF", u, 64), SF_EBADNAME);      /* surrogate DFFF */
    CHECK_EQ(to16("\xF4\x90\x80\x80", u, 64), SF_EBADNAME);  /* U+110000 */
    CHECK_EQ(to16("\xF8\x88\x80\x80\x80", u, 64), SF_EBADNAME);
    CHECK_EQ(to16("\xFF", u, 64), SF_EBADNAME);
    CHECK_EQ(to16("\x80", u, 64), SF_EBADNAME);              /* lone continuation */
    CHECK_EQ(to16("a\xC3", u, 64), SF_EBADNAME);             /* truncated */
    CHECK_EQ(to16("\xE6\x97", u, 64), SF_EBADNAME);
    CHECK_EQ(to16("\xE6\x97" "a", u, 64), SF_EBADNAME);      /* bad continuation */
    CHECK_EQ(sf_utf8_to_utf16("ab", 1, u, 64), 1);           /* len, not NUL, bounds it */

    /* Capacity. */
    CHECK_EQ(to16("abcd", u, 4), 4);
    CHECK_EQ(to16("abcde", u, 4), SF_ENAMETOOLONG);
    CHECK_EQ(to16("abc\xF0\x9F\x98\x80", u, 4), SF_ENAMETOOLONG); /* pair needs 2 */
    CHECK_EQ(to16("ab\xF0\x9F\x98\x80", u, 4), 4);
    CHECK_EQ(to16("", u, 0), 0);

    /* UTF-16 -> UTF-8: unpaired surrogates become U+FFFD; capacity includes the NUL. */
    uint16_t lone[3] = { 'x', 0xD800, 'y' };
    CHECK_EQ(sf_utf16_to_utf8(lone, 3, b, sizeof b), 5);
    CHECK(strcmp(b, "x\xEF\xBF\xBDy") == 0);
    uint16_t rev[2] = { 0xDC00, 0xD800 };
    CHECK_EQ(sf_utf16_to_utf8(rev, 2, b, sizeof b), 6);
    CHECK(strcmp(b, "\xEF\xBF\xBD\xEF\xBF\xBD") == 0);
    uint16_t abc[3] = { 'a', 'b', 'c' };
    CHECK_EQ(sf_utf16_to_utf8(abc, 3, b, 4), 3);
    CHECK_EQ(sf_utf16_to_utf8(abc, 3, b, 3), SF_ENAMETOOLONG);
    CHECK_EQ(sf_utf16_to_utf8(abc, 0, b, 1), 0);
    CHECK_EQ(b[0], 0);
    uint16_t nihon[2] = { 0x65E5, 0x672C };
    CHECK_EQ(sf_utf16_to_utf8(nihon, 2, b, 7), 6);
    CHECK_EQ(sf_utf16_to_utf8(nihon, 2, b, 6), SF_ENAMETOOLONG);

    /* Every BMP non-surrogate unit round-trips. */
    int bad = 0;
    for (uint32_t c = 1; c < 0x10000; c++) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue;
        uint16_t in = (uint16_t)c, back[2];
        int n = sf_utf16_to_utf8(&in, 1, b, sizeof b);
        if (n < 1 || sf_utf8_to_utf16(b, (size_t)n, back, 2) != 1 || back[0] != in)
            bad++;
    }
    CHECK_EQ(bad, 0);
    TEST_END();
}
