/* Opening a TARGET (image file or block device) and mounting the volume on it, in two
 * steps: locate (open the device, find the file system, settle the sector size; what fsck
 * needs, as it must not mount) and mount. Every failure prints one line naming the target
 * and the reason. */
#ifndef SF_CLI_TARGET_H
#define SF_CLI_TARGET_H

#include "streamfat/sf.h"
#include "streamfat/filebd.h"
#include "streamfat/aiobd.h"
#include "streamfat/simbd.h"

#define TARGET_RDONLY   0x1u  /* open the device read-only, mount with SF_VOL_RDONLY */
#define TARGET_DIRECT   0x2u  /* O_DIRECT; where the host file system refuses it (tmpfs, or an
                                 O_DIRECT alignment larger than the volume's sectors) the
                                 target is reopened buffered with a note on stderr */
#define TARGET_ASYNC    0x4u  /* mount over an sf_aiobd so that submit/poll are asynchronous */
#define TARGET_NO_URING 0x8u  /* with TARGET_ASYNC: the threads backend, never io_uring */

struct target {
    const char *path;
    struct sf_filebd fbd;
    struct sf_aiobd aio;     /* with TARGET_ASYNC; the volume is mounted on aio.bd */
    struct sf_simbd sim;     /* a sim: TARGET (cli/tools/sim_target.h): the timing model over fbd,
                                asynchronous by itself; the volume is mounted on sim.bd */
    struct sf_bdev_window win; /* target_volume_bd: the partition, for fsck */
    struct sf_vol vol;
    void *cache;
    uint16_t *upcase;
    void *fat_cache;         /* FAT free-space summary (64 KiB: a 2 TiB FAT32 volume) */
    int opened, mounted, async, is_sim;
};

/* The locate step, no mount: open the device (TARGET_RDONLY, TARGET_DIRECT as below), look
 * for a file system (sf_probe, into a partition table) and give the device the file
 * system's sector size. *type is SF_FS_NONE when nothing is recognised: not an error here
 * (target_open refuses it, fsck looks anyway), and the device is then left as opened.
 * The device is t->fbd; close with target_close. Returns 0 or CLI_ERR. */
int target_locate(struct target *t, const char *path, unsigned flags, uint32_t partition,
                  uint8_t *type);
/* After target_locate: the volume's sectors read without a mount, a window onto the
 * partition (t->win) or the whole device for a superfloppy. NULL after printing an error
 * (no such partition or volume, an inconsistent table). */
struct sf_bdev *target_volume_bd(struct target *t, uint32_t partition);

/* Locate, then mount. partition: 0 automatic, N the Nth. Returns 0 or CLI_ERR. */
int target_open(struct target *t, const char *path, unsigned flags, uint32_t partition);
/* The same with the asynchronous device's queue depth (TARGET_ASYNC; 0 means 4). */
int target_open_async(struct target *t, const char *path, unsigned flags, uint32_t partition,
                      unsigned queue_depth);
/* The device the volume is mounted on. */
static inline struct sf_bdev *target_bd(struct target *t)
{
    return t->is_sim ? &t->sim.bd : t->async ? &t->aio.bd : &t->fbd.bd;
}
/* args: TARGET PATH...: mount TARGET read-write and run fn(t, PATH, flag) on each PATH (as
 * mkdir and rm do). With keep_going every PATH is tried and a failure of any makes the
 * status CLI_ERR; without, the first failure ends it. Returns 0 or CLI_ERR. */
int target_each_path(char **args, int n, uint32_t partition, int keep_going,
                     int (*fn)(struct target *t, const char *path, int flag), int flag);
/* Unmount (flushing) and close; reports errors. Returns 0 or CLI_ERR. Safe on a target
 * that failed to open. */
int target_close(struct target *t);

/* Open only the device (no mount) for mkfs; prints errors. create_size != 0 creates a
 * sparse image file of that size when the path does not exist. */
int target_open_dev(struct sf_filebd *f, const char *path, unsigned filebd_flags,
                    uint32_t sector_size, uint64_t create_size);

/* The path to stat and open for TARGET: itself, or for a sim: spec the storage of that
 * simulated device (created on first use). NULL after printing an error. */
const char *target_dev_path(const char *path);
/* Open the device only, as the volume would see it (a sim: spec gets its timing model),
 * for bench and the like; TARGET_DIRECT is honoured as in target_open. The device is
 * target_bd(t); close with target_close. Returns 0 or CLI_ERR. */
int target_open_raw(struct target *t, const char *path, unsigned flags, unsigned queue_depth);

/* Buffer of n bytes aligned for the device (at least 64 bytes); exits on failure. */
void *target_alloc(const struct sf_bdev *bd, size_t n);

#endif
