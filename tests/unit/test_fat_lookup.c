/* FAT lookup on raw 8.3 bytes (issue 18): a name that fits 8.3 is compared with the 11
 * bytes of each entry, without case. README.TXT, readme.txt and ReadMe.Txt are one file,
 * also when a foreign tool stored lower-case bytes in the 8.3 entry; an entry whose first
 * byte is 0x05 (a name starting with code page 437's 0xE5, σ) is found by that name in
 * either case (σ / Σ) and by nothing else; a deleted entry (0xE5) is not found; a long
 * name's alias (LONGFI~1.TXT) finds its file. On FAT16 (fixed root) and FAT32, in RAM. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"

static uint8_t *disk;
static uint64_t disk_bytes;

/* Rewrite the first 8.3 entry spelled `from` (11 bytes) in the image to `to`. */
static int patch83(const char *from, const char *to)
{
    for (uint64_t o = 0; o + 32 <= disk_bytes; o += 32) {
        if (!memcmp(disk + o, from, 11) && disk[o + 11] != 0x0F) {
            memcpy(disk + o, to, 11);
            return 1;
        }
    }
    return 0;
}

/* First cluster of path, or 0 when not found (every test file has data). */
static uint32_t first_of(struct sf_vol *v, const char *path)
{
    struct sf_stat st;
    if (sf_stat(v, path, &st))
        return 0;
    return st.first_cluster;
}

static void mkfile(struct sf_vol *v, const char *path)
{
    struct sf_file f;
    REQUIRE(sf_open(v, &f, path, SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL) == 0);
    REQUIRE(sf_write(&f, path, strlen(path)) == (sf_ssize_t)strlen(path));
    REQUIRE(sf_close(&f) == 0);
}

static void run(uint8_t type, uint64_t bytes)
{
    static uint8_t mbuf[1 << 16];
    static uint8_t cache[16 * 1024] __attribute__((aligned(64)));
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_file f;
    const char *why = "";
    printf("%s\n", type == SF_FS_FAT32 ? "FAT32" : "FAT16");
    fflush(stdout);
    disk_bytes = bytes;
    REQUIRE((disk = calloc(bytes / 512, 512)) != NULL);
    REQUIRE(sf_rambd_init(&ram, disk, 512, bytes / 512) == 0);
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = type == SF_FS_FAT16 ? 2048 : 512, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    int err = sf_mkfs(&ram.bd, &o, &why);
    if (err)
        fprintf(stderr, "mkfs: %s (%s)\n", sf_strerror(err), why);
    REQUIRE(err == 0);
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&v, &c) == 0);
    /* fillers before and after, so that a match is not just "the only file" */
    mkfile(&v, "AAAA.TXT");
    mkfile(&v, "README.TXT");
    mkfile(&v, "LOWER.TXT");       /* its bytes made lower case below */
    mkfile(&v, "XABC.TXT");        /* its first byte made 0x05 below */
    mkfile(&v, "GONE.TXT");
    mkfile(&v, "Long File Name.txt");
    mkfile(&v, "ZZZZ.TXT");
    REQUIRE(sf_unlink(&v, "GONE.TXT") == 0);
    REQUIRE(sf_unmount(&v) == 0);
    REQUIRE(patch83("LOWER   TXT", "lower   txt"));
    REQUIRE(patch83("XABC    TXT", "\x05" "ABC    TXT"));
    REQUIRE(sf_mount(&v, &c) == 0);

    uint32_t readme = first_of(&v, "README.TXT");
    CHECK(readme != 0);
    CHECK_EQ(first_of(&v, "readme.txt"), readme);
    CHECK_EQ(first_of(&v, "ReadMe.Txt"), readme);
    CHECK_EQ(first_of(&v, "README.txt"), readme);
    CHECK(first_of(&v, "README.TX") == 0);
    CHECK(first_of(&v, "README") == 0);
    CHECK(first_of(&v, "READMEX.TXT") == 0);
    CHECK(first_of(&v, "README.TXT.") == 0);
    CHECK_EQ(sf_open(&v, &f, "readme.txt", SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL), SF_EEXIST);
    CHECK_EQ(sf_open(&v, &f, "Readme.Txt", SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL), SF_EEXIST);

    uint32_t lower = first_of(&v, "LOWER.TXT");      /* lower-case bytes on disk */
    CHECK(lower != 0);
    CHECK_EQ(first_of(&v, "lower.txt"), lower);
    CHECK_EQ(first_of(&v, "Lower.Txt"), lower);

    uint32_t sigma = first_of(&v, "\xcf\x83" "ABC.TXT");     /* σABC.TXT: 0x05 on disk */
    CHECK(sigma != 0);
    CHECK_EQ(first_of(&v, "\xcf\x83" "abc.txt"), sigma);
    CHECK_EQ(first_of(&v, "\xce\xa3" "abc.txt"), sigma);     /* Σabc.txt */
    CHECK(first_of(&v, "XABC.TXT") == 0);
    CHECK(first_of(&v, "_ABC.TXT") == 0);
    CHECK(first_of(&v, "\x05" "ABC.TXT") == 0);               /* refused as a name */
    CHECK(first_of(&v, "\xc3\xa5" "ABC.TXT") == 0);           /* å: not 0xE5 in CP437 */
    struct sf_stat st;
    CHECK_EQ(sf_stat(&v, "\xcf\x83" "abc.txt", &st), 0);
    CHECK(!strcmp(st.name, "\xcf\x83" "ABC.TXT"));             /* listed as on disk */

    CHECK(first_of(&v, "GONE.TXT") == 0);                     /* deleted: 0xE5 */
    CHECK(first_of(&v, "\xcf\x83" "ONE.TXT") == 0);

    uint32_t lfn = first_of(&v, "long file name.TXT");
    CHECK(lfn != 0);
    CHECK_EQ(first_of(&v, "LONGFI~1.TXT"), lfn);
    CHECK_EQ(first_of(&v, "longfi~1.txt"), lfn);
    CHECK_EQ(sf_stat(&v, "longfi~1.txt", &st), 0);
    CHECK(!strcmp(st.name, "Long File Name.txt"));
    CHECK(first_of(&v, "LONGFI~2.TXT") == 0);
    CHECK(first_of(&v, "AAAA.TXT") != 0 && first_of(&v, "zzzz.txt") != 0);
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

int main(void)
{
    run(SF_FS_FAT16, 16ull << 20);
    run(SF_FS_FAT32, 64ull << 20);
    TEST_END();
}
