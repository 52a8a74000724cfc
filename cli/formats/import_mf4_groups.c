/* The structure of an MF4 file (import_mf4.h): which data groups and channel groups are
 * CAN bus logging (by their channels' names), where each CAN member sits in the record and
 * how the master converts to seconds, and the bus channels' names of the SI comment. */
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

static const char *const field_names[F_N] = {
    "BusChannel", "ID", "IDE", "DLC", "DataLength", "DataBytes", "EDL", "BRS", "ESI", "Dir",
};

/* ---- the file's structure --------------------------------------------------------------- */

uint64_t mf4_get_bits(const uint8_t *rec, const struct field *f)
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
    if (mf4_blk_read(r, off, "CC", &cb) || mf4_blk_data(r, &cb, d, sizeof d))
        return -1;
    if (d[0] == 0)
        return 0;
    if (d[0] != 1)
        return mf4_bad(r, off, "time channel conversion of type %u (only none and linear are "
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
        if (mf4_link_at(r, b, MF4_CN_L_DATA, &f->sd_root))
            return -1;
        f->bits = 64;
        f->bit_off = 0;
        f->dtype = MF4_DT_UINT_LE;
    }
    if (f->dtype == MF4_DT_BYTES) {
        if (f->bits % 8 || f->bit_off)
            return mf4_bad(r, b->off, "byte array channel of %u bits", f->bits);
    } else if (f->bits == 0 || f->bits > 64) {
        return mf4_bad(r, b->off, "integer channel of %u bits", f->bits);
    } else if (f->dtype > MF4_DT_FLOAT_BE) {
        return mf4_bad(r, b->off, "channel of data type %u where an integer belongs", f->dtype);
    }
    if ((uint64_t)f->byte_off + ((uint64_t)f->bit_off + f->bits + 7) / 8 > rec_size)
        return mf4_bad(r, b->off, "channel of %u bits at byte %u runs past the %u-byte record",
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
            return mf4_bad(r, cn, "too many channels (a link loop?)");
        if (mf4_blk_read(r, cn, "CN", &b) || mf4_blk_data(r, &b, d, sizeof d) ||
            mf4_link_at(r, &b, MF4_CN_L_TX_NAME, &tx) ||
            mf4_link_at(r, &b, MF4_CN_L_COMPOSITION, &comp) ||
            mf4_link_at(r, &b, MF4_CN_L_NEXT, &next) || mf4_tx_read(r, tx, name, sizeof name))
            return -1;
        if (depth == 0 && (d[MF4_CN_TYPE] == MF4_CNT_MASTER ||
                           d[MF4_CN_TYPE] == MF4_CNT_VIRT_MASTER) &&
            d[MF4_CN_SYNC_TYPE] == MF4_SYNC_TIME && !g->t.present) {
            uint64_t cc;
            if (d[MF4_CN_TYPE] == MF4_CNT_VIRT_MASTER)
                return mf4_bad(r, cn, "virtual time master (no time values in the records)");
            if (take_field(r, &b, d, g->size, &g->t) || mf4_link_at(r, &b, MF4_CN_L_CC, &cc) ||
                conversion(r, cc, &g->ta, &g->tb))
                return -1;
            if (g->t.dtype == MF4_DT_FLOAT_LE ? (g->t.bits != 32 && g->t.bits != 64) :
                g->t.dtype > MF4_DT_INT_BE || g->t.vlsd)
                return mf4_bad(r, cn, "time channel of data type %u, %u bits", g->t.dtype,
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
    if (mf4_link_at(r, cb, MF4_CG_L_SI_ACQ_SOURCE, &si))
        return -1;
    if (!si)
        return 0;
    if (mf4_blk_read(r, si, "SI", &sb) || mf4_link_at(r, &sb, MF4_SI_L_MD_COMMENT, &md))
        return -1;
    if (!md)
        return 0;
    if (!(buf = malloc(SI_MD_MAX)))
        return mf4_bad(r, si, "out of memory");
    if (mf4_tx_read(r, md, buf, SI_MD_MAX)) {
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

int mf4_scan_dg(struct mf4_reader *r, uint64_t dg_off, unsigned *budget)
{
    struct blk dg;
    uint8_t d[MF4_DG_DATA];
    uint64_t cg_off, data;
    struct src *s;
    unsigned ncg = 0, any = 0;

    if (mf4_blk_read(r, dg_off, "DG", &dg) || mf4_blk_data(r, &dg, d, sizeof d) ||
        mf4_link_at(r, &dg, MF4_DG_L_CG_FIRST, &cg_off) ||
        mf4_link_at(r, &dg, MF4_DG_L_DATA, &data))
        return -1;
    if (d[MF4_DG_REC_ID_SIZE] != 0 && d[MF4_DG_REC_ID_SIZE] != 1 &&
        d[MF4_DG_REC_ID_SIZE] != 2 && d[MF4_DG_REC_ID_SIZE] != 4 &&
        d[MF4_DG_REC_ID_SIZE] != 8)
        return mf4_bad(r, dg_off, "record id size %u", d[MF4_DG_REC_ID_SIZE]);
    if (!(s = calloc(1, sizeof *s)))
        return mf4_bad(r, dg_off, "out of memory");
    s->dg = dg_off;
    s->rec_id_size = d[MF4_DG_REC_ID_SIZE];
    while (cg_off) {
        struct blk cb;
        uint8_t c[MF4_CG_DATA];
        uint64_t cn, next;
        struct cgroup *g;
        if (ncg == MAX_CG) {
            mf4_bad(r, cg_off, "more than %u channel groups in a data group", MAX_CG);
            goto fail;
        }
        g = &s->cg[ncg];
        if (mf4_blk_read(r, cg_off, "CG", &cb) || mf4_blk_data(r, &cb, c, sizeof c) ||
            mf4_link_at(r, &cb, MF4_CG_L_CN_FIRST, &cn) ||
            mf4_link_at(r, &cb, MF4_CG_L_NEXT, &next)) {
            goto fail;
        }
        g->rec_id = ld_le64(c + MF4_CG_RECORD_ID);
        g->vlsd_cg = (ld_le16(c + MF4_CG_FLAGS) & MF4_CG_F_VLSD) != 0;
        g->size = ld_le32(c + MF4_CG_DATA_BYTES) + ld_le32(c + MF4_CG_INVAL_BYTES);
        if (!g->vlsd_cg && (g->size > REC_MAX || ld_le32(c + MF4_CG_DATA_BYTES) > REC_MAX)) {
            mf4_bad(r, cg_off, "records of %u bytes (at most %u are read)", g->size,
                           REC_MAX);
            goto fail;
        }
        g->kind = -1;
        if (!g->vlsd_cg && scan_channels(r, g, cn, 0, -1, budget)) {
            goto fail;
        }
        if (g->can) {
            if (!g->t.present || !g->f[F_ID].present) {
                mf4_bad(r, cg_off, "CAN group without %s", g->t.present ? "an ID channel" :
                               "a time channel");
                goto fail;
            }
            if (g->f[F_BYTES].present && g->f[F_BYTES].vlsd) {
                if (s->sd_root && s->sd_root != g->f[F_BYTES].sd_root) {
                    mf4_bad(r, cg_off, "two VLSD DataBytes streams in one data group");
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
            mf4_bad(r, cg_off, "too many channel groups (a link loop?)");
            goto fail;
        }
    }
    s->ncg = ncg;
    if (!any || !data) {
        free(s);
        return 0;
    }
    if (r->nsrc == MAX_SRC) {
        mf4_bad(r, dg_off, "more than %u data groups of CAN frames", MAX_SRC);
        goto fail;
    }
    s->rec = malloc(REC_MAX + 8);
    s->data.win = malloc(WIN);
    s->sd.win = malloc(WIN);
    if (!s->rec || !s->data.win || !s->sd.win) {
        free(s->rec);
        free(s->data.win);
        free(s->sd.win);
        mf4_bad(r, dg_off, "out of memory");
        goto fail;
    }
    mf4_stream_reset(&s->data, data);
    mf4_stream_reset(&s->sd, s->sd_root);
    r->src[r->nsrc++] = s;
    return 0;
fail:
    free(s);
    return -1;
}
