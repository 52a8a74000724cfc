/* Simulated SSD (Linux/POSIX, host/bdev/sim.c): a timing model over another device.
 * Not part of the freestanding core (it reads CLOCK_MONOTONIC and sleeps).
 *
 * The model is an SSD with an SLC write cache, in real time:
 *   - the device does one thing at a time; a write that arrives while it is busy starts when
 *     the previous one ends (so queue depth hides the host's overhead, as on real drives);
 *   - a write runs at `fast` bytes/s while the cache has room, then at `slow` bytes/s: the
 *     cache holds `cache` bytes, and each byte written fast occupies it;
 *   - while the device is idle (nothing queued), the cache drains at `idle_flush` bytes/s
 *     (the drive folding SLC into QLC in the background); 0 means it never drains.
 * A device with cache = 0 writes at `slow` throughout; with fast = slow there is no boundary.
 *
 * Data goes to the lower device at once (its own speed does not count); reads, trims and
 * the lower device's flush are not timed. A flush waits until every write has completed.
 * Completion times are kept in a FIFO: the device is serial, so requests complete in the
 * order they were submitted and poll hands them back when their time has come.
 *
 * Threading: one caller at a time, as every device. */
#ifndef STREAMFAT_SIMBD_H
#define STREAMFAT_SIMBD_H

#include <stdint.h>

#include "bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sf_simbd_model {
    uint64_t cache_bytes;       /* SLC cache size */
    uint64_t fast_bps;          /* bytes/s while the cache has room (> 0) */
    uint64_t slow_bps;          /* bytes/s once it is full (> 0) */
    uint64_t idle_flush_bps;    /* cache drained per second of idleness (0: never) */
};

/* Model state, separate from the device so that it can outlive one open of the device
 * (the CLI opens a sim: target more than once in one run: mkfs, then mount). */
struct sf_simbd_state {
    uint64_t cache_used;        /* bytes in the cache not yet drained */
    int64_t busy_until_ns;      /* CLOCK_MONOTONIC when the last accepted write completes */
    uint64_t bytes_written;     /* all writes, for reports */
};

#define SF_SIMBD_QMAX 512u      /* requests in flight; submit refuses more with SF_EBUSY */

struct sf_simbd {
    struct sf_bdev bd;          /* use this one */
    struct sf_bdev *lower;
    struct sf_simbd_model m;
    struct sf_simbd_state *st;
    /* Submitted requests in completion order, with their completion times in a ring. */
    struct sf_bio *q_head, *q_tail;
    unsigned q_len, q_first;
    int64_t q_done_ns[SF_SIMBD_QMAX];
};

/* Wrap `lower` (its geometry is copied). st is the model state, zero-initialised before
 * the first use and kept by the caller for as long as the simulated device "exists".
 * Returns 0 or SF_EINVAL (a rate of 0). */
int sf_simbd_init(struct sf_simbd *s, struct sf_bdev *lower, const struct sf_simbd_model *m,
                  struct sf_simbd_state *st);
/* Wait for every submitted request to complete (their completions stay for poll). */
void sf_simbd_drain(struct sf_simbd *s);
/* CLOCK_MONOTONIC in nanoseconds, the model's clock. */
int64_t sf_simbd_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif
