/* Directory clusters and the metadata cache (src/fs/dir.c, src/fs/cache.c).
 *
 *  1. mkdir with big clusters: on exFAT with 1 MiB clusters (2,048 sectors) a new directory's
 *     cluster is zeroed in multi-sector requests taken from the cache's memory (half of a
 *     32 KiB cache: 31 sectors a request), not one request per sector: at most 100 device
 *     writes per mkdir (before: 2,048 and more). The new directory reads as empty, takes
 *     entries, and the volume remounts with them; zeroing needs no device read.
 *  2. A file cross-linked with a directory on a corrupt FAT32 volume (the file's chain runs
 *     into the directory's cluster: the FAT and the file's size edited on the image). With
 *     the directory's sector in the cache, a write of the file's data into that cluster is
 *     refused with SF_ECORRUPT (whole sectors, and a partial sector through the file's
 *     buffer), so nothing is lost beyond what the corruption implies: the directory's
 *     entries stay intact, and a later entry added to the directory cannot put stale entries
 *     over data the library said it wrote. Before, the write returned success, went to the
 *     device around the cache, and the next entry created in the directory wrote the
 *     cache's old copy of the sector over it: the file's bytes were silently lost.
 *     A write into the file's own clusters still works. And the other order: 16 bytes
 *     buffered in the shared sector before the directory's sector is cached; when it is,
 *     the change is dropped and the close reports SF_ECORRUPT (before: the close wrote it,
 *     the next entry in the directory wrote the stale copy over it).
 *  3. The stream on exFAT (4 KiB clusters) whose directory's cluster is free in the allocation
 *     bitmap (the bit cleared on the image; on FAT32 a directory cluster free in the FAT
 *     makes the directory unreadable, so the stream cannot meet one there): with the
 *     directory's sector cached, the stream's allocation hands the cluster out and the
 *     write (aligned, whole sectors: the direct path) is refused with SF_ECORRUPT; after a
 *     new entry in the directory and a remount, it lists all three entries. Before: the
 *     write returned 1,024 and the close 0, and the file read back other bytes. And the
 *     other order: the stream reserves the cluster (expected_size) before the directory's
 *     sector is cached; the direct path's write is refused too (before the check in
 *     sf_stream_write's direct path: 1,024 and 0 returned, the data lost).
 *  4. sf_write on exFAT: a contiguous (NoFatChain) file whose range runs into a directory's
 *     cluster (its lengths grown by one cluster and the entry set's checksum redone): as 2,
 *     whole sector and 16 bytes refused, its own cluster written, the directory keeps its
 *     entries. Before: 512 and 16 returned, and the data read back lost. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/stream.h"

static uint8_t cache[32 * 1024] __attribute__((aligned(64)));

static int mount_on(struct sf_vol *v, struct sf_bdev *bd)
{
    struct sf_vol_cfg c = { .bd = bd, .buf = cache, .buf_size = sizeof cache };
    return sf_mount(v, &c);
}

/* A RAM disk of BYTES filled with FILL, formatted FS_TYPE with CLUSTER-byte clusters. */
static uint8_t *formatted_disk(struct sf_rambd *ram, uint64_t bytes, int fill, uint8_t fs_type,
                               uint32_t cluster, uint32_t serial)
{
    static uint8_t mbuf[1 << 20];
    uint8_t *disk = malloc(bytes);
    REQUIRE(disk);
    memset(disk, fill, bytes);
    REQUIRE(sf_rambd_init(ram, disk, 512, bytes / 512) == 0);
    struct sf_mkfs_opts o = { .fs_type = fs_type, .cluster_size = cluster, .serial = serial,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram->bd, &o, &why) == 0);
    return disk;
}

/* ---- 1. mkdir on exFAT with 1 MiB clusters ---- */
static void mkdir_big_clusters(void)
{
    const uint64_t bytes = 96ull << 20;
    static uint8_t ovl[4 * (8 + 512)];
    struct sf_rambd ram;
    struct sf_faultbd fb;
    struct sf_vol v;
    /* stale bytes (0xA5): a cluster not zeroed shows */
    uint8_t *disk = formatted_disk(&ram, bytes, 0xA5, SF_FS_EXFAT, 1u << 20, 7);
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

/* ---- 2. a file cross-linked with a directory (FAT32) ---- */
#define X_BYTES (40ull << 20)

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)x;
    p[1] = (uint8_t)(x >> 8);
    p[2] = (uint8_t)(x >> 16);
    p[3] = (uint8_t)(x >> 24);
}

struct fat32 {
    uint8_t *img;
    uint32_t spc, fat0, fatsz, nfats, data, root;
};

static void fat32_open(struct fat32 *g, uint8_t *img)
{
    g->img = img;
    REQUIRE(!memcmp(img + 0x52, "FAT32   ", 8) && img[0x0B] == 0 && img[0x0C] == 2);
    g->spc = img[0x0D];
    g->fat0 = img[0x0E] | img[0x0F] << 8;
    g->nfats = img[0x10];
    g->fatsz = rd32(img + 0x24);
    g->root = rd32(img + 0x2C);
    g->data = g->fat0 + g->nfats * g->fatsz;
}

static uint8_t *fat32_clus(struct fat32 *g, uint32_t c)
{
    return g->img + ((uint64_t)g->data + (uint64_t)(c - 2) * g->spc) * 512;
}

static void fat32_set(struct fat32 *g, uint32_t c, uint32_t next)
{
    for (uint32_t k = 0; k < g->nfats; k++)
        wr32(g->img + ((uint64_t)g->fat0 + k * g->fatsz) * 512 + c * 4u, next);
}

static uint8_t pat(uint64_t off) { return (uint8_t)(off * 131u + (off >> 8) * 7u + 3u); }

static void cross_linked(void)
{
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_file f;
    struct sf_stat st;
    uint8_t *disk = formatted_disk(&ram, X_BYTES, 0, SF_FS_FAT32, 512, 9);

    /* D with two files; F of four clusters (one sector each) */
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_mkdir(&v, "/D") == 0);
    for (int i = 0; i < 2; i++) {
        REQUIRE(sf_open(&v, &f, i ? "/D/B.TXT" : "/D/A.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
        REQUIRE(sf_close(&f) == 0);
    }
    uint8_t data[2048];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = pat(i);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_WRONLY | SF_O_CREAT) == 0);
    REQUIRE(sf_write(&f, data, sizeof data) == (sf_ssize_t)sizeof data);
    REQUIRE(sf_close(&f) == 0);
    REQUIRE(sf_mkdir(&v, "/E") == 0);          /* a directory past F's clusters */
    REQUIRE(sf_open(&v, &f, "/E/Z.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    REQUIRE(sf_close(&f) == 0);
    REQUIRE(sf_stat(&v, "/D", &st) == 0);
    uint32_t dc = st.first_cluster;
    REQUIRE(sf_stat(&v, "/F.BIN", &st) == 0);
    uint32_t fc = st.first_cluster;
    REQUIRE(sf_unmount(&v) == 0);

    /* The corruption: F's chain runs f0 -> f1 -> D's cluster (EOC), F's size 3 clusters. */
    struct fat32 g;
    fat32_open(&g, disk);
    REQUIRE(g.spc == 1);
    uint32_t f1 = rd32(disk + (uint64_t)g.fat0 * 512 + fc * 4u) & 0x0FFFFFFFu;
    REQUIRE(f1 >= 2 && f1 < 0x0FFFFFF7u);
    fat32_set(&g, f1, dc);
    uint8_t dsec[512];
    memcpy(dsec, fat32_clus(&g, dc), 512);     /* D's entries, as they should stay */
    uint8_t *root = fat32_clus(&g, g.root), *ent = NULL;
    for (unsigned e = 0; e < 16; e++)
        if (!memcmp(root + e * 32, "F       BIN", 11))
            ent = root + e * 32;
    REQUIRE(ent);
    wr32(ent + 28, 1536);

    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDWR) == 0);
    CHECK_EQ(sf_stat(&v, "/E/Z.TXT", &st), 0);  /* a cached directory sector past F */
    uint8_t x[512];
    memset(x, 0xEE, sizeof x);
    /* into F's own second cluster: fine (the check finds the gap between the cached
     * directory sectors clear) */
    CHECK_EQ(sf_seek(&f, 512, SF_SEEK_SET), 512);
    CHECK_EQ(sf_write(&f, x, 512), 512);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);  /* D's sector is in the cache now */
    /* whole sector into D's cluster */
    CHECK_EQ(sf_seek(&f, 1024, SF_SEEK_SET), 1024);
    sf_ssize_t w1 = sf_write(&f, x, 512);
    /* part of a sector there (the file's sector buffer) */
    CHECK_EQ(sf_seek(&f, 1030, SF_SEEK_SET), 1030);
    sf_ssize_t w2 = sf_write(&f, x, 16);
    int c1 = sf_close(&f);
    printf("cross-linked: whole sector -> %lld, 16 bytes -> %lld, close -> %d\n", (long long)w1,
           (long long)w2, c1);
    CHECK_EQ(w1, SF_ECORRUPT);
    CHECK_EQ(w2, SF_ECORRUPT);
    /* a new entry in D: written from the cache's copy of D's sector */
    struct sf_file g2;
    REQUIRE(sf_open(&v, &g2, "/D/C.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    CHECK_EQ(sf_close(&g2), 0);
    CHECK_EQ(sf_unmount(&v), 0);

    /* What the library said it wrote is there; D keeps its entries. */
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDONLY) == 0);
    uint8_t back[1536];
    CHECK_EQ(sf_read(&f, back, sizeof back), (sf_ssize_t)sizeof back);
    CHECK(!memcmp(back, data, 512));
    CHECK(!memcmp(back + 512, x, 512));
    if (w1 == 512)
        CHECK(!memcmp(back + 1024, x, 512));   /* said written: must read back */
    else
        CHECK(!memcmp(back + 1024, dsec, 64));  /* D's sector, as the corruption implies */
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/B.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/C.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/E/Z.TXT", &st), 0);
    CHECK_EQ(sf_unmount(&v), 0);

    /* The other order: 16 bytes buffered in the shared sector while D's sector is not
     * cached (nothing to see yet), then D's sector enters the cache: the buffered change
     * is dropped and reported, never written under the cache's copy. */
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDWR) == 0);
    CHECK_EQ(sf_seek(&f, 1040, SF_SEEK_SET), 1040);
    sf_ssize_t w3 = sf_write(&f, x, 16);
    CHECK_EQ(sf_stat(&v, "/D/B.TXT", &st), 0);
    int c3 = sf_close(&f);
    printf("cross-linked, buffered first: 16 bytes -> %lld, close -> %d\n", (long long)w3, c3);
    CHECK(w3 == SF_ECORRUPT || c3 == SF_ECORRUPT);
    REQUIRE(sf_open(&v, &g2, "/D/E.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    CHECK_EQ(sf_close(&g2), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDONLY) == 0);
    CHECK_EQ(sf_read(&f, back, sizeof back), (sf_ssize_t)sizeof back);
    if (w3 == 16 && c3 == 0)
        CHECK(!memcmp(back + 1040, x, 16));    /* said written: must read back */
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/E.TXT", &st), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void exfat_set_sum(uint8_t *set)
{
    unsigned n = (set[1] + 1u) * 32u;
    uint16_t sum = 0;
    for (unsigned i = 0; i < n; i++)
        if (i != 2 && i != 3)
            sum = (uint16_t)(((sum & 1) ? 0x8000 : 0) + (sum >> 1) + set[i]);
    set[2] = (uint8_t)sum;
    set[3] = (uint8_t)(sum >> 8);
}

/* ---- 3. the stream on an exFAT volume whose directory's cluster is free in the bitmap ---- */

/* Names in a directory, counted (the entries it lists). */
static int dir_count(struct sf_vol *v, const char *path)
{
    struct sf_dir d;
    struct sf_stat st;
    int n = 0, r;
    if (sf_opendir(v, &d, path))
        return -1;
    while ((r = sf_readdir(&d, &st)) > 0)
        n++;
    CHECK_EQ(sf_closedir(&d), 0);
    return r < 0 ? r : n;
}

/* The exFAT image's root directory (its first cluster) and cluster c's bytes. */
struct exfat {
    uint8_t *img;
    uint32_t heap, spc, root;
};

static void exfat_open(struct exfat *g, uint8_t *img)
{
    g->img = img;
    REQUIRE(!memcmp(img + 3, "EXFAT   ", 8) && img[0x6C] == 9);
    g->heap = rd32(img + 0x58);
    g->spc = 1u << img[0x6D];
    g->root = rd32(img + 0x60);
}

static uint8_t *exfat_clus(struct exfat *g, uint32_t c)
{
    return g->img + ((uint64_t)g->heap + (uint64_t)(c - 2) * g->spc) * 512;
}

/* late: the stream reserves D's cluster (expected_size) before D's sector is read into the
 * cache; the write then goes through the stream's direct path. */
static void cross_linked_stream(int late)
{
    static uint8_t sbuf[8192] __attribute__((aligned(64)));
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_file f;
    struct sf_stat st;
    uint8_t *disk = formatted_disk(&ram, X_BYTES, 0, SF_FS_EXFAT, 4096, 11);
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_mkdir(&v, "/D") == 0);          /* the last cluster allocated */
    for (int i = 0; i < 2; i++) {
        REQUIRE(sf_open(&v, &f, i ? "/D/B.TXT" : "/D/A.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
        REQUIRE(sf_close(&f) == 0);
    }
    REQUIRE(sf_stat(&v, "/D", &st) == 0);
    uint32_t dc = st.first_cluster;
    REQUIRE(sf_unmount(&v) == 0);

    /* The corruption: D's cluster is free in the allocation bitmap, so the stream's
     * allocation hands it out while the cache holds D's sector. */
    struct exfat g;
    exfat_open(&g, disk);
    uint8_t *root = exfat_clus(&g, g.root), *bm = NULL;
    for (unsigned e = 0; e < g.spc * 16; e++)
        if (root[e * 32] == 0x81)
            bm = exfat_clus(&g, rd32(root + e * 32 + 20));
    REQUIRE(bm && (bm[(dc - 2) / 8] >> ((dc - 2) % 8) & 1));
    bm[(dc - 2) / 8] &= (uint8_t)~(1u << ((dc - 2) % 8));

    REQUIRE(mount_on(&v, &ram.bd) == 0);
    if (!late)
        CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);  /* D's sector is in the cache */
    struct sf_stream s;
    struct sf_stream_cfg sc = { .prealloc_step = 4096, .expected_size = late ? 4096 : 0 };
    REQUIRE(sf_stream_open(&v, &s, "/S.BIN", &sc, sbuf, sizeof sbuf) == 0);
    if (late)
        CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);  /* now D's sector is cached */
    static uint8_t data[1024] __attribute__((aligned(64)));
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = pat(i);
    sf_ssize_t w = sf_stream_write(&s, data, sizeof data);
    int c = sf_stream_close(&s);
    printf("cross-linked stream (exFAT%s): write -> %lld, close -> %d\n",
           late ? ", directory cached after the reservation" : "", (long long)w, c);
    CHECK(w == SF_ECORRUPT || c == SF_ECORRUPT);
    struct sf_file g2;
    REQUIRE(sf_open(&v, &g2, "/D/C.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    CHECK_EQ(sf_close(&g2), 0);
    CHECK_EQ(sf_unmount(&v), 0);

    REQUIRE(mount_on(&v, &ram.bd) == 0);
    CHECK_EQ(dir_count(&v, "/D"), 3);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/B.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/C.TXT", &st), 0);
    if (w == (sf_ssize_t)sizeof data && c == 0) {   /* said written: must read back */
        uint8_t back[sizeof data];
        REQUIRE(sf_open(&v, &f, "/S.BIN", SF_O_RDONLY) == 0);
        CHECK_EQ(sf_read(&f, back, sizeof back), (sf_ssize_t)sizeof back);
        CHECK(!memcmp(back, data, sizeof data));
        CHECK_EQ(sf_close(&f), 0);
    }
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

/* ---- 4. a file cross-linked with a directory (exFAT, a NoFatChain file's range) ---- */
static void cross_linked_exfat(void)
{
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_file f;
    struct sf_stat st;
    uint8_t *disk = formatted_disk(&ram, X_BYTES, 0, SF_FS_EXFAT, 4096, 13);

    /* F of two clusters, then D right behind it */
    REQUIRE(mount_on(&v, &ram.bd) == 0);
    static uint8_t data[8192];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = pat(i);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_WRONLY | SF_O_CREAT) == 0);
    REQUIRE(sf_write(&f, data, sizeof data) == (sf_ssize_t)sizeof data);
    REQUIRE(sf_close(&f) == 0);
    REQUIRE(sf_mkdir(&v, "/D") == 0);
    for (int i = 0; i < 2; i++) {
        REQUIRE(sf_open(&v, &f, i ? "/D/B.TXT" : "/D/A.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
        REQUIRE(sf_close(&f) == 0);
    }
    REQUIRE(sf_stat(&v, "/D", &st) == 0);
    uint32_t dc = st.first_cluster;
    REQUIRE(sf_stat(&v, "/F.BIN", &st) == 0);
    uint32_t fc = st.first_cluster;
    REQUIRE(sf_unmount(&v) == 0);
    REQUIRE(dc == fc + 2);

    /* The corruption: F (contiguous, NoFatChain) three clusters long: its range runs into
     * D's cluster (in use in the bitmap already: D's). */
    struct exfat g;
    exfat_open(&g, disk);
    REQUIRE(g.spc == 8);
    uint8_t *root = exfat_clus(&g, g.root), *set = NULL, dold[512];
    memcpy(dold, exfat_clus(&g, dc), 512);     /* D's first sector, as it should stay */
    for (unsigned e = 0; e + 2 < g.spc * 16; e++)
        if (root[e * 32] == 0x85 && root[e * 32 + 32] == 0xC0 && rd32(root + e * 32 + 52) == fc)
            set = root + e * 32;
    REQUIRE(set && (set[33] & 2) && rd16(set + 64 + 2) == 'F');
    wr32(set + 32 + 8, 3 * 4096);                  /* ValidDataLength */
    wr32(set + 32 + 24, 3 * 4096);                 /* DataLength */
    exfat_set_sum(set);

    REQUIRE(mount_on(&v, &ram.bd) == 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDWR) == 0);
    uint8_t x[512];
    memset(x, 0xEE, sizeof x);
    CHECK_EQ(sf_seek(&f, 4096, SF_SEEK_SET), 4096); /* F's own cluster: fine */
    CHECK_EQ(sf_write(&f, x, 512), 512);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);      /* D's sector is in the cache now */
    CHECK_EQ(sf_seek(&f, 8192, SF_SEEK_SET), 8192);
    sf_ssize_t w1 = sf_write(&f, x, 512);
    CHECK_EQ(sf_seek(&f, 8198, SF_SEEK_SET), 8198);
    sf_ssize_t w2 = sf_write(&f, x, 16);
    int c1 = sf_close(&f);
    printf("cross-linked (exFAT): whole sector -> %lld, 16 bytes -> %lld, close -> %d\n",
           (long long)w1, (long long)w2, c1);
    CHECK_EQ(w1, SF_ECORRUPT);
    CHECK_EQ(w2, SF_ECORRUPT);
    struct sf_file g2;
    REQUIRE(sf_open(&v, &g2, "/D/C.TXT", SF_O_WRONLY | SF_O_CREAT) == 0);
    CHECK_EQ(sf_close(&g2), 0);
    CHECK_EQ(sf_unmount(&v), 0);

    REQUIRE(mount_on(&v, &ram.bd) == 0);
    CHECK_EQ(dir_count(&v, "/D"), 3);
    CHECK_EQ(sf_stat(&v, "/D/A.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/B.TXT", &st), 0);
    CHECK_EQ(sf_stat(&v, "/D/C.TXT", &st), 0);
    REQUIRE(sf_open(&v, &f, "/F.BIN", SF_O_RDONLY) == 0);
    static uint8_t back[3 * 4096];
    CHECK_EQ(sf_read(&f, back, sizeof back), (sf_ssize_t)sizeof back);
    CHECK(!memcmp(back, data, 4096));
    CHECK(!memcmp(back + 4096, x, 512));
    if (w1 == 512)
        CHECK(!memcmp(back + 8192, x, 512));   /* said written: must read back */
    else
        CHECK(!memcmp(back + 8192, dold, 64));  /* D's sector, as the corruption implies */
    CHECK_EQ(sf_close(&f), 0);
    CHECK_EQ(sf_unmount(&v), 0);
    free(disk);
}

int main(void)
{
    mkdir_big_clusters();
    cross_linked();
    cross_linked_stream(0);
    cross_linked_stream(1);
    cross_linked_exfat();
    TEST_END();
}
