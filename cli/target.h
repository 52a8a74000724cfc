/* Opening a TARGET (image file or block device) and mounting the volume on it. Every
 * failure prints one line naming the target and the reason. */
#ifndef SF_CLI_TARGET_H
#define SF_CLI_TARGET_H

#include "streamfat/sf.h"
#include "streamfat/filebd.h"

#define TARGET_RDONLY 0x1u   /* open the device read-only, mount with SF_VOL_RDONLY */

struct target {
    const char *path;
    struct sf_filebd fbd;
    struct sf_vol vol;
    void *cache;
    uint16_t *upcase;
    int opened, mounted;
};

/* Open and mount. partition: 0 automatic, N the Nth. Returns 0 or CLI_ERR. */
int target_open(struct target *t, const char *path, unsigned flags, uint32_t partition);
/* Unmount (flushing) and close; reports errors. Returns 0 or CLI_ERR. Safe on a target
 * that failed to open. */
int target_close(struct target *t);

/* Open only the device (no mount) for mkfs; prints errors. create_size != 0 creates a
 * sparse image file of that size when the path does not exist. */
int target_open_dev(struct sf_filebd *f, const char *path, unsigned filebd_flags,
                    uint32_t sector_size, uint64_t create_size);

/* Buffer of n bytes aligned for the device (at least 64 bytes); exits on failure. */
void *target_alloc(const struct sf_bdev *bd, size_t n);

#endif
