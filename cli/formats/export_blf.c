/* Vector BLF (cli/formats/blf_format.h has the layout): a file header, then log containers of up to
 * 128 KiB of inner objects each, zlib-deflated (--blf-compress 1..9; 1 by default) or
 * stored (0). Frames become CAN_MESSAGE (1), CAN_FD_MESSAGE (100) and CAN_ERROR_EXT (73)
 * objects with a version 1 object header and nanosecond timestamps.
 *
 * Streaming: one container is built in memory and written when the next object would not
 * fit; objects never straddle containers (readers must cope with it, writers need not).
 * The file header goes out with the first container, so only the start time is final
 * there: the file size, object count and stop time are patched in at the end when the
 * output is a regular file; on a pipe they stay 0 (python-can and Vector's readers take
 * the objects as they come).
 *
 * Time: the header's start time is a SYSTEMTIME (local time, as Vector's tools and
 * python-can both read it) in whole milliseconds: the log's start, or the oldest frame if
 * that is earlier (a logger's producers deliver frames out of order, by up to the ring's
 * residence time), rounded down. The oldest frame comes from a first pass over the log
 * (x->min_ts); on a pipe, from the first container. Each object's timestamp is the nanoseconds since then; a later
 * frame older than the start is put at the start and counted. A
 * BLF file is always absolute; --relative does not apply. Channels count from 1: can<N>
 * is channel N+1, other channels their number + 1 (export_vector_channel). */
#include "export.h"
#include "blf_format.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#define OBJ_HDR (BLF_OBJ_BASE_SIZE + BLF_OBJ_V1_SIZE)
#define OBJ_MAX (OBJ_HDR + BLF_CAN_FD_MSG_SIZE + 4)

struct blf {
    uint8_t data[BLF_CONTAINER_DATA_MAX];  /* inner objects of the container being built */
    uint32_t fill;
    uint8_t *z;                    /* deflated container */
    uLong zcap;
    z_stream zs;                   /* one deflate state for the whole export, reset per */
    int zs_ready;                  /* container (no allocation per container) */
    int started, header_out;
    uint64_t start, last;          /* ns; start is a whole millisecond */
    uint64_t min;                  /* the oldest timestamp before the start was fixed */
    uint64_t file_size, uncompressed_size;
    uint32_t objects;
};

static int put_systemtime(uint8_t *p, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;

    if (!localtime_r(&s, &tm))
        return -1;
    st_le16(p + BLF_ST_YEAR, (uint16_t)(tm.tm_year + 1900));
    st_le16(p + BLF_ST_MONTH, (uint16_t)(tm.tm_mon + 1));
    st_le16(p + BLF_ST_DAY_OF_WEEK, (uint16_t)tm.tm_wday);
    st_le16(p + BLF_ST_DAY, (uint16_t)tm.tm_mday);
    st_le16(p + BLF_ST_HOUR, (uint16_t)tm.tm_hour);
    st_le16(p + BLF_ST_MINUTE, (uint16_t)tm.tm_min);
    st_le16(p + BLF_ST_SECOND, (uint16_t)tm.tm_sec);
    st_le16(p + BLF_ST_MILLISECONDS, (uint16_t)(ns % 1000000000u / 1000000u));
    return 0;
}

static int file_header(const struct blf *b, uint8_t *h)
{
    memset(h, 0, BLF_FILE_HDR_SIZE);
    memcpy(h + BLF_FH_SIGNATURE, BLF_FILE_SIG, 4);
    st_le32(h + BLF_FH_HEADER_SIZE, BLF_FILE_HDR_SIZE);
    h[BLF_FH_APP_ID] = 0;                  /* unknown application */
    h[BLF_FH_BL_MAJOR] = 4;
    h[BLF_FH_BL_MINOR] = 1;
    st_le64(h + BLF_FH_FILE_SIZE, b->file_size);
    st_le64(h + BLF_FH_UNCOMPRESSED_SIZE, b->uncompressed_size);
    st_le32(h + BLF_FH_OBJECT_COUNT, b->objects);
    if (put_systemtime(h + BLF_FH_START_TIME, b->start))
        return -1;
    return put_systemtime(h + BLF_FH_STOP_TIME, b->last - b->last % 1000000u);
}

/* The first container is full (or the export ends): the start time is the oldest of its
 * frames and the log's start, so frames that the logger's producers delivered slightly out
 * of order need no clamping; its objects' absolute timestamps become relative. */
static void set_start(struct blf *b)
{
    uint32_t off = 0;

    b->start = b->min - b->min % 1000000u;
    while (off < b->fill) {
        uint8_t *o = b->data + off;
        uint8_t *t = o + BLF_OBJ_BASE_SIZE + BLF_OH1_TIMESTAMP;
        uint32_t size = ld_le32(o + BLF_OB_OBJECT_SIZE);
        st_le64(t, ld_le64(t) - b->start);
        off += size + blf_obj_padding(size);
    }
}

static int write_header(struct export_ctx *x, struct blf *b)
{
    uint8_t h[BLF_FILE_HDR_SIZE];

    if (file_header(b, h) || export_write(x, h, sizeof h))
        return -1;
    b->header_out = 1;
    b->file_size += BLF_FILE_HDR_SIZE;
    b->uncompressed_size += BLF_FILE_HDR_SIZE;
    return 0;
}

static int flush_container(struct export_ctx *x, struct blf *b)
{
    static const uint8_t zeros[4];
    uint8_t h[BLF_OBJ_BASE_SIZE + BLF_CONTAINER_HDR_SIZE];
    const uint8_t *payload = b->data;
    uLong len = b->fill;
    uint32_t size, raw_size;

    if (!b->fill)
        return 0;
    if (!b->header_out) {
        set_start(b);
        if (write_header(x, b))
            return -1;
    }
    if (x->blf_level > 0) {
        b->zs.next_in = b->data;
        b->zs.avail_in = b->fill;
        b->zs.next_out = b->z;
        b->zs.avail_out = (uInt)b->zcap;
        if (deflateReset(&b->zs) != Z_OK || deflate(&b->zs, Z_FINISH) != Z_STREAM_END) {
            errno = ENOMEM;
            return -1;
        }
        payload = b->z;
        len = b->zs.total_out;
    }
    size = (uint32_t)(sizeof h + len);
    memset(h, 0, sizeof h);
    memcpy(h + BLF_OB_SIGNATURE, BLF_OBJ_SIG, 4);
    st_le16(h + BLF_OB_HEADER_SIZE, BLF_OBJ_BASE_SIZE);
    st_le16(h + BLF_OB_HEADER_VER, 1);
    st_le32(h + BLF_OB_OBJECT_SIZE, size);
    st_le32(h + BLF_OB_OBJECT_TYPE, BLF_OBJ_LOG_CONTAINER);
    st_le16(h + BLF_OBJ_BASE_SIZE + BLF_LC_COMPRESSION,
              x->blf_level > 0 ? BLF_COMPRESS_ZLIB : BLF_COMPRESS_NONE);
    st_le32(h + BLF_OBJ_BASE_SIZE + BLF_LC_UNCOMPRESSED_SIZE, b->fill);
    if (export_write(x, h, sizeof h) || export_write(x, payload, len) ||
        export_write(x, zeros, blf_obj_padding(size)))
        return -1;
    raw_size = (uint32_t)sizeof h + b->fill;
    b->file_size += size + blf_obj_padding(size);
    b->uncompressed_size += raw_size + blf_obj_padding(raw_size);
    b->fill = 0;
    return 0;
}

static int blf_begin(struct export_ctx *x)
{
    struct blf *b = calloc(1, sizeof *b);

    if (!b)
        return -1;
    x->priv = b;
    b->zcap = compressBound(BLF_CONTAINER_DATA_MAX);
    if (!(b->z = malloc(b->zcap)))
        return -1;
    if (x->blf_level > 0) {
        if (deflateInit(&b->zs, x->blf_level) != Z_OK) {
            errno = ENOMEM;
            return -1;
        }
        b->zs_ready = 1;
    }
    return 0;
}

static int blf_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    struct blf *b = x->priv;
    uint8_t *o, *body;
    uint32_t type, size, id = c->id | ((c->flags & SF_CAN_EFF) ? BLF_CAN_ID_EXT : 0);
    uint16_t ch = (uint16_t)export_vector_channel(x, r->channel);
    uint64_t ts = r->ts;

    if (!b->started) {
        b->min = b->last = ts < x->log_start ? ts : x->log_start;
        if (x->have_min && x->min_ts < b->min)
            b->min = x->min_ts;
        b->started = 1;
    }
    if (b->header_out && ts < b->start) {
        x->clamped++;
        ts = b->start;
    }
    if (ts < b->min)
        b->min = ts;
    if (ts > b->last)
        b->last = ts;
    if (b->fill + OBJ_MAX > sizeof b->data && flush_container(x, b))
        return -1;

    if (c->flags & SF_CAN_FD) {
        type = BLF_OBJ_CAN_FD_MESSAGE;
        size = OBJ_HDR + BLF_CAN_FD_MSG_SIZE;
    } else if (c->flags & SF_CAN_ERR) {
        type = BLF_OBJ_CAN_ERROR_EXT;
        size = OBJ_HDR + BLF_CAN_ERR_EXT_SIZE;
    } else {
        type = BLF_OBJ_CAN_MESSAGE;
        size = OBJ_HDR + BLF_CAN_MSG_SIZE;
    }
    o = b->data + b->fill;
    memset(o, 0, size + blf_obj_padding(size));
    memcpy(o + BLF_OB_SIGNATURE, BLF_OBJ_SIG, 4);
    st_le16(o + BLF_OB_HEADER_SIZE, OBJ_HDR);
    st_le16(o + BLF_OB_HEADER_VER, 1);
    st_le32(o + BLF_OB_OBJECT_SIZE, size);
    st_le32(o + BLF_OB_OBJECT_TYPE, type);
    st_le32(o + BLF_OBJ_BASE_SIZE + BLF_OH1_FLAGS, BLF_TIME_ONE_NANS);
    /* Absolute until the first container fixes the start (set_start). */
    st_le64(o + BLF_OBJ_BASE_SIZE + BLF_OH1_TIMESTAMP, b->header_out ? ts - b->start : ts);
    body = o + OBJ_HDR;
    if (type == BLF_OBJ_CAN_FD_MESSAGE) {
        st_le16(body + BLF_CFD_CHANNEL, ch);
        body[BLF_CFD_DLC] = blf_len_to_dlc(c->len);
        st_le32(body + BLF_CFD_ID, id);
        body[BLF_CFD_FD_FLAGS] = (uint8_t)(BLF_FD_EDL | ((c->flags & SF_CAN_BRS) ? BLF_FD_BRS : 0) |
                                           ((c->flags & SF_CAN_ESI) ? BLF_FD_ESI : 0));
        body[BLF_CFD_FLAGS] = (c->flags & SF_CAN_TX) ? BLF_CAN_DIR_TX : 0;  /* FORMAT.md bit 6 */
        body[BLF_CFD_VALID_BYTES] = c->len;
        memcpy(body + BLF_CFD_DATA, c->data, c->len);
    } else if (type == BLF_OBJ_CAN_ERROR_EXT) {
        /* The id field holds the error class, as candump's error frames do. */
        st_le16(body + BLF_CEE_CHANNEL, ch);
        body[BLF_CEE_DLC] = c->len;
        st_le32(body + BLF_CEE_ID, id);
        memcpy(body + BLF_CEE_DATA, c->data, c->len > 8 ? 8 : c->len);
    } else {
        st_le16(body + BLF_CM_CHANNEL, ch);
        body[BLF_CM_FLAGS] = (uint8_t)(((c->flags & SF_CAN_RTR) ? BLF_CAN_RTR : 0) |
                                       ((c->flags & SF_CAN_TX) ? BLF_CAN_DIR_TX : 0));
        body[BLF_CM_DLC] = c->len;
        st_le32(body + BLF_CM_ID, id);
        if (!(c->flags & SF_CAN_RTR))
            memcpy(body + BLF_CM_DATA, c->data, c->len);
    }
    b->fill += size + blf_obj_padding(size);
    b->objects++;
    x->written++;
    return 1;
}

static int blf_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

static int blf_end(struct export_ctx *x)
{
    struct blf *b = x->priv;
    int rc = 0;

    if (!b)
        return 0;
    if (b->z) {
        if (!b->started) {
            b->min = b->last = x->log_start;
            b->started = 1;
        }
        rc = flush_container(x, b);
        if (!rc && !b->header_out) {
            set_start(b);
            rc = write_header(x, b);
        }
        if (!rc && x->seekable) {
            /* The totals are known now: rewrite the header in place. */
            uint8_t h[BLF_FILE_HDR_SIZE];
            if (file_header(b, h) || fflush(x->out) || fseeko(x->out, 0, SEEK_SET) ||
                export_write(x, h, sizeof h) || fseeko(x->out, 0, SEEK_END))
                rc = -1;
        }
    }
    if (b->zs_ready)
        deflateEnd(&b->zs);
    free(b->z);
    free(b);
    x->priv = NULL;
    return rc;
}

const struct export_writer export_blf = {
    "blf", "blf", 0, 1, blf_begin, blf_can, blf_other, blf_end,
};
