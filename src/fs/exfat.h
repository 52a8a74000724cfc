/* Internal interfaces of the exFAT engine, shared by its files:
 *   cache.c        metadata sector cache (write-through)
 *   exfat_vol.c    mount, unmount, volume flags, up-case table
 *   exfat_alloc.c  allocation bitmap and FAT chains
 *   exfat_dir.c    directory walking, entry sets, name lookup, path resolution
 *   exfat_file.c   files: open, read, write, seek, truncate, sync, close
 *   exfat_ops.c    name operations: stat, mkdir, unlink, rmdir, rename, readdir
 */
#ifndef SF_FS_EXFAT_H
#define SF_FS_EXFAT_H

#include <stdint.h>
#include <string.h>
#include "streamfat/sf.h"
#include "util/le.h"
#include "fs/exfat_ondisk.h"

/* ---- cache.c: metadata sectors, written through, least recently used slot evicted ----
 * A pointer from cache_get stays valid until the next cache_* call on the volume. */
void cache_init(struct sf_vol *v, void *mem, uint32_t size);
int cache_get(struct sf_vol *v, uint64_t lba, uint8_t **sec);
/* Write the cached sector (after the caller changed it through the pointer). */
int cache_put(struct sf_vol *v, uint64_t lba);
/* Forget cached copies of sectors that are about to be written around the cache. */
void cache_forget(struct sf_vol *v, uint64_t lba, uint64_t count);
/* A sector-sized scratch buffer (evicts one slot); valid until the next cache_* call. */
uint8_t *cache_scratch(struct sf_vol *v);

static inline uint32_t vol_ss(const struct sf_vol *v) { return 1u << v->sector_shift; }
static inline uint32_t vol_cs(const struct sf_vol *v) { return 1u << v->cluster_shift; }
static inline int clus_ok(const struct sf_vol *v, uint32_t c)
{
    return c >= EXFAT_FIRST_CLUSTER && c - EXFAT_FIRST_CLUSTER < v->cluster_count;
}
static inline uint64_t clus_lba(const struct sf_vol *v, uint32_t c)
{
    return (uint64_t)v->heap_offset + ((uint64_t)(c - EXFAT_FIRST_CLUSTER) << v->spc_shift);
}

/* ---- exfat_vol.c ---- */
/* Note a modification: sets the volume-dirty flag on disk (once) before the first change. */
int vol_begin_write(struct sf_vol *v);
/* Flush the device if anything was written since the last flush. */
int vol_flush(struct sf_vol *v);
/* All changes are made: flush, clear the dirty flag if we set it and no file is open for
 * writing, flush. */
int vol_end_write(struct sf_vol *v);
int vol_clean(struct sf_vol *v);
uint16_t vol_upcase(const struct sf_vol *v, uint16_t c);
sf_time_ms vol_now(const struct sf_vol *v);

/* ---- exfat_alloc.c ---- */
int fat_get(struct sf_vol *v, uint32_t c, uint32_t *next);
int fat_set(struct sf_vol *v, uint32_t c, uint32_t next);
/* Next cluster of a chain: *next = 0 at its end. Validates the FAT entry. */
int chain_next(struct sf_vol *v, const struct sf_chain *ch, uint32_t c, uint32_t *next);
/* Cluster number `index` of the chain, walking from (from_clus, from_index) when that is
 * not past it. SF_ECORRUPT when the chain ends early or leaves the heap. */
int chain_seek(struct sf_vol *v, const struct sf_chain *ch, uint32_t index,
               uint32_t from_clus, uint32_t from_index, uint32_t *out);
/* Count clusters of a FAT chain (bounded; SF_ECORRUPT on loops / bad entries). */
int chain_length(struct sf_vol *v, uint32_t first, uint32_t *count);
int bitmap_test(struct sf_vol *v, uint32_t c, int *used);
/* Mark [c, c + n) used (1) or free (0) in the bitmap. */
int bitmap_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used);
/* Find free clusters: a run of up to `want` starting at the first free cluster at or after
 * `hint` (wrapping). *got is the run length (>= 1). SF_ENOSPC when none is free. */
int alloc_find(struct sf_vol *v, uint32_t hint, uint32_t want, uint32_t *start, uint32_t *got);
/* Grow a chain whose last cluster is `last` (0 for an empty chain) by n clusters: extends in
 * place when the clusters after `last` are free, else chains a new run; converts a
 * contiguous chain to a FAT chain when contiguity breaks. New clusters are marked in the
 * bitmap (and FAT) before return; *last is updated. `have` is the chain's current length. */
int chain_grow(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t *last, uint32_t n);
/* Shrink a chain to `keep` clusters (0 frees all; ch->first becomes 0). */
int chain_shrink(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t keep,
                 uint32_t *last);
/* Free every cluster of a chain of `n` clusters (n ignored for FAT chains: walks to EOC). */
int chain_free(struct sf_vol *v, const struct sf_chain *ch, uint32_t n);

/* ---- exfat_dir.c ---- */

/* A walker over a directory's 32-byte entries. */
struct dwalk {
    struct sf_vol *v;
    struct sf_chain ch;
    uint32_t nclus;        /* clusters in the directory (counted at open) */
    uint32_t clus;         /* cluster of entry index (cidx << entries-per-cluster shift) */
    uint32_t cidx;
};
int dwalk_open(struct dwalk *w, struct sf_vol *v, const struct sf_chain *ch);
/* Sector and byte offset of entry idx; SF_ENOENT past the end of the directory. */
int dwalk_locate(struct dwalk *w, uint32_t idx, uint64_t *lba, uint32_t *off);
static inline uint32_t dwalk_entries(const struct dwalk *w)
{
    return w->nclus << (w->v->cluster_shift - 5);
}

/* An entry set held in memory. */
struct eset {
    uint8_t e[(1 + EXFAT_MAX_SECONDARY) * EXDE_SIZE];
    uint32_t n;                 /* entries */
    uint32_t idx;               /* index of the file entry in its directory */
    struct sf_entry_loc loc;
};
/* Decoded view of a file's entry set. */
struct dentry {
    uint16_t name[SF_NAME_MAX];
    uint32_t name_len;
    uint32_t attr;
    struct sf_chain ch;
    uint64_t data_length, valid_length;
    sf_time_ms ctime, mtime, atime;
    uint64_t loc_lba;           /* where its set starts (for matching open files) */
    uint16_t loc_off;
};

/* Read the set whose file entry is at idx; validates structure and checksum. */
int eset_read(struct dwalk *w, uint32_t idx, struct eset *s);
int eset_decode(const struct sf_vol *v, const struct eset *s, struct dentry *d);
/* Recompute the set checksum and write the sectors the set covers (the one holding the
 * file entry last, so a torn multi-sector write leaves a set that fails its checksum). */
int eset_write(struct sf_vol *v, struct eset *s);
/* Rewrite the file and stream entries of the set at loc (one sector write for the sets this
 * library places). attr UINT32_MAX keeps the attributes; touch_mtime sets the modification
 * and access times to mtime. */
int eset_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
                const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
                sf_time_ms mtime, int touch_mtime);
/* Mark every entry of the set not in use, file entry first. */
int eset_delete(struct sf_vol *v, const struct sf_entry_loc *loc);
/* Build a new set in memory. */
void eset_build(const struct sf_vol *v, struct eset *s, const uint16_t *name, uint32_t len,
                uint32_t attr, const struct sf_chain *ch, uint64_t data_length,
                uint64_t valid_length, sf_time_ms now);

/* Find `name` (UTF-16, compared through the up-case table) in a directory. Fills s and d and
 * returns 0, or SF_ENOENT with *free_hint (may be NULL) = the first unused entry index, where
 * dir_insert may start looking. */
int dir_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct eset *s, struct dentry *d, uint32_t *free_hint);
/* Place a set in a directory: finds free slots (growing the directory when full), so that
 * the file and stream entries share a sector and a set of <= one sector never straddles
 * one; writes it. `dir_loc` is the directory's own set (NULL for the root), updated when
 * the directory grows. */
int dir_insert(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct eset *s, uint32_t hint);
/* Write zeros over a cluster, around the cache. */
int dir_zero_cluster(struct sf_vol *v, uint32_t c);
/* Is the directory empty (no file sets in use)? 1 yes, 0 no, or an error. */
int dir_is_empty(struct sf_vol *v, const struct sf_chain *dir);

/* Validate and convert one UTF-8 name component to UTF-16. */
int name_from_utf8(const char *s, uint32_t len, uint16_t *out, uint32_t *outlen);
uint16_t name_hash(const struct sf_vol *v, const uint16_t *name, uint32_t len);

/* Resolved path: the parent directory and, if it exists, the final component. */
struct pathres {
    struct sf_chain parent;            /* directory holding the last component */
    struct sf_entry_loc parent_loc;    /* its entry set (count 0 for the root) */
    uint16_t name[SF_NAME_MAX];
    uint32_t name_len;                 /* 0 when the path is the root itself */
    int found;
    uint32_t free_hint;                /* when not found: where free entries start */
    uint32_t avoid_first;              /* refuse to descend into the directory starting at
                                          this cluster (0: none) */
    struct eset set;                   /* when found */
    struct dentry d;
};
/* Resolve a path; intermediate components must be directories (SF_ENOTDIR / SF_ENOENT);
 * descending into the directory whose first cluster is avoid_first (non-zero) fails with
 * SF_EINVAL (used by rename to refuse moving a directory into itself). */
int path_resolve(struct sf_vol *v, const char *path, uint32_t avoid_first, struct pathres *r);

static inline int chain_is_root(const struct sf_vol *v, const struct sf_chain *ch)
{
    return ch->first == v->root_cluster && !ch->contiguous;
}

#endif
