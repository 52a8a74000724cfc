/* exFAT-specific internals: mount, the allocation bitmap, entry sets. */
#ifndef SF_FS_EXFAT_H
#define SF_FS_EXFAT_H

#include "fs/fs.h"
#include "fs/exfat_ondisk.h"

/* ---- exfat_vol.c ---- */
/* Validate the boot region (sector 0 is in buf, one sector, and sf_boot_sector_kind says
 * SF_FS_EXFAT of it) and read the root directory's system entries. Sets v's geometry. */
int exfat_mount(struct sf_vol *v, uint8_t *buf);
/* Set or clear VolumeDirty in the main boot sector. */
int exfat_set_dirty(struct sf_vol *v, int dirty);
int64_t exfat_count_free(struct sf_vol *v);

/* ---- exfat_alloc.c: the allocation bitmap ---- */
int exfat_fat_get(struct sf_vol *v, uint32_t c, uint32_t *next);
int exfat_fat_set(struct sf_vol *v, uint32_t c, uint32_t next);
/* Chain [start, start + n), the last entry holding `end`; one write per FAT sector. */
int exfat_fat_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end);
int bitmap_test(struct sf_vol *v, uint32_t c, int *used);
/* Mark [c, c + n) used (1) or free (0). */
int bitmap_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used);
/* First free cluster in [from, to), or 0. */
int bitmap_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out);
/* Read the bitmap sectors of clusters [c, c + n) into the cache ahead of a scan (one read). */
void bitmap_readahead(struct sf_vol *v, uint32_t c, uint32_t n);

/* ---- exfat_dir.c: entry sets ---- */
struct eset {
    uint8_t e[(1 + EXFAT_MAX_SECONDARY) * EXDE_SIZE];
    uint32_t n;                 /* entries */
    uint32_t idx;               /* index of the file entry in its directory */
    struct sf_entry_loc loc;
};
int exfat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
                 uint32_t len, struct dentry *d, uint32_t *free_hint);
int exfat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
                 struct dentry *d, uint32_t hint);
int exfat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
                 const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
                 sf_time_ms mtime, int touch_mtime);
int exfat_remove(struct sf_vol *v, const struct sf_entry_loc *loc);
int exfat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d);
int exfat_is_empty(struct sf_vol *v, const struct sf_chain *dir);
uint16_t exfat_name_hash(const struct sf_vol *v, const uint16_t *name, uint32_t len);

#endif
