/* Partition tables: boot sector recognition, MBR and GPT round trips at 512- and 4096-byte
 * sectors, rejection of corrupt tables, and - when the tools are installed - sfdisk and
 * sgdisk reading the tables we write. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "streamfat/sf.h"
#include "fs/part.h"
#include "util/crc32.h"
#include "util/le.h"

/* A RAM device of our own, so this test needs nothing from src/bdev but the wrappers. */
struct ram {
    struct sf_bdev bd;
    uint8_t *mem;
};

static int ram_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct ram *r = (struct ram *)bd;
    memcpy(buf, r->mem + lba * bd->sector_size, (size_t)count * bd->sector_size);
    return 0;
}

static int ram_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct ram *r = (struct ram *)bd;
    memcpy(r->mem + lba * bd->sector_size, buf, (size_t)count * bd->sector_size);
    return 0;
}

static int ram_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static void ram_init(struct ram *r, uint32_t ss, uint64_t count)
{
    memset(r, 0, sizeof *r);
    r->mem = calloc(count, ss);
    REQUIRE(r->mem);
    r->bd.sector_size = ss;
    r->bd.sector_count = count;
    r->bd.align_sectors = 1;
    r->bd.mem_align = 1;
    r->bd.read = ram_read;
    r->bd.write = ram_write;
    r->bd.flush = ram_flush;
}

static void fake_exfat(uint8_t *sec)
{
    memset(sec, 0, 512);
    sec[0] = 0xEB; sec[1] = 0x76; sec[2] = 0x90;
    memcpy(sec + 3, "EXFAT   ", 8);
    sec[510] = 0x55; sec[511] = 0xAA;
}

/* A FAT BPB: bytes/sector, sectors/cluster, reserved, FATs, root entries, total, FAT size. */
static void fake_fat(uint8_t *sec, unsigned bps, unsigned spc, unsigned rsvd, unsigned nfats,
                     unsigned root, uint32_t total, unsigned fatsz16, uint32_t fatsz32)
{
    memset(sec, 0, 512);
    sec[0] = 0xEB; sec[1] = 0x3C; sec[2] = 0x90;
    memcpy(sec + 3, "MSDOS5.0", 8);
    st_le16(sec + 11, (uint16_t)bps);
    sec[13] = (uint8_t)spc;
    st_le16(sec + 14, (uint16_t)rsvd);
    sec[16] = (uint8_t)nfats;
    st_le16(sec + 17, (uint16_t)root);
    if (total < 65536)
        st_le16(sec + 19, (uint16_t)total);
    else
        st_le32(sec + 32, total);
    st_le16(sec + 22, (uint16_t)fatsz16);
    st_le32(sec + 36, fatsz32);
    sec[510] = 0x55; sec[511] = 0xAA;
}

static void test_kind(void)
{
    uint8_t s[512];
    fake_exfat(s);
    CHECK_EQ(sf_boot_sector_kind(s, 512), SF_FS_EXFAT);
    CHECK_EQ(sf_boot_sector_kind(s, 256), 0);
    fake_fat(s, 512, 8, 32, 2, 0, 8388608, 0, 8160);       /* 4 GiB FAT32 */
    CHECK_EQ(sf_boot_sector_kind(s, 512), SF_FS_FAT32);
    fake_fat(s, 512, 4, 4, 2, 512, 262144, 256, 0);        /* 128 MiB FAT16 */
    CHECK_EQ(sf_boot_sector_kind(s, 512), SF_FS_FAT16);
    fake_fat(s, 512, 1, 1, 2, 224, 2880, 9, 0);            /* 1.44 MB floppy FAT12 */
    CHECK_EQ(sf_boot_sector_kind(s, 512), SF_FS_FAT12);
    fake_fat(s, 4096, 1, 1, 2, 512, 65536, 64, 0);         /* 4K sectors, FAT16 */
    CHECK_EQ(sf_boot_sector_kind(s, 512), SF_FS_FAT16);
    fake_fat(s, 512, 3, 1, 2, 224, 2880, 9, 0);            /* spc not a power of two */
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
    fake_fat(s, 520, 1, 1, 2, 224, 2880, 9, 0);
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
    fake_fat(s, 8192, 1, 1, 2, 224, 2880, 9, 0);
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
    fake_fat(s, 512, 1, 1, 2, 224, 10, 9, 0);              /* metadata larger than volume */
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
    fake_fat(s, 512, 8, 0, 0, 0, 0, 0, 0);                 /* NTFS-like: no reserved, no FATs */
    memcpy(s + 3, "NTFS    ", 8);
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
    memset(s, 0, 512);
    CHECK_EQ(sf_boot_sector_kind(s, 512), 0);
}

static void test_superfloppy(void)
{
    struct ram r;
    uint8_t buf[4096];
    struct sf_part p;
    ram_init(&r, 512, 2048);
    fake_exfat(r.mem);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    CHECK_EQ(p.first, 0);
    CHECK_EQ(p.count, 2048);
    CHECK_EQ(p.scheme, SF_PART_NONE);
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), SF_ENOENT); /* a boot sector is no table */
    memset(r.mem, 0, 512);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ENOENT);
    free(r.mem);
}

static void test_mbr(uint32_t ss)
{
    struct ram r;
    uint8_t buf[4096];
    struct sf_part p;
    uint64_t n = 16u * 1024 * 1024 / ss, first = 1024u * 1024 / ss, count = n - first - 7;

    ram_init(&r, ss, n);
    CHECK_EQ(sf_part_write_mbr(&r.bd, buf, first, count, 0x07), 0);
    CHECK_EQ(ld_le16(r.mem + 510), 0xAA55);
    CHECK_EQ(r.mem[446 + 4], 0x07);
    CHECK_EQ(ld_le32(r.mem + 446 + 8), first);
    CHECK_EQ(ld_le32(r.mem + 446 + 12), count);
    /* No file system yet: automatic finds nothing, index 1 finds the entry. */
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ENOENT);
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), 0);
    CHECK_EQ(p.first, first);
    CHECK_EQ(p.count, count);
    CHECK_EQ(p.scheme, SF_PART_MBR);
    CHECK_EQ(p.mbr_type, 0x07);
    CHECK_EQ(sf_part_find(&r.bd, 2, buf, &p), SF_ENOENT);
    CHECK_EQ(sf_part_find(&r.bd, 5, buf, &p), SF_ENOENT);
    fake_exfat(r.mem + first * ss);
    memset(&p, 0, sizeof p);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    CHECK_EQ(p.first, first);
    CHECK_EQ(p.count, count);

    /* Invalid requests. */
    CHECK_EQ(sf_part_write_mbr(&r.bd, buf, 0, 10, 0x07), SF_EINVAL);
    CHECK_EQ(sf_part_write_mbr(&r.bd, buf, first, n, 0x07), SF_EINVAL);
    CHECK_EQ(sf_part_write_mbr(&r.bd, buf, first, 10, 0xEE), SF_EINVAL);

    /* An entry beyond the device is corrupt; so is one starting at 0. */
    st_le32(r.mem + 446 + 12, (uint32_t)(n - first + 1));
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ECORRUPT);
    st_le32(r.mem + 446 + 12, (uint32_t)count);
    st_le32(r.mem + 446 + 8, 0);
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), SF_ECORRUPT);
    st_le32(r.mem + 446 + 8, (uint32_t)first);
    /* A bad status byte means this is not a partition table at all. */
    r.mem[446] = 0x12;
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ENOENT);
    r.mem[446] = 0x80;
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    /* A second partition holding the file system, first one empty of it. */
    memset(r.mem + first * ss, 0, ss);
    uint8_t *e2 = r.mem + 446 + 16;
    e2[4] = 0x0C;
    st_le32(e2 + 8, (uint32_t)(first + count));
    st_le32(e2 + 12, 4);
    fake_fat(r.mem + (first + count) * ss, 512, 1, 1, 2, 224, 2880, 9, 0);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    CHECK_EQ(p.first, first + count);
    CHECK_EQ(p.mbr_type, 0x0C);
    /* No signature: nothing. */
    r.mem[510] = 0;
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), SF_ENOENT);
    free(r.mem);
}

static const uint8_t dguid[16] = { 1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t pguid[16] = { 0xA1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 0xB6 };

static void test_gpt(uint32_t ss)
{
    struct ram r;
    uint8_t buf[4096];
    struct sf_part p;
    uint64_t n = 16u * 1024 * 1024 / ss, first = 1024u * 1024 / ss;
    uint32_t es = 16384 / ss;
    uint64_t count = n - first - es - 1;       /* up to the last usable sector */

    ram_init(&r, ss, n);
    CHECK_EQ(sf_part_write_gpt(&r.bd, buf, first, count + 1, dguid, pguid), SF_EINVAL);
    CHECK_EQ(sf_part_write_gpt(&r.bd, buf, 1 + es, 100, dguid, pguid), SF_EINVAL);
    CHECK_EQ(sf_part_write_gpt(&r.bd, buf, first, count, dguid, pguid), 0);
    CHECK_EQ(r.mem[446 + 4], 0xEE);
    CHECK_EQ(ld_le32(r.mem + 446 + 8), 1);
    CHECK_EQ(ld_le32(r.mem + 446 + 12), n - 1);
    CHECK(memcmp(r.mem + ss, "EFI PART", 8) == 0);
    CHECK(memcmp(r.mem + (n - 1) * ss, "EFI PART", 8) == 0);
    CHECK_EQ(ld_le64(r.mem + (n - 1) * ss + 72), n - 1 - es);
    /* Mixed-endian basic data GUID and the UTF-16 name. */
    static const uint8_t bd_guid[16] = { 0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44,
                                         0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99, 0xC7 };
    CHECK(memcmp(r.mem + 2 * ss, bd_guid, 16) == 0);
    CHECK(memcmp(r.mem + 2 * ss + 56, "s\0t\0r\0e\0a\0m\0f\0a\0t\0\0\0", 20) == 0);
    /* Backup entries equal the primary ones. */
    CHECK(memcmp(r.mem + 2 * ss, r.mem + (n - 1 - es) * ss, 16384) == 0);

    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ENOENT);
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), 0);
    CHECK_EQ(p.first, first);
    CHECK_EQ(p.count, count);
    CHECK_EQ(p.scheme, SF_PART_GPT);
    CHECK_EQ(sf_part_find(&r.bd, 2, buf, &p), SF_ENOENT);
    CHECK_EQ(sf_part_find(&r.bd, 129, buf, &p), SF_ENOENT);
    fake_exfat(r.mem + first * ss);
    memset(&p, 0, sizeof p);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    CHECK_EQ(p.first, first);
    CHECK_EQ(p.count, count);

    /* A flipped bit in the header, then in an entry, is caught by the CRCs. */
    r.mem[ss + 40] ^= 1;
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ECORRUPT);
    r.mem[ss + 40] ^= 1;
    r.mem[2 * ss + 128 * 5 + 3] ^= 0x10;
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), SF_ECORRUPT);
    r.mem[2 * ss + 128 * 5 + 3] ^= 0x10;
    CHECK_EQ(sf_part_find(&r.bd, 1, buf, &p), 0);
    /* An entry beyond the device, with valid CRCs, is corrupt. */
    st_le64(r.mem + 2 * ss + 40, n);
    uint32_t crc = sf_crc32(0, r.mem + 2 * ss, 16384);
    st_le32(r.mem + ss + 88, crc);
    st_le32(r.mem + ss + 16, 0);
    st_le32(r.mem + ss + 16, sf_crc32(0, r.mem + ss, 92));
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ECORRUPT);
    /* Protective MBR but no GPT header. */
    memset(r.mem + ss, 0, ss);
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), SF_ECORRUPT);
    free(r.mem);
}

/* sf_mkfs then sf_probe on RAM devices, including a 4096-byte-sector volume seen through
 * a 512-byte view of the same memory (an image file opened before its sector size is known). */
static void test_probe(uint32_t ss, uint8_t scheme)
{
    struct ram r, v;
    static uint8_t work[65536];
    uint8_t buf[4096], type = 99;
    uint32_t got_ss = 0;
    uint64_t bytes = 32u * 1024 * 1024;
    struct sf_mkfs_opts o;
    const char *why = NULL;

    ram_init(&r, ss, bytes / ss);
    CHECK_EQ(sf_probe(&r.bd, 0, buf, &type, &got_ss), 0);
    CHECK_EQ(type, SF_FS_NONE);
    memset(&o, 0, sizeof o);
    o.fs_type = SF_FS_EXFAT;
    o.partition = scheme;
    o.label = "Día_日本";
    o.serial = 0x12345678;
    o.buf = work;
    o.buf_size = sizeof work;
    CHECK_EQ(sf_mkfs(&r.bd, &o, &why), 0);
    CHECK_EQ(sf_probe(&r.bd, 0, buf, &type, &got_ss), 0);
    CHECK_EQ(type, SF_FS_EXFAT);
    CHECK_EQ(got_ss, ss);
    if (scheme != SF_PART_NONE) {
        CHECK_EQ(sf_probe(&r.bd, 1, buf, &type, &got_ss), 0);
        CHECK_EQ(type, SF_FS_EXFAT);
        CHECK_EQ(sf_probe(&r.bd, 2, buf, &type, &got_ss), 0);
        CHECK_EQ(type, SF_FS_NONE);
    }
    if (ss == 4096) {
        memset(&v, 0, sizeof v);
        v = r;
        v.bd.sector_size = 512;
        v.bd.sector_count = bytes / 512;
        type = 99;
        CHECK_EQ(sf_probe(&v.bd, 0, buf, &type, &got_ss), 0);
        CHECK_EQ(type, SF_FS_EXFAT);
        CHECK_EQ(got_ss, 4096);
    }
    /* The boot sector as mkfs wrote it. */
    struct sf_part p;
    CHECK_EQ(sf_part_find(&r.bd, 0, buf, &p), 0);
    const uint8_t *bs = r.mem + p.first * ss;
    CHECK_EQ(ld_le64(bs + 64), p.first);                  /* PartitionOffset */
    CHECK_EQ(ld_le64(bs + 72), p.count);                  /* VolumeLength */
    CHECK_EQ(1u << bs[108], ss);
    CHECK_EQ(1u << (bs[108] + bs[109]), 4096);            /* 32 MiB: 4 KiB clusters */
    CHECK_EQ(ld_le32(bs + 100), 0x12345678);
    CHECK(memcmp(bs, bs + 12 * ss, ss) == 0);             /* backup boot sector */
    /* Heap on the alignment (32 MiB of space: 512 KiB) from the device's start. */
    CHECK_EQ((p.first + ld_le32(bs + 88)) * ss % (512 * 1024), 0);
    free(r.mem);

    /* Refusals name their reason. */
    ram_init(&r, ss, bytes / ss);
    o.cluster_size = 3000;
    why = NULL;
    CHECK_EQ(sf_mkfs(&r.bd, &o, &why), SF_EINVAL);
    CHECK(why && why[0]);
    o.cluster_size = 0;
    o.fs_type = SF_FS_FAT32;           /* too few clusters for FAT32 on this device */
    why = NULL;
    CHECK_EQ(sf_mkfs(&r.bd, &o, &why), SF_EINVAL);
    CHECK(why && why[0]);
    o.fs_type = SF_FS_EXFAT;
    o.label = "twelve chars";
    CHECK_EQ(sf_mkfs(&r.bd, &o, &why), SF_EINVAL);
    o.label = NULL;
    o.size = bytes * 2;
    CHECK_EQ(sf_mkfs(&r.bd, &o, &why), SF_EINVAL);
    free(r.mem);
}

/* Write tables into image files and let sfdisk / sgdisk read them. */
static int run(const char *cmd, const char *want)
{
    char line[512];
    int found = want == NULL;
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (want && strstr(line, want))
            found = 1;
    }
    int st = pclose(f);
    if (!found)
        fprintf(stderr, "'%s' printed no line with '%s'\n", cmd, want);
    return st == 0 && found ? 0 : -1;
}

static void save(struct ram *r, const char *path)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(r->mem, r->bd.sector_size, r->bd.sector_count, f) == r->bd.sector_count);
    fclose(f);
}

static void test_tools(void)
{
    char dir[] = "/tmp/sf_test_part.XXXXXX", img[128], cmd[512], want[128];
    uint8_t buf[4096];
    struct ram r;
    int have_sfdisk = system("command -v sfdisk >/dev/null 2>&1") == 0;
    int have_sgdisk = system("command -v sgdisk >/dev/null 2>&1") == 0;

    if (!have_sfdisk && !have_sgdisk) {
        printf("sfdisk/sgdisk not installed: external table checks skipped\n");
        return;
    }
    REQUIRE(mkdtemp(dir));
    snprintf(img, sizeof img, "%s/img", dir);

    ram_init(&r, 512, 32768);                       /* 16 MiB, MBR */
    CHECK_EQ(sf_part_write_mbr(&r.bd, buf, 2048, 30720, 0x07), 0);
    save(&r, img);
    if (have_sfdisk) {
        snprintf(cmd, sizeof cmd, "sfdisk -d %s 2>&1 </dev/null", img);
        CHECK_EQ(run(cmd, "start=        2048, size=       30720, type=7"), 0);
        snprintf(cmd, sizeof cmd, "sfdisk -d %s 2>&1 </dev/null", img);
        CHECK_EQ(run(cmd, "label: dos"), 0);
    }
    free(r.mem);

    ram_init(&r, 512, 32768);                       /* 16 MiB, GPT, 512-byte sectors */
    CHECK_EQ(sf_part_write_gpt(&r.bd, buf, 2048, 32768 - 34 - 2048 + 1, dguid, pguid), 0);
    save(&r, img);
    if (have_sfdisk) {
        snprintf(cmd, sizeof cmd, "sfdisk -d %s 2>&1 </dev/null", img);
        CHECK_EQ(run(cmd, "type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"), 0);
        snprintf(want, sizeof want, "start=        2048, size=       %u", 32768 - 34 - 2048 + 1);
        CHECK_EQ(run(cmd, want), 0);
        CHECK_EQ(run(cmd, "name=\"streamfat\""), 0);
        CHECK_EQ(run(cmd, "last-lba: 32734"), 0);
    }
    if (have_sgdisk) {
        snprintf(cmd, sizeof cmd, "timeout 20 sgdisk -v %s 2>&1 </dev/null", img);
        CHECK_EQ(run(cmd, "No problems found"), 0);
    }
    free(r.mem);

    ram_init(&r, 4096, 4096);                       /* 16 MiB, GPT, 4096-byte sectors */
    CHECK_EQ(sf_part_write_gpt(&r.bd, buf, 256, 4096 - 6 - 256 + 1, dguid, pguid), 0);
    save(&r, img);
    if (have_sgdisk) {
        /* sgdisk learns the sector size only from a block device; on a file, -v needs it. */
        snprintf(cmd, sizeof cmd,
                 "dev=$(losetup -f --show -b 4096 %s 2>/dev/null) || exit 0; "
                 "timeout 20 sgdisk -v $dev 2>&1 </dev/null; rc=$?; losetup -d $dev; exit $rc",
                 img);
        if (geteuid() == 0)
            CHECK_EQ(run(cmd, "No problems found"), 0);
    }
    free(r.mem);
    unlink(img);
    rmdir(dir);
}

int main(void)
{
    CHECK_EQ(sf_crc32(0, "123456789", 9), 0xCBF43926u);
    CHECK_EQ(sf_crc32(sf_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    CHECK_EQ(sf_crc32(0, "", 0), 0);
    test_kind();
    test_superfloppy();
    test_mbr(512);
    test_mbr(4096);
    test_gpt(512);
    test_gpt(4096);
    test_probe(512, SF_PART_NONE);
    test_probe(512, SF_PART_MBR);
    test_probe(512, SF_PART_GPT);
    test_probe(4096, SF_PART_NONE);
    test_probe(4096, SF_PART_MBR);
    test_probe(4096, SF_PART_GPT);
    test_tools();
    TEST_END();
}
