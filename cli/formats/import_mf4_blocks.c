/* Reading an MF4 file (import_mf4.h): blocks, their links and texts, checked against the
 * file's size; and the data streams, chains of DT, SD, DZ (plain or transposed), DL and HL
 * blocks read front to back as one byte stream through a window or one unzipped block.
 * Errors: mf4_bad names the offset, the first one sticks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "import_mf4.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

int mf4_bad(struct mf4_reader *r, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (r->failed)
        return -1;
    r->failed = 1;
    n = snprintf(r->err, sizeof r->err, "%s: MF4: offset %" PRIu64 ": ", r->name, off);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof r->err)
        vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- reading the file ------------------------------------------------------------------ */

int mf4_rd(struct mf4_reader *r, uint64_t off, void *buf, size_t n)
{
    if (off > r->size || n > r->size - off)
        return mf4_bad(r, off, "%zu bytes past the end of the file (%" PRIu64 " bytes)", n,
                       r->size);
    if (n == 0)
        return 0;
    if (r->mem) {
        memcpy(buf, r->mem + off, n);
        return 0;
    }
    while (n) {
        ssize_t k = pread(r->fd, buf, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return mf4_bad(r, off, "read: %s", k < 0 ? strerror(errno) : "unexpected end");
        buf = (uint8_t *)buf + k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return 0;
}

int mf4_blk_read(struct mf4_reader *r, uint64_t off, const char *want, struct blk *b)
{
    uint8_t h[MF4_HDR_SIZE];

    if (off < MF4_ID_SIZE)
        return mf4_bad(r, off, "link into the ID block");
    if (mf4_rd(r, off, h, sizeof h))
        return -1;
    b->off = off;
    b->len = ld_le64(h + MF4_H_LENGTH);
    b->links = ld_le64(h + MF4_H_LINK_COUNT);
    b->id[0] = (char)h[2];
    b->id[1] = (char)h[3];
    b->id[2] = '\0';
    if (h[0] != '#' || h[1] != '#' || !strstr(want, b->id) || !b->id[0] || !b->id[1] ||
        b->id[0] == ' ' || b->id[1] == ' ')
        return mf4_bad(r, off, "expected a %s block, found \"%.4s\"", want,
                       (h[0] >= 0x20 && h[0] < 0x7F) ? (const char *)h : "????");
    if (b->len < MF4_HDR_SIZE || b->len > r->size - off)
        return mf4_bad(r, off, "%s block of %" PRIu64 " bytes runs past the end of the file",
                       b->id, b->len);
    if (b->links > (b->len - MF4_HDR_SIZE) / 8)
        return mf4_bad(r, off, "%s block: %" PRIu64 " links do not fit its %" PRIu64 " bytes",
                       b->id, b->links, b->len);
    return 0;
}

int mf4_link_at(struct mf4_reader *r, const struct blk *b, uint64_t i, uint64_t *v)
{
    uint8_t x[8];

    if (i >= b->links) {
        *v = 0;
        return 0;
    }
    if (mf4_rd(r, b->off + MF4_HDR_SIZE + 8 * i, x, 8))
        return -1;
    *v = ld_le64(x);
    return 0;
}

int mf4_blk_data(struct mf4_reader *r, const struct blk *b, uint8_t *d, size_t n)
{
    uint64_t at = MF4_HDR_SIZE + 8 * b->links, have = b->len - at;

    memset(d, 0, n);
    return mf4_rd(r, b->off + at, d, have < n ? (size_t)have : n);
}

int mf4_tx_read(struct mf4_reader *r, uint64_t off, char *s, size_t cap)
{
    struct blk b;
    uint64_t n;

    s[0] = '\0';
    if (!off)
        return 0;
    if (mf4_blk_read(r, off, "TX MD", &b))
        return -1;
    n = b.len - MF4_HDR_SIZE - 8 * b.links;
    if (n > cap - 1)
        n = cap - 1;
    if (mf4_rd(r, off + MF4_HDR_SIZE + 8 * b.links, s, (size_t)n))
        return -1;
    s[n] = '\0';
    return 0;
}

/* ---- data streams ----------------------------------------------------------------------- */

/* Make the block at off the stream's current one. */
static int stream_block(struct mf4_reader *r, struct stream *st, uint64_t off)
{
    struct blk b;
    uint8_t d[MF4_DZ_DATA];

    if (mf4_blk_read(r, off, "DT SD DZ RD DV", &b))
        return -1;
    st->visited += b.len;
    if (st->visited > r->size)
        return mf4_bad(r, off, "data blocks listed more than once (a link loop?)");
    /* All streams together produce at most 64 times the file's bytes (plus one largest
     * DZ block): a valid file reads each block once per stream, a DZ listed over and over
     * or VLSD offsets that keep going backwards (each rereads the signal data from its
     * start) would otherwise turn a small file into hours of inflating. */
    if (strcmp(b.id, "DZ") != 0)
        r->spent += b.len;        /* a DZ counts its unzipped bytes below */
    if (r->spent > 64 * r->size + DZ_MAX)
        return mf4_bad(r, off, "data read more than 64 times over (a link loop, or VLSD "
                       "offsets going backwards?)");
    st->blk_pos = 0;
    st->win_len = 0;
    st->win_at = 0;
    if (strcmp(b.id, "DZ") != 0) {
        /* plain bytes (DT, SD): read through the window as they are consumed */
        st->blk_off = off + MF4_HDR_SIZE + 8 * b.links;
        st->blk_len = b.len - MF4_HDR_SIZE - 8 * b.links;
        st->zipped = 0;
        st->started = 1;
        return 0;
    }
    {
        uint64_t org, zlen, rows, cols;
        uLongf got;
        if (b.len - MF4_HDR_SIZE - 8 * b.links < MF4_DZ_DATA)
            return mf4_bad(r, off, "DZ block shorter than its header");
        if (mf4_blk_data(r, &b, d, sizeof d))
            return -1;
        org = ld_le64(d + MF4_DZ_ORG_LEN);
        zlen = ld_le64(d + MF4_DZ_DATA_LEN);
        if (zlen > b.len - MF4_HDR_SIZE - 8 * b.links - MF4_DZ_DATA ||
            zlen > compressBound(DZ_MAX))
            return mf4_bad(r, off, "DZ block: %" PRIu64 " zipped bytes past the block's end", zlen);
        if (org > DZ_MAX)
            return mf4_bad(r, off, "DZ block unzips to %" PRIu64 " bytes, more than the %u MiB "
                           "this reader holds", org, DZ_MAX >> 20);
        if (d[MF4_DZ_ZIP_TYPE] > MF4_ZIP_TRANSPOSE)
            return mf4_bad(r, off, "DZ block: unknown zip type %u", d[MF4_DZ_ZIP_TYPE]);
        if (org > st->zcap) {
            uint8_t *n = realloc(st->z, (size_t)org);
            if (!n)
                return mf4_bad(r, off, "out of memory for a DZ block of %" PRIu64 " bytes", org);
            st->z = n;
            st->zcap = (size_t)org;
        }
        if (zlen > r->tmpcap || org > r->tmpcap) {
            size_t want = (size_t)(zlen > org ? zlen : org);
            uint8_t *n = realloc(r->tmp, want);
            if (!n)
                return mf4_bad(r, off, "out of memory for a DZ block of %" PRIu64 " bytes", zlen);
            r->tmp = n;
            r->tmpcap = want;
        }
        if (mf4_rd(r, off + MF4_HDR_SIZE + 8 * b.links + MF4_DZ_DATA, r->tmp, (size_t)zlen))
            return -1;
        r->spent += org;
        if (r->spent > 64 * r->size + DZ_MAX)
            return mf4_bad(r, off, "data read more than 64 times over (a link loop, or VLSD "
                           "offsets going backwards?)");
        got = (uLongf)org;
        if (uncompress(st->z, &got, r->tmp, (uLong)zlen) != Z_OK || got != org)
            return mf4_bad(r, off, "DZ block does not inflate to its %" PRIu64 " bytes", org);
        cols = ld_le32(d + MF4_DZ_ZIP_PARAM);
        if (d[MF4_DZ_ZIP_TYPE] == MF4_ZIP_TRANSPOSE && cols > 1 && cols <= org) {
            /* Undo the transposition: byte c * rows + r is byte c of record r. */
            rows = org / cols;
            memcpy(r->tmp, st->z, (size_t)(rows * cols));
            for (uint64_t c = 0; c < cols; c++)
                for (uint64_t i = 0; i < rows; i++)
                    st->z[i * cols + c] = r->tmp[c * rows + i];
        }
        st->blk_off = 0;
        st->blk_len = org;
        st->zipped = 1;
        st->started = 1;
    }
    return 0;
}

/* Move to the next data block; 1, 0 at the end of the stream, -1. */
static int stream_next_block(struct mf4_reader *r, struct stream *st)
{
    struct blk b;
    uint64_t off;

    for (;;) {
        if (!st->started) {
            struct blk rb;
            st->started = 1;
            if (!st->root) {
                st->done = 1;
                return 0;
            }
            if (mf4_blk_read(r, st->root, "DT SD DZ DL HL RD DV", &rb))
                return -1;
            if (strcmp(rb.id, "HL") == 0) {
                if (mf4_link_at(r, &rb, MF4_HL_L_DL_FIRST, &off))
                    return -1;
                if (!off) {
                    st->done = 1;
                    return 0;
                }
                if (mf4_blk_read(r, off, "DL", &rb))
                    return -1;
            }
            if (strcmp(rb.id, "DL") != 0) {
                st->dl = 0;
                st->dl_n = 0;
                if (stream_block(r, st, rb.off))
                    return -1;
                return 1;
            }
            st->dl = rb.off;
            st->dl_n = rb.links ? rb.links - 1 : 0;
            st->dl_i = 0;
            st->steps = 1;
        }
        if (!st->dl) {
            st->done = 1;
            return 0;
        }
        if (st->dl_i < st->dl_n) {
            if (mf4_blk_read(r, st->dl, "DL", &b) || mf4_link_at(r, &b, 1 + st->dl_i, &off))
                return -1;
            st->dl_i++;
            if (!off)
                continue;
            if (stream_block(r, st, off))
                return -1;
            return 1;
        }
        /* the next DL */
        if (mf4_blk_read(r, st->dl, "DL", &b) || mf4_link_at(r, &b, MF4_DL_L_NEXT, &off))
            return -1;
        if (!off) {
            st->done = 1;
            return 0;
        }
        if (++st->steps > MAX_CHAIN || st->steps > r->size / MF4_HDR_SIZE)
            return mf4_bad(r, off, "DL chain longer than %u blocks (a link loop?)", MAX_CHAIN);
        if (mf4_blk_read(r, off, "DL", &b))
            return -1;
        st->visited += b.len;
        if (st->visited > r->size)
            return mf4_bad(r, off, "DL chain lists blocks more than once (a link loop?)");
        st->dl = off;
        st->dl_n = b.links ? b.links - 1 : 0;
        st->dl_i = 0;
    }
}

int mf4_stream_read(struct mf4_reader *r, struct stream *st, uint8_t *dst, uint64_t n,
                    uint64_t at, const char *what)
{
    uint64_t got = 0;

    while (got < n) {
        uint64_t k;
        if (st->done)
            goto short_read;
        if (!st->started || st->blk_pos == st->blk_len) {
            int rc = stream_next_block(r, st);
            if (rc < 0)
                return -1;
            if (rc == 0)
                goto short_read;
            continue;
        }
        k = st->blk_len - st->blk_pos;
        if (k > n - got)
            k = n - got;
        if (st->zipped) {
            if (dst)
                memcpy(dst + got, st->z + st->blk_pos, (size_t)k);
        } else if (dst) {
            /* through the window */
            if (st->blk_pos < st->win_at || st->blk_pos >= st->win_at + st->win_len) {
                uint64_t left = st->blk_len - st->blk_pos;
                st->win_at = st->blk_pos;
                st->win_len = left < WIN ? (size_t)left : WIN;
                if (mf4_rd(r, st->blk_off + st->win_at, st->win, st->win_len))
                    return -1;
            }
            if (k > st->win_at + st->win_len - st->blk_pos)
                k = st->win_at + st->win_len - st->blk_pos;
            memcpy(dst + got, st->win + (st->blk_pos - st->win_at), (size_t)k);
        }
        st->blk_pos += k;
        st->pos += k;
        got += k;
    }
    return 1;
short_read:
    if (got == 0)
        return 0;
    return mf4_bad(r, at, "%s: the data ends %" PRIu64 " bytes into a %" PRIu64 "-byte %s",
                   what, got, n, what);
}

void mf4_stream_reset(struct stream *st, uint64_t root)
{
    st->root = root;
    st->dl = 0;
    st->started = 0;
    st->done = 0;
    st->pos = 0;
    st->visited = 0;
    st->blk_pos = st->blk_len = 0;
    st->win_len = 0;
}
