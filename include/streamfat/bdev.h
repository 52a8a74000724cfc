/* Block devices: the only way the library touches storage.
 *
 * A device is a struct sf_bdev whose callbacks an implementation fills in; implementations
 * embed it as their first member and recover themselves from the pointer. The core calls
 * the sf_bdev_* wrappers below, never the callbacks directly, so that optional callbacks
 * have one fallback and argument checks live in one place.
 *
 * Units: a sector is bd->sector_size bytes (512 or 4096); LBAs are 64-bit sector numbers
 * counted from the start of the device (or of the window, see sf_bdev_window).
 *
 * Threading: a device is used by one thread at a time unless its own header says more.
 */
#ifndef STREAMFAT_BDEV_H
#define STREAMFAT_BDEV_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sf_bdev;

enum sf_bio_op { SF_BIO_READ = 0, SF_BIO_WRITE = 1, SF_BIO_FLUSH = 2 };

/* One asynchronous request. The caller owns it and its buffer until poll hands it back. */
struct sf_bio {
    uint64_t lba;       /* first sector */
    uint32_t count;     /* sectors; 0 for FLUSH */
    uint8_t op;         /* enum sf_bio_op */
    void *buf;          /* count * sector_size bytes; aligned to bd->mem_align */
    int result;         /* set on completion: 0 or a negative sf_err */
    void *user;         /* the caller's, untouched */
    struct sf_bio *next;/* for the device's queue while in flight; do not touch */
};

/* Device capabilities (bd->flags). */
#define SF_BDEV_ATOMIC_SECTOR 0x1u  /* a single-sector write is never torn by a power cut */
#define SF_BDEV_READONLY      0x2u  /* writes fail with SF_EROFS */

struct sf_bdev {
    /* Geometry, filled by the implementation before first use. */
    uint32_t sector_size;    /* 512 or 4096 */
    uint64_t sector_count;   /* device size in sectors */
    uint32_t align_sectors;  /* preferred alignment and size of writes (erase block / allocation
                                unit), in sectors; 1 when unknown */
    uint32_t mem_align;      /* required buffer alignment in bytes (1 when none; 4096 with O_DIRECT) */
    uint32_t flags;          /* SF_BDEV_* */

    /* Read `count` sectors at `lba` into buf. Contract: 0 only when every byte was read;
     * a short or failed read returns SF_EIO and the buffer contents are unspecified;
     * lba + count beyond sector_count returns SF_EINVAL. */
    int (*read)(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count);

    /* Write `count` sectors from buf. Contract: on 0 the data is accepted but NOT durable
     * until a later flush returns 0; after a power cut each sector written since the last
     * flush may hold the old data, the new data, or (unless SF_BDEV_ATOMIC_SECTOR) a mix.
     * On error nothing is promised about the affected sectors; others are untouched. */
    int (*write)(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count);

    /* Make every write that returned before this call durable. Returns 0 or SF_EIO. */
    int (*flush)(struct sf_bdev *bd);

    /* Optional (may be NULL). Tell the device these sectors hold no data; later reads return
     * either the old data or zeros. Failure is harmless to correctness. */
    int (*trim)(struct sf_bdev *bd, uint64_t lba, uint64_t count);

    /* Optional asynchronous pair (both NULL or both set). submit queues the request and
     * returns at once: 0 when queued (its completion will come from poll), or a negative
     * error when refused (then it is not queued). Requests in flight may complete in any
     * order; a FLUSH completes only after every write submitted before it has completed and
     * is durable. poll stores up to `max` completed requests in out[] and returns how many
     * (0 when none are ready and wait is 0); with wait != 0 it blocks until at least one
     * completes, or returns 0 when nothing is in flight. */
    int (*submit)(struct sf_bdev *bd, struct sf_bio *bio);
    int (*poll)(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait);

    /* Implementation state for the synchronous fallback of submit/poll: completed requests
     * waiting to be polled. Zero-initialise; do not touch. */
    struct sf_bio *done_head, *done_tail;
};

/* Wrappers with argument checks; the core calls only these. */
int sf_bdev_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count);
int sf_bdev_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count);
int sf_bdev_flush(struct sf_bdev *bd);
int sf_bdev_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count); /* 0 when not supported */
/* Asynchronous use of any device: a device without submit/poll runs the request at once
 * and hands it back from the next sf_bdev_poll. */
int sf_bdev_submit(struct sf_bdev *bd, struct sf_bio *bio);
int sf_bdev_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait);

/* A window onto part of another device (a partition): LBA 0 is `first` of `parent`. In a
 * core built with SF_READONLY a window is read-only (SF_BDEV_READONLY: writes fail with
 * SF_EROFS, a flush has nothing to do, requests run synchronously), so that no write
 * path is linked. */
struct sf_bdev_window {
    struct sf_bdev bd;
    struct sf_bdev *parent;
    uint64_t first;
};
int sf_bdev_window_init(struct sf_bdev_window *w, struct sf_bdev *parent,
                        uint64_t first, uint64_t count);

/* ---- RAM device (src/bdev/ram.c): memory passed in, size = sector_size * sector_count. ---- */
struct sf_rambd {
    struct sf_bdev bd;
    uint8_t *mem;
};
int sf_rambd_init(struct sf_rambd *r, void *mem, uint32_t sector_size, uint64_t sector_count);

/* ---- Fault-injection device (src/bdev/fault.c), wrapping another device for tests. ----
 *
 * Counts operations, fails on command, and simulates a power cut. Writes since the last
 * flush are kept in an overlay (memory passed in) and reach the lower device at flush; at a
 * power cut the overlay is applied by policy: KEEP all of it, DROP all of it, or TEAR (each
 * unsynced sector, chosen by the seeded PRNG, is kept, dropped, or - for a torn write - gets
 * a prefix of new bytes over old ones). When the overlay fills it is written through as if
 * the device had flushed by itself, which real devices may do at any time. After the cut
 * every call returns SF_EIO until sf_faultbd_revive. */
enum sf_fault_policy { SF_FAULT_KEEP = 0, SF_FAULT_DROP = 1, SF_FAULT_TEAR = 2 };

struct sf_faultbd_counters {
    uint64_t reads, writes, flushes, trims;        /* calls */
    uint64_t sectors_read, sectors_written;
    uint64_t seq_writes, jumps;                    /* writes starting where the last ended, or not */
};

struct sf_faultbd {
    struct sf_bdev bd;
    struct sf_bdev *lower;
    struct sf_faultbd_counters c;
    /* Fault settings; 0 / UINT64_MAX means off. Set them directly at any time. Write numbers
     * count c.writes (every write call while alive, failed ones included): zeroing the
     * counters restarts that count. */
    uint64_t eio_read_lba;      /* a read covering this LBA fails (UINT64_MAX = off) */
    uint64_t eio_write_lba;     /* a write covering this LBA fails (UINT64_MAX = off) */
    uint64_t eio_after_writes;  /* the write with this 1-based number and all later fail (0 = off) */
    uint64_t cut_after_writes;  /* power cut right after this many writes (0 = off) */
    uint8_t policy;             /* enum sf_fault_policy, at the cut */
    uint32_t seed;              /* PRNG seed for TEAR */
    int dead;                   /* 1 after the cut */
    uint64_t next_lba;          /* LBA just past the previous write (UINT64_MAX: none yet) */
    /* Overlay of unsynced sectors: entries of (lba, sector bytes). */
    uint8_t *ovl;
    size_t ovl_cap;             /* entries that fit */
    size_t ovl_n;
};
/* mem holds the overlay: mem_size / (8 + sector_size) sectors (0 makes every write durable). */
int sf_faultbd_init(struct sf_faultbd *f, struct sf_bdev *lower, void *mem, size_t mem_size);
/* Cut power now, applying the policy to unsynced writes. */
void sf_faultbd_cut(struct sf_faultbd *f);
/* Power back on: clears dead and the fault settings that caused it (cut_after_writes). */
void sf_faultbd_revive(struct sf_faultbd *f);

#ifdef __cplusplus
}
#endif

#endif
