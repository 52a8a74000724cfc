/* Decoding a log file (docs/FORMAT.md) as a stream, tolerating damage. Freestanding: the
 * caller owns every byte of memory (struct sf_dec and one block buffer) and does the I/O.
 *
 * The caller gives the decoder the file's bytes, from offset 0 and in order, in pieces of any
 * size, and takes events out one at a time:
 *
 *     struct sf_dec d;
 *     struct sf_dec_event ev;
 *     sf_dec_init(&d, buf, sizeof buf);              // buf: up to 1 MiB, see below
 *     while ((n = read(fd, chunk, sizeof chunk)) > 0)
 *         for (size_t off = 0; off < n;) {
 *             off += sf_dec_feed(&d, chunk + off, n - off);
 *             while (sf_dec_next(&d, &ev) != SF_DEC_NEED_DATA)
 *                 handle(&ev);
 *         }
 *     sf_dec_finish(&d);
 *     while (sf_dec_next(&d, &ev) != SF_DEC_END)
 *         handle(&ev);
 *
 * or, without a copy, lets the decoder read straight into its buffer (sf_dec_space and
 * sf_dec_commit, or sf_dec_read with a read callback).
 *
 * Events, in file order: the file header (block 0 accepted), the records of every accepted
 * block, and the damage, each block judged by the reader rules of docs/FORMAT.md ("Reading
 * a file", checks 1 to 10, in that order): unwritten, invalid, foreign, misplaced (kind not
 * matching the place), malformed (record layout, count, first_ts) and out-of-sequence blocks
 * (seq not the block's number: a copy, the blocks of a swapped pair, a wild seq) are
 * skipped and reported as DAMAGED or FOREIGN events, runs of the same kind as one event
 * with a block count. A block is accepted only at its own place (seq = its number, the
 * position rule), so one bad block never hides the blocks after it, every block not
 * accepted is counted by the check that refused it, and no GAP event comes. Records of skipped
 * blocks are never delivered, so no record comes twice or out of block order. An accepted
 * block with non-zero bytes after `used` delivers its records after a DAMAGED event with
 * reason SF_DEC_DIRTY_TAIL (count 1).
 *
 * Block size: taken from block 0. When block 0 is damaged the decoder looks at every 512-byte
 * boundary for a block that checks out (a header that looks right, at an offset that is a
 * multiple of its size, with a good CRC); everything before the first one is reported as
 * damaged. Blocks larger than the buffer cannot be decoded (reported as damage).
 *
 * The end: all-zero blocks at the end of the file (allocated, never written) are not damage;
 * all-zero blocks followed by more blocks are (reason SF_DEC_UNWRITTEN). A partial block at
 * the end that is not all zeros is judged as if its missing bytes were zeros (its records are
 * delivered when its header and used bytes are there and check out), then reported
 * (SF_DEC_TRUNCATED, count 1, length: the bytes present). A file without a valid block gives
 * one DAMAGED event with reason SF_DEC_NO_BLOCK, unless it is empty or all zeros (created,
 * never written: no event at all).
 *
 * Memory and lifetime: pointers in an event (rec.body) point into the buffer and stay valid
 * until the next call of sf_dec_feed, sf_dec_commit or sf_dec_read. Constant memory; no
 * allocation; one decoder per thread. */
#ifndef STREAMFAT_DECODE_H
#define STREAMFAT_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "sf.h"
#include "rec.h"
#include "cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sf_dec_kind {
    SF_DEC_NEED_DATA = 0,  /* give it more bytes (or call sf_dec_finish) */
    SF_DEC_HEADER,         /* block 0 is valid: hdr, file_id, block_size */
    SF_DEC_RECORD,         /* rec (from block `block`, whose header is `bi`) */
    SF_DEC_DAMAGED,        /* blocks block .. block+count-1 (bytes offset .. +length): reason */
    SF_DEC_GAP,            /* no longer emitted (docs/FORMAT.md's position rule counts every
                            * block not accepted where it is); kept for the ABI */
    SF_DEC_FOREIGN,        /* blocks block .. block+count-1 carry another file_id (`file_id`) */
    SF_DEC_END,            /* after sf_dec_finish: no more events */
};

enum sf_dec_reason {
    SF_DEC_BAD_HEADER = 1, /* no block header (magic, version or block size wrong) */
    SF_DEC_BAD_SIZE,       /* a block header with another block size than the file's */
    SF_DEC_BAD_FIELD,      /* kind or used out of range */
    SF_DEC_BAD_CRC,        /* the CRC-32C does not match */
    SF_DEC_BAD_RECORD,     /* malformed: record layout, padding, count or first_ts wrong */
    SF_DEC_UNWRITTEN,      /* all zeros, yet more blocks follow */
    SF_DEC_TRUNCATED,      /* the file ends inside this block */
    SF_DEC_TOO_BIG,        /* its block size exceeds the decoder's buffer */
    SF_DEC_NO_BLOCK,       /* no valid block found: block size unknown (block = count = 0) */
    SF_DEC_MISPLACED,      /* kind 1 away from block 0 or seq 0, kind 2 at block 0 or seq 0 */
    SF_DEC_OUT_OF_SEQ,     /* seq is not the block's number (a copy, a swap, a wild seq) */
    SF_DEC_DIRTY_TAIL,     /* accepted, records delivered; non-zero bytes after `used` */
    SF_DEC_UNAUTHENTIC,    /* a sealed file's record block that does not open (AEAD check:
                            * altered, cut short, moved, from another file, or the file's
                            * sealed key is not its own) */
};

/* Sealed files (docs/FORMAT.md, "Sealed files"): what the decoder knows of the file key,
 * from the header block (sf_dec_key). Without a usable key (MISSING, OTHER, AEAD) the
 * record blocks are checked as far as the framing goes (rows 1-4 and 6: what fsck and
 * recovery check) and passed over without their records (stats.blocks_sealed, not
 * damage): a reader says once which key the file wants. BAD: the key was given, the
 * sealed file key does not open with it (a replaced or damaged CIPHER record); every
 * record block is then UNAUTHENTIC. */
enum sf_dec_key {
    SF_DEC_KEY_NONE = 0,   /* not a sealed file (or its header block not read yet) */
    SF_DEC_KEY_OK,         /* the file key is open: record blocks are opened */
    SF_DEC_KEY_MISSING,    /* sealed, and no key given (sf_dec_set_key) */
    SF_DEC_KEY_OTHER,      /* sealed to another key (key_id says which) */
    SF_DEC_KEY_BAD,        /* the key id matches, the sealed key does not open, or the
                            * header block has no CIPHER record */
    SF_DEC_KEY_AEAD,       /* an AEAD this reader does not know (or the port lacks) */
};

struct sf_dec_event {
    int kind;                    /* enum sf_dec_kind */
    int reason;                  /* SF_DEC_DAMAGED: enum sf_dec_reason */
    uint64_t block;              /* block index (offset / block size) */
    uint64_t count;              /* DAMAGED, FOREIGN: blocks in the run */
    uint64_t offset, length;     /* DAMAGED, FOREIGN: the bytes of the file concerned */
    uint64_t file_id;            /* HEADER: this file's; FOREIGN: the other file's */
    uint64_t seq_expected, seq;  /* GAP */
    uint32_t block_size;         /* the file's block size, once known (else 0) */
    struct sf_file_header hdr;   /* HEADER */
    struct sf_rec rec;           /* RECORD */
    const struct sf_block_info *bi;  /* RECORD: the block it came from */
};

/* Counters, for summaries. */
struct sf_dec_stats {
    uint64_t bytes;              /* bytes given to the decoder */
    uint64_t blocks_ok;          /* valid blocks of this file */
    uint64_t blocks_damaged;     /* blocks in DAMAGED events (NO_BLOCK: 0) */
    uint64_t blocks_foreign;
    uint64_t gaps;               /* always 0 (SF_DEC_GAP) */
    uint64_t records;            /* RECORD events */
    uint64_t damage_events;      /* DAMAGED + GAP + FOREIGN events: 0 means a clean file */
    uint64_t blocks_sealed;      /* sealed record blocks passed over: no usable key */
};

/* The decoder. Private fields; use the functions. */
struct sf_dec {
    uint8_t *buf;
    size_t cap;
    size_t pos, fill;            /* the bytes not yet decoded: buf[pos .. fill) */
    uint64_t base;               /* file offset of buf[0] */
    uint32_t block_size;         /* 0 until known */
    uint32_t want;               /* bytes needed at buf[pos] for the next step */
    int state, finished, fail_reason0;
    int have_file_id, have_seq;
    uint64_t file_id, last_seq, last_block;   /* the last valid block of this file */
    struct sf_block_info bi;     /* the block whose records are being walked */
    uint64_t cur_block;
    uint32_t rec_off;
    uint32_t rec_n;              /* records of that block handed out */
    /* A run of damaged, unwritten or foreign blocks not yet reported. */
    int run_kind, run_reason;
    uint64_t run_block, run_count, run_offset, run_length, run_file_id;
    /* Events decided but not yet handed out (at most 4 at a time). */
    struct sf_dec_event q[4];
    int qn, qi;
    struct sf_dec_stats stats;
    uint64_t trunc_len, trunc_block;   /* a partial last block, judged zero-padded */
    int seen_data;               /* a non-zero byte before the block size was known */
    /* Compressed record blocks (kind 3): scratch to unpack one into (sf_dec_set_unpack),
     * and where the records of the block being walked are (buf + pos, or the scratch). */
    uint8_t *ubuf;
    size_t ucap;
    const uint8_t *rb;
    /* Sealed files: the reader's key pair (sf_dec_set_key) and this file's key. */
    const struct sf_cipher_port *key_port;
    uint8_t key_pub[SF_CIPHER_KEY], key_sec[SF_CIPHER_KEY];
    int key_state;               /* enum sf_dec_key */
    uint8_t key_want[SF_CIPHER_KEY_ID];   /* the key id the file's CIPHER record names */
    uint32_t key_aead;
    struct sf_cipher cipher;
};

/* Set up over buf (cap bytes: at least the file's block size, at most SF_BLOCK_MAX is ever
 * used; >= 512). Returns 0 or SF_EINVAL. */
int sf_dec_init(struct sf_dec *d, void *buf, size_t cap);
/* Scratch for compressed record blocks (kind 3, docs/FORMAT.md): cap >= SF_UNPACK_MEM bytes
 * (include/streamfat/block_pack.h), 8-aligned. Without it a compressed block is malformed
 * (counted, its records not delivered). Its records' pointers stay valid until the decoder
 * checks the next block. Returns 0 or SF_EINVAL. */
int sf_dec_set_unpack(struct sf_dec *d, void *buf, size_t cap);
/* Copy up to n bytes of the file in; returns how many were taken (0 when the decoder has
 * events to hand out first, or after sf_dec_finish). */
size_t sf_dec_feed(struct sf_dec *d, const void *p, size_t n);
/* Zero-copy feeding: where the next bytes of the file go and how many are wanted there
 * (> 0 while the decoder needs data, 0 when events are pending); then sf_dec_commit(d, n)
 * with n <= that size. */
size_t sf_dec_space(struct sf_dec *d, uint8_t **where);
void sf_dec_commit(struct sf_dec *d, size_t n);
/* The file has ended (pending events, then SF_DEC_END). */
/* A reader of part of a file (the Spark source: block 0, then a range of blocks): the bytes
 * given from now on are those from file offset `offset` on, so that every block is judged at
 * its number in the file (the position rule, docs/FORMAT.md). The blocks in between are not
 * read and not counted. Only once the block size is known, every byte given has been decoded
 * (sf_dec_next said NEED_DATA) and `offset` is a multiple of the block size not before the
 * bytes given: 0, else SF_EINVAL (nothing changes). */
int sf_dec_skip(struct sf_dec *d, uint64_t offset);

void sf_dec_finish(struct sf_dec *d);
/* The next event: its kind (enum sf_dec_kind), with *ev filled. */
int sf_dec_next(struct sf_dec *d, struct sf_dec_event *ev);

/* Whole blocks, for batch readers: when the next events are the records of an accepted
 * block (no other event before them), sf_dec_next_block fills *b and returns 1, and the
 * decoder goes on after that block as if its records had been taken with sf_dec_next (the
 * stats count them); else it returns 0 (call sf_dec_next). It runs the same block checks as
 * sf_dec_next, so a mix of the two calls yields the same records and events as sf_dec_next
 * alone. The records from b->off to b->bi.used passed FORMAT.md check 5: sf_rec_next walks
 * them to the end without an error (sf_rec_can_cols takes runs of CAN frames at once).
 * b->p stays valid until the next call of sf_dec_feed, sf_dec_space, sf_dec_commit,
 * sf_dec_read or sf_dec_next. */
struct sf_dec_block {
    const uint8_t *p;            /* the block (block_size bytes) */
    struct sf_block_info bi;
    uint64_t block;              /* its index */
    uint32_t off;                /* the offset of its first record not yet handed out */
};
int sf_dec_next_block(struct sf_dec *d, struct sf_dec_block *b);

/* Read callback: up to n bytes into buf; the count, 0 at the end of the file, or < 0 (an
 * error, returned by sf_dec_read as it is). */
typedef sf_ssize_t (*sf_dec_read_fn)(void *ctx, void *buf, size_t n);
/* The next event, reading with fn as needed (never SF_DEC_NEED_DATA): a kind, or the read
 * callback's negative error. */
int sf_dec_read(struct sf_dec *d, sf_dec_read_fn fn, void *ctx, struct sf_dec_event *ev);

const struct sf_dec_stats *sf_dec_stats(const struct sf_dec *d);

/* Sealed files: the reader's X25519 key pair and the port that opens with it (call after
 * sf_dec_init, before the first byte; the keys are copied). Without it a sealed file's
 * records are not delivered (enum sf_dec_key). */
void sf_dec_set_key(struct sf_dec *d, const struct sf_cipher_port *port, const uint8_t *pub32,
                    const uint8_t *sec32);
/* After the HEADER event: enum sf_dec_key, and (sealed files) the key id the file wants
 * and its AEAD (either pointer may be NULL). */
int sf_dec_key(const struct sf_dec *d, uint8_t *key_id8, uint32_t *aead);
/* Forget the keys (sf_dec_set_key's and the file's): call when done with a sealed file. */
void sf_dec_wipe_keys(struct sf_dec *d);
/* "CRC mismatch", ... */
const char *sf_dec_reason_str(int reason);

#ifdef __cplusplus
}
#endif

#endif
