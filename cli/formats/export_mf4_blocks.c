/* The bytes of an MF4 export (export_mf4.h): block output (aligned writes, patching links
 * already written, TX and MD text blocks, XML text) and the data blocks: each group's
 * records buffered and written as a DT block or, transposed and deflated, a DZ block (with
 * a run of zeros as a deflate block of its own at level 1), listed in DL blocks. The
 * writer that decides what goes where is export_mf4.c. */
#include "export_mf4.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef SF_HAVE_LIBDEFLATE
#include <libdeflate.h>
/* libdeflate's Adler-32 is several times zlib's (11 % of a level-1 export with zlib's). */
#define mf4_adler32(a, p, n) libdeflate_adler32((a), (p), (n))
#else
#define mf4_adler32(a, p, n) ((uint32_t)adler32_z((a), (p), (n)))
#endif

/* ---- output ----------------------------------------------------------------------------- */

void mf4_out(struct export_ctx *x, struct mf4 *m, const void *p, size_t n)
{
    if (m->err)
        return;
    if (export_write(x, p, n)) {
        m->err = 1;
        return;
    }
    m->pos += n;
}

void mf4_align(struct export_ctx *x, struct mf4 *m)
{
    static const uint8_t zeros[MF4_ALIGN];
    size_t k = (size_t)((MF4_ALIGN - m->pos % MF4_ALIGN) % MF4_ALIGN);

    if (k)
        mf4_out(x, m, zeros, k);
}

void mf4_patch(struct export_ctx *x, struct mf4 *m, uint64_t at, const void *p, size_t n)
{
    if (m->err)
        return;
    if (fflush(x->out) || fseeko(x->out, (off_t)at, SEEK_SET) || export_write(x, p, n) ||
        fflush(x->out) || fseeko(x->out, (off_t)m->pos, SEEK_SET))
        m->err = 1;
}

void mf4_patch_link(struct export_ctx *x, struct mf4 *m, uint64_t at, uint64_t v)
{
    uint8_t b[8];

    st_le64(b, v);
    mf4_patch(x, m, at, b, 8);
}

void mf4_block_header(uint8_t *b, const char *id, uint64_t len, uint64_t links)
{
    memset(b, 0, MF4_HDR_SIZE);
    memcpy(b + MF4_H_ID, id, 4);
    st_le64(b + MF4_H_LENGTH, len);
    st_le64(b + MF4_H_LINK_COUNT, links);
}

uint64_t mf4_put_block(struct export_ctx *x, struct mf4 *m, uint8_t *b, const char *id,
                       unsigned nlinks, size_t ndata)
{
    uint64_t len = MF4_HDR_SIZE + 8u * nlinks + ndata, at;

    mf4_align(x, m);
    at = m->pos;
    mf4_block_header(b, id, len, nlinks);
    mf4_out(x, m, b, (size_t)len);
    return at;
}

uint64_t mf4_put_text(struct export_ctx *x, struct mf4 *m, const char *id, const char *s,
                      size_t n)
{
    static const uint8_t zeros[MF4_ALIGN];
    uint8_t h[MF4_HDR_SIZE];
    size_t padded = (n + 1 + MF4_ALIGN - 1) / MF4_ALIGN * MF4_ALIGN;
    uint64_t at;

    mf4_align(x, m);
    at = m->pos;
    mf4_block_header(h, id, MF4_HDR_SIZE + padded, 0);
    mf4_out(x, m, h, sizeof h);
    mf4_out(x, m, s, n);
    mf4_out(x, m, zeros, padded - n);
    return at;
}

uint64_t mf4_put_tx(struct export_ctx *x, struct mf4 *m, const char *s)
{
    return mf4_put_text(x, m, "##TX", s, strlen(s));
}

size_t mf4_xml_append(char *d, size_t len, size_t cap, const uint8_t *s, size_t n)
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

size_t mf4_str_append(char *d, size_t len, size_t cap, const char *s)
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

void mf4_write_dl(struct export_ctx *x, struct mf4 *m, struct group *g)
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
    at = mf4_put_block(x, m, b, "##DL", 1 + n, 8u + 8u * n);
    if (g->dl_last)
        mf4_patch_link(x, m, g->dl_last + MF4_HDR_SIZE + 8u * MF4_DL_L_NEXT, at);
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

void mf4_flush_group(struct export_ctx *x, struct mf4 *m, struct group *g)
{
    uint8_t h[MF4_HDR_SIZE + MF4_DZ_DATA];
    uint64_t at;

    if (!g->fill || m->err)
        return;
    if (g->dl_n == DL_MAX)
        mf4_write_dl(x, m, g);
    mf4_align(x, m);
    at = m->pos;
    if (x->mf4_level == 0) {
        mf4_block_header(h, "##DT", MF4_HDR_SIZE + (uint64_t)g->fill, 0);
        mf4_out(x, m, h, MF4_HDR_SIZE);
        mf4_out(x, m, g->buf, g->fill);
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
        if (g->members == mf4_frame_members) {
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
        mf4_block_header(h, "##DZ", MF4_HDR_SIZE + MF4_DZ_DATA + zlen, 0);
        memset(h + MF4_HDR_SIZE, 0, MF4_DZ_DATA);
        memcpy(h + MF4_HDR_SIZE + MF4_DZ_ORG_TYPE, "DT", 2);
        h[MF4_HDR_SIZE + MF4_DZ_ZIP_TYPE] = MF4_ZIP_TRANSPOSE;
        st_le32(h + MF4_HDR_SIZE + MF4_DZ_ZIP_PARAM, cols);
        st_le64(h + MF4_HDR_SIZE + MF4_DZ_ORG_LEN, g->fill);
        st_le64(h + MF4_HDR_SIZE + MF4_DZ_DATA_LEN, zlen);
        mf4_out(x, m, h, sizeof h);
        mf4_out(x, m, m->zbuf, zlen);
    }
    g->dl_link[g->dl_n] = at;
    g->dl_off[g->dl_n] = g->stream;
    g->dl_n++;
    g->stream += g->fill;
    g->fill = 0;
    g->maxlen = 0;
}

uint8_t *mf4_new_record(struct export_ctx *x, struct mf4 *m, struct group *g)
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
        mf4_flush_group(x, m, g);
    if (m->err)
        return NULL;
    p = g->buf + g->fill;
    memset(p, 0, g->rec);
    g->fill += g->rec;
    g->cycles++;
    return p;
}
