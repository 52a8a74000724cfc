/* Formatting only (exFAT, FAT32, FAT16; MBR or GPT): a production-line tool or a firmware's
 * "format card" menu entry. */
#include "size.h"
#include "streamfat/vol.h"

int sf_size_main(void)
{
    const char *why;
    return sf_mkfs(SIZE_PTR(struct sf_bdev *, 1), SIZE_PTR(const struct sf_mkfs_opts *, 2), &why);
}
