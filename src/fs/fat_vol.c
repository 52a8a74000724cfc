/* FAT12/16/32 volumes: BPB validation, FSInfo, the clean-shutdown and hard-error bits. */
#include "fs/fat.h"

int fat_mount(struct sf_vol *v, uint8_t *buf)
{
    (void)buf;
    v->why = "FAT volumes are not supported yet";
    return SF_ENOTSUP;
}

int fat_set_dirty(struct sf_vol *v, int dirty)
{
    (void)v;
    (void)dirty;
    return SF_ENOTSUP;
}

int64_t fat_count_free(struct sf_vol *v)
{
    (void)v;
    return SF_ENOTSUP;
}
