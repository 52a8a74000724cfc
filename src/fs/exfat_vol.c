/* exFAT volumes: boot region validation, the root directory's system entries (allocation
 * bitmap, up-case table, label), the VolumeDirty flag and the free-space count.
 *
 * Mount reads the boot region, the root directory's first entries and the up-case table,
 * nothing else: free space is found lazily from a hint (alloc.c), so mounting a multi-TB
 * volume costs a few sector reads. */
#include "fs/exfat.h"
#include "util/upcase.h"
#include "util/utf.h"

#define WHY(msg) (v->why = SF_WHY(msg), SF_ECORRUPT)

/* exFAT boot checksum (spec 3.4): sectors 0..10, skipping VolumeFlags and PercentInUse. */
static uint32_t boot_sum(uint32_t sum, const uint8_t *p, uint32_t n, int first)
{
    for (uint32_t i = 0; i < n; i++) {
        if (first && (i == EXBS_VOLUME_FLAGS || i == EXBS_VOLUME_FLAGS + 1 ||
                      i == EXBS_PERCENT_IN_USE))
            continue;
        sum = ((sum & 1u) ? 0x80000000u : 0u) + (sum >> 1) + p[i];
    }
    return sum;
}

/* Validate the main boot sector's fields against each other and the device. Its
 * FileSystemName is "EXFAT   ": sf_mount comes here only for a sector that
 * sf_boot_sector_kind recognised by it. */
static int check_boot_sector(struct sf_vol *v, const uint8_t *b)
{
    if (ld_le16(b + EXBS_SIGNATURE) != 0xAA55)
        return WHY("boot sector signature is not 0xAA55");
    for (uint32_t i = 0; i < EXBS_MBZ_LEN; i++)
        if (b[EXBS_MBZ + i])
            return WHY("boot sector MustBeZero field is not zero");
    uint8_t ss = b[EXBS_SECTOR_SHIFT], spc = b[EXBS_SPC_SHIFT];
    if (ss < 9 || ss > 12)
        return WHY("BytesPerSectorShift out of range 9..12");
    if (spc > 25 - ss)
        return WHY("SectorsPerClusterShift makes clusters larger than 32 MiB");
    /* Below, 64-bit products by a power of two rather than 64-bit shifts by a variable:
     * a Cortex-M multiplies 32 x 32 -> 64 bits in one instruction. */
    uint32_t ssz = 1u << ss;
    if (ssz != v->cfg.bd->sector_size) {
        v->why = ss == 12 ? SF_WHY("volume has 4096-byte sectors but the device 512")
                          : SF_WHY("volume sector size differs from the device's");
        return SF_EINVAL;
    }
    uint8_t nfats = b[EXBS_NUM_FATS];
    if (nfats != 1 && nfats != 2)
        return WHY("NumberOfFats is not 1 or 2");
    if (nfats == 2)
        v->rdonly = 1;          /* TexFAT: read, never write */
    if (b[EXBS_FS_REVISION + 1] != 1)
        return WHY("FileSystemRevision major version is not 1");
    uint64_t vol_len = ld_le64(b + EXBS_VOLUME_LENGTH);
    uint32_t fat_off = ld_le32(b + EXBS_FAT_OFFSET);
    uint32_t fat_len = ld_le32(b + EXBS_FAT_LENGTH);
    uint32_t heap = ld_le32(b + EXBS_HEAP_OFFSET);
    uint32_t count = ld_le32(b + EXBS_CLUSTER_COUNT);
    uint32_t root = ld_le32(b + EXBS_ROOT_CLUSTER);
    if (vol_len < (1u << 20) >> ss)
        return WHY("VolumeLength below 1 MiB");
    if (vol_len > v->bd->sector_count)
        return WHY("VolumeLength runs past the end of the device");
    if (fat_off < 24 || fat_len == 0)
        return WHY("FatOffset/FatLength out of range");
    if ((uint64_t)fat_off + (uint64_t)fat_len * nfats > heap)
        return WHY("FAT overlaps the cluster heap (ClusterHeapOffset)");
    if (count == 0 || count > EXFAT_MAX_CLUSTERS)
        return WHY("ClusterCount out of range");
    if (((uint64_t)count + 2) * 4 > (uint64_t)fat_len * ssz)
        return WHY("FatLength too small for ClusterCount");
    if ((uint64_t)heap + (uint64_t)count * (1u << spc) > vol_len)
        return WHY("cluster heap runs past VolumeLength");
    if (root < 2 || root - 2 >= count)
        return WHY("FirstClusterOfRootDirectory out of range");
    v->sector_shift = ss;
    v->spc_shift = spc;
    v->cluster_shift = (uint8_t)(ss + spc);
    v->fat_offset = fat_off;
    v->fat_length = fat_len;
    v->num_fats = nfats;
    v->heap_offset = heap;
    v->cluster_count = count;
    v->root_cluster = root;
    v->vol_flags = ld_le16(b + EXBS_VOLUME_FLAGS);
    v->info.fs_type = SF_FS_EXFAT;
    v->info.sector_size = ssz;
    v->info.cluster_size = ssz << spc;
    v->info.cluster_count = count;
    v->info.volume_size = vol_len * ssz;
    v->info.heap_offset = (uint64_t)heap * ssz;
    v->info.serial = ld_le32(b + EXBS_SERIAL);
    v->info.fs_revision = ld_le16(b + EXBS_FS_REVISION);
    v->info.dirty = (v->vol_flags & EXFAT_VOLFLAG_DIRTY) != 0;
    return 0;
}

/* Sectors 0..11 of the boot region: the checksum sector repeats the checksum of 0..10,
 * extended boot sectors end in their signature. `buf` is one sector. */
static int check_boot_region(struct sf_vol *v, uint8_t *buf)
{
    uint32_t ss = vol_ss(v), sum = 0;
    int err;
    for (uint32_t s = 0; s < EXFAT_BOOT_CHECKSUM; s++) {
        if ((err = sf_bdev_read(v->bd, s, buf, 1)))
            return err;
        if (s >= EXFAT_BOOT_EXT_FIRST && s <= EXFAT_BOOT_EXT_LAST &&
            ld_le32(buf + ss - 4) != EXFAT_EXT_SIGNATURE)
            return WHY("extended boot sector signature missing");
        sum = boot_sum(sum, buf, ss, s == 0);
    }
    if ((err = sf_bdev_read(v->bd, EXFAT_BOOT_CHECKSUM, buf, 1)))
        return err;
    for (uint32_t i = 0; i < ss; i += 4)
        if (ld_le32(buf + i) != sum)
            return WHY("boot region checksum mismatch");
    return 0;
}

/* Where the up-case table being read has got to: the next code point to map, and whether
 * every mapping so far equals the built-in table's. */
struct upcase_load {
    uint16_t *tab;              /* cfg.upcase_buf, or NULL: only compare */
    uint32_t pos;               /* 0..65536 */
    uint8_t same;
};

#define UPCASE_IDENTITY 0x10000u    /* upcase_map's `to` for "each to itself" */

/* Map the next `run` code points (those past U+FFFF are ignored) to `to`, or each to
 * itself when `to` is UPCASE_IDENTITY. The table is filled first in a plain loop, then the
 * comparison with the built-in table runs only while it still agrees: a table that is not
 * the built-in one differs within its first hundred code points (most map 'a' to 'A'), and
 * its long identity runs then cost a store each. */
static void upcase_map(struct upcase_load *u, uint32_t run, uint32_t to)
{
    uint32_t end = run < 65536u - u->pos ? u->pos + run : 65536u, p;
    if (u->tab) {
        if (to == UPCASE_IDENTITY)
            for (p = u->pos; p < end; p++)
                u->tab[p] = (uint16_t)p;
        else
            for (p = u->pos; p < end; p++)
                u->tab[p] = (uint16_t)to;
    }
    /* one difference settles it: the lookup is most of the cost */
    for (p = u->pos; u->same && p < end; p++)
        if (sf_upcase_builtin((uint16_t)p) != (to == UPCASE_IDENTITY ? p : to))
            u->same = 0;
    u->pos = end;
}

/* Read the volume's up-case table: verify its TableChecksum, decide whether it equals the
 * built-in table, and expand it into cfg.upcase_buf when it does not and a buffer exists.
 * A table of our mkfs's length and TableChecksum is taken for the built-in one without
 * expanding it: comparing 65,536 code points with sf_upcase_builtin was most of the time a
 * mount took, and holding sf_upcase_table to compare it unit by unit would cost its 3.7 KB
 * in every firmware. The checksum is no proof: a table crafted to the same length and sum
 * would have names compared by the built-in table instead of its own.
 * Two passes over the table's sectors: the checksum first, so that a damaged table is
 * refused before 65,536 code points are expanded from it; the second pass reads the same
 * few sectors again, from the cache when it holds them. */
static int load_upcase(struct sf_vol *v, uint32_t first, uint64_t len64, uint32_t want_sum)
{
    struct upcase_load u = { v->cfg.upcase_buf, 0, 1 };
    uint32_t ss = vol_ss(v), sum = 0;
    int pending_ffff = 0, err;
    int ours = len64 == sf_upcase_table_units * 2u && want_sum == sf_upcase_table_checksum;

    if (len64 < 2 || len64 > 65536u * 2 * 2 || (len64 & 1))
        return WHY("up-case table DataLength out of range");
    if (!clus_ok(v, first))
        return WHY("up-case table FirstCluster out of range");
    uint32_t len = (uint32_t)len64;     /* at most 256 KiB, checked above */
    for (int pass = 0; pass < (ours ? 1 : 2); pass++) {
        struct sf_chain ch = { first, 0, len64 };
        uint32_t clus = first, idx = 0;
        for (uint32_t off = 0; off < len; off += ss) {
            uint32_t in_clus = off >> v->cluster_shift;
            if (in_clus != idx) {
                if ((err = chain_next(v, &ch, clus, &clus)))
                    return err;
                if (!clus)
                    return WHY("up-case table chain shorter than its DataLength");
                idx = in_clus;
            }
            uint64_t lba = clus_lba(v, clus) + ((off & (vol_cs(v) - 1)) >> v->sector_shift);
            uint8_t *sec;
            if ((err = cache_get(v, lba, &sec)))
                return err;
            uint32_t n = len - off < ss ? len - off : ss;
            if (pass == 0) {
                sum = sf_exfat_sum32(sum, sec, n);
                continue;
            }
            for (uint32_t i = 0; i + 1 < n; i += 2) {
                uint16_t c = ld_le16(sec + i);
                if (pending_ffff) {          /* a run of `c` identity mappings */
                    pending_ffff = 0;
                    upcase_map(&u, c, UPCASE_IDENTITY);
                } else if (c == 0xFFFF) {
                    pending_ffff = 1;
                } else {
                    upcase_map(&u, 1, c);
                }
            }
        }
        if (pass == 0 && sum != want_sum)
            return WHY("up-case table checksum mismatch");
    }
    if (!ours)
        upcase_map(&u, 65536, UPCASE_IDENTITY);  /* the rest map to themselves */
    v->upcase_builtin = ours || u.same;
    return 0;
}

/* Scan the root directory's leading entries for the bitmap, up-case and label entries. */
static int read_root_system_entries(struct sf_vol *v)
{
    struct sf_chain root = { v->root_cluster, 0, 0 };
    struct dwalk w;
    int err, have_bitmap = 0, have_upcase = 0;
    uint32_t up_first = 0, up_sum = 0;
    uint64_t up_len = 0;

    if ((err = dwalk_open(&w, v, &root)))
        return err;
    for (uint32_t i = 0; i < dwalk_entries(&w); i++) {
        uint64_t lba;
        uint32_t off;
        uint8_t *sec;
        if ((err = dwalk_locate(&w, i, &lba, &off)) || (err = cache_get(v, lba, &sec)))
            return err;
        const uint8_t *e = sec + off;
        uint8_t type = e[EXDE_TYPE];
        if (type == EXDE_END)
            break;
        if (type == EXDE_BITMAP && !have_bitmap) {
            have_bitmap = 1;
            v->bitmap_cluster = ld_le32(e + EXDE_FIRST_CLUSTER);
            v->bitmap_bytes = ld_le64(e + EXDE_DATA_LENGTH);
        } else if (type == EXDE_UPCASE && !have_upcase) {
            have_upcase = 1;
            up_first = ld_le32(e + EXDE_FIRST_CLUSTER);
            up_len = ld_le64(e + EXDE_DATA_LENGTH);
            up_sum = ld_le32(e + EXDE_UPCASE_CHECKSUM);
        } else if (type == EXDE_LABEL && !v->label_loc_valid) {
            uint16_t u[EXFAT_LABEL_MAX];
            uint32_t n = e[EXDE_LABEL_LEN];
            if (n > EXFAT_LABEL_MAX)
                return WHY("volume label longer than 11 characters");
            for (uint32_t k = 0; k < n; k++)
                u[k] = ld_le16(e + EXDE_LABEL_CHARS + 2 * k);
            if (sf_utf16_to_utf8(u, n, v->info.label, sizeof v->info.label) < 0)
                v->info.label[0] = 0;
            v->label_loc_valid = 1;
            v->label_loc.lba[0] = lba;
            v->label_loc.off = (uint16_t)off;
            v->label_loc.count = 1;
        }
    }
    if (!have_bitmap)
        return WHY("root directory has no allocation bitmap entry");
    if (!clus_ok(v, v->bitmap_cluster))
        return WHY("allocation bitmap FirstCluster out of range");
    /* The bitmap's clusters, rounded up without adding to DataLength (a hostile length
     * near 2^64 would wrap to a small count), must end within the heap. */
    uint64_t bm_clusters = (v->bitmap_bytes >> v->cluster_shift) +
                           ((v->bitmap_bytes & (vol_cs(v) - 1)) != 0);
    if (v->bitmap_bytes < (v->cluster_count + 7) / 8 ||
        bm_clusters > v->cluster_count - (v->bitmap_cluster - 2))
        return WHY("allocation bitmap DataLength does not fit ClusterCount");
    if (!have_upcase)
        return WHY("root directory has no up-case table entry");
    return load_upcase(v, up_first, up_len, up_sum);
}

int exfat_mount(struct sf_vol *v, uint8_t *buf)
{
    int err;
    if ((err = check_boot_sector(v, buf)) || (err = check_boot_region(v, buf)))
        return err;
    v->fs_type = SF_FS_EXFAT;
    v->fat_bits = 32;
    cache_init(v, v->cfg.buf, v->cfg.buf_size);
    return read_root_system_entries(v);
}

int exfat_set_dirty(struct sf_vol *v, int dirty)
{
    uint8_t *b;
    int err = cache_get(v, 0, &b);
    if (err)
        return err;
    uint16_t f = ld_le16(b + EXBS_VOLUME_FLAGS);
    f = (uint16_t)(dirty ? f | EXFAT_VOLFLAG_DIRTY : f & ~EXFAT_VOLFLAG_DIRTY);
    st_le16(b + EXBS_VOLUME_FLAGS, f);
    return cache_put(v, 0);
}

int64_t exfat_count_free(struct sf_vol *v)
{
    uint32_t ss = vol_ss(v), bits_per_sec = ss * 8, used = 0;
    uint64_t lba0 = clus_lba(v, v->bitmap_cluster);  /* the bitmap is contiguous by rule */
    for (uint32_t c = 0; c < v->cluster_count; c += bits_per_sec) {
        uint8_t *sec;
        uint64_t lba = lba0 + c / bits_per_sec;
        cache_readahead(v, lba, (v->cluster_count - c - 1) / bits_per_sec + 1);
        int err = cache_get(v, lba, &sec);
        if (err)
            return err;
        uint32_t n = v->cluster_count - c < bits_per_sec ? v->cluster_count - c : bits_per_sec;
        for (uint32_t i = 0; i < n / 8; i++) {
            uint8_t x = sec[i];
            while (x) {
                used++;
                x &= (uint8_t)(x - 1);
            }
        }
        for (uint32_t i = n & ~7u; i < n; i++)
            used += (sec[i / 8] >> (i % 8)) & 1u;
    }
    return (int64_t)v->cluster_count - used;
}
