/* ASAM MDF 4 import (import.h; mf4_format.h has the layout): the CAN bus-logging
 * groups of an MF4 file, replayed in time order.
 *
 * Which groups: every channel group of every data group that has a channel named
 * CAN_DataFrame, CAN_RemoteFrame or CAN_ErrorFrame (a structure whose members are found
 * through cn_composition) or top-level channels named "CAN_DataFrame.ID" and so on; the
 * members are found by name (the part after the last '.'): BusChannel, ID, IDE, DLC,
 * DataLength, DataBytes, EDL, BRS, ESI, wherever the file puts them, of any integer width
 * and bit offset. DataBytes is a fixed byte array in the record or VLSD (the record holds
 * the offset of a u32 length + bytes entry in the channel's signal data: SD, DZ, DL or HL).
 * The master is the group's time channel (float, or an integer with a linear conversion).
 * Groups of other buses, and other channel groups of an unsorted data group, are skipped.
 *
 * Data: DT, DZ (deflate, plain or transposed), DL chains and HL, sorted data groups and
 * unsorted ones (record ids of 1, 2, 4 or 8 bytes; VLSD channel groups' records skipped).
 *
 * Frames: the id is ID without bit 31; extended when bit 31 or IDE is set (Vector's tools
 * read only bit 31). CAN FD when EDL is set, BRS and ESI from their members. The length is
 * DataLength, else the DLC's. Remote frames: RTR, the DLC as the length. Error frames: the
 * error class is the ID when it is not 0 (streamfat's export writes the class there), else
 * CAN_ERR_BUSERROR, with DataBytes (at most 8) as the error data. Time: the HD start time
 * (UTC ns; local time when the file says so, read in the host's zone as asammdf does) plus
 * the master's seconds. Channels: BusChannel (counted from 1 as in the file).
 *
 * Memory is fixed at open: at most MAX_SRC data groups are read side by side, each with one
 * window of DT bytes or one unzipped DZ block (at most DZ_MAX bytes) and a record buffer;
 * VLSD signal data the same. Links are followed with bounded counts (a loop ends in an
 * error naming the offset), every length is checked against the file's size.
 *
 * This file opens the file and turns records into frames in time order; the structure
 * (groups, channels, members) is import_mf4_groups.c, the blocks and data streams
 * import_mf4_blocks.c, what they share import_mf4.h. */
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

/* ---- frames ------------------------------------------------------------------------------- */

static int fd_len_ok(unsigned len)
{
    return len <= 8 || len == 12 || len == 16 || len == 20 || len == 24 || len == 32 ||
           len == 48 || len == 64;
}

static const uint8_t dlc_len[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64 };

/* Record `rec` of group g (the record's file position for messages: the stream offset). */
static int make_frame(struct mf4_reader *r, struct src *s, const struct cgroup *g,
                      const uint8_t *rec, struct imp_frame *fr)
{
    struct src_can_frame *f = &fr->f;
    uint64_t id, v;
    double t;
    unsigned len;
    int fd;
    uint32_t tx = 0;

    memset(fr, 0, sizeof *fr);
    if (g->t.dtype == MF4_DT_FLOAT_LE) {
        if (g->t.bits == 64) {
            uint64_t bits = ld_le64(rec + g->t.byte_off);
            memcpy(&t, &bits, 8);
        } else {
            uint32_t bits = ld_le32(rec + g->t.byte_off);
            float x;
            memcpy(&x, &bits, 4);
            t = x;
        }
    } else {
        v = mf4_get_bits(rec, &g->t);
        if ((g->t.dtype == MF4_DT_INT_LE || g->t.dtype == MF4_DT_INT_BE) && g->t.bits < 64 &&
            (v >> (g->t.bits - 1)) & 1)
            v |= ~0ull << g->t.bits;
        t = (g->t.dtype >= MF4_DT_INT_LE) ? (double)(int64_t)v : (double)v;
    }
    t = g->ta + g->tb * t;
    if (!(t > -1e9 && t < 1e9))    /* NaN too; 31 years either way */
        return mf4_bad(r, s->dg, "record %" PRIu64 ": time %g s is not a time", s->nrec, t);
    f->ts = r->start_ns + (uint64_t)llround(t * 1e9);
    id = mf4_get_bits(rec, &g->f[F_ID]);
    f->id = (uint32_t)(id & 0x1FFFFFFFu);
    if ((id & MF4_ID_EXT) || (g->f[F_IDE].present && mf4_get_bits(rec, &g->f[F_IDE])) ||
        f->id > 0x7FF)
        f->flags |= SF_CAN_EFF;
    fr->channel = g->f[F_BUS].present ? (unsigned)mf4_get_bits(rec, &g->f[F_BUS]) : 1;
    if (fr->channel > 255)
        return mf4_bad(r, s->dg, "record %" PRIu64 ": bus channel %u", s->nrec, fr->channel);
    fd = g->f[F_EDL].present && mf4_get_bits(rec, &g->f[F_EDL]);
    if (g->f[F_DLEN].present)
        len = (unsigned)mf4_get_bits(rec, &g->f[F_DLEN]);
    else if (g->f[F_DLC].present)
        len = fd ? dlc_len[mf4_get_bits(rec, &g->f[F_DLC]) & 15] :
                   (unsigned)(mf4_get_bits(rec, &g->f[F_DLC]) > 8 ? 8 :
                              mf4_get_bits(rec, &g->f[F_DLC]));
    else
        len = 0;
    if (g->f[F_DIR].present && mf4_get_bits(rec, &g->f[F_DIR]))
        tx = SF_CAN_TX;             /* Dir 1: transmitted (docs/FORMAT.md bit 6) */
    if (g->kind == K_REMOTE) {
        uint64_t dlc = g->f[F_DLC].present ? mf4_get_bits(rec, &g->f[F_DLC]) : 0;
        f->flags |= SF_CAN_RTR | tx;
        f->len = (uint8_t)(dlc > 8 ? 8 : dlc);
        return 0;
    }
    if (g->kind == K_ERROR) {
        f->id = f->id ? f->id : IMP_ERR_CLASS;
        /* The class in the id, with EFF exactly when it is above 0x7FF: one id rule for
         * every frame (docs/FORMAT.md, CAN record). */
        f->flags = f->id > 0x7FFu ? SF_CAN_ERR | SF_CAN_EFF : SF_CAN_ERR;
        f->len = 8;
        len = len > 8 ? 8 : len;
    } else {
        if (fd) {
            f->flags |= SF_CAN_FD;
            if (g->f[F_BRS].present && mf4_get_bits(rec, &g->f[F_BRS]))
                f->flags |= SF_CAN_BRS;
            if (g->f[F_ESI].present && mf4_get_bits(rec, &g->f[F_ESI]))
                f->flags |= SF_CAN_ESI;
        }
        if (fd ? !fd_len_ok(len) : len > 8)
            return mf4_bad(r, s->dg, "record %" PRIu64 ": data length %u is not a CAN%s length",
                           s->nrec, len, fd ? " FD" : "");
        f->len = (uint8_t)len;
        f->flags |= tx;
    }
    if (!len || !g->f[F_BYTES].present)
        return 0;
    if (g->f[F_BYTES].vlsd) {
        uint64_t off = mf4_get_bits(rec, &g->f[F_BYTES]);
        uint8_t l4[4], buf[64];
        uint32_t n;
        if (off < s->sd.pos)
            mf4_stream_reset(&s->sd, s->sd_root);        /* backwards: from the start again */
        if (mf4_stream_read(r, &s->sd, NULL, off - s->sd.pos, s->dg, "signal data") != 1 ||
            mf4_stream_read(r, &s->sd, l4, 4, s->dg, "signal data") != 1)
            return mf4_bad(r, s->dg, "record %" PRIu64 ": VLSD offset %" PRIu64
                           " past the signal data", s->nrec, off);
        n = ld_le32(l4);
        if (n > sizeof buf)
            return mf4_bad(r, s->dg, "record %" PRIu64 ": %u data bytes", s->nrec, n);
        if (mf4_stream_read(r, &s->sd, buf, n, s->dg, "signal data") != 1 && n)
            return mf4_bad(r, s->dg, "record %" PRIu64 ": signal data truncated", s->nrec);
        /* An entry shorter than DataLength: the rest is zeros (asammdf writes numpy bytes
         * strings, which drop trailing zeros). */
        memcpy(f->data, buf, n < len ? n : len);
    } else {
        if (g->f[F_BYTES].bits / 8 < len)
            return mf4_bad(r, s->dg, "record %" PRIu64 ": length %u, DataBytes holds %u",
                           s->nrec, len, g->f[F_BYTES].bits / 8);
        memcpy(f->data, rec + g->f[F_BYTES].byte_off, len);
    }
    return 0;
}

/* The next frame of data group s into s->fr; 1, 0 at its end, -1. */
static int src_next(struct mf4_reader *r, struct src *s)
{
    for (;;) {
        const struct cgroup *g = NULL;
        uint64_t at = s->data.pos;
        int rc;

        if (s->rec_id_size) {
            uint8_t idb[8];
            uint64_t rid = 0;
            rc = mf4_stream_read(r, &s->data, idb, s->rec_id_size, s->dg, "record id");
            if (rc <= 0)
                return rc;
            for (unsigned i = s->rec_id_size; i-- > 0;)
                rid = rid << 8 | idb[i];
            for (unsigned i = 0; i < s->ncg && !g; i++)
                if (s->cg[i].rec_id == rid)
                    g = &s->cg[i];
            if (!g)
                return mf4_bad(r, s->dg, "data byte %" PRIu64 ": unknown record id %" PRIu64, at,
                               rid);
            if (g->vlsd_cg) {
                uint8_t l4[4];
                if (mf4_stream_read(r, &s->data, l4, 4, s->dg, "VLSD record") != 1 ||
                    mf4_stream_read(r, &s->data, NULL, ld_le32(l4), s->dg, "VLSD record") != 1)
                    return mf4_bad(r, s->dg, "data byte %" PRIu64 ": VLSD record truncated", at);
                continue;
            }
            rc = mf4_stream_read(r, &s->data, s->rec, g->size, s->dg, "record");
            if (rc <= 0)
                return rc < 0 ? -1 : mf4_bad(r, s->dg, "data byte %" PRIu64 ": record truncated",
                                             at);
        } else {
            g = &s->cg[0];
            if (!s->ncg || g->vlsd_cg)
                return 0;
            rc = mf4_stream_read(r, &s->data, s->rec, g->size, s->dg, "record");
            if (rc <= 0)
                return rc;
        }
        s->nrec++;
        if (!g->can)
            continue;
        if (make_frame(r, s, g, s->rec, &s->fr))
            return -1;
        return 1;
    }
}

/* ---- the reader ---------------------------------------------------------------------------- */

static struct mf4_reader *open_common(struct mf4_reader *r, char *err, size_t errlen)
{
    uint8_t id[MF4_ID_SIZE], hd[MF4_HD_DATA];
    struct blk h;
    uint64_t dg;
    unsigned budget, ndg = 0;

    /* CN and CG blocks visited: each is at least 24 bytes, so a valid file has fewer
     * than size / 24 of them (more means a loop). */
    budget = r->size / MF4_HDR_SIZE + 16 > MAX_CHAIN * 4 ? MAX_CHAIN * 4 :
             (unsigned)(r->size / MF4_HDR_SIZE + 16);
    if (mf4_rd(r, 0, id, sizeof id))
        goto fail;
    if ((memcmp(id, MF4_ID_FILE_FINAL, 8) && memcmp(id, MF4_ID_FILE_UNFIN, 8)) ||
        id[MF4_ID_VERS] != '4') {
        mf4_bad(r, 0, "not an MDF 4 file (\"%.8s\" \"%.4s\")", "????????", "????");
        snprintf(r->err, sizeof r->err, "%s: MF4: offset 0: not an MDF 4 file", r->name);
        goto fail;
    }
    if (ld_le16(id + MF4_ID_UNFIN_FLAGS)) {
        mf4_bad(r, MF4_ID_UNFIN_FLAGS, "unfinalized file (flags 0x%04x): finalize it first "
                "(asammdf does on opening)", ld_le16(id + MF4_ID_UNFIN_FLAGS));
        goto fail;
    }
    if (mf4_blk_read(r, MF4_HD_OFFSET, "HD", &h) || mf4_blk_data(r, &h, hd, sizeof hd) ||
        mf4_link_at(r, &h, MF4_HD_L_DG_FIRST, &dg))
        goto fail;
    /* The file history and the comment are not used, but a file cut short (a writer that
     * puts them last, as streamfat's does) shows there first. */
    for (unsigned i = 0; i < 2; i++) {
        struct blk x;
        uint64_t l;
        if (mf4_link_at(r, &h, i ? MF4_HD_L_MD_COMMENT : MF4_HD_L_FH_FIRST, &l) ||
            (l && mf4_blk_read(r, l, i ? "MD TX" : "FH", &x)))
            goto fail;
    }
    r->start_ns = ld_le64(hd + MF4_HD_START_NS);
    if ((hd[MF4_HD_TIME_FLAGS] & MF4_TIME_LOCAL) && !(hd[MF4_HD_TIME_FLAGS] &
                                                     MF4_TIME_OFFSETS_VALID)) {
        /* Local time without offsets: the host's zone, as asammdf's naive datetime. */
        time_t s = (time_t)(r->start_ns / 1000000000u);
        struct tm tm;
        uint64_t t;
        if (gmtime_r(&s, &tm) &&
            !imp_local_time(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                            tm.tm_min, tm.tm_sec, (uint32_t)(r->start_ns % 1000000000u), &t))
            r->start_ns = t;
    }
    while (dg) {
        struct blk b;
        uint64_t next;
        if (++ndg > MAX_CHAIN || ndg > r->size / MF4_HDR_SIZE) {
            mf4_bad(r, dg, "more than %u data groups (a link loop?)", ndg - 1);
            goto fail;
        }
        if (mf4_scan_dg(r, dg, &budget) || mf4_blk_read(r, dg, "DG", &b) ||
            mf4_link_at(r, &b, MF4_DG_L_NEXT, &next))
            goto fail;
        dg = next;
    }
    return r;
fail:
    snprintf(err, errlen, "%s", r->err);
    mf4_reader_close(r);
    return NULL;
}

struct mf4_reader *mf4_reader_open(int fd, const char *name, char *err, size_t errlen)
{
    struct mf4_reader *r = calloc(1, sizeof *r);
    struct stat st;

    if (!r) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->name = name;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: MF4 is read from a regular file", name);
        mf4_reader_close(r);
        return NULL;
    }
    r->size = (uint64_t)st.st_size;
    return open_common(r, err, errlen);
}

struct mf4_reader *mf4_reader_open_mem(const uint8_t *p, size_t n, char *err, size_t errlen)
{
    struct mf4_reader *r = calloc(1, sizeof *r);

    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->fd = -1;
    r->mem = p;
    r->size = n;
    r->name = "input";
    return open_common(r, err, errlen);
}

int mf4_reader_next(struct mf4_reader *r, struct imp_frame *fr)
{
    struct src *best = NULL;

    if (r->failed)
        return -1;
    for (unsigned i = 0; i < r->nsrc; i++) {
        struct src *s = r->src[i];
        if (!s->have && !s->done) {
            int rc = src_next(r, s);
            if (rc < 0)
                return -1;
            if (rc == 0)
                s->done = 1;
            else
                s->have = 1;
        }
        if (s->have && (!best || s->fr.f.ts < best->fr.f.ts))
            best = s;
    }
    if (!best)
        return 0;
    *fr = best->fr;
    best->have = 0;
    return 1;
}

const char *mf4_reader_error(const struct mf4_reader *r)
{
    return r->failed ? r->err : NULL;
}

void mf4_reader_close(struct mf4_reader *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->nsrc; i++) {
        struct src *s = r->src[i];
        free(s->rec);
        free(s->data.win);
        free(s->data.z);
        free(s->sd.win);
        free(s->sd.z);
        free(s);
    }
    if (r->fd >= 0)
        close(r->fd);
    free(r->tmp);
    free(r);
}
