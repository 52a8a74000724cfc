/* Built instead of exfat_mkfs.c and fat_mkfs.c when formatting is left out (SF_NO_MKFS or
 * SF_READONLY; CMake -DSF_MKFS=OFF; see include/streamfat/config.h). */
#include "streamfat/vol.h"

int sf_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why)
{
    (void)bd, (void)o;
    if (why)
        *why = "formatting is not built in (SF_NO_MKFS)";
    return SF_ENOTSUP;
}
