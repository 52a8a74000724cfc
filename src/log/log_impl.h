/* The logger's internals, shared by ring.c (producers, block hand-over), writer.c (service,
 * requests, checkpoints, statistics), rotate.c (files) and trigger.c (flight recorder).
 *
 * Block counters: framed blocks are numbered by a counter that runs modulo lg->wrap =
 * 2 * nblk (so "all nblk blocks owned by the writer" and "none" differ); block counter c
 * lives at ring index c mod nblk. Raw mode counts bytes modulo 2 * ring bytes the same way.
 *
 * A ring block's first 48 bytes are its block header once sealed. Until then they hold:
 *   0  _Atomic u32 committed  bytes of the block's records committed by producers
 *   4  _Atomic u32 closed     0 while open; RING_CLOSED | used once a producer (or the
 *                             writer) moved the reservation point to the next block
 * and, once the writer has taken the block, at the offsets the sealed header uses for them
 * (so sealing twice, as a retried request does, reads them back unchanged):
 *   24 u64 first_ts, 32 u32 used, 36 u32 count (little-endian). */
/* Functions shared between the files are library-wide symbols: they carry the sfl_ prefix. */
#ifndef SF_LOG_IMPL_H
#define SF_LOG_IMPL_H

#include "streamfat/log.h"
#include "util/inline.h"
#include "util/le.h"

#include <string.h>

#define RING_CLOSED 0x80000000u
#define META_FIRST_TS 24
#define META_USED 32
#define META_COUNT 36

enum log_cut { CUT_NONE = 0, CUT_CKPT = 1, CUT_ROTATE = 2, CUT_FR_END = 3, CUT_CLOSE = 4 };
enum log_req_kind { REQ_DATA = 0, REQ_HEADER = 1, REQ_PACKED = 2 };

static inline uint32_t ctr_add(const struct sf_log *lg, uint32_t c, uint32_t d)
{
    c += d;                                  /* c, d < wrap <= 2^32 - 2: no overflow */
    return c >= lg->wrap ? c - lg->wrap : c;
}

/* a - b for counters (a at or ahead of b). */
static inline uint32_t ctr_dist(const struct sf_log *lg, uint32_t a, uint32_t b)
{
    return a >= b ? a - b : a + (lg->wrap - b);
}

static inline uint32_t ctr_index(const struct sf_log *lg, uint32_t c)
{
    return c >= lg->nblk ? c - lg->nblk : c;
}

static inline uint8_t *blk_ptr(const struct sf_log *lg, uint32_t c)
{
    return lg->ring + ((size_t)ctr_index(lg, c) << lg->bshift);
}

static inline _Atomic uint32_t *blk_committed(uint8_t *b)
{
    return (_Atomic uint32_t *)(void *)b;
}

static inline _Atomic uint32_t *blk_closed(uint8_t *b)
{
    return (_Atomic uint32_t *)(void *)(b + 4);
}

static inline uint64_t log_now(const struct sf_log *lg)
{
    return lg->cfg.clock ? lg->cfg.clock(lg->cfg.clock_ctx) : 0;
}

/* ring.c */
void sfl_ring_commit(struct sf_log *lg, uint32_t blk, uint32_t size);
void sfl_ring_count_drop(struct sf_log *lg, uint64_t ts);
int sfl_ring_close_current(struct sf_log *lg, uint32_t *next);
uint32_t sfl_ring_current(const struct sf_log *lg);
int sfl_ring_take(struct sf_log *lg);
void sfl_ring_release(struct sf_log *lg, uint32_t n);
int sfl_ring_put_drops(struct sf_log *lg);
uint64_t sfl_ring_used_bytes(const struct sf_log *lg);
int sfl_put_own(struct sf_log *lg, uint8_t type, uint64_t ts, const void *body, uint16_t len);
int sfl_ring_put_can(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                     uint32_t flags, const uint8_t *data, uint32_t len);
/* SF_LOG_MEASURE: an append that began at t0 (log_now) ends now, into the histogram */
void sfl_measure_end(struct sf_log *lg, uint64_t t0);

/* writer.c */
int sfl_reap(struct sf_log *lg, int wait);
int sfl_drain(struct sf_log *lg);
int sfl_fail(struct sf_log *lg, int err);
void sfl_durable_samples(struct sf_log *lg, uint64_t now, uint32_t n);
int sfl_submit_buf(struct sf_log *lg, const void *buf, uint32_t bytes, uint32_t amount,
                   uint8_t kind, uint64_t first_ts);
int sfl_submit_runs(struct sf_log *lg, uint32_t limit, int force);

/* writer_pack.c, reached through cfg.packer (sf_log_packer) so that a program that never
 * names it does not link it: runs is sfl_submit_runs when compression is on (the same
 * contract), done gives a completed request's output blocks back, open checks cfg. */
struct sfl_pack_ops {
    int (*open)(struct sf_log *lg, uint32_t align);
    int (*runs)(struct sf_log *lg, uint32_t limit, int force);
    void (*done)(struct sf_log *lg, uint32_t n);
};
/* ring blocks up to this counter are packed (or, without compression, submitted) */
static inline uint32_t sfl_done_upto(const struct sf_log *lg)
{
    return lg->pk ? lg->pk_in : lg->sub;
}

/* rotate.c */
int sfl_first_index(struct sf_log *lg, uint32_t *index);
int sfl_prepare_next(struct sf_log *lg);
int sfl_start_file(struct sf_log *lg, uint64_t now);
int sfl_end_file(struct sf_log *lg);
int sfl_rotate(struct sf_log *lg, uint64_t now);
int sfl_discard_next(struct sf_log *lg);
int sfl_make_room(struct sf_log *lg);

/* control.c: installed by sf_log_control (lg->ctl_ops), so that a program that never calls
 * it does not link the stage. */
struct sfl_ctl_ops {
    /* sf_log_append_can with a control stage: the same validation, then the stage for data
     * and remote frames (error frames pass): 0 when it kept the frame out (counted), else
     * what sfl_ring_put_can returns for it */
    int (*append_can)(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                      uint32_t flags, const uint8_t *data, uint32_t len);
    int (*service)(struct sf_log *lg, uint64_t now);     /* writer: counters, stops, triggers */
    void (*stats)(const struct sf_log *lg, struct sf_log_stats *st);
};

/* trigger.c */
int sfl_fr_service(struct sf_log *lg, uint64_t now);
void sfl_fr_release_all(struct sf_log *lg);

#endif
