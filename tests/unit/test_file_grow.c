/* Growing files with sf_truncate: the new bytes read back as zeros, the old ones stay, and
 * the work is linear in the clusters added. A FAT32 volume with 512-byte clusters makes the
 * chain long (61,440 clusters for 30 MiB); growing it used to walk the rest of the chain for
 * every sector it zeroed (minutes). The time bound below guards the complexity (the linear
 * code takes about 0.03 s, also under ASan); it is not a speed target. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "streamfat/sf.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void grow(uint8_t type, uint32_t cluster, uint64_t size)
{
    static uint8_t mbuf[1 << 20];
    static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
    static uint8_t rb[65536];
    uint64_t bytes = 256ull << 20;
    uint8_t *disk = calloc(bytes / 512, 512);
    REQUIRE(disk);
    memset(disk, 0xA5, bytes);          /* stale data everywhere: zeros must be written */
    struct sf_rambd ram;
    REQUIRE(sf_rambd_init(&ram, disk, 512, bytes / 512) == 0);
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = cluster, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    struct sf_vol v;
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&v, &c) == 0);
    struct sf_file f;
    REQUIRE(sf_open(&v, &f, "g.bin", SF_O_RDWR | SF_O_CREAT) == 0);
    REQUIRE(sf_write(&f, "head", 4) == 4);
    double t0 = now_s();
    CHECK_EQ(sf_truncate(&f, size), 0);
    double secs = now_s() - t0;
    printf("%s, %u-byte clusters: grew to %llu bytes in %.3f s\n",
           type == SF_FS_EXFAT ? "exFAT" : "FAT32", cluster, (unsigned long long)size, secs);
    CHECK(secs < 20.0);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    /* read back after a fresh mount */
    REQUIRE(sf_mount(&v, &c) == 0);
    REQUIRE(sf_open(&v, &f, "g.bin", SF_O_RDONLY) == 0);
    uint64_t got = 0, bad = 0;
    sf_ssize_t k;
    while ((k = sf_read(&f, rb, sizeof rb)) > 0) {
        for (sf_ssize_t i = 0; i < k; i++) {
            uint8_t want = got + (uint64_t)i < 4 ? (uint8_t)"head"[got + (uint64_t)i] : 0;
            bad += rb[i] != want;
        }
        got += (uint64_t)k;
    }
    CHECK_EQ(k, 0);
    CHECK_EQ(got, size);
    CHECK_EQ(bad, 0);
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

int main(void)
{
    grow(SF_FS_FAT32, 512, 30ull << 20);
    grow(SF_FS_EXFAT, 4096, 30ull << 20);
    TEST_END();
}
