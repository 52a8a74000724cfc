/* struct sf_log: the logger's state (included by log.h; every field is private).
 *
 * It is in a public header only so that the caller can allocate it (static, on the stack of
 * the thread that owns it, or inside its own structures); nothing outside src/log/ reads it.
 *
 * Sharing rules (src/log/ring.c has the full argument):
 * - "producer" fields are written by any producer with atomic read-modify-writes and read
 *   by the writer; they sit on their own cache line;
 * - "published" fields are written by the writer only (store-release) and read by producers
 *   (load-acquire);
 * - everything else is the writer's (the one thread that calls sf_log_service, rotate,
 *   trigger, close) or constant after sf_log_open.
 * Only 32-bit atomics are used, so producers stay lock-free on Cortex-M3/M4 (LDREX/STREX)
 * and no __atomic_* library call is needed (and the channel-name table: pointer loads and
 * stores, no read-modify-write). */
#ifndef STREAMFAT_LOG_STRUCT_H
#define STREAMFAT_LOG_STRUCT_H

#include <stdint.h>
struct sf_pack;
#include "log.h"                 /* the types below (log.h includes this file at its end) */

/* C++ callers only allocate the struct, never touch its fields: there the producer fields
 * are plain uint32_t (and the name table plain pointers), which have the size and alignment
 * of their _Atomic forms on every target
 * the library supports (checked below in C, and by tests/scripts/t_headers.sh both ways). */
#ifdef __cplusplus
#define SF_LOG_ATOMIC_U32 uint32_t
#define SF_LOG_ATOMIC_PTR(T) T
#define SF_LOG_ALIGNED(n) alignas(n)
#else
#include <stdatomic.h>
#define SF_LOG_ATOMIC_U32 _Atomic uint32_t
#define SF_LOG_ATOMIC_PTR(T) _Atomic(T)
#define SF_LOG_ALIGNED(n) _Alignas(n)
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
               _Alignof(_Atomic uint32_t) == _Alignof(uint32_t) &&
               sizeof(_Atomic(const char *)) == sizeof(const char *) &&
               _Alignof(_Atomic(const char *)) == _Alignof(const char *),
               "struct sf_log must have one layout in C and C++");
#endif

#define SF_LOG_PATH_MAX 384
#define SF_LOG_CACHELINE 64
#define SF_LOG_NAME_HIST 64
#define SF_LOG_CHANNELS 256     /* a record's channel is a u8 */

struct sfl_ctl;                 /* src/log/control.c */
struct sfl_ctl_ops;

/* One device request in flight (the stream hands them back in submission order). */
struct sf_log_req {
    uint32_t amount;            /* ring blocks (framed) or bytes (raw) it covers */
    uint8_t kind;               /* 0 ring data, 1 header block (from cfg.work) */
    uint64_t t_submit;          /* cfg.clock at submission */
    uint64_t first_ts;          /* first record's timestamp (append-to-durable samples) */
};

struct sf_log {
    /* ---- producer: contended by every producer ---- */
    SF_LOG_ALIGNED(SF_LOG_CACHELINE) SF_LOG_ATOMIC_U32 tail;  /* framed: (block counter << bshift)
                                    | payload offset of the next reservation; raw: bytes
                                    written (mod 2 * ring size; one producer) */
    SF_LOG_ATOMIC_U32 drops;      /* records refused (raw: bytes), mod 2^32 */
    SF_LOG_ATOMIC_U32 drop_lock;  /* try-lock over drop_first/last/have; never waited on */
    uint32_t drop_have;          /* drop_first is set (under drop_lock) */
    uint64_t drop_first, drop_last;   /* timestamps of the current run (under drop_lock) */
    SF_LOG_ATOMIC_U32 app_hist[SF_HIST_BUCKETS];   /* SF_LOG_MEASURE */
    SF_LOG_ATOMIC_U32 app_max;    /* ns, saturating at 2^32 - 1 */

    /* ---- published by the writer ---- */
    SF_LOG_ALIGNED(SF_LOG_CACHELINE) SF_LOG_ATOMIC_U32 rel;   /* framed: block counter of the oldest
                                    block the writer still owns (producers may use blocks
                                    rel .. rel + nblk - 1); raw: bytes released */

    /* ---- channel names: set by sf_log_open and sf_log_name_channel (store-release, a
     * producer), read by the writer when a file starts (load-acquire); NULL: unnamed ---- */
    SF_LOG_ATOMIC_PTR(const char *) chan_name[SF_LOG_CHANNELS];

    /* ---- constant after open ---- */
    SF_LOG_ALIGNED(SF_LOG_CACHELINE) uint8_t *ring;
    uint32_t nblk;               /* ring blocks */
    uint32_t bsize, bshift;      /* block size and its log2 */
    uint32_t payload;            /* bsize - SF_BLOCK_HDR */
    uint32_t wrap;               /* counters run modulo this: 2 * nblk (framed) or 2 * ring
                                    bytes (raw) */
    uint32_t flags;
    struct sf_log_cfg cfg;       /* with defaults filled in */
    struct sfl_ctl *ctl;         /* the compiled control stage (sf_log_control), or NULL */
    const struct sfl_ctl_ops *ctl_ops;   /* its entry points (log_impl.h) */
    uint32_t req_blocks;         /* blocks per device request at most */

    /* ---- writer ---- */
    struct sf_vol *v;
    struct sf_stream st[2];      /* the current file and the one prepared ahead */
    uint8_t cur;                 /* index into st of the current file */
    uint8_t cur_open, next_open; /* st[cur] / st[cur ^ 1] is open */
    uint8_t hdr_pending;         /* current file's header block not yet submitted */
    uint8_t fs_fat;              /* FAT16/32: files end below 4 GiB */
    uint32_t file_index;         /* current file's number (next file: + 1) */
    uint32_t oldest_index;       /* cyclic: the lowest number that may still exist */
    uint64_t file_id;            /* current file's id: splitmix64(session_id + index) */
    uint64_t file_seq;           /* next block's seq in the current file */
    uint64_t head_blocks;        /* blocks of the current file before its first ring block:
                                    the header block and the names that did not fit it */
    uint64_t file_bytes;         /* bytes submitted to the current file */
    uint64_t file_start;         /* clock when the current file started */
    uint64_t file_limit;         /* rotate before the file exceeds this many bytes */
    uint64_t durable_base;       /* bytes of files already closed */
    uint64_t step;               /* allocation step of each file */
    uint64_t next_start;         /* start_ts the prepared file's name was made with */
    uint64_t name_ts[SF_LOG_NAME_HIST];  /* cyclic with cfg.name: start_ts of file index i
                                    at [i % SF_LOG_NAME_HIST], to make its name again */
    uint32_t taken;              /* framed: block counter; blocks rel .. taken - 1 are the
                                    writer's (sealed or in flight); raw: bytes */
    uint32_t sub;                /* blocks rel .. sub - 1 are submitted (raw: bytes) */
    uint32_t cut;                /* block counter a pending cut must reach */
    /* Compressed blocks (cfg.pack_mem; src/log/writer_pack.c): ring blocks are packed into
     * output blocks of their own, which the requests write. Output blocks in use, oldest
     * first from pk_head: in flight, then pk_ready finished ones, then the one being filled
     * (pk_cur). The ring blocks from pk_hold (that one's first) on stay the writer's. */
    struct sf_pack *pk;          /* the encoder (NULL: compression off) */
    uint8_t *pk_out;             /* pk_nout output blocks */
    uint32_t pk_nout, pk_head, pk_n, pk_ready;
    uint32_t pk_in, pk_off;      /* the ring block being packed, bytes of it packed */
    uint32_t pk_hold;            /* the first ring block the block being filled refers to */
    uint8_t pk_cur;
    uint8_t cut_kind;            /* 0 none, else enum log_cut (src/log/log_impl.h) */
    uint8_t rotate_req;          /* sf_log_rotate was called */
    uint8_t closing;
    uint32_t drops_seen;         /* drops accounted for by DROP records (mod 2^32) */
    uint64_t next_ckpt_ns;       /* clock of the next time-based checkpoint */
    uint64_t ckpt_bytes_at;      /* bytes_written at the last checkpoint */
    /* requests in flight, oldest first */
    struct sf_log_req req[SF_STREAM_MAX_QD];
    uint32_t req_head, req_count;
    /* append-to-durable samples waiting for the checkpoint that covers them */
    uint64_t dur_ts[32];
    uint32_t dur_n;
    uint32_t dur_ck;             /* of which the running checkpoint covers the first dur_ck */
    /* flight recorder */
    uint8_t fr;                  /* on */
    uint8_t fr_writing;          /* a trigger file is being written */
    uint64_t fr_end;             /* keep writing until the clock reaches this */
    /* statistics */
    struct sf_log_stats stats;
    struct sf_hist h_dev, h_dur;
    uint64_t drops_total;        /* drops folded in from the counter */
    char next_path[SF_LOG_PATH_MAX];   /* the prepared file's path */
    struct sf_cipher cipher;     /* sealed files: the current file's key (erased after it) */
};

#endif
