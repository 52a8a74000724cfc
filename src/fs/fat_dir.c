/* FAT directories: 8.3 entries with long-name (LFN) entries. (Being written: until then
 * fat_mount refuses FAT volumes, so none of these is reached.) */
#include "fs/fat.h"

int fat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    (void)v; (void)dir; (void)name; (void)len; (void)d; (void)free_hint;
    return SF_ENOTSUP;
}

int fat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint)
{
    (void)v; (void)dir; (void)dir_loc; (void)d; (void)hint;
    return SF_ENOTSUP;
}

int fat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t size, sf_time_ms mtime, int touch_mtime)
{
    (void)v; (void)loc; (void)attr; (void)ch; (void)size; (void)mtime; (void)touch_mtime;
    return SF_ENOTSUP;
}

int fat_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    (void)v; (void)loc;
    return SF_ENOTSUP;
}

int fat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    (void)v; (void)w; (void)idx; (void)d;
    return SF_ENOTSUP;
}

int fat_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    (void)v; (void)dir;
    return SF_ENOTSUP;
}

int fat_init_dir(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now)
{
    (void)v; (void)c; (void)parent; (void)now;
    return SF_ENOTSUP;
}

int fat_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent)
{
    (void)v; (void)dir; (void)parent;
    return SF_ENOTSUP;
}
