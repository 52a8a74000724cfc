/* The tiny logger (issue 19, docs/PORTING.md "The tiny set"): the smallest useful CAN logger,
 * for a microcontroller with 64 KiB of flash. It writes the same SFL files as the full logger
 * (docs/FORMAT.md), named as it names them (LOGnnnnn.SFL, numbered after the highest already
 * in the directory), so `streamfat export`, `streamfat fsck` and the Python reader read them
 * unchanged. It does not use the volume, file or stream layers: it has its own FAT16/FAT32
 * code (src/tiny/), reduced to what one log needs.
 *
 *   sf_tiny_mount        FAT16 or FAT32, on an MBR partition or a superfloppy; sector 512 or
 *                        4096 bytes as the device says
 *   sf_tiny_log_open     the log directory (the root or one 8.3 directory in it) and the
 *                        first file
 *   sf_tiny_log_append_can / sf_tiny_log_append
 *                        from ONE producer: an interrupt handler (or one thread); lock-free,
 *                        O(record), never blocks. A full ring drops the record and counts it;
 *                        the producer's next accepted record is preceded by a DROP record
 *                        with the count (close writes a pending one)
 *   sf_tiny_log_service  from the main loop: writes every finished block (one device write
 *                        per contiguous piece), checkpoints, rotates by size
 *   sf_tiny_log_close    producers stopped: the last block, the final checkpoint
 *   sf_tiny_unmount      the FSInfo sector (FAT32), a flush
 *
 * Memory is the caller's: struct sf_tiny_vol with one sector buffer, struct sf_tiny_log, and
 * the ring (a multiple of the block size, at least 2 blocks). No static data, no malloc, no
 * floating point, no 64-bit division.
 *
 * Left out against the full logger (include/streamfat/log.h): exFAT, long names, GPT, the
 * flight recorder, the control stage, raw mode, rotation by time, cyclic deletion, several
 * producers, channels named while logging (all names come with the configuration and must
 * fit, with the META strings, in the first sector of the header block), the prepared next
 * file (a rotation creates the next file's entry then). */
#ifndef STREAMFAT_TINY_H
#define STREAMFAT_TINY_H

#include <stdint.h>
#include "bdev.h"
#include "rec.h"

/* C++ callers only allocate struct sf_tiny_log: there its shared words are plain uint32_t,
 * of the same size and alignment (as in log_struct.h). */
#ifdef __cplusplus
#define SF_TINY_ATOMIC_U32 uint32_t
#else
#include <stdatomic.h>
#define SF_TINY_ATOMIC_U32 _Atomic uint32_t
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A FAT16 or FAT32 volume. Sector numbers are relative to the volume's first sector (base). */
struct sf_tiny_vol {
    struct sf_bdev *bd;
    uint8_t *buf;            /* one sector, the caller's: every FAT and directory access */
    uint64_t base;           /* first sector of the volume on bd (the partition's start) */
    uint32_t sectors;        /* sectors in the volume */
    uint32_t ss;             /* sector size (bd's, = the BPB's) */
    uint8_t ss_shift;        /* log2 ss */
    uint8_t cl_shift;        /* log2 sectors per cluster */
    uint8_t fat32;           /* 1 FAT32, 0 FAT16 */
    uint8_t nfats;           /* FAT copies, all kept equal */
    uint32_t fat_lba;        /* first sector of FAT 1 */
    uint32_t fat_size;       /* sectors per FAT */
    uint32_t root_lba;       /* FAT16: the fixed root directory's first sector */
    uint32_t root_sectors;   /* FAT16: its sectors (0 on FAT32) */
    uint32_t root_clus;      /* FAT32: the root directory's first cluster */
    uint32_t data_lba;       /* cluster 2's first sector */
    uint32_t clusters;       /* data clusters: numbers 2 .. clusters + 1 */
    uint32_t fsinfo;         /* FAT32 FSInfo sector, 0 when none */
    uint32_t free_count;     /* free clusters, 0xFFFFFFFF when unknown (FSInfo's) */
    uint32_t next_free;      /* where the next allocation search starts */
    uint8_t fsinfo_dirty;    /* free_count or next_free changed since mount */
};

/* Mount: buf is one sector (bd->sector_size bytes), the caller's, used by every later call.
 * 0, SF_ENOENT (no FAT16/FAT32 volume: no boot sector, no FAT partition, FAT12 or exFAT),
 * SF_ECORRUPT (a boot sector with impossible values), or the device's error. */
int sf_tiny_mount(struct sf_tiny_vol *v, struct sf_bdev *bd, void *buf);
/* Write the FSInfo sector's free count and next-free hint (FAT32) and flush. */
int sf_tiny_unmount(struct sf_tiny_vol *v);

/* A record was dropped: the ring was full (as in log.h). */
#ifndef SF_EDROPPED
#define SF_EDROPPED (-105)
#endif

typedef uint64_t (*sf_tiny_clock_fn)(void *ctx);   /* nanoseconds */

struct sf_tiny_log_cfg {
    struct sf_tiny_vol *vol;
    void *ring;                  /* ring_size bytes, 8-aligned (and as bd->mem_align wants) */
    uint32_t ring_size;          /* block_size times a power of two, 2 .. 8192 blocks */
    uint32_t block_size;         /* power of two, sector size .. 32 KiB (0: 4096) */
    const char *dir;             /* NULL or "": the root; else an 8.3 directory in the root,
                                    which must exist */
    uint32_t split_bytes;        /* rotate when the next block would pass this size (0: the
                                    FAT limit, 4 GiB - 1 rounded down to blocks) */
    uint32_t checkpoint_bytes;   /* checkpoint after this many bytes (0: off) */
    uint64_t checkpoint_ns;      /* and this long after the last one (0: 1 s; needs clock) */
    sf_tiny_clock_fn clock;      /* time-based checkpoints, and file start times when it is
                                    the realtime clock (NULL: none) */
    void *clock_ctx;
    uint32_t clock_kind;         /* enum sf_clock_kind, stored in file headers; unless it is
                                    SF_CLOCK_REALTIME the headers' start time is 0, "no wall
                                    clock" (docs/FORMAT.md) */
    uint64_t session_id;         /* random, from the caller; file ids derive from it */
    /* The channels records may use: 0 .. channel_count - 1 (at most 256), each named in
     * every file (docs/FORMAT.md, Channel names): channel_names[i], or can<i> when
     * channel_names or its entry is NULL. A name is UTF-8 without spaces or control
     * characters. Appends on another channel are refused (SF_EINVAL). */
    const char *const *channel_names;
    uint32_t channel_count;
    const char *const *meta;     /* "key=value" strings for every file header */
    uint32_t meta_count;
    uint32_t fat_time;           /* DOS date << 16 | DOS time for the directory entries */
};

struct sf_tiny_log_stats {
    uint32_t files;              /* files started */
    uint32_t records_written;    /* records in blocks written (DROP records included) */
    uint32_t records_dropped;    /* refused because the ring was full */
    uint32_t ring_high_water;    /* most ring blocks in use at once, in bytes */
    uint64_t bytes_written;      /* file bytes written, header blocks included */
    uint64_t bytes_durable;      /* covered by a completed checkpoint */
};

struct sf_tiny_log {
    /* Shared by the producer and the writer (src/tiny/tiny_ring.c says how). */
    SF_TINY_ATOMIC_U32 pos;        /* the block being filled: counter, state bits, used */
    SF_TINY_ATOMIC_U32 tail;       /* counter of the oldest block not yet written */
    /* The producer's own. */
    uint32_t drop_pending;       /* records lost since the last DROP record */
    uint64_t drop_first, drop_last;
    SF_TINY_ATOMIC_U32 dropped;    /* records lost in all */
    /* The writer's. */
    struct sf_tiny_log_cfg cfg;
    struct sf_tiny_vol *v;
    uint8_t *ring;
    uint32_t nblocks, bsize;
    uint32_t index;              /* current file's number (LOGnnnnn.SFL) */
    uint64_t file_id, seq;       /* the current file's id and next block number */
    uint32_t size;               /* bytes written to the current file */
    uint32_t ckpt_size;          /* size at its last checkpoint */
    uint64_t next_ckpt;          /* clock time of the next time-based checkpoint */
    uint32_t dir_clus;           /* the log directory's first cluster (0: FAT16 root) */
    uint32_t ent_lba;            /* the current file's directory entry: sector ... */
    uint32_t ent_off;            /* ... and byte in it */
    uint32_t first_clus;         /* its first cluster (0: none yet) */
    uint32_t clus;               /* cluster of the next byte to write (0: none) */
    uint32_t run_end;            /* end (exclusive) of the allocated run holding clus */
    uint32_t clus_off;           /* bytes written into clus */
    int err;                     /* the writer's first error; it stops writing then */
    uint8_t open;                /* a file is open */
    struct sf_tiny_log_stats st;
};

int sf_tiny_log_open(struct sf_tiny_log *lg, const struct sf_tiny_log_cfg *cfg);
/* Append a CAN frame (rules of docs/FORMAT.md; SF_EINVAL when broken or on a channel not
 * below channel_count): 0, or SF_EDROPPED when the ring is full (counted). One producer
 * only. */
int sf_tiny_log_append_can(struct sf_tiny_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                           uint32_t flags, const uint8_t *data, uint8_t len);
/* Append any record (not DROP: the logger's own). SF_EINVAL when larger than a block, or
 * a CAN, SAMPLE, TEXT or LATENCY record on a channel not below channel_count. */
int sf_tiny_log_append(struct sf_tiny_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                       uint64_t ts, const void *body, uint16_t len);
/* One step of the writer: > 0 did something, 0 idle, < 0 the writer's (first) error: then
 * nothing more is written, the producers' records count as dropped, and close returns it. */
int sf_tiny_log_service(struct sf_tiny_log *lg);
/* The producer has stopped: write everything, the final checkpoint (entry size, unused
 * clusters freed). Returns 0 or the writer's first error. */
int sf_tiny_log_close(struct sf_tiny_log *lg);
void sf_tiny_log_get_stats(const struct sf_tiny_log *lg, struct sf_tiny_log_stats *st);

#ifdef __cplusplus
}
#endif

#endif
