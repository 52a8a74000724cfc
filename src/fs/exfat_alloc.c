/* exFAT allocation maps: the FAT (32-bit entries, one copy) and the allocation bitmap
 * (one bit per cluster, contiguous from its first cluster, as every implementation lays
 * it out and mount checks). The chain logic over them is in alloc.c.
 *
 * Both are maps of fixed-width entries (the FAT: 32 bits from cluster 0 on; the bitmap: 1 bit
 * from cluster 2 on). entry_get finds the entry of a cluster in either and reads its sector
 * through the cache (map_get); map_write writes a run of entries of either a sector at a
 * time: each sector read through the cache, changed, and written once (cache_put), in
 * cluster order. */
#include "fs/exfat.h"

#define BITMAP_BITS 1u    /* entry widths */
#define FAT_BITS 32u

/* The sector holding byte `byte` of a map that starts at sector `start`, read through the
 * cache; *off is the byte's offset in that sector. */
static SF_NOINLINE int map_get(struct sf_vol *v, uint64_t start, uint64_t byte,
                               uint64_t *lba, uint8_t **sec, uint32_t *off)
{
    *lba = start + (byte >> v->sector_shift);
    *off = (uint32_t)(byte & (vol_ss(v) - 1));
    return cache_get(v, *lba, sec);
}

static uint64_t bitmap_start(const struct sf_vol *v)
{
    return clus_lba(v, v->bitmap_cluster);
}

/* The entry of cluster c in the FAT (bits 32) or the bitmap (bits 1): its sector, read
 * through the cache, and *bit, the entry's first bit in that sector. */
static int entry_get(struct sf_vol *v, uint32_t bits, uint32_t c, uint64_t *lba,
                     uint8_t **sec, uint32_t *bit)
{
    uint32_t off;
    int err;
    if (bits == FAT_BITS) {
        err = map_get(v, v->fat_offset, (uint64_t)c * 4, lba, sec, &off);
        *bit = off * 8;
    } else {
        uint32_t b = c - SF_FIRST_CLUSTER;
        err = map_get(v, bitmap_start(v), b >> 3, lba, sec, &off);
        *bit = off * 8 + (b & 7);
    }
    return err;
}

/* Entries [c, c + n) of the FAT (bits 32) or the bitmap (bits 1): a FAT entry gets c + 1,
 * the last one `last` (a chain); a bitmap bit gets `last` (1 used, 0 free). */
static int map_write(struct sf_vol *v, uint32_t bits, uint32_t c, uint32_t n, uint32_t last)
{
    uint32_t stop = c + n, sec_bits = vol_ss(v) << 3;
    while (c < stop) {
        uint64_t lba;
        uint32_t bit;
        uint8_t *sec;
        int err = entry_get(v, bits, c, &lba, &sec, &bit);
        if (err)
            return err;
        for (; c < stop && bit < sec_bits; c++, bit += bits) {
            uint8_t *p = sec + (bit >> 3);
            if (bits == FAT_BITS)
                st_le32(p, c + 1 == stop ? last : c + 1);
            else if (last)
                *p = (uint8_t)(*p | (1u << (bit & 7)));
            else
                *p = (uint8_t)(*p & ~(1u << (bit & 7)));
        }
        if ((err = cache_put(v, lba)))
            return err;
    }
    return 0;
}

/* exFAT entries are already in the normalised form (0xFFFFFFFF end, 0xFFFFFFF7 bad).
 * map_get directly: a read-only build links this reader alone, without entry_get's bitmap
 * half. */
int exfat_fat_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    uint64_t lba;
    uint32_t off;
    uint8_t *sec;
    int err = map_get(v, v->fat_offset, (uint64_t)c * 4, &lba, &sec, &off);
    if (err)
        return err;
    *next = ld_le32(sec + off);
    return 0;
}

int exfat_fat_set(struct sf_vol *v, uint32_t c, uint32_t next)
{
    return exfat_fat_run(v, c, 1, next);
}

int exfat_fat_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    return map_write(v, FAT_BITS, start, n, end);
}

int bitmap_test(struct sf_vol *v, uint32_t c, int *used)
{
    uint64_t lba;
    uint32_t bit;
    uint8_t *sec;
    int err = entry_get(v, BITMAP_BITS, c, &lba, &sec, &bit);
    if (err)
        return err;
    *used = (sec[bit >> 3] >> (bit & 7)) & 1;
    return 0;
}

int bitmap_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used)
{
    return map_write(v, BITMAP_BITS, c, n, used != 0);
}

void bitmap_readahead(struct sf_vol *v, uint32_t c, uint32_t n)
{
    if (!n)
        return;
    uint32_t shift = v->sector_shift + 3;       /* bits per sector */
    uint32_t first = (c - SF_FIRST_CLUSTER) >> shift;
    uint32_t last = (c + n - 1 - SF_FIRST_CLUSTER) >> shift;
    cache_readahead(v, bitmap_start(v) + first, last - first + 1);
}

int bitmap_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    uint32_t c = from;
    *out = 0;
    while (c < to) {
        uint64_t lba;
        uint32_t bit;
        uint8_t *sec;
        bitmap_readahead(v, c, to - c);
        int err = entry_get(v, BITMAP_BITS, c, &lba, &sec, &bit);
        if (err)
            return err;
        for (uint32_t byte = bit >> 3; byte < vol_ss(v) && c < to; byte++) {
            uint32_t b = (c - SF_FIRST_CLUSTER) & 7;
            if (b == 0 && sec[byte] == 0xFF) {     /* eight clusters in use */
                c += 8;
                continue;
            }
            for (; b < 8 && c < to; b++, c++) {
                if (!((sec[byte] >> b) & 1)) {
                    *out = c;
                    return 0;
                }
            }
        }
    }
    return 0;
}
