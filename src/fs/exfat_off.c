/* Built instead of exfat_vol.c, exfat_alloc.c and exfat_dir.c when exFAT is left out
 * (SF_NO_EXFAT, CMake -DSF_EXFAT=OFF; see include/streamfat/config.h). Mounting an exFAT
 * volume fails with SF_ENOTSUP (sf_mkfs refuses exFAT in exfat_mkfs.c); every other entry is
 * reached only through a mounted exFAT volume, which cannot exist, and fails the same way
 * should it be reached. */
#include "fs/exfat.h"

int exfat_mount(struct sf_vol *v, uint8_t *buf)
{
    (void)buf;
    v->why = "exFAT support is not built in (SF_NO_EXFAT)";
    return SF_ENOTSUP;
}

int exfat_set_dirty(struct sf_vol *v, int dirty)
{
    (void)v, (void)dirty;
    return SF_ENOTSUP;
}

int64_t exfat_count_free(struct sf_vol *v)
{
    (void)v;
    return SF_ENOTSUP;
}

int exfat_fat_get(struct sf_vol *v, uint32_t c, uint32_t *next)
{
    (void)v, (void)c, (void)next;
    return SF_ENOTSUP;
}

int exfat_fat_set(struct sf_vol *v, uint32_t c, uint32_t next)
{
    (void)v, (void)c, (void)next;
    return SF_ENOTSUP;
}

int exfat_fat_run(struct sf_vol *v, uint32_t start, uint32_t n, uint32_t end)
{
    (void)v, (void)start, (void)n, (void)end;
    return SF_ENOTSUP;
}

int bitmap_test(struct sf_vol *v, uint32_t c, int *used)
{
    (void)v, (void)c, (void)used;
    return SF_ENOTSUP;
}

int bitmap_mark(struct sf_vol *v, uint32_t c, uint32_t n, int used)
{
    (void)v, (void)c, (void)n, (void)used;
    return SF_ENOTSUP;
}

int bitmap_find_free(struct sf_vol *v, uint32_t from, uint32_t to, uint32_t *out)
{
    (void)v, (void)from, (void)to, (void)out;
    return SF_ENOTSUP;
}

void bitmap_readahead(struct sf_vol *v, uint32_t c, uint32_t n)
{
    (void)v, (void)c, (void)n;
}

int exfat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
                 uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    (void)v, (void)dir, (void)name, (void)len, (void)d, (void)free_hint;
    return SF_ENOTSUP;
}

int exfat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
                 struct dentry *d, uint32_t hint)
{
    (void)v, (void)dir, (void)dir_loc, (void)d, (void)hint;
    return SF_ENOTSUP;
}

int exfat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
                 const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
                 sf_time_ms mtime, int touch_mtime)
{
    (void)v, (void)loc, (void)attr, (void)ch, (void)data_length, (void)valid_length;
    (void)mtime, (void)touch_mtime;
    return SF_ENOTSUP;
}

int exfat_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    (void)v, (void)loc;
    return SF_ENOTSUP;
}

int exfat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    (void)v, (void)w, (void)idx, (void)d;
    return SF_ENOTSUP;
}

int exfat_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    (void)v, (void)dir;
    return SF_ENOTSUP;
}

uint16_t exfat_name_hash(const struct sf_vol *v, const uint16_t *name, uint32_t len)
{
    (void)v, (void)name, (void)len;
    return 0;
}
