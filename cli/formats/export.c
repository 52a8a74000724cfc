/* The export of one log (export.h): decode it (docs/FORMAT.md), drop what the filters
 * (channel, CAN id/mask, time range) exclude, and hand each remaining record to one format
 * writer in file order; then the verdict on damage, skipped records and filters that
 * selected nothing. cmd_export.c (commands/) reads the options and picks the inputs and
 * outputs.
 *
 * Memory stays flat: one decoder buffer (SF_BLOCK_MAX) and the writer's state. csv-wide
 * reads the log twice (the first pass finds its columns), so it needs a seekable input;
 * ASC and BLF read it twice when they can (the first pass finds the oldest timestamp, their
 * start time). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "export.h"
#include "cli.h"
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "streamfat/cipher_sodium.h"

/* Damage counts, in the order of docs/FORMAT.md's reader table and its verdict line. */
enum { DMG_UNWRITTEN, DMG_INVALID, DMG_FOREIGN, DMG_MISPLACED, DMG_UNAUTHENTIC, DMG_MALFORMED,
       DMG_OUT_OF_SEQ, DMG_MISSING, DMG_DIRTY_TAIL, DMG_BAD_CAN, DMG_SHORT_BODY, DMG_BAD_TIME, DMG_TRUNCATED,
       DMG_N };
static const char *const dmg_name[DMG_N] = {
    "unwritten", "invalid", "foreign", "misplaced", "unauthentic", "malformed", "out-of-sequence", "missing",
    "dirty-tail", "bad-can", "short-body", "bad-time", "truncated",
};
#define MAX_DAMAGE_LINES 10

/* The export of one log file. */
struct job {
    const struct export_opts *o;
    const char *src;               /* names the input in messages */
    struct export_ctx x;
    /* Channel names (docs/FORMAT.md, Channel names): "" while unnamed, else a heap copy
     * of the whole name; chan_fixed: the name can no longer change (named, or used). */
    const char *ifname[256];
    uint8_t chan_fixed[256];
    int8_t chan_ok[256];           /* channel filter verdict, -1 unknown */
    int pass;                      /* 1: csv-wide's column scan (quiet); 2: the export */
    int have_start, began;
    uint64_t from, to;             /* resolved time range, ns */
    uint8_t wide_seen[256];
    uint8_t wide_cols[256];
    uint64_t skipped[256], drop_lost, malformed;
    /* The verdict (docs/FORMAT.md, "Reading a file"): counts in the table's order. */
    uint64_t dmg[DMG_N];
    unsigned details;              /* damage lines printed */
    uint64_t records, matched;     /* pass 2: data records, and those the filters kept */
    uint8_t chan_seen[256];
    int not_log;
    int refused;                   /* 1 + the unknown required feature bit (FORMAT.md) */
    const struct sf_dec *dec;      /* the pass's decoder (a sealed file's key state) */
    char meta[8192];               /* META records for the writer (export_ctx.meta) */
};

/* ---- filters ------------------------------------------------------------------------ */

static int channel_pass(struct job *j, uint8_t ch)
{
    const struct export_opts *o = j->o;

    if (!o->nchan)
        return 1;
    if (j->chan_ok[ch] < 0) {
        char dflt[8];
        /* the name readers give it (FORMAT.md, Channel names): can<N> when unnamed */
        const char *name = j->ifname[ch][0] ? j->ifname[ch] : dflt;
        snprintf(dflt, sizeof dflt, "can%u", (unsigned)ch);
        j->chan_ok[ch] = 0;
        for (unsigned i = 0; i < o->nchan; i++) {
            uint64_t n;
            if ((!cli_parse_uint(o->chan[i], 255, &n) && n == ch) ||
                strcmp(o->chan[i], name) == 0)
                j->chan_ok[ch] = 1;
        }
    }
    return j->chan_ok[ch];
}

static int id_pass(const struct export_opts *o, uint32_t id)
{
    int pass = !o->id_accept;

    for (unsigned i = 0; i < o->nids; i++) {
        const struct src_filter *f = &o->ids[i];
        if (((id ^ f->id) & f->mask) == 0) {
            if (f->reject)
                return 0;
            pass = 1;
        }
    }
    return pass;
}

static void set_start(struct job *j, uint64_t ts)
{
    const struct export_opts *o = j->o;

    j->have_start = 1;
    j->x.log_start = ts;
    j->from = o->from.set ? (o->from.rel ? ts + o->from.ns : o->from.ns) : 0;
    j->to = o->to.set ? (o->to.rel ? ts + o->to.ns : o->to.ns) : UINT64_MAX;
}

/* A CHANNEL record (docs/FORMAT.md, Channel names): the first usable name of a channel
 * that no record has used yet names it for the whole file, whole; any later one (a
 * rename, a name after use) and an unusable one (empty, not UTF-8, spaces or control
 * characters) are ignored. Returns -1 when out of memory. */
static int set_ifname(struct job *j, const struct sf_rec *r)
{
    char *d;

    if (j->chan_fixed[r->channel] || !sf_rec_name_ok(r->body, r->length))
        return 0;
    d = malloc((size_t)r->length + 1);
    if (!d)
        return -1;
    memcpy(d, r->body, r->length);
    d[r->length] = '\0';
    j->ifname[r->channel] = d;
    j->chan_fixed[r->channel] = 1;
    j->chan_ok[r->channel] = -1;
    return 0;
}

/* ---- the decode loop ----------------------------------------------------------------- */

static const char *type_name(unsigned t)
{
    switch (t) {
    case SF_REC_CAN:        return "CAN";
    case SF_REC_SAMPLE:     return "SAMPLE";
    case SF_REC_TEXT:       return "TEXT";
    case SF_REC_LATENCY:    return "LATENCY";
    case SF_REC_DROP:       return "DROP";
    case SF_REC_ANNOTATION: return "ANNOTATION";
    default:                return NULL;
    }
}

static void block_range(char *buf, size_t n, uint64_t first, uint64_t count)
{
    if (count > 1)
        snprintf(buf, n, "blocks %" PRIu64 "-%" PRIu64, first, first + count - 1);
    else
        snprintf(buf, n, "block %" PRIu64, first);
}

static int record(struct job *j, const struct sf_rec *r)
{
    const struct export_writer *w = j->o->w;
    struct sf_can c;
    int k;

    if (r->type == SF_REC_CIPHER)
        return 0;                  /* a sealed file's key (header block): format, not data */
    if (r->ts >> 63 && sf_rec_type_known(r->type)) {
        if (j->pass == 2)
            j->dmg[DMG_BAD_TIME]++;     /* FORMAT.md, Records: skipped, counted */
        return 0;
    }
    if (r->type == SF_REC_CHANNEL)
        return set_ifname(j, r);
    if (r->type == SF_REC_META) {
        if (j->pass == 2 && j->x.meta_len + r->length + 1u <= sizeof j->meta) {
            memcpy(j->meta + j->x.meta_len, r->body, r->length);
            j->meta[j->x.meta_len + r->length] = '\0';
            j->x.meta_len += r->length + 1u;
        }
        return 0;
    }
    if (!j->have_start)
        set_start(j, r->ts);
    if (r->type == SF_REC_CAN && sf_rec_get_can(r, &c)) {
        if (j->pass == 2)
            j->malformed++;        /* FORMAT.md check 9: skipped, counted, whatever the filters */
        return 0;
    }
    if ((r->type == SF_REC_LATENCY && r->length < SF_LATENCY_BODY) ||
        (r->type == SF_REC_DROP && r->length < SF_DROP_BODY)) {
        if (j->pass == 2)
            j->dmg[DMG_SHORT_BODY]++;   /* FORMAT.md, Record types: skipped, counted */
        return 0;
    }
    if (r->type >= SF_REC_CAN && r->type <= SF_REC_LATENCY)
        j->chan_fixed[r->channel] = 1;   /* used before named: it stays can<N> */
    if (j->pass == 2) {
        j->records++;
        j->chan_seen[r->channel] = 1;
    }
    if (!channel_pass(j, r->channel) || r->ts < j->from || r->ts >= j->to)
        return 0;
    if (r->type == SF_REC_CAN && !id_pass(j->o, c.id))
        return 0;
    if (j->pass == 2)
        j->matched++;
    if (j->pass == 1) {
        if (r->type == SF_REC_SAMPLE || r->type == SF_REC_LATENCY)
            j->wide_seen[r->channel] = 1;
        if (!j->x.have_min || r->ts < j->x.min_ts) {
            j->x.have_min = 1;
            j->x.min_ts = r->ts;
        }
        return 0;
    }
    if (!j->began) {
        /* The first record: csv-wide's header needs the channel names of the log's header. */
        j->began = 1;
        if (w->begin(&j->x))
            return -1;
    }
    k = r->type == SF_REC_CAN ? w->can(&j->x, r, &c) : w->other(&j->x, r);
    if (k < 0)
        return -1;
    if (k == 0) {
        j->skipped[r->type]++;
        if (r->type == SF_REC_DROP && r->length >= 8) {
            uint64_t cnt = 0;
            for (int i = 7; i >= 0; i--)
                cnt = cnt << 8 | r->body[i];
            j->drop_lost += cnt;
        }
    }
    return 0;
}

/* A sealed file (docs/FORMAT.md, "Sealed files") whose key this export lacks: refused like
 * a file that is not a log, with one line naming the key id it wants (1). A key that
 * matches but does not open the file's sealed key is damage: its blocks count as
 * unauthentic (0, with a line). */
static int key_refused(struct job *j)
{
    uint8_t want[SF_CIPHER_KEY_ID];
    uint32_t aead;
    char id[17], have[17];
    int st = sf_dec_key(j->dec, want, &aead);

    sf_cipher_key_id_hex(want, id);
    sf_cipher_key_id_hex(j->o->key_pub, have);
    if (st == SF_DEC_KEY_OK || st == SF_DEC_KEY_NONE)
        return 0;
    if (st == SF_DEC_KEY_BAD) {
        if (j->pass == 2)
            cli_err("%s: sealed: the file key (for key id %s) does not open with %s: the "
                    "header's CIPHER record is damaged or replaced; its blocks count as "
                    "unauthentic", j->src, id, j->o->key_path);
        return 0;
    }
    j->refused = 34;
    if (j->pass != 2)
        return 1;
    if (st == SF_DEC_KEY_MISSING)
        cli_err("%s: sealed to key id %s: give its secret key with --key FILE", j->src, id);
    else if (st == SF_DEC_KEY_OTHER)
        cli_err("%s: sealed to key id %s, not to %s (key id %s)", j->src, id, j->o->key_path,
                have);
    else
        cli_err("%s: sealed with AEAD %" PRIu32 ", which this reader cannot open here%s",
                j->src, aead, aead == SF_AEAD_AES256_GCM ? " (AES-256-GCM needs AES-NI)" : "");
    return 1;
}

/* One event; returns -1 when the output cannot be written. */
static int handle(struct job *j, const struct sf_dec_event *ev)
{
    char where[64];

    if (j->refused)
        return 0;                  /* a file this reader cannot read: nothing of it is used */
    if (ev->kind == SF_DEC_HEADER) {
        /* Sealed files (bit 33) are this reader's when it has libsodium; the key decides. */
        uint64_t known = sf_sodium_port() ? SF_FEATURE_ENCRYPTED : 0;
        int bit = sf_file_features_refused(ev->hdr.features & ~known);
        if (bit < 0 && (ev->hdr.features & SF_FEATURE_ENCRYPTED) && key_refused(j))
            return 0;
        if (bit >= 0) {
            /* docs/FORMAT.md, Versioning: refused as a file that is not a log */
            j->refused = bit + 1;
            if (j->pass == 2)
                cli_err("%s: damaged: not a log: requires feature bit %d, unknown to this "
                        "reader", j->src, bit);
            return 0;
        }
        if (!j->have_start && ev->hdr.start_ts)   /* 0: no wall clock; the first record's */
            set_start(j, ev->hdr.start_ts);
        return 0;
    }
    if (ev->kind == SF_DEC_RECORD)
        return record(j, &ev->rec);
    if (j->pass == 1)
        return 0;
    switch (ev->kind) {
    case SF_DEC_DAMAGED:
        switch (ev->reason) {
        case SF_DEC_UNWRITTEN:  j->dmg[DMG_UNWRITTEN] += ev->count; break;
        case SF_DEC_MISPLACED:  j->dmg[DMG_MISPLACED] += ev->count; break;
        case SF_DEC_UNAUTHENTIC: j->dmg[DMG_UNAUTHENTIC] += ev->count; break;
        case SF_DEC_BAD_RECORD: j->dmg[DMG_MALFORMED] += ev->count; break;
        case SF_DEC_OUT_OF_SEQ: j->dmg[DMG_OUT_OF_SEQ] += ev->count; break;
        case SF_DEC_DIRTY_TAIL: j->dmg[DMG_DIRTY_TAIL]++; break;
        case SF_DEC_TRUNCATED:  j->dmg[DMG_TRUNCATED] = 1; break;
        case SF_DEC_NO_BLOCK:   break;
        default:                j->dmg[DMG_INVALID] += ev->count; break;
        }
        if (ev->reason == SF_DEC_NO_BLOCK) {
            j->not_log = 1;
            cli_err("%s: not a streamfat log: %s in %" PRIu64 " bytes", j->src,
                    sf_dec_reason_str(ev->reason), ev->length);
            return 0;
        }
        if (j->details++ >= MAX_DAMAGE_LINES)
            return 0;
        block_range(where, sizeof where, ev->block, ev->count);
        if (ev->reason == SF_DEC_TRUNCATED)
            cli_err("%s: %s: the file ends inside it (%" PRIu64 " of %" PRIu32 " bytes)",
                    j->src, where, ev->length, ev->block_size);
        else if (ev->reason == SF_DEC_DIRTY_TAIL)
            cli_err("%s: %s: %s; its records are intact", j->src, where,
                    sf_dec_reason_str(ev->reason));
        else
            cli_err("%s: %s damaged (%s), skipped", j->src, where,
                    sf_dec_reason_str(ev->reason));
        return 0;
    case SF_DEC_GAP:
        j->dmg[DMG_MISSING] += ev->seq - ev->seq_expected;
        if (j->details++ < MAX_DAMAGE_LINES)
            cli_err("%s: block %" PRIu64 ": seq %" PRIu64 " where %" PRIu64 " was due: %"
                    PRIu64 " blocks missing", j->src, ev->block, ev->seq, ev->seq_expected,
                    ev->seq - ev->seq_expected);
        return 0;
    case SF_DEC_FOREIGN:
        j->dmg[DMG_FOREIGN] += ev->count;
        if (j->details++ < MAX_DAMAGE_LINES) {
            block_range(where, sizeof where, ev->block, ev->count);
            cli_err("%s: %s belong to another file (file id %016" PRIx64 "), skipped",
                    j->src, where, ev->file_id);
        }
        return 0;
    default:
        return 0;
    }
}

/* The one-line verdict of a damaged log (docs/FORMAT.md); 1 when it was damaged. */
static int report_damage(struct job *j)
{
    char buf[512];
    size_t n = 0;

    j->dmg[DMG_BAD_CAN] = j->malformed;
    if (j->refused)
        return 1;                  /* its one line is out (handle) */
    if (j->not_log) {
        cli_err("%s: damaged: not a log", j->src);
        return 1;
    }
    for (unsigned i = 0; i < DMG_N; i++)
        if (j->dmg[i] && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s %" PRIu64, n ? ", " : "",
                                  dmg_name[i], j->dmg[i]);
    if (!n)
        return 0;
    if (j->details > MAX_DAMAGE_LINES)
        cli_err("%s: %u more damage reports not shown", j->src, j->details - MAX_DAMAGE_LINES);
    cli_err("%s: damaged: %s", j->src, buf);
    return 1;
}

/* Filters that selected nothing from a log that has records: say which channels exist. */
static int report_no_match(const struct job *j)
{
    char buf[1024];
    size_t n = 0;

    for (unsigned c = 0; c < 256 && n < sizeof buf - 32; c++) {
        if (!j->chan_seen[c])
            continue;
        if (j->ifname[c][0])
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s (%u)", n ? ", " : "",
                                  j->ifname[c], c);
        else
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%u", n ? ", " : "", c);
    }
    cli_err("%s: no record matched the filters (%" PRIu64 " records; channels in the log: %s)",
            j->src, j->records, n ? buf : "none");
    return EXPORT_NO_MATCH;
}

static void report_skipped(const struct job *j)
{
    char buf[512];
    size_t n = 0;
    uint64_t total = 0;

    for (unsigned t = 0; t < 256; t++) {
        const char *name;
        char other[24];
        if (!j->skipped[t])
            continue;
        total += j->skipped[t];
        name = type_name(t);
        if (!name) {
            snprintf(other, sizeof other, "type 0x%02X", t);
            name = other;
        }
        if (n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s: %" PRIu64, n ? ", " : "",
                                  name, j->skipped[t]);
        if (t == SF_REC_DROP && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, " accounting for %" PRIu64
                                  " lost records", j->drop_lost);
    }
    if (total)
        fprintf(stderr, "export: skipped %" PRIu64 " %srecords (%s)\n", total,
                j->skipped[SF_REC_CAN] ? "" : "non-CAN ", buf);
}

static sf_ssize_t read_input(void *ctx, void *buf, size_t n)
{
    struct export_input *in = ctx;

    if (in->f)
        return sf_read(in->f, buf, n);
    for (;;) {
        ssize_t r = read(in->fd, buf, n);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return SF_EIO;
    }
}

static int input_seekable(const struct export_input *in)
{
    struct stat st;

    return in->f || (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) &&
                     lseek(in->fd, 0, SEEK_CUR) == 0);
}

static int rewind_input(struct export_input *in)
{
    if (in->f)
        return sf_seek(in->f, 0, SF_SEEK_SET) == 0 ? 0 : -1;
    return lseek(in->fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/* One pass over the log; 0, or CLI_ERR (message printed). Damage counts in *damage. */
static int pass(struct job *j, struct export_input *in, void *buf, uint64_t *damage)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    int k;

    int rc = 0;

    sf_dec_init(&d, buf, SF_BLOCK_MAX);
    sf_dec_set_unpack(&d, (uint8_t *)buf + SF_BLOCK_MAX, SF_UNPACK_MEM);
    if (j->o->have_key)
        sf_dec_set_key(&d, sf_sodium_port(), j->o->key_pub, j->o->key_sec);
    j->dec = &d;
    while ((k = sf_dec_read(&d, read_input, in, &ev)) != SF_DEC_END) {
        if (k < 0) {
            cli_err("%s: read failed: %s", j->src, sf_strerror(k));
            rc = CLI_ERR;
            break;
        }
        if (handle(j, &ev)) {
            cli_err("%s: write failed: %s", j->x.out_name, strerror(errno));
            rc = CLI_ERR;
            break;
        }
    }
    *damage = sf_dec_stats(&d)->damage_events;
    sf_dec_wipe_keys(&d);
    j->dec = NULL;
    return rc;
}

int export_one(const struct export_opts *o, const char *src, struct export_input *in,
               FILE *out, const char *out_name, int check_match)
{
    struct job *j = calloc(1, sizeof *j);
    void *buf = malloc(SF_BLOCK_MAX + SF_UNPACK_MEM);   /* + compressed blocks */
    uint64_t damage = 0;
    int rc = 0;

    if (!j || !buf) {
        cli_err("out of memory");
        free(j);
        free(buf);
        return CLI_ERR;
    }
    j->o = o;
    j->src = src;
    memset(j->chan_ok, -1, sizeof j->chan_ok);
    j->x.out = out;
    j->x.out_name = out_name;
    j->x.seekable = out_seekable(out);
    j->x.relative = o->relative;
    j->x.blf_level = o->blf_level;
    j->x.mf4_level = o->mf4_level;
    j->x.isotp_pairs = o->pairs;
    j->x.n_isotp_pairs = o->npairs;
    j->x.fast_pgns = o->pgns;
    j->x.n_fast_pgns = o->npgns;
    j->x.meta = j->meta;
    for (unsigned c = 0; c < 256; c++)
        j->ifname[c] = "";
    j->x.ifname = j->ifname;
    j->x.wide_cols = j->wide_cols;

    /* The first pass: csv-wide's columns, ASC's and BLF's start time (optional: on a pipe
     * they make do with the first frames). */
    if (o->w->needs_columns && !input_seekable(in)) {
        cli_err("%s: csv-wide reads the log twice and cannot seek back in it", src);
        rc = CLI_ERR;
    } else if (o->w->needs_columns || (o->w->has_start && input_seekable(in))) {
        j->pass = 1;
        rc = pass(j, in, buf, &damage);
        if (!rc && rewind_input(in)) {
            cli_err("%s: cannot seek back to the start: %s", src, strerror(errno));
            rc = CLI_ERR;
        }
        for (unsigned c = 0; c < 256; c++)
            if (j->wide_seen[c])
                j->wide_cols[j->x.n_wide_cols++] = (uint8_t)c;
        j->have_start = 0;
        j->refused = 0;
    }
    if (!rc) {
        j->pass = 2;
        rc = pass(j, in, buf, &damage);
    }
    if (!rc && !j->began) {
        j->began = 1;
        if (!j->have_start)
            set_start(j, 0);
        if (o->w->begin(&j->x)) {
            cli_err("%s: write failed: %s", out_name, strerror(errno));
            rc = CLI_ERR;
        }
    }
    if (o->w->end(&j->x) && !rc) {
        cli_err("%s: write failed: %s", out_name, strerror(errno));
        rc = CLI_ERR;
    }
    report_skipped(j);
    if (j->x.clamped)
        cli_err("%s: %" PRIu64 " records older than the %s file's start time were put at it",
                src, j->x.clamped, o->w->name);
    if (j->malformed)
        cli_err("%s: %" PRIu64 " malformed CAN records skipped", src, j->malformed);
    /* What the output gets (docs/EXPORT.md, "Output files"): the export of a log, damaged
     * or not, once written to its end; never that of a file that is no log, nor of filters
     * that selected nothing. */
    in->complete = !rc && !j->not_log;
    (void)damage;
    if (!rc && report_damage(j))
        rc = CLI_ERR;
    else if (!rc && check_match && (o->nchan || o->nids) && j->records && !j->matched) {
        rc = report_no_match(j);
        in->complete = 0;
    }
    for (unsigned c = 0; c < 256; c++)
        if (*j->ifname[c])
            free((void *)(uintptr_t)j->ifname[c]);
    free(buf);
    free(j);
    return rc;
}
