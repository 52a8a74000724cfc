/* ASAM MDF 4.11 (mf4_format.h has the layout) in the CAN bus-logging layout that
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
 * says "UnFinMF " until then). So the output must be seekable: into anything else (a pipe,
 * a file opened for appending) cmd_export.c builds it in a temporary file and copies it
 * out when complete. Memory: three block buffers, a transposition buffer and the deflate output.
 *
 * This file is the writer: records into groups, events, and the structure at the end;
 * export_mf4_blocks.c writes the bytes (blocks, links, the DT/DZ data blocks and their DL
 * lists), export_mf4.h holds what they share.
 *
 * DROP records become EV blocks (acquisition interrupted, at the DROP's time), ANNOTATION
 * records marker EV blocks with the text as their name; both are written as they come and
 * chained by patching the previous EV's next link. META records (key=value from the log's
 * header) go into the HD comment's common_properties; CHANNEL names into the SI comment
 * (BusChannel N = name). */
#include "export_mf4.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamfat/sf.h"

const struct member mf4_frame_members[10] = {
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
    mf4_block_header(b, "##HD", HD_SIZE, MF4_HD_LINKS);
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
    uint64_t tx = mf4_put_tx(x, m, name);
    uint64_t md = comment ? mf4_put_text(x, m, "##MD", comment, strlen(comment)) : 0;
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
    at = mf4_put_block(x, m, b, "##EV", MF4_EV_LINKS, MF4_EV_DATA);
    if (m->ev_last)
        mf4_patch_link(x, m, m->ev_last + MF4_HDR_SIZE + 8u * MF4_EV_L_NEXT, at);
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
    m->g[G_DATA] = (struct group){ .name = "CAN_DataFrame", .members = mf4_frame_members,
                                   .nmembers = 10, .rec = MF4_REC_FRAME_SIZE };
    m->g[G_REMOTE] = (struct group){ .name = "CAN_RemoteFrame", .members = remote_members,
                                     .nmembers = 6, .rec = MF4_REC_RTR_SIZE };
    m->g[G_ERROR] = (struct group){ .name = "CAN_ErrorFrame", .members = mf4_frame_members,
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
    mf4_out(x, m, b, sizeof b);
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
    if (!(p = mf4_new_record(x, m, g)))
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
        p[MF4_REC_RTR_DIR] = (c->flags & SF_CAN_TX) ? 1 : 0;   /* FORMAT.md bit 6 */
    } else {
        p[MF4_REC_DIR] = (c->flags & SF_CAN_TX) ? 1 : 0;
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
        n = mf4_str_append(md, 0, MD_MAX / 2, "<EVcomment><TX>");
        n = mf4_xml_append(md, n, MD_MAX / 2 - 32, r->body, r->length);
        mf4_str_append(md, n, MD_MAX / 2, "</TX></EVcomment>");
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
        tx = mf4_put_tx(x, m, name);
        memset(b, 0, sizeof b);
        st_le64(l + 8u * MF4_CN_L_NEXT, next);
        st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
        d[MF4_CN_TYPE] = MF4_CNT_FIXED;
        d[MF4_CN_DATA_TYPE] = mb->type;
        st_le32(d + MF4_CN_BYTE_OFFSET, mb->off);
        st_le32(d + MF4_CN_BIT_COUNT, mb->bits);
        st_le32(d + MF4_CN_FLAGS, MF4_CN_F_BUS_EVENT);
        next = mf4_put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
    }
    /* The structure: a byte array over the record after the time, composed of the members. */
    tx = mf4_put_tx(x, m, g->name);
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_CN_L_COMPOSITION, next);
    st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
    st_le64(l + 8u * MF4_CN_L_SI_SOURCE, si);
    d[MF4_CN_TYPE] = MF4_CNT_FIXED;
    d[MF4_CN_DATA_TYPE] = MF4_DT_BYTES;
    st_le32(d + MF4_CN_BYTE_OFFSET, MF4_REC_BUS_CHANNEL);
    st_le32(d + MF4_CN_BIT_COUNT, (g->rec - MF4_REC_BUS_CHANNEL) * 8u);
    st_le32(d + MF4_CN_FLAGS, MF4_CN_F_BUS_EVENT);
    next = mf4_put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
    /* The master: float64 seconds from the HD start. */
    tx = mf4_put_tx(x, m, "t");
    unit = mf4_put_tx(x, m, "s");
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_CN_L_NEXT, next);
    st_le64(l + 8u * MF4_CN_L_TX_NAME, tx);
    st_le64(l + 8u * MF4_CN_L_MD_UNIT, unit);
    d[MF4_CN_TYPE] = MF4_CNT_MASTER;
    d[MF4_CN_SYNC_TYPE] = MF4_SYNC_TIME;
    d[MF4_CN_DATA_TYPE] = MF4_DT_FLOAT_LE;
    st_le32(d + MF4_CN_BYTE_OFFSET, MF4_REC_TIME);
    st_le32(d + MF4_CN_BIT_COUNT, 64);
    return mf4_put_block(x, m, b, "##CN", MF4_CN_LINKS, MF4_CN_DATA);
}

/* A channel's name for the SI comment, whole: its CHANNEL record's name (valid UTF-8
 * without control characters, docs/FORMAT.md: only XML's special characters need
 * escaping), else can<N>. Appended to md (n bytes so far, room for cap); returns the new
 * length. */
static size_t put_channel_name(const struct export_ctx *x, char *md, size_t n, size_t cap,
                               unsigned ch)
{
    const char *s = x->ifname[ch];
    char line[16];

    if (!*s) {
        snprintf(line, sizeof line, "can%u", ch);
        return mf4_str_append(md, n, cap, line);
    }
    for (; *s; s++) {
        char one[2] = { *s, 0 };
        const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
                          *s == '"' ? "&quot;" : one;
        n = mf4_str_append(md, n, cap, rep);
    }
    return n;
}

/* The SI block shared by the groups: bus CAN, its comment naming the bus channels. */
static uint64_t put_source(struct export_ctx *x, struct mf4 *m)
{
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_SI_LINKS + MF4_SI_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_SI_LINKS;
    char *md, line[96];
    size_t n = 0, cap = 256;
    uint64_t name, path, comment;

    /* names are whole (up to B - 96 bytes each), so the comment is sized for them */
    for (unsigned ch = 0; ch < 256; ch++)
        if (m->chan_used[ch])
            cap += 2 * (64 + 6 * strlen(x->ifname[ch]));
    md = malloc(cap);
    if (!md)
        return 0;
    n = mf4_str_append(md, n, cap, "<SIcomment><TX>CAN bus channels:");
    for (unsigned ch = 0; ch < 256; ch++) {
        if (!m->chan_used[ch])
            continue;
        snprintf(line, sizeof line, " %u = ", bus_channel(x, (uint8_t)ch));
        n = mf4_str_append(md, n, cap, line);
        n = put_channel_name(x, md, n, cap, ch);
        n = mf4_str_append(md, n, cap, ";");
    }
    n = mf4_str_append(md, n, cap, "</TX><common_properties>");
    for (unsigned ch = 0; ch < 256; ch++) {
        if (!m->chan_used[ch])
            continue;
        snprintf(line, sizeof line, "<e name=\"BusChannel %u\">", bus_channel(x, (uint8_t)ch));
        n = mf4_str_append(md, n, cap, line);
        n = put_channel_name(x, md, n, cap, ch);
        n = mf4_str_append(md, n, cap, "</e>");
    }
    n = mf4_str_append(md, n, cap, "</common_properties></SIcomment>");
    comment = mf4_put_text(x, m, "##MD", md, n);
    free(md);
    name = mf4_put_tx(x, m, "CAN");
    path = mf4_put_tx(x, m, "CAN");
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_SI_L_TX_NAME, name);
    st_le64(l + 8u * MF4_SI_L_TX_PATH, path);
    st_le64(l + 8u * MF4_SI_L_MD_COMMENT, comment);
    d[MF4_SI_TYPE] = MF4_SI_TYPE_BUS;
    d[MF4_SI_BUS_TYPE] = MF4_SI_BUS_CAN;
    return mf4_put_block(x, m, b, "##SI", MF4_SI_LINKS, MF4_SI_DATA);
}

/* The HD comment: the META records' key=value pairs as common_properties. */
static uint64_t put_hd_comment(struct export_ctx *x, struct mf4 *m)
{
    char *md = (char *)m->blk;
    size_t n = 0, i = 0;

    n = mf4_str_append(md, n, MD_MAX, "<HDcomment><TX>exported by streamfat " SF_VERSION_STRING
                       "</TX>");
    if (x->meta_len) {
        n = mf4_str_append(md, n, MD_MAX, "<common_properties>");
        while (i < x->meta_len && n + 256 < MD_MAX) {
            const char *kv = x->meta + i;
            size_t len = strlen(kv), klen;
            const char *eq = memchr(kv, '=', len);
            klen = eq ? (size_t)(eq - kv) : len;
            n = mf4_str_append(md, n, MD_MAX, "<e name=\"");
            n = mf4_xml_append(md, n, MD_MAX - 128, (const uint8_t *)kv, klen);
            n = mf4_str_append(md, n, MD_MAX, "\">");
            if (eq)
                n = mf4_xml_append(md, n, MD_MAX - 64, (const uint8_t *)eq + 1, len - klen - 1);
            n = mf4_str_append(md, n, MD_MAX, "</e>");
            i += len + 1;
        }
        n = mf4_str_append(md, n, MD_MAX, "</common_properties>");
    }
    n = mf4_str_append(md, n, MD_MAX, "</HDcomment>");
    return mf4_put_text(x, m, "##MD", md, n);
}

static uint64_t put_fh(struct export_ctx *x, struct mf4 *m)
{
    static const char c[] = "<FHcomment><TX>created</TX><tool_id>streamfat</tool_id>"
        "<tool_vendor>streamfat</tool_vendor><tool_version>" SF_VERSION_STRING
        "</tool_version></FHcomment>";
    uint8_t b[MF4_HDR_SIZE + 8u * MF4_FH_LINKS + MF4_FH_DATA];
    uint8_t *l = b + MF4_HDR_SIZE, *d = l + 8u * MF4_FH_LINKS;
    uint64_t md = mf4_put_text(x, m, "##MD", c, sizeof c - 1);
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    memset(b, 0, sizeof b);
    st_le64(l + 8u * MF4_FH_L_MD_COMMENT, md);
    st_le64(d + MF4_FH_TIME_NS, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    d[MF4_FH_TIME_FLAGS] = MF4_TIME_OFFSETS_VALID;
    return mf4_put_block(x, m, b, "##FH", MF4_FH_LINKS, MF4_FH_DATA);
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
        mf4_flush_group(x, m, g);
        mf4_write_dl(x, m, g);
        data = g->dl_first;
        if (data && x->mf4_level > 0) {
            uint8_t hl[MF4_HDR_SIZE + 8u * MF4_HL_LINKS + MF4_HL_DATA];
            memset(hl, 0, sizeof hl);
            st_le64(hl + MF4_HDR_SIZE + 8u * MF4_HL_L_DL_FIRST, data);
            hl[MF4_HDR_SIZE + 8u * MF4_HL_LINKS + MF4_HL_ZIP_TYPE] = MF4_ZIP_TRANSPOSE;
            data = mf4_put_block(x, m, hl, "##HL", MF4_HL_LINKS, MF4_HL_DATA);
        }
        cn = put_channels(x, m, g, si);
        acq = mf4_put_tx(x, m, "CAN");
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
        cn = mf4_put_block(x, m, cg, "##CG", MF4_CG_LINKS, MF4_CG_DATA);
        memset(dg, 0, sizeof dg);
        l = dg + MF4_HDR_SIZE;
        st_le64(l + 8u * MF4_DG_L_NEXT, dg_next);
        st_le64(l + 8u * MF4_DG_L_CG_FIRST, cn);
        st_le64(l + 8u * MF4_DG_L_DATA, data);
        dg_next = mf4_put_block(x, m, dg, "##DG", MF4_DG_LINKS, MF4_DG_DATA);
    }
    links[MF4_HD_L_DG_FIRST] = dg_next;
    links[MF4_HD_L_FH_FIRST] = put_fh(x, m);
    links[MF4_HD_L_EV_FIRST] = m->ev_first;
    links[MF4_HD_L_MD_COMMENT] = put_hd_comment(x, m);
    mf4_align(x, m);
    /* Finalized: the real HD, then the ID says so. */
    id_block(b, 1);
    hd_block(b + MF4_ID_SIZE, m->start, links);
    mf4_patch(x, m, MF4_HD_OFFSET, b + MF4_ID_SIZE, HD_SIZE);
    mf4_patch(x, m, 0, b, MF4_ID_SIZE);
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
