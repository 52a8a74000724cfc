/* exFAT allocation maps: the FAT (32-bit entries, one copy) and the allocation bitmap
 * (one bit per cluster, contiguous from its first cluster, as every implementation lays
 * it out and mount checks). The chain logic over them is in alloc.c. */
#include "fs/exfat.h"

static void fat_pos(const struct sf_vol *v, uint32_t c, uint64_t *lba, uint32_t *off)
{
    uint64_t byte = (uint64_t)c * 4;
    *lba = v->fat_offset + (byte >> v->sector_shift);
    *off = (uint32_t)(byte & (vol_ss(v) - 1));
}

/* exFAT entries are already in the normalised form (0xFFFFFFFF end, 0xFFFFFFF7 bad). */
int exfat_fat_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    uint64_t lba;
    uint32_t off;
    uint8_t *sec;
    fat_pos(v, c, &lba, &off);
    int err = cache_get(v, lba, &sec);
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
    uint32_t c = start, stop = start + n;
    while (c < stop) {
        uint64_t lba;
        uint32_t off;
        uint8_t *sec;
        fat_pos(v, c, &lba, &off);
        int err = cache_get(v, lba, &sec);
        if (err)
            return err;
        for (; c < stop && off < vol_ss(v); c++, off += 4)
            st_le32(sec + off, c + 1 == stop ? end : c + 1);
        if ((err = cache_put(v, lba)))
            return err;
    }
    return 0;
}

static void bitmap_pos(const struct sf_vol *v, uint32_t c, uint64_t *lba, uint32_t *byte)
{
    uint32_t bit = c - SF_FIRST_CLUSTER;
    *lba = clus_lba(v, v->bitmap_cluster) + ((bit >> 3) >> v->sector_shift);
    *byte = (bit >> 3) & (vol_ss(v) - 1);
}

int bitmap_test(struct sf_vol *v, uint32_t c, int *used)
{
    uint64_t lba;
    uint32_t byte;
    uint8_t *sec;
    bitmap_pos(v, c, &lba, &byte);
    int err = cache_get(v, lba, &sec);
    if (err)
        return err;
    *used = (sec[byte] >> ((c - SF_FIRST_CLUSTER) & 7)) & 1;
    return 0;
}

int bitmap_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used)
{
    uint32_t stop = c + n;
    while (c < stop) {
        uint64_t lba;
        uint32_t byte;
        uint8_t *sec;
        bitmap_pos(v, c, &lba, &byte);
        int err = cache_get(v, lba, &sec);
        if (err)
            return err;
        uint32_t sec_end = c + ((vol_ss(v) - byte) * 8 - ((c - SF_FIRST_CLUSTER) & 7));
        for (; c < stop && c < sec_end; c++) {
            uint32_t b = c - SF_FIRST_CLUSTER;
            uint8_t *p = sec + ((b >> 3) & (vol_ss(v) - 1));
            if (used)
                *p = (uint8_t)(*p | (1u << (b & 7)));
            else
                *p = (uint8_t)(*p & ~(1u << (b & 7)));
        }
        if ((err = cache_put(v, lba)))
            return err;
    }
    return 0;
}

void bitmap_readahead(struct sf_vol *v, uint32_t c, uint32_t n)
{
    uint64_t lba, last;
    uint32_t byte;
    if (!n)
        return;
    bitmap_pos(v, c, &lba, &byte);
    bitmap_pos(v, c + n - 1, &last, &byte);
    cache_readahead(v, lba, (uint32_t)(last - lba + 1));
}

int bitmap_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    uint32_t c = from;
    *out = 0;
    while (c < to) {
        uint64_t lba;
        uint32_t byte;
        uint8_t *sec;
        bitmap_pos(v, c, &lba, &byte);
        bitmap_readahead(v, c, to - c);
        int err = cache_get(v, lba, &sec);
        if (err)
            return err;
        for (; byte < vol_ss(v) && c < to; byte++) {
            uint32_t bit = (c - SF_FIRST_CLUSTER) & 7;
            if (bit == 0 && sec[byte] == 0xFF) {     /* eight clusters in use */
                c += 8;
                continue;
            }
            for (; bit < 8 && c < to; bit++, c++) {
                if (!((sec[byte] >> bit) & 1)) {
                    *out = c;
                    return 0;
                }
            }
        }
    }
    return 0;
}
