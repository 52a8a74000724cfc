/* One pass over a log for streamfat report: the library's block decoder (sf_dec, the reader
 * rules of docs/FORMAT.md) reads straight into its own buffer; whole accepted blocks go
 * through sf_rec_can_cols (runs of CAN frames as columns, no call per frame), every other
 * record and event one at a time. What it gathers: per file the header, times, counts and
 * damage; per channel its name, counts and the series (frames, time on the bus, error
 * frames, latency); the ids; the timeline's events (file starts, annotations and
 * triggers, DROP intervals, damaged blocks, blocks sealed early by a checkpoint); the
 * worst latency events.
 *
 * Sections: channels and bit lengths, events, records, blocks, the decode loop. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "report/report.h"

#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/cipher.h"
#include "streamfat/cipher_sodium.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TS_LIMIT (1ull << 63)      /* docs/FORMAT.md: records at or past it are bad-time */
#define COLS_CAP (SF_BLOCK_MAX / 24 + 1)   /* a CAN record takes 24 bytes or more */

/* The state of one file's pass (the names and "used" marks are per file: FORMAT.md). */
struct scan {
    struct rpt *r;
    struct rpt_file *f;
    unsigned fi;
    uint8_t named[256], fixed[256];
    char *fname[256];              /* this file's channel names */
    uint64_t last_ts;              /* the last record's time (damage sits after it) */
    int dmg_open;                  /* a damage event waits for the next record's time */
    struct rpt_event *fev;         /* this file's mark on the timeline */
    struct sf_can_cols c;
    uint64_t dmg[16];
    struct sf_dec *d;              /* the decoder (its key state after the header) */
};

/* in the order of docs/FORMAT.md's verdict line, as export prints it */
static const char *const dmg_name[] = {
    "unwritten", "invalid", "foreign", "misplaced", "unauthentic", "malformed",
    "out-of-sequence", "missing", "dirty-tail", "bad-can", "short-body", "bad-time",
    "truncated",
};
enum { D_UNWRITTEN, D_INVALID, D_FOREIGN, D_MISPLACED, D_UNAUTHENTIC, D_MALFORMED, D_OUT_OF_SEQ,
       D_MISSING, D_DIRTY_TAIL, D_BAD_CAN, D_SHORT_BODY, D_BAD_TIME, D_TRUNCATED, D_N };

/* ---- channels and bit lengths ------------------------------------------------------- */

void rpt_frame_bits(uint32_t flags, uint8_t len, unsigned *nominal, unsigned *data)
{
    int eff = (flags & SF_CAN_EFF) != 0;

    if (flags & SF_CAN_FD) {
        /* arbitration: SOF, id, RRS (SRR, IDE, id ext.), IDE/FDF/res/BRS; then ESI, DLC,
         * data, stuff count, CRC (17 or 21) with its fixed stuff bits, CRC delimiter; then
         * ACK, ACK delimiter, EOF, IFS at the nominal rate again */
        unsigned arb = eff ? 36u : 17u, crc = len > 16 ? 21u : 17u;
        unsigned dp = 1u + 4u + 8u * len + 4u + crc + (crc + 4u + 3u) / 4u + 1u;
        if (flags & SF_CAN_BRS) {
            *nominal = arb + 12u;
            *data = dp;
        } else {
            *nominal = arb + dp + 12u;
            *data = 0;
        }
        return;
    }
    /* classic: 47 bits around the data (11-bit id), 67 (29-bit); a remote frame has none */
    *nominal = (eff ? 67u : 47u) + ((flags & SF_CAN_RTR) ? 0u : 8u * len);
    *data = 0;
}

static const struct rpt_bitrate *bitrate_of(const struct rpt *r, const char *name)
{
    for (unsigned i = 0; i < r->nbitrates; i++)
        if (strcmp(r->bitrates[i].name, name) == 0)
            return &r->bitrates[i];
    return NULL;
}

/* The first use of channel ch in the whole report: its name and bitrate, its series. */
static int chan_open(struct scan *s, uint8_t ch)
{
    struct rpt *r = s->r;
    struct rpt_chan *c = &r->chan[ch];
    const struct rpt_bitrate *b;

    if (s->fname[ch])
        snprintf(c->name, sizeof c->name, "%s", s->fname[ch]);
    else
        snprintf(c->name, sizeof c->name, "can%u", (unsigned)ch);
    b = bitrate_of(r, c->name);
    c->assumed = !b;
    c->nominal = b ? b->nominal : RPT_DEFAULT_NOMINAL;
    c->data = b && b->data ? b->data : b ? b->nominal : RPT_DEFAULT_DATA;
    c->ps_nominal = 1000000000000ull / c->nominal;
    c->ps_data = 1000000000000ull / c->data;
    c->used = 1;
    r->chan_used++;
    c->first_ts = UINT64_MAX;
    if (!(c->s_frames = rs_array(&r->rs, RS_SUM)) || !(c->s_busy_ps = rs_array(&r->rs, RS_SUM)) ||
        !(c->s_err = rs_array(&r->rs, RS_SUM))) {
        r->oom = 1;
        return -1;
    }
    return 0;
}

static inline int use_chan(struct scan *s, uint8_t ch)
{
    s->fixed[ch] = 1;
    if (!s->r->chan[ch].used)
        return chan_open(s, ch);
    return 0;
}

static void set_name(struct scan *s, const struct sf_rec *rec)
{
    char *d;

    if (s->fixed[rec->channel] || !sf_rec_name_ok(rec->body, rec->length))
        return;
    if (!(d = malloc((size_t)rec->length + 1))) {
        s->r->oom = 1;
        return;
    }
    memcpy(d, rec->body, rec->length);
    d[rec->length] = '\0';
    s->fname[rec->channel] = d;
    s->fixed[rec->channel] = 1;
}

/* ---- events ----------------------------------------------------------------------- */

static struct rpt_event *add_event(struct rpt *r, enum rpt_ev_kind k, uint64_t ts,
                                   unsigned fi)
{
    struct rpt_events *e = &r->ev[k];
    struct rpt_event *v;

    e->total++;
    if (e->n == RPT_MAX_EVENTS)
        return NULL;
    if (!e->v && !(e->v = calloc(RPT_MAX_EVENTS, sizeof *e->v))) {
        r->oom = 1;
        return NULL;
    }
    v = &e->v[e->n++];
    memset(v, 0, sizeof *v);
    v->ts = v->ts_end = ts;
    v->file = fi;
    v->channel = -1;
    return v;
}

static void copy_text(char *dst, const uint8_t *p, size_t n)
{
    if (n >= RPT_TEXT)
        n = RPT_TEXT - 1;
    memcpy(dst, p, n);
    dst[n] = '\0';
}

static void mark(struct rpt *r, int64_t *a, uint64_t from, uint64_t to)
{
    unsigned j = rs_bucket(&r->rs, to < from ? from : to);
    unsigned i = rs_bucket(&r->rs, from);      /* after the fold j's may have caused */

    for (; i <= j && i < RS_BUCKETS; i++)
        a[i] = 1;
}

/* ---- records ---------------------------------------------------------------------- */

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void seen_ts(struct scan *s, uint64_t ts)
{
    struct rpt *r = s->r;

    if (!s->f->first_ts) {
        /* the file's mark on the timeline: its header's start, unless its records are
         * older (a replayed log keeps the times it brought; the header has the wall
         * clock of the replay) */
        if (s->fev && s->fev->ts > ts)
            s->fev->ts = s->fev->ts_end = ts;
    }
    if (!s->f->first_ts || ts < s->f->first_ts)
        s->f->first_ts = ts;
    if (ts > s->f->last_ts)
        s->f->last_ts = ts;
    if (!r->first_ts || ts < r->first_ts)
        r->first_ts = ts;
    if (ts > r->last_ts)
        r->last_ts = ts;
    if (s->dmg_open) {
        /* the damaged blocks lie between the record before them and this one */
        struct rpt_events *e = &r->ev[EV_DAMAGE];
        if (e->n)
            e->v[e->n - 1].ts_end = ts;
        mark(r, r->s_damage, e->n ? e->v[e->n - 1].ts : ts, ts);
        s->dmg_open = 0;
    }
    s->last_ts = ts;
}

static void latency(struct scan *s, const struct sf_rec *rec, unsigned b)
{
    struct rpt *r = s->r;
    struct rpt_chan *c = &r->chan[rec->channel];
    int64_t lat = (int64_t)le64(rec->body);
    uint64_t period = le64(rec->body + 8);
    unsigned k = 0;

    c->latency++;
    if (!c->s_lat_min && (!(c->s_lat_min = rs_array(&r->rs, RS_MIN)) ||
                          !(c->s_lat_max = rs_array(&r->rs, RS_MAX)))) {
        r->oom = 1;
        return;
    }
    b = rs_bucket(&r->rs, rec->ts);     /* the arrays may be new, the base unchanged */
    if (lat < c->s_lat_min[b])
        c->s_lat_min[b] = lat;
    if (lat > c->s_lat_max[b])
        c->s_lat_max[b] = lat;
    if (c->hist.count == 0 || lat > c->lat_max)
        c->lat_max = lat;
    c->hist.count++;
    if (lat <= 0) {
        c->lat_neg++;
    } else {
        while (k + 1 < SF_HIST_BUCKETS && (uint64_t)lat >> (k + 1))
            k++;
        c->hist.bucket[k]++;
        if ((uint64_t)lat > c->hist.max_ns)
            c->hist.max_ns = (uint64_t)lat;
    }
    /* the worst RPT_WORST, largest first */
    if (r->nworst < RPT_WORST || lat > r->worst[r->nworst - 1].latency) {
        unsigned i = r->nworst < RPT_WORST ? r->nworst++ : RPT_WORST - 1;
        while (i > 0 && r->worst[i - 1].latency < lat) {
            r->worst[i] = r->worst[i - 1];
            i--;
        }
        r->worst[i] = (struct rpt_worst){ rec->ts, lat, period, rec->channel };
    }
}

static void drop(struct scan *s, const struct sf_rec *rec)
{
    struct rpt *r = s->r;
    uint64_t n, first, last;
    struct rpt_event *e;

    if (rec->length < SF_DROP_BODY) {
        s->dmg[D_SHORT_BODY]++;
        return;
    }
    n = le64(rec->body);
    first = le64(rec->body + 8);
    last = le64(rec->body + 16);
    if (first >= TS_LIMIT || last >= TS_LIMIT || last < first)
        first = last = rec->ts;
    r->dropped += n;
    r->drop_records++;
    mark(r, r->s_drop, first, last);
    if ((e = add_event(r, EV_DROP, first, s->fi))) {
        e->ts_end = last;
        e->count = n;
        if (rec->flags & SF_DROP_SOURCE) {
            e->channel = rec->channel;
            snprintf(e->text, sizeof e->text, "lost by the source");
        } else {
            snprintf(e->text, sizeof e->text, "lost: the ring was full");
        }
    }
}

static void meta(struct scan *s, const struct sf_rec *rec)
{
    struct rpt *r = s->r;
    size_t n = rec->length;

    for (unsigned i = 0; i < r->nmeta; i++)
        if (strlen(r->meta[i]) == n && memcmp(r->meta[i], rec->body, n) == 0)
            return;
    if (r->nmeta == RPT_MAX_META || !(r->meta[r->nmeta] = malloc(n + 1)))
        return;
    memcpy(r->meta[r->nmeta], rec->body, n);
    r->meta[r->nmeta++][n] = '\0';
}

/* Any record but a run of CAN frames (those are scan_cols'). */
static void record(struct scan *s, const struct sf_rec *rec)
{
    struct rpt *r = s->r;
    struct rpt_event *e;
    struct rpt_chan *c;
    unsigned b;

    if (rec->type == SF_REC_CHANNEL) {
        set_name(s, rec);
        return;
    }
    if (!sf_rec_type_known(rec->type))
        return;
    if (rec->ts >= TS_LIMIT) {
        s->dmg[D_BAD_TIME]++;
        r->bad_time++;
        return;
    }
    if (rec->type == SF_REC_META) {
        /* not data: its time is the header's (the wall clock when logging began), which
         * for a replayed log lies far from the records' own */
        meta(s, rec);
        return;
    }
    if (!r->rs.started)
        rs_start(&r->rs, s->f->have_hdr && s->f->hdr.start_ts && s->f->hdr.start_ts <= rec->ts ?
                 s->f->hdr.start_ts : rec->ts);
    r->records++;
    s->f->records++;
    seen_ts(s, rec->ts);
    switch (rec->type) {
    case SF_REC_DROP:
        drop(s, rec);
        return;
    case SF_REC_ANNOTATION: {
        int trig = rec->length >= 7 && memcmp(rec->body, "trigger", 7) == 0;
        if ((e = add_event(r, trig ? EV_TRIGGER : EV_ANNOT, rec->ts, s->fi))) {
            copy_text(e->text, rec->body, rec->length);
            if (rec->flags & SF_ANNOT_CHANNEL)
                e->channel = rec->channel;
        }
        return;
    }
    default:
        break;
    }
    if (use_chan(s, rec->channel))
        return;
    c = &r->chan[rec->channel];
    if (rec->ts < c->first_ts)
        c->first_ts = rec->ts;
    if (rec->ts > c->last_ts)
        c->last_ts = rec->ts;
    b = rs_bucket(&r->rs, rec->ts);
    switch (rec->type) {
    case SF_REC_CAN: {
        /* a CAN record sf_rec_can_cols did not take: one it refuses (bad-can) */
        struct sf_can f;
        unsigned nb, db;
        if (sf_rec_get_can(rec, &f) || !sf_rec_can_valid(f.id, f.flags & ~SF_CAN_FLAGS_INFO,
                                                         f.len)) {
            s->dmg[D_BAD_CAN]++;
            s->f->bad_can++;
            r->records--;
            s->f->records--;
            return;
        }
        r->frames++;
        c->can++;
        c->s_frames[b]++;
        if (f.flags & SF_CAN_ERR) {
            c->err++;
            c->s_err[b]++;
            return;
        }
        rpt_frame_bits(f.flags, f.len, &nb, &db);
        c->s_busy_ps[b] += (int64_t)(nb * c->ps_nominal + db * c->ps_data);
        if (rid_add(&r->ids, rec->channel, f.id, f.flags & SF_CAN_EFF, rec->ts, f.len,
                    f.flags & SF_CAN_FD))
            r->oom = 1;
        return;
    }
    case SF_REC_LATENCY:
        if (rec->length < SF_LATENCY_BODY) {
            s->dmg[D_SHORT_BODY]++;
            return;
        }
        latency(s, rec, b);
        return;
    case SF_REC_SAMPLE:
        c->samples++;
        return;
    case SF_REC_TEXT:
        c->texts++;
        return;
    default:
        c->other++;
        return;
    }
}

/* A run of CAN frames as columns (sf_rec_can_cols). The hot loop of the report. */
static void scan_cols(struct scan *s, const struct sf_can_cols *c)
{
    struct rpt *r = s->r;

    for (size_t i = 0; i < c->n; i++) {
        uint64_t ts = c->ts[i];
        uint8_t ch = c->channel[i], fl = c->flags[i];
        struct rpt_chan *k;
        unsigned b, nb, db;

        if (ts >= TS_LIMIT) {
            s->dmg[D_BAD_TIME]++;
            r->bad_time++;
            continue;
        }
        if (!r->rs.started)
            rs_start(&r->rs, s->f->have_hdr && s->f->hdr.start_ts &&
                     s->f->hdr.start_ts <= ts ? s->f->hdr.start_ts : ts);
        if (!s->fixed[ch] || !r->chan[ch].used)
            if (use_chan(s, ch))
                return;
        k = &r->chan[ch];
        seen_ts(s, ts);
        if (ts < k->first_ts)
            k->first_ts = ts;
        if (ts > k->last_ts)
            k->last_ts = ts;
        b = rs_bucket(&r->rs, ts);
        k->can++;
        k->s_frames[b]++;
        if (fl & SF_CAN_ERR) {
            k->err++;
            k->s_err[b]++;
            continue;
        }
        k->fd += (fl & SF_CAN_FD) != 0;
        k->rtr += (fl & SF_CAN_RTR) != 0;
        k->tx += (fl & SF_CAN_TX) != 0;
        rpt_frame_bits(fl, c->len[i], &nb, &db);
        k->s_busy_ps[b] += (int64_t)(nb * k->ps_nominal + db * k->ps_data);
        if (rid_add(&r->ids, ch, c->id[i], fl & SF_CAN_EFF, ts, c->len[i], fl & SF_CAN_FD))
            r->oom = 1;
    }
    r->records += c->n;
    r->frames += c->n;
    s->f->records += c->n;
}

/* ---- blocks ------------------------------------------------------------------------- */

/* A whole accepted block: runs of CAN frames as columns, every other record on its own. A
 * block that ends with room for another record was sealed by a checkpoint (or the file's
 * close): a mark on the timeline at its last record. */
static void scan_block(struct scan *s, const struct sf_dec_block *b)
{
    uint32_t off = b->off, used = b->bi.used;
    uint64_t last = 0;
    int any = 0;

    while (off < used) {
        struct sf_rec rec;
        s->c.n = 0;
        s->c.data_n = 0;
        if (sf_rec_can_cols(b->p, &b->bi, &off, &s->c)) {
            scan_cols(s, &s->c);
            last = s->c.ts[s->c.n - 1];
            any = 1;
        }
        if (off >= used)
            break;
        if (sf_rec_next(b->p, &b->bi, &off, &rec) != 1)
            break;                 /* cannot happen after the decoder's layout check */
        record(s, &rec);
        if (rec.type != SF_REC_CHANNEL && rec.type != SF_REC_META && rec.ts < TS_LIMIT) {
            last = rec.ts;
            any = 1;
        }
    }
    /* the largest record streamfat log writes besides a long SAMPLE is a CAN FD frame of
     * 64 bytes: 88 bytes in the block */
    if (any && b->bi.kind == SF_BLOCK_RECORDS &&
        b->bi.block_size - SF_BLOCK_HDR - used >= 88u) {
        struct rpt_event *e = add_event(s->r, EV_CHECKPOINT, last, s->fi);
        if (e)
            e->count = b->block;
    }
}

static void damage(struct scan *s, const struct sf_dec_event *ev)
{
    struct rpt *r = s->r;
    struct rpt_event *e;
    int k;

    switch (ev->reason) {
    case SF_DEC_UNWRITTEN:  k = D_UNWRITTEN; break;
    case SF_DEC_MISPLACED:  k = D_MISPLACED; break;
    case SF_DEC_UNAUTHENTIC: k = D_UNAUTHENTIC; break;
    case SF_DEC_BAD_RECORD: k = D_MALFORMED; break;
    case SF_DEC_OUT_OF_SEQ: k = D_OUT_OF_SEQ; break;
    case SF_DEC_DIRTY_TAIL: k = D_DIRTY_TAIL; break;
    case SF_DEC_TRUNCATED:  k = D_TRUNCATED; break;
    case SF_DEC_NO_BLOCK:   s->f->is_log = 0; return;
    default:                k = D_INVALID; break;
    }
    s->dmg[k] += k == D_TRUNCATED || k == D_DIRTY_TAIL ? 1 : ev->count;
    r->damage_events++;
    if (k != D_DIRTY_TAIL && k != D_TRUNCATED)
        r->damaged_blocks += ev->count;
    if ((e = add_event(r, EV_DAMAGE, s->last_ts ? s->last_ts : r->rs.t0, s->fi))) {
        e->count = ev->count;
        if (ev->count > 1)
            snprintf(e->text, sizeof e->text, "blocks %" PRIu64 "-%" PRIu64 ": %s",
                     ev->block, ev->block + ev->count - 1, sf_dec_reason_str(ev->reason));
        else
            snprintf(e->text, sizeof e->text, "block %" PRIu64 ": %s", ev->block,
                     sf_dec_reason_str(ev->reason));
        s->dmg_open = 1;
    }
}

/* Sealed files are read with --key; bit 33 is known where libsodium is (as export). */
static uint64_t sealed_known(void)
{
    return sf_sodium_port() ? SF_FEATURE_ENCRYPTED : 0;
}

/* A sealed file this report cannot open: not read, with the line export gives (which key
 * id it wants). A key whose id matches but does not open the sealed key: its blocks count
 * as unauthentic, the file is shown. */
static int key_refused(struct scan *s)
{
    uint8_t want[SF_CIPHER_KEY_ID];
    uint32_t aead;
    char id[17];
    int st = sf_dec_key(s->d, want, &aead);

    sf_cipher_key_id_hex(want, id);
    switch (st) {
    case SF_DEC_KEY_MISSING:
        snprintf(s->f->error, sizeof s->f->error,
                 "sealed to key id %s: give its secret key with --key FILE", id);
        return 1;
    case SF_DEC_KEY_OTHER:
        snprintf(s->f->error, sizeof s->f->error, "sealed to key id %s, not to the key of %s",
                 id, s->r->key_path);
        return 1;
    case SF_DEC_KEY_AEAD:
        snprintf(s->f->error, sizeof s->f->error,
                 "sealed with an AEAD (%" PRIu32 ") this reader does not have", aead);
        return 1;
    default:
        return 0;
    }
}

static void event(struct scan *s, const struct sf_dec_event *ev)
{
    struct rpt_event *e;

    switch (ev->kind) {
    case SF_DEC_HEADER:
        s->f->hdr = ev->hdr;
        s->f->have_hdr = 1;
        s->f->is_log = 1;
        if (sf_file_features_refused(ev->hdr.features & ~sealed_known()) >= 0)
            s->f->refused = 1;
        else if (key_refused(s))
            s->f->refused = 1;
        else if ((e = s->fev = add_event(s->r, EV_FILE, ev->hdr.start_ts, s->fi)))
            snprintf(e->text, sizeof e->text, "%s (file %" PRIu32 " of session %016" PRIx64
                     ")", s->f->name, ev->hdr.file_index, ev->hdr.session_id);
        return;
    case SF_DEC_RECORD:
        if (!s->f->refused)
            record(s, &ev->rec);
        return;
    case SF_DEC_DAMAGED:
        damage(s, ev);
        return;
    case SF_DEC_FOREIGN:
        s->dmg[D_FOREIGN] += ev->count;
        s->r->damaged_blocks += ev->count;
        s->r->damage_events++;
        if ((e = add_event(s->r, EV_DAMAGE, s->last_ts ? s->last_ts : s->r->rs.t0, s->fi))) {
            e->count = ev->count;
            snprintf(e->text, sizeof e->text, "blocks %" PRIu64 "-%" PRIu64 ": another "
                     "file's (file id %016" PRIx64 ")", ev->block, ev->block + ev->count - 1,
                     ev->file_id);
            s->dmg_open = 1;
        }
        return;
    default:
        return;
    }
}

/* ---- the decode loop ------------------------------------------------------------------ */

static sf_ssize_t read_in(struct rpt_input *in, void *buf, size_t n)
{
    if (in->f)
        return sf_read(in->f, buf, n);
    for (;;) {
        ssize_t k = read(in->fd, buf, n);
        if (k >= 0)
            return k;
        if (errno != EINTR)
            return SF_EIO;
    }
}

static int add_file(struct rpt *r, const char *name, uint64_t bytes)
{
    struct rpt_file *f;

    if (r->nfiles == r->cap_files) {
        unsigned cap = r->cap_files ? r->cap_files * 2 : 16;
        struct rpt_file *v = realloc(r->files, cap * sizeof *v);
        if (!v)
            return -1;
        r->files = v;
        r->cap_files = cap;
    }
    f = &r->files[r->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->name = strdup(name)))
        return -1;
    f->bytes = bytes;
    r->nfiles++;
    return 0;
}

static void verdict(struct scan *s)
{
    size_t n = 0;

    s->dmg[D_BAD_CAN] = s->f->bad_can;
    for (unsigned i = 0; i < D_N; i++)
        if (s->dmg[i] && n < sizeof s->f->damage)
            n += (size_t)snprintf(s->f->damage + n, sizeof s->f->damage - n, "%s%s %" PRIu64,
                                  n ? ", " : "", dmg_name[i], s->dmg[i]);
}

int rpt_scan(struct rpt *r, const char *name, struct rpt_input *in, uint64_t bytes)
{
    struct scan *s = calloc(1, sizeof *s);
    void *buf = malloc(SF_BLOCK_MAX);
    void *ubuf = malloc(SF_UNPACK_MEM);
    struct sf_dec *d = malloc(sizeof *d);
    struct sf_dec_event ev;
    struct sf_dec_block blk;
    int k = 0, rc = 0;

    if (!s || !buf || !ubuf || !d || add_file(r, name, bytes))
        goto oom;
    s->c.ts = malloc(COLS_CAP * sizeof *s->c.ts);
    s->c.channel = malloc(COLS_CAP);
    s->c.id = malloc(COLS_CAP * sizeof *s->c.id);
    s->c.len = malloc(COLS_CAP);
    s->c.flags = malloc(COLS_CAP);
    s->c.data_end = malloc(COLS_CAP * sizeof *s->c.data_end);
    s->c.data = malloc(SF_BLOCK_MAX + 64);
    if (!s->c.ts || !s->c.channel || !s->c.id || !s->c.len || !s->c.flags || !s->c.data_end ||
        !s->c.data)
        goto oom;
    s->c.cap = COLS_CAP;
    s->c.data_cap = SF_BLOCK_MAX + 64;
    s->r = r;
    s->fi = r->nfiles - 1;
    s->f = &r->files[s->fi];
    sf_dec_init(d, buf, SF_BLOCK_MAX);
    /* compressed record blocks (kind 3) unpack here; sealed ones open with --key */
    sf_dec_set_unpack(d, ubuf, SF_UNPACK_MEM);
    if (r->have_key)
        sf_dec_set_key(d, sf_sodium_port(), r->key_pub, r->key_sec);
    s->d = d;
    for (;;) {
        for (;;) {
            if (!s->f->refused && sf_dec_next_block(d, &blk) == 1) {
                scan_block(s, &blk);
                continue;
            }
            k = sf_dec_next(d, &ev);
            if (k == SF_DEC_NEED_DATA || k == SF_DEC_END)
                break;
            event(s, &ev);
        }
        if (r->oom || k == SF_DEC_END)
            break;
        uint8_t *where;
        size_t want = sf_dec_space(d, &where);
        sf_ssize_t n = read_in(in, where, want);
        if (n < 0) {
            snprintf(s->f->error, sizeof s->f->error, "read failed: %s", sf_strerror((int)n));
            sf_dec_finish(d);
        } else if (n == 0) {
            sf_dec_finish(d);
        } else {
            sf_dec_commit(d, (size_t)n);
        }
    }
    if (r->oom)
        goto oom;
    s->f->blocks_ok = sf_dec_stats(d)->blocks_ok;
    s->f->blocks_damaged = sf_dec_stats(d)->blocks_damaged;
    s->f->blocks_foreign = sf_dec_stats(d)->blocks_foreign;
    s->f->damage_events = sf_dec_stats(d)->damage_events + (s->f->bad_can ? 1 : 0);
    if (s->f->is_log && !s->f->refused)
        r->logs_read++;
    verdict(s);
    goto out;
oom:
    cli_err("out of memory");
    rc = CLI_ERR;
out:
    if (s) {
        for (unsigned c = 0; c < 256; c++)
            free(s->fname[c]);
        free(s->c.ts);
        free(s->c.channel);
        free(s->c.id);
        free(s->c.len);
        free(s->c.flags);
        free(s->c.data_end);
        free(s->c.data);
    }
    free(s);
    free(buf);
    free(ubuf);
    free(d);
    return rc;
}

int rpt_init(struct rpt *r)
{
    memset(r, 0, sizeof *r);
    if (rid_init(&r->ids) || !(r->s_drop = rs_array(&r->rs, RS_MAX)) ||
        !(r->s_damage = rs_array(&r->rs, RS_MAX))) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    return 0;
}

void rpt_free(struct rpt *r)
{
    for (unsigned i = 0; i < r->nfiles; i++)
        free(r->files[i].name);
    free(r->files);
    for (unsigned k = 0; k < EV_N; k++)
        free(r->ev[k].v);
    for (unsigned i = 0; i < r->nmeta; i++)
        free(r->meta[i]);
    rid_free(&r->ids);
    rs_free(&r->rs);
}
