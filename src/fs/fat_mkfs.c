/* sf_mkfs for FAT32 and FAT16 (called by sf_mkfs in exfat_mkfs.c): boot sector, FSInfo and
 * backups, the FATs, the root directory with the volume label.
 *
 * Layout (sectors; A = the alignment, 4 MiB by default, less for small volumes):
 *   device:  [table] [volume at A (or 0 without a table)] [GPT backup at the end]
 *   volume:  reserved sectors (FAT32: boot 0, FSInfo 1, backup boot 6, backup FSInfo 7;
 *            at least 32), FAT copies, FAT16 root region (512 entries), then the data area.
 * The reserved sector count is raised until the data area (cluster 2) starts on a multiple
 * of A, as the SD Association's formatter places it on the card's allocation units; with
 * clusters dividing A, every cluster lies within one allocation unit.
 *
 * Cluster size: the SD Association's choice for cards of the size (FAT16: 16 KiB up to
 * 1 GiB, 32 KiB above; FAT32: 32 KiB from 2 GiB, 4 KiB below), halved while the cluster
 * count would be below the type's minimum (FAT16 4,085; FAT32 65,525) and doubled while it
 * is above its maximum (FAT16 65,524), so that every tool takes the volume for the type it
 * was made as. A cluster size given by the caller is used as is or refused with a reason.
 *
 * Only metadata is written (reserved region, FATs, root directory), so a sparse image
 * formats at once. Write order: the old boot sector is wiped first and the new one written
 * last, after a flush, so an interrupted format leaves no volume that looks valid.
 *
 * Sections: geometry; sectors; writing. */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/fat_ondisk.h"
#include "fs/mkfs.h"
#include "util/le.h"
#include "util/time.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)

#define MBR_TYPE_FAT32_LBA 0x0C
#define MBR_TYPE_FAT16_LBA 0x0E
#define FAT16_ROOT_ENTRIES 512u
#define FAT32_MIN_RSVD 32u      /* boot, FSInfo, backups at 6 and 7, as every formatter */
#define FAT32_BACKUP_BOOT 6u
#define FAT32_FSINFO 1u
#define MEDIA_FIXED 0xF8u
#define MAX_CLUSTER (64 * KIB)
#define FIRST_CLUSTER 2u        /* the root directory (FAT32) */

/* ---- geometry ---- */

struct flayout {
    uint32_t ss;
    uint8_t bits;            /* 16 or 32 */
    uint32_t nfats;
    uint64_t align_s, vol_start, vol_len;
    uint32_t spc;
    uint32_t rsvd, fatsz, root_secs, data, cc;
    uint8_t label[11];       /* space padded; "NO NAME    " when none */
    int has_label;
};

static int pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static uint64_t round_up(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

static uint32_t min_clusters(const struct flayout *L)
{
    return L->bits == 32 ? FAT16_MAX_CLUSTERS + 1 : FAT12_MAX_CLUSTERS + 1;
}

static uint32_t max_clusters(const struct flayout *L)
{
    return L->bits == 32 ? FAT32_MAX_CLUSTERS : FAT16_MAX_CLUSTERS;
}

/* Place FATs, root and data area for L->spc. The FAT is sized for an upper bound of the
 * cluster count first, then shrunk to the count that fits behind the aligned data start;
 * the reserved region takes up the difference, so the data start stays aligned and the FAT
 * always covers cc + 2 entries. 0, or 1 when the volume cannot hold this layout. */
static int geometry(struct flayout *L)
{
    uint64_t epb = (uint64_t)L->ss * 8 / L->bits;       /* FAT entries per sector */
    uint64_t min_rsvd = L->bits == 32 ? FAT32_MIN_RSVD : 1;
    L->root_secs = L->bits == 16 ? FAT16_ROOT_ENTRIES * 32 / L->ss : 0;
    if (L->vol_len <= min_rsvd + L->root_secs)
        return 1;
    uint64_t cc = (L->vol_len - min_rsvd - L->root_secs) / L->spc;
    uint64_t fatsz = (cc + 2 + epb - 1) / epb;
    uint64_t data = round_up(min_rsvd + L->nfats * fatsz + L->root_secs, L->align_s);
    if (data >= L->vol_len)
        return 1;
    cc = (L->vol_len - data) / L->spc;
    fatsz = (cc + 2 + epb - 1) / epb;
    uint64_t rsvd = data - L->nfats * fatsz - L->root_secs;
    if (rsvd > 0xFFFF || data > 0xFFFFFFFFull || cc > 0xFFFFFFFFull)
        return 1;
    L->rsvd = (uint32_t)rsvd;
    L->fatsz = (uint32_t)fatsz;
    L->data = (uint32_t)data;
    L->cc = (uint32_t)cc;
    return 0;
}

static uint64_t preferred_cluster(const struct flayout *L)
{
    uint64_t bytes = L->vol_len * L->ss, c;
    if (L->bits == 16)
        c = bytes > 1 * GIB ? 32 * KIB : 16 * KIB;
    else
        c = bytes >= 2 * GIB ? 32 * KIB : 4 * KIB;
    return c < L->ss ? L->ss : c;
}

/* Characters a short name (and so a label) may hold, after upper-casing. */
static int label_char_ok(char c)
{
    static const char bad[] = "\"*+,./:;<=>?[\\]|";
    if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7E)
        return 0;
    for (const char *p = bad; *p; p++)
        if (*p == c)
            return 0;
    return 1;
}

static int plan(struct sf_bdev *bd, const struct sf_mkfs_opts *o, struct flayout *L,
                const char **why)
{
    struct mkfs_place P;
    int err;

    memset(L, 0, sizeof *L);
    L->ss = bd->sector_size;
    L->bits = o->fs_type == SF_FS_FAT32 ? 32 : 16;
    L->nfats = o->fats ? o->fats : 2;
    if (L->nfats > 2) {
        *why = "number of FATs must be 1 or 2";
        return SF_EINVAL;
    }
    if ((err = mkfs_place(bd, o, &P, why)))
        return err;
    L->align_s = P.align_s;
    L->vol_start = P.vol_start;
    L->vol_len = P.vol_len;
    if (L->vol_len > 0xFFFFFFFFull) {
        *why = "volume larger than 2^32 sectors, the FAT limit";
        return SF_EINVAL;
    }

    uint64_t cl = o->cluster_size;
    if (cl) {
        if (!pow2(cl) || cl < L->ss || cl > MAX_CLUSTER) {
            *why = "FAT cluster size must be a power of two from the sector size to 64 KiB";
            return SF_EINVAL;
        }
        L->spc = (uint32_t)(cl / L->ss);
        if (geometry(L) || L->cc < min_clusters(L)) {
            *why = L->bits == 32
                       ? "cluster size too large for FAT32 on this volume (fewer than 65,525 clusters)"
                       : "cluster size too large for FAT16 on this volume (fewer than 4,085 clusters)";
            return SF_EINVAL;
        }
        if (L->cc > max_clusters(L)) {
            *why = L->bits == 32
                       ? "cluster size too small for FAT32 on this volume (too many clusters)"
                       : "cluster size too small for FAT16 on this volume (more than 65,524 clusters)";
            return SF_EINVAL;
        }
    } else {
        cl = preferred_cluster(L);
        for (;;) {
            L->spc = (uint32_t)(cl / L->ss);
            int bad = geometry(L);
            if (!bad && L->cc > max_clusters(L) && cl < MAX_CLUSTER) {
                cl *= 2;
                continue;
            }
            if ((bad || L->cc < min_clusters(L)) && cl > L->ss &&
                !(L->cc > max_clusters(L))) {
                cl /= 2;
                continue;
            }
            if (bad || L->cc < min_clusters(L)) {
                *why = L->bits == 32
                           ? "volume too small for FAT32 (65,525 clusters of one sector)"
                           : "volume too small for FAT16 (4,085 clusters of one sector)";
                return SF_EINVAL;
            }
            if (L->cc > max_clusters(L)) {
                *why = L->bits == 32 ? "volume too large for FAT32"
                                     : "volume too large for FAT16 (65,524 clusters of 64 KiB)";
                return SF_EINVAL;
            }
            break;
        }
    }

    memset(L->label, ' ', 11);
    if (o->label && o->label[0]) {
        size_t n = 0;
        for (; o->label[n]; n++) {
            char c = o->label[n];
            if (c >= 'a' && c <= 'z')
                c = (char)(c - 'a' + 'A');
            if (n >= 11) {
                *why = "label longer than 11 characters";
                return SF_EINVAL;
            }
            if (!label_char_ok(c)) {
                *why = "FAT label characters: ASCII letters, digits, space and !#$%&'()-@^_`{}~";
                return SF_EINVAL;
            }
            L->label[n] = (uint8_t)c;
        }
        L->has_label = memcmp(L->label, "           ", 11) != 0;
        if (L->label[0] == ' ') {
            *why = "label starts with a space";
            return SF_EINVAL;
        }
    }
    if (!L->has_label)
        memcpy(L->label, "NO NAME    ", 11);
    return 0;
}

int fat_mkfs_fits(struct sf_bdev *bd, const struct sf_mkfs_opts *o)
{
    struct sf_mkfs_opts t = *o;
    struct flayout L;
    const char *why;
    t.fs_type = SF_FS_FAT16;
    t.label = NULL;
    return plan(bd, &t, &L, &why) == 0;
}

/* ---- sectors ---- */

static void boot_sector(const struct flayout *L, const struct sf_mkfs_opts *o, uint8_t *b)
{
    uint32_t total = (uint32_t)L->vol_len;
    memset(b, 0, L->ss);
    b[BPB_JMP] = 0xEB;
    b[BPB_JMP + 1] = L->bits == 32 ? 0x58 : 0x3C;   /* to the boot code after the BPB */
    b[BPB_JMP + 2] = 0x90;
    memcpy(b + BPB_OEM, "MSWIN4.1", 8);              /* what Microsoft recommends */
    st_le16(b + BPB_BYTES_PER_SEC, (uint16_t)L->ss);
    b[BPB_SEC_PER_CLUS] = (uint8_t)L->spc;
    st_le16(b + BPB_RSVD_SEC_CNT, (uint16_t)L->rsvd);
    b[BPB_NUM_FATS] = (uint8_t)L->nfats;
    st_le16(b + BPB_ROOT_ENT_CNT, (uint16_t)(L->bits == 16 ? FAT16_ROOT_ENTRIES : 0));
    if (L->bits == 16 && total < 0x10000)
        st_le16(b + BPB_TOT_SEC16, (uint16_t)total);
    else
        st_le32(b + BPB_TOT_SEC32, total);
    b[BPB_MEDIA] = MEDIA_FIXED;
    st_le16(b + BPB_SEC_PER_TRK, 63);
    st_le16(b + BPB_NUM_HEADS, 255);
    st_le32(b + BPB_HIDD_SEC, L->vol_start > 0xFFFFFFFFull ? 0 : (uint32_t)L->vol_start);
    uint32_t code;
    if (L->bits == 32) {
        st_le32(b + BPB32_FAT_SZ32, L->fatsz);
        st_le32(b + BPB32_ROOT_CLUS, FIRST_CLUSTER);
        st_le16(b + BPB32_FS_INFO, FAT32_FSINFO);
        st_le16(b + BPB32_BK_BOOT_SEC, FAT32_BACKUP_BOOT);
        b[BS32_DRV_NUM] = 0x80;
        b[BS32_BOOT_SIG] = 0x29;
        st_le32(b + BS32_VOL_ID, o->serial);
        memcpy(b + BS32_VOL_LAB, L->label, 11);
        memcpy(b + BS32_FIL_SYS_TYPE, "FAT32   ", 8);
        code = 90;
    } else {
        st_le16(b + BPB_FAT_SZ16, (uint16_t)L->fatsz);
        b[BS16_DRV_NUM] = 0x80;
        b[BS16_BOOT_SIG] = 0x29;
        st_le32(b + BS16_VOL_ID, o->serial);
        memcpy(b + BS16_VOL_LAB, L->label, 11);
        memcpy(b + BS16_FIL_SYS_TYPE, "FAT16   ", 8);
        code = 62;
    }
    /* Boot code: "hlt; jmp $-1" - this volume boots nothing. */
    b[code] = 0xF4;
    b[code + 1] = 0xEB;
    b[code + 2] = 0xFD;
    st_le16(b + BS_SIGNATURE, 0xAA55);
}

static void fsinfo_sector(const struct flayout *L, uint8_t *b)
{
    memset(b, 0, L->ss);
    st_le32(b + FSI_LEAD_SIG, FSI_LEAD_VALUE);
    st_le32(b + FSI_STRUC_SIG, FSI_STRUC_VALUE);
    st_le32(b + FSI_FREE_COUNT, L->cc - 1);        /* all but the root directory */
    st_le32(b + FSI_NXT_FREE, FIRST_CLUSTER + 1);
    st_le32(b + FSI_TRAIL_SIG, FSI_TRAIL_VALUE);
}

/* FAT sector `index` of a copy: entry 0 the media byte, entry 1 end-of-chain with the
 * clean-shutdown and no-error bits set, FAT32 entry 2 the root directory's one cluster. */
static void fat_sector(const struct flayout *L, uint32_t index, uint8_t *b)
{
    memset(b, 0, L->ss);
    if (index)
        return;
    if (L->bits == 32) {
        st_le32(b + 0, 0x0FFFFF00u | MEDIA_FIXED);
        st_le32(b + 4, 0x0FFFFFFFu);
        st_le32(b + 8, 0x0FFFFFFFu);
    } else {
        st_le16(b + 0, 0xFF00u | MEDIA_FIXED);
        st_le16(b + 2, 0xFFFFu);
    }
}

/* Root directory sector `index`: the label entry first, the rest end-of-directory. */
static void root_sector(const struct flayout *L, const struct sf_mkfs_opts *o, uint32_t index,
                        uint8_t *b)
{
    memset(b, 0, L->ss);
    if (index || !L->has_label)
        return;
    uint32_t dos = sf_time_to_dos(o->now, 0, NULL);
    memcpy(b + DIR_NAME, L->label, 11);
    b[DIR_ATTR] = ATTR_VOLUME_ID;
    st_le16(b + DIR_WRT_TIME, (uint16_t)dos);
    st_le16(b + DIR_WRT_DATE, (uint16_t)(dos >> 16));
}

/* ---- writing ---- */

/* Write `count` zero sectors at lba, in chunks of the work buffer. */
static int write_zeros_after(struct sf_bdev *bd, const struct sf_mkfs_opts *o, uint32_t ss,
                             uint64_t lba, uint64_t count)
{
    uint32_t per = o->buf_size / ss;
    uint64_t first_chunk = count < per ? count : per;
    memset(o->buf, 0, (size_t)first_chunk * ss);
    for (uint64_t done = 0; done < count;) {
        uint32_t k = count - done < per ? (uint32_t)(count - done) : per;
        int err = sf_bdev_write(bd, lba + done, o->buf, k);
        if (err)
            return err;
        done += k;
    }
    return 0;
}

/* A region whose first sector the caller built in o->buf; the rest is zeros. */
static int write_region(struct sf_bdev *bd, const struct sf_mkfs_opts *o, uint32_t ss,
                        uint64_t lba, uint64_t count)
{
    int err;
    if (!count)
        return 0;
    if ((err = sf_bdev_write(bd, lba, o->buf, 1)))
        return err;
    return write_zeros_after(bd, o, ss, lba + 1, count - 1);
}

int fat_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why)
{
    static const char *none = "";
    struct flayout L;
    uint8_t *b = o->buf;
    int err;

    if ((err = plan(bd, o, &L, why)))
        return err;
    *why = none;
    uint64_t v = L.vol_start;

    /* 1. No old boot sector survives an interrupted format. */
    if ((err = write_zeros_after(bd, o, L.ss, v, 1)))
        return err;
    /* 2. The partition table. */
    uint8_t type = L.bits == 32 ? MBR_TYPE_FAT32_LBA : MBR_TYPE_FAT16_LBA;
    if ((err = mkfs_write_table(bd, o, v, L.vol_len, type, why)))
        return err;
    /* 3. The reserved region after the boot sector (no stale FSInfo or backup survives),
     *    every FAT copy whole (stale entries would be taken for chains), the root
     *    directory (all of it: entries past the end marker must read as unused). */
    if ((err = write_zeros_after(bd, o, L.ss, v + 1, L.rsvd - 1)))
        return err;
    for (uint32_t k = 0; k < L.nfats; k++) {
        fat_sector(&L, 0, b);
        if ((err = write_region(bd, o, L.ss, v + L.rsvd + (uint64_t)k * L.fatsz, L.fatsz)))
            return err;
    }
    uint64_t root = L.bits == 32 ? v + L.data : v + L.rsvd + (uint64_t)L.nfats * L.fatsz;
    root_sector(&L, o, 0, b);
    if ((err = write_region(bd, o, L.ss, root, L.bits == 32 ? L.spc : L.root_secs)))
        return err;
    /* 4. FAT32: FSInfo and the backups; the backup boot sector before the main one. */
    if (L.bits == 32) {
        fsinfo_sector(&L, b);
        if ((err = sf_bdev_write(bd, v + FAT32_FSINFO, b, 1)) ||
            (err = sf_bdev_write(bd, v + FAT32_BACKUP_BOOT + 1, b, 1)))
            return err;
        boot_sector(&L, o, b);
        if ((err = sf_bdev_write(bd, v + FAT32_BACKUP_BOOT, b, 1)))
            return err;
    }
    /* 5. Everything else is on the medium before the boot sector makes it a volume. */
    if ((err = sf_bdev_flush(bd)))
        return err;
    boot_sector(&L, o, b);
    if ((err = sf_bdev_write(bd, v, b, 1)) || (err = sf_bdev_flush(bd)))
        return err;
    return 0;
}
