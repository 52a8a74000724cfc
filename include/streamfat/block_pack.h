/* Compressed record blocks (docs/FORMAT.md, "Compressed record blocks"): the pack stage turns
 * the records of one or more plain record payloads into the stored payload of one kind-3
 * block; unpack turns a stored payload back into exactly the plain payload it came from.
 *
 * The codec is a record transform (no general-purpose byte codec behind it; the choice is
 * measured in docs/BENCHMARKS.md, "Compressed blocks"): a CAN record is coded as a dictionary
 * index for (channel, flags, id, len), its time as the difference to the previous record's,
 * and its data bytes as the ones that differ from their prediction from the entry's last three
 * frames (the last frame's byte, or its step again where the step repeated). Every
 * other record is stored literally. The dictionary and the times start afresh in every block,
 * so each block decodes alone.
 *
 * Freestanding, no allocation: the caller owns every byte (struct sf_pack for the writer,
 * SF_UNPACK_MEM bytes of scratch for a reader). */
#ifndef STREAMFAT_BLOCK_PACK_H
#define STREAMFAT_BLOCK_PACK_H

#include <stdint.h>
#include "sf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_BLOCK_PACKED 3u          /* block kind: compressed record block */
#define SF_FEATURE_PACKED (1ull << 32)  /* header feature bit 32 (required): kind-3 blocks */
#define SF_PACK_HDR 8u              /* packed header: u32 raw_len, u8 codec, u8[3] zero */
#define SF_PACK_CODEC_REC 1u        /* the record transform */
#define SF_PACK_RAW_MAX (2u << 20)  /* an unpacked payload holds at most 2 MiB ... */
#define SF_PACK_RAW_BLOCKS 16u      /* ... and at most 16 x (B - 48) bytes */
#define SF_PACK_DICT 512u           /* dictionary entries per block */
#define SF_PACK_HASH 1024u          /* the encoder's hash slots (a power of two, > DICT) */

/* The largest unpacked payload of a block of size b. */
static inline uint32_t sf_pack_raw_max(uint32_t b)
{
    uint32_t m = SF_PACK_RAW_BLOCKS * (b - 48u);
    return m < SF_PACK_RAW_MAX ? m : SF_PACK_RAW_MAX;
}

struct sf_pack_entry {
    uint32_t id, flags;
    uint8_t channel, len;
    /* the entry's last three frames' data bytes (in the caller's input, or zeros) */
    const uint8_t *prev, *prev2, *prev3;
};

/* The encoder of one block's stored payload (about 22 KiB: caller memory). */
struct sf_pack {
    uint8_t *out;                   /* the stored payload being built */
    uint32_t cap, pos;              /* out's size, bytes written */
    uint32_t raw, raw_max, count;   /* unpacked bytes and records so far, the limit */
    uint64_t first_ts, prev_ts;
    uint32_t n;                     /* dictionary entries */
    uint16_t hash[SF_PACK_HASH];    /* entry index + 1, 0 free */
    struct sf_pack_entry e[SF_PACK_DICT];
};

/* Start a stored payload in out (cap bytes: the block's B - 48); raw_max: sf_pack_raw_max(B). */
void sf_pack_begin(struct sf_pack *pk, uint8_t *out, uint32_t cap, uint32_t raw_max);

/* Add records of a plain payload (recs .. recs + used: 8-aligned records as writers make
 * them) while they fit; *taken = the bytes of whole records added. The bytes must stay in
 * place until sf_pack_finish: the encoder refers to them. Returns 0 when all were added; 1
 * when the stored payload is full (finish it, and add the rest to the next one); SF_EINVAL
 * at a record that runs past `used` (the ones before it are added). */
int sf_pack_add(struct sf_pack *pk, const uint8_t *recs, uint32_t used, uint32_t *taken);

/* Write the packed header; the stored payload's size (0: nothing was added). */
uint32_t sf_pack_finish(struct sf_pack *pk);

/* Scratch a reader needs to unpack one block: the dictionary, a block header and the
 * largest payload (sf_dec_set_unpack lays it out so). */
#define SF_UNPACK_DICT_MEM (SF_PACK_DICT * 24u)
#define SF_UNPACK_MEM (SF_UNPACK_DICT_MEM + 48u + SF_PACK_RAW_MAX)

/* Unpack a stored payload (in, n bytes; first_ts the block header's) into out (cap bytes),
 * dict: SF_UNPACK_DICT_MEM bytes, 8-aligned. *raw_len = the plain payload's size. 0, or
 * SF_ECORRUPT for any stream that is not exactly one this format allows (never reads or
 * writes out of bounds). */
int sf_unpack(const uint8_t *in, uint32_t n, uint64_t first_ts, uint8_t *out, uint32_t cap,
              void *dict, uint32_t *raw_len);

#ifdef __cplusplus
}
#endif

#endif
