/* Directory clusters and the metadata cache (src/fs/dir.c, src/fs/cache.c).
 *
 *  1. mkdir with big clusters: on exFAT with 1 MiB clusters (2,048 sectors) a new directory's
 *     cluster is zeroed in multi-sector requests taken from the cache's memory (half of a
 *     32 KiB cache: 31 sectors a request), not one request per sector: at most 100 device
 *     writes per mkdir (before: 2,048 and more). The new directory reads as empty, takes
 *     entries, and the volume remounts with them; zeroing needs no device read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"

static uint8_t cache[32 * 1024] __attribute__((aligned(64)));

static int mount_on(struct sf_vol *v, struct sf_bdev *bd)
{
    struct sf_vol_cfg c = { .bd = bd, .buf = cache, .buf_size = sizeof cache };
    return sf_mount(v, &c);
}

/* ---- 1. mkdir on exFAT with 1 MiB clusters ---- */
static void mkdir_big_clusters(void)
{
    const uint64_t bytes = 96ull << 20;
    uint8_t *disk = malloc(bytes);
    static uint8_t mbuf[1 << 20];
    static uint8_t ovl[4 * (8 + 512)];
    struct sf_rambd ram;
    struct sf_faultbd fb;
    struct sf_vol v;
    REQUIRE(disk);
    memset(disk, 0xA5, bytes);             /* stale bytes: a cluster not zeroed shows */
    REQUIRE(sf_rambd_init(&ram, disk, 512, bytes / 512) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = 1u << 20, .serial = 7,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    REQUIRE(sf_faultbd_init(&fb, &ram.bd, ovl, 0) == 0);
    REQUIRE(mount_on(&v, &fb.bd) == 0);
    static const char *const dirs[] = { "/D1", "/D2", "/D1/SUB" };
    for (unsigned i = 0; i < 3; i++) {
        struct sf_faultbd_counters c0 = fb.c;
        CHECK_EQ(sf_mkdir(&v, dirs[i]), 0);
        uint64_t w = fb.c.writes - c0.writes, r = fb.c.reads - c0.reads;
        printf("exFAT 1 MiB clusters: mkdir %s: %llu device writes (%llu sectors), %llu reads\n",
               dirs[i], (unsigned long long)w,
               (unsigned long long)(fb.c.sectors_written - c0.sectors_written),
               (unsigned long long)r);
        CHECK(w <= 100);
        CHECK(fb.c.sectors_written - c0.sectors_written >= 2048);
    }
    /* the new directories are empty and take entries */
    struct sf_dir d;
    struct sf_stat st;
    REQUIRE(sf_opendir(&v, &d, "/D2") == 0);
    CHECK_EQ(sf_readdir(&d, &st), 0);
    CHECK_EQ(sf_closedir(&d), 0);
    struct sf_file f;
    REQUIRE(sf_open(&v, &f, "/D2/A.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    CHECK_EQ(sf_write(&f, "abc", 3), 3);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    CHECK_EQ(sf_stat(&v, "/D2/A.TXT", &st), 0);
    CHECK_EQ(st.size, 3);
    CHECK_EQ(sf_stat(&v, "/D1/SUB", &st), 0);
    CHECK(st.attr & SF_ATTR_DIR);
    REQUIRE(sf_opendir(&v, &d, "/D1/SUB") == 0);
    CHECK_EQ(sf_readdir(&d, &st), 0);
    CHECK_EQ(sf_closedir(&d), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

int main(void)
{
    mkdir_big_clusters();
    TEST_END();
}
