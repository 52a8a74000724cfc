/* The FAT of FAT12/16/32 volumes: entry codecs and writes to every FAT copy.
 *
 * Values cross this file's boundary in normalised form (fs.h): end-of-chain markers
 * (FAT12 >= 0xFF8, FAT16 >= 0xFFF8, FAT32 >= 0x0FFFFFF8) become SF_FAT_EOC, the bad-cluster
 * marker becomes SF_FAT_BAD. FAT32 entries keep their reserved top 4 bits on write.
 *
 * Every FAT sector changed is written to copy 0 (through the cache) and then to each other
 * copy, each write checked: copies may differ only while a write is under way. FAT12 volumes
 * are mounted read-only, so FAT12 entries (which can straddle sectors) are only read.
 *
 * Free space (FAT16/32): a search starts at the caller's hint (the FSInfo next-free hint, then
 * the end of the last allocation) and reads the FAT a sector at a time through the cache. The
 * optional summary in cfg.fat_cache keeps one bit per group of 2^fs_shift FAT sectors:
 *   invariant: a set bit means every entry of the group's sectors that names a cluster of the
 *   heap is in use. It is set only when a search read the whole group and found nothing
 *   free, and cleared before any entry of the group is written as free.
 * So a search never reads a region known to be full twice, the summary is filled lazily (no
 * scan at mount), and a lost or absent summary costs time, never correctness.
 *
 * Sections: codecs; writing; free space. */
#include "fs/fat.h"

/* Byte offset of entry c in the FAT. 32 bits: callers pass cluster numbers of the volume
 * (below 2^28 + 2), so at most 2^30. */
static uint32_t entry_byte(const struct sf_vol *v, uint32_t c)
{
    if (v->fat_bits == 32)
        return c * 4;
    if (v->fat_bits == 16)
        return c * 2;
    return c + c / 2;
}

static uint32_t normalise(const struct sf_vol *v, uint32_t raw)
{
    uint32_t eoc, bad;
    if (v->fat_bits == 32) {
        raw &= 0x0FFFFFFFu;
        eoc = 0x0FFFFFF8u;
        bad = 0x0FFFFFF7u;
    } else if (v->fat_bits == 16) {
        eoc = 0xFFF8u;
        bad = 0xFFF7u;
    } else {
        eoc = 0xFF8u;
        bad = 0xFF7u;
    }
    if (raw >= eoc)
        return SF_FAT_EOC;
    if (raw == bad)
        return SF_FAT_BAD;
    return raw;
}

static uint32_t denormalise(const struct sf_vol *v, uint32_t val)
{
    uint32_t mask = v->fat_bits == 32 ? 0x0FFFFFFFu : v->fat_bits == 16 ? 0xFFFFu : 0xFFFu;
    if (val == SF_FAT_EOC)
        return mask;
    if (val == SF_FAT_BAD)
        return mask - 8;
    return val & mask;
}

int fat_table_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    uint32_t byte = entry_byte(v, c);
    uint64_t lba = v->fat_offset + (byte >> v->sector_shift);
    uint32_t off = byte & (vol_ss(v) - 1);
    uint8_t *sec;
    int err = cache_get(v, lba, &sec);
    if (err)
        return err;
    uint32_t raw;
    if (v->fat_bits == 32) {
        raw = ld_le32(sec + off);
    } else if (v->fat_bits == 16) {
        raw = ld_le16(sec + off);
    } else {
        uint32_t lo = sec[off], hi;
        if (off + 1 < vol_ss(v)) {
            hi = sec[off + 1];
        } else {                          /* the entry straddles two FAT sectors */
            if ((err = cache_get(v, lba + 1, &sec)))
                return err;
            hi = sec[0];
        }
        raw = lo | hi << 8;
        raw = (c & 1) ? raw >> 4 : raw & 0xFFF;
    }
    *next = normalise(v, raw);
    return 0;
}

/* Write FAT sector `rel` (relative to the FAT start), already changed in the cache, to copy 0
 * and then to the other copies. */
static int put_fat_sector(struct sf_vol *v, uint32_t rel, const uint8_t *sec)
{
    uint64_t lba = v->fat_offset + rel;
    int err = cache_put(v, lba);
    for (uint32_t k = 1; !err && k < v->num_fats; k++) {
        uint64_t copy = lba + (uint64_t)k * v->fat_length;
        cache_forget(v, copy, 1);
        err = sf_bdev_write(v->bd, copy, sec, 1);
    }
    return err;
}

static void summary_clear(struct sf_vol *v, uint32_t rel)
{
    uint32_t g = rel >> v->fs_shift;
    if (g < v->fs_groups)
        v->fs_bits[g >> 3] &= (uint8_t)~(1u << (g & 7));
}

static SF_NOINLINE int summary_full(const struct sf_vol *v, uint32_t g)
{
    return g < v->fs_groups && (v->fs_bits[g >> 3] >> (g & 7) & 1u);
}

/* Entries [start, start + n): entry c gets next_of(c); one pass per FAT sector. */
static int fat_write_entries(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end,
                             int chain)
{
    if (v->fat_bits == 12)
        return SF_EROFS;
    uint32_t c = start, stop = start + n, w = v->fat_bits / 8;
    while (c < stop) {
        uint32_t byte = entry_byte(v, c);
        uint32_t rel = byte >> v->sector_shift;
        uint32_t off = byte & (vol_ss(v) - 1);
        uint8_t *sec;
        int err = cache_get(v, v->fat_offset + rel, &sec);
        if (err)
            return err;
        if (!chain && end == 0)
            summary_clear(v, rel);       /* before the sector says free */
        for (; c < stop && off < vol_ss(v); c++, off += w) {
            uint32_t val = denormalise(v, chain ? (c + 1 == stop ? end : c + 1) : end);
            if (w == 4)
                st_le32(sec + off, (ld_le32(sec + off) & 0xF0000000u) | val);
            else
                st_le16(sec + off, (uint16_t)val);
        }
        if ((err = put_fat_sector(v, rel, sec)))
            return err;
    }
    return 0;
}

int fat_table_set(struct sf_vol *v, uint32_t c, uint32_t next)
{
    return fat_write_entries(v, c, 1, next, 0);
}

/* A chain run through the volume's bulk buffer (lent by the stream layer): the FAT sectors
 * it covers are built in memory (a partly covered first or last sector starts from its
 * cached copy) and written with one request per FAT copy per buffer-full, instead of one
 * request per sector. A partly covered sector's cached copy is updated (the next allocation
 * scan starts in the last one); a sector wholly of the run's entries is forgotten: only a walk
 * of the chain reads it again, and keeping it current cost a sector-sized copy each, which is
 * what made a 2 MiB cache cost more instructions than a 32 KiB one on the stream's FAT32 4K
 * row (bench/fs_cost.sh, FS_COST_CHECK). */
static int fat_run_bulk(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    uint32_t ss = vol_ss(v), w = v->fat_bits / 8, per = ss / w;
    uint32_t max_secs = v->bulk_size >> v->sector_shift;
    uint32_t c = start, stop = start + n;
    while (c < stop) {
        uint32_t rel0 = entry_byte(v, c) >> v->sector_shift;
        uint32_t rel_last = entry_byte(v, stop - 1) >> v->sector_shift;
        uint32_t secs = rel_last - rel0 + 1 < max_secs ? rel_last - rel0 + 1 : max_secs;
        for (uint32_t k = 0; k < secs; k++) {
            uint8_t *b = v->bulk + ((size_t)k << v->sector_shift);
            uint32_t first = (rel0 + k) * per;   /* first entry of this sector */
            if (first < c || first + per > stop) {
                uint8_t *sec;                                /* partly covered: keep the rest */
                int err = cache_get(v, v->fat_offset + rel0 + k, &sec);
                if (err)
                    return err;
                memcpy(b, sec, ss);
            } else {
                memset(b, 0, ss);     /* the buffer held file data: no stale reserved bits */
            }
            for (uint32_t e = first < c ? c : first; e < stop && e < first + per; e++) {
                uint32_t val = denormalise(v, e + 1 == stop ? end : e + 1);
                uint8_t *p = b + (e - first) * w;
                if (w == 4)
                    st_le32(p, (ld_le32(p) & 0xF0000000u) | val);
                else
                    st_le16(p, (uint16_t)val);
            }
        }
        for (uint32_t copy = 0; copy < v->num_fats; copy++) {
            uint64_t lba = v->fat_offset + (uint64_t)copy * v->fat_length + rel0;
            for (uint32_t k = 0; k < secs; k++) {
                uint32_t first = (rel0 + k) * per;
                if (first < c || first + per > stop)
                    cache_update(v, lba + k, v->bulk + ((size_t)k << v->sector_shift));
                else
                    cache_forget(v, lba + k, 1);
            }
            v->unflushed = 1;
            int err = sf_bdev_write(v->bd, lba, v->bulk, secs);
            if (err)
                return err;
        }
        uint32_t next_first = (rel0 + secs) * per;
        c = next_first < stop ? next_first : stop;
    }
    return 0;
}

int fat_table_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    if (v->bulk && v->fat_bits != 12 && n > 1)
        return fat_run_bulk(v, start, n, end);
    return fat_write_entries(v, start, n, end, 1);
}

int fat_table_fill(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t value)
{
    return fat_write_entries(v, start, n, value, 0);
}

/* ---- free space ---- */

void fat_table_readahead(struct sf_vol *v, uint32_t c, uint32_t n)
{
    if (!n || v->fat_bits == 12)
        return;
    uint32_t rel = entry_byte(v, c) >> v->sector_shift;
    uint32_t last = entry_byte(v, c + n - 1) >> v->sector_shift;
    cache_readahead(v, v->fat_offset + rel, last - rel + 1);
}

void fat_table_summary_init(struct sf_vol *v)
{
    uint64_t bytes = v->cfg.fat_cache ? v->cfg.fat_cache_size : 0;
    uint32_t groups = v->fat_length;
    uint8_t shift = 0;
    v->fs_bits = NULL;
    v->fs_groups = 0;
    v->fs_shift = 0;
    if (v->fat_bits == 12 || bytes == 0)
        return;
    while (((uint64_t)groups + 7) / 8 > bytes) {
        shift++;
        groups = (uint32_t)(((uint64_t)v->fat_length + (1u << shift) - 1) >> shift);
    }
    v->fs_bits = v->cfg.fat_cache;
    v->fs_groups = groups;
    v->fs_shift = shift;
    memset(v->fs_bits, 0, (groups + 7) / 8);
}

int fat_table_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    *out = 0;
    if (from < SF_FIRST_CLUSTER)
        from = SF_FIRST_CLUSTER;
    if (to > SF_FIRST_CLUSTER + v->cluster_count)
        to = SF_FIRST_CLUSTER + v->cluster_count;
    if (v->fat_bits == 12) {
        for (uint32_t c = from; c < to; c++) {
            uint32_t e;
            int err = fat_table_get(v, c, &e);
            if (err)
                return err;
            if (!e) {
                *out = c;
                return 0;
            }
        }
        return 0;
    }
    uint32_t w = v->fat_bits / 8, eps = vol_ss(v) / w;     /* entries per FAT sector */
    uint32_t eps_shift = v->sector_shift - (w == 4 ? 2 : 1);
    uint32_t c = from;
    /* The group being read counts as full only if this search read it from its first
     * entry (entries 0 and 1 name no cluster and count as in use). */
    uint32_t g_cur = UINT32_MAX;
    int g_whole = 0;
    while (c < to) {
        uint32_t rel = c >> eps_shift, g = rel >> v->fs_shift;
        if (summary_full(v, g)) {
            uint64_t next = (uint64_t)(g + 1) << (v->fs_shift + eps_shift);
            c = next < to ? (uint32_t)next : to;
            continue;
        }
        if (g != g_cur) {
            g_cur = g;
            g_whole = c <= (g << (v->fs_shift + eps_shift)) + SF_FIRST_CLUSTER * (g == 0);
        }
        uint32_t off = (c & (eps - 1)) * w;
        uint8_t *sec;
        fat_table_readahead(v, c, to - c);
        int err = cache_get(v, v->fat_offset + rel, &sec);
        if (err)
            return err;
        for (; c < to && off < vol_ss(v); c++, off += w) {
            uint32_t raw = w == 4 ? ld_le32(sec + off) & 0x0FFFFFFFu : ld_le16(sec + off);
            if (!raw) {
                *out = c;
                return 0;
            }
        }
        /* At the end of a group read whole, or at the end of the heap: record it. */
        uint64_t gend = (uint64_t)(g + 1) << (v->fs_shift + eps_shift);
        if (g_whole && g < v->fs_groups &&
            (c == gend || c == SF_FIRST_CLUSTER + v->cluster_count) && c <= to)
            v->fs_bits[g >> 3] |= (uint8_t)(1u << (g & 7));
    }
    return 0;
}

int64_t fat_table_count_free(struct sf_vol *v)
{
    uint32_t end = SF_FIRST_CLUSTER + v->cluster_count, c = SF_FIRST_CLUSTER;
    int64_t n = 0;
    int err;
    if (v->fat_bits == 12) {
        for (; c < end; c++) {
            uint32_t e;
            if ((err = fat_table_get(v, c, &e)))
                return err;
            n += e == 0;
        }
        return n;
    }
    /* One find_free per free cluster would be quadratic in the worst case; count sector by
     * sector instead, skipping groups known full. */
    uint32_t w = v->fat_bits / 8, eps = vol_ss(v) / w;
    uint32_t eps_shift = v->sector_shift - (w == 4 ? 2 : 1);
    while (c < end) {
        uint32_t rel = c >> eps_shift, g = rel >> v->fs_shift;
        if (summary_full(v, g)) {
            uint64_t next = (uint64_t)(g + 1) << (v->fs_shift + eps_shift);
            c = next < end ? (uint32_t)next : end;
            continue;
        }
        uint8_t *sec;
        fat_table_readahead(v, c, end - c);
        if ((err = cache_get(v, v->fat_offset + rel, &sec)))
            return err;
        for (uint32_t off = (c & (eps - 1)) * w; c < end && off < vol_ss(v); c++, off += w)
            n += (w == 4 ? ld_le32(sec + off) & 0x0FFFFFFFu : ld_le16(sec + off)) == 0;
    }
    return n;
}
