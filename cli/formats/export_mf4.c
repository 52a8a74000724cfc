/* ASAM MDF 4.11 (cli/mf4_format.h has the layout) in the CAN bus-logging layout that
 * asammdf, python-can and Vector's tools read: up to three sorted data groups,
 * CAN_DataFrame (data frames, CAN FD included), CAN_RemoteFrame and CAN_ErrorFrame, each
 * with a float64 master time channel (seconds from the HD start) and a structure channel
 * whose members are whole bytes at fixed offsets (MF4_REC_*). DataBytes is a fixed 64-byte
 * array (DataLength says how many count): one record size per group, so the data is one
 * stream of equal records that needs no second stream (VLSD) to interleave, and deflate
 * squeezes the unused bytes away (docs/EXPORT.md, "mf4").
 *
 * Streaming: each group fills a block buffer of about 1 MiB of records; a full buffer goes
 * out as a DT block (--mf4-compress 0) or a DZ block (transposition + deflate, level N).
 * The data blocks are listed in DL blocks of up to DL_MAX entries each, a DL going out when
 * it is full and the previous DL's next link patched to point at it. Everything else (the
 * groups' DG, CG, CN, SI, TX and MD blocks, FH, the HD comment) is written after the data
 * at the end, when the cycle counts and channel names are known; then the HD block at 64
 * is rewritten with its links and the ID block is marked finalized ("MDF     "; the file
 * says "UnFinMF " until then). So the output must be seekable: cmd_export.c refuses a
 * pipe. Memory: three block buffers, a transposition buffer and the deflate output.
 *
 * DROP records become EV blocks (acquisition interrupted, at the DROP's time), ANNOTATION
 * records marker EV blocks with the text as their name; both are written as they come and
 * chained by patching the previous EV's next link. META records (key=value from the log's
 * header) go into the HD comment's common_properties; CHANNEL names into the SI comment
 * (BusChannel N = name). */
#include "export.h"
#include "mf4_format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#ifdef SF_HAVE_LIBDEFLATE
#include <libdeflate.h>
/* libdeflate's Adler-32 is several times zlib's (11 % of a level-1 export with zlib's). */
#define mf4_adler32(a, p, n) libdeflate_adler32((a), (p), (n))
#else
#define mf4_adler32(a, p, n) ((uint32_t)adler32_z((a), (p), (n)))
#endif

#include "streamfat/sf.h"

#define BLOCK_RAW (1u << 20)       /* target record bytes per DT/DZ block */
#define DL_MAX 32u                 /* data blocks (32 MiB of records) per DL block */
#define NGROUPS 3
#define MD_MAX 16384u              /* an MD/TX block built in memory */

enum { G_DATA = 0, G_REMOTE = 1, G_ERROR = 2 };

struct member {
    const char *name;              /* after "CAN_DataFrame." */
    uint32_t off, bits;
    uint8_t type;
};

static const struct member frame_members[] = {
    { "BusChannel", MF4_REC_BUS_CHANNEL, 8, MF4_DT_UINT_LE },
    { "ID", MF4_REC_ID, 32, MF4_DT_UINT_LE },
    { "IDE", MF4_REC_IDE, 8, MF4_DT_UINT_LE },
    { "DLC", MF4_REC_DLC, 8, MF4_DT_UINT_LE },
    { "DataLength", MF4_REC_DATA_LENGTH, 8, MF4_DT_UINT_LE },
    { "DataBytes", MF4_REC_DATA_BYTES, 64 * 8, MF4_DT_BYTES },
    { "Dir", MF4_REC_DIR, 8, MF4_DT_UINT_LE },
    { "EDL", MF4_REC_EDL, 8, MF4_DT_UINT_LE },
    { "BRS", MF4_REC_BRS, 8, MF4_DT_UINT_LE },
    { "ESI", MF4_REC_ESI, 8, MF4_DT_UINT_LE },
};

static const struct member remote_members[] = {
    { "BusChannel", MF4_REC_BUS_CHANNEL, 8, MF4_DT_UINT_LE },
    { "ID", MF4_REC_ID, 32, MF4_DT_UINT_LE },
    { "IDE", MF4_REC_IDE, 8, MF4_DT_UINT_LE },
    { "DLC", MF4_REC_DLC, 8, MF4_DT_UINT_LE },
    { "DataLength", MF4_REC_DATA_LENGTH, 8, MF4_DT_UINT_LE },
    { "Dir", MF4_REC_RTR_DIR, 8, MF4_DT_UINT_LE },
};

struct group {
    const char *name;              /* the structure channel's name */
    const struct member *members;
    unsigned nmembers;
    uint32_t rec;                  /* record bytes */
    uint8_t *buf;                  /* records not yet written */
    uint32_t cap, fill;
    uint64_t cycles;               /* records */
    uint8_t maxlen;                /* the longest DataLength among the buffered records */
    uint64_t stream;               /* record bytes in blocks already written */
    uint64_t dl_link[DL_MAX], dl_off[DL_MAX];
    unsigned dl_n;
    uint64_t dl_first, dl_last;    /* file offsets of written DL blocks */
};

struct mf4 {
    struct group g[NGROUPS];
    uint8_t *tbuf;                 /* transposed block */
    uint8_t *zbuf;                 /* deflated block */
    uLong zcap;
    z_stream zs;
    int zs_ready;
    uint8_t *blk;                  /* a DL or MD block being built */
    uint64_t pos;                  /* file offset of the next byte written */
    uint64_t start;                /* HD start time, ns */
    int started;                   /* start is the first record's time */
    uint64_t ev_last;              /* the last EV written (its next link is patched) */
    uint64_t ev_first;
    uint8_t chan_used[256];        /* streamfat channels that carried frames */
    int err;                       /* a write failed (errno set) */
};

/* ---- output ----------------------------------------------------------------------------- */

static void out(struct export_ctx *x, struct mf4 *m, const void *p, size_t n)
{
    if (m->err)
        return;
    if (export_write(x, p, n)) {
        m->err = 1;
        return;
    }
    m->pos += n;
}

static void align(struct export_ctx *x, struct mf4 *m)
{
    static const uint8_t zeros[MF4_ALIGN];
    size_t k = (size_t)((MF4_ALIGN - m->pos % MF4_ALIGN) % MF4_ALIGN);

    if (k)
        out(x, m, zeros, k);
}

/* Overwrite n bytes at file offset `at` (already written) and go back to the end. */
static void patch(struct export_ctx *x, struct mf4 *m, uint64_t at, const void *p, size_t n)
{
    if (m->err)
        return;
    if (fflush(x->out) || fseeko(x->out, (off_t)at, SEEK_SET) || export_write(x, p, n) ||
        fflush(x->out) || fseeko(x->out, (off_t)m->pos, SEEK_SET))
        m->err = 1;
}

static void patch_link(struct export_ctx *x, struct mf4 *m, uint64_t at, uint64_t v)
{
    uint8_t b[8];

    st_le64(b, v);
    patch(x, m, at, b, 8);
}

static void block_header(uint8_t *b, const char *id, uint64_t len, uint64_t links)
{
    memset(b, 0, MF4_HDR_SIZE);
    memcpy(b + MF4_H_ID, id, 4);
    st_le64(b + MF4_H_LENGTH, len);
    st_le64(b + MF4_H_LINK_COUNT, links);
}

/* Write a block of `nlinks` links and `ndata` data bytes (b holds all of it, header
 * included); returns its offset. */
static uint64_t put_block(struct export_ctx *x, struct mf4 *m, uint8_t *b, const char *id,
                          unsigned nlinks, size_t ndata)
{
    uint64_t len = MF4_HDR_SIZE + 8u * nlinks + ndata, at;

    align(x, m);
    at = m->pos;
    block_header(b, id, len, nlinks);
    out(x, m, b, (size_t)len);
    return at;
}

/* A TX ("##TX") or MD ("##MD") block holding the text s (n bytes); returns its offset. */
static uint64_t put_text(struct export_ctx *x, struct mf4 *m, const char *id, const char *s,
                         size_t n)
{
    static const uint8_t zeros[MF4_ALIGN];
    uint8_t h[MF4_HDR_SIZE];
    size_t padded = (n + 1 + MF4_ALIGN - 1) / MF4_ALIGN * MF4_ALIGN;
    uint64_t at;

    align(x, m);
    at = m->pos;
    block_header(h, id, MF4_HDR_SIZE + padded, 0);
    out(x, m, h, sizeof h);
    out(x, m, s, n);
    out(x, m, zeros, padded - n);
    return at;
}

static uint64_t put_tx(struct export_ctx *x, struct mf4 *m, const char *s)
{
    return put_text(x, m, "##TX", s, strlen(s));
}

/* XML text: &, <, > and quotes escaped, control characters and invalid UTF-8 kept out
 * (replaced by '?'), at most cap - 1 bytes. Returns the new length. */
static size_t xml_append(char *d, size_t len, size_t cap, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        char one[2] = { (char)s[i], 0 };
        size_t k;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        default:
            if (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n')
                one[0] = '?';
            else if (s[i] >= 0x80)
                one[0] = '?';      /* no UTF-8 validation: keep the XML well-formed */
            rep = one;
        }
        k = strlen(rep);
        if (len + k >= cap)
            break;
        memcpy(d + len, rep, k);
        len += k;
    }
    d[len] = '\0';
    return len;
}

static size_t str_append(char *d, size_t len, size_t cap, const char *s)
{
    size_t k = strlen(s);

    if (len + k >= cap)
        k = cap - 1 - len;
    memcpy(d + len, s, k);
    len += k;
    d[len] = '\0';
    return len;
}

/* ---- data blocks -------------------------------------------------------------------------- */

static void write_dl(struct export_ctx *x, struct mf4 *m, struct group *g)
{
    uint8_t *b = m->blk;
    unsigned n = g->dl_n;
    uint8_t *d = b + MF4_HDR_SIZE + 8u * (1 + n);
    uint64_t at;

    if (!n)
        return;
    memset(b, 0, MF4_HDR_SIZE + 8u * (1 + n) + 8u + 8u * n);
    for (unsigned i = 0; i < n; i++) {
        st_le64(b + MF4_HDR_SIZE + 8u * (1 + i), g->dl_link[i]);
        st_le64(d + MF4_DL_OFFSETS + 8u * i, g->dl_off[i]);
    }
    d[MF4_DL_FLAGS] = 0;
    st_le32(d + MF4_DL_COUNT, n);
    at = put_block(x, m, b, "##DL", 1 + n, 8u + 8u * n);
    if (g->dl_last)
        patch_link(x, m, g->dl_last + MF4_HDR_SIZE + 8u * MF4_DL_L_NEXT, at);
    else
        g->dl_first = at;
    g->dl_last = at;
    g->dl_n = 0;
}

/* ---- a run of zeros as a deflate block of its own ---------------------------------------- */

struct bitout {
    uint8_t *p;
    uint64_t acc;
    unsigned n;
};

static void bits_put(struct bitout *b, uint32_t v, unsigned n)   /* LSB first */
{
    b->acc |= (uint64_t)v << b->n;
    b->n += n;
    while (b->n >= 8) {
        *b->p++ = (uint8_t)b->acc;
        b->acc >>= 8;
        b->n -= 8;
    }
}

static void huff_put(struct bitout *b, uint32_t code, unsigned n)   /* MSB of the code first */
{
    uint32_t r = 0;

    for (unsigned i = 0; i < n; i++)
        r |= ((code >> i) & 1u) << (n - 1 - i);
    bits_put(b, r, n);
}

/* The fixed-Huffman code of literal/length symbol sym (RFC 1951, 3.2.6). */
static void fixed_sym(struct bitout *b, unsigned sym)
{
    if (sym < 144)
        huff_put(b, 0x30 + sym, 8);
    else if (sym < 256)
        huff_put(b, 0x190 + sym - 144, 9);
    else if (sym < 280)
        huff_put(b, sym - 256, 7);
    else
        huff_put(b, 0xc0 + sym - 280, 8);
}

/* N > 0 zero bytes as one fixed-Huffman block (not final): a literal 0, then matches at
 * distance 1 (13 bits per 258 bytes), then an empty stored block to end on a byte
 * boundary. Returns the bytes written at p (at most N / 158 + 16). */
static size_t zero_run_block(uint8_t *p, uint64_t n)
{
    static const uint16_t base[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
                                       227, 258 };
    static const uint8_t extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3,
                                       3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
    struct bitout b = { p, 0, 0 };

    bits_put(&b, 0, 1);            /* BFINAL 0 */
    bits_put(&b, 1, 2);            /* BTYPE 01: fixed Huffman codes */
    fixed_sym(&b, 0);
    n--;
    while (n) {
        unsigned len = n >= 258 ? 258u : (unsigned)n, k = 28;
        if (len < 3) {
            fixed_sym(&b, 0);
            n--;
            continue;
        }
        while (base[k] > len)
            k--;
        fixed_sym(&b, 257 + k);
        bits_put(&b, len - base[k], extra[k]);
        huff_put(&b, 0, 5);        /* distance code 0: distance 1 */
        n -= len;
    }
    fixed_sym(&b, 256);            /* end of block */
    bits_put(&b, 0, 3);            /* empty stored block: BFINAL 0, BTYPE 00 */
    if (b.n)
        bits_put(&b, 0, 8 - b.n);
    memcpy(b.p, "\x00\x00\xff\xff", 4);
    return (size_t)(b.p + 4 - p);
}

/* Raw deflate of n bytes at in to *out with zlib, ending with `flush`. */
static int zdeflate(struct mf4 *m, const uint8_t *in, size_t n, uint8_t **out, int flush)
{
    uInt room = (uInt)(m->zbuf + m->zcap - *out);

    m->zs.next_in = (Bytef *)(uintptr_t)in;
    m->zs.avail_in = (uInt)n;
    m->zs.next_out = *out;
    m->zs.avail_out = room;
    int rc = deflate(&m->zs, flush);
    *out = m->zs.next_out;
    if (flush == Z_FINISH)
        return rc == Z_STREAM_END ? 0 : -1;
    return rc == Z_OK && m->zs.avail_in == 0 && m->zs.avail_out > 0 ? 0 : -1;
}

/* Write the group's buffered records as one DT or DZ block. */
static void flush_group(struct export_ctx *x, struct mf4 *m, struct group *g)
{
    uint8_t h[MF4_HDR_SIZE + MF4_DZ_DATA];
    uint64_t at;

    if (!g->fill || m->err)
        return;
    if (g->dl_n == DL_MAX)
        write_dl(x, m, g);
    align(x, m);
    at = m->pos;
    if (x->mf4_level == 0) {
        block_header(h, "##DT", MF4_HDR_SIZE + (uint64_t)g->fill, 0);
        out(x, m, h, MF4_HDR_SIZE);
        out(x, m, g->buf, g->fill);
    } else {
        /* Transposition: byte c of record r goes to c * rows + r, so equal fields of
         * consecutive records (ids, lengths, unused data bytes) become long runs. */
        uint32_t rows = g->fill / g->rec, cols = g->rec;
        /* DataBytes past the longest DataLength are zero in every record: the
         * transposition skips those columns (8-byte frames: 56 of 84), and at level 1
         * their run of zeros goes out as a deflate block of its own, made here, between
         * zlib's deflate of the bytes before it (ended by a full flush: nothing after
         * refers back) and of the bytes after it. */
        uint32_t z0 = cols, z1 = cols;
        const uint8_t *src = g->buf;
        uint64_t zlen, nz, na;
        uint32_t adler, a, b;
        uint8_t *o;
        if (g->members == frame_members) {
            z0 = MF4_REC_DATA_BYTES + g->maxlen;
            z1 = MF4_REC_DATA_BYTES + 64u;
        }
        nz = (uint64_t)(z1 - z0) * rows;
        if (x->mf4_level > 1 && nz) {
            /* The made block costs 13 bits per 258 zeros where zlib's own Huffman codes
             * take about 2: above level 1 (size before speed) zlib deflates them too. */
            memset(m->tbuf + (size_t)z0 * rows, 0, (size_t)nz);
            nz = 0;
        }
        na = nz ? (uint64_t)z0 * rows : 0;     /* no run: all goes in one deflate */
        for (uint32_t r = 0; r < rows; r++, src += cols) {
            uint8_t *dst = m->tbuf + r;
            for (uint32_t c = 0; c < z0; c++, dst += rows)
                *dst = src[c];
            dst += (size_t)(z1 - z0) * rows;
            for (uint32_t c = z1; c < cols; c++, dst += rows)
                *dst = src[c];
        }
        /* DZ's deflate is a zlib stream (RFC 1950): the 2-byte header, the raw deflate
         * blocks, and the Adler-32 of the data big-endian (libdeflate's: several times
         * zlib's speed; over the zeros it is arithmetic). */
        m->zbuf[0] = 0x78;                  /* deflate, 32 KiB window */
        m->zbuf[1] = x->mf4_level == 1 ? 0x01 : x->mf4_level < 6 ? 0x5e :
                     x->mf4_level == 6 ? 0x9c : 0xda;   /* FLEVEL; header % 31 == 0 */
        o = m->zbuf + 2;
        if (deflateReset(&m->zs) != Z_OK ||
            (nz && (zdeflate(m, m->tbuf, (size_t)na, &o, Z_FULL_FLUSH) ||
                    (o += zero_run_block(o, nz), 0))) ||
            zdeflate(m, m->tbuf + na + nz, (size_t)(g->fill - na - nz), &o, Z_FINISH)) {
            errno = ENOMEM;
            m->err = 1;
            return;
        }
        zlen = (uint64_t)(o - m->zbuf);
        adler = mf4_adler32(1, m->tbuf, (size_t)na);
        a = adler & 0xffffu;
        b = (uint32_t)(((uint64_t)(adler >> 16) + (nz % 65521u) * a) % 65521u);
        adler = mf4_adler32(b << 16 | a, m->tbuf + na + nz, (size_t)(g->fill - na - nz));
        m->zbuf[zlen++] = (uint8_t)(adler >> 24);
        m->zbuf[zlen++] = (uint8_t)(adler >> 16);
        m->zbuf[zlen++] = (uint8_t)(adler >> 8);
        m->zbuf[zlen++] = (uint8_t)adler;
        block_header(h, "##DZ", MF4_HDR_SIZE + MF4_DZ_DATA + zlen, 0);
        memset(h + MF4_HDR_SIZE, 0, MF4_DZ_DATA);
        memcpy(h + MF4_HDR_SIZE + MF4_DZ_ORG_TYPE, "DT", 2);
        h[MF4_HDR_SIZE + MF4_DZ_ZIP_TYPE] = MF4_ZIP_TRANSPOSE;
        st_le32(h + MF4_HDR_SIZE + MF4_DZ_ZIP_PARAM, cols);
        st_le64(h + MF4_HDR_SIZE + MF4_DZ_ORG_LEN, g->fill);
        st_le64(h + MF4_HDR_SIZE + MF4_DZ_DATA_LEN, zlen);
        out(x, m, h, sizeof h);
        out(x, m, m->zbuf, zlen);
    }
    g->dl_link[g->dl_n] = at;
    g->dl_off[g->dl_n] = g->stream;
    g->dl_n++;
    g->stream += g->fill;
    g->fill = 0;
    g->maxlen = 0;
}

static uint8_t *new_record(struct export_ctx *x, struct mf4 *m, struct group *g)
{
    uint8_t *p;

    if (!g->buf) {
        g->cap = BLOCK_RAW / g->rec * g->rec;
        if (!(g->buf = malloc(g->cap))) {
            m->err = 1;
            return NULL;
        }
    }
    if (g->fill + g->rec > g->cap)
        flush_group(x, m, g);
    if (m->err)
        return NULL;
    p = g->buf + g->fill;
    memset(p, 0, g->rec);
    g->fill += g->rec;
    g->cycles++;
    return p;
}

/* ---- ID and HD ---------------------------------------------------------------------------- */

static void id_block(uint8_t *b, int final)
{
    memset(b, 0, MF4_ID_SIZE);
    memcpy(b + MF4_ID_FILE, final ? MF4_ID_FILE_FINAL : MF4_ID_FILE_UNFIN, 8);
    memcpy(b + MF4_ID_VERS, "4.11    ", 8);
    memcpy(b + MF4_ID_PROG, "streamft", 8);
    st_le16(b + MF4_ID_VER, 411);
    /* Unfinished: cycle counters and the last DT's length may need an update (bits 0, 2). */
    st_le16(b + MF4_ID_UNFIN_FLAGS, final ? 0 : 0x0005);
}

#define HD_SIZE (MF4_HDR_SIZE + 8u * MF4_HD_LINKS + MF4_HD_DATA)

static void hd_block(uint8_t *b, uint64_t start, const uint64_t links[MF4_HD_LINKS])
{
    uint8_t *d = b + MF4_HDR_SIZE + 8u * MF4_HD_LINKS;

    memset(b, 0, HD_SIZE);
    block_header(b, "##HD", HD_SIZE, MF4_HD_LINKS);
    for (unsigned i = 0; i < MF4_HD_LINKS; i++)
        st_le64(b + MF4_HDR_SIZE + 8u * i, links[i]);
    st_le64(d + MF4_HD_START_NS, start);
    /* UTC, offsets valid and zero: readers get an aware time, not the local zone's guess. */
    d[MF4_HD_TIME_FLAGS] = MF4_TIME_OFFSETS_VALID;
}

/* ---- events ------------------------------------------------------------------------------- */

static void put_event(struct export_ctx *x, struct mf4 *m, uint8_t type, uint8_t cause,
                      uint64_t ts, const char *name, const char *comment)
{
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_EV_LINKS + MF4_EV_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_EV_LINKS;
    uint64_t tx = put_tx(x, m, name);
    uint64_t md = comment ? put_text(x, m, "##MD", comment, strlen(comment)) : 0;
    uint64_t at;

    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_EV_L_TX_NAME, tx);
    st_le64(l + 8u * MF4_EV_L_MD_COMMENT, md);
    d[MF4_EV_TYPE] = type;
    d[MF4_EV_SYNC_TYPE] = MF4_SYNC_TIME;
    d[MF4_EV_RANGE_TYPE] = 0;
    d[MF4_EV_CAUSE] = cause;
    st_le64(d + MF4_EV_SYNC_BASE, (uint64_t)((int64_t)(ts - m->start)));
    {
        double f = 1e-9;
        uint64_t u;
        memcpy(&u, &f, 8);
        st_le64(d + MF4_EV_SYNC_FACTOR, u);
    }
    at = put_block(x, m, b, "##EV", MF4_EV_LINKS, MF4_EV_DATA);
    if (m->ev_last)
        patch_link(x, m, m->ev_last + MF4_HDR_SIZE + 8u * MF4_EV_L_NEXT, at);
    else
        m->ev_first = at;
    m->ev_last = at;
}

/* ---- the writer --------------------------------------------------------------------------- */

static int mf4_begin(struct export_ctx *x)
{
    struct mf4 *m = calloc(1, sizeof *m);
    uint8_t b[MF4_ID_SIZE + HD_SIZE];
    static const uint64_t nolinks[MF4_HD_LINKS];

    if (!m)
        return -1;
    x->priv = m;
    if (!x->seekable) {            /* offsets count from the file's start */
        errno = ESPIPE;
        return -1;
    }
    m->g[G_DATA] = (struct group){ .name = "CAN_DataFrame", .members = frame_members,
                                   .nmembers = 10, .rec = MF4_REC_FRAME_SIZE };
    m->g[G_REMOTE] = (struct group){ .name = "CAN_RemoteFrame", .members = remote_members,
                                     .nmembers = 6, .rec = MF4_REC_RTR_SIZE };
    m->g[G_ERROR] = (struct group){ .name = "CAN_ErrorFrame", .members = frame_members,
                                    .nmembers = 10, .rec = MF4_REC_FRAME_SIZE };
    m->start = x->log_start - x->log_start % 1000u;   /* until the first record */
    m->blk = malloc(MF4_HDR_SIZE + 16u * (DL_MAX + 1) + MD_MAX);
    if (!m->blk)
        return -1;
    if (x->mf4_level > 0) {
        m->tbuf = malloc(BLOCK_RAW);
        /* + zlib header and Adler-32, the zero run's block and zlib's full flush */
        m->zcap = compressBound(BLOCK_RAW) + BLOCK_RAW / 128 + 64;
        m->zbuf = malloc(m->zcap);
        if (!m->tbuf || !m->zbuf)
            return -1;
        if (deflateInit2(&m->zs, x->mf4_level, Z_DEFLATED, -15, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {   /* raw: flush_group wraps it */
            errno = ENOMEM;
            return -1;
        }
        m->zs_ready = 1;
    }
    /* Unfinished ID and a placeholder HD: both are rewritten at the end. */
    id_block(b, 0);
    hd_block(b + MF4_ID_SIZE, m->start, nolinks);
    out(x, m, b, sizeof b);
    return m->err ? -1 : 0;
}

static uint8_t bus_channel(const struct export_ctx *x, uint8_t ch)
{
    unsigned v = export_vector_channel(x, ch);

    if (v > 255)
        v = ch + 1u;               /* channel 255 unnamed: 0 (the byte has no room) */
    return (uint8_t)v;
}

static const uint8_t len_to_dlc[65] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 12, 12, 12, 12,
    13, 13, 13, 13, 13, 13, 13, 13, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14,
    14, 14, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
};

/* The HD start is the first exported record's time (a replayed log's header holds the time
 * of the replay, years away from its frames), in whole microseconds: asammdf (and
 * python-can through it) read it as a datetime, which holds no finer. Offsets from it stay
 * small, so a float64 keeps them to the nanosecond. */
static void first_record(struct mf4 *m, uint64_t ts)
{
    if (!m->started) {
        m->started = 1;
        m->start = ts - ts % 1000u;
    }
}

static int mf4_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    struct mf4 *m = x->priv;
    struct group *g;
    uint8_t *p;
    double t;
    uint32_t id = c->id | ((c->flags & SF_CAN_EFF) ? MF4_ID_EXT : 0);
    uint8_t len = c->len > 64 ? 64 : c->len;

    first_record(m, r->ts);
    t = (double)(int64_t)(r->ts - m->start) / 1e9;
    if (c->flags & SF_CAN_ERR)
        g = &m->g[G_ERROR];
    else if (c->flags & SF_CAN_RTR)
        g = &m->g[G_REMOTE];
    else
        g = &m->g[G_DATA];
    if (!(p = new_record(x, m, g)))
        return -1;
    {
        uint64_t bits;
        memcpy(&bits, &t, 8);          /* IEEE 754 double, stored little-endian */
        st_le64(p + MF4_REC_TIME, bits);
    }
    p[MF4_REC_BUS_CHANNEL] = bus_channel(x, r->channel);
    st_le32(p + MF4_REC_ID, id);
    p[MF4_REC_IDE] = (c->flags & SF_CAN_EFF) ? 1 : 0;
    if (g == &m->g[G_REMOTE]) {
        p[MF4_REC_DLC] = len;
        p[MF4_REC_DATA_LENGTH] = 0;
    } else {
        p[MF4_REC_DLC] = (c->flags & SF_CAN_FD) ? len_to_dlc[len] : len;
        p[MF4_REC_DATA_LENGTH] = len;
        memcpy(p + MF4_REC_DATA_BYTES, c->data, len);
        if (len > g->maxlen)
            g->maxlen = len;
        p[MF4_REC_EDL] = (c->flags & SF_CAN_FD) ? 1 : 0;
        p[MF4_REC_BRS] = (c->flags & SF_CAN_BRS) ? 1 : 0;
        p[MF4_REC_ESI] = (c->flags & SF_CAN_ESI) ? 1 : 0;
    }
    m->chan_used[r->channel] = 1;
    x->written++;
    return 1;
}

static int mf4_other(struct export_ctx *x, const struct sf_rec *r)
{
    struct mf4 *m = x->priv;
    char name[64], *md = (char *)m->blk;
    size_t n;

    first_record(m, r->ts);
    if (r->type == SF_REC_DROP && r->length >= 24) {
        uint64_t count = ld_le64(r->body), first = ld_le64(r->body + 8),
                 last = ld_le64(r->body + 16);
        snprintf(name, sizeof name, "DROP %" PRIu64, count);
        snprintf(md, MD_MAX, "<EVcomment><TX>%" PRIu64 " records lost on channel %u "
                 "(ring full), logged between %" PRIu64 " and %" PRIu64 " ns since the "
                 "epoch</TX></EVcomment>", count, r->channel, first, last);
        put_event(x, m, MF4_EVT_ACQ_INTERRUPT, MF4_EVC_TOOL, r->ts, name, md);
    } else if (r->type == SF_REC_ANNOTATION) {
        /* The text as the event's name (TX: plain, control characters blanked, at most
         * 1 KiB) and, escaped, as its comment. */
        char *tx = md + MD_MAX / 2;
        size_t k = 0;
        n = str_append(md, 0, MD_MAX / 2, "<EVcomment><TX>");
        n = xml_append(md, n, MD_MAX / 2 - 32, r->body, r->length);
        str_append(md, n, MD_MAX / 2, "</TX></EVcomment>");
        for (size_t i = 0; i < r->length && k < 1024; i++)
            tx[k++] = r->body[i] < 0x20 ? ' ' : (char)r->body[i];
        tx[k] = '\0';
        put_event(x, m, MF4_EVT_MARKER, MF4_EVC_USER, r->ts, tx, md);
    } else {
        return 0;
    }
    x->written++;
    return m->err ? -1 : 1;
}

/* The member, structure and master channels of group g; returns the first CN (the
 * master's) offset. */
static uint64_t put_channels(struct export_ctx *x, struct mf4 *m, const struct group *g,
                             uint64_t si)
{
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_CN_LINKS + MF4_CN_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_CN_LINKS;
    char name[64];
    uint64_t next = 0, unit, tx;

    /* Members last to first, so each one's next link is already known. */
    for (unsigned i = g->nmembers; i-- > 0;) {
        const struct member *mb = &g->members[i];
        snprintf(name, sizeof name, "%s.%s", g->name, mb->name);
        tx = put_tx(x, m, name);
        memset(b, 0, sizeof b);
        st_le64(l + 8u * MF4_CN_L_NEXT, next);
        st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
        d[MF4_CN_TYPE] = MF4_CNT_FIXED;
        d[MF4_CN_DATA_TYPE] = mb->type;
        st_le32(d + MF4_CN_BYTE_OFFSET, mb->off);
        st_le32(d + MF4_CN_BIT_COUNT, mb->bits);
        st_le32(d + MF4_CN_FLAGS, MF4_CN_F_BUS_EVENT);
        next = put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
    }
    /* The structure: a byte array over the record after the time, composed of the members. */
    tx = put_tx(x, m, g->name);
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_CN_L_COMPOSITION, next);
    st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
    st_le64(l + 8u * MF4_CN_L_SI_SOURCE, si);
    d[MF4_CN_TYPE] = MF4_CNT_FIXED;
    d[MF4_CN_DATA_TYPE] = MF4_DT_BYTES;
    st_le32(d + MF4_CN_BYTE_OFFSET, MF4_REC_BUS_CHANNEL);
    st_le32(d + MF4_CN_BIT_COUNT, (g->rec - MF4_REC_BUS_CHANNEL) * 8u);
    st_le32(d + MF4_CN_FLAGS, MF4_CN_F_BUS_EVENT);
    next = put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
    /* The master: float64 seconds from the HD start. */
    tx = put_tx(x, m, "t");
    unit = put_tx(x, m, "s");
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_CN_L_NEXT, next);
    st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
    st_le64(l + 8u * MF4_CN_L_MD_UNIT, unit);
    d[MF4_CN_TYPE] = MF4_CNT_MASTER;
    d[MF4_CN_SYNC_TYPE] = MF4_SYNC_TIME;
    d[MF4_CN_DATA_TYPE] = MF4_DT_FLOAT_LE;
    st_le32(d + MF4_CN_BYTE_OFFSET, MF4_REC_TIME);
    st_le32(d + MF4_CN_BIT_COUNT, 64);
    return put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
}

/* The SI block shared by the groups: bus CAN, its comment naming the bus channels. */
static uint64_t put_source(struct export_ctx *x, struct mf4 *m)
{
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_SI_LINKS + MF4_SI_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_SI_LINKS;
    char *md = (char *)m->blk, line[96];
    size_t n = 0;
    uint64_t name, path, comment;

    n = str_append(md, n, MD_MAX, "<SIcomment><TX>CAN bus channels:");
    for (unsigned ch = 0; ch < 256; ch++) {
        if (!m->chan_used[ch])
            continue;
        snprintf(line, sizeof line, " %u = ", bus_channel(x, (uint8_t)ch));
        n = str_append(md, n, MD_MAX, line);
        if (x->ifname[ch][0])
            n = xml_append(md, n, MD_MAX, (const uint8_t *)x->ifname[ch],
                           strlen(x->ifname[ch]));
        else {
            snprintf(line, sizeof line, "can%u", ch);
            n = str_append(md, n, MD_MAX, line);
        }
        n = str_append(md, n, MD_MAX, ";");
    }
    n = str_append(md, n, MD_MAX, "</TX><common_properties>");
    for (unsigned ch = 0; ch < 256; ch++) {
        if (!m->chan_used[ch])
            continue;
        snprintf(line, sizeof line, "<e name=\"BusChannel %u\">", bus_channel(x, (uint8_t)ch));
        n = str_append(md, n, MD_MAX, line);
        if (x->ifname[ch][0])
            n = xml_append(md, n, MD_MAX, (const uint8_t *)x->ifname[ch],
                           strlen(x->ifname[ch]));
        else {
            snprintf(line, sizeof line, "can%u", ch);
            n = str_append(md, n, MD_MAX, line);
        }
        n = str_append(md, n, MD_MAX, "</e>");
    }
    n = str_append(md, n, MD_MAX, "</common_properties></SIcomment>");
    comment = put_text(x, m, "##MD", md, n);
    name = put_tx(x, m, "CAN");
    path = put_tx(x, m, "CAN");
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_SI_L_TX_NAME, name);
    st_le64(l + 8u * MF4_SI_L_TX_PATH, path);
    st_le64(l + 8u * MF4_SI_L_MD_COMMENT, comment);
    d[MF4_SI_TYPE] = MF4_SI_TYPE_BUS;
    d[MF4_SI_BUS_TYPE] = MF4_SI_BUS_CAN;
    return put_block(x, m, b, "##SI", MF4_SI_LINKS, MF4_SI_DATA);
}

/* The HD comment: the META records' key=value pairs as common_properties. */
static uint64_t put_hd_comment(struct export_ctx *x, struct mf4 *m)
{
    char *md = (char *)m->blk;
    size_t n = 0, i = 0;

    n = str_append(md, n, MD_MAX, "<HDcomment><TX>exported by streamfat " SF_VERSION_STRING
                   "</TX>");
    if (x->meta_len) {
        n = str_append(md, n, MD_MAX, "<common_properties>");
        while (i < x->meta_len && n + 256 < MD_MAX) {
            const char *kv = x->meta + i;
            size_t len = strlen(kv), klen;
            const char *eq = memchr(kv, '=', len);
            klen = eq ? (size_t)(eq - kv) : len;
            n = str_append(md, n, MD_MAX, "<e name=\"");
            n = xml_append(md, n, MD_MAX - 128, (const uint8_t *)kv, klen);
            n = str_append(md, n, MD_MAX, "\">");
            if (eq)
                n = xml_append(md, n, MD_MAX - 64, (const uint8_t *)eq + 1, len - klen - 1);
            n = str_append(md, n, MD_MAX, "</e>");
            i += len + 1;
        }
        n = str_append(md, n, MD_MAX, "</common_properties>");
    }
    n = str_append(md, n, MD_MAX, "</HDcomment>");
    return put_text(x, m, "##MD", md, n);
}

static uint64_t put_fh(struct export_ctx *x, struct mf4 *m)
{
    static const char c[] = "<FHcomment><TX>created</TX><tool_id>streamfat</tool_id>"
        "<tool_vendor>streamfat</tool_vendor><tool_version>" SF_VERSION_STRING
        "</tool_version></FHcomment>";
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_FH_LINKS + MF4_FH_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_FH_LINKS;
    uint64_t md = put_text(x, m, "##MD", c, sizeof c - 1);
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_FH_L_MD_COMMENT, md);
    st_le64(d + MF4_FH_TIME_NS, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    d[MF4_FH_TIME_FLAGS] = MF4_TIME_OFFSETS_VALID;
    return put_block(x, m, b, "##FH", MF4_FH_LINKS, MF4_FH_DATA);
}

static void finish(struct export_ctx *x, struct mf4 *m)
{
    uint64_t si, dg_next = 0, links[MF4_HD_LINKS] = { 0 };
    uint8_t b[MF4_ID_SIZE + HD_SIZE];

    si = put_source(x, m);
    /* Groups last to first (each DG's next link is known); the data frames' group is
     * always there, the others only when they have records. */
    for (int i = NGROUPS - 1; i >= 0; i--) {
        struct group *g = &m->g[i];
        uint8_t cg[MF4_HDR_SIZE + 8u * MF4_CG_LINKS + MF4_CG_DATA];
        uint8_t dg[MF4_HDR_SIZE + 8u * MF4_DG_LINKS + MF4_DG_DATA];
        uint8_t *l, *d;
        uint64_t data = 0, cn, acq;

        if (i != G_DATA && !g->cycles)
            continue;
        flush_group(x, m, g);
        write_dl(x, m, g);
        data = g->dl_first;
        if (data && x->mf4_level > 0) {
            uint8_t hl[MF4_HDR_SIZE + 8u * MF4_HL_LINKS + MF4_HL_DATA];
            memset(hl, 0, sizeof hl);
            st_le64(hl + MF4_HDR_SIZE + 8u * MF4_HL_L_DL_FIRST, data);
            hl[MF4_HDR_SIZE + 8u * MF4_HL_LINKS + MF4_HL_ZIP_TYPE] = MF4_ZIP_TRANSPOSE;
            data = put_block(x, m, hl, "##HL", MF4_HL_LINKS, MF4_HL_DATA);
        }
        cn = put_channels(x, m, g, si);
        acq = put_tx(x, m, "CAN");
        memset(cg, 0, sizeof cg);
        l = cg + MF4_HDR_SIZE;
        d = l + 8u * MF4_CG_LINKS;
        st_le64(l + 8u * MF4_CG_L_CN_FIRST, cn);
        st_le64(l + 8u * MF4_CG_L_TX_ACQ_NAME, acq);
        st_le64(l + 8u * MF4_CG_L_SI_ACQ_SOURCE, si);
        st_le64(d + MF4_CG_CYCLE_COUNT, g->cycles);
        st_le16(d + MF4_CG_FLAGS, MF4_CG_F_BUS_EVENT | MF4_CG_F_PLAIN_BUS);
        st_le16(d + MF4_CG_PATH_SEP, '.');
        st_le32(d + MF4_CG_DATA_BYTES, g->rec);
        cn = put_block(x, m, cg, "##CG", MF4_CG_LINKS, MF4_CG_DATA);
        memset(dg, 0, sizeof dg);
        l = dg + MF4_HDR_SIZE;
        st_le64(l + 8u * MF4_DG_L_NEXT, dg_next);
        st_le64(l + 8u * MF4_DG_L_CG_FIRST, cn);
        st_le64(l + 8u * MF4_DG_L_DATA, data);
        dg_next = put_block(x, m, dg, "##DG", MF4_DG_LINKS, MF4_DG_DATA);
    }
    links[MF4_HD_L_DG_FIRST] = dg_next;
    links[MF4_HD_L_FH_FIRST] = put_fh(x, m);
    links[MF4_HD_L_EV_FIRST] = m->ev_first;
    links[MF4_HD_L_MD_COMMENT] = put_hd_comment(x, m);
    align(x, m);
    /* Finalized: the real HD, then the ID says so. */
    id_block(b, 1);
    hd_block(b + MF4_ID_SIZE, m->start, links);
    patch(x, m, MF4_HD_OFFSET, b + MF4_ID_SIZE, HD_SIZE);
    patch(x, m, 0, b, MF4_ID_SIZE);
}

static int mf4_end(struct export_ctx *x)
{
    struct mf4 *m = x->priv;
    int rc;

    if (!m)
        return 0;
    if (m->blk && (!x->mf4_level || m->zs_ready) && !m->err)
        finish(x, m);
    rc = m->err || !m->blk ? -1 : 0;
    if (m->zs_ready)
        deflateEnd(&m->zs);
    for (int i = 0; i < NGROUPS; i++)
        free(m->g[i].buf);
    free(m->tbuf);
    free(m->zbuf);
    free(m->blk);
    free(m);
    x->priv = NULL;
    return rc;
}

const struct export_writer export_mf4 = {
    "mf4", "mf4", 0, 0, mf4_begin, mf4_can, mf4_other, mf4_end,
};
