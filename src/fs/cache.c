/* Metadata sector cache: a few sector buffers in memory the caller passed to sf_mount.
 *
 * Write-through: a changed sector is written at once by cache_put, so the order of metadata
 * writes on the device is exactly the order of cache_put calls. That order is what the
 * crash-consistency rules in docs/DESIGN.md are stated in; a write-back cache would have to
 * re-establish it at every flush. File data never passes through here: writers of data call
 * cache_forget for the sectors they overwrite. */
#include "fs/exfat.h"

void cache_init(struct sf_vol *v, void *mem, uint32_t size)
{
    uint32_t n = size >> v->sector_shift;
    if (n > SF_VOL_CACHE_SLOTS)
        n = SF_VOL_CACHE_SLOTS;
    v->cache_mem = mem;
    v->cache_n = n;
    v->cache_clock = 0;
    for (uint32_t i = 0; i < SF_VOL_CACHE_SLOTS; i++) {
        v->cache[i].lba = UINT64_MAX;
        v->cache[i].age = 0;
    }
}

static uint8_t *slot_mem(struct sf_vol *v, uint32_t i)
{
    return v->cache_mem + ((size_t)i << v->sector_shift);
}

static uint32_t slot_victim(struct sf_vol *v)
{
    uint32_t best = 0;
    for (uint32_t i = 0; i < v->cache_n; i++) {
        if (v->cache[i].lba == UINT64_MAX)
            return i;
        if (v->cache[i].age < v->cache[best].age)
            best = i;
    }
    return best;
}

int cache_get(struct sf_vol *v, uint64_t lba, uint8_t **sec)
{
    for (uint32_t i = 0; i < v->cache_n; i++) {
        if (v->cache[i].lba == lba) {
            v->cache[i].age = ++v->cache_clock;
            *sec = slot_mem(v, i);
            return 0;
        }
    }
    uint32_t i = slot_victim(v);
    v->cache[i].lba = UINT64_MAX;
    int err = sf_bdev_read(v->bd, lba, slot_mem(v, i), 1);
    if (err)
        return err;
    v->cache[i].lba = lba;
    v->cache[i].age = ++v->cache_clock;
    *sec = slot_mem(v, i);
    return 0;
}

int cache_put(struct sf_vol *v, uint64_t lba)
{
    for (uint32_t i = 0; i < v->cache_n; i++) {
        if (v->cache[i].lba == lba) {
            int err = sf_bdev_write(v->bd, lba, slot_mem(v, i), 1);
            if (err)
                v->cache[i].lba = UINT64_MAX; /* the device state is unknown now */
            return err;
        }
    }
    return SF_EINVAL; /* programming error: put without get */
}

void cache_forget(struct sf_vol *v, uint64_t lba, uint64_t count)
{
    for (uint32_t i = 0; i < v->cache_n; i++)
        if (v->cache[i].lba != UINT64_MAX && v->cache[i].lba - lba < count)
            v->cache[i].lba = UINT64_MAX;
}

uint8_t *cache_scratch(struct sf_vol *v)
{
    uint32_t i = slot_victim(v);
    v->cache[i].lba = UINT64_MAX;
    v->cache[i].age = ++v->cache_clock;
    return slot_mem(v, i);
}
