/* FAT12/16/32 volumes: BPB validation, type detection, the FSInfo sector, the media entries
 * of every FAT copy, the volume label, and the clean-shutdown / hard-error bits of FAT[1].
 *
 * Type: FAT32 exactly when BPB_FATSz16 is 0 (as Linux and dosfstools decide), otherwise
 * FAT12 below 4085 clusters and FAT16 from there. A cluster count outside the type's range
 * mounts with info.warning set. FAT12 is mounted read-only.
 *
 * Mount reads the boot sector, FSInfo, the first sector of each FAT and the root directory
 * up to its label entry; nothing else: free space is found lazily (fat_table.c), so mounting
 * a 2 TB FAT32 volume costs a handful of sector reads.
 *
 * Sections: BPB; FSInfo and FAT[0..1]; label; mount; dirty state and free count. */
#include "fs/fat.h"
#include "fs/fat_ondisk.h"
#include "util/div64.h"

#define WHY(msg) (v->why = SF_WHY(msg), SF_ECORRUPT)

static uint8_t log2u(uint32_t x)
{
    uint8_t n = 0;
    while (x > 1) {
        x >>= 1;
        n++;
    }
    return n;
}

/* ---- BPB ---- */

/* sf_mount comes here only for a sector that sf_boot_sector_kind (part.c) took for FAT:
 * BPB_BytsPerSec is 512, 1024, 2048 or 4096, BPB_SecPerClus a power of two (so at most
 * 128), BPB_RsvdSecCnt and BPB_NumFATs are not 0, and the FAT size (BPB_FATSz16, else
 * BPB_FATSz32) is not 0. The checks below are the rest. */
static int check_bpb(struct sf_vol *v, const uint8_t *b)
{
    uint32_t bps = ld_le16(b + BPB_BYTES_PER_SEC), spc = b[BPB_SEC_PER_CLUS];
    uint32_t rsvd = ld_le16(b + BPB_RSVD_SEC_CNT), nfats = b[BPB_NUM_FATS];
    uint32_t root_ents = ld_le16(b + BPB_ROOT_ENT_CNT);
    uint32_t fatsz = ld_le16(b + BPB_FAT_SZ16);
    uint32_t total = ld_le16(b + BPB_TOT_SEC16);
    int fat32 = fatsz == 0;

    if (ld_le16(b + BS_SIGNATURE) != 0xAA55)
        return WHY("boot sector signature is not 0xAA55");
    if (bps != v->cfg.bd->sector_size) {
        v->why = bps == 4096 ? SF_WHY("volume has 4096-byte sectors but the device 512")
                             : SF_WHY("volume sector size differs from the device's");
        return SF_EINVAL;
    }
    if (spc * bps > 256 * 1024)             /* both at most 4096: no overflow */
        return WHY("clusters larger than 256 KiB");
    /* More than two copies are legal and rare; each is kept identical like the second. */
    if (nfats > 4)
        return WHY("BPB_NumFATs is not 1..4");
    if (!total)
        total = ld_le32(b + BPB_TOT_SEC32);
    if (fat32) {
        fatsz = ld_le32(b + BPB32_FAT_SZ32);
        if (root_ents)
            return WHY("FAT32 volume with BPB_RootEntCnt not 0");
        /* BPB_TotSec16 should be 0 on FAT32, but mkfs.fat fills it on small volumes and
         * every reader takes it when it is not 0: so do we. */
    } else {
        if (!root_ents || (root_ents * 32) % bps)
            return WHY("BPB_RootEntCnt does not fill whole sectors");
    }
    if (total > v->bd->sector_count)
        return WHY("BPB total sectors run past the end of the device");
    uint32_t root_secs = root_ents * 32 / bps;
    uint64_t data = rsvd + (uint64_t)nfats * fatsz + root_secs;
    if (data >= total)
        return WHY("FATs and root directory leave no data area");
    uint32_t count = (uint32_t)(total - data) / spc;      /* total > data, both 32-bit */
    uint8_t bits = fat32 ? 32 : count < FAT12_MAX_CLUSTERS + 1 ? 12 : 16;
    uint32_t max = bits == 32 ? FAT32_MAX_CLUSTERS : bits == 16 ? FAT16_MAX_CLUSTERS
                                                               : FAT12_MAX_CLUSTERS;
    uint32_t min = bits == 32 ? FAT16_MAX_CLUSTERS + 1 : bits == 16 ? FAT12_MAX_CLUSTERS + 1 : 1;
    if (count == 0)
        return WHY("no clusters");
    if (count < min || count > max)
        v->info.warning = bits == 32 ? "FAT32 volume with fewer than 65,525 clusters"
                                     : "cluster count outside its FAT type's range";
    if (count > max)
        count = max;   /* the rest cannot be named by an entry of this width */
    /* The FAT's entries, fatsz * bps * 8 / bits, are fewer than count + 2: compared
     * multiplied out, without a 64-bit divide. */
    if ((uint64_t)fatsz * bps * 8 < (uint64_t)(count + 2) * bits)
        return WHY("FAT too small for the cluster count");

    v->sector_shift = log2u(bps);
    v->spc_shift = log2u(spc);
    v->cluster_shift = (uint8_t)(v->sector_shift + v->spc_shift);
    v->fat_offset = rsvd;
    v->fat_length = fatsz;
    v->num_fats = (uint8_t)nfats;
    v->fat_bits = bits;
    v->root_entries = fat32 ? 0 : root_ents;
    v->root_sector = fat32 ? 0 : rsvd + nfats * fatsz;
    v->heap_offset = (uint32_t)data;
    v->cluster_count = (uint32_t)count;
    v->fs_type = bits == 32 ? SF_FS_FAT32 : bits == 16 ? SF_FS_FAT16 : SF_FS_FAT12;

    if (fat32) {
        uint32_t root = ld_le32(b + BPB32_ROOT_CLUS);
        uint16_t ext = ld_le16(b + BPB32_EXT_FLAGS);
        if (!clus_ok(v, root))
            return WHY("BPB_RootClus out of range");
        if (ld_le16(b + BPB32_FS_VER))
            return WHY("BPB_FSVer is not 0.0");
        v->root_cluster = root;
        v->fsinfo_sector = ld_le16(b + BPB32_FS_INFO);
        if (v->fsinfo_sector == 0 || v->fsinfo_sector == 0xFFFF || v->fsinfo_sector >= rsvd)
            v->fsinfo_sector = 0;               /* no usable FSInfo: no hints */
        if (ext & 0x80) {
            /* Mirroring off: only FAT (ext & 15) is live. We always write every copy, so
             * such a volume is read through its active FAT and never written. */
            if ((ext & 15u) >= nfats)
                return WHY("BPB_ExtFlags names an active FAT that does not exist");
            v->fat_offset = rsvd + (ext & 15u) * fatsz;
            v->mirror_off = 1;
            v->rdonly = 1;
        }
    } else {
        v->root_cluster = 0;
    }

    uint32_t ext_boot = fat32 ? BS32_BOOT_SIG : BS16_BOOT_SIG;
    if (b[ext_boot] == 0x29 || b[ext_boot] == 0x28)
        v->info.serial = ld_le32(b + (fat32 ? BS32_VOL_ID : BS16_VOL_ID));
    v->info.sector_size = bps;
    v->info.cluster_size = bps * spc;
    v->info.cluster_count = v->cluster_count;
    v->info.volume_size = (uint64_t)total * bps;
    v->info.heap_offset = (uint64_t)(uint32_t)data * bps;  /* data < total here */
    if (bits == 12)
        v->rdonly = 1;          /* FAT12: read-only by design */
    return 0;
}

/* ---- FSInfo and FAT[0..1] ---- */

static void read_fsinfo(struct sf_vol *v)
{
    uint8_t *s;
    if (!v->fsinfo_sector || cache_get(v, v->fsinfo_sector, &s))
        return;                 /* FSInfo holds hints only: unreadable means none */
    if (ld_le32(s + FSI_LEAD_SIG) != FSI_LEAD_VALUE ||
        ld_le32(s + FSI_STRUC_SIG) != FSI_STRUC_VALUE ||
        ld_le32(s + FSI_TRAIL_SIG) != FSI_TRAIL_VALUE) {
        v->fsinfo_sector = 0;   /* not an FSInfo sector: neither trusted nor rewritten */
        return;
    }
    uint32_t free = ld_le32(s + FSI_FREE_COUNT), next = ld_le32(s + FSI_NXT_FREE);
    /* A volume not shut down cleanly may have stale hints: the count is recounted when
     * asked for; the next-free hint is only where searches start, so any value is safe. */
    if (free <= v->cluster_count && !v->info.dirty)
        v->free_clusters = free;
    if (clus_ok(v, next))
        v->next_free = next;
}

/* Every FAT copy starts with the media byte in entry 0; FAT16/32 entry 1 holds the
 * clean-shutdown and hard-error bits. */
static int check_fats(struct sf_vol *v, uint8_t media)
{
    uint32_t copies = v->mirror_off ? 1 : v->num_fats;    /* mirroring off: the live one */
    for (uint32_t k = 0; k < copies; k++) {
        uint8_t *s;
        int err = cache_get(v, v->fat_offset + (uint64_t)k * v->fat_length, &s);
        if (err)
            return err;
        if (s[0] != media)
            return WHY("FAT[0] does not hold the BPB media byte");
        if (k || v->fat_bits == 12)
            continue;
        /* FAT16's two bits sit 12 places below FAT32's: moved up, both test alike. */
        _Static_assert((FAT16_CLN_SHUT << 12) == FAT32_CLN_SHUT &&
                       (FAT16_HRD_ERR << 12) == FAT32_HRD_ERR, "FAT[1] flag bits");
        uint32_t e1 = v->fat_bits == 32 ? ld_le32(s + 4) : (uint32_t)ld_le16(s + 2) << 12;
        v->info.dirty = !(e1 & FAT32_CLN_SHUT);
        v->info.errors = !(e1 & FAT32_HRD_ERR);
    }
    return 0;
}

/* ---- label ---- */

/* An 11-byte label field to UTF-8 without trailing spaces; bytes above 0x7F (OEM code
 * page, unknown here) become '?'. */
static void label_text(char *out, const uint8_t *p)
{
    int n = 11;
    while (n > 0 && p[n - 1] == ' ')
        n--;
    for (int i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (i == 0 && c == DIR_KANJI_E5)
            c = DIR_FREE;
        out[i] = (char)(c >= 0x20 && c < 0x7F ? c : '?');
    }
    out[n] = 0;
}

/* The label is the root directory's volume-label entry, as Windows and fatlabel take it:
 * Windows erases a label by deleting that entry and leaves the boot sector's copy behind, so
 * the boot sector is not consulted. "NO NAME" (the placeholder tools write) is no label. */
static int read_label(struct sf_vol *v)
{
    struct sf_chain root = vol_root(v);
    struct dwalk w;
    int err;
    if ((err = dwalk_open(&w, v, &root)))
        return err == SF_ECORRUPT ? WHY("root directory chain is broken") : err;
    for (uint32_t i = 0; i < dwalk_entries(&w); i++) {
        uint64_t lba;
        uint32_t off;
        uint8_t *sec;
        if ((err = dwalk_locate(&w, i, &lba, &off)) || (err = cache_get(v, lba, &sec)))
            return err;
        const uint8_t *e = sec + off;
        if (e[DIR_NAME] == DIR_END)
            break;
        if (e[DIR_NAME] == DIR_FREE || (e[DIR_ATTR] & ATTR_LONG_NAME_MASK) == ATTR_LONG_NAME)
            continue;
        if ((e[DIR_ATTR] & (ATTR_VOLUME_ID | ATTR_DIRECTORY)) == ATTR_VOLUME_ID) {
            if (memcmp(e + DIR_NAME, "NO NAME    ", 11))
                label_text(v->info.label, e + DIR_NAME);
            v->label_loc_valid = 1;
            v->label_loc.lba[0] = lba;
            v->label_loc.off = (uint16_t)off;
            v->label_loc.count = 1;
            return 0;
        }
    }
    return 0;
}

/* ---- mount ---- */

int fat_mount(struct sf_vol *v, uint8_t *buf)
{
    uint8_t media = buf[BPB_MEDIA];
    int err;

    v->info.warning = NULL;
    if ((err = check_bpb(v, buf)))
        return err;
    int fat32 = v->fat_bits == 32;
    if (media != 0xF0 && media < 0xF8)
        return WHY("BPB_Media is not 0xF0 or 0xF8..0xFF");
    /* From here on buf is the cache's memory. */
    cache_init(v, v->cfg.buf, v->cfg.buf_size);
    v->upcase_builtin = 1;
    if ((err = check_fats(v, media)))
        return err;
    if (fat32)
        read_fsinfo(v);
    fat_table_summary_init(v);
    return read_label(v);
}

/* ---- dirty state and free count ---- */

/* Write FAT[1] of every copy with the clean-shutdown bit set (clean) or cleared, the first
 * copy first. Each copy is rewritten from its own sector 0, so a copy never takes
 * another's entries; only the flag bit changes. */
static int write_fat1(struct sf_vol *v, int dirty)
{
    for (uint32_t k = 0; k < v->num_fats; k++) {
        uint64_t lba = v->fat_offset + (uint64_t)k * v->fat_length;
        uint8_t *s;
        int err = cache_get(v, lba, &s);
        if (err)
            return err;
        /* The flag is one bit of FAT[1]'s top byte: byte 7 of the sector, bit 27 of the
         * entry, on FAT32; byte 3, bit 15, on FAT16. */
        uint8_t *top = s + (v->fat_bits == 32 ? 7 : 3);
        uint8_t bit = (uint8_t)(v->fat_bits == 32 ? FAT32_CLN_SHUT >> 24 : FAT16_CLN_SHUT >> 8);
        *top = (uint8_t)(dirty ? *top & ~bit : *top | bit);
        if ((err = cache_put(v, lba)))
            return err;
    }
    return 0;
}

/* FSInfo: the free count (exact: counted now if not known) and the next-free hint. */
static int write_fsinfo(struct sf_vol *v)
{
    uint8_t *s;
    int err;
    if (!v->fsinfo_sector)
        return 0;
    if (v->free_clusters < 0) {
        int64_t n = fat_count_free(v);
        if (n < 0)
            return (int)n;
        v->free_clusters = n;
    }
    if ((err = cache_get(v, v->fsinfo_sector, &s)))
        return err;
    st_le32(s + FSI_FREE_COUNT, (uint32_t)v->free_clusters);
    st_le32(s + FSI_NXT_FREE, clus_ok(v, v->next_free) ? v->next_free : 0xFFFFFFFFu);
    return cache_put(v, v->fsinfo_sector);
}

int fat_set_dirty(struct sf_vol *v, int dirty)
{
    int err;
    if (v->rdonly || v->fat_bits == 12)
        return SF_EROFS;
    /* Clean: FSInfo first, so that a volume marked clean never has stale hints. */
    if (!dirty && v->fat_bits == 32 && (err = write_fsinfo(v)))
        return err;
    return write_fat1(v, dirty);
}

int64_t fat_count_free(struct sf_vol *v)
{
    return fat_table_count_free(v);
}
