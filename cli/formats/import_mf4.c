/* ASAM MDF 4 import (import.h; cli/mf4_format.h has the layout): the CAN bus-logging
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
 * error naming the offset), every length is checked against the file's size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "import.h"
#include "mf4_format.h"
#include "streamfat/rec.h"

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

#define MAX_SRC 16u                /* CAN data groups read side by side */
#define MAX_CG 64u                 /* channel groups in one data group */
#define MAX_CHAIN 65536u           /* blocks in one linked list (DG, CG, CN, DL chain) */
#define DZ_MAX (32u << 20)         /* bytes of one unzipped DZ block */
#define WIN 65536u                 /* window over DT/SD bytes */
#define CHNAME_MAX 64u             /* a bus channel's name from the SI comment */
#define SI_MD_MAX 16384u           /* the SI comment read for the names */
#define REC_MAX 65536u             /* bytes of one record */
#define NAME_MAX_ 128u

enum { F_BUS, F_ID, F_IDE, F_DLC, F_DLEN, F_BYTES, F_EDL, F_BRS, F_ESI, F_N };
static const char *const field_names[F_N] = {
    "BusChannel", "ID", "IDE", "DLC", "DataLength", "DataBytes", "EDL", "BRS", "ESI",
};
enum { K_DATA, K_REMOTE, K_ERROR };

struct field {
    int present;
    uint32_t byte_off, bit_off, bits;
    uint8_t dtype;
    int vlsd;
    uint64_t sd_root;              /* VLSD: the signal data */
};

/* A chain of data blocks read front to back as one byte stream. */
struct stream {
    uint64_t root;
    uint64_t dl;                   /* the DL block being walked (0: root is one block) */
    uint64_t dl_n, dl_i;           /* its data links, the next one */
    unsigned steps;                /* DL blocks visited (loop guard) */
    uint64_t visited;              /* file bytes of the blocks visited: more than the file
                                      holds means a block is listed twice (a loop) */
    int started, done;
    /* the current block */
    uint64_t blk_off;              /* DT/SD: file offset of the bytes; DZ: 0 */
    uint64_t blk_len, blk_pos;
    int zipped;                    /* the current block is a DZ (its bytes are in z) */
    uint8_t *z;                    /* DZ: the unzipped block */
    size_t zcap;
    uint8_t *win;                  /* DT/SD: a window of the bytes */
    uint64_t win_at;               /* block position of win[0] */
    size_t win_len;
    uint64_t pos;                  /* stream position (bytes delivered) */
};

struct cgroup {
    uint64_t rec_id;
    uint32_t size;                 /* data + invalidation bytes */
    int vlsd_cg;                   /* a VLSD channel group: u32 length + bytes */
    int can;                       /* a CAN bus-logging group of kind `kind` */
    int kind;
    struct field t;                /* master */
    double ta, tb;                 /* t = ta + tb * raw (integer masters) */
    struct field f[F_N];
};

struct src {
    uint64_t dg;                   /* offset of the DG (for messages) */
    unsigned rec_id_size;
    struct cgroup cg[MAX_CG];
    unsigned ncg;
    struct stream data, sd;
    uint64_t sd_root;              /* the VLSD stream's root (one per data group) */
    uint8_t *rec;
    uint64_t nrec;                 /* records read */
    int have;                      /* fr holds the next frame */
    struct imp_frame fr;
    int done;
};

struct mf4_reader {
    int fd;
    const uint8_t *mem;            /* the fuzzer's input instead of fd */
    uint64_t size;
    const char *name;
    char err[512];
    int failed;
    uint64_t start_ns;
    struct src *src[MAX_SRC];
    unsigned nsrc;
    uint64_t spent;                /* data bytes produced by all streams (DZ: unzipped) */
    uint8_t *tmp;                  /* zipped bytes / transposition */
    size_t tmpcap;
    int si_read;                   /* the first CAN group's SI comment was looked at */
    char chname[256][CHNAME_MAX];  /* "BusChannel N" names of that comment ("" none) */
};

static int bad(struct mf4_reader *r, uint64_t off, const char *fmt, ...)
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

static int rd(struct mf4_reader *r, uint64_t off, void *buf, size_t n)
{
    if (off > r->size || n > r->size - off)
        return bad(r, off, "%zu bytes past the end of the file (%" PRIu64 " bytes)", n,
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
            return bad(r, off, "read: %s", k < 0 ? strerror(errno) : "unexpected end");
        buf = (uint8_t *)buf + k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return 0;
}

struct blk {
    uint64_t off, len, links;
    char id[3];                    /* "DT", "CN", ... */
};

/* The header of the block at off; `want` lists the acceptable ids ("DT DZ DL HL"). */
static int blk_read(struct mf4_reader *r, uint64_t off, const char *want, struct blk *b)
{
    uint8_t h[MF4_HDR_SIZE];

    if (off < MF4_ID_SIZE)
        return bad(r, off, "link into the ID block");
    if (rd(r, off, h, sizeof h))
        return -1;
    b->off = off;
    b->len = ld_le64(h + MF4_H_LENGTH);
    b->links = ld_le64(h + MF4_H_LINK_COUNT);
    b->id[0] = (char)h[2];
    b->id[1] = (char)h[3];
    b->id[2] = '\0';
    if (h[0] != '#' || h[1] != '#' || !strstr(want, b->id) || !b->id[0] || !b->id[1] ||
        b->id[0] == ' ' || b->id[1] == ' ')
        return bad(r, off, "expected a %s block, found \"%.4s\"", want,
                   (h[0] >= 0x20 && h[0] < 0x7F) ? (const char *)h : "????");
    if (b->len < MF4_HDR_SIZE || b->len > r->size - off)
        return bad(r, off, "%s block of %" PRIu64 " bytes runs past the end of the file",
                   b->id, b->len);
    if (b->links > (b->len - MF4_HDR_SIZE) / 8)
        return bad(r, off, "%s block: %" PRIu64 " links do not fit its %" PRIu64 " bytes",
                   b->id, b->links, b->len);
    return 0;
}

static int link_at(struct mf4_reader *r, const struct blk *b, uint64_t i, uint64_t *v)
{
    uint8_t x[8];

    if (i >= b->links) {
        *v = 0;
        return 0;
    }
    if (rd(r, b->off + MF4_HDR_SIZE + 8 * i, x, 8))
        return -1;
    *v = ld_le64(x);
    return 0;
}

/* The block's data fields (n bytes wanted; missing ones read as zeros). */
static int blk_data(struct mf4_reader *r, const struct blk *b, uint8_t *d, size_t n)
{
    uint64_t at = MF4_HDR_SIZE + 8 * b->links, have = b->len - at;

    memset(d, 0, n);
    return rd(r, b->off + at, d, have < n ? (size_t)have : n);
}

/* A TX block's text (a link of 0: ""). */
static int tx_read(struct mf4_reader *r, uint64_t off, char *s, size_t cap)
{
    struct blk b;
    uint64_t n;

    s[0] = '\0';
    if (!off)
        return 0;
    if (blk_read(r, off, "TX MD", &b))
        return -1;
    n = b.len - MF4_HDR_SIZE - 8 * b.links;
    if (n > cap - 1)
        n = cap - 1;
    if (rd(r, off + MF4_HDR_SIZE + 8 * b.links, s, (size_t)n))
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

    if (blk_read(r, off, "DT SD DZ RD DV", &b))
        return -1;
    st->visited += b.len;
    if (st->visited > r->size)
        return bad(r, off, "data blocks listed more than once (a link loop?)");
    /* All streams together produce at most 64 times the file's bytes (plus one largest
     * DZ block): a valid file reads each block once per stream, a DZ listed over and over
     * or VLSD offsets that keep going backwards (each rereads the signal data from its
     * start) would otherwise turn a small file into hours of inflating. */
    if (strcmp(b.id, "DZ") != 0)
        r->spent += b.len;        /* a DZ counts its unzipped bytes below */
    if (r->spent > 64 * r->size + DZ_MAX)
        return bad(r, off, "data read more than 64 times over (a link loop, or VLSD "
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
            return bad(r, off, "DZ block shorter than its header");
        if (blk_data(r, &b, d, sizeof d))
            return -1;
        org = ld_le64(d + MF4_DZ_ORG_LEN);
        zlen = ld_le64(d + MF4_DZ_DATA_LEN);
        if (zlen > b.len - MF4_HDR_SIZE - 8 * b.links - MF4_DZ_DATA ||
            zlen > compressBound(DZ_MAX))
            return bad(r, off, "DZ block: %" PRIu64 " zipped bytes past the block's end", zlen);
        if (org > DZ_MAX)
            return bad(r, off, "DZ block unzips to %" PRIu64 " bytes, more than the %u MiB "
                       "this reader holds", org, DZ_MAX >> 20);
        if (d[MF4_DZ_ZIP_TYPE] > MF4_ZIP_TRANSPOSE)
            return bad(r, off, "DZ block: unknown zip type %u", d[MF4_DZ_ZIP_TYPE]);
        if (org > st->zcap) {
            uint8_t *n = realloc(st->z, (size_t)org);
            if (!n)
                return bad(r, off, "out of memory for a DZ block of %" PRIu64 " bytes", org);
            st->z = n;
            st->zcap = (size_t)org;
        }
        if (zlen > r->tmpcap || org > r->tmpcap) {
            size_t want = (size_t)(zlen > org ? zlen : org);
            uint8_t *n = realloc(r->tmp, want);
            if (!n)
                return bad(r, off, "out of memory for a DZ block of %" PRIu64 " bytes", zlen);
            r->tmp = n;
            r->tmpcap = want;
        }
        if (rd(r, off + MF4_HDR_SIZE + 8 * b.links + MF4_DZ_DATA, r->tmp, (size_t)zlen))
            return -1;
        r->spent += org;
        if (r->spent > 64 * r->size + DZ_MAX)
            return bad(r, off, "data read more than 64 times over (a link loop, or VLSD "
                       "offsets going backwards?)");
        got = (uLongf)org;
        if (uncompress(st->z, &got, r->tmp, (uLong)zlen) != Z_OK || got != org)
            return bad(r, off, "DZ block does not inflate to its %" PRIu64 " bytes", org);
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
            if (blk_read(r, st->root, "DT SD DZ DL HL RD DV", &rb))
                return -1;
            if (strcmp(rb.id, "HL") == 0) {
                if (link_at(r, &rb, MF4_HL_L_DL_FIRST, &off))
                    return -1;
                if (!off) {
                    st->done = 1;
                    return 0;
                }
                if (blk_read(r, off, "DL", &rb))
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
            if (blk_read(r, st->dl, "DL", &b) || link_at(r, &b, 1 + st->dl_i, &off))
                return -1;
            st->dl_i++;
            if (!off)
                continue;
            if (stream_block(r, st, off))
                return -1;
            return 1;
        }
        /* the next DL */
        if (blk_read(r, st->dl, "DL", &b) || link_at(r, &b, MF4_DL_L_NEXT, &off))
            return -1;
        if (!off) {
            st->done = 1;
            return 0;
        }
        if (++st->steps > MAX_CHAIN || st->steps > r->size / MF4_HDR_SIZE)
            return bad(r, off, "DL chain longer than %u blocks (a link loop?)", MAX_CHAIN);
        if (blk_read(r, off, "DL", &b))
            return -1;
        st->visited += b.len;
        if (st->visited > r->size)
            return bad(r, off, "DL chain lists blocks more than once (a link loop?)");
        st->dl = off;
        st->dl_n = b.links ? b.links - 1 : 0;
        st->dl_i = 0;
    }
}

/* n bytes of the stream into dst (dst NULL: skip them); 1, 0 at a clean end (no byte
 * read), -1 (an end inside the n bytes is an error naming `what`). */
static int stream_read(struct mf4_reader *r, struct stream *st, uint8_t *dst, uint64_t n,
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
                if (rd(r, st->blk_off + st->win_at, st->win, st->win_len))
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
    return bad(r, at, "%s: the data ends %" PRIu64 " bytes into a %" PRIu64 "-byte %s",
               what, got, n, what);
}

static void stream_reset(struct stream *st, uint64_t root)
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

/* ---- the file's structure --------------------------------------------------------------- */

static uint64_t get_bits(const uint8_t *rec, const struct field *f)
{
    uint64_t v = 0;
    unsigned nbytes = (f->bit_off + f->bits + 7) / 8;

    if (f->dtype == MF4_DT_UINT_BE || f->dtype == MF4_DT_INT_BE) {
        for (unsigned i = 0; i < nbytes; i++)
            v = v << 8 | rec[f->byte_off + i];
        v >>= (nbytes * 8 - f->bit_off - f->bits);
    } else {
        for (unsigned i = nbytes; i-- > 0;)
            v = v << 8 | rec[f->byte_off + i];
        v >>= f->bit_off;
    }
    if (f->bits < 64)
        v &= (1ull << f->bits) - 1;
    return v;
}

static int conversion(struct mf4_reader *r, uint64_t off, double *a, double *b)
{
    struct blk cb;
    uint8_t d[24 + 16];
    double v[2];

    *a = 0;
    *b = 1;
    if (!off)
        return 0;
    if (blk_read(r, off, "CC", &cb) || blk_data(r, &cb, d, sizeof d))
        return -1;
    if (d[0] == 0)
        return 0;
    if (d[0] != 1)
        return bad(r, off, "time channel conversion of type %u (only none and linear are "
                   "read)", d[0]);
    for (int i = 0; i < 2; i++) {
        uint64_t bits = ld_le64(d + 24 + 8 * i);
        memcpy(&v[i], &bits, 8);
    }
    *a = v[0];
    *b = v[1];
    return 0;
}

/* Fill field f from the CN block b (its data read into d). */
static int take_field(struct mf4_reader *r, const struct blk *b, const uint8_t *d,
                      uint32_t rec_size, struct field *f)
{
    f->present = 1;
    f->byte_off = ld_le32(d + MF4_CN_BYTE_OFFSET);
    f->bit_off = d[MF4_CN_BIT_OFFSET] & 7u;
    f->bits = ld_le32(d + MF4_CN_BIT_COUNT);
    f->dtype = d[MF4_CN_DATA_TYPE];
    f->vlsd = d[MF4_CN_TYPE] == MF4_CNT_VLSD;
    if (f->vlsd) {
        if (link_at(r, b, MF4_CN_L_DATA, &f->sd_root))
            return -1;
        f->bits = 64;
        f->bit_off = 0;
        f->dtype = MF4_DT_UINT_LE;
    }
    if (f->dtype == MF4_DT_BYTES) {
        if (f->bits % 8 || f->bit_off)
            return bad(r, b->off, "byte array channel of %u bits", f->bits);
    } else if (f->bits == 0 || f->bits > 64) {
        return bad(r, b->off, "integer channel of %u bits", f->bits);
    } else if (f->dtype > MF4_DT_FLOAT_BE) {
        return bad(r, b->off, "channel of data type %u where an integer belongs", f->dtype);
    }
    if ((uint64_t)f->byte_off + ((uint64_t)f->bit_off + f->bits + 7) / 8 > rec_size)
        return bad(r, b->off, "channel of %u bits at byte %u runs past the %u-byte record",
                   f->bits, f->byte_off, rec_size);
    return 0;
}

static int kind_of(const char *name, size_t n)
{
    if (n == 13 && memcmp(name, "CAN_DataFrame", 13) == 0)
        return K_DATA;
    if (n == 15 && memcmp(name, "CAN_RemoteFrame", 15) == 0)
        return K_REMOTE;
    if (n == 14 && memcmp(name, "CAN_ErrorFrame", 14) == 0)
        return K_ERROR;
    return -1;
}

/* Walk a CN list (a group's or a structure's members): the master, the frame structure,
 * its members. depth 0: the group's own channels. */
static int scan_channels(struct mf4_reader *r, struct cgroup *g, uint64_t cn, int depth,
                         int in_kind, unsigned *budget)
{
    while (cn) {
        struct blk b;
        uint8_t d[MF4_CN_DATA];
        char name[NAME_MAX_];
        uint64_t tx, comp, next;
        const char *dot;
        int k;

        if (!(*budget)--)
            return bad(r, cn, "too many channels (a link loop?)");
        if (blk_read(r, cn, "CN", &b) || blk_data(r, &b, d, sizeof d) ||
            link_at(r, &b, MF4_CN_L_TX_NAME, &tx) ||
            link_at(r, &b, MF4_CN_L_COMPOSITION, &comp) ||
            link_at(r, &b, MF4_CN_L_NEXT, &next) || tx_read(r, tx, name, sizeof name))
            return -1;
        if (depth == 0 && (d[MF4_CN_TYPE] == MF4_CNT_MASTER ||
                           d[MF4_CN_TYPE] == MF4_CNT_VIRT_MASTER) &&
            d[MF4_CN_SYNC_TYPE] == MF4_SYNC_TIME && !g->t.present) {
            uint64_t cc;
            if (d[MF4_CN_TYPE] == MF4_CNT_VIRT_MASTER)
                return bad(r, cn, "virtual time master (no time values in the records)");
            if (take_field(r, &b, d, g->size, &g->t) || link_at(r, &b, MF4_CN_L_CC, &cc) ||
                conversion(r, cc, &g->ta, &g->tb))
                return -1;
            if (g->t.dtype == MF4_DT_FLOAT_LE ? (g->t.bits != 32 && g->t.bits != 64) :
                g->t.dtype > MF4_DT_INT_BE || g->t.vlsd)
                return bad(r, cn, "time channel of data type %u, %u bits", g->t.dtype,
                           g->t.bits);
        } else {
            dot = strrchr(name, '.');
            k = kind_of(name, dot ? (size_t)(dot - name) : strlen(name));
            if (k >= 0 && !dot && comp && depth == 0) {
                g->can = 1;
                g->kind = k;
                if (scan_channels(r, g, comp, 1, k, budget))
                    return -1;
            } else if ((dot && k >= 0) || (depth == 1 && in_kind >= 0)) {
                const char *m = dot ? dot + 1 : name;
                if (k >= 0) {
                    g->can = 1;
                    g->kind = k;
                }
                for (int i = 0; i < F_N; i++)
                    if (strcmp(m, field_names[i]) == 0 && !g->f[i].present &&
                        take_field(r, &b, d, g->size, &g->f[i]))
                        return -1;
            }
        }
        cn = next;
    }
    return 0;
}

/* The names of the bus channels from an SI comment: each
 * <e name="BusChannel N">NAME</e> of its common_properties (as streamfat's export writes
 * it) names channel N (1..255); XML's five entities are decoded, a name with anything
 * else outside printable ASCII, empty or too long is ignored (the channel keeps can<N-1>). */
static void si_names(struct mf4_reader *r, const char *md)
{
    static const char key[] = "<e name=\"BusChannel ";
    const char *p = md;

    while ((p = strstr(p, key)) != NULL) {
        char *end, nm[CHNAME_MAX];
        unsigned long ch;
        size_t n = 0;
        int ok = 1;
        p += sizeof key - 1;
        if (*p < '0' || *p > '9')
            continue;
        ch = strtoul(p, &end, 10);
        if (end[0] != '"' || end[1] != '>' || ch < 1 || ch > 255)
            continue;
        p = end + 2;
        while (*p && *p != '<') {
            static const struct { const char *ent; char c; } ents[] = {
                { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
                { "&apos;", '\'' },
            };
            char c = *p;
            size_t adv = 1;
            if (c == '&') {
                ok = 0;
                for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++)
                    if (!strncmp(p, ents[i].ent, strlen(ents[i].ent))) {
                        c = ents[i].c;
                        adv = strlen(ents[i].ent);
                        ok = 1;
                        break;
                    }
            }
            if (!ok || (unsigned char)c < 0x21 || (unsigned char)c > 0x7e ||
                n == CHNAME_MAX - 1) {
                ok = 0;
                break;
            }
            nm[n++] = c;
            p += adv;
        }
        if (!ok || !n || strncmp(p, "</e>", 4))
            continue;
        nm[n] = '\0';
        memcpy(r->chname[ch], nm, n + 1);
    }
}

/* The bus channel names of the first CAN group's acquisition source, if it has a comment. */
static int read_si_names(struct mf4_reader *r, const struct blk *cb)
{
    struct blk sb;
    uint64_t si, md;
    char *buf;

    r->si_read = 1;
    if (link_at(r, cb, MF4_CG_L_SI_ACQ_SOURCE, &si))
        return -1;
    if (!si)
        return 0;
    if (blk_read(r, si, "SI", &sb) || link_at(r, &sb, MF4_SI_L_MD_COMMENT, &md))
        return -1;
    if (!md)
        return 0;
    if (!(buf = malloc(SI_MD_MAX)))
        return bad(r, si, "out of memory");
    if (tx_read(r, md, buf, SI_MD_MAX)) {
        free(buf);
        return -1;
    }
    si_names(r, buf);
    free(buf);
    return 0;
}

const char *mf4_reader_channel_name(const struct mf4_reader *r, unsigned channel)
{
    return channel < 256 && r->chname[channel][0] ? r->chname[channel] : NULL;
}

static int scan_dg(struct mf4_reader *r, uint64_t dg_off, unsigned *budget)
{
    struct blk dg;
    uint8_t d[MF4_DG_DATA];
    uint64_t cg_off, data;
    struct src *s;
    unsigned ncg = 0, any = 0;

    if (blk_read(r, dg_off, "DG", &dg) || blk_data(r, &dg, d, sizeof d) ||
        link_at(r, &dg, MF4_DG_L_CG_FIRST, &cg_off) || link_at(r, &dg, MF4_DG_L_DATA, &data))
        return -1;
    if (d[MF4_DG_REC_ID_SIZE] != 0 && d[MF4_DG_REC_ID_SIZE] != 1 &&
        d[MF4_DG_REC_ID_SIZE] != 2 && d[MF4_DG_REC_ID_SIZE] != 4 &&
        d[MF4_DG_REC_ID_SIZE] != 8)
        return bad(r, dg_off, "record id size %u", d[MF4_DG_REC_ID_SIZE]);
    if (!(s = calloc(1, sizeof *s)))
        return bad(r, dg_off, "out of memory");
    s->dg = dg_off;
    s->rec_id_size = d[MF4_DG_REC_ID_SIZE];
    while (cg_off) {
        struct blk cb;
        uint8_t c[MF4_CG_DATA];
        uint64_t cn, next;
        struct cgroup *g;
        if (ncg == MAX_CG) {
            bad(r, cg_off, "more than %u channel groups in a data group", MAX_CG);
            goto fail;
        }
        g = &s->cg[ncg];
        if (blk_read(r, cg_off, "CG", &cb) || blk_data(r, &cb, c, sizeof c) ||
            link_at(r, &cb, MF4_CG_L_CN_FIRST, &cn) || link_at(r, &cb, MF4_CG_L_NEXT, &next)) {
            goto fail;
        }
        g->rec_id = ld_le64(c + MF4_CG_RECORD_ID);
        g->vlsd_cg = (ld_le16(c + MF4_CG_FLAGS) & MF4_CG_F_VLSD) != 0;
        g->size = ld_le32(c + MF4_CG_DATA_BYTES) + ld_le32(c + MF4_CG_INVAL_BYTES);
        if (!g->vlsd_cg && (g->size > REC_MAX || ld_le32(c + MF4_CG_DATA_BYTES) > REC_MAX)) {
            bad(r, cg_off, "records of %u bytes (at most %u are read)", g->size,
                       REC_MAX);
            goto fail;
        }
        g->kind = -1;
        if (!g->vlsd_cg && scan_channels(r, g, cn, 0, -1, budget)) {
            goto fail;
        }
        if (g->can) {
            if (!g->t.present || !g->f[F_ID].present) {
                bad(r, cg_off, "CAN group without %s", g->t.present ? "an ID channel" :
                           "a time channel");
                goto fail;
            }
            if (g->f[F_BYTES].present && g->f[F_BYTES].vlsd) {
                if (s->sd_root && s->sd_root != g->f[F_BYTES].sd_root) {
                    bad(r, cg_off, "two VLSD DataBytes streams in one data group");
                    goto fail;
                }
                s->sd_root = g->f[F_BYTES].sd_root;
            }
            if (!r->si_read && read_si_names(r, &cb))
                goto fail;
            any = 1;
        }
        ncg++;
        cg_off = next;
        if (!(*budget)--) {
            bad(r, cg_off, "too many channel groups (a link loop?)");
            goto fail;
        }
    }
    s->ncg = ncg;
    if (!any || !data) {
        free(s);
        return 0;
    }
    if (r->nsrc == MAX_SRC) {
        bad(r, dg_off, "more than %u data groups of CAN frames", MAX_SRC);
        goto fail;
    }
    s->rec = malloc(REC_MAX + 8);
    s->data.win = malloc(WIN);
    s->sd.win = malloc(WIN);
    if (!s->rec || !s->data.win || !s->sd.win) {
        free(s->rec);
        free(s->data.win);
        free(s->sd.win);
        bad(r, dg_off, "out of memory");
        goto fail;
    }
    stream_reset(&s->data, data);
    stream_reset(&s->sd, s->sd_root);
    r->src[r->nsrc++] = s;
    return 0;
fail:
    free(s);
    return -1;
}

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
        v = get_bits(rec, &g->t);
        if ((g->t.dtype == MF4_DT_INT_LE || g->t.dtype == MF4_DT_INT_BE) && g->t.bits < 64 &&
            (v >> (g->t.bits - 1)) & 1)
            v |= ~0ull << g->t.bits;
        t = (g->t.dtype >= MF4_DT_INT_LE) ? (double)(int64_t)v : (double)v;
    }
    t = g->ta + g->tb * t;
    if (!(t > -1e9 && t < 1e9))    /* NaN too; 31 years either way */
        return bad(r, s->dg, "record %" PRIu64 ": time %g s is not a time", s->nrec, t);
    f->ts = r->start_ns + (uint64_t)llround(t * 1e9);
    id = get_bits(rec, &g->f[F_ID]);
    f->id = (uint32_t)(id & 0x1FFFFFFFu);
    if ((id & MF4_ID_EXT) || (g->f[F_IDE].present && get_bits(rec, &g->f[F_IDE])) ||
        f->id > 0x7FF)
        f->flags |= SF_CAN_EFF;
    fr->channel = g->f[F_BUS].present ? (unsigned)get_bits(rec, &g->f[F_BUS]) : 1;
    if (fr->channel > 255)
        return bad(r, s->dg, "record %" PRIu64 ": bus channel %u", s->nrec, fr->channel);
    fd = g->f[F_EDL].present && get_bits(rec, &g->f[F_EDL]);
    if (g->f[F_DLEN].present)
        len = (unsigned)get_bits(rec, &g->f[F_DLEN]);
    else if (g->f[F_DLC].present)
        len = fd ? dlc_len[get_bits(rec, &g->f[F_DLC]) & 15] :
                   (unsigned)(get_bits(rec, &g->f[F_DLC]) > 8 ? 8 : get_bits(rec, &g->f[F_DLC]));
    else
        len = 0;
    if (g->kind == K_REMOTE) {
        uint64_t dlc = g->f[F_DLC].present ? get_bits(rec, &g->f[F_DLC]) : 0;
        f->flags |= SF_CAN_RTR;
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
            if (g->f[F_BRS].present && get_bits(rec, &g->f[F_BRS]))
                f->flags |= SF_CAN_BRS;
            if (g->f[F_ESI].present && get_bits(rec, &g->f[F_ESI]))
                f->flags |= SF_CAN_ESI;
        }
        if (fd ? !fd_len_ok(len) : len > 8)
            return bad(r, s->dg, "record %" PRIu64 ": data length %u is not a CAN%s length",
                       s->nrec, len, fd ? " FD" : "");
        f->len = (uint8_t)len;
    }
    if (!len || !g->f[F_BYTES].present)
        return 0;
    if (g->f[F_BYTES].vlsd) {
        uint64_t off = get_bits(rec, &g->f[F_BYTES]);
        uint8_t l4[4], buf[64];
        uint32_t n;
        if (off < s->sd.pos)
            stream_reset(&s->sd, s->sd_root);        /* backwards: from the start again */
        if (stream_read(r, &s->sd, NULL, off - s->sd.pos, s->dg, "signal data") != 1 ||
            stream_read(r, &s->sd, l4, 4, s->dg, "signal data") != 1)
            return bad(r, s->dg, "record %" PRIu64 ": VLSD offset %" PRIu64
                       " past the signal data", s->nrec, off);
        n = ld_le32(l4);
        if (n > sizeof buf)
            return bad(r, s->dg, "record %" PRIu64 ": %u data bytes", s->nrec, n);
        if (stream_read(r, &s->sd, buf, n, s->dg, "signal data") != 1 && n)
            return bad(r, s->dg, "record %" PRIu64 ": signal data truncated", s->nrec);
        /* An entry shorter than DataLength: the rest is zeros (asammdf writes numpy bytes
         * strings, which drop trailing zeros). */
        memcpy(f->data, buf, n < len ? n : len);
    } else {
        if (g->f[F_BYTES].bits / 8 < len)
            return bad(r, s->dg, "record %" PRIu64 ": length %u, DataBytes holds %u",
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
            rc = stream_read(r, &s->data, idb, s->rec_id_size, s->dg, "record id");
            if (rc <= 0)
                return rc;
            for (unsigned i = s->rec_id_size; i-- > 0;)
                rid = rid << 8 | idb[i];
            for (unsigned i = 0; i < s->ncg && !g; i++)
                if (s->cg[i].rec_id == rid)
                    g = &s->cg[i];
            if (!g)
                return bad(r, s->dg, "data byte %" PRIu64 ": unknown record id %" PRIu64, at,
                           rid);
            if (g->vlsd_cg) {
                uint8_t l4[4];
                if (stream_read(r, &s->data, l4, 4, s->dg, "VLSD record") != 1 ||
                    stream_read(r, &s->data, NULL, ld_le32(l4), s->dg, "VLSD record") != 1)
                    return bad(r, s->dg, "data byte %" PRIu64 ": VLSD record truncated", at);
                continue;
            }
            rc = stream_read(r, &s->data, s->rec, g->size, s->dg, "record");
            if (rc <= 0)
                return rc < 0 ? -1 : bad(r, s->dg, "data byte %" PRIu64 ": record truncated",
                                         at);
        } else {
            g = &s->cg[0];
            if (!s->ncg || g->vlsd_cg)
                return 0;
            rc = stream_read(r, &s->data, s->rec, g->size, s->dg, "record");
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
    if (rd(r, 0, id, sizeof id))
        goto fail;
    if ((memcmp(id, MF4_ID_FILE_FINAL, 8) && memcmp(id, MF4_ID_FILE_UNFIN, 8)) ||
        id[MF4_ID_VERS] != '4') {
        bad(r, 0, "not an MDF 4 file (\"%.8s\" \"%.4s\")", "????????", "????");
        snprintf(r->err, sizeof r->err, "%s: MF4: offset 0: not an MDF 4 file", r->name);
        goto fail;
    }
    if (ld_le16(id + MF4_ID_UNFIN_FLAGS)) {
        bad(r, MF4_ID_UNFIN_FLAGS, "unfinalized file (flags 0x%04x): finalize it first "
            "(asammdf does on opening)", ld_le16(id + MF4_ID_UNFIN_FLAGS));
        goto fail;
    }
    if (blk_read(r, MF4_HD_OFFSET, "HD", &h) || blk_data(r, &h, hd, sizeof hd) ||
        link_at(r, &h, MF4_HD_L_DG_FIRST, &dg))
        goto fail;
    /* The file history and the comment are not used, but a file cut short (a writer that
     * puts them last, as streamfat's does) shows there first. */
    for (unsigned i = 0; i < 2; i++) {
        struct blk x;
        uint64_t l;
        if (link_at(r, &h, i ? MF4_HD_L_MD_COMMENT : MF4_HD_L_FH_FIRST, &l) ||
            (l && blk_read(r, l, i ? "MD TX" : "FH", &x)))
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
            bad(r, dg, "more than %u data groups (a link loop?)", ndg - 1);
            goto fail;
        }
        if (scan_dg(r, dg, &budget) || blk_read(r, dg, "DG", &b) ||
            link_at(r, &b, MF4_DG_L_NEXT, &next))
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
