/* The streaming write path: one new file, written sequentially, at the device's speed.
 *
 * A stream allocates clusters ahead of the data in large contiguous steps (exFAT: bitmap
 * only, NoFatChain while the volume allows; FAT: whole FAT sectors, every copy), writes the
 * caller's sector-aligned buffers straight to the device in multi-sector requests that span
 * cluster boundaries, keeps several requests in flight through the device's submit/poll
 * interface, and touches the directory entry only at checkpoints.
 *
 * Durability: sf_stream_checkpoint writes the partly filled last sector too (zero padded),
 * waits for every request, flushes the device, rewrites the directory entry with the size
 * written so far, and flushes again. sf_stream_checkpoint_start does the same for whole
 * sectors without stopping the data: it queues a FLUSH behind the requests submitted so far,
 * writes the entry when that completes and queues a second FLUSH, while later requests keep
 * the device busy (the checkpoints the stream takes by itself on the submit path, by bytes
 * and/or time, see the config, are of this kind). After a power cut the file holds at least
 * everything up to the last completed checkpoint; clusters allocated ahead of it leak (a
 * checker reclaims them), nothing else. sf_stream_close trims the allocation back to the
 * real size.
 *
 * Memory: the struct is the caller's; `buf` passed to sf_stream_open is the stream's work
 * memory (at least one sector, aligned to the device's mem_align): it holds the partial tail
 * sector and stages unaligned writes.
 *
 * Threading: one thread per stream, and the stream's volume belongs to that thread while the
 * stream is open (sf.h). */
#ifndef STREAMFAT_STREAM_H
#define STREAMFAT_STREAM_H

#include <stdint.h>
#include "sf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Requests in flight at most. It sizes struct sf_stream (about 100 bytes a request on a
 * 32-bit target; two streams live in struct sf_log): a microcontroller that keeps 4 in flight
 * builds the library and its own code with -DSF_STREAM_MAX_QD=4 (docs/PORTING.md). */
#ifndef SF_STREAM_MAX_QD
#define SF_STREAM_MAX_QD 64
#endif
#if SF_STREAM_MAX_QD < 4
#error "SF_STREAM_MAX_QD below 4: the default queue depth is 4"
#endif
#define SF_STREAM_EXTENTS 16      /* allocated extents kept ahead of the data */
#define SF_STREAM_BIOS (SF_STREAM_MAX_QD * 2)

struct sf_stream_cfg {
    uint64_t expected_size;     /* bytes to allocate at open (0: none); a hint, not a limit */
    uint64_t prealloc_step;     /* allocate at least this many bytes at a time (0: 64 MiB,
                                   growing to half the allocation so far, at most 1 GiB);
                                   on FAT rounded to whole FAT sectors of clusters */
    uint64_t checkpoint_bytes;  /* checkpoint after this many bytes since the last (0: never) */
    uint32_t checkpoint_ms;     /* checkpoint after this long since the last (0: never; uses
                                   the volume's clock) */
    uint32_t queue_depth;       /* asynchronous requests in flight, 1..SF_STREAM_MAX_QD (0: 4) */
    uint32_t flags;             /* SF_STREAM_* */
};
#define SF_STREAM_REPLACE 0x1u   /* an existing file of that name is truncated (default: EEXIST) */

struct sf_stream_stats {
    uint64_t bytes_accepted;    /* passed to write/submit */
    uint64_t bytes_durable;     /* covered by the last checkpoint */
    uint64_t data_requests;     /* device write requests for data */
    uint64_t checkpoints;
    uint64_t extents;           /* allocation steps taken */
    uint32_t max_in_flight;
};

/* One asynchronous request in flight (private). */
struct sf_stream_req {
    void *user;
    uint64_t end;               /* file offset just past its data */
    uint32_t pending;           /* bios not yet completed */
    int result;
    uint8_t used;
};

struct sf_stream_extent {
    uint32_t first;             /* cluster */
    uint32_t count;             /* clusters */
};

struct sf_stream {
    /* ---- private ---- */
    struct sf_file f;
    struct sf_vol *v;
    struct sf_stream_cfg cfg;
    struct sf_stream_stats st;
    uint8_t *buf;               /* work memory */
    uint32_t buf_size;
    uint32_t tail_len;          /* bytes in buf waiting for a whole sector */
    uint64_t pos;               /* bytes accepted */
    uint64_t alloc;             /* bytes of clusters allocated */
    uint64_t ext_off;           /* file offset of ext[0] */
    uint32_t ext_n;
    struct sf_stream_extent ext[SF_STREAM_EXTENTS];
    uint64_t ckpt_pos;          /* pos at the last checkpoint */
    sf_time_ms ckpt_time;
    int failed;
    /* asynchronous requests, completed in submission order */
    uint32_t qd, head, count;
    struct sf_stream_req req[SF_STREAM_MAX_QD];
    struct sf_bio bio[SF_STREAM_BIOS];
    uint16_t bio_stack[SF_STREAM_BIOS];   /* indexes of bios not in flight */
    uint32_t bio_top;
    uint64_t done_end;          /* file offset up to which every request has completed */
    /* the checkpoint running behind the data (sf_stream_checkpoint_start) */
    uint8_t ck_state;           /* 0 none; 1 its first FLUSH in flight; 2 its second */
    uint64_t ck_pos;            /* the size it makes durable */
    struct sf_chain ck_chain;   /* the allocation as it stood at ck_pos */
    struct sf_bio ck_bio;       /* its FLUSH request */
};

/* Create the file (parent directories must exist) and get ready to write. */
int sf_stream_open(struct sf_vol *v, struct sf_stream *s, const char *path,
                   const struct sf_stream_cfg *cfg, void *buf, uint32_t buf_size);

/* Write n bytes (any alignment, any size) and wait for them to reach the device (not
 * durably: that is what checkpoints are for). Whole sectors from a suitably aligned buffer go
 * to the device without a copy. Returns n or a negative error; after an error the stream
 * fails every later call with it. */
sf_ssize_t sf_stream_write(struct sf_stream *s, const void *buf, size_t n);

/* Asynchronous write: buf (aligned to the device's mem_align) and n (a multiple of the sector
 * size, at most the prealloc step) stay the caller's but must not change until the request
 * is handed back by sf_stream_poll. Requires that no partial sector is pending (only whole
 * sectors were written so far). SF_EBUSY when queue_depth requests are in flight. */
int sf_stream_submit(struct sf_stream *s, const void *buf, size_t n, void *user);

/* Hand back completed requests, in submission order: up to max `user` pointers into out.
 * Returns how many, or the error of a failed request (the stream has then failed). With
 * wait != 0, blocks until at least one completes (returns 0 when none is in flight). */
int sf_stream_poll(struct sf_stream *s, void **out, unsigned max, int wait);

/* Requests in flight. */
static inline uint32_t sf_stream_in_flight(const struct sf_stream *s) { return s->count; }

/* Make everything written so far durable (see the top of this header); waits for every
 * request and for a checkpoint still running. */
int sf_stream_checkpoint(struct sf_stream *s);

/* Start a checkpoint of everything submitted so far and return at once; sf_stream_poll
 * carries it on (stats.checkpoints and stats.bytes_durable move when it completes; poll
 * never waits for it). Only with no partial sector pending (SF_EINVAL otherwise). SF_EBUSY
 * while the previous one is still running; 0 at once when nothing new is to be made
 * durable. */
int sf_stream_checkpoint_start(struct sf_stream *s);

/* A checkpoint started by sf_stream_checkpoint_start is still running. */
static inline int sf_stream_checkpoint_busy(const struct sf_stream *s) { return s->ck_state != 0; }

/* Checkpoint, trim the allocation to the size, close the file. */
int sf_stream_close(struct sf_stream *s);

static inline const struct sf_stream_stats *sf_stream_stats(const struct sf_stream *s)
{
    return &s->st;
}

#ifdef __cplusplus
}
#endif

#endif
