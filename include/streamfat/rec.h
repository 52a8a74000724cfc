/* The record format (docs/FORMAT.md, version 1): encoding records and blocks, checking and
 * decoding them. Freestanding; no I/O: callers hand in block memory.
 *
 * Damage tolerance: sf_block_check validates one block on its own (magic, version, kind,
 * size, CRC-32C), so a reader can check every block boundary and skip the bad ones;
 * sf_rec_next never reads outside the block and reports a record that would. */
#ifndef STREAMFAT_REC_H
#define STREAMFAT_REC_H

#include <stddef.h>
#include <stdint.h>
#include "sf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_REC_VERSION 1
#define SF_BLOCK_MAGIC 0x424C4653u      /* "SFLB" as a little-endian u32 */
#define SF_BLOCK_HDR 48u                /* block header bytes */
#define SF_REC_HDR 16u                  /* record header bytes */
#define SF_FILE_HDR 32u                 /* fixed part of the header block's payload */
#define SF_BLOCK_MIN 512u
#define SF_BLOCK_MAX (1u << 20)
#define SF_BLOCK_DEFAULT 65536u

enum sf_block_kind { SF_BLOCK_FILE_HEADER = 1, SF_BLOCK_RECORDS = 2 };

enum sf_rec_type {
    SF_REC_CAN = 0x01,
    SF_REC_SAMPLE = 0x02,
    SF_REC_TEXT = 0x03,
    SF_REC_LATENCY = 0x04,
    SF_REC_DROP = 0x05,
    SF_REC_ANNOTATION = 0x06,
    SF_REC_CHANNEL = 0x10,
    SF_REC_META = 0x11,
};

/* CAN record flags */
#define SF_CAN_EFF 0x01u   /* 29-bit identifier: needed for any id above 0x7FF, an error
                              frame's error class too */
#define SF_CAN_RTR 0x02u   /* remote transmission request */
#define SF_CAN_ERR 0x04u   /* error frame */
#define SF_CAN_FD  0x08u   /* CAN FD frame */
#define SF_CAN_BRS 0x10u   /* CAN FD bit rate switch */
#define SF_CAN_ESI 0x20u   /* CAN FD error state indicator */
#define SF_CAN_TX  0x40u   /* the logger sent this frame (its time: the kernel's transmit
                              confirmation); informational, docs/FORMAT.md */
#define SF_CAN_BODY 8u     /* CAN body bytes before the data */
#define SF_LATENCY_BODY 16u /* LATENCY body: i64 latency_ns, u64 period_ns */
#define SF_DROP_BODY 24u   /* DROP body: u64 count, first_ts, last_ts */

/* DROP record flags (docs/FORMAT.md) */
#define SF_DROP_SOURCE 0x01u   /* lost before the ring, by the source (a SocketCAN socket's
                                  receive queue): `channel` names the interface, and the
                                  lost records fell between first_ts and last_ts */
/* ANNOTATION record flags */
#define SF_ANNOT_CHANNEL 0x01u /* about the record's `channel` (an interface that went down
                                  or came back), not the whole log */

enum sf_clock_kind { SF_CLOCK_REALTIME = 0, SF_CLOCK_MONOTONIC = 1, SF_CLOCK_HARDWARE = 2 };

/* Bytes a record with a body of `length` bytes occupies in a block. */
static inline uint32_t sf_rec_size(uint32_t length)
{
    return SF_REC_HDR + ((length + 7u) & ~7u);
}

/* A decoded record; body points into the block. */
struct sf_rec {
    uint8_t type;
    uint8_t channel;
    uint16_t length;
    uint32_t flags;
    uint64_t ts;
    const uint8_t *body;
};

/* A decoded CAN record. */
struct sf_can {
    uint32_t id;
    uint32_t flags;        /* SF_CAN_* */
    uint8_t len;
    uint8_t data[64];
};

struct sf_block_info {
    uint16_t kind;         /* enum sf_block_kind */
    uint64_t file_id;
    uint64_t seq;
    uint64_t first_ts;
    uint32_t used;         /* payload bytes in use */
    uint32_t count;        /* records */
    uint32_t block_size;
};

struct sf_file_header {
    uint64_t start_ts;
    uint32_t clock;        /* enum sf_clock_kind */
    uint32_t file_index;
    uint64_t session_id;
    /* Payload offset 24 (docs/FORMAT.md, Versioning): bits 0-31 compatible features (a
     * reader that does not know one reads the file as usual), bits 32-63 required features
     * (a reader that does not know one refuses the file). Bit 32: compressed record
     * blocks (SF_FEATURE_PACKED, streamfat/block_pack.h); bit 33: sealed files
     * (SF_FEATURE_ENCRYPTED, streamfat/cipher.h), known where a cipher port is. */
    uint64_t features;
};

/* The required feature bits this core knows: bit 32, compressed record blocks (a reader
 * with a cipher port adds bit 33 at its call site: export.c, _core.c). */
#define SF_FEATURES_REQUIRED      0xFFFFFFFF00000000ull
#define SF_FEATURES_REQUIRED_KNOWN (1ull << 32)

/* CAN record flag bits (docs/FORMAT.md, Record types): 0-5 the SF_CAN_* bits; 6-15
 * informational (a reader keeps the frame and ignores a bit it does not know; bit 6 is
 * SF_CAN_TX); 16-31 change the frame's meaning (a reader
 * that does not know a set bit skips the record as bad-can). */
#define SF_CAN_FLAGS_INFO    0x0000FFC0u
#define SF_CAN_FLAGS_MEANING 0xFFFF0000u

/* Whether a CHANNEL record's body names its channel (docs/FORMAT.md, Channel names): 1 to
 * n bytes of valid UTF-8 without spaces or control characters (bytes 0x00-0x20, 0x7F). */
int sf_rec_name_ok(const uint8_t *p, uint32_t n);

/* Whether a record type is one of docs/FORMAT.md's (readers skip the others). */
int sf_rec_type_known(uint8_t type);

/* The lowest required feature bit of `features` that this reader does not know, or -1. */
int sf_file_features_refused(uint64_t features);

/* CRC-32C (Castagnoli), continuing from crc (start with 0). */
uint32_t sf_crc32c(uint32_t crc, const void *p, size_t n);

/* Write one record at dst (sf_rec_size(len) bytes, zero padding included). */
void sf_rec_put(uint8_t *dst, uint8_t type, uint8_t channel, uint32_t flags, uint64_t ts,
                const void *body, uint16_t len);
/* May this frame be written? (docs/FORMAT.md: flags, id range, and lengths 0..8, or a CAN FD
 * length 0..8, 12, 16, 20, 24, 32, 48, 64.) */
int sf_rec_can_valid(uint32_t id, uint32_t flags, uint8_t len);
/* Write a CAN record (data NULL: zeros, for remote frames). Returns the bytes used, or 0 when
 * sf_rec_can_valid refuses the frame. */
uint32_t sf_rec_put_can(uint8_t *dst, uint8_t channel, uint64_t ts, uint32_t id,
                        uint32_t flags, const uint8_t *data, uint8_t len);
/* Decode a CAN record's body; SF_ECORRUPT when it is malformed. */
int sf_rec_get_can(const struct sf_rec *r, struct sf_can *out);

/* Fill in the block header of `block` (bi->block_size bytes) from bi, zero the payload past
 * bi->used, and compute the CRC. */
void sf_block_seal(uint8_t *block, const struct sf_block_info *bi);
/* Check one block of `len` bytes (len must be its block size). 0 with *bi filled, or
 * SF_ECORRUPT (bad magic, version, kind, size or CRC). */
int sf_block_check(const uint8_t *block, uint32_t len, struct sf_block_info *bi);
/* Peek at a block header to learn the block size, without checking the CRC: 0 with *size
 * set when magic, version and size look right. */
int sf_block_peek_size(const uint8_t *hdr48, uint32_t *size);

/* Walk the records of a checked block: *off starts at 0 (record blocks) or SF_FILE_HDR (the
 * header block). Returns 1 with *r filled and *off advanced, 0 at the end of `used`, or
 * SF_ECORRUPT when a record runs past `used` (the rest of the block is unusable). */
int sf_rec_next(const uint8_t *block, const struct sf_block_info *bi, uint32_t *off,
                struct sf_rec *r);

/* CAN records decoded into columns (sf_rec_can_cols): arrays the caller owns, n frames and
 * data_n bytes in use, room for cap frames and data_cap bytes. */
struct sf_can_cols {
    uint64_t *ts;
    uint8_t *channel;
    uint32_t *id;
    uint8_t *len;           /* the frame's length (a remote frame's too) */
    uint8_t *flags;         /* SF_CAN_* (all fit in 8 bits) */
    uint32_t *data_end;     /* frame i's data ends at data[data_end[i]] and starts where the
                               frame before it ends (Arrow binary offsets, after the first) */
    uint8_t *data;          /* the frames' data bytes, back to back; none for a remote frame */
    size_t n, cap;
    size_t data_n, data_cap;   /* data_cap at most UINT32_MAX */
};
/* Decode the CAN records of a checked block from *off on into c, exactly as sf_rec_next and
 * sf_rec_get_can would, until the end of `used`, a record that is not a CAN record or that
 * sf_rec_get_can refuses (or that sf_rec_next would report), or until c is full (cap
 * frames, or fewer than 64 bytes of room left in data: the loop copies 8 bytes at a time).
 * *off is left at the first record not decoded (for sf_rec_next); returns the frames added.
 * The batch path of readers: no call and no struct per record. */
size_t sf_rec_can_cols(const uint8_t *block, const struct sf_block_info *bi, uint32_t *off,
                       struct sf_can_cols *c);

void sf_file_header_put(uint8_t *payload32, const struct sf_file_header *h);
void sf_file_header_get(const uint8_t *payload32, struct sf_file_header *h);

#ifdef __cplusplus
}
#endif

#endif
