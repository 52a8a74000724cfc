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
 * cfg.ring; cfg.work is the writer's scratch (one block at least). Nothing else.
 *
 * Threads: producers (append, append_can, reserve/commit, write_raw) from anywhere, any
 * number at once (raw mode: one). Everything else - service, next_deadline_ns, trigger,
 * rotate, close, and also get_stats / get_hist - from the writer's thread only (on Linux:
 * snapshot the statistics in the writer loop and hand the copy to a status thread).
 *
 * Files: block 0 is a header block (docs/FORMAT.md) with the channel names known when the
 * file starts (cfg.channel_names and those given to sf_log_name_channel so far) as CHANNEL
 * records and cfg.meta as META records; what does not fit in it goes into the record blocks
 * right after it, before the ring's blocks (built in cfg.work: when they need more blocks
 * than work_size holds, the writer waits for the device between pieces), so that every
 * file names every channel it uses before its first record on that channel.
 * File ids are splitmix64(session_id + file index). The next file is created (entry and
 * first allocation step) as soon as the current one starts, so a rotation only closes one
 * file and switches to the other; at close the prepared, empty file is removed.
 *
 * Timestamps: docs/FORMAT.md promises that each channel's data records in a file have
 * non-decreasing timestamps: append a channel's records in time order (the library does not
 * check). The caller's (record ts) and cfg.clock (checkpoints, rotation by time, the
 * post-trigger window, latencies) must be the same clock for the flight-recorder windows to
 * mean anything. Without cfg.clock there are no time-based
 * checkpoints or rotations, and the flight recorder cannot be used. */
#ifndef STREAMFAT_LOG_H
#define STREAMFAT_LOG_H

#include <stdint.h>
#include "sf.h"
#include "stream.h"
#include "rec.h"
#include "cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A record was dropped: the ring was full (counted; a DROP record will say so). */
#define SF_EDROPPED (-105)      /* ENOBUFS */

#define SF_LOG_RAW    0x1u   /* raw mode: bytes in, bytes out, no framing (single producer) */
#define SF_LOG_CYCLIC 0x2u   /* when the volume is full, delete this logger's oldest files:
                                default names: the lowest LOGnnnnn.SFL/.BIN in cfg.dir below
                                the current number; cfg.name: this session's oldest (of the
                                last 64). Use with split_bytes/split_ns: the current file
                                itself is never deleted */
#define SF_LOG_MEASURE 0x4u  /* time every append with cfg.clock (two clock reads each) */

/* Build the name of file number `index` (from 1) into out; return its length or < 0. */
typedef int (*sf_log_name_fn)(void *ctx, uint32_t index, uint64_t start_ts, char *out,
                              uint32_t cap);
typedef uint64_t (*sf_log_clock_fn)(void *ctx);   /* nanoseconds */

struct sf_ctl_cfg;               /* the control stage, below */

struct sf_log_cfg {
    struct sf_vol *vol;
    void *ring;                  /* the ring: a multiple of block_size, >= 4 blocks, aligned
                                    to the device's mem_align and to 8 at least; at most
                                    2^31 - 1 bytes (raw) or 2^(31 - log2 block_size)
                                    blocks */
    uint64_t ring_size;
    uint32_t block_size;         /* power of two, 512 .. 1 MiB, >= the sector size (0: 64 KiB) */
    uint32_t flags;              /* SF_LOG_* */
    const char *dir;             /* directory for the files (NULL or "": the root); must exist */
    sf_log_name_fn name;         /* NULL: LOG00001.SFL, LOG00002.SFL ... (.BIN in raw mode),
                                    numbering after the highest such name already there.
                                    Called when a file is prepared (ahead), with start_ts =
                                    the expected start: the current file's start + split_ns
                                    when rotating by time, else the time of the call. Must
                                    give the same name for the same (index, start_ts): cyclic
                                    mode asks again to delete this session's oldest files */
    void *name_ctx;
    uint64_t split_bytes;        /* rotate when a file reaches this size (0: never; on FAT32
                                    files are always rotated before 4 GiB) */
    uint64_t split_ns;           /* rotate after this long (0: never) */
    uint64_t checkpoint_ns;      /* checkpoint interval (0: 1 s) */
    uint64_t checkpoint_bytes;   /* and/or every this many bytes (0: off) */
    uint64_t pre_bytes;          /* flight recorder: keep this much before a trigger ... */
    uint64_t pre_ns;             /* ... or this long (either non-zero, or post_ns non-zero,
                                    turns the flight recorder on) */
    uint64_t post_ns;            /* and write this long after it (needs cfg.clock; not with
                                    SF_LOG_RAW). The window is kept in whole blocks: a
                                    trigger file may start up to one block before ts - pre */
    uint32_t queue_depth;        /* device requests in flight (0: 4) */
    uint32_t request_size;       /* most bytes per device request (0: 1 MiB) */
    sf_log_clock_fn clock;       /* timestamps for records the writer makes, checkpoints */
    void *clock_ctx;
    uint32_t clock_kind;         /* enum sf_clock_kind, stored in file headers */
    uint64_t session_id;         /* random, from the caller; file ids derive from it */
    const char *const *channel_names;   /* names of channels 0 .. channel_count - 1
                                    (<= SF_LOG_CHANNELS; NULL entries: unnamed); each
                                    0 .. block_size - 96 bytes, else SF_EINVAL */
    uint32_t channel_count;
    const char *const *meta;     /* "key=value" strings for every file header (each at
                                    most block_size - 96 bytes) */
    uint32_t meta_count;
    void *work;                  /* writer scratch, >= block_size (raw: >= one sector),
                                    aligned like the ring */
    uint32_t work_size;
    const struct sfl_pack_ops *packer;  /* compressed record blocks (docs/FORMAT.md):
                                    &sf_log_packer, which links the pack stage (a firmware
                                    that never names it does not carry it); NULL: off. Not
                                    with SF_LOG_RAW or the flight recorder */
    void *pack_mem;              /* with packer: the encoder and at least 2 output blocks,
                                    SF_LOG_PACK_MEM(block_size, blocks) bytes, aligned like
                                    the ring */
    size_t pack_mem_size;
    /* Sealed files (docs/FORMAT.md, "Sealed files"; not with SF_LOG_RAW): with cipher_port
     * set (and cipher_stage = &sf_cipher_stage, the stage's table: named only by a program
     * that seals, so that one that does not links none of it), each file gets a random
     * key sealed to cipher_pub (an X25519 public key, 32 bytes, the caller's until
     * sf_log_close) and every record block is sealed with AEAD cipher_aead (enum sf_aead;
     * 0: XChaCha20-Poly1305). A record then holds at most
     * block_size - 104 body bytes, a name or META string block_size - 136. The file key is
     * erased when the writer moves on from a file (rotation, close). */
    const struct sf_cipher_port *cipher_port;
    const struct sf_cipher_stage *cipher_stage;
    const uint8_t *cipher_pub;
    uint32_t cipher_aead;
};

/* The pack stage of the writer (src/log/writer_pack.c), for cfg.packer. */
struct sfl_pack_ops;
extern const struct sfl_pack_ops sf_log_packer;

/* Bytes of cfg.pack_mem for `blocks` output blocks of block size b (the requests write
 * from them: blocks >= request_size / b keeps requests whole). */
#define SF_LOG_PACK_MEM(b, blocks) (SF_LOG_PACK_ENC + (size_t)(b) * (blocks))
/* the encoder's part (>= sizeof(struct sf_pack): 14.4 KiB with 32-bit pointers, 22.5 KiB
 * with 64-bit ones; its dictionary keeps three frames per entry) */
#define SF_LOG_PACK_ENC (sizeof(void *) > 4 ? 24576u : 16384u)

/* Statistics; counters only grow. One definition, used by `streamfat log` (text and --json)
 * and `streamfat demo` under the same names (docs/LOG.md):
 *
 *     records_in = records_written + records_dropped     (after sf_log_close)
 *
 * records_in counts every record the producers offered (append, append_can, reserve); each
 * is either written or dropped. The writer's own DROP and ANNOTATION records are not in
 * these three: records_own counts them (they are in the files too). While the log runs,
 * records_in - records_written - records_dropped is what the writer has taken from the ring
 * but not yet handed to the device (records count as the writer takes their block, so
 * records_in lags the producers by the unfinished blocks). Flight recorder: records outside
 * every trigger window are in records_in but neither written nor dropped. Raw mode:
 * records_* stay 0 except records_dropped, which counts bytes refused; bytes_in counts bytes
 * accepted. */
struct sf_log_stats {
    uint64_t records_in;         /* offered by producers: written + dropped (+ taken, not
                                    yet written) */
    uint64_t records_dropped;    /* refused because the ring was full */
    uint64_t records_written;    /* producers' records in blocks handed to the device */
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
    uint64_t records_own;        /* DROP and ANNOTATION records the writer made itself (not
                                    in records_in or records_written) */
    /* The control stage (sf_log_control), summed over channels: CAN frames it kept from the
     * ring, so never in records_in (a frame is filtered, prescaled, paused, or offered). */
    uint64_t records_filtered;   /* rejected by the channel's filter */
    uint64_t records_prescaled;  /* passed the filter, thinned out by a prescaler */
    uint64_t records_paused;     /* passed both while logging was stopped (start/stop) */
};

/* Latency histograms (log2 buckets of nanoseconds: bucket k counts values in
 * [2^k, 2^(k+1))) with the summary a user wants. */
#define SF_HIST_BUCKETS 40
struct sf_hist {
    uint64_t count, max_ns;
    uint64_t bucket[SF_HIST_BUCKETS];
};
/* The upper bound of the bucket holding the p-quantile, capped at max_ns; p as a fraction
 * (0.999) or, when > 1, as a percentage (99.9). 0 for an empty histogram. */
uint64_t sf_hist_percentile(const struct sf_hist *h, double p);

struct sf_log;

/* Zero-copy reservation: write body_len bytes at body, then commit. */
struct sf_log_resv {
    uint8_t *body;
    uint32_t pos;                /* private */
    uint32_t size;               /* private */
};

int sf_log_open(struct sf_log *lg, const struct sf_log_cfg *cfg);

/* Append one record. 0 accepted; SF_EDROPPED when the ring is full (counted); SF_EINVAL
 * for a record larger than a block (body > block_size - 64). Safe from any thread and from
 * interrupts. Type SF_REC_DROP is the writer's: producers do not append it.
 * On bare metal: a producer interrupted between reserve and commit only delays its block
 * (the writer never waits for it), so interrupts may append while the main loop does. */
int sf_log_append(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                  uint64_t ts, const void *body, uint16_t len);
int sf_log_append_can(struct sf_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                      uint32_t flags, const uint8_t *data, uint8_t len);
int sf_log_reserve(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                   uint64_t ts, uint16_t len, struct sf_log_resv *r);
void sf_log_commit(struct sf_log *lg, struct sf_log_resv *r);

/* Name `channel` for the rest of the session: name (UTF-8, 0 .. block_size - 96 bytes) is
 * the caller's and must stay valid until sf_log_close. The call stores the name (every file
 * started from now on names the channel at its start) and appends a CHANNEL record at ts
 * (so the current file names it before the records appended after this call). Call it
 * before the channel's first record, from the producer that appends them.
 * 0; SF_EEXIST when the channel already has a different name (a name is fixed for the
 * session; the same name again just appends the record again); SF_EINVAL for a name too
 * long (or raw mode); SF_EDROPPED when the ring refused the CHANNEL record: the name is
 * kept, but the current file names the channel only if called again. Lock-free, O(length of
 * the name), safe wherever sf_log_append is. */
int sf_log_name_channel(struct sf_log *lg, uint8_t channel, const char *name, uint64_t ts);

/* Raw mode: append bytes (one producer). Returns bytes accepted (short when the ring is
 * full: the rest is dropped and counted in bytes) or an error. */
sf_ssize_t sf_log_write_raw(struct sf_log *lg, const void *p, size_t n);

/* One step of the writer's work. Returns > 0 when it did something, 0 when idle, or the
 * writer's error (the log keeps accepting and counting records as drops). A checkpoint
 * runs behind the data (sf_stream_checkpoint_start): it starts in one step and completes
 * in later ones, when its flushes come back (stats.bytes_durable moves then); rotation,
 * the end of a trigger file and close wait for the device (the producers never do). */
int sf_log_service(struct sf_log *lg);
/* Time to the next thing the writer must do (checkpoint, rotation, end of a trigger file),
 * in ns, for sleeping: 0 when sealed blocks wait; at most 100 us while a checkpoint runs;
 * UINT64_MAX when nothing is scheduled.
 * Blocks fill and requests complete meanwhile: sleep at most about one block's fill time
 * (a writer thread: min(deadline, 1 ms) works well). */
uint64_t sf_log_next_deadline_ns(const struct sf_log *lg);

/* Flight recorder: a trigger now (ts: the trigger's time; why: text for an ANNOTATION, may
 * be NULL). Starts the trigger file at once; SF_EINVAL when the flight recorder is off.
 * A core built with SF_NO_LOG_TRIGGER (config.h) has none: this and an sf_log_open that
 * asks for it (pre_bytes, pre_ns, post_ns) return SF_ENOTSUP. */
int sf_log_trigger(struct sf_log *lg, uint64_t ts, const char *why);
/* Start the next file: the next sf_log_service closes the current block early and rotates.
 * SF_EINVAL in flight-recorder mode (trigger files end by themselves). */
int sf_log_rotate(struct sf_log *lg);
/* Write everything (DROP records for drops counted so far included; a control stage's
 * triggers and stops raised since the last service step acted on first), checkpoint, close the
 * file, remove the prepared one. Producers must have stopped. */
int sf_log_close(struct sf_log *lg);

void sf_log_get_stats(const struct sf_log *lg, struct sf_log_stats *st);
/* Latency histograms: append (only with SF_LOG_MEASURE), device write (submit to
 * completion), and append-to-durable (from when the writer took the data from the ring to
 * the checkpoint covering it; record timestamps may come from another clock). */
void sf_log_get_hist(const struct sf_log *lg, struct sf_hist *append, struct sf_hist *device,
                     struct sf_hist *durable);

/* ---- The control stage (sf_log_control; compile-time option SF_LOG_CONTROL) ----
 *
 * What professional CAN loggers let a user set, applied by sf_log_append_can to every data
 * or remote frame before it reaches the ring (error frames and other record types pass
 * untouched), once sf_log_control has attached it to an open log. A firmware that never
 * calls sf_log_control links none of it (the logger reaches it through a table the call
 * installs). In order:
 *   1. filter of the frame's channel: rules {id, mask, ext, reject}; the first rule whose
 *      ((frame id ^ id) & mask) == 0 and ext equal to the frame's decides; none: the
 *      filter's default. Channels without a filter accept everything.
 *   2. signals of the frame's id are decoded (only those some condition uses) and the
 *      start/stop and trigger conditions on them evaluated; a frame of a `frame`-kind
 *      condition's id counts too. This happens for every frame that passed the filter,
 *      whether it is then kept or not.
 *   3. start/stop: while stopped, frames are counted as paused, not logged.
 *   4. the first prescaler matching the frame (same rule as filters) keeps 1 in n, at most
 *      one per period_ns of record time, or only frames whose first 8 data bytes changed
 *      under a byte mask (or whose length changed); the first frame is always kept.
 * A frame kept from the ring by the stage is counted (per channel and in sf_log_stats),
 * never dropped: sf_log_append_can returns 0 for it.
 *
 * Cost: O(1) for standard ids (one table of 2048 entries per filter, built at open: masks
 * cost nothing at run time), a binary search of the exact extended rules and a scan of the
 * masked extended ones for 29-bit ids; no floating point (thresholds are converted to raw
 * signal units at open); no locks: counters are 32-bit atomics, a 1-in-n prescaler's count
 * is one compare-and-swap (exact under concurrency), the other prescalers' and the
 * triggers' state sits under try-locks that are never waited on (a frame that finds a
 * period or change prescaler busy - another producer in it at that moment - is kept).
 *
 * Start/stop: with a start condition logging begins stopped; a frame that makes the start
 * condition true starts it (that frame is logged); a frame that makes the stop condition
 * true stops it (that frame is not logged). When both hold, stop wins, so different
 * thresholds give hysteresis. A stop makes the writer close the current block and take a
 * checkpoint; the next start continues the same file, or with SF_CTL_ROTATE_ON_START the
 * writer ends the file at the stop and what the next start logs goes to the next file.
 *
 * Triggers (flight recorder): a condition that holds on a frame raises a trigger (the
 * writer's next sf_log_service calls sf_log_trigger with the frame's time), at most once
 * per trigger_holdoff_ns of record time per condition. */
#define SF_CTL_MAX_EXT_RULES 64   /* extended-id rules per filter (standard: any number) */
#define SF_CTL_MAX_RULES 1024     /* rules per filter in all */
#define SF_CTL_MAX_PRESCALERS 32
#define SF_CTL_MAX_SIGNALS 32
#define SF_CTL_MAX_TRIGGERS 8
#define SF_CTL_ROTATE_ON_START 0x1u

struct sf_ctl_rule {
    uint32_t id, mask;           /* id <= 0x7FF (ext 0) or 0x1FFFFFFF (ext 1) */
    uint8_t ext;                 /* 1: matches 29-bit frames only, 0: 11-bit only */
    uint8_t reject;              /* 1: a matching frame is not logged */
};
struct sf_ctl_filter {
    uint8_t channel;
    uint8_t all;                 /* 1: instead of `channel`, every channel that has no filter
                                    of its own (at most one such filter) */
    uint8_t default_reject;      /* what a frame no rule matches gets */
    uint32_t count;
    const struct sf_ctl_rule *rules;
};
enum sf_ctl_presc_kind { SF_CTL_EVERY = 1, SF_CTL_PERIOD = 2, SF_CTL_CHANGE = 3 };
struct sf_ctl_prescale {
    uint32_t id, mask;
    uint8_t ext;
    uint8_t kind;                /* enum sf_ctl_presc_kind */
    uint32_t n;                  /* SF_CTL_EVERY: keep 1 in n (n >= 1) */
    uint64_t period_ns;          /* SF_CTL_PERIOD: at most one per period (> 0) */
    uint8_t bytes[8];            /* SF_CTL_CHANGE: mask of data bytes 0..7 watched */
};
struct sf_ctl_signal {
    const char *name;            /* for messages and trigger annotations */
    uint32_t id;
    uint8_t ext;
    uint8_t motorola;            /* 0 Intel (little-endian), 1 Motorola: start is the MSB
                                    in DBC's numbering (bit 7 of byte 0 is 7, bit 0 of byte 1
                                    is 8) */
    uint8_t is_signed;           /* two's complement */
    uint8_t length;              /* 1 .. 64 bits */
    uint16_t start;              /* DBC start bit; the signal lies within 64 data bytes */
    double scale, offset;        /* physical = raw * scale + offset (scale != 0) */
};
enum sf_ctl_op { SF_CTL_GE = 1, SF_CTL_GT = 2, SF_CTL_LE = 3, SF_CTL_LT = 4, SF_CTL_EQ = 5 };
enum sf_ctl_cond_kind { SF_CTL_NONE = 0, SF_CTL_SIGNAL = 1, SF_CTL_FRAME = 2 };
struct sf_ctl_cond {
    uint8_t kind;                /* enum sf_ctl_cond_kind */
    uint8_t op;                  /* SF_CTL_SIGNAL: enum sf_ctl_op */
    uint8_t signal;              /* SF_CTL_SIGNAL: index into signals */
    uint8_t ext;                 /* SF_CTL_FRAME: any frame with this id */
    uint32_t id;
    double value;                /* SF_CTL_SIGNAL: physical threshold */
};
struct sf_ctl_cfg {
    const struct sf_ctl_filter *filters;   /* at most one per channel (and one `all`), 255 in
                                              all */
    uint32_t filter_count;
    const struct sf_ctl_prescale *prescalers;
    uint32_t prescaler_count;
    const struct sf_ctl_signal *signals;
    uint32_t signal_count;
    struct sf_ctl_cond start, stop;        /* kind SF_CTL_NONE: none */
    const struct sf_ctl_cond *triggers;    /* need the flight recorder (cfg.pre_* / post_ns) */
    uint32_t trigger_count;
    uint64_t trigger_holdoff_ns;
    uint32_t flags;                        /* SF_CTL_ROTATE_ON_START */
    uint32_t stat_channels;    /* per-channel counters for channels 0 .. stat_channels - 1
                                  (<= 256; 0: 1); frames of higher channels count in the last */
};

/* Why a control configuration is invalid (sf_log_control_check). */
enum sf_ctl_bad {
    SF_CTL_OK = 0,
    SF_CTL_BAD_RULE_ID,          /* a rule's id or mask beyond 11/29 bits */
    SF_CTL_TOO_MANY_RULES,       /* > SF_CTL_MAX_RULES, or > SF_CTL_MAX_EXT_RULES extended */
    SF_CTL_DUP_CHANNEL,          /* two filters for one channel */
    SF_CTL_TOO_MANY,             /* filters, prescalers, signals or triggers above their
                                    maximum */
    SF_CTL_BAD_PRESCALER,        /* unknown kind, n 0, period 0, or a bad id/mask */
    SF_CTL_BAD_START_BIT,        /* a signal reaches past 64 data bytes */
    SF_CTL_BAD_LENGTH,           /* length 0 or above 64 */
    SF_CTL_BAD_SIGNAL,           /* id beyond 11/29 bits, scale 0 or not finite */
    SF_CTL_UNKNOWN_SIGNAL,       /* a condition names a signal index >= signal_count */
    SF_CTL_BAD_OP,               /* a condition's operator or kind is not one of the enums */
    SF_CTL_BAD_VALUE,            /* a threshold that is not finite */
    SF_CTL_BAD_CHANNELS,         /* stat_channels > 256 */
};
/* Attach a control stage to an open framed log: call it after sf_log_open, before the
 * producers start, from the writer's thread. c is compiled into mem (at least
 * sf_log_control_mem_size(c) bytes, aligned to 8, the caller's until sf_log_close); c and
 * what it points to (rules, names) must stay valid until then too. Triggers need the
 * flight recorder (cfg.pre_* or post_ns). 0; SF_EINVAL for an invalid configuration
 * (sf_log_control_check says what), too little memory, raw mode, a second call or triggers
 * without the recorder; SF_ENOTSUP in a core built with SF_NO_LOG_CONTROL. */
int sf_log_control(struct sf_log *lg, const struct sf_ctl_cfg *c, void *mem, uint32_t mem_size);
/* Check a control configuration: SF_CTL_OK, or what is wrong (and *index: which rule,
 * prescaler, signal or condition - start is 0, stop 1, triggers 2.. - or filter). */
int sf_log_control_check(const struct sf_ctl_cfg *c, uint32_t *index);
/* A short text for an enum sf_ctl_bad. */
const char *sf_log_control_why(int bad);
/* Bytes of memory sf_log_control needs for c (0 for NULL). */
uint32_t sf_log_control_mem_size(const struct sf_ctl_cfg *c);

/* Per-channel counters of the control stage: seen = filtered + prescaled + paused + logged,
 * where logged frames were offered to the ring (then written, or dropped when it was full).
 * Exact once the producers have stopped. Writer's thread, like sf_log_get_stats. */
struct sf_log_chan_stats {
    uint64_t seen, filtered, prescaled, paused, logged;
};
int sf_log_get_chan_stats(const struct sf_log *lg, uint32_t channel,
                          struct sf_log_chan_stats *cs);
/* Decode signal s from a frame's data (the control stage's extraction, for tools and
 * tests): 0 with *raw (sign-extended when signed); SF_EINVAL when the frame is too short. */
int sf_ctl_signal_raw(const struct sf_ctl_signal *s, const uint8_t *data, uint8_t len,
                      int64_t *raw);

/* The struct itself: private fields, defined by src/log/ (see log_impl.h in the source). */
#include "log_struct.h"

#ifdef __cplusplus
}
#endif

#endif
