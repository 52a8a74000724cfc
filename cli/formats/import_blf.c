/* Vector BLF import (import.h): the pure parsers of the file header and of one inner object,
 * and a streaming reader over them.
 *
 * Layout (cli/formats/blf_format.h): a file header ("LOGG") of header_size bytes, then top-level
 * objects. Frames live in log containers (type 10): each holds a zlib stream (method 2) or
 * stored bytes (method 0) of inner objects, and an inner object may continue in the next
 * container. Top-level objects of other types are skipped, as python-can does.
 *
 * Memory: the reader holds one read buffer (IN_CAP) and one buffer of inflated bytes
 * (OUT_CAP), both fixed at open; each container is inflated through them piecewise, never
 * whole, so memory does not depend on the file or container sizes. An inner object larger
 * than OUT_CAP cannot be a frame (the largest, CAN_FD_MESSAGE_64, is under 200 bytes): it
 * is skipped byte by byte.
 *
 * Time: an object's time is the file header's start SYSTEMTIME, read as local time, plus
 * the object's timestamp (1 ns or 10 µs units by its flags). That is how python-can reads
 * BLF (can/io/blf.py), and python-can writes the start as its first message's time rounded
 * to the millisecond with object timestamps relative to the unrounded time, so files it
 * writes read back here exactly as python-can itself reads them back.
 *
 * Sections: pure parsers; reading the file; containers; the reader. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "import.h"
#include "blf_format.h"
#include "streamfat/rec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_CAP  (64u * 1024u)
#define OUT_CAP (256u * 1024u)
#define BLF_FH_MIN 72u          /* the fields up to the stop SYSTEMTIME */

/* ---- pure parsers ---------------------------------------------------------------------- */

int blf_parse_file_header(const uint8_t *p, size_t n, uint32_t *header_size,
                          uint64_t *start_ns, const char **why)
{
    const uint8_t *st;
    uint64_t t;

    if (n < BLF_FH_MIN || memcmp(p + BLF_FH_SIGNATURE, BLF_FILE_SIG, 4) != 0) {
        *why = n < BLF_FH_MIN ? "file header truncated" : "no LOGG signature";
        return -1;
    }
    *header_size = ld_le32(p + BLF_FH_HEADER_SIZE);
    if (*header_size < BLF_FH_MIN || *header_size > (1u << 24)) {
        *why = "file header size out of range";
        return -1;
    }
    st = p + BLF_FH_START_TIME;
    if (imp_local_time(ld_le16(st + BLF_ST_YEAR), ld_le16(st + BLF_ST_MONTH),
                       ld_le16(st + BLF_ST_DAY), ld_le16(st + BLF_ST_HOUR),
                       ld_le16(st + BLF_ST_MINUTE), ld_le16(st + BLF_ST_SECOND),
                       (uint32_t)ld_le16(st + BLF_ST_MILLISECONDS) * 1000000u, &t))
        t = 0;                  /* zeros (python-can before 1990) or not a date: offsets only */
    *start_ns = t;
    return 0;
}

static int fd_len_ok(unsigned len)
{
    return len <= 8 || len == 12 || len == 16 || len == 20 || len == 24 || len == 32 ||
           len == 48 || len == 64;
}

/* The id field: bit 31 says 29 bits. */
static int take_id(uint32_t raw, struct src_can_frame *f, const char **why)
{
    f->id = raw & 0x1FFFFFFFu;
    if (raw & BLF_CAN_ID_EXT) {
        f->flags |= SF_CAN_EFF;
    } else if (f->id > 0x7FFu) {
        *why = "11-bit id above 0x7FF";
        return -1;
    }
    return 0;
}

/* A CAN FD frame's length: the valid byte count when a DLC can say it, else the DLC's. */
static int fd_length(unsigned valid, unsigned dlc, uint8_t *len, const char **why)
{
    if (valid > 64) {
        *why = "more than 64 data bytes";
        return -1;
    }
    *len = (uint8_t)(fd_len_ok(valid) ? valid : blf_dlc_to_len((uint8_t)dlc));
    return 0;
}

int blf_parse_object(const uint8_t *p, size_t n, uint64_t start_ns, struct imp_frame *fr,
                     uint32_t *size, const char **why)
{
    struct src_can_frame *f = &fr->f;
    uint32_t hsize, hver, osize, type, tflags, blen;
    uint64_t ts;
    const uint8_t *b;

    *size = BLF_OBJ_BASE_SIZE;
    if (n < BLF_OBJ_BASE_SIZE)
        return BLF_OBJ_NEED;
    if (!blf_is_obj(p)) {
        *why = "no LOBJ signature";
        return BLF_OBJ_BAD;
    }
    hsize = ld_le16(p + BLF_OB_HEADER_SIZE);
    hver = ld_le16(p + BLF_OB_HEADER_VER);
    osize = ld_le32(p + BLF_OB_OBJECT_SIZE);
    type = ld_le32(p + BLF_OB_OBJECT_TYPE);
    if (osize < BLF_OBJ_BASE_SIZE) {
        *why = "object size smaller than its header";
        return BLF_OBJ_BAD;
    }
    *size = osize;
    if (n < osize)
        return BLF_OBJ_NEED;
    if (type != BLF_OBJ_CAN_MESSAGE && type != BLF_OBJ_CAN_MESSAGE2 &&
        type != BLF_OBJ_CAN_ERROR_EXT && type != BLF_OBJ_CAN_FD_MESSAGE &&
        type != BLF_OBJ_CAN_FD_MESSAGE_64)
        return BLF_OBJ_SKIP;
    if (hver != 1 && hver != 2)
        return BLF_OBJ_SKIP;    /* a header streamfat does not know: python-can skips it too */
    if (hsize < BLF_OBJ_BASE_SIZE + (hver == 1 ? BLF_OBJ_V1_SIZE : BLF_OBJ_V2_SIZE) ||
        hsize > osize) {
        *why = "object header size out of range";
        return BLF_OBJ_BAD;
    }
    /* v1 and v2 have flags and the timestamp at the same offsets */
    tflags = ld_le32(p + BLF_OBJ_BASE_SIZE + BLF_OH1_FLAGS);
    ts = ld_le64(p + BLF_OBJ_BASE_SIZE + BLF_OH1_TIMESTAMP);
    if (tflags == BLF_TIME_TEN_MICS) {   /* python-can: 10 µs only for exactly this flag */
        if (ts > UINT64_MAX / 10000u) {
            *why = "timestamp out of range";
            return BLF_OBJ_BAD;
        }
        ts *= 10000u;
    }
    if (ts > UINT64_MAX - start_ns) {
        *why = "timestamp out of range";
        return BLF_OBJ_BAD;
    }
    b = p + hsize;
    blen = osize - hsize;
    memset(fr, 0, sizeof *fr);
    f->ts = start_ns + ts;

    switch (type) {
    case BLF_OBJ_CAN_MESSAGE:
    case BLF_OBJ_CAN_MESSAGE2:
        if (blen < BLF_CAN_MSG_SIZE)
            goto short_body;
        fr->channel = ld_le16(b + BLF_CM_CHANNEL);
        if (take_id(ld_le32(b + BLF_CM_ID), f, why))
            return BLF_OBJ_BAD;
        f->len = b[BLF_CM_DLC] > 8 ? 8 : b[BLF_CM_DLC];   /* DLC 9..15: 8 bytes (CAN 2.0) */
        if (b[BLF_CM_FLAGS] & BLF_CAN_DIR_TX)
            f->flags |= SF_CAN_TX;      /* docs/FORMAT.md bit 6 */
        if (b[BLF_CM_FLAGS] & BLF_CAN_RTR)
            f->flags |= SF_CAN_RTR;
        else
            memcpy(f->data, b + BLF_CM_DATA, f->len);
        return BLF_OBJ_FRAME;

    case BLF_OBJ_CAN_ERROR_EXT:
        if (blen < BLF_CAN_ERR_EXT_SIZE)
            goto short_body;
        fr->channel = ld_le16(b + BLF_CEE_CHANNEL);
        f->flags = SF_CAN_ERR;
        f->id = IMP_ERR_CLASS;
        f->len = 8;
        return BLF_OBJ_FRAME;

    case BLF_OBJ_CAN_FD_MESSAGE:
        if (blen < BLF_CAN_FD_MSG_SIZE)
            goto short_body;
        fr->channel = ld_le16(b + BLF_CFD_CHANNEL);
        if (take_id(ld_le32(b + BLF_CFD_ID), f, why))
            return BLF_OBJ_BAD;
        if (b[BLF_CFD_FLAGS] & BLF_CAN_DIR_TX)
            f->flags |= SF_CAN_TX;
        if (b[BLF_CFD_FD_FLAGS] & BLF_FD_EDL) {
            f->flags |= SF_CAN_FD;
            if (b[BLF_CFD_FD_FLAGS] & BLF_FD_BRS)
                f->flags |= SF_CAN_BRS;
            if (b[BLF_CFD_FD_FLAGS] & BLF_FD_ESI)
                f->flags |= SF_CAN_ESI;
            if (fd_length(b[BLF_CFD_VALID_BYTES], b[BLF_CFD_DLC], &f->len, why))
                return BLF_OBJ_BAD;
            memcpy(f->data, b + BLF_CFD_DATA, f->len);
        } else {                /* a classic frame logged as an FD object */
            f->len = b[BLF_CFD_DLC] > 8 ? 8 : b[BLF_CFD_DLC];
            if (b[BLF_CFD_FLAGS] & BLF_CAN_RTR)
                f->flags |= SF_CAN_RTR;
            else
                memcpy(f->data, b + BLF_CFD_DATA, f->len);
        }
        return BLF_OBJ_FRAME;

    case BLF_OBJ_CAN_FD_MESSAGE_64: {
        uint32_t fl, valid;
        if (blen < BLF_CAN_FD64_HDR_SIZE)
            goto short_body;
        fr->channel = b[BLF_CF64_CHANNEL];
        if (take_id(ld_le32(b + BLF_CF64_ID), f, why))
            return BLF_OBJ_BAD;
        fl = ld_le32(b + BLF_CF64_FLAGS);
        if (b[BLF_CF64_DIR] == 1)
            f->flags |= SF_CAN_TX;
        valid = b[BLF_CF64_VALID_BYTES];
        if (valid > blen - BLF_CAN_FD64_HDR_SIZE) {
            *why = "CAN_FD_MESSAGE_64 data beyond the object";
            return BLF_OBJ_BAD;
        }
        if (fl & BLF_FD64_EDL) {
            f->flags |= SF_CAN_FD;
            if (fl & BLF_FD64_BRS)
                f->flags |= SF_CAN_BRS;
            if (fl & BLF_FD64_ESI)
                f->flags |= SF_CAN_ESI;
            if (fd_length(valid, b[BLF_CF64_DLC], &f->len, why))
                return BLF_OBJ_BAD;
        } else {
            f->len = b[BLF_CF64_DLC] > 8 ? 8 : b[BLF_CF64_DLC];
            if (fl & BLF_FD64_RTR) {
                f->flags |= SF_CAN_RTR;
                return BLF_OBJ_FRAME;
            }
        }
        memcpy(f->data, b + BLF_CF64_DATA, valid < f->len ? valid : f->len);
        return BLF_OBJ_FRAME;
    }
    }
    return BLF_OBJ_SKIP;
short_body:
    *why = "object body shorter than its type's";
    return BLF_OBJ_BAD;
}

/* ---- reading the file ------------------------------------------------------------------ */

struct blf_reader {
    int fd;
    int failed;
    char err[512];
    const char *name;
    uint64_t start_ns;

    uint8_t *in;                    /* IN_CAP bytes read from the file */
    size_t in_pos, in_len;
    uint64_t in_off;                /* file offset of in[0] */
    int in_eof;

    /* the container being inflated */
    int in_cont;
    unsigned method;
    uint64_t cont_off;              /* file offset of its LOBJ */
    uint64_t cont_left;             /* payload bytes not yet taken from the file */
    uint32_t cont_usize, cont_pad;
    uint64_t cont_made;
    z_stream z;
    int z_ready, z_end;

    uint8_t *out;                   /* OUT_CAP bytes of inner objects */
    size_t out_pos, out_len;
    uint64_t skip;                  /* inner bytes still to pass over */
};

static int fail(struct blf_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct blf_reader *r, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (r->failed)
        return -1;
    k = snprintf(r->err, sizeof r->err, "%s: BLF: ", r->name);
    va_start(ap, fmt);
    vsnprintf(r->err + k, sizeof r->err - (size_t)k, fmt, ap);
    va_end(ap);
    r->failed = 1;
    return -1;
}

static uint64_t in_at(const struct blf_reader *r)
{
    return r->in_off + r->in_pos;
}

/* At least `want` bytes buffered (fewer only at the end of the file): 0, or -1. */
static int in_need(struct blf_reader *r, size_t want)
{
    while (r->in_len - r->in_pos < want && !r->in_eof) {
        ssize_t got;
        if (r->in_pos) {
            memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
            r->in_off += r->in_pos;
            r->in_len -= r->in_pos;
            r->in_pos = 0;
        }
        got = read(r->fd, r->in + r->in_len, IN_CAP - r->in_len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return fail(r, "read: %s", strerror(errno));
        }
        if (got == 0)
            r->in_eof = 1;
        r->in_len += (size_t)got;
    }
    return 0;
}

/* Pass over n bytes of the file; *short_by is what the file lacked. */
static int in_skip(struct blf_reader *r, uint64_t n, uint64_t *short_by)
{
    *short_by = 0;
    while (n) {
        size_t have;
        if (in_need(r, 1))
            return -1;
        have = r->in_len - r->in_pos;
        if (have == 0) {
            *short_by = n;
            return 0;
        }
        if (have > n)
            have = (size_t)n;
        r->in_pos += have;
        n -= have;
    }
    return 0;
}

/* ---- containers ------------------------------------------------------------------------ */

/* Find the next log container: 1 when one starts, 0 at the end of the file, -1. */
static int next_container(struct blf_reader *r)
{
    for (;;) {
        const uint8_t *p;
        uint32_t osize, type;
        uint64_t at, short_by;
        size_t have;

        if (in_need(r, BLF_OBJ_BASE_SIZE + BLF_CONTAINER_HDR_SIZE))
            return -1;
        have = r->in_len - r->in_pos;
        p = r->in + r->in_pos;
        at = in_at(r);
        if (have < BLF_OBJ_BASE_SIZE) {
            for (size_t i = 0; i < have; i++)
                if (p[i])
                    return fail(r, "truncated object header at offset %" PRIu64, at);
            return 0;               /* the end, or zero padding before it */
        }
        if (!blf_is_obj(p))
            return fail(r, "no object (LOBJ) at offset %" PRIu64, at);
        osize = ld_le32(p + BLF_OB_OBJECT_SIZE);
        type = ld_le32(p + BLF_OB_OBJECT_TYPE);
        if (osize < BLF_OBJ_BASE_SIZE)
            return fail(r, "object at offset %" PRIu64 " smaller than its header", at);
        if (type != BLF_OBJ_LOG_CONTAINER) {
            if (in_skip(r, osize, &short_by))
                return -1;
            if (short_by)
                return fail(r, "object at offset %" PRIu64 " truncated", at);
            if (in_skip(r, blf_obj_padding(osize), &short_by))
                return -1;
            continue;
        }
        if (osize < BLF_OBJ_BASE_SIZE + BLF_CONTAINER_HDR_SIZE ||
            have < BLF_OBJ_BASE_SIZE + BLF_CONTAINER_HDR_SIZE)
            return fail(r, "log container at offset %" PRIu64 " truncated", at);
        r->method = ld_le16(p + BLF_OBJ_BASE_SIZE + BLF_LC_COMPRESSION);
        r->cont_usize = ld_le32(p + BLF_OBJ_BASE_SIZE + BLF_LC_UNCOMPRESSED_SIZE);
        r->cont_off = at;
        r->cont_left = osize - BLF_OBJ_BASE_SIZE - BLF_CONTAINER_HDR_SIZE;
        r->cont_pad = blf_obj_padding(osize);
        r->cont_made = 0;
        r->in_pos += BLF_OBJ_BASE_SIZE + BLF_CONTAINER_HDR_SIZE;
        if (r->method == BLF_COMPRESS_ZLIB) {
            int zr = r->z_ready ? inflateReset(&r->z) : inflateInit(&r->z);
            if (zr != Z_OK)
                return fail(r, "zlib: cannot start (%d)", zr);
            r->z_ready = 1;
            r->z_end = 0;
        } else if (r->method != BLF_COMPRESS_NONE) {
            return fail(r, "log container at offset %" PRIu64 ": unknown compression %u", at,
                        r->method);
        }
        r->in_cont = 1;
        return 1;
    }
}

/* The current container is used up: its size checked, the rest and the padding passed. */
static int end_container(struct blf_reader *r)
{
    uint64_t short_by;

    if (r->cont_made != r->cont_usize)
        return fail(r, "log container at offset %" PRIu64 " holds %" PRIu64 " bytes, its "
                    "header says %" PRIu32, r->cont_off, r->cont_made, r->cont_usize);
    if (in_skip(r, r->cont_left, &short_by))
        return -1;
    if (short_by)
        return fail(r, "log container at offset %" PRIu64 " truncated", r->cont_off);
    if (in_skip(r, r->cont_pad, &short_by))      /* the file may end before its padding */
        return -1;
    r->in_cont = 0;
    return 0;
}

/* Inner bytes into out[out_len..]: 1 when some came, 0 when the container is used up, -1. */
static int produce(struct blf_reader *r)
{
    size_t room = OUT_CAP - r->out_len, have;

    if (r->method == BLF_COMPRESS_NONE ? r->cont_left == 0 : r->z_end)
        return 0;
    if (r->cont_left && in_need(r, 1))
        return -1;
    have = r->in_len - r->in_pos;
    if (have > r->cont_left)
        have = (size_t)r->cont_left;
    if (r->method == BLF_COMPRESS_NONE) {
        if (have == 0)
            return fail(r, "log container at offset %" PRIu64 " truncated", r->cont_off);
        if (have > room)
            have = room;
        memcpy(r->out + r->out_len, r->in + r->in_pos, have);
        r->out_len += have;
        r->in_pos += have;
        r->cont_left -= have;
        r->cont_made += have;
        return 1;
    }
    for (;;) {
        int zr;
        size_t used, made;
        r->z.next_in = r->in + r->in_pos;
        r->z.avail_in = (uInt)have;
        r->z.next_out = r->out + r->out_len;
        r->z.avail_out = (uInt)room;
        zr = inflate(&r->z, Z_NO_FLUSH);
        used = have - r->z.avail_in;
        made = room - r->z.avail_out;
        r->in_pos += used;
        r->cont_left -= used;
        r->out_len += made;
        r->cont_made += made;
        if (zr == Z_STREAM_END) {
            r->z_end = 1;
            return made ? 1 : 0;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return fail(r, "log container at offset %" PRIu64 ": bad zlib data (%s)",
                        r->cont_off, r->z.msg ? r->z.msg : zError(zr));
        if (made)
            return 1;
        if (r->cont_left == 0)
            return fail(r, "log container at offset %" PRIu64 ": zlib stream ends early",
                        r->cont_off);
        if (in_need(r, 1))
            return -1;
        have = r->in_len - r->in_pos;
        if (have > r->cont_left)
            have = (size_t)r->cont_left;
        if (have == 0)
            return fail(r, "log container at offset %" PRIu64 " truncated", r->cont_off);
    }
}

/* More inner bytes after the unparsed ones: 1, 0 at the end of the file, -1. */
static int more(struct blf_reader *r)
{
    if (r->out_pos) {
        memmove(r->out, r->out + r->out_pos, r->out_len - r->out_pos);
        r->out_len -= r->out_pos;
        r->out_pos = 0;
    }
    for (;;) {
        int rc;
        if (!r->in_cont) {
            rc = next_container(r);
            if (rc <= 0)
                return rc;
        }
        rc = produce(r);
        if (rc)
            return rc;
        if (end_container(r))
            return -1;
    }
}

/* ---- the reader ------------------------------------------------------------------------ */

struct blf_reader *blf_reader_open(int fd, const char *name, char *err, size_t errlen)
{
    struct blf_reader *r = calloc(1, sizeof *r);
    uint32_t hsize;
    uint64_t short_by;
    const char *why = "";

    if (r) {
        r->in = malloc(IN_CAP);
        r->out = malloc(OUT_CAP);
    }
    if (!r || !r->in || !r->out) {
        snprintf(err, errlen, "out of memory");
        goto bad;
    }
    r->fd = fd;
    r->name = name;
    if (in_need(r, BLF_FH_MIN))
        goto bad_msg;
    if (blf_parse_file_header(r->in, r->in_len, &hsize, &r->start_ns, &why)) {
        snprintf(err, errlen, "%s: BLF: %s", name, why);
        goto bad;
    }
    if (in_skip(r, hsize, &short_by))
        goto bad_msg;
    if (short_by) {
        snprintf(err, errlen, "%s: BLF: file header truncated", name);
        goto bad;
    }
    return r;
bad_msg:
    snprintf(err, errlen, "%s", r->err);
bad:
    if (r) {
        r->fd = -1;
        blf_reader_close(r);
    }
    close(fd);
    return NULL;
}

int blf_reader_next(struct blf_reader *r, struct imp_frame *fr)
{
    for (;;) {
        size_t avail = r->out_len - r->out_pos;
        const uint8_t *p = r->out + r->out_pos;
        uint32_t size = 0;
        const char *why = "";
        int rc;

        if (r->failed)
            return -1;
        if (r->skip) {
            size_t take = avail < r->skip ? avail : (size_t)r->skip;
            r->out_pos += take;
            r->skip -= take;
            if (r->skip) {
                rc = more(r);
                if (rc < 0)
                    return -1;
                if (rc == 0)
                    return fail(r, "the last object is truncated");
            }
            continue;
        }
        /* the padding after an object: look for the next LOBJ a few bytes on, as
         * python-can does (the padding rule, object_size % 4, is not everyone's) */
        if (avail >= 4 && !blf_is_obj(p)) {
            size_t k;
            for (k = 1; k <= 4 && k + 4 <= avail; k++)
                if (blf_is_obj(p + k))
                    break;
            if (k <= 4 && k + 4 <= avail) {
                r->out_pos += k;
                continue;
            }
            if (avail >= 8)
                return fail(r, "no object (LOBJ) in the log container at offset %" PRIu64,
                            r->cont_off);
        }
        rc = avail >= 4 && blf_is_obj(p) ? blf_parse_object(p, avail, r->start_ns, fr, &size,
                                                            &why)
                                         : BLF_OBJ_NEED;
        if (rc == BLF_OBJ_FRAME || rc == BLF_OBJ_SKIP) {
            r->out_pos += size;
            if (rc == BLF_OBJ_FRAME)
                return 1;
            continue;
        }
        if (rc == BLF_OBJ_BAD)
            return fail(r, "object in the log container at offset %" PRIu64 ": %s",
                        r->cont_off, why);
        if (rc == BLF_OBJ_NEED && avail >= BLF_OBJ_BASE_SIZE && size > OUT_CAP / 2) {
            r->skip = size;         /* too large to be a frame */
            continue;
        }
        rc = more(r);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            avail = r->out_len - r->out_pos;
            for (size_t i = 0; i < avail; i++)
                if (r->out[r->out_pos + i])
                    return fail(r, "the last object is truncated");
            return 0;
        }
    }
}

const char *blf_reader_error(const struct blf_reader *r)
{
    return r->failed ? r->err : NULL;
}

void blf_reader_close(struct blf_reader *r)
{
    if (!r)
        return;
    if (r->z_ready)
        inflateEnd(&r->z);
    if (r->fd >= 0)
        close(r->fd);
    free(r->in);
    free(r->out);
    free(r);
}
