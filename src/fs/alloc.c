/* Cluster chains, for exFAT and FAT alike: walking, growing, shrinking and freeing chains
 * over the FAT, with free space found through each file system's own map (exFAT: the
 * allocation bitmap; FAT: the FAT's free entries).
 *
 * Invariants kept here:
 * - Clusters are allocated (bitmap bit set, or FAT run written with its end mark) before
 *   anything links to them, and released only after nothing refers to them any more
 *   (callers update directory entries first when shrinking). A cut in between leaks
 *   clusters, never shares them.
 * - exFAT: a contiguous (NoFatChain) chain has no meaningful FAT entries; when it must grow
 *   into a non-adjacent run, the FAT entries of its existing clusters are written first and
 *   only then is the run linked, so the chain reads right whichever flag the entry holds.
 * - Every cluster number read from the FAT is validated; walks are bounded by the cluster
 *   count, so loops in a corrupt FAT end in SF_ECORRUPT. */
#include "fs/fs.h"
#include "fs/exfat.h"
#include "fs/fat.h"

uint64_t clus_lba(const struct sf_vol *v, uint32_t c)
{
    return (uint64_t)v->heap_offset + ((uint64_t)(c - SF_FIRST_CLUSTER) << v->spc_shift);
}

int fat_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    return vol_is_exfat(v) ? exfat_fat_get(v, c, next) : fat_table_get(v, c, next);
}

int fat_set(struct sf_vol *v, uint32_t c, uint32_t next)
{
    return vol_is_exfat(v) ? exfat_fat_set(v, c, next) : fat_table_set(v, c, next);
}

int fat_write_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    return vol_is_exfat(v) ? exfat_fat_run(v, start, n, end) : fat_table_run(v, start, n, end);
}

/* Allocate (used = 1, before linking) or release (used = 0, after unlinking) a run. On FAT a
 * run is allocated by writing it as a chain, which the caller does; release zeroes it. */
static int alloc_mark_x(struct sf_vol *v, uint32_t c, uint32_t n, int used, int forget)
{
    int err = 0;
    if (!n)
        return 0;
    if (!clus_ok(v, c) || !clus_ok(v, c + n - 1) || c + n < c)
        return SF_ECORRUPT;
    if (vol_is_exfat(v))
        err = bitmap_mark(v, c, n, used);
    else if (!used)
        err = fat_table_fill(v, c, n, 0);
    if (err)
        return err;
    if (v->free_clusters >= 0)
        v->free_clusters += used ? -(int64_t)n : (int64_t)n;
    if (!used && c < v->next_free)
        v->next_free = c;
    /* Free clusters have no cached sectors (a freed directory's go here), so file data
     * written into clusters allocated later can go around the cache without forgetting.
     * Only regular files' clusters are freed without (file.c: truncate, close): nothing
     * caches those, and a scan of a big cache at every close would cost more the bigger
     * the cache. */
    if (!used && forget)
        cache_forget(v, clus_lba(v, c), (uint64_t)n << v->spc_shift);
    return 0;
}

static int alloc_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used)
{
    return alloc_mark_x(v, c, n, used, 1);
}

static int cluster_free(struct sf_vol *v, uint32_t c, int *is_free)
{
    int err;
    if (vol_is_exfat(v)) {
        int used;
        err = bitmap_test(v, c, &used);
        *is_free = !used;
    } else {
        uint32_t e;
        err = fat_table_get(v, c, &e);
        *is_free = e == 0;
    }
    return err;
}

static int find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    return vol_is_exfat(v) ? bitmap_find_free(v, from, to, out)
                           : fat_table_find_free(v, from, to, out);
}

static SF_NOINLINE uint32_t chain_clusters(const struct sf_vol *v, const struct sf_chain *ch)
{
    return (uint32_t)((ch->size + vol_cs(v) - 1) >> v->cluster_shift);
}

int chain_next(struct sf_vol *v, const struct sf_chain *ch, uint32_t c, uint32_t *next)
{
    if (ch->contiguous) {
        *next = c + 1 - ch->first < chain_clusters(v, ch) ? c + 1 : 0;
        if (*next && !clus_ok(v, *next))
            return SF_ECORRUPT;
        return 0;
    }
    uint32_t e;
    int err = fat_get(v, c, &e);
    if (err)
        return err;
    if (e == SF_FAT_EOC) {
        *next = 0;
        return 0;
    }
    if (!clus_ok(v, e))
        return SF_ECORRUPT;       /* free, bad or outside the heap */
    *next = e;
    return 0;
}

int chain_seek(struct sf_vol *v, const struct sf_chain *ch, uint32_t index,
               uint32_t from_clus, uint32_t from_index, uint32_t *out)
{
    if (!clus_ok(v, ch->first))
        return SF_ECORRUPT;
    if (ch->contiguous) {
        uint32_t c = ch->first + index;
        if (index >= chain_clusters(v, ch) || c < ch->first || !clus_ok(v, c))
            return SF_ECORRUPT;
        *out = c;
        return 0;
    }
    uint32_t c = ch->first, i = 0;
    if (from_clus && from_index <= index) {
        c = from_clus;
        i = from_index;
    }
    if (index - i > v->cluster_count)
        return SF_ECORRUPT;
    while (i < index) {
        int err = chain_next(v, ch, c, &c);
        if (err)
            return err;
        if (!c)
            return SF_ECORRUPT;    /* the chain ends before the size says it should */
        i++;
    }
    *out = c;
    return 0;
}

int chain_length(struct sf_vol *v, uint32_t first, uint32_t *count)
{
    struct sf_chain ch = { first, 0, 0 };
    uint32_t n = 0, c = first;
    if (!clus_ok(v, first))
        return SF_ECORRUPT;
    while (c) {
        if (++n > v->cluster_count)
            return SF_ECORRUPT;    /* a loop */
        int err = chain_next(v, &ch, c, &c);
        if (err)
            return err;
    }
    *count = n;
    return 0;
}

/* Length (<= max) of the run of free clusters starting at c. */
static int free_run(struct sf_vol *v, uint32_t c, uint32_t max, uint32_t *len)
{
    uint32_t end = SF_FIRST_CLUSTER + v->cluster_count, n = 0;
    /* Read the map ahead, past this run too: the next allocation steps of a stream look
     * there, and one long read now saves a read per map sector later (cache.c bounds it).
     * Not when the run asked for ends in the map sector of c: a file growing by a cluster or
     * two at a time would pay for the look at the cache on every step. */
    uint32_t last = max < end - c ? c + max - 1 : end - 1;
    uint32_t base = vol_is_exfat(v) ? SF_FIRST_CLUSTER : 0;     /* the map's first entry */
    uint32_t sh = vol_is_exfat(v) ? v->sector_shift + 3u                /* bits per sector */
                  : v->sector_shift - (v->fat_bits == 32 ? 2u : 1u);   /* entries per sector */
    if (!max || ((c - base) >> sh) != ((last - base) >> sh)) {
        if (vol_is_exfat(v))
            bitmap_readahead(v, c, end - c);
        else
            fat_table_readahead(v, c, end - c);
    }
    while (n < max && c + n < end) {
        int is_free, err = cluster_free(v, c + n, &is_free);
        if (err)
            return err;
        if (!is_free)
            break;
        n++;
    }
    *len = n;
    return 0;
}

int alloc_find(struct sf_vol *v, uint32_t hint, uint32_t want, uint32_t *start, uint32_t *got)
{
    uint32_t end = SF_FIRST_CLUSTER + v->cluster_count, c;
    int err;
    if (!clus_ok(v, hint))
        hint = SF_FIRST_CLUSTER;
    if ((err = find_free(v, hint, end, &c)))
        return err;
    if (!c && hint > SF_FIRST_CLUSTER && (err = find_free(v, SF_FIRST_CLUSTER, hint, &c)))
        return err;
    if (!c)
        return SF_ENOSPC;
    if ((err = free_run(v, c, want, got)))
        return err;
    *start = c;
    return 0;
}

int chain_grow(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t *last, uint32_t n)
{
    return chain_grow_runs(v, ch, have, last, n, NULL, 0, NULL);
}

int chain_grow_runs(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t *last,
                    uint32_t n, struct sf_run *runs, uint32_t max_runs, uint32_t *nruns)
{
    int err;
    if (have && (!ch->first || !*last))
        return SF_EINVAL;
    if ((uint64_t)have + n > v->cluster_count)
        return SF_ENOSPC;
    while (n) {
        uint32_t start = 0, got = 0;
        if (have && *last + 1 < SF_FIRST_CLUSTER + v->cluster_count) {
            if ((err = free_run(v, *last + 1, n, &got)))
                return err;
            start = *last + 1;
        }
        if (!got) {
            uint32_t hint = have ? *last + 1 : v->next_free;
            if (runs && *nruns == max_runs)
                return 0;              /* the caller's run list is full: it grows again */
            if ((err = alloc_find(v, hint, n, &start, &got)))
                return err;
        }
        if (runs) {
            if (*nruns && runs[*nruns - 1].first + runs[*nruns - 1].count == start)
                runs[*nruns - 1].count += got;
            else if (*nruns < max_runs)
                runs[(*nruns)++] = (struct sf_run){ start, got };
            else
                return 0;
        }
        if ((err = alloc_mark(v, start, got, 1)))
            return err;
        if (!have) {
            ch->first = start;
            ch->contiguous = vol_is_exfat(v);
            if (!ch->contiguous && (err = fat_write_run(v, start, got, SF_FAT_EOC)))
                return err;
        } else if (start == *last + 1 && ch->contiguous) {
            /* grown in place: nothing to write but the allocation */
        } else if (start == *last + 1 && v->bulk && !vol_is_exfat(v)) {
            /* One multi-sector write per FAT copy: the link from the old last cluster and
             * the new run together. Torn, it can leave the link without all of the run;
             * the entry's size does not reach past the old clusters until the next
             * checkpoint, which comes after a flush, so a checker only cuts the chain. */
            if ((err = fat_write_run(v, *last, got + 1, SF_FAT_EOC)))
                return err;
        } else {
            /* a new run with its end mark, then the link to it (or, where contiguity
             * breaks, the FAT entries of the existing clusters) */
            if ((err = fat_write_run(v, start, got, SF_FAT_EOC)))
                return err;
            if (ch->contiguous) {
                /* Contiguity breaks: describe the existing clusters in the FAT, linked to
                 * the new run. The entry still says NoFatChain until the caller rewrites
                 * it, and then the FAT is already right. */
                if ((err = fat_write_run(v, ch->first, have, start)))
                    return err;
                ch->contiguous = 0;
            } else if ((err = fat_set(v, *last, start))) {
                return err;
            }
        }
        *last = start + got - 1;
        have += got;
        n -= got;
        ch->size = (uint64_t)have << v->cluster_shift;
        v->next_free = *last + 1;
    }
    return 0;
}

/* Release the FAT chain starting at c, in runs of adjacent clusters; each run is released
 * only after the entries of all its clusters were read. */
static int free_fat_chain(struct sf_vol *v, uint32_t c, int forget)
{
    struct sf_chain fc = { c, 0, 0 };
    uint32_t run_start = c, run_len = 0, steps = 0;
    while (c) {
        uint32_t next;
        int err;
        if (++steps > v->cluster_count)
            return SF_ECORRUPT;
        if ((err = chain_next(v, &fc, c, &next)))
            return err;
        if (run_len && c == run_start + run_len) {
            run_len++;
        } else {
            if (run_len && (err = alloc_mark_x(v, run_start, run_len, 0, forget)))
                return err;
            run_start = c;
            run_len = 1;
        }
        c = next;
    }
    return run_len ? alloc_mark_x(v, run_start, run_len, 0, forget) : 0;
}

static int chain_free_x(struct sf_vol *v, const struct sf_chain *ch, uint32_t n, int forget)
{
    if (!ch->first)
        return 0;
    if (!clus_ok(v, ch->first))
        return SF_ECORRUPT;
    if (ch->contiguous)
        return alloc_mark_x(v, ch->first, n, 0, forget);
    return free_fat_chain(v, ch->first, forget);
}

int chain_free(struct sf_vol *v, const struct sf_chain *ch, uint32_t n)
{
    return chain_free_x(v, ch, n, 1);
}

int chain_shrink(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t keep,
                 uint32_t *last, uint32_t from_clus, uint32_t from_index)
{
    int err;
    if (keep >= have)
        return 0;
    if (keep == 0) {
        struct sf_chain old = *ch;
        ch->first = 0;
        ch->size = 0;
        *last = 0;
        return chain_free_x(v, &old, have, 0);
    }
    if (ch->contiguous) {
        if ((err = alloc_mark_x(v, ch->first + keep, have - keep, 0, 0)))
            return err;
        *last = ch->first + keep - 1;
    } else {
        uint32_t c, tail;
        if ((err = chain_seek(v, ch, keep - 1, from_clus, from_index, &c)) ||
            (err = chain_next(v, ch, c, &tail)))
            return err;
        if ((err = fat_set(v, c, SF_FAT_EOC)))    /* cut first: the tail only leaks */
            return err;
        if (tail && (err = free_fat_chain(v, tail, 0)))
            return err;
        *last = c;
    }
    ch->size = (uint64_t)keep << v->cluster_shift;
    return 0;
}
