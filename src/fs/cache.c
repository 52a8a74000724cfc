/* Metadata sector cache: sector buffers in the memory the caller passed to sf_mount.
 *
 * Write-through: a changed sector is written at once by cache_put, so the order of metadata
 * writes on the device is exactly the order of cache_put calls. That order is what the
 * crash-consistency rules in docs/DESIGN.md are stated in; a write-back cache would have to
 * re-establish it at every flush. File data never passes through here: writers of data call
 * cache_forget for the sectors they overwrite.
 *
 * Direct-mapped: sector L lives in slot L mod n. Lookups are O(1) however large the cache;
 * a sequential scan of a directory or bitmap fills distinct slots. */
#include "fs/exfat.h"

void cache_init(struct sf_vol *v, void *mem, uint32_t size)
{
    uint32_t ss = vol_ss(v);
    uint32_t n = (size - 8) / (ss + (uint32_t)sizeof(struct sf_cache_slot));
    v->cache_mem = mem;
    v->cache_n = n;
    v->cache_victim = 0;
    uintptr_t hdr = (uintptr_t)(v->cache_mem + (size_t)n * ss);
    hdr = (hdr + 7u) & ~(uintptr_t)7u;               /* the headers hold u64s */
    v->cache = (struct sf_cache_slot *)hdr;
    for (uint32_t i = 0; i < n; i++)
        v->cache[i].lba = UINT64_MAX;
}

static uint8_t *slot_mem(struct sf_vol *v, uint32_t i)
{
    return v->cache_mem + ((size_t)i << v->sector_shift);
}

int cache_get(struct sf_vol *v, uint64_t lba, uint8_t **sec)
{
    uint32_t i = (uint32_t)(lba % v->cache_n);
    if (v->cache[i].lba != lba) {
        v->cache[i].lba = UINT64_MAX;
        int err = sf_bdev_read(v->bd, lba, slot_mem(v, i), 1);
        if (err)
            return err;
        v->cache[i].lba = lba;
    }
    *sec = slot_mem(v, i);
    return 0;
}

int cache_put(struct sf_vol *v, uint64_t lba)
{
    uint32_t i = (uint32_t)(lba % v->cache_n);
    if (v->cache[i].lba != lba)
        return SF_EINVAL;           /* programming error: put without get */
    v->unflushed = 1;
    int err = sf_bdev_write(v->bd, lba, slot_mem(v, i), 1);
    if (err)
        v->cache[i].lba = UINT64_MAX;   /* the device state is unknown now */
    return err;
}

void cache_forget(struct sf_vol *v, uint64_t lba, uint64_t count)
{
    if (count >= v->cache_n) {
        for (uint32_t i = 0; i < v->cache_n; i++)
            if (v->cache[i].lba != UINT64_MAX && v->cache[i].lba - lba < count)
                v->cache[i].lba = UINT64_MAX;
        return;
    }
    for (uint64_t k = 0; k < count; k++) {
        uint32_t i = (uint32_t)((lba + k) % v->cache_n);
        if (v->cache[i].lba == lba + k)
            v->cache[i].lba = UINT64_MAX;
    }
}

uint8_t *cache_scratch(struct sf_vol *v)
{
    uint32_t i = v->cache_victim++ % v->cache_n;
    v->cache[i].lba = UINT64_MAX;
    return slot_mem(v, i);
}

void cache_update(struct sf_vol *v, uint64_t lba, const uint8_t *data)
{
    uint32_t i = (uint32_t)(lba % v->cache_n);
    if (v->cache[i].lba == lba)
        memcpy(slot_mem(v, i), data, vol_ss(v));
}
