/* sf_mkfs for exFAT: partition table (optional), boot regions, FAT, allocation bitmap,
 * up-case table and root directory.
 *
 * Layout (all offsets in sectors; A = the alignment):
 *   device:  [table] [volume at A (or 0 without a table)] [GPT backup at the end]
 *   volume:  0..11 main boot region, 12..23 backup, FAT at FatOffset = A (rounded up to
 *            at least 24), cluster heap at the first multiple of A after the FAT.
 *   heap:    cluster 2.. allocation bitmap, then the up-case table, then the root directory.
 * Since the partition itself starts on a multiple of A, the FAT and every cluster at a
 * multiple of A from the heap lie on A boundaries of the device, as the SD Association's
 * formatter places them on the card's allocation units.
 *
 * Only metadata is written: boot regions, the whole FAT, the bitmap and up-case table, the
 * root directory's cluster. The cluster heap is never touched, so a sparse multi-TB image formats at once.
 * Write order: the old boot sector is wiped first and the new one written last, so an
 * interrupted format leaves no volume that looks valid but is half made.
 *
 * sf_mkfs itself (at the end) picks the file system and hands FAT32/FAT16 to fat_mkfs.c;
 * the volume placement and partition table writing here are shared with it (mkfs.h).
 *
 * Sections: options and geometry; sector builders; writing; shared; dispatch. */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/exfat_ondisk.h"
#include "fs/part.h"
#include "fs/mkfs.h"
#include "util/le.h"
#include "util/utf.h"
#include "util/upcase.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)
#define TIB (1024ull * GIB)

#define MBR_TYPE_EXFAT 0x07
#define GPT_ENTRY_BYTES 16384u  /* part_gpt.c writes 128 entries of 128 bytes */

/* ---- options and geometry ---- */

struct layout {
    uint32_t ss;            /* sector size */
    uint8_t sector_shift, spc_shift;
    uint32_t cluster;       /* bytes */
    uint64_t align_s;       /* alignment, sectors */
    uint64_t vol_start;     /* device sectors */
    uint64_t vol_len;       /* sectors */
    uint32_t fat_off, fat_len, heap_off, cluster_count;
    uint64_t bitmap_bytes;
    uint32_t bitmap_clusters, upcase_clusters;
    uint32_t bitmap_first, upcase_first, root_first, used;  /* used: system clusters */
    uint16_t label[EXFAT_LABEL_MAX];
    uint8_t label_len;
};

static unsigned log2u(uint64_t x)
{
    unsigned n = 0;
    while (x > 1) {
        x >>= 1;
        n++;
    }
    return n;
}

static int pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

/* Microsoft's and the SD Association's default exFAT cluster sizes:
 *   volume <= 256 MiB: 4 KiB;  <= 32 GiB: 32 KiB;  larger (up to 256 TiB): 128 KiB. */
static uint32_t default_cluster(uint64_t bytes)
{
    if (bytes <= 256 * MIB)
        return 4 * KIB;
    if (bytes <= 32 * GIB)
        return 32 * KIB;
    return 128 * KIB;
}

/* Default alignment: 4 MiB (the allocation unit of SD cards and a multiple of the erase
 * block of most flash) from 256 MiB up. Below, the three aligned starts (partition, FAT,
 * heap) would waste too much, so it is the largest power of two <= 1/64 of the space, at
 * least 64 KiB (64 MiB -> 1 MiB, 16 MiB -> 256 KiB, 4 MiB and less -> 64 KiB). A device
 * that reports a larger preferred alignment (erase block) gets that, up to 64 MiB. */
uint64_t mkfs_default_align(uint64_t bytes, const struct sf_bdev *bd)
{
    uint64_t a = 4 * MIB;
    if (bytes < 256 * MIB) {
        a = 64 * KIB;
        while (a * 2 <= bytes / 64)
            a *= 2;
    }
    uint64_t dev = (uint64_t)bd->align_sectors * bd->sector_size;
    if (pow2(dev) && dev > a && dev <= 64 * MIB)
        a = dev;
    return a;
}

static uint64_t round_up(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

static int plan(struct sf_bdev *bd, const struct sf_mkfs_opts *o, struct layout *L,
                const char **why)
{
    uint32_t ss = bd->sector_size;
    struct mkfs_place P;
    int err;

    memset(L, 0, sizeof *L);
    L->ss = ss;
    L->sector_shift = (uint8_t)log2u(ss);
    if ((err = mkfs_place(bd, o, &P, why)))
        return err;
    L->align_s = P.align_s;
    L->vol_start = P.vol_start;
    L->vol_len = P.vol_len;
    if (L->vol_len * ss < 1 * MIB) {
        *why = "volume smaller than 1 MiB (the exFAT minimum)";
        return SF_EINVAL;
    }

    /* Cluster size. */
    uint64_t cl = o->cluster_size;
    if (cl) {
        if (!pow2(cl) || cl < 4 * KIB || cl > 32 * MIB) {
            *why = "cluster size must be a power of two from 4 KiB to 32 MiB";
            return SF_EINVAL;
        }
        if (cl < ss) {
            *why = "cluster size smaller than the sector size";
            return SF_EINVAL;
        }
    } else {
        cl = default_cluster(L->vol_len * ss);
        if (cl < ss)
            cl = ss;
    }
    L->cluster = (uint32_t)cl;
    L->spc_shift = (uint8_t)(log2u(cl) - L->sector_shift);
    uint64_t spc = cl / ss;

    /* FAT and heap. FatLength is sized for an upper bound of the cluster count first, then
     * for the count that fits behind the heap offset this gives (never more). */
    uint64_t fat_off = round_up(EXFAT_BOOT_REGION_SECTORS * 2, L->align_s);
    if (fat_off >= L->vol_len) {
        *why = "volume too small for this alignment";
        return SF_EINVAL;
    }
    uint64_t cc = (L->vol_len - fat_off) / spc;
    uint64_t fat_len = round_up((cc + 2) * 4, ss) / ss;
    uint64_t heap = round_up(fat_off + fat_len, L->align_s);
    if (heap >= L->vol_len || heap > 0xFFFFFFFFull) {
        *why = "volume too small for this alignment and cluster size";
        return SF_EINVAL;
    }
    cc = (L->vol_len - heap) / spc;
    if (cc > EXFAT_MAX_CLUSTERS) {
        *why = "cluster size too small for this volume size (more than 2^32 - 11 clusters)";
        return SF_EINVAL;
    }
    fat_len = round_up((cc + 2) * 4, ss) / ss;
    if (fat_off > 0xFFFFFFFFull || fat_len > 0xFFFFFFFFull) {
        *why = "alignment too large";
        return SF_EINVAL;
    }
    L->fat_off = (uint32_t)fat_off;
    L->fat_len = (uint32_t)fat_len;
    L->heap_off = (uint32_t)heap;
    L->cluster_count = (uint32_t)cc;

    /* System clusters: bitmap, up-case table, root directory. */
    L->bitmap_bytes = (cc + 7) / 8;
    L->bitmap_clusters = (uint32_t)((L->bitmap_bytes + cl - 1) / cl);
    L->upcase_clusters = (uint32_t)((sf_upcase_table_units * 2 + cl - 1) / cl);
    L->bitmap_first = EXFAT_FIRST_CLUSTER;
    L->upcase_first = L->bitmap_first + L->bitmap_clusters;
    L->root_first = L->upcase_first + L->upcase_clusters;
    L->used = L->bitmap_clusters + L->upcase_clusters + 1;
    if (cc < (uint64_t)L->used + 1) {
        *why = "volume too small for this cluster size";
        return SF_EINVAL;
    }

    /* Label. */
    if (o->label && o->label[0]) {
        int r = sf_utf8_to_utf16(o->label, sf_strlen(o->label), L->label, EXFAT_LABEL_MAX);
        if (r == SF_ENAMETOOLONG) {
            *why = "label longer than 11 UTF-16 units";
            return SF_EINVAL;
        }
        if (r < 0) {
            *why = "label is not valid UTF-8";
            return SF_EINVAL;
        }
        L->label_len = (uint8_t)r;
    }
    return 0;
}

/* ---- sector builders ---- */

/* Boot region sector s (0..10) into b. */
static void boot_sector(const struct layout *L, const struct sf_mkfs_opts *o, uint32_t s,
                        uint8_t *b)
{
    memset(b, 0, L->ss);
    if (s == EXFAT_BOOT_MAIN) {
        b[0] = 0xEB;
        b[1] = 0x76;
        b[2] = 0x90;
        memcpy(b + EXBS_FSNAME, "EXFAT   ", 8);
        st_le64(b + EXBS_PARTITION_OFFSET, L->vol_start);
        st_le64(b + EXBS_VOLUME_LENGTH, L->vol_len);
        st_le32(b + EXBS_FAT_OFFSET, L->fat_off);
        st_le32(b + EXBS_FAT_LENGTH, L->fat_len);
        st_le32(b + EXBS_HEAP_OFFSET, L->heap_off);
        st_le32(b + EXBS_CLUSTER_COUNT, L->cluster_count);
        st_le32(b + EXBS_ROOT_CLUSTER, L->root_first);
        st_le32(b + EXBS_SERIAL, o->serial);
        st_le16(b + EXBS_FS_REVISION, 0x0100);
        st_le16(b + EXBS_VOLUME_FLAGS, 0);
        b[EXBS_SECTOR_SHIFT] = L->sector_shift;
        b[EXBS_SPC_SHIFT] = L->spc_shift;
        b[EXBS_NUM_FATS] = 1;
        b[EXBS_DRIVE_SELECT] = 0x80;
        b[EXBS_PERCENT_IN_USE] = (uint8_t)((uint64_t)L->used * 100 / L->cluster_count);
        /* Boot code: "hlt; jmp $-1" - this volume boots nothing. */
        b[EXBS_BOOT_CODE] = 0xF4;
        b[EXBS_BOOT_CODE + 1] = 0xEB;
        b[EXBS_BOOT_CODE + 2] = 0xFD;
        st_le16(b + EXBS_SIGNATURE, 0xAA55);
    } else if (s >= EXFAT_BOOT_EXT_FIRST && s <= EXFAT_BOOT_EXT_LAST) {
        st_le32(b + L->ss - 4, EXFAT_EXT_SIGNATURE);
    }
    /* OEM parameters (9) and reserved (10): zero. */
}

/* Boot checksum over sectors 0..10, skipping VolumeFlags and PercentInUse of sector 0. */
static uint32_t boot_checksum_step(uint32_t sum, const uint8_t *b, uint32_t len, int first)
{
    for (uint32_t i = 0; i < len; i++) {
        if (first && (i == EXBS_VOLUME_FLAGS || i == EXBS_VOLUME_FLAGS + 1 ||
                      i == EXBS_PERCENT_IN_USE))
            continue;
        sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + b[i];
    }
    return sum;
}

/* FAT entry i: entries 0 and 1 fixed, the system objects' chains, the rest free. */
static uint32_t fat_entry(const struct layout *L, uint64_t i)
{
    if (i == 0)
        return EXFAT_FAT_MEDIA;
    if (i == 1)
        return EXFAT_FAT_ENTRY1;
    if (i < L->bitmap_first || i >= (uint64_t)L->root_first + 1)
        return 0;
    if (i == (uint64_t)L->upcase_first - 1 || i == (uint64_t)L->root_first - 1 ||
        i == L->root_first)
        return EXFAT_FAT_EOC;
    return (uint32_t)i + 1;
}

/* ---- writing ---- */

/* Write `count` sectors at lba, filled by fill(ctx, sector index from lba, sector) - or
 * zeros when fill is NULL - in chunks of the work buffer. */
typedef void (*fill_fn)(const struct layout *L, uint64_t index, uint8_t *sec);

static int write_run(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const struct layout *L,
                     uint64_t lba, uint64_t count, fill_fn fill)
{
    uint32_t per = o->buf_size / L->ss;
    uint8_t *b = o->buf;
    int zeroed = 0, err;

    for (uint64_t done = 0; done < count;) {
        uint32_t k = count - done < per ? (uint32_t)(count - done) : per;
        if (fill) {
            for (uint32_t j = 0; j < k; j++)
                fill(L, done + j, b + (size_t)j * L->ss);
        } else if (!zeroed) {
            memset(b, 0, (size_t)k * L->ss);
            zeroed = 1;               /* later chunks are never longer than the first */
        }
        if ((err = sf_bdev_write(bd, lba + done, b, k)))
            return err;
        done += k;
    }
    return 0;
}

static void fill_fat(const struct layout *L, uint64_t index, uint8_t *sec)
{
    uint32_t per = L->ss / 4;
    uint64_t first = index * per;
    memset(sec, 0, L->ss);
    if (first > (uint64_t)L->root_first)
        return;
    for (uint32_t j = 0; j < per; j++)
        st_le32(sec + 4 * j, fat_entry(L, first + j));
}

static void fill_bitmap(const struct layout *L, uint64_t index, uint8_t *sec)
{
    uint64_t bit0 = index * L->ss * 8;   /* bit number of the sector's first bit */
    memset(sec, 0, L->ss);
    for (uint64_t c = bit0; c < L->used && c < bit0 + (uint64_t)L->ss * 8; c++)
        sec[(c - bit0) / 8] |= (uint8_t)(1u << (c % 8));
}

static void fill_upcase(const struct layout *L, uint64_t index, uint8_t *sec)
{
    uint64_t u0 = index * L->ss / 2;
    memset(sec, 0, L->ss);
    for (uint32_t j = 0; j < L->ss / 2 && u0 + j < sf_upcase_table_units; j++)
        st_le16(sec + 2 * j, sf_upcase_table[u0 + j]);
}

static void fill_root(const struct layout *L, uint64_t index, uint8_t *sec)
{
    memset(sec, 0, L->ss);
    if (index != 0)
        return;
    uint8_t *e = sec;
    e[EXDE_TYPE] = L->label_len ? EXDE_LABEL : (EXDE_LABEL & ~EXDE_INUSE);
    e[EXDE_LABEL_LEN] = L->label_len;
    for (unsigned i = 0; i < L->label_len; i++)
        st_le16(e + EXDE_LABEL_CHARS + 2 * i, L->label[i]);
    e += EXDE_SIZE;
    e[EXDE_TYPE] = EXDE_BITMAP;
    e[EXDE_BITMAP_FLAGS] = 0;
    st_le32(e + EXDE_FIRST_CLUSTER, L->bitmap_first);
    st_le64(e + EXDE_DATA_LENGTH, L->bitmap_bytes);
    e += EXDE_SIZE;
    e[EXDE_TYPE] = EXDE_UPCASE;
    st_le32(e + EXDE_UPCASE_CHECKSUM, sf_upcase_table_checksum);
    st_le32(e + EXDE_FIRST_CLUSTER, L->upcase_first);
    st_le64(e + EXDE_DATA_LENGTH, (uint64_t)sf_upcase_table_units * 2);
}

/* A GUID from the serial when the caller gave none: deterministic, marked version 4. */
static void fallback_guid(uint8_t g[16], const uint8_t given[16], uint64_t seed)
{
    static const uint8_t zero[16];
    if (memcmp(given, zero, 16)) {
        memcpy(g, given, 16);
        return;
    }
    for (int i = 0; i < 2; i++) {
        seed += 0x9E3779B97F4A7C15ull;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        st_le64(g + 8 * i, z);
    }
    g[7] = (uint8_t)((g[7] & 0x0F) | 0x40);
    g[8] = (uint8_t)((g[8] & 0x3F) | 0x80);
}

/* ---- shared with fat_mkfs.c (mkfs.h) ---- */

int mkfs_place(struct sf_bdev *bd, const struct sf_mkfs_opts *o, struct mkfs_place *P,
               const char **why)
{
    uint32_t ss = bd->sector_size;
    uint64_t n = bd->sector_count;

    memset(P, 0, sizeof *P);
    if (!pow2(ss) || ss < 512 || ss > 4096) {
        *why = "device sector size is not 512..4096";
        return SF_EINVAL;
    }
    if (!o->buf || o->buf_size < ss) {
        *why = "work buffer smaller than one sector";
        return SF_EINVAL;
    }
    if (o->partition > SF_PART_GPT) {
        *why = "unknown partition scheme";
        return SF_EINVAL;
    }
    if (o->partition == SF_PART_GPT && !SF_HAVE_GPT) {
        *why = "GPT support is not built in (SF_NO_GPT)";   /* before anything is written */
        return SF_ENOTSUP;
    }
    uint64_t use = mkfs_use_sectors(bd, o);           /* device sectors we may use */
    if (o->size && o->size / ss > n) {
        *why = "size is larger than the device";
        return SF_EINVAL;
    }

    uint64_t align = o->align ? o->align : mkfs_default_align(use * ss, bd);
    if (!pow2(align) || align < ss || align > 1 * GIB) {
        *why = "alignment must be a power of two from one sector to 1 GiB";
        return SF_EINVAL;
    }
    P->align_s = align / ss;

    /* Where the volume lies on the device. */
    if (o->partition == SF_PART_NONE) {
        P->vol_start = 0;
        P->vol_len = use;
    } else if (o->partition == SF_PART_MBR) {
        P->vol_start = P->align_s;
        P->vol_len = use > P->vol_start ? use - P->vol_start : 0;
        if (P->vol_len > 0xFFFFFFFFull || P->vol_start > 0xFFFFFFFFull) {
            *why = "an MBR cannot describe a partition this large (2^32 sectors); use GPT";
            return SF_EINVAL;
        }
    } else {
        uint64_t es = GPT_ENTRY_BYTES / ss;
        P->vol_start = round_up(2 + es, P->align_s);
        uint64_t end = n > 2 + es ? n - 1 - es : 0;   /* one past the last usable sector */
        if (use < end)
            end = use;
        P->vol_len = end > P->vol_start ? end - P->vol_start : 0;
    }
    /* A partition also ends on a 1 MiB boundary (or the alignment, if smaller), as
     * partitioners and disk-encryption tools expect; this gives up less than 1 MiB. */
    if (o->partition != SF_PART_NONE) {
        uint64_t g = 1 * MIB / ss < P->align_s ? 1 * MIB / ss : P->align_s;
        uint64_t end = (P->vol_start + P->vol_len) / g * g;
        if (end > P->vol_start)
            P->vol_len = end - P->vol_start;
    }
    return 0;
}

uint64_t mkfs_use_sectors(const struct sf_bdev *bd, const struct sf_mkfs_opts *o)
{
    uint64_t n = bd->sector_count;
    if (o->size && o->size / bd->sector_size <= n)
        n = o->size / bd->sector_size;
    return n;
}

int mkfs_write_table(struct sf_bdev *bd, const struct sf_mkfs_opts *o, uint64_t vol_start,
                     uint64_t vol_len, uint8_t mbr_type, const char **why)
{
    int err = 0;
    if (o->partition == SF_PART_MBR) {
        err = sf_part_write_mbr(bd, o->buf, vol_start, vol_len, mbr_type);
    } else if (o->partition == SF_PART_GPT) {
        uint8_t dg[16], pg[16];
        fallback_guid(dg, o->disk_guid, (uint64_t)o->serial << 32 | 0xD15Cu);
        fallback_guid(pg, o->part_guid, (uint64_t)o->serial << 32 | 0x9A27u);
        err = sf_part_write_gpt(bd, o->buf, vol_start, vol_len, dg, pg);
    }
    if (err == SF_EINVAL)
        *why = "partition table does not fit the device";
    return err;
}

static int exfat_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why)
{
    static const char *none = "";
    struct layout L;
    int err;

    if ((err = plan(bd, o, &L, why)))
        return err;
    *why = none;

    uint8_t *b = o->buf;
    uint64_t v = L.vol_start;
    uint64_t spc = 1ull << L.spc_shift;

    /* 1. No old boot sector survives an interrupted format. */
    if ((err = write_run(bd, o, &L, v, 1, NULL)))
        return err;
    /* 2. The partition table. */
    if ((err = mkfs_write_table(bd, o, v, L.vol_len, MBR_TYPE_EXFAT, why)))
        return err;
    /* 3. FAT (all of it: stale entries would be taken for chains), bitmap and up-case table
     *    (up to their DataLength; the rest of their clusters means nothing), root directory
     *    (the whole cluster: entries past the end marker must read as unused). */
    uint64_t bitmap_lba = v + L.heap_off + (uint64_t)(L.bitmap_first - 2) * spc;
    uint64_t upcase_lba = v + L.heap_off + (uint64_t)(L.upcase_first - 2) * spc;
    uint64_t root_lba = v + L.heap_off + (uint64_t)(L.root_first - 2) * spc;
    if ((err = write_run(bd, o, &L, v + L.fat_off, L.fat_len, fill_fat)) ||
        (err = write_run(bd, o, &L, bitmap_lba, (L.bitmap_bytes + L.ss - 1) / L.ss, fill_bitmap)) ||
        (err = write_run(bd, o, &L, upcase_lba, (sf_upcase_table_units * 2 + L.ss - 1) / L.ss,
                         fill_upcase)) ||
        (err = write_run(bd, o, &L, root_lba, spc, fill_root)))
        return err;

    /* 4. Backup boot region (computing the checksum), then the main one, sector 0 last. */
    uint32_t sum = 0;
    for (uint32_t s = 0; s < EXFAT_BOOT_CHECKSUM; s++) {
        boot_sector(&L, o, s, b);
        sum = boot_checksum_step(sum, b, L.ss, s == 0);
        if ((err = sf_bdev_write(bd, v + EXFAT_BOOT_BACKUP + s, b, 1)))
            return err;
    }
    for (uint32_t i = 0; i < L.ss / 4; i++)
        st_le32(b + 4 * i, sum);
    if ((err = sf_bdev_write(bd, v + EXFAT_BOOT_BACKUP + EXFAT_BOOT_CHECKSUM, b, 1)) ||
        (err = sf_bdev_write(bd, v + EXFAT_BOOT_MAIN + EXFAT_BOOT_CHECKSUM, b, 1)))
        return err;
    for (uint32_t s = EXFAT_BOOT_CHECKSUM - 1; s >= 1; s--) {
        boot_sector(&L, o, s, b);
        if ((err = sf_bdev_write(bd, v + s, b, 1)))
            return err;
    }
    if ((err = sf_bdev_flush(bd)))
        return err;
    boot_sector(&L, o, 0, b);
    if ((err = sf_bdev_write(bd, v, b, 1)) || (err = sf_bdev_flush(bd)))
        return err;
    return 0;
}

/* The file system for fs_type 0: by the space used, as SD (up to 2 GB: FAT16), SDHC (up to
 * 32 GB: FAT32) and SDXC (exFAT) cards are formatted. */
static uint8_t auto_type(struct sf_bdev *bd, const struct sf_mkfs_opts *o)
{
    uint64_t bytes = mkfs_use_sectors(bd, o) * bd->sector_size;
    if (bytes <= 2 * GIB)
        return SF_FS_FAT16;
    if (bytes <= 32 * GIB)
        return SF_FS_FAT32;
    return SF_FS_EXFAT;
}

int sf_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why)
{
    static const char *none = "";
    const char *dummy;

    if (!why)
        why = &dummy;
    *why = none;
    if (!bd || !o)
        return SF_EINVAL;
    if (bd->flags & SF_BDEV_READONLY) {
        *why = "device is read-only";
        return SF_EROFS;
    }
    uint8_t type = o->fs_type;
    if (type == SF_FS_NONE) {
        type = auto_type(bd, o);
        /* Too small for FAT16 (4,085 clusters of at most one sector each): exFAT. */
        if (type == SF_FS_FAT16 && !fat_mkfs_fits(bd, o))
            type = SF_FS_EXFAT;
    }
    if (type == SF_FS_EXFAT) {
        if (!SF_HAVE_EXFAT) {
            *why = "exFAT support is not built in (SF_NO_EXFAT)";
            return SF_ENOTSUP;
        }
        return exfat_mkfs(bd, o, why);
    }
    if (type == SF_FS_FAT32 || type == SF_FS_FAT16) {
        struct sf_mkfs_opts t = *o;
        t.fs_type = type;
        return fat_mkfs(bd, &t, why);
    }
    *why = "file system type must be exFAT, FAT32 or FAT16 (FAT12 is read-only)";
    return SF_ENOTSUP;
}
