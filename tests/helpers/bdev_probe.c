/* bdev_probe PATH [SECTOR_SIZE] [direct|rdonly]...
 *
 * Opens PATH with sf_filebd_open and prints its geometry as one line
 *   sector_size=N sector_count=N align_sectors=N mem_align=N blockdev=0|1
 * or, when the open fails, the error's symbolic name (SF_EBUSY, ...) and exits 1.
 * Used by tests/scripts/t_bdev_loop.sh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/filebd.h"

static const char *err_name(int err)
{
    switch (err) {
    case SF_EPERM:        return "SF_EPERM";
    case SF_ENOENT:       return "SF_ENOENT";
    case SF_EIO:          return "SF_EIO";
    case SF_ENOMEM:       return "SF_ENOMEM";
    case SF_EBUSY:        return "SF_EBUSY";
    case SF_EISDIR:       return "SF_EISDIR";
    case SF_ENOTDIR:      return "SF_ENOTDIR";
    case SF_EINVAL:       return "SF_EINVAL";
    case SF_EROFS:        return "SF_EROFS";
    case SF_ENOTSUP:      return "SF_ENOTSUP";
    case SF_ENOSPC:       return "SF_ENOSPC";
    default:              return "SF_E?";
    }
}

int main(int argc, char **argv)
{
    struct sf_filebd f;
    unsigned flags = 0;
    uint32_t ss = 0;
    int err;

    if (argc < 2) {
        fprintf(stderr, "usage: bdev_probe PATH [SECTOR_SIZE] [direct|rdonly]...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "direct"))
            flags |= SF_FILEBD_DIRECT;
        else if (!strcmp(argv[i], "rdonly"))
            flags |= SF_FILEBD_RDONLY;
        else
            ss = (uint32_t)strtoul(argv[i], NULL, 0);
    }
    err = sf_filebd_open(&f, argv[1], flags, ss, 0);
    if (err) {
        printf("%s\n", err_name(err));
        return 1;
    }
    printf("sector_size=%" PRIu32 " sector_count=%" PRIu64 " align_sectors=%" PRIu32
           " mem_align=%" PRIu32 " blockdev=%d\n", f.bd.sector_size, f.bd.sector_count,
           f.bd.align_sectors, f.bd.mem_align, f.is_blockdev);
    sf_filebd_close(&f);
    return 0;
}
