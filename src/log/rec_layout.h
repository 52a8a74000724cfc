/* Record and CAN body field offsets (docs/FORMAT.md, version 1), and the encoder of a valid
 * CAN record, shared by rec.c (sf_rec_put_can) and ring.c (sf_log_append_can, which inlines it:
 * the producer's hot path, where a call and a second validation were a third of the cost). */
#ifndef SF_LOG_REC_LAYOUT_H
#define SF_LOG_REC_LAYOUT_H

#include "streamfat/rec.h"
#include "util/le.h"

#include <string.h>

/* Record header fields */
#define RH_TYPE    0        /* u8 */
#define RH_CHANNEL 1        /* u8 */
#define RH_LENGTH  2        /* u16 body bytes */
#define RH_FLAGS   4        /* u32 */
#define RH_TS      8        /* u64 ns since 1970 */

/* CAN body fields */
#define CB_ID  0            /* u32 identifier or error class */
#define CB_LEN 4            /* u8 data bytes */
                            /* 5..7 zero */

/* sf_rec_can_valid with the common case first: a classic data frame with an 11-bit id and no
 * flags is valid exactly when len <= 8 and id <= 0x7FF (the rules in rec.c reduce to that). */
static inline int rec_can_valid_fast(uint32_t id, uint32_t flags, uint8_t len)
{
    if (!flags)
        return len <= 8 && id <= 0x7FFu;
    return sf_rec_can_valid(id, flags, len);
}

/* Write a CAN record the caller has validated; returns its size (zero padding included). */
static inline uint32_t rec_put_can_valid(uint8_t *dst, uint8_t channel, uint64_t ts, uint32_t id,
                                         uint32_t flags, const uint8_t *data, uint8_t len)
{
    uint32_t padded = (SF_CAN_BODY + len + 7u) & ~7u;

    dst[RH_TYPE] = SF_REC_CAN;
    dst[RH_CHANNEL] = channel;
    st_le16(dst + RH_LENGTH, (uint16_t)(SF_CAN_BODY + len));
    st_le32(dst + RH_FLAGS, flags);
    st_le64(dst + RH_TS, ts);
    st_le32(dst + SF_REC_HDR + CB_ID, id);
    st_le32(dst + SF_REC_HDR + CB_LEN, len);         /* len and the three zero bytes */
    /* A remote frame has a length but no data: its data[len] is stored (the format keeps
     * the body layout the same for every frame) and is zeros when data is NULL. */
    if (len == 8 && data)
        memcpy(dst + SF_REC_HDR + SF_CAN_BODY, data, 8);   /* the usual frame: one store */
    else if (len && data)
        memcpy(dst + SF_REC_HDR + SF_CAN_BODY, data, len);
    else if (len)
        memset(dst + SF_REC_HDR + SF_CAN_BODY, 0, len);
    if (padded > SF_CAN_BODY + len)
        memset(dst + SF_REC_HDR + SF_CAN_BODY + len, 0, padded - SF_CAN_BODY - len);
    return SF_REC_HDR + padded;
}

#endif
