/* streamfat export: decode a log file (docs/FORMAT.md) from a volume or from the host and
 * write it in another format (docs/EXPORT.md): candump -L, Vector ASC and BLF, python-can's
 * CSV, csv-wide, raw. This file has the sources (a host file, TARGET PATH, every log on a
 * volume with --all), the filters (channel, CAN id/mask, time range) and the decode loop;
 * the formats live in export_*.c behind struct export_writer (export.h).
 *
 * Memory stays flat: one decoder buffer (SF_BLOCK_MAX) and the writer's state. csv-wide
 * reads the log twice (the first pass finds its columns), so it needs a seekable input;
 * ASC and BLF read it twice when they can (the first pass finds the oldest timestamp, their
 * start time). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "formats/export.h"
#include "sources/log_sources.h"
#include "common/target.h"
#include "common/units.h"
#include "streamfat/decode.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHANNEL_FILTERS 32
#define MAX_DEPTH 32

static const char export_help[] =
"NAME\n"
"  streamfat export - decode log files into candump, ASC, BLF, CSV or raw\n"
"\n"
"SYNOPSIS\n"
"  streamfat export [OPTIONS] [-o OUT] [--partition N] TARGET PATH\n"
"  streamfat export [OPTIONS] [-o OUT] FILE\n"
"  streamfat export [OPTIONS] --all [--partition N] TARGET DIR\n"
"\n"
"DESCRIPTION\n"
"  Decodes the log file PATH on TARGET (an image file or block device, opened read-only),\n"
"  or the log file FILE on the host ('-' is standard input), and writes it to standard\n"
"  output or to OUT. With --all, every log file (*.SFL) on TARGET is exported into the\n"
"  host directory DIR, one output per log, named after the log (LOG00001.SFL ->\n"
"  DIR/LOG00001.asc; logs in subdirectories keep their path).\n"
"\n"
"  The log is read as a stream: memory use does not grow with its size.\n"
"\n"
"FORMATS (docs/EXPORT.md has the details)\n"
"  candump   candump -L lines: '(sec.usec) iface 123#1122', FD '123##1...', RTR '123#R'\n"
"  asc       Vector ASC, hex, event times from the measurement start in the header\n"
"  blf       Vector BLF: CAN, CAN FD and error-frame objects in log containers, zlib-\n"
"            compressed (--blf-compress 0 stores them uncompressed)\n"
"  csv       python-can's CSV layout (timestamp,arbitration_id,extended,remote,error,dlc,\n"
"            data with base64 data), read by can.CSVReader\n"
"  csv-wide  a timestamp column and one column per channel carrying SAMPLE or LATENCY\n"
"            records; one row per record\n"
"  raw       the bytes of the SAMPLE records, back to back\n"
"  mf4       ASAM MDF 4.11, CAN bus logging (CAN_DataFrame, ...), for asammdf, python-can\n"
"            and Vector's tools; -o FILE (a regular file: not a pipe); DZ blocks\n"
"            (--mf4-compress 0 writes plain DT blocks)\n"
"  Records a format has no form for are skipped and counted on standard error.\n"
"\n"
"  Damage is handled by the reader rules of docs/FORMAT.md: damaged, foreign, misplaced,\n"
"  malformed and repeated or out-of-order blocks are skipped (never a frame twice or out\n"
"  of order), everything the rules allow is exported, and one line on standard error\n"
"  sums it up ('damaged: invalid 1, missing 1').\n"
"\n"
"OPTIONS\n"
"  -f, --format FMT    candump (the default), asc, blf, csv, csv-wide, raw or mf4\n"
"  -o, --output OUT    write to OUT instead of standard output\n"
"  --all               export every log on TARGET into the directory DIR\n"
"  --channel CH        only channel CH: a number (0..255) or its name (can0); repeatable\n"
"  --id ID[/MASK]      only CAN frames whose id matches ID under MASK (hex; without a\n"
"                      mask the whole 11- or 29-bit id); '!ID/MASK' excludes; repeatable.\n"
"                      Error frames match on their error class. Other records pass.\n"
"  --from T, --to T    only records with from <= time < to. T is +DURATION from the log's\n"
"                      start (+1.5, +200ms, +10m), Unix seconds (1700000000.25) or UTC\n"
"                      date and time (2023-11-14T22:13:20.5Z)\n"
"  --absolute          timestamps since the Unix epoch (the default)\n"
"  --relative          timestamps from the log's start (candump, csv, csv-wide; ASC and\n"
"                      BLF always count from the start in their header)\n"
"  --blf-compress N    BLF containers: 0 stored, 1..9 zlib level (default 1: fastest;\n"
"                      6 makes them about 20% smaller at half the speed)\n"
"  --mf4-compress N    MF4 data: 0 plain DT blocks, 1..9 zlib level of transposed DZ\n"
"                      blocks (default 1)\n"
"  --partition N       use the Nth partition of TARGET (from 1)\n"
"  -h, --help          show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat export --format candump sd.img LOG00001.SFL > run1.log\n"
"  streamfat export -f blf -o run1.blf --channel can0 --from +10s --to +70s LOG00001.SFL\n"
"  streamfat export -f asc --id 100/700 --id !123 -o run1.asc sd.img LOG00001.SFL\n"
"  streamfat export -f csv --all sd.img exported/\n"
"\n"
"EXIT STATUS\n"
"  0 every file decoded cleanly, 1 damage was found (the intact part is still written) or\n"
"  an error, 2 wrong usage, 3 --channel/--id selected no record (the channels of the log\n"
"  are named on standard error; not with --all).\n";

enum {
    OPT_ALL = 256, OPT_CHANNEL, OPT_ID, OPT_FROM, OPT_TO, OPT_ABSOLUTE,
    OPT_RELATIVE, OPT_BLF_COMPRESS, OPT_MF4_COMPRESS,
};

static const struct option longopts[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    CLI_LONGOPT_PARTITION,
    { "all", no_argument, NULL, OPT_ALL },
    { "channel", required_argument, NULL, OPT_CHANNEL },
    { "id", required_argument, NULL, OPT_ID },
    { "from", required_argument, NULL, OPT_FROM },
    { "to", required_argument, NULL, OPT_TO },
    { "absolute", no_argument, NULL, OPT_ABSOLUTE },
    { "relative", no_argument, NULL, OPT_RELATIVE },
    { "blf-compress", required_argument, NULL, OPT_BLF_COMPRESS },
    { "mf4-compress", required_argument, NULL, OPT_MF4_COMPRESS },
    CLI_LONGOPTS_END,
};

static const struct export_writer *const writers[] = {
    &export_candump, &export_asc, &export_blf, &export_csv, &export_csv_wide, &export_raw,
    &export_mf4,
};

/* A time bound: +DURATION from the log's start, or absolute ns. */
struct tbound {
    int set, rel;
    uint64_t ns;
};

struct opts {
    const struct export_writer *w;
    const char *chan[MAX_CHANNEL_FILTERS];
    unsigned nchan;
    struct src_filter ids[SRC_MAX_FILTERS];
    unsigned nids;
    int id_accept;                 /* some --id accepts (else everything not rejected) */
    struct tbound from, to;
    int relative, blf_level, mf4_level;
};

/* Damage counts, in the order of docs/FORMAT.md's reader table and its verdict line. */
enum { DMG_UNWRITTEN, DMG_INVALID, DMG_FOREIGN, DMG_MISPLACED, DMG_MALFORMED, DMG_OUT_OF_SEQ,
       DMG_MISSING, DMG_DIRTY_TAIL, DMG_BAD_CAN, DMG_TRUNCATED, DMG_N };
static const char *const dmg_name[DMG_N] = {
    "unwritten", "invalid", "foreign", "misplaced", "malformed", "out-of-sequence", "missing",
    "dirty-tail", "bad-can", "truncated",
};
#define MAX_DAMAGE_LINES 10
#define EXIT_NO_MATCH 3            /* the filters selected nothing */

/* The export of one log file. */
struct job {
    const struct opts *o;
    const char *src;               /* names the input in messages */
    struct export_ctx x;
    char ifname[256][EXPORT_IFNAME_MAX];
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
    char meta[8192];               /* META records for the writer (export_ctx.meta) */
};

/* ---- time arguments ----------------------------------------------------------------- */

/* "1700000000.25" -> ns; 0 or -1. */
static int parse_unix(const char *s, uint64_t *ns)
{
    uint64_t sec = 0, frac = 0, scale = 100000000;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        if (sec > 18000000000ull)
            return -1;
        sec = sec * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++) {
            frac += (uint64_t)(*p - '0') * scale;
            scale /= 10;
        }
    }
    if (*p)
        return -1;
    *ns = sec * 1000000000u + frac;
    return 0;
}

/* "2023-11-14T22:13:20[.frac][Z]" (UTC) -> ns; 0 or -1. */
static int parse_iso(const char *s, uint64_t *ns)
{
    struct tm tm;
    const char *p;
    uint64_t frac = 0, scale = 100000000;
    time_t t;

    memset(&tm, 0, sizeof tm);
    p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++) {
            frac += (uint64_t)(*p - '0') * scale;
            scale /= 10;
        }
    if (*p == 'Z')
        p++;
    if (*p)
        return -1;
    t = timegm(&tm);
    if (t < 0)
        return -1;
    *ns = (uint64_t)t * 1000000000u + frac;
    return 0;
}

static int parse_tbound(const char *opt, const char *s, struct tbound *b)
{
    const char *why = "expects +DURATION, Unix seconds or YYYY-MM-DDTHH:MM:SS[.frac]Z";

    b->set = 1;
    b->rel = *s == '+';
    if (b->rel ? units_parse_duration(s + 1, &b->ns, &why) :
                 (parse_unix(s, &b->ns) && parse_iso(s, &b->ns)))
        return cli_usage("%s '%s': %s", opt, s, why);
    return 0;
}

/* ---- filters ------------------------------------------------------------------------ */

static int channel_pass(struct job *j, uint8_t ch)
{
    const struct opts *o = j->o;

    if (!o->nchan)
        return 1;
    if (j->chan_ok[ch] < 0) {
        j->chan_ok[ch] = 0;
        for (unsigned i = 0; i < o->nchan; i++) {
            uint64_t n;
            if ((!cli_parse_uint(o->chan[i], 255, &n) && n == ch) ||
                (j->ifname[ch][0] && strcmp(o->chan[i], j->ifname[ch]) == 0))
                j->chan_ok[ch] = 1;
        }
    }
    return j->chan_ok[ch];
}

static int id_pass(const struct opts *o, uint32_t id)
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
    const struct opts *o = j->o;

    j->have_start = 1;
    j->x.log_start = ts;
    j->from = o->from.set ? (o->from.rel ? ts + o->from.ns : o->from.ns) : 0;
    j->to = o->to.set ? (o->to.rel ? ts + o->to.ns : o->to.ns) : UINT64_MAX;
}

/* A CHANNEL record's name as an interface token: printable, no spaces, bounded. */
static void set_ifname(struct job *j, const struct sf_rec *r)
{
    char *d = j->ifname[r->channel];
    size_t n = 0;

    for (size_t i = 0; i < r->length && n < EXPORT_IFNAME_MAX - 1; i++) {
        uint8_t c = r->body[i];
        d[n++] = (c > 0x20 && c < 0x7F && c != '(' && c != ')' && c != '#' && c != ',') ?
                 (char)c : '_';
    }
    d[n] = '\0';
    j->chan_ok[r->channel] = -1;
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

    if (r->type == SF_REC_CHANNEL) {
        set_ifname(j, r);
        return 0;
    }
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

/* One event; returns -1 when the output cannot be written. */
static int handle(struct job *j, const struct sf_dec_event *ev)
{
    char where[64];

    if (ev->kind == SF_DEC_HEADER) {
        if (!j->have_start)
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
    return EXIT_NO_MATCH;
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

/* Where the log's bytes come from: a host descriptor or a file on a volume. */
struct input {
    int fd;                        /* -1 for a volume file */
    struct sf_file *f;
    int complete;                  /* export_one wrote the output to its end (damage or not) */
};

static sf_ssize_t read_input(void *ctx, void *buf, size_t n)
{
    struct input *in = ctx;

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

static int input_seekable(const struct input *in)
{
    struct stat st;

    return in->f || (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) &&
                     lseek(in->fd, 0, SEEK_CUR) == 0);
}

static int rewind_input(struct input *in)
{
    if (in->f)
        return sf_seek(in->f, 0, SF_SEEK_SET) == 0 ? 0 : -1;
    return lseek(in->fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/* One pass over the log; 0, or CLI_ERR (message printed). Damage counts in *damage. */
static int pass(struct job *j, struct input *in, void *buf, uint64_t *damage)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    int k;

    sf_dec_init(&d, buf, SF_BLOCK_MAX);
    while ((k = sf_dec_read(&d, read_input, in, &ev)) != SF_DEC_END) {
        if (k < 0) {
            cli_err("%s: read failed: %s", j->src, sf_strerror(k));
            return CLI_ERR;
        }
        if (handle(j, &ev)) {
            cli_err("%s: write failed: %s", j->x.out_name, strerror(errno));
            return CLI_ERR;
        }
    }
    *damage = sf_dec_stats(&d)->damage_events;
    return 0;
}

/* Export one log from `in` to `out`; 0 clean, CLI_ERR on damage or an error. */
static int export_one(const struct opts *o, const char *src, struct input *in, FILE *out,
                      const char *out_name, int check_match)
{
    struct job *j = calloc(1, sizeof *j);
    void *buf = malloc(SF_BLOCK_MAX);
    uint64_t damage = 0;
    struct stat st;
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
    j->x.seekable = fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode) &&
                    ftello(out) == 0;
    j->x.relative = o->relative;
    j->x.blf_level = o->blf_level;
    j->x.mf4_level = o->mf4_level;
    j->x.meta = j->meta;
    j->x.ifname = (const char (*)[EXPORT_IFNAME_MAX])j->ifname;
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
    in->complete = !rc;
    (void)damage;
    if (!rc && report_damage(j))
        rc = CLI_ERR;
    else if (!rc && check_match && (o->nchan || o->nids) && j->records && !j->matched)
        rc = report_no_match(j);
    free(buf);
    free(j);
    return rc;
}

/* ---- outputs ------------------------------------------------------------------------- */

/* A file output replaces an existing file only once it is complete (cli/outfile.c). */
static FILE *open_out(struct out_file *of, const char *path)
{
    if (out_open(of, path))
        return NULL;
    setvbuf(of->f, NULL, _IOFBF, 1 << 20);
    return of->f;
}

static int close_out(FILE *f, struct out_file *of, int complete, const char *name)
{
    if (f != stdout)
        return out_close(of, complete);
    int c = fflush(f);

    if (c) {
        cli_err("%s: write failed: %s", name, strerror(errno));
        return CLI_ERR;
    }
    return 0;
}

/* MF4 patches its header at the end: the output must be a regular file (standard output
 * redirected to one will do), never a pipe or a terminal. */
static int mf4_output_ok(const char *out_path)
{
    struct stat st;

    if (out_path ? (stat(out_path, &st) == 0 && !S_ISREG(st.st_mode)) :
                   (fstat(STDOUT_FILENO, &st) || !S_ISREG(st.st_mode))) {
        cli_err("mf4 needs a regular file to write to (it seeks back to finish the header): "
                "use -o FILE");
        return 0;
    }
    return 1;
}

/* ---- --all ----------------------------------------------------------------------------- */

static int is_log_name(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".SFL") == 0;
}

struct walk {
    const struct opts *o;
    struct sf_vol *vol;
    const char *outdir;
    unsigned logs;
    int rc;
};

static int export_vol_file(struct walk *w, const char *path, const char *rel)
{
    size_t n = strlen(rel);
    char *out_path = malloc(strlen(w->outdir) + n + 16);
    struct sf_file f;
    struct input in = { -1, &f, 0 };
    struct out_file of;
    FILE *out;
    int err, rc;

    if (!out_path) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    sprintf(out_path, "%s/%.*s.%s", w->outdir, (int)(n - 4), rel, w->o->w->ext);
    if ((err = sf_open(w->vol, &f, path, SF_O_RDONLY))) {
        cli_err("%s: %s", path, sf_strerror(err));
        free(out_path);
        return CLI_ERR;
    }
    if (!(out = open_out(&of, out_path))) {
        sf_close(&f);
        free(out_path);
        return CLI_ERR;
    }
    rc = export_one(w->o, path, &in, out, out_path, 0);
    if (close_out(out, &of, in.complete, out_path))
        rc = CLI_ERR;
    sf_close(&f);
    printf("%s -> %s%s\n", path, out_path, rc ? " (with errors)" : "");
    w->logs++;
    free(out_path);
    return rc;
}

/* Walk the volume directory `path` (host subdirectory `rel` under outdir). */
static void walk_dir(struct walk *w, const char *path, const char *rel, unsigned depth)
{
    struct sf_dir *d = malloc(sizeof *d);
    struct sf_stat *st = malloc(sizeof *st);
    int err, k;

    if (!d || !st) {
        cli_err("out of memory");
        w->rc = CLI_ERR;
        goto out;
    }
    if ((err = sf_opendir(w->vol, d, path))) {
        cli_err("%s: %s", *path ? path : "/", sf_strerror(err));
        w->rc = CLI_ERR;
        goto out;
    }
    while ((k = sf_readdir(d, st)) == 1) {
        char *sub, *subrel;
        if (strcmp(st->name, ".") == 0 || strcmp(st->name, "..") == 0)
            continue;
        sub = cli_path_join(path, st->name);
        subrel = *rel ? cli_path_join(rel, st->name) : strdup(st->name);
        if (!sub || !subrel) {
            cli_err("out of memory");
            w->rc = CLI_ERR;
        } else if (st->attr & SF_ATTR_DIR) {
            char *host = malloc(strlen(w->outdir) + strlen(subrel) + 2);
            if (depth >= MAX_DEPTH || !host) {
                cli_err("%s: directories nested too deep, skipped", sub);
                w->rc = CLI_ERR;
            } else {
                sprintf(host, "%s/%s", w->outdir, subrel);
                if (mkdir(host, 0777) && errno != EEXIST) {
                    cli_err("%s: %s", host, strerror(errno));
                    w->rc = CLI_ERR;
                } else {
                    walk_dir(w, sub, subrel, depth + 1);
                    rmdir(host);           /* only succeeds when no log was below */
                }
            }
            free(host);
        } else if (is_log_name(st->name) && export_vol_file(w, sub, subrel)) {
            w->rc = CLI_ERR;
        }
        free(sub);
        free(subrel);
    }
    if (k < 0) {
        cli_err("%s: %s", *path ? path : "/", sf_strerror(k));
        w->rc = CLI_ERR;
    }
    sf_closedir(d);
out:
    free(d);
    free(st);
}

static int export_all(const struct opts *o, const char *target, const char *outdir,
                      uint32_t partition)
{
    struct target t;
    struct walk w = { o, NULL, outdir, 0, 0 };

    if (mkdir(outdir, 0777) && errno != EEXIST) {
        cli_err("%s: %s", outdir, strerror(errno));
        return CLI_ERR;
    }
    if (target_open(&t, target, TARGET_RDONLY, partition))
        return CLI_ERR;
    w.vol = &t.vol;
    walk_dir(&w, "/", "", 0);
    if (target_close(&t))
        w.rc = CLI_ERR;
    if (!w.logs)
        fprintf(stderr, "export: no log files (*.SFL) on %s\n", target);
    return w.rc;
}

/* ---- the command ----------------------------------------------------------------------- */

int cmd_export(int argc, char **argv)
{
    struct opts o;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":f:o:h", longopts, export_help,
                                  CLI_OPT_PARTITION);
    const char *out_path = NULL;
    uint32_t partition;
    int c, rc, nargs, all = 0, complete = 0;
    uint64_t v;
    struct out_file of;
    FILE *out;

    memset(&o, 0, sizeof o);
    o.w = &export_candump;
    o.blf_level = 1;
    o.mf4_level = 1;
    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 'f': {
            unsigned i;
            for (i = 0; i < sizeof writers / sizeof writers[0]; i++)
                if (strcmp(optarg, writers[i]->name) == 0)
                    break;
            if (i == sizeof writers / sizeof writers[0])
                return cli_usage("unknown format '%s' (known: candump, asc, blf, csv, "
                                 "csv-wide, raw, mf4)", optarg);
            o.w = writers[i];
            break;
        }
        case 'o':
            out_path = optarg;
            break;
        case OPT_ALL:
            all = 1;
            break;
        case OPT_CHANNEL:
            if (o.nchan == MAX_CHANNEL_FILTERS)
                return cli_usage("at most %d --channel options", MAX_CHANNEL_FILTERS);
            if (!*optarg || strlen(optarg) >= EXPORT_IFNAME_MAX)
                return cli_usage("--channel '%s': expects a channel number or name", optarg);
            o.chan[o.nchan++] = optarg;
            break;
        case OPT_ID:
            if (o.nids == SRC_MAX_FILTERS)
                return cli_usage("at most %d --id options", SRC_MAX_FILTERS);
            if (src_parse_filter(optarg, &o.ids[o.nids]))
                return cli_usage("--id '%s': expects hex ID[/MASK] or !ID[/MASK]", optarg);
            if (!o.ids[o.nids].reject)
                o.id_accept = 1;
            o.nids++;
            break;
        case OPT_FROM:
            if (parse_tbound("--from", optarg, &o.from))
                return CLI_USAGE;
            break;
        case OPT_TO:
            if (parse_tbound("--to", optarg, &o.to))
                return CLI_USAGE;
            break;
        case OPT_ABSOLUTE:
            o.relative = 0;
            break;
        case OPT_RELATIVE:
            o.relative = 1;
            break;
        case OPT_BLF_COMPRESS:
            if (cli_parse_uint(optarg, 9, &v))
                return cli_usage("--blf-compress '%s': expects 0 (stored) to 9", optarg);
            o.blf_level = (int)v;
            break;
        case OPT_MF4_COMPRESS:
            if (cli_parse_uint(optarg, 9, &v))
                return cli_usage("--mf4-compress '%s': expects 0 (plain) to 9", optarg);
            o.mf4_level = (int)v;
            break;
        }
    }
    if (c < 0)
        return cl.status;
    partition = cl.partition;
    if (o.relative && (o.w->has_start || o.w == &export_mf4))
        return cli_usage("--relative does not apply to %s: its times always count from the "
                         "start time in its header", o.w->name);
    nargs = argc - optind;
    if (all) {
        if (nargs != 2)
            return cli_usage("--all needs TARGET DIR");
        if (out_path)
            return cli_usage("--all writes into DIR; -o does not apply");
        return export_all(&o, argv[optind], argv[optind + 1], partition);
    }
    if (nargs < 1)
        return cli_usage("missing FILE, or TARGET PATH");
    if (nargs > 2)
        return cli_usage("unexpected argument '%s'", argv[optind + 2]);
    if (nargs == 1 && partition)
        return cli_usage("--partition needs TARGET PATH");

    out = stdout;
    if (o.w == &export_mf4 && !mf4_output_ok(out_path))
        return CLI_ERR;
    if (out_path && !(out = open_out(&of, out_path)))
        return CLI_ERR;
    if (!out_path)
        setvbuf(out, NULL, _IOFBF, 1 << 20);

    if (nargs == 1) {
        const char *file = argv[optind];
        int is_stdin = strcmp(file, "-") == 0;
        struct input in = { is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC), NULL, 0 };
        if (in.fd < 0) {
            cli_err("%s: %s", file, strerror(errno));
            rc = CLI_ERR;
        } else {
            rc = export_one(&o, is_stdin ? "standard input" : file, &in, out,
                            out_path ? out_path : "standard output", 1);
            complete = in.complete;
            if (!is_stdin)
                close(in.fd);
        }
    } else {
        struct target t;
        struct sf_file f;
        struct input in = { -1, &f, 0 };
        const char *path = argv[optind + 1];
        int err;
        if (target_open(&t, argv[optind], TARGET_RDONLY, partition)) {
            rc = CLI_ERR;
        } else {
            if ((err = sf_open(&t.vol, &f, path, SF_O_RDONLY))) {
                cli_err("%s: %s: %s", t.path, path, sf_strerror(err));
                rc = CLI_ERR;
            } else {
                rc = export_one(&o, path, &in, out, out_path ? out_path : "standard output",
                                1);
                complete = in.complete;
                sf_close(&f);
            }
            if (target_close(&t))
                rc = CLI_ERR;
        }
    }
    if (close_out(out, &of, complete, out_path ? out_path : "standard output"))
        rc = CLI_ERR;
    return rc;
}
