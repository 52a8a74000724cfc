/* Internal interfaces of the volume engine, shared by all file systems.
 *
 *   cache.c   metadata sector cache (write-through)
 *   vol.c     mount (partition, detection, dispatch), dirty flag, unmount, info
 *   alloc.c   cluster chains: walk, grow, shrink, free (over the FAT of either file system)
 *   dir.c     directory walker, path resolution, dispatch of entry operations
 *   file.c    files: open, read, write, seek, truncate, sync, close
 *   ops.c     stat, mkdir, unlink, rmdir, rename, readdir
 * and per file system:
 *   exfat_vol.c exfat_alloc.c exfat_dir.c (exfat.h)    fat_*.c (fat.h)
 *
 * Cluster numbers and FAT entry values are handled in one normalised form everywhere above
 * the FAT codecs: 0 free, SF_FAT_BAD bad, SF_FAT_EOC end of chain, else the next cluster. */
#ifndef SF_FS_FS_H
#define SF_FS_FS_H

#include <stdint.h>
#include <string.h>
#include "streamfat/sf.h"
#include "util/inline.h"
#include "util/le.h"

#define SF_FAT_EOC 0xFFFFFFFFu    /* normalised end of chain */
#define SF_FAT_BAD 0xFFFFFFF7u    /* normalised bad cluster */
#define SF_FIRST_CLUSTER 2u
#define SF_DIRENT_SIZE 32u
#define SF_FAT_MAX_FILE 0xFFFFFFFFull   /* FAT's 32-bit file size */
#define SF_DIR_MAX_BYTES (256u * 1024 * 1024)  /* exFAT's limit; FAT's is 2 MiB (65536 entries) */

/* The text for sf_vol.why when a mount fails. SF_NO_MESSAGES (include/streamfat/config.h)
 * keeps one generic text instead of a reason per check (about 2 KiB of flash on a
 * Cortex-M); the checks and their error codes are the same either way. */
#if SF_HAVE_MESSAGES
#define SF_WHY(text) (text)
#else
#define SF_WHY(text) "volume rejected (reasons not built in: SF_NO_MESSAGES)"
#endif

/* ---- cache.c: metadata sectors, written through, direct-mapped ----
 * A pointer from cache_get stays valid until the next cache_* call on the volume. */
void cache_init(struct sf_vol *v, void *mem, uint32_t size);
int cache_get(struct sf_vol *v, uint64_t lba, uint8_t **sec);
/* Bring up to n sectors from lba into the cache with one device read (allocation-map
 * scans call it before walking sectors; see cache.c for how far it goes). */
#define SF_CACHE_READAHEAD 128u
void cache_readahead(struct sf_vol *v, uint64_t lba, uint32_t n);
/* Write the cached sector (after the caller changed it through the pointer). */
int cache_put(struct sf_vol *v, uint64_t lba);
/* Forget cached copies of sectors that are about to be written around the cache. Freeing
 * clusters forgets theirs (alloc.c), so file data written into allocated clusters needs none. */
void cache_forget(struct sf_vol *v, uint64_t lba, uint64_t count);
/* A sector about to be written around the cache with these contents: a cached copy follows. */
void cache_update(struct sf_vol *v, uint64_t lba, const uint8_t *data);
/* File data about to be written around the cache at [lba, lba + count): SF_ECORRUPT when
 * the cache holds one of those sectors. A regular file's clusters never have cached sectors
 * (freeing forgets them), so a hit means the file is cross-linked with a directory or the
 * exFAT bitmap on a corrupt volume: writing would leave the cache stale, and a later
 * directory write from it would put the old entries over the file's data. Two compares
 * unless the write falls between the heap sectors cached since mount and outside the gap
 * the last check found clear; then one pass over the slots. Called once per run or per
 * slow-path write, never per sf_write fast-path call (the stream's direct path: per call). */
#if SF_HAVE_XLINK_CHECK
int cache_data_check(struct sf_vol *v, uint64_t lba, uint64_t count);
#else
static inline int cache_data_check(struct sf_vol *v, uint64_t lba, uint64_t count)
{
    (void)v, (void)lba, (void)count;
    return 0;
}
#endif
/* A sector-sized scratch buffer (evicts one slot); valid until the next cache_* call. */
uint8_t *cache_scratch(struct sf_vol *v);
/* Up to `want` (>= 1) contiguous zeroed sectors for writing zeros around the cache in
 * multi-sector requests: *got of them, at most half the cache (the slots at its end are
 * evicted). Valid until the next cache_* call. */
uint8_t *cache_zeros(struct sf_vol *v, uint32_t want, uint32_t *got);

static inline uint32_t vol_ss(const struct sf_vol *v) { return 1u << v->sector_shift; }
static inline uint32_t vol_cs(const struct sf_vol *v) { return 1u << v->cluster_shift; }
/* Constant 0 in a core built without exFAT (config.h): every exFAT branch of the shared
 * layers then drops out of a FAT-only firmware such as the tiny set. */
static inline int vol_is_exfat(const struct sf_vol *v)
{
    return SF_HAVE_EXFAT && v->fs_type == SF_FS_EXFAT;
}
static inline int clus_ok(const struct sf_vol *v, uint32_t c)
{
    return c >= SF_FIRST_CLUSTER && c - SF_FIRST_CLUSTER < v->cluster_count;
}
/* First sector of cluster c (alloc.c). */
uint64_t clus_lba(const struct sf_vol *v, uint32_t c);

/* ---- vol.c ---- */
/* Note a modification: sets the volume-dirty flag on disk (once) before the first change. */
int vol_begin_write(struct sf_vol *v);
/* All changes are made: flush, clear the dirty flag if we set it and no file is open for
 * writing, flush. */
int vol_end_write(struct sf_vol *v);
int vol_clean(struct sf_vol *v);
/* Flush the device if anything was written since the last flush. */
int vol_flush(struct sf_vol *v);
uint16_t vol_upcase(const struct sf_vol *v, uint16_t c);
sf_time_ms vol_now(const struct sf_vol *v);

/* ---- alloc.c: chains over the FAT; free space through the file system's own map ---- */
/* Read / write a FAT entry in normalised form (writes go to every FAT copy). */
int fat_get(struct sf_vol *v, uint32_t c, uint32_t *next);
int fat_set(struct sf_vol *v, uint32_t c, uint32_t next);
/* Chain [start, start + n) through the FAT, the last entry holding `end`. */
int fat_write_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end);
/* Next cluster of a chain: *next = 0 at its end. Validates the FAT entry. */
int chain_next(struct sf_vol *v, const struct sf_chain *ch, uint32_t c, uint32_t *next);
/* Cluster number `index` of the chain, walking from (from_clus, from_index) when that is
 * not past it. SF_ECORRUPT when the chain ends early or leaves the heap. */
int chain_seek(struct sf_vol *v, const struct sf_chain *ch, uint32_t index,
               uint32_t from_clus, uint32_t from_index, uint32_t *out);
/* Count clusters of a FAT chain (bounded; SF_ECORRUPT on loops / bad entries). */
int chain_length(struct sf_vol *v, uint32_t first, uint32_t *count);
/* Find free clusters: a run of up to `want` starting at the first free cluster at or after
 * `hint` (wrapping). *got is the run length (>= 1). SF_ENOSPC when none is free. */
int alloc_find(struct sf_vol *v, uint32_t hint, uint32_t want, uint32_t *start, uint32_t *got);
/* Grow a chain whose last cluster is `last` (0 for an empty chain) by n clusters: extends in
 * place when the clusters after `last` are free, else chains a new run; on exFAT a
 * contiguous chain is converted to a FAT chain when contiguity breaks. New clusters are
 * allocated before return; *last is updated. `have` is the chain's current length. On
 * SF_ENOSPC the chain keeps the clusters that could be had. */
int chain_grow(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t *last, uint32_t n);
/* The same, appending the runs of new clusters to runs[*nruns .. max_runs) (a run adjacent to
 * the last one extends it). Stops early, returning 0 with fewer clusters, when a new run would
 * not fit: the caller compares ch->size with what it asked for. */
struct sf_run {
    uint32_t first, count;
};
int chain_grow_runs(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t *last,
                    uint32_t n, struct sf_run *runs, uint32_t max_runs, uint32_t *nruns);
/* Shrink a regular file's chain to `keep` clusters (0 frees all; ch->first becomes 0);
 * unlike chain_free it does not forget cached sectors of what it frees (alloc.c). from_clus,
 * from_index: a known cluster of the chain to walk from, as chain_seek (0, 0: none), so that
 * cutting a long file near its end does not walk it from the start. */
int chain_shrink(struct sf_vol *v, struct sf_chain *ch, uint32_t have, uint32_t keep,
                 uint32_t *last, uint32_t from_clus, uint32_t from_index);
/* Free every cluster of a chain of `n` clusters (n ignored for FAT chains: walks to EOC). */
int chain_free(struct sf_vol *v, const struct sf_chain *ch, uint32_t n);

/* ---- directories (dir.c, dispatching to exfat_dir.c / fat_dir.c) ---- */

/* A walker over a directory's 32-byte entries: a cluster chain, or (FAT12/16 root) the fixed
 * root region. */
struct dwalk {
    struct sf_vol *v;
    struct sf_chain ch;
    uint32_t nclus;        /* clusters in the directory (counted at open) */
    uint32_t fixed;        /* entries of a fixed root region, else 0 */
    uint32_t clus;         /* cluster of entry index (cidx << entries-per-cluster shift) */
    uint32_t cidx;
};
int dwalk_open(struct dwalk *w, struct sf_vol *v, const struct sf_chain *ch);
/* Sector and byte offset of entry idx; SF_ENOENT past the end of the directory. */
int dwalk_locate(struct dwalk *w, uint32_t idx, uint64_t *lba, uint32_t *off);
/* Entries in the directory. */
uint32_t dwalk_entries(const struct dwalk *w);
/* Type byte (first byte) of entry idx. */
int dwalk_type(struct dwalk *w, uint32_t idx, uint8_t *type);

/* A directory entry, decoded; the same for every file system. */
struct dentry {
    uint16_t name[SF_NAME_MAX];
    uint32_t name_len;
    uint32_t attr;
    struct sf_chain ch;
    uint64_t data_length;       /* size */
    uint64_t valid_length;      /* exFAT ValidDataLength; = data_length on FAT */
    sf_time_ms ctime, mtime, atime;
    struct sf_entry_loc loc;    /* where its entries are */
    uint32_t idx;               /* index of its first entry in the directory */
};

/* Find `name` (UTF-16, case-insensitive) in a directory. Fills d and returns 0, or
 * SF_ENOENT with *free_hint (may be NULL) = an entry index where dir_create may start. */
int dir_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint);
/* Create entries for d (name, attr, chain, sizes, times) in a directory, growing it when
 * full; d->loc and d->idx are set. dir_loc: the directory's own entries (count 0 for the
 * root), updated when the directory grows. */
int dir_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint);
/* Rewrite the size / allocation / attributes of the entry at loc in one sector write.
 * attr UINT32_MAX keeps the attributes; touch_mtime sets modification and access times. */
int dir_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
               sf_time_ms mtime, int touch_mtime);
/* Mark the entries at loc unused (the one that makes them a file first). */
int dir_remove(struct sf_vol *v, const struct sf_entry_loc *loc);
/* Change the type byte of every entry at loc to (type & keep) | set, one sector write per
 * sector of the set: from the first sector on, or (last_first) the last sector first. */
int dir_mark_entries(struct sf_vol *v, const struct sf_entry_loc *loc, uint8_t keep, uint8_t set,
                     int last_first);
/* The next file or directory at or after entry *idx; 1 with d filled and *idx past it,
 * 0 at the end. Damaged entries are skipped. */
int dir_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d);
/* Is the directory empty? 1 yes, 0 no, or an error. */
int dir_is_empty(struct sf_vol *v, const struct sf_chain *dir);
/* Set up a new directory's first cluster (zeroed; FAT adds "." and ".."). */
int dir_init_cluster(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now);
/* A directory moved to a new parent (FAT rewrites its ".." entry). */
int dir_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent);
/* Write zeros over a cluster, around the cache. */
int dir_zero_cluster(struct sf_vol *v, uint32_t c);
/* Add one zeroed cluster to a directory and record its new size in its entry. */
int dir_grow(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
             uint32_t nclus);
/* What dir_find_slots needs to know of a file system's entries (exfat_dir.c, fat_dir.c). */
struct dir_slot_rules {
    uint8_t end;        /* type byte of the end-of-directory entry */
    uint8_t unused;     /* type byte of a free entry; skipped end entries are rewritten to it */
    uint8_t in_use;     /* 0, or a bit every entry in use has: entries without it are free too */
    uint8_t head;       /* the first `head` entries of a set must share a sector */
};
/* Find room for a set of n entries, from entry `hint` on (0 when past the end), growing the
 * directory when none fits; end-of-directory entries before the place found are rewritten as
 * unused first. Sets *loc (count n) and *at (its first entry); the set is not written. */
int dir_find_slots(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
                   const struct dir_slot_rules *r, uint32_t n, uint32_t hint,
                   struct sf_entry_loc *loc, uint32_t *at);

/* Validate and convert one UTF-8 name component to UTF-16 (exFAT's rules, which FAT's long
 * names share). */
int name_from_utf8(const char *s, uint32_t len, uint16_t *out, uint32_t *outlen);
int name_equal(const struct sf_vol *v, const uint16_t *a, const uint16_t *b, uint32_t n);

/* Resolved path: the parent directory and, if it exists, the final component. */
struct pathres {
    struct sf_chain parent;            /* directory holding the last component */
    struct sf_entry_loc parent_loc;    /* its entries (count 0 for the root) */
    uint16_t name[SF_NAME_MAX];
    uint32_t name_len;                 /* 0 when the path is the root itself */
    int found;
    uint32_t free_hint;                /* when not found: where free entries start */
    uint32_t avoid_first;              /* refuse to descend into the directory starting at
                                          this cluster (0: none) */
    struct dentry d;                   /* when found */
};
/* Resolve a path; intermediate components must be directories (SF_ENOTDIR / SF_ENOENT);
 * descending into the directory whose first cluster is avoid_first (non-zero) fails with
 * SF_EINVAL (used by rename to refuse moving a directory into itself). */
int path_resolve(struct sf_vol *v, const char *path, uint32_t avoid_first, struct pathres *r);

static inline struct sf_chain vol_root(const struct sf_vol *v)
{
    struct sf_chain r = { v->root_cluster, 0, 0 };
    return r;
}

#endif
