/* Built instead of fat_*.c when FAT is left out (SF_NO_FAT, CMake -DSF_FAT=OFF; see
 * include/streamfat/config.h). Mounting a FAT volume and formatting one fail with
 * SF_ENOTSUP; every other entry is reached only through a mounted FAT volume, which cannot
 * exist, and fails the same way should it be reached. */
#include "fs/fat.h"
#include "fs/mkfs.h"

int fat_mount(struct sf_vol *v, uint8_t *buf)
{
    (void)buf;
    v->why = "FAT support is not built in (SF_NO_FAT)";
    return SF_ENOTSUP;
}

int fat_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why)
{
    (void)bd, (void)o;
    *why = "FAT support is not built in (SF_NO_FAT)";
    return SF_ENOTSUP;
}

int fat_mkfs_fits(struct sf_bdev *bd, const struct sf_mkfs_opts *o)
{
    (void)bd, (void)o;
    return 0;
}

int fat_set_dirty(struct sf_vol *v, int dirty)
{
    (void)v, (void)dirty;
    return SF_ENOTSUP;
}

int64_t fat_count_free(struct sf_vol *v)
{
    (void)v;
    return SF_ENOTSUP;
}

int fat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    (void)v, (void)dir, (void)name, (void)len, (void)d, (void)free_hint;
    return SF_ENOTSUP;
}

int fat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint)
{
    (void)v, (void)dir, (void)dir_loc, (void)d, (void)hint;
    return SF_ENOTSUP;
}

int fat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t size, sf_time_ms mtime, int touch_mtime)
{
    (void)v, (void)loc, (void)attr, (void)ch, (void)size, (void)mtime, (void)touch_mtime;
    return SF_ENOTSUP;
}

int fat_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    (void)v, (void)loc;
    return SF_ENOTSUP;
}

int fat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    (void)v, (void)w, (void)idx, (void)d;
    return SF_ENOTSUP;
}

int fat_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    (void)v, (void)dir;
    return SF_ENOTSUP;
}

int fat_init_dir(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now)
{
    (void)v, (void)c, (void)parent, (void)now;
    return SF_ENOTSUP;
}

int fat_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent)
{
    (void)v, (void)dir, (void)parent;
    return SF_ENOTSUP;
}

int fat_table_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    (void)v, (void)c, (void)next;
    return SF_ENOTSUP;
}

int fat_table_set(struct sf_vol *v, uint32_t c, uint32_t next)
{
    (void)v, (void)c, (void)next;
    return SF_ENOTSUP;
}

int fat_table_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    (void)v, (void)start, (void)n, (void)end;
    return SF_ENOTSUP;
}

int fat_table_fill(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t value)
{
    (void)v, (void)start, (void)n, (void)value;
    return SF_ENOTSUP;
}

int fat_table_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    (void)v, (void)from, (void)to, (void)out;
    return SF_ENOTSUP;
}

void fat_table_readahead(struct sf_vol *v, uint32_t c, uint32_t n)
{
    (void)v, (void)c, (void)n;
}

void fat_table_summary_init(struct sf_vol *v)
{
    (void)v;
}

int64_t fat_table_count_free(struct sf_vol *v)
{
    (void)v;
    return SF_ENOTSUP;
}
