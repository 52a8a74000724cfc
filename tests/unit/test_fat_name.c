/* FAT short names: 8.3 test and NT case byte, alias basis and numeric tails (collisions
 * ~1..~9, ~10 and up), illegal characters, the LFN checksum, code page 437 decoding. */
#include <string.h>
#include "check.h"
#include "fs/fat_name.h"
#include "util/utf.h"

static uint32_t u16(const char *s, uint16_t *out)
{
    int n = sf_utf8_to_utf16(s, strlen(s), out, 300);
    REQUIRE(n >= 0);
    return (uint32_t)n;
}

static int sfn_is(const uint8_t *sfn, const char *want11)
{
    if (memcmp(sfn, want11, 11)) {
        fprintf(stderr, "  got \"%.11s\", want \"%s\"\n", (const char *)sfn, want11);
        return 0;
    }
    return 1;
}

/* exact(name) -> 1 with sfn and case byte, or 0 */
static void t_exact(void)
{
    static const struct { const char *name; int exact; const char *sfn; uint8_t nt; } c[] = {
        { "README.TXT", 1, "README  TXT", 0x00 },
        { "readme.txt", 1, "README  TXT", 0x18 },
        { "readme.TXT", 1, "README  TXT", 0x08 },
        { "README.txt", 1, "README  TXT", 0x10 },
        { "a", 1, "A          ", 0x08 },
        { "12345678.123", 1, "12345678123", 0x00 },
        { "LOG_0001.CSV", 1, "LOG_0001CSV", 0x00 },
        { "x~1", 1, "X~1        ", 0x08 },
        { "$%'-_@.{}", 1, "$%'-_@  {} ", 0x00 },
        { "ReadMe.txt", 0, NULL, 0 },          /* mixed case in the base */
        { "readme.Txt", 0, NULL, 0 },
        { "123456789.txt", 0, NULL, 0 },       /* base too long */
        { "a.text", 0, NULL, 0 },              /* extension too long */
        { "a.b.c", 0, NULL, 0 },               /* two periods */
        { ".profile", 0, NULL, 0 },            /* leading period */
        { "a b", 0, NULL, 0 },                 /* space */
        { "a+b", 0, NULL, 0 },                 /* + , ; = [ ] only in long names */
        { "a,b", 0, NULL, 0 },
        { "a;b", 0, NULL, 0 },
        { "a=b", 0, NULL, 0 },
        { "a[b]", 0, NULL, 0 },
        { "café", 0, NULL, 0 },                /* not ASCII */
        { "abc.", 0, NULL, 0 },                /* trailing period */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint16_t n[300];
        uint8_t sfn[11], nt = 0xEE;
        uint32_t len = u16(c[i].name, n);
        int r = fat_sfn_exact(n, len, sfn, &nt);
        if (r != c[i].exact)
            fprintf(stderr, "exact(\"%s\") = %d\n", c[i].name, r);
        CHECK_EQ(r, c[i].exact);
        if (r && c[i].exact) {
            CHECK(sfn_is(sfn, c[i].sfn));
            CHECK_EQ(nt, c[i].nt);
        }
        CHECK_EQ(fat_name_entries(n, len), c[i].exact ? 1 : 1 + (len + 12) / 13);
    }
}

static void t_basis(void)
{
    static const struct { const char *name; int fits; const char *basis; } c[] = {
        { "Mixed.Txt", 1, "MIXED   TXT" },
        { "The quick brown fox.jpeg", 0, "THEQUICKJPE" },
        { "a+b,c;d=e[f]g.txt", 0, "A_B_C_D_TXT" },
        { ".bashrc", 0, "BASHRC     " },
        { "foo.bar.txt", 0, "FOO     TXT" },
        { "café.txt", 0, "CAF_    TXT" },
        { "日本", 0, "__         " },
        { "smile😀.log", 0, "SMILE__ LOG" },   /* a surrogate pair is two units */
        { "...", 0, "_          " },
        { "name.", 0, "NAME       " },
        { "LongFileName", 0, "LONGFILE   " },
        { "x.ab cd", 0, "X       ABC" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint16_t n[300];
        uint8_t b[11];
        uint32_t len = u16(c[i].name, n);
        int fits = fat_sfn_basis(n, len, b);
        if (fits != c[i].fits)
            fprintf(stderr, "basis(\"%s\") fits = %d\n", c[i].name, fits);
        CHECK_EQ(fits, c[i].fits);
        CHECK(sfn_is(b, c[i].basis));
    }
}

static void t_tails(void)
{
    const uint8_t *basis = (const uint8_t *)"LONGFILETXT", *shortb = (const uint8_t *)"AB      C  ";
    uint8_t out[11];
    uint32_t n;
    fat_sfn_tail(basis, 1, out);
    CHECK(sfn_is(out, "LONGFI~1TXT"));
    fat_sfn_tail(basis, 9, out);
    CHECK(sfn_is(out, "LONGFI~9TXT"));
    fat_sfn_tail(basis, 10, out);
    CHECK(sfn_is(out, "LONGF~10TXT"));
    fat_sfn_tail(basis, 99, out);
    CHECK(sfn_is(out, "LONGF~99TXT"));
    fat_sfn_tail(basis, 100, out);
    CHECK(sfn_is(out, "LONG~100TXT"));
    fat_sfn_tail(basis, 999999, out);
    CHECK(sfn_is(out, "L~999999TXT"));
    fat_sfn_tail(shortb, 1, out);
    CHECK(sfn_is(out, "AB~1    C  "));
    fat_sfn_tail(shortb, 12, out);
    CHECK(sfn_is(out, "AB~12   C  "));

    /* every tail is recognised as the basis's, and only its own number */
    for (uint32_t t = 1; t <= 12345; t += (t < 20 ? 1 : 97)) {
        fat_sfn_tail(basis, t, out);
        CHECK(fat_sfn_tail_of(basis, out, &n) && n == t);
    }
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGFI~1TX ", &n));  /* extension */
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGFX~1TXT", &n));  /* base */
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGFI~0TXT", &n));
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGF~01TXT", &n));
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGFILETXT", &n));  /* no tail */
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGFI~ TXT", &n));
    CHECK(!fat_sfn_tail_of(basis, (const uint8_t *)"LONGF~1 TXT", &n));  /* ~1 keeps 6 */
    CHECK(fat_sfn_tail_of(shortb, (const uint8_t *)"AB~3    C  ", &n) && n == 3);

    /* collisions as a directory scan sees them: ~1..~9 taken -> ~10, cut to 5 characters */
    uint32_t used = 0;
    for (uint32_t t = 1; t <= 9; t++) {
        fat_sfn_tail(basis, t, out);
        if (fat_sfn_tail_of(basis, out, &n))
            used |= 1u << n;
    }
    uint32_t pick = 1;
    while (used & 1u << pick)
        pick++;
    CHECK_EQ(pick, 10);
    fat_sfn_tail(basis, pick, out);
    CHECK(sfn_is(out, "LONGF~10TXT"));
}

static void t_checksum(void)
{
    /* values by the specification's algorithm (rotate right, add), cross-checked with
     * entries written by mtools */
    CHECK_EQ(fat_lfn_checksum((const uint8_t *)"FOO     BAR"), 0x53);
    CHECK_EQ(fat_lfn_checksum((const uint8_t *)"PROGRA~1   "), 0x20);
    CHECK_EQ(fat_lfn_checksum((const uint8_t *)"README  TXT"), 0x73);
    CHECK_EQ(fat_lfn_checksum((const uint8_t *)"LONGFI~1TXT"), 0xD4);
}

static void t_decode(void)
{
    uint16_t out[FAT_SFN_MAX_CHARS];
    char s[64];
    uint32_t n;
    struct { const char *sfn; uint8_t nt; const char *want; } c[] = {
        { "README  TXT", 0x00, "README.TXT" },
        { "README  TXT", 0x08, "readme.TXT" },
        { "README  TXT", 0x10, "README.txt" },
        { "README  TXT", 0x18, "readme.txt" },
        { "NOEXT      ", 0x18, "noext" },
        { "12345678123", 0x00, "12345678.123" },
        { "\x05" "BC     TXT", 0x00, "\xcf\x83" "BC.TXT" },       /* 0x05 = 0xE5 = σ in CP437 */
        { "\x80\x81\x9a\xe1    \xe4  ", 0x08, "Çü" "Üß.Σ" },       /* CP437 untouched by case */
        { "LONGFI~1TXT", 0x00, "LONGFI~1.TXT" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        n = fat_sfn_decode((const uint8_t *)c[i].sfn, c[i].nt, out);
        REQUIRE(sf_utf16_to_utf8(out, n, s, sizeof s) >= 0);
        if (strcmp(s, c[i].want))
            fprintf(stderr, "decode %zu: \"%s\", want \"%s\"\n", i, s, c[i].want);
        CHECK(!strcmp(s, c[i].want));
    }
    CHECK_EQ(fat_cp437(0x41), 0x41);
    CHECK_EQ(fat_cp437(0x80), 0x00C7);
    CHECK_EQ(fat_cp437(0x9E), 0x20A7);
    CHECK_EQ(fat_cp437(0xE1), 0x00DF);
    CHECK_EQ(fat_cp437(0xFF), 0x00A0);
    CHECK_EQ(fat_cp437(0xB0), 0x2591);
}

int main(void)
{
    t_exact();
    t_basis();
    t_tails();
    t_checksum();
    t_decode();
    TEST_END();
}
