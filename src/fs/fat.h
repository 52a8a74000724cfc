/* FAT12/16/32-specific internals. */
#ifndef SF_FS_FAT_H
#define SF_FS_FAT_H

#include "fs/fs.h"

/* ---- fat_vol.c ---- */
/* Validate the BPB (sector 0 of the volume is in buf, one sector) and set v's geometry. */
int fat_mount(struct sf_vol *v, uint8_t *buf);
/* Set or clear the dirty state: the clean-shutdown bit of FAT entry 1 (FAT16/32). */
int fat_set_dirty(struct sf_vol *v, int dirty);
int64_t fat_count_free(struct sf_vol *v);

/* ---- fat_dir.c: 8.3 entries with long-name (LFN) entries; contracts as dir_* in fs.h ---- */
int fat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint);
int fat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint);
int fat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t size, sf_time_ms mtime, int touch_mtime);
int fat_remove(struct sf_vol *v, const struct sf_entry_loc *loc);
int fat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d);
int fat_is_empty(struct sf_vol *v, const struct sf_chain *dir);
/* Write "." and ".." into a new directory's (zeroed) first cluster. */
int fat_init_dir(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now);
/* Point a moved directory's ".." at its new parent. */
int fat_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent);

/* ---- fat_table.c: FAT entries in normalised form (see fs.h); writes go to every copy ---- */
int fat_table_get(struct sf_vol *v, uint32_t c, uint32_t *next);
int fat_table_set(struct sf_vol *v, uint32_t c, uint32_t next);
/* Chain [start, start + n), the last entry holding `end`: one write per FAT sector per copy. */
int fat_table_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end);
/* Set [start, start + n) to one value (0 frees them). */
int fat_table_fill(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t value);
/* First free cluster in [from, to), or 0. Skips FAT regions the summary knows full. */
int fat_table_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out);
/* Read the FAT sectors of clusters [c, c + n) into the cache ahead of a scan (one read). */
void fat_table_readahead(struct sf_vol *v, uint32_t c, uint32_t n);
/* Set up the free-space summary in cfg.fat_cache (all unknown); called by fat_mount. */
void fat_table_summary_init(struct sf_vol *v);
/* Free clusters, read sector by sector (skipping regions known full). */
int64_t fat_table_count_free(struct sf_vol *v);

#endif
