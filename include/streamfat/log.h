/* The logger: what an application calls to record data (docs/FORMAT.md for the files it
 * writes, docs/DESIGN.md for how it works).
 *
 * Producers call sf_log_append (or reserve/commit) from any thread, or from an interrupt on
 * bare metal: lock-free, bounded, never blocking, O(1). Records go into a ring in memory the
 * caller passes in; the ring is divided into blocks of cfg.block_size bytes and each block is
 * the I/O buffer of its own device write (no second copy). When the ring is full a record is
 * dropped and counted; the writer later inserts a DROP record saying how many were lost and
 * when, so no loss is silent.
 *
 * The writer's work happens in sf_log_service: seal full blocks (header, CRC), write them
 * through the stream layer with up to cfg.queue_depth requests in flight, checkpoint (by time
 * and bytes), rotate files (by size, time, on request), delete the oldest files in cyclic
 * mode, and run the flight recorder. A bare-metal main loop calls it repeatedly; on Linux a
 * writer thread does. Exactly one thread calls sf_log_service, sf_log_rotate, sf_log_trigger
 * and sf_log_close; the volume belongs to that thread while the log is open.
 *
 * Memory: struct sf_log is the caller's (it holds the stream and bookkeeping); the ring is
 * cfg.ring; cfg.work is the writer's scratch (one block at least). Nothing else. */
#ifndef STREAMFAT_LOG_H
#define STREAMFAT_LOG_H

#include <stdint.h>
#include "sf.h"
#include "stream.h"
#include "rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A record was dropped: the ring was full (counted; a DROP record will say so). */
#define SF_EDROPPED (-105)      /* ENOBUFS */

#define SF_LOG_RAW    0x1u   /* raw mode: bytes in, bytes out, no framing (single producer) */
#define SF_LOG_CYCLIC 0x2u   /* when the volume is full, delete this logger's oldest files */
#define SF_LOG_MEASURE 0x4u  /* time every append with cfg.clock (two clock reads each) */

/* Build the name of file number `index` (from 1) into out; return its length or < 0. */
typedef int (*sf_log_name_fn)(void *ctx, uint32_t index, uint64_t start_ts, char *out,
                              uint32_t cap);
typedef uint64_t (*sf_log_clock_fn)(void *ctx);   /* nanoseconds */

struct sf_log_cfg {
    struct sf_vol *vol;
    void *ring;                  /* the ring: a multiple of block_size, >= 4 blocks, aligned
                                    to the device's mem_align */
    uint64_t ring_size;
    uint32_t block_size;         /* power of two, 512 .. 1 MiB, >= the sector size (0: 64 KiB) */
    uint32_t flags;              /* SF_LOG_* */
    const char *dir;             /* directory for the files (NULL or "": the root); must exist */
    sf_log_name_fn name;         /* NULL: LOG00001.SFL, LOG00002.SFL ... (.BIN in raw mode),
                                    numbering after the highest such name already there */
    void *name_ctx;
    uint64_t split_bytes;        /* rotate when a file reaches this size (0: never; on FAT32
                                    files are always rotated before 4 GiB) */
    uint64_t split_ns;           /* rotate after this long (0: never) */
    uint64_t checkpoint_ns;      /* checkpoint interval (0: 1 s) */
    uint64_t checkpoint_bytes;   /* and/or every this many bytes (0: off) */
    uint64_t pre_bytes;          /* flight recorder: keep this much before a trigger ... */
    uint64_t pre_ns;             /* ... or this long (either non-zero, or post_ns non-zero,
                                    turns the flight recorder on) */
    uint64_t post_ns;            /* and write this long after it */
    uint32_t queue_depth;        /* device requests in flight (0: 4) */
    uint32_t request_size;       /* most bytes per device request (0: 1 MiB) */
    sf_log_clock_fn clock;       /* timestamps for records the writer makes, checkpoints */
    void *clock_ctx;
    uint32_t clock_kind;         /* enum sf_clock_kind, stored in file headers */
    uint64_t session_id;         /* random, from the caller; file ids derive from it */
    const char *const *channel_names;   /* names of channels 0 .. channel_count - 1 */
    uint32_t channel_count;
    const char *const *meta;     /* "key=value" strings for every file header */
    uint32_t meta_count;
    void *work;                  /* writer scratch, >= block_size, aligned like the ring */
    uint32_t work_size;
};

/* Statistics; counters only grow. */
struct sf_log_stats {
    uint64_t records_in;         /* accepted by append/commit */
    uint64_t records_dropped;    /* refused because the ring was full */
    uint64_t records_written;    /* in blocks handed to the device */
    uint64_t bytes_in;           /* record bytes accepted (raw: bytes) */
    uint64_t bytes_written;      /* bytes handed to the device (blocks, headers included) */
    uint64_t bytes_durable;      /* covered by a completed checkpoint */
    uint64_t files;              /* files started */
    uint64_t files_deleted;      /* cyclic mode */
    uint64_t triggers;
    uint64_t ring_high_water;    /* most ring bytes in use at once */
    uint64_t ring_size;
    uint64_t ring_used;          /* now */
    int last_error;              /* the writer's first error, 0 if none */
    uint64_t records_own;        /* of records_in: DROP and ANNOTATION records the writer
                                    made itself */
};

/* Latency histograms (log2 buckets of nanoseconds: bucket k counts values in
 * [2^k, 2^(k+1))) with the summary a user wants. */
#define SF_HIST_BUCKETS 40
struct sf_hist {
    uint64_t count, max_ns;
    uint64_t bucket[SF_HIST_BUCKETS];
};
uint64_t sf_hist_percentile(const struct sf_hist *h, double p);  /* upper bucket bound */

struct sf_log;

/* Zero-copy reservation: write body_len bytes at body, then commit. */
struct sf_log_resv {
    uint8_t *body;
    uint32_t pos;                /* private */
    uint32_t size;               /* private */
};

int sf_log_open(struct sf_log *lg, const struct sf_log_cfg *cfg);

/* Append one record. 0 accepted; SF_EDROPPED when the ring is full (counted); SF_EINVAL
 * for a record larger than a block. Safe from any thread and from interrupts. */
int sf_log_append(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                  uint64_t ts, const void *body, uint16_t len);
int sf_log_append_can(struct sf_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                      uint32_t flags, const uint8_t *data, uint8_t len);
int sf_log_reserve(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                   uint64_t ts, uint16_t len, struct sf_log_resv *r);
void sf_log_commit(struct sf_log *lg, struct sf_log_resv *r);

/* Raw mode: append bytes (one producer). Returns bytes accepted (short when the ring is
 * full: the rest is dropped and counted in bytes) or an error. */
sf_ssize_t sf_log_write_raw(struct sf_log *lg, const void *p, size_t n);

/* One step of the writer's work. Returns > 0 when it did something, 0 when idle, or the
 * writer's error (the log keeps accepting and counting records as drops). */
int sf_log_service(struct sf_log *lg);
/* Time to the next thing the writer must do (checkpoint, rotation), in ns, for sleeping. */
uint64_t sf_log_next_deadline_ns(const struct sf_log *lg);

/* Flight recorder: a trigger now (ts: the trigger's time; why: text for an ANNOTATION). */
int sf_log_trigger(struct sf_log *lg, uint64_t ts, const char *why);
/* Start the next file now. */
int sf_log_rotate(struct sf_log *lg);
/* Write everything, checkpoint, close the file. */
int sf_log_close(struct sf_log *lg);

void sf_log_get_stats(const struct sf_log *lg, struct sf_log_stats *st);
/* Latency histograms: append (only with SF_LOG_MEASURE), device write (submit to
 * completion), and append-to-durable (record timestamp to the checkpoint covering it). */
void sf_log_get_hist(const struct sf_log *lg, struct sf_hist *append, struct sf_hist *device,
                     struct sf_hist *durable);

/* The struct itself: private fields, defined by src/log/ (see log_impl.h in the source). */
#include "log_struct.h"

#ifdef __cplusplus
}
#endif

#endif
