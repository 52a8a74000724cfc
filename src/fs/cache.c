/* Metadata sector cache: sector buffers in the memory the caller passed to sf_mount.
 *
 * Write-through: a changed sector is written at once by cache_put, so the order of metadata
 * writes on the device is exactly the order of cache_put calls. That order is what the
 * crash-consistency rules in docs/DESIGN.md are stated in; a write-back cache would have to
 * re-establish it at every flush. File data never passes through here: clusters
 * are forgotten when they are freed (alloc.c), so a file's clusters have no cached sectors and
 * its data is written around the cache without a lookup; on a corrupt volume whose file
 * chain runs into a directory's cluster they may, and cache_data_check (fs.h) refuses such a
 * write.
 *
 * Direct-mapped: sector L lives in slot L mod n. Lookups are O(1) however large the cache;
 * a sequential scan of a directory or bitmap fills distinct slots. */
#include "fs/exfat.h"
#include "util/div64.h"

void cache_init(struct sf_vol *v, void *mem, uint32_t size)
{
    uint32_t ss = vol_ss(v);
    uint32_t n = (size - 8) / (ss + (uint32_t)sizeof(struct sf_cache_slot));
    v->cache_mem = mem;
    v->cache_n = n;
    v->cache_victim = 0;
    v->cache_ra_win = 0;
    v->cache_ra_next = UINT64_MAX;
    v->cache_heap_lo = UINT64_MAX;
    v->cache_heap_hi = 0;
    v->cache_gap_lo = v->cache_gap_hi = v->cache_gap_at = 0;
    uintptr_t hdr = (uintptr_t)(v->cache_mem + (size_t)n * ss);
    hdr = (hdr + 7u) & ~(uintptr_t)7u;               /* the headers hold u64s */
    v->cache = (struct sf_cache_slot *)hdr;
    for (uint32_t i = 0; i < n; i++)
        v->cache[i].lba = UINT64_MAX;
}

/* The slot of sector lba (util/div64.h: no 64-bit divide on 32-bit targets). */
static uint32_t slot_of(const struct sf_vol *v, uint64_t lba)
{
    return sf_umod64(lba, v->cache_n);
}

static uint8_t *slot_mem(struct sf_vol *v, uint32_t i)
{
    return v->cache_mem + ((size_t)i << v->sector_shift);
}

/* Sectors [lo, hi] enter the cache: those in the cluster heap widen the bounds that
 * cache_data_check tests, and cut the gap it knew to be clear when they fall in it, keeping
 * the side of the write that checked it (a bitmap or directory sector read on the other side
 * does not cost the next write a pass over the slots). */
static void note_heap(struct sf_vol *v, uint64_t lo, uint64_t hi)
{
    if (!SF_HAVE_XLINK_CHECK || hi < v->heap_offset)
        return;                     /* boot region, FATs: never file data */
    if (lo < v->cache_heap_lo)
        v->cache_heap_lo = lo;
    if (hi > v->cache_heap_hi)
        v->cache_heap_hi = hi;
    /* An open file's known run with a cached sector: sf_write's fast path is off for it. Its
     * changed buffered sector cached as metadata: the change is dropped and the file fails
     * with SF_ECORRUPT (its next write, sync or close says so). */
    for (struct sf_file *o = v->open_files; o; o = o->next_open) {
        if (o->ext_end && hi >= o->ext_lba &&
            lo < o->ext_lba + ((uint64_t)o->ext_n << v->spc_shift))
            o->ext_end = 0;
#if SF_FILE_BUF_SIZE > 0
        if (o->bstate == 2 && o->blba >= lo && o->blba <= hi) {
            o->bstate = 0;
            o->failed = SF_ECORRUPT;
        }
#endif
    }
    if (lo < v->cache_gap_hi && hi >= v->cache_gap_lo) {
        if (hi < v->cache_gap_at)
            v->cache_gap_lo = hi + 1;
        else if (lo > v->cache_gap_at)
            v->cache_gap_hi = lo;
        else
            v->cache_gap_lo = v->cache_gap_hi = 0;
    }
}

int cache_get(struct sf_vol *v, uint64_t lba, uint8_t **sec)
{
    uint32_t i = slot_of(v, lba);
    if (v->cache[i].lba != lba) {
        v->cache[i].lba = UINT64_MAX;
        int err = sf_bdev_read(v->bd, lba, slot_mem(v, i), 1);
        if (err)
            return err;
        v->cache[i].lba = lba;
        note_heap(v, lba, lba);
    }
    *sec = slot_mem(v, i);
    return 0;
}

/* Read-ahead for sequential scans of allocation maps (bitmap, FAT): without it a search
 * that walks n sectors costs n single-sector reads, one each time the stream's allocation
 * step reaches a new sector. Reads up to n sectors from lba on with ONE request, straight
 * into their slots, which are contiguous memory as long as the slot index does not wrap.
 *
 * The device is synchronous, so nothing is gained by reading before the scan needs a sector:
 * a window is read only when sector lba is missing, or when lba is cached but lba + 1 is not
 * (the partly used map sector a scan starts in, the last sector of the previous window).
 * Otherwise the call costs two tag checks (allocation steps call this at every step).
 *
 * The window ramps up: 8 sectors for a scan that starts, twice the last window for one that
 * continues where the last read-ahead ended, never more than an eighth of the cache (a
 * read-ahead must not evict much of the working set: directory sectors, the FAT sectors being
 * written) nor SF_CACHE_READAHEAD. So a bigger cache reads at most about as many sectors past
 * a scan's end as the scan used (a fixed big window read 128 sectors for a file that needed
 * 16, and tagging them cost more than the requests it saved: a bigger cache must never cost
 * more instructions than a smaller one, bench/fs_cost.sh checks it), and a long scan still
 * gets windows of SF_CACHE_READAHEAD.
 *
 * Sectors of the window that were already cached are read again: the cache is write-through,
 * so they equal the device's copy (the same slot, so nothing else is evicted), and skipping
 * them cost a tag check per sector. Slots the window fills lose what they held; that costs a
 * re-read at worst, never data. A failed read is not an error here: a bad sector far ahead
 * must not fail a search that never gets there. */
#define RA_FIRST 8u
void cache_readahead(struct sf_vol *v, uint64_t lba, uint32_t n)
{
    if (!n)
        return;
    if (v->cache[slot_of(v, lba)].lba == lba) {
        if (n < 2 || v->cache[slot_of(v, lba + 1)].lba == lba + 1)
            return;
        lba++;
        n--;
    }
    uint32_t max = v->cache_n / 8 < SF_CACHE_READAHEAD ? v->cache_n / 8 : SF_CACHE_READAHEAD;
    uint32_t w = lba == v->cache_ra_next && v->cache_ra_win ? 2 * v->cache_ra_win : RA_FIRST;
    if (w > max)
        w = max;
    uint32_t i = slot_of(v, lba), k = n < w ? n : w;
    if (k > v->cache_n - i)
        k = v->cache_n - i;
    if (k < 2)
        return;                         /* nothing to gain over cache_get's own read */
    if (sf_bdev_read(v->bd, lba, slot_mem(v, i), k)) {
        for (uint32_t j = 0; j < k; j++)    /* best effort: cache_get reads what it needs */
            v->cache[i + j].lba = UINT64_MAX;
        return;
    }
    for (uint32_t j = 0; j < k; j++)
        v->cache[i + j].lba = lba + j;
    note_heap(v, lba, lba + k - 1);
    v->cache_ra_next = lba + k;
    v->cache_ra_win = w;
}

int cache_put(struct sf_vol *v, uint64_t lba)
{
    uint32_t i = slot_of(v, lba);
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
    for (uint32_t k = 0; k < (uint32_t)count; k++) {      /* count < cache_n here */
        uint32_t i = slot_of(v, lba + k);
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

/* cache_data_check (fs.h): two compares, or one pass over the slots. A cached sector inside
 * the write means the file's cluster is also a directory's (or the bitmap's): refused. Else
 * the pass notes the widest range around the write with no cached sector, so that the next
 * writes there cost two compares until a heap sector enters the cache inside it. */
#if SF_HAVE_XLINK_CHECK
int cache_data_check(struct sf_vol *v, uint64_t lba, uint64_t count)
{
    uint64_t end = lba + count, lo = v->heap_offset, hi = UINT64_MAX;
    if (lba > v->cache_heap_hi || end <= v->cache_heap_lo ||
        (lba >= v->cache_gap_lo && end <= v->cache_gap_hi))
        return 0;
    for (uint32_t i = 0; i < v->cache_n; i++) {
        uint64_t t = v->cache[i].lba;
        if (t < lba) {
            if (t >= lo)
                lo = t + 1;
        } else if (t < end) {
            return SF_ECORRUPT;
        } else if (t < hi) {
            hi = t;                 /* UINT64_MAX (empty slots) never lowers it */
        }
    }
    v->cache_gap_lo = lo;
    v->cache_gap_hi = hi;
    v->cache_gap_at = lba;
    return 0;
}
#endif

uint8_t *cache_zeros(struct sf_vol *v, uint32_t want, uint32_t *got)
{
    uint32_t m = v->cache_n / 2 ? v->cache_n / 2 : 1;
    if (m > want)
        m = want;
    uint32_t first = v->cache_n - m;        /* the end: slot 0 holds the boot sector */
    for (uint32_t i = first; i < v->cache_n; i++)
        v->cache[i].lba = UINT64_MAX;
    memset(slot_mem(v, first), 0, (size_t)m << v->sector_shift);
    *got = m;
    return slot_mem(v, first);
}

void cache_update(struct sf_vol *v, uint64_t lba, const uint8_t *data)
{
    uint32_t i = slot_of(v, lba);
    if (v->cache[i].lba == lba)
        memcpy(slot_mem(v, i), data, vol_ss(v));
}
