/* File block device (Linux/POSIX, host/bdev/file.c): a regular image file or a block device
 * node, through pread/pwrite, optionally with O_DIRECT. Not part of the freestanding core.
 *
 * Block device nodes are opened with O_EXCL, so a device that is mounted (or held by another
 * exclusive opener) is refused with SF_EBUSY. Geometry of a block device comes from
 * BLKGETSIZE64 / BLKSSZGET (logical sector size) and BLKIOOPT / BLKIOMIN (alignment).
 * An image file's sector size is 512 unless given; sf_filebd_set_sector_size changes it after
 * the boot sector has been read (a 4096-byte-sector image is just a file). */
#ifndef STREAMFAT_FILEBD_H
#define STREAMFAT_FILEBD_H

#include "bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_FILEBD_RDONLY 0x1u  /* open read-only; writes fail with SF_EROFS */
#define SF_FILEBD_DIRECT 0x2u  /* O_DIRECT: buffers must be aligned to bd.mem_align (4096) */
#define SF_FILEBD_CREATE 0x4u  /* create a regular file of create_size bytes (sparse) if missing */

struct sf_filebd {
    struct sf_bdev bd;
    int fd;
    int is_blockdev;    /* 1 for a block device node */
    int direct;         /* O_DIRECT in effect */
    uint64_t bytes;     /* size in bytes */
};

/* sector_size 0 means: the device's logical sector size, or 512 for a regular file.
 * A regular file whose size is not a multiple of the sector size is refused (SF_EINVAL). */
int sf_filebd_open(struct sf_filebd *f, const char *path, unsigned flags,
                   uint32_t sector_size, uint64_t create_size);
/* Regular files only: reinterpret the file with another sector size (512 or 4096). */
int sf_filebd_set_sector_size(struct sf_filebd *f, uint32_t sector_size);
/* Flushes nothing; call sf_bdev_flush first when durability matters. */
int sf_filebd_close(struct sf_filebd *f);

#ifdef __cplusplus
}
#endif

#endif
