/* FAT volumes below the directory layer: mkfs geometry, mount validation, FAT entry codecs
 * writing every copy, the free-space search and its summary (no region known full is read
 * twice), the free count, the clean-shutdown bit and FSInfo at unmount. On RAM devices that
 * count reads, with a tiny metadata cache so that reads reach the device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "fs/fat.h"
#include "fs/fat_ondisk.h"
#include "util/le.h"

struct cram {
    struct sf_bdev bd;
    uint8_t *mem;
    uint64_t reads;
};

static int cram_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct cram *r = (struct cram *)bd;
    r->reads += count;
    memcpy(buf, r->mem + lba * bd->sector_size, (size_t)count * bd->sector_size);
    return 0;
}

static int cram_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct cram *r = (struct cram *)bd;
    memcpy(r->mem + lba * bd->sector_size, buf, (size_t)count * bd->sector_size);
    return 0;
}

static int cram_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static void cram_init(struct cram *r, uint32_t ss, uint64_t bytes)
{
    memset(r, 0, sizeof *r);
    r->mem = calloc(1, bytes);
    REQUIRE(r->mem);
    r->bd.sector_size = ss;
    r->bd.sector_count = bytes / ss;
    r->bd.align_sectors = 1;
    r->bd.mem_align = 1;
    r->bd.read = cram_read;
    r->bd.write = cram_write;
    r->bd.flush = cram_flush;
}

static uint8_t work[1 << 20];
static uint8_t cache_mem[64 * 1024];
static uint8_t summary[4096];

static int format(struct cram *r, uint8_t type, uint32_t cluster, uint8_t fats, const char **why)
{
    struct sf_mkfs_opts o;
    memset(&o, 0, sizeof o);
    o.fs_type = type;
    o.cluster_size = cluster;
    o.fats = fats;
    o.label = "Logs";
    o.serial = 0x12345678;
    o.buf = work;
    o.buf_size = sizeof work;
    return sf_mkfs(&r->bd, &o, why);
}

static int mount(struct sf_vol *v, struct cram *r, uint32_t cache_bytes, int with_summary)
{
    struct sf_vol_cfg c;
    memset(&c, 0, sizeof c);
    c.bd = &r->bd;
    c.buf = cache_mem;
    c.buf_size = cache_bytes;
    if (with_summary) {
        c.fat_cache = summary;
        c.fat_cache_size = sizeof summary;
    }
    return sf_mount(v, &c);
}

static void test_mkfs_geometry(void)
{
    static const uint8_t types[2] = { SF_FS_FAT32, SF_FS_FAT16 };
    for (int t = 0; t < 2; t++) {
        struct cram r;
        struct sf_vol v;
        const char *why = "";
        cram_init(&r, 512, 64u << 20);
        REQUIRE(format(&r, types[t], 0, 0, &why) == 0);
        REQUIRE(mount(&v, &r, sizeof cache_mem, 1) == 0);
        CHECK_EQ(v.fs_type, types[t]);
        CHECK_EQ(v.num_fats, 2);
        CHECK(v.info.warning == NULL);
        CHECK(strcmp(v.info.label, "LOGS") == 0);      /* FAT labels are upper case */
        CHECK_EQ(v.info.serial, 0x12345678);
        CHECK_EQ(v.info.dirty, 0);
        /* 64 MiB: 1 MiB alignment (exfat_mkfs.c's rule); cluster 2 on it */
        CHECK_EQ(((uint64_t)v.heap_offset * 512) % (1u << 20), 0);
        if (types[t] == SF_FS_FAT32)
            CHECK(v.cluster_count >= 65525);
        else
            CHECK(v.cluster_count >= 4085 && v.cluster_count <= 65524);
        /* both copies identical, FAT[0] media, FAT[1] clean */
        uint8_t *f0 = r.mem + (uint64_t)v.fat_offset * 512;
        CHECK(memcmp(f0, f0 + (uint64_t)v.fat_length * 512, (size_t)v.fat_length * 512) == 0);
        CHECK_EQ(f0[0], 0xF8);
        if (types[t] == SF_FS_FAT32) {
            CHECK_EQ(v.fsinfo_sector, 1);
            CHECK_EQ(v.free_clusters, (int64_t)v.cluster_count - 1);
            CHECK(memcmp(r.mem, r.mem + 6 * 512, 512) == 0);      /* backup boot sector */
        }
        CHECK_EQ(sf_vol_free_clusters(&v), (int64_t)v.cluster_count - (types[t] == SF_FS_FAT32));
        sf_unmount(&v);
        free(r.mem);
    }
}

static void test_mkfs_limits(void)
{
    struct cram r;
    const char *why = "";
    cram_init(&r, 512, 64u << 20);
    /* 64 MiB of 4 KiB clusters cannot make 65,525 clusters */
    CHECK_EQ(format(&r, SF_FS_FAT32, 4096, 0, &why), SF_EINVAL);
    CHECK(strstr(why, "65,525") != NULL);
    /* 64 MiB of 512-byte clusters is more than FAT16 can count */
    CHECK_EQ(format(&r, SF_FS_FAT16, 512, 0, &why), SF_EINVAL);
    CHECK_EQ(format(&r, SF_FS_FAT16, 0, 3, &why), SF_EINVAL);
    /* one FAT */
    struct sf_vol v;
    REQUIRE(format(&r, SF_FS_FAT16, 0, 1, &why) == 0);
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    CHECK_EQ(v.num_fats, 1);
    sf_unmount(&v);
    free(r.mem);
    /* automatic: 64 MiB is FAT16 */
    cram_init(&r, 512, 64u << 20);
    REQUIRE(format(&r, 0, 0, 0, &why) == 0);
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    CHECK_EQ(v.fs_type, SF_FS_FAT16);
    sf_unmount(&v);
    free(r.mem);
}

static void test_mount_validation(void)
{
    struct cram r;
    struct sf_vol v;
    const char *why = "";
    cram_init(&r, 512, 64u << 20);
    REQUIRE(format(&r, SF_FS_FAT32, 0, 0, &why) == 0);
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    uint32_t fat2 = v.fat_offset + v.fat_length, fsinfo = v.fsinfo_sector, fat1 = v.fat_offset;
    sf_unmount(&v);

    /* the second FAT's media byte disagrees */
    r.mem[(uint64_t)fat2 * 512] = 0xF0;
    CHECK_EQ(mount(&v, &r, sizeof cache_mem, 0), SF_ECORRUPT);
    CHECK(strstr(sf_mount_error(&v), "media") != NULL);
    r.mem[(uint64_t)fat2 * 512] = 0xF8;

    /* a broken FSInfo is ignored, never fatal: no hints */
    r.mem[(uint64_t)fsinfo * 512] ^= 0xFF;
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    CHECK_EQ(v.free_clusters, -1);
    CHECK_EQ(v.fsinfo_sector, 0);
    sf_unmount(&v);
    r.mem[(uint64_t)fsinfo * 512] ^= 0xFF;

    /* sectors per cluster not a power of two */
    uint8_t spc = r.mem[BPB_SEC_PER_CLUS];
    r.mem[BPB_SEC_PER_CLUS] = 3;
    CHECK(mount(&v, &r, sizeof cache_mem, 0) < 0);
    r.mem[BPB_SEC_PER_CLUS] = spc;

    /* root cluster outside the heap */
    uint32_t root = ld_le32(r.mem + BPB32_ROOT_CLUS);
    st_le32(r.mem + BPB32_ROOT_CLUS, 0x0FFFFFF0u);
    CHECK_EQ(mount(&v, &r, sizeof cache_mem, 0), SF_ECORRUPT);
    st_le32(r.mem + BPB32_ROOT_CLUS, root);

    /* too few clusters for FAT32: mounts with a warning */
    uint32_t tot = ld_le32(r.mem + BPB_TOT_SEC32);
    st_le32(r.mem + BPB_TOT_SEC32, tot / 4);
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    CHECK(v.info.warning != NULL);
    sf_unmount(&v);
    st_le32(r.mem + BPB_TOT_SEC32, tot);

    /* the same image seen through 4096-byte sectors: refused with a reason */
    struct cram r4 = r;
    r4.bd.sector_size = 4096;
    r4.bd.sector_count = r.bd.sector_count / 8;
    CHECK(mount(&v, &r4, sizeof cache_mem, 0) < 0);

    /* a dirty volume is seen as dirty */
    r.mem[(uint64_t)fat1 * 512 + 7] &= (uint8_t)~0x08;   /* FAT32_CLN_SHUT, byte 3 */
    REQUIRE(mount(&v, &r, sizeof cache_mem, 0) == 0);
    CHECK_EQ(v.info.dirty, 1);
    CHECK_EQ(v.info.errors, 0);
    sf_unmount(&v);
    free(r.mem);
}

static void test_entries_and_dirty(void)
{
    struct cram r;
    struct sf_vol v;
    const char *why = "";
    cram_init(&r, 512, 64u << 20);
    REQUIRE(format(&r, SF_FS_FAT32, 0, 0, &why) == 0);
    REQUIRE(mount(&v, &r, sizeof cache_mem, 1) == 0);
    uint8_t *f0 = r.mem + (uint64_t)v.fat_offset * 512;
    uint8_t *f1 = f0 + (uint64_t)v.fat_length * 512;

    REQUIRE(vol_begin_write(&v) == 0);
    CHECK_EQ(ld_le32(f0 + 4) & FAT32_CLN_SHUT, 0);
    CHECK_EQ(ld_le32(f1 + 4) & FAT32_CLN_SHUT, 0);

    /* a run across three FAT sectors */
    REQUIRE(fat_table_run(&v, 100, 300, SF_FAT_EOC) == 0);
    uint32_t e = 0;
    for (uint32_t c = 100; c < 400; c++) {
        REQUIRE(fat_table_get(&v, c, &e) == 0);
        if (e != (c == 399 ? SF_FAT_EOC : c + 1)) {
            CHECK_EQ(e, c == 399 ? SF_FAT_EOC : c + 1);
            break;
        }
    }
    CHECK(memcmp(f0, f1, (size_t)v.fat_length * 512) == 0);
    REQUIRE(fat_table_set(&v, 50, SF_FAT_BAD) == 0);
    REQUIRE(fat_table_get(&v, 50, &e) == 0);
    CHECK_EQ(e, SF_FAT_BAD);
    CHECK_EQ(ld_le32(f1 + 50 * 4), 0x0FFFFFF7u);
    /* the top 4 bits of a FAT32 entry survive a write */
    st_le32(f0 + 60 * 4, 0xA0000000u);
    st_le32(f1 + 60 * 4, 0xA0000000u);
    cache_forget(&v, v.fat_offset, 1);
    REQUIRE(fat_table_set(&v, 60, 61) == 0);
    CHECK_EQ(ld_le32(f0 + 60 * 4), 0xA000003Du);
    REQUIRE(fat_table_set(&v, 60, 0) == 0);
    CHECK_EQ(ld_le32(f0 + 60 * 4), 0xA0000000u);

    /* free count: root (2), 50 (bad), 100..399 */
    CHECK_EQ(fat_count_free(&v), (int64_t)v.cluster_count - 302);
    REQUIRE(fat_table_fill(&v, 100, 300, 0) == 0);
    REQUIRE(fat_table_set(&v, 50, 0) == 0);
    v.free_clusters = -1;

    /* unmount: clean bit back in both copies, FSInfo exact */
    REQUIRE(sf_unmount(&v) == 0);
    CHECK(ld_le32(f0 + 4) & FAT32_CLN_SHUT);
    CHECK(ld_le32(f1 + 4) & FAT32_CLN_SHUT);
    CHECK_EQ(ld_le32(r.mem + 512 + FSI_FREE_COUNT), v.cluster_count - 1);
    free(r.mem);
}

static void test_free_search(void)
{
    struct cram r;
    struct sf_vol v;
    const char *why = "";
    cram_init(&r, 512, 64u << 20);
    REQUIRE(format(&r, SF_FS_FAT32, 512, 0, &why) == 0);
    /* two cache slots: every FAT sector read reaches the device */
    REQUIRE(mount(&v, &r, SF_VOL_BUF_MIN(512), 1) == 0);
    REQUIRE(v.fs_groups > 0);
    REQUIRE(vol_begin_write(&v) == 0);
    /* the first 64 FAT sectors' worth (128 entries each) in use */
    uint32_t used_end = 64 * 128;
    REQUIRE(fat_table_run(&v, 3, used_end - 3, SF_FAT_EOC) == 0);
    uint32_t c = 0;
    r.reads = 0;
    REQUIRE(fat_table_find_free(&v, 2, 2 + v.cluster_count, &c) == 0);
    CHECK_EQ(c, used_end);
    uint64_t first = r.reads;
    CHECK(first >= 64);
    /* a second search from the start skips what is known full */
    r.reads = 0;
    REQUIRE(fat_table_find_free(&v, 2, 2 + v.cluster_count, &c) == 0);
    CHECK_EQ(c, used_end);
    CHECK(r.reads <= 2);
    /* freeing inside a full region makes it visible again */
    REQUIRE(fat_table_fill(&v, 1000, 1, 0) == 0);
    REQUIRE(fat_table_find_free(&v, 2, 2 + v.cluster_count, &c) == 0);
    CHECK_EQ(c, 1000);
    /* without a summary the same answers */
    sf_unmount(&v);
    REQUIRE(mount(&v, &r, SF_VOL_BUF_MIN(512), 0) == 0);
    CHECK_EQ(v.fs_groups, 0);
    REQUIRE(fat_table_find_free(&v, 1001, 2 + v.cluster_count, &c) == 0);
    CHECK_EQ(c, used_end);
    /* nothing free in a range: 0 */
    REQUIRE(fat_table_find_free(&v, 3, 1000, &c) == 0);
    CHECK_EQ(c, 0);
    sf_unmount(&v);
    free(r.mem);
}

int main(void)
{
    test_mkfs_geometry();
    test_mkfs_limits();
    test_mount_validation();
    test_entries_and_dirty();
    test_free_search();
    TEST_END();
}
