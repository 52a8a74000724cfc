/* The pack stage: plain record payloads <-> the stored payload of a compressed record block
 * (include/streamfat/block_pack.h; the stream's layout is docs/FORMAT.md's "Compressed record
 * blocks", which the independent reader tests/scripts/sfl_ref.py implements on its own).
 *
 * Why a record transform and no LZ stage: a logger record is 32 bytes of which a few change
 * from one frame of an id to the next; coding those few directly costs about as much per
 * record as one pass of a byte codec over 32 bytes would, and leaves less to find for one
 * (docs/BENCHMARKS.md, "Compressed blocks", has the measurements). */
#include "streamfat/block_pack.h"
#include "streamfat/rec.h"

#include <string.h>
#include "util/le.h"

#define TAG_LITERAL 0u      /* a record stored as it is */
#define TAG_NEW 1u          /* a new dictionary entry, then its record */
#define TAG_ENTRY 2u        /* entry k: tag k + 2 */
#define CAN_LEN_MAX 64u     /* coded CAN records carry at most 64 data bytes */
#define SLACK 16u           /* a coded record never exceeds its plain size + SLACK */

/* The frames an entry has not had yet (its data area padded: at most 64 bytes) */
static const uint8_t zeros[CAN_LEN_MAX];

/* ---- encoder ---- */

static uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static uint32_t key_hash(uint8_t channel, uint32_t flags, uint32_t id, uint8_t len)
{
    uint32_t h = id * 0x9E3779B1u ^ (flags + ((uint32_t)channel << 8 | len)) * 0x85EBCA77u;
    return (h >> 16) & (SF_PACK_HASH - 1);
}

/* The time difference to the previous record: zigzag (small magnitudes, either sign, in few
 * bytes), shifted left by one; the low bit says "in microseconds" (a difference that is a
 * whole number of them, as every time of a candump or a microsecond clock is), which saves
 * about a byte a record. */
static uint64_t time_code(int64_t d)
{
    int64_t us = d / 1000;
    if (us * 1000 == d)
        return ((((uint64_t)us << 1) ^ (uint64_t)(us >> 63)) << 1) | 1u;
    uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
    return z >> 63 ? 0 : z << 1;            /* 0: does not fit (see sf_pack_add) */
}

void sf_pack_begin(struct sf_pack *pk, uint8_t *out, uint32_t cap, uint32_t raw_max)
{
    pk->out = out;
    pk->cap = cap;
    pk->pos = SF_PACK_HDR;
    pk->raw = 0;
    pk->raw_max = raw_max;
    pk->count = 0;
    pk->first_ts = pk->prev_ts = 0;
    pk->n = 0;
    memset(pk->hash, 0, sizeof pk->hash);
}

/* The dictionary entry for a CAN key: its index, a new one (*is_new), or -1 when full. */
static int entry_for(struct sf_pack *pk, uint8_t channel, uint32_t flags, uint32_t id,
                     uint8_t len, int *is_new)
{
    uint32_t h = key_hash(channel, flags, id, len);

    *is_new = 0;
    for (;;) {
        uint32_t k = pk->hash[h];
        if (!k)
            break;
        const struct sf_pack_entry *e = &pk->e[k - 1];
        if (e->id == id && e->flags == flags && e->channel == channel && e->len == len)
            return (int)(k - 1);
        h = (h + 1) & (SF_PACK_HASH - 1);
    }
    if (pk->n == SF_PACK_DICT)
        return -1;
    struct sf_pack_entry *e = &pk->e[pk->n];
    e->id = id;
    e->flags = flags;
    e->channel = channel;
    e->len = len;
    e->prev = e->prev2 = e->prev3 = zeros;
    pk->hash[h] = (uint16_t)(pk->n + 1);
    *is_new = 1;
    return (int)pk->n++;
}

/* Eight data bytes as a vector: byte-wise add, subtract and compare, one instruction each where
 * the target has them (SSE2, NEON), the compiler's word-wise code where it has not. */
typedef uint8_t v8 __attribute__((vector_size(8)));

static inline v8 ld_v8(const uint8_t *p)
{
    v8 v;
    memcpy(&v, p, 8);
    return v;
}

/* The predicted group (docs/FORMAT.md, "Compressed record blocks"): from the entry's last three
 * frames p, q, r, each byte is p + (p - q) where that step repeated the one before
 * (p - q == q - r: a counter, a ramp, a constant), else p: one frame back. */
static inline v8 predict(const uint8_t *p, const uint8_t *q, const uint8_t *r)
{
    v8 vp = ld_v8(p), vq = ld_v8(q), d1 = vp - vq, d0 = vq - ld_v8(r);
    return vp + (d1 & (v8)(d1 == d0));
}

/* The data bytes, in groups of 8: a mask of the bytes that differ from the prediction (bit i:
 * byte i of the group), then those bytes. A group is compared as one 64-bit word (one XOR, a
 * mask from its non-zero bytes, then only the bytes that changed). A shorter last group is
 * loaded whole too: the record's padding after it is zero, and so is its prediction (every
 * earlier frame of the entry has zero padding there), so no mask bit past len is ever set. */
static uint8_t *put_data(uint8_t *o, const uint8_t *d, const struct sf_pack_entry *e,
                         uint32_t len)
{
    const uint8_t *p = e->prev, *q = e->prev2, *r = e->prev3;

    for (uint32_t g = 0; g < len; g += 8) {
        v8 diff = ld_v8(d + g) ^ predict(p + g, q + g, r + g);
        uint64_t x;
        memcpy(&x, &diff, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);                   /* byte i of the group in bits 8i.. */
#endif
        /* bit 0 of each byte: that byte is non-zero; then gather the 8 bits */
        x |= x >> 4;
        x |= x >> 2;
        x |= x >> 1;
        x &= 0x0101010101010101ull;
        uint32_t mask = (uint32_t)((x * 0x0102040810204080ull) >> 56);
        *o++ = (uint8_t)mask;
        for (uint32_t m = mask; m; m &= m - 1)
            *o++ = d[g + (uint32_t)__builtin_ctz(m)];
    }
    return o;
}

/* A CAN record the transform codes: the body as writers make it (length 8 + len, the three
 * reserved bytes and the padding zero). */
static int can_codable(const uint8_t *r, uint32_t length, uint32_t size)
{
    if (r[0] != SF_REC_CAN || length < SF_CAN_BODY)
        return 0;
    /* len and the three reserved bytes as one number: above 64 when len is, or when a
     * reserved byte is not zero */
    uint32_t len = ld_le32(r + SF_REC_HDR + 4);
    if (len > CAN_LEN_MAX || length != SF_CAN_BODY + len)
        return 0;
    for (uint32_t i = SF_REC_HDR + length; i < size; i++)
        if (r[i])
            return 0;
    return 1;
}

int sf_pack_add(struct sf_pack *pk, const uint8_t *recs, uint32_t used, uint32_t *taken)
{
    uint8_t *o = pk->out + pk->pos, *end = pk->out + pk->cap;
    uint32_t off = 0;
    int ret = 0;

    while (off < used) {
        const uint8_t *r = recs + off;
        if (used - off < SF_REC_HDR) {
            ret = SF_EINVAL;
            break;
        }
        uint32_t length = ld_le16(r + 2), size = sf_rec_size(length);
        if (size > used - off) {
            ret = SF_EINVAL;
            break;
        }
        if ((uint32_t)(end - o) < size + SLACK || size > pk->raw_max - pk->raw) {
            ret = 1;                            /* full: the caller starts the next block */
            break;
        }
        uint64_t ts = ld_le64(r + 8);
        if (!pk->count)
            pk->first_ts = pk->prev_ts = ts;
        int k = -1, is_new = 0;
        uint64_t tc = time_code((int64_t)(ts - pk->prev_ts));
        /* tc == 0: a difference of 2^62 ns or more that is not whole microseconds (a time
         * of 0 after one near 2^63) does not fit the code: the record is stored literally */
        if (tc && can_codable(r, length, size))
            k = entry_for(pk, r[1], ld_le32(r + 4), ld_le32(r + SF_REC_HDR), r[SF_REC_HDR + 4],
                          &is_new);
        if (k < 0) {
            *o++ = TAG_LITERAL;
            memcpy(o, r, size);
            o += size;
        } else {
            struct sf_pack_entry *e = &pk->e[k];
            if (is_new) {
                *o++ = TAG_NEW;
                *o++ = e->channel;
                o = put_varint(o, e->flags);
                o = put_varint(o, e->id);
                *o++ = e->len;
            } else {
                o = put_varint(o, (uint64_t)k + TAG_ENTRY);
            }
            o = put_varint(o, tc);
            const uint8_t *data = r + SF_REC_HDR + SF_CAN_BODY;
            o = put_data(o, data, e, e->len);
            e->prev3 = e->prev2;
            e->prev2 = e->prev;
            e->prev = data;
        }
        pk->prev_ts = ts;
        pk->count++;
        pk->raw += size;
        off += size;
    }
    pk->pos = (uint32_t)(o - pk->out);
    *taken = off;
    return ret;
}

uint32_t sf_pack_finish(struct sf_pack *pk)
{
    if (!pk->count)
        return 0;
    st_le32(pk->out, pk->raw);
    pk->out[4] = SF_PACK_CODEC_REC;
    pk->out[5] = pk->out[6] = pk->out[7] = 0;
    return pk->pos;
}

/* ---- decoder ---- */

struct dict_entry {
    uint32_t id, flags;
    /* offsets in out of the last three frames' data bytes; NONE: zeros */
    uint32_t prev, prev2, prev3;
    uint8_t channel, len;
};
#define NONE 0xFFFFFFFFu

_Static_assert(sizeof(struct dict_entry) <= SF_UNPACK_DICT_MEM / SF_PACK_DICT,
               "SF_UNPACK_DICT_MEM holds the dictionary");

/* A LEB128 number of at most 10 bytes; 0, or -1 past the end or too long. */
static inline int get_varint(const uint8_t *in, uint32_t n, uint32_t *p, uint64_t *v)
{
    /* the usual case: one byte */
    if (*p < n && in[*p] < 0x80) {
        *v = in[(*p)++];
        return 0;
    }
    uint64_t x = 0;
    for (uint32_t s = 0; s < 70; s += 7) {
        if (*p >= n)
            return -1;
        uint8_t c = in[(*p)++];
        if (s == 63 && c > 1)
            return -1;
        x |= (uint64_t)(c & 0x7F) << s;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int sf_unpack(const uint8_t *in, uint32_t n, uint64_t first_ts, uint8_t *out, uint32_t cap,
              void *dict, uint32_t *raw_len)
{
    struct dict_entry *d = dict;
    uint32_t nd = 0, p = SF_PACK_HDR, o = 0;
    uint64_t prev = first_ts, v;

    if (n < SF_PACK_HDR || in[4] != SF_PACK_CODEC_REC || in[5] | in[6] | in[7])
        return SF_ECORRUPT;
    uint32_t raw = ld_le32(in);
    if (raw > cap)
        return SF_ECORRUPT;
    while (o < raw) {
        if (get_varint(in, n, &p, &v))
            return SF_ECORRUPT;
        if (v == TAG_LITERAL) {
            if (n - p < SF_REC_HDR)
                return SF_ECORRUPT;
            uint32_t size = sf_rec_size(ld_le16(in + p + 2));
            if (size > n - p || size > raw - o)
                return SF_ECORRUPT;
            memcpy(out + o, in + p, size);
            prev = ld_le64(out + o + 8);
            o += size;
            p += size;
            continue;
        }
        struct dict_entry *e;
        if (v == TAG_NEW) {
            uint64_t flags, id;
            if (nd == SF_PACK_DICT || p >= n)
                return SF_ECORRUPT;
            e = &d[nd++];
            e->channel = in[p++];
            if (get_varint(in, n, &p, &flags) || flags > 0xFFFFFFFFu ||
                get_varint(in, n, &p, &id) || id > 0xFFFFFFFFu || p >= n ||
                in[p] > CAN_LEN_MAX)
                return SF_ECORRUPT;
            e->flags = (uint32_t)flags;
            e->id = (uint32_t)id;
            e->len = in[p++];
            e->prev = e->prev2 = e->prev3 = NONE;
        } else {
            if (v - TAG_ENTRY >= nd)
                return SF_ECORRUPT;
            e = &d[v - TAG_ENTRY];
        }
        uint32_t size = sf_rec_size(SF_CAN_BODY + e->len);
        if (size > raw - o || get_varint(in, n, &p, &v))
            return SF_ECORRUPT;
        {
            uint64_t z = v >> 1;                         /* time_code, backwards */
            uint64_t diff = (z >> 1) ^ (0 - (z & 1));
            prev += v & 1 ? diff * 1000u : diff;
        }
        uint8_t *r = out + o;
        uint8_t *data = r + SF_REC_HDR + SF_CAN_BODY;
        r[0] = SF_REC_CAN;
        r[1] = e->channel;
        st_le16(r + 2, (uint16_t)(SF_CAN_BODY + e->len));
        st_le32(r + 4, e->flags);
        st_le64(r + 8, prev);
        st_le32(r + SF_REC_HDR, e->id);
        st_le32(r + SF_REC_HDR + 4, e->len);         /* len and the three zero bytes */
        /* the data: each group predicted from the entry's last three frames (zeros before
         * it has them), then the bytes that differ. Whole groups of 8 are written: the
         * record's data area is padded to 8, and the padding's prediction is zero (every
         * earlier frame's padding is), as the reader's layout check wants it. */
        uint32_t pad = size - SF_REC_HDR - SF_CAN_BODY;
        const uint8_t *pp = e->prev != NONE ? out + e->prev : zeros,
                      *pq = e->prev2 != NONE ? out + e->prev2 : zeros,
                      *pr = e->prev3 != NONE ? out + e->prev3 : zeros;
        for (uint32_t g = 0; g < pad; g += 8) {
            v8 pred = predict(pp + g, pq + g, pr + g);
            memcpy(data + g, &pred, 8);
        }
        for (uint32_t g = 0; g < e->len; g += 8) {
            uint32_t cnt = e->len - g < 8 ? e->len - g : 8;
            if (p >= n)
                return SF_ECORRUPT;
            uint32_t mask = in[p++];
            if (mask >> cnt)
                return SF_ECORRUPT;                  /* a bit for a byte past len */
            for (; mask; mask &= mask - 1) {
                if (p >= n)
                    return SF_ECORRUPT;
                data[g + (uint32_t)__builtin_ctz(mask)] = in[p++];
            }
        }
        e->prev3 = e->prev2;
        e->prev2 = e->prev;
        e->prev = o + SF_REC_HDR + SF_CAN_BODY;
        o += size;
    }
    if (o != raw || p != n)
        return SF_ECORRUPT;
    *raw_len = raw;
    return 0;
}
