/* The record format, version 1 (docs/FORMAT.md): records, CAN bodies, block headers with
 * their CRC-32C, and the header block's fixed part. Nothing here trusts the medium: checks
 * return SF_ECORRUPT and never read outside the block they were given. */
#include "streamfat/rec.h"
#include "streamfat/block_pack.h"
#include "rec_layout.h"
#include "util/crc32c.h"   /* sf_crc32c again: checks it agrees with rec.h */
#include "util/le.h"

#include <string.h>

/* Block header fields (offset, width) */
#define BH_MAGIC      0     /* u32 "SFLB" */
#define BH_VERSION    4     /* u16 format version */
#define BH_KIND       6     /* u16 enum sf_block_kind */
#define BH_FILE_ID    8     /* u64 random per file */
#define BH_SEQ        16    /* u64 block number in the file */
#define BH_FIRST_TS   24    /* u64 timestamp of the first record */
#define BH_USED       32    /* u32 payload bytes holding records */
#define BH_COUNT      36    /* u32 records in the block */
#define BH_BLOCK_SIZE 40    /* u32 B */
#define BH_CRC        44    /* u32 CRC-32C of bytes 0..43 and the used payload */

/* Record header (RH_*) and CAN body (CB_*) fields: rec_layout.h */

/* File header (payload of block 0) fields */
#define FH_START_TS   0     /* u64 */
#define FH_CLOCK      8     /* u32 enum sf_clock_kind */
#define FH_FILE_INDEX 12    /* u32 */
#define FH_SESSION_ID 16    /* u64 */
#define FH_FEATURES   24    /* u64: bits 0-31 compatible, 32-63 required (FORMAT.md) */

/* The bits a writer may store: the six frame bits and TX (informational, docs/FORMAT.md) */
#define CAN_FLAGS_ALL (SF_CAN_EFF | SF_CAN_RTR | SF_CAN_ERR | SF_CAN_FD | SF_CAN_BRS | SF_CAN_ESI | \
                       SF_CAN_TX)

static int block_size_ok(uint32_t b)
{
    return b >= SF_BLOCK_MIN && b <= SF_BLOCK_MAX && (b & (b - 1)) == 0;
}

static uint32_t block_crc(const uint8_t *block, uint32_t used)
{
    uint32_t crc = sf_crc32c(0, block, BH_CRC);
    return sf_crc32c(crc, block + SF_BLOCK_HDR, used);
}

void sf_rec_put(uint8_t *dst, uint8_t type, uint8_t channel, uint32_t flags, uint64_t ts,
                const void *body, uint16_t len)
{
    uint32_t padded = (len + 7u) & ~7u;

    dst[RH_TYPE] = type;
    dst[RH_CHANNEL] = channel;
    st_le16(dst + RH_LENGTH, len);
    st_le32(dst + RH_FLAGS, flags);
    st_le64(dst + RH_TS, ts);
    if (len)
        memcpy(dst + SF_REC_HDR, body, len);
    if (padded > len)
        memset(dst + SF_REC_HDR + len, 0, padded - len);
}

/* The rules a CAN frame must follow, for writing and reading alike (a reader first clears
 * the informational bits 6-15, which it ignores: rec_read_flags). */
static int can_valid(uint32_t id, uint32_t flags, uint32_t len)
{
    if (flags & ~CAN_FLAGS_ALL)
        return 0;
    if ((flags & SF_CAN_ERR) && (flags & (SF_CAN_FD | SF_CAN_RTR)))
        return 0;                      /* SocketCAN error frames are classic frames */
    if (flags & SF_CAN_FD) {
        if (len > 64 || (flags & SF_CAN_RTR))
            return 0;
    } else if (len > 8 || (flags & (SF_CAN_BRS | SF_CAN_ESI))) {
        return 0;
    }
    /* One rule for every frame, error frames included: an id above 0x7FF needs EFF. */
    if ((flags & SF_CAN_EFF) ? id > 0x1FFFFFFFu : id > 0x7FFu)
        return 0;
    /* An error frame carries EFF exactly when its class is above 0x7FF: the text formats
     * (candump's 8 digits) cannot tell EFF apart on a smaller class. */
    if ((flags & SF_CAN_ERR) && (flags & SF_CAN_EFF) && id <= 0x7FFu)
        return 0;
    return 1;
}

/* The CAN FD lengths above 8 a DLC can say, 12 16 20 24 32 48 64, as bits len / 4. */
#define FD_LONG_LENGTHS \
    ((1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 8) | (1u << 12) | (1u << 16))

int sf_rec_can_valid(uint32_t id, uint32_t flags, uint8_t len)
{
    if ((flags & SF_CAN_FD) && len > 8 &&
        (len > 64 || (len & 3u) || !((FD_LONG_LENGTHS >> (len >> 2)) & 1u)))
        return 0;                      /* not a length a CAN FD DLC can say */
    return can_valid(id, flags, len);
}

uint32_t sf_rec_put_can(uint8_t *dst, uint8_t channel, uint64_t ts, uint32_t id,
                        uint32_t flags, const uint8_t *data, uint8_t len)
{
    if (!sf_rec_can_valid(id, flags, len))
        return 0;
    return rec_put_can_valid(dst, channel, ts, id, flags, data, len);
}

/* What a reader checks of a CAN record's flags: the informational bits 6-15 are ignored
 * (docs/FORMAT.md: bit 6 is TX, which no check depends on; 7-15 a later writer's);
 * any other unknown bit (16-31) changes the frame's meaning and makes it bad-can. */
static uint32_t rec_read_flags(uint32_t flags)
{
    return flags & ~SF_CAN_FLAGS_INFO;
}

/* A body longer than the frame needs is accepted (room for fields a later writer may append
 * while keeping version 1); a shorter one is not. The reserved bytes 5-7 are not read. */
int sf_rec_get_can(const struct sf_rec *r, struct sf_can *out)
{
    uint32_t id, len;

    if (r->type != SF_REC_CAN || r->length < SF_CAN_BODY)
        return SF_ECORRUPT;
    id = ld_le32(r->body + CB_ID);
    len = r->body[CB_LEN];
    if (r->length < SF_CAN_BODY + len || !can_valid(id, rec_read_flags(r->flags), len))
        return SF_ECORRUPT;
    out->id = id;
    out->flags = r->flags;
    out->len = (uint8_t)len;
    memcpy(out->data, r->body + SF_CAN_BODY, len);
    if (len < sizeof out->data)
        memset(out->data + len, 0, sizeof out->data - len);
    return 0;
}

void sf_block_seal(uint8_t *block, const struct sf_block_info *bi)
{
    uint32_t payload = bi->block_size - SF_BLOCK_HDR;
    uint32_t used = bi->used <= payload ? bi->used : payload;   /* caller error: clamp */

    st_le32(block + BH_MAGIC, SF_BLOCK_MAGIC);
    st_le16(block + BH_VERSION, SF_REC_VERSION);
    st_le16(block + BH_KIND, bi->kind);
    st_le64(block + BH_FILE_ID, bi->file_id);
    st_le64(block + BH_SEQ, bi->seq);
    st_le64(block + BH_FIRST_TS, bi->first_ts);
    st_le32(block + BH_USED, used);
    st_le32(block + BH_COUNT, bi->count);
    st_le32(block + BH_BLOCK_SIZE, bi->block_size);
    if (used < payload)
        memset(block + SF_BLOCK_HDR + used, 0, payload - used);
    st_le32(block + BH_CRC, block_crc(block, used));
}

int sf_block_peek_size(const uint8_t *hdr48, uint32_t *size)
{
    uint32_t b = ld_le32(hdr48 + BH_BLOCK_SIZE);

    if (ld_le32(hdr48 + BH_MAGIC) != SF_BLOCK_MAGIC ||
        ld_le16(hdr48 + BH_VERSION) != SF_REC_VERSION || !block_size_ok(b))
        return SF_ECORRUPT;
    *size = b;
    return 0;
}

int sf_block_check(const uint8_t *block, uint32_t len, struct sf_block_info *bi)
{
    uint32_t size, used;
    uint16_t kind;

    if (!block_size_ok(len) || sf_block_peek_size(block, &size) || size != len)
        return SF_ECORRUPT;
    kind = ld_le16(block + BH_KIND);
    used = ld_le32(block + BH_USED);
    if ((kind != SF_BLOCK_FILE_HEADER && kind != SF_BLOCK_RECORDS &&
         kind != SF_BLOCK_PACKED) || used > len - SF_BLOCK_HDR)
        return SF_ECORRUPT;
    if (ld_le32(block + BH_CRC) != block_crc(block, used))
        return SF_ECORRUPT;
    bi->kind = kind;
    bi->file_id = ld_le64(block + BH_FILE_ID);
    bi->seq = ld_le64(block + BH_SEQ);
    bi->first_ts = ld_le64(block + BH_FIRST_TS);
    bi->used = used;
    bi->count = ld_le32(block + BH_COUNT);
    bi->block_size = len;
    return 0;
}

int sf_rec_next(const uint8_t *block, const struct sf_block_info *bi, uint32_t *off,
                struct sf_rec *r)
{
    const uint8_t *p;
    uint32_t o = *off, used = bi->used, length;

    if (o == used)
        return 0;
    /* Records start 8-aligned and need their whole header and body before `used`. */
    if (o > used || (o & 7u) || used - o < SF_REC_HDR)
        return SF_ECORRUPT;
    p = block + SF_BLOCK_HDR + o;
    length = ld_le16(p + RH_LENGTH);
    if (sf_rec_size(length) > used - o)
        return SF_ECORRUPT;
    r->type = p[RH_TYPE];
    r->channel = p[RH_CHANNEL];
    r->length = (uint16_t)length;
    r->flags = ld_le32(p + RH_FLAGS);
    r->ts = ld_le64(p + RH_TS);
    r->body = p + SF_REC_HDR;
    *off = o + sf_rec_size(length);
    return 1;
}

size_t sf_rec_can_cols(const uint8_t *block, const struct sf_block_info *bi, uint32_t *off,
                       struct sf_can_cols *c)
{
    const uint8_t *pl = block + SF_BLOCK_HDR;
    uint32_t o = *off, used = bi->used;
    size_t n = c->n, n0 = c->n, dn = c->data_n;

    while (o < used && n < c->cap && c->data_cap - dn >= 64) {
        const uint8_t *p = pl + o, *body = p + SF_REC_HDR;
        uint32_t length, flags, id, len, dl;

        /* sf_rec_next's checks, then sf_rec_get_can's */
        if ((o & 7u) || used - o < SF_REC_HDR)
            break;
        length = ld_le16(p + RH_LENGTH);
        if (sf_rec_size(length) > used - o || p[RH_TYPE] != SF_REC_CAN ||
            length < SF_CAN_BODY)
            break;
        flags = ld_le32(p + RH_FLAGS);
        id = ld_le32(body + CB_ID);
        len = body[CB_LEN];
        if (length < SF_CAN_BODY + len ||
            (flags ? !can_valid(id, rec_read_flags(flags), len) : len > 8 || id > 0x7FFu))
            break;
        c->ts[n] = ld_le64(p + RH_TS);
        if (c->ts[n] >> 63)
            break;                     /* a time no reader takes (FORMAT.md): not a frame */
        c->channel[n] = p[RH_CHANNEL];
        c->id[n] = id;
        c->len[n] = (uint8_t)len;
        c->flags[n] = (uint8_t)flags;
        dl = (flags & SF_CAN_RTR) ? 0 : len;
        /* 1 to 8 bytes: the body is padded to 16 bytes at least, so copy 8 */
        if (dl - 1u < 8u)
            memcpy(c->data + dn, body + SF_CAN_BODY, 8);
        else if (dl)
            memcpy(c->data + dn, body + SF_CAN_BODY, dl);
        dn += dl;
        c->data_end[n] = (uint32_t)dn;
        n++;
        o += sf_rec_size(length);
    }
    *off = o;
    c->n = n;
    c->data_n = dn;
    return n - n0;
}

void sf_file_header_put(uint8_t *payload32, const struct sf_file_header *h)
{
    st_le64(payload32 + FH_START_TS, h->start_ts);
    st_le32(payload32 + FH_CLOCK, h->clock);
    st_le32(payload32 + FH_FILE_INDEX, h->file_index);
    st_le64(payload32 + FH_SESSION_ID, h->session_id);
    st_le64(payload32 + FH_FEATURES, h->features);
}

void sf_file_header_get(const uint8_t *payload32, struct sf_file_header *h)
{
    h->start_ts = ld_le64(payload32 + FH_START_TS);
    h->clock = ld_le32(payload32 + FH_CLOCK);
    h->file_index = ld_le32(payload32 + FH_FILE_INDEX);
    h->session_id = ld_le64(payload32 + FH_SESSION_ID);
    h->features = ld_le64(payload32 + FH_FEATURES);
}

int sf_rec_type_known(uint8_t type)
{
    return (type >= SF_REC_CAN && type <= SF_REC_ANNOTATION) || type == SF_REC_CHANNEL ||
           type == SF_REC_META;
}

int sf_file_features_refused(uint64_t features)
{
    uint64_t unknown = features & SF_FEATURES_REQUIRED & ~SF_FEATURES_REQUIRED_KNOWN;

    for (int bit = 32; bit < 64; bit++)
        if (unknown >> bit & 1u)
            return bit;
    return -1;
}

/* UTF-8 as RFC 3629 has it: no overlong forms, no surrogates, nothing above U+10FFFF. */
int sf_rec_name_ok(const uint8_t *p, uint32_t n)
{
    uint32_t i = 0;

    if (!n)
        return 0;
    while (i < n) {
        uint8_t c = p[i];
        uint32_t k, cp, min;
        if (c < 0x80) {
            if (c <= 0x20 || c == 0x7F)
                return 0;
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            k = 1, cp = c & 0x1Fu, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            k = 2, cp = c & 0x0Fu, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            k = 3, cp = c & 0x07u, min = 0x10000;
        else
            return 0;
        if (n - i <= k)
            return 0;
        for (uint32_t m = 1; m <= k; m++) {
            if ((p[i + m] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i + m] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k + 1;
    }
    return 1;
}
