/* streamfat export: decode a log file (docs/FORMAT.md) from a volume or from the host and
 * write it in another format (docs/EXPORT.md): candump -L, Vector ASC and BLF, python-can's
 * CSV, csv-wide, raw, MF4. This file has the options and the inputs and outputs (a host
 * file, TARGET PATH, every log on a volume with --all); the filters and the decode loop are
 * formats/export.c (export_one), the formats export_*.c behind struct export_writer
 * (export.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "formats/export.h"
#include "sources/log_sources.h"
#include "common/target.h"
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include "common/keyfile.h"
#include "streamfat/cipher_sodium.h"
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 32

static const char export_help[] =
"NAME\n"
"  streamfat export - decode log files into candump, ASC, BLF, CSV, MF4 or raw\n"
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
"  An existing OUT (or file in DIR) is replaced only by a finished export of a log,\n"
"  damaged or not: when the input is no log, the filters match nothing or anything\n"
"  fails, it stays as it was. OUT naming the input itself (or TARGET) is refused.\n"
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
"            and Vector's tools; DZ blocks (--mf4-compress 0 writes plain DT blocks).\n"
"            Into a pipe or a file opened with >> it is built in $TMPDIR first\n"
"  messages  what spans frames, reassembled (docs/DECODE.md): ISO-TP (the OBD-II and UDS\n"
"            ids 0x7DF, 0x7E0-0x7EF, 0x18DA/0x18DB by themselves, other pairs with\n"
"            --isotp-pair), J1939 transport (BAM, RTS/CTS, ETP), NMEA 2000 fast\n"
"            packets (--fast-pgn); one JSON object a line: protocol, status, ids,\n"
"            times (ns), length, data hex; broken messages with what arrived and\n"
"            their status\n"
"  messages-csv  the same fields as CSV under a header line (null: an empty field)\n"
"  uds       the UDS (ISO 14229) messages among the ISO-TP ones, decoded: service,\n"
"            positive / negative (NRC by name), sub-function, DID and data, DTCs with\n"
"            status (ReadDTCInformation), the request's time for a response\n"
"  obd       the OBD-II (SAE J1979) answers: mode 01/02 PIDs as values with units,\n"
"            supported-PID lists, mode 03/07/0A DTCs (P0301), mode 09 VIN\n"
"  j1939     J1939 messages (single frames; BAM, RTS-CTS, ETP reassembled) with PGN,\n"
"            priority, source and destination; DM1 / DM2 lamps and DTCs (SPN, FMI, OC)\n"
"            uds, obd, j1939: one JSON object a line (docs/EXPORT.md, docs/DECODE.md)\n"
"  Records a format has no form for are skipped and counted on standard error.\n"
"\n"
"  Damage is handled by the reader rules of docs/FORMAT.md: damaged, foreign, misplaced,\n"
"  malformed and repeated or out-of-order blocks are skipped (never a frame twice or out\n"
"  of order), everything the rules allow is exported, and one line on standard error\n"
"  sums it up ('damaged: invalid 1, out-of-sequence 2').\n"
"\n"
"OPTIONS\n"
"  -f, --format FMT    candump (the default), asc, blf, csv, csv-wide, raw, mf4,\n"
"                      messages, messages-csv, uds, obd or j1939\n"
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
"  --isotp-pair A:B[:ext|:mixed]\n"
"                      messages(-csv), uds, obd: ISO-TP on hex ids A and B (data on one,\n"
"                      its flow control on the other; 29-bit when one is above 7FF); ext,\n"
"                      mixed: the first data byte is an address; repeatable\n"
"  --fast-pgn PGN      messages(-csv): NMEA 2000 fast packets of PGN; repeatable\n"
"  --key FILE          the secret key (NAME.key from 'streamfat keygen') that opens\n"
"                      sealed logs (log --encrypt-to). A sealed log without it, or sealed\n"
"                      to another key, is refused in one line naming the key id it wants\n"
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
    OPT_RELATIVE, OPT_BLF_COMPRESS, OPT_MF4_COMPRESS, OPT_ISOTP_PAIR, OPT_FAST_PGN, OPT_KEY,
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
    { "isotp-pair", required_argument, NULL, OPT_ISOTP_PAIR },
    { "fast-pgn", required_argument, NULL, OPT_FAST_PGN },
    { "key", required_argument, NULL, OPT_KEY },
    CLI_LONGOPTS_END,
};

static const struct export_writer *const writers[] = {
    &export_candump, &export_asc, &export_blf, &export_csv, &export_csv_wide, &export_raw,
    &export_mf4, &export_messages, &export_messages_csv, &export_uds, &export_obd,
    &export_j1939,
};

/* --isotp-pair A:B[:ext|:mixed]: hex ids, 29-bit when either is above 0x7FF. */
static int parse_pair(const char *arg, struct sf_isotp_pair *q)
{
    char buf[64], *b, *mode, *e1, *e2;
    unsigned long a, c;

    if (strlen(arg) >= sizeof buf)
        return -1;
    strcpy(buf, arg);
    b = strchr(buf, ':');
    if (!b)
        return -1;
    *b++ = '\0';
    mode = strchr(b, ':');
    if (mode)
        *mode++ = '\0';
    a = strtoul(buf, &e1, 16);
    c = strtoul(b, &e2, 16);
    if (!*buf || !*b || *e1 || *e2 || a > 0x1FFFFFFF || c > 0x1FFFFFFF || a == c)
        return -1;
    memset(q, 0, sizeof *q);
    q->id_a = (uint32_t)a;
    q->id_b = (uint32_t)c;
    q->eff = a > 0x7FF || c > 0x7FF;
    q->channel = SF_PROTO_ANY_CHANNEL;
    if (!mode || !strcmp(mode, "normal"))
        q->mode = SF_ISOTP_NORMAL;
    else if (!strcmp(mode, "ext"))
        q->mode = SF_ISOTP_EXTENDED;
    else if (!strcmp(mode, "mixed"))
        q->mode = SF_ISOTP_MIXED;
    else
        return -1;
    return 0;
}

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

static int parse_tbound(const char *opt, const char *s, struct export_tbound *b)
{
    const char *why = "expects +DURATION, Unix seconds or YYYY-MM-DDTHH:MM:SS[.frac]Z";

    b->set = 1;
    b->rel = *s == '+';
    if (b->rel ? units_parse_duration(s + 1, &b->ns, &why) :
                 (parse_unix(s, &b->ns) && parse_iso(s, &b->ns)))
        return cli_usage("%s '%s': %s", opt, s, why);
    return 0;
}

/* ---- outputs ------------------------------------------------------------------------- */

/* A file output replaces an existing file only when the export gives a result the user
 * wants (in.complete: docs/EXPORT.md, "Output files"), through cli/common/outfile.c. */
static FILE *open_out(struct out_file *of, const char *path, const struct stat *input)
{
    if (out_open(of, path, input))
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
        if (complete)            /* else the failure has been reported already */
            cli_err("%s: write failed: %s", name, strerror(errno));
        return CLI_ERR;
    }
    return 0;
}

/* MF4 seeks back to finish its header (export_mf4.c). Into an output that cannot take
 * that (a pipe, a terminal, a file opened for appending or written into already), it is
 * built in an unlinked temporary file in $TMPDIR (else /tmp) and copied out once complete:
 * the output gets the same bytes as `-o FILE` would, or nothing. */
static const char *spool_dir(void)
{
    const char *dir = getenv("TMPDIR");

    return dir && *dir ? dir : "/tmp";
}

static FILE *open_spool(void)
{
    const char *dir = spool_dir();
    char *p;
    int fd;
    FILE *f = NULL;

    if (!(p = malloc(strlen(dir) + 32))) {
        cli_err("out of memory");
        return NULL;
    }
    sprintf(p, "%s/streamfat-mf4.XXXXXX", dir);
    if ((fd = mkstemp(p)) < 0 || !(f = fdopen(fd, "w+"))) {
        cli_err("%s: cannot make a temporary file to build the MF4 in (it seeks back to "
                "finish its header; -o FILE needs none): %s", dir, cli_errno_text(errno));
        if (fd >= 0)
            close(fd);
    }
    if (fd >= 0)
        unlink(p);
    free(p);
    if (f)
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

static int copy_spool(FILE *spool, FILE *out, const char *out_name)
{
    char buf[1 << 16];
    size_t n;

    if (fflush(spool) || fseeko(spool, 0, SEEK_SET)) {
        cli_err("%s: cannot read back the temporary MF4: %s", out_name, strerror(errno));
        return CLI_ERR;
    }
    while ((n = fread(buf, 1, sizeof buf, spool)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            cli_err("%s: write failed: %s", out_name, strerror(errno));
            return CLI_ERR;
        }
    if (ferror(spool)) {
        cli_err("%s: cannot read back the temporary MF4: %s", out_name, strerror(errno));
        return CLI_ERR;
    }
    return 0;
}

/* export_one into `out`, through a spool when the format must seek and `out` cannot. */
static int export_to(const struct export_opts *o, const char *src, struct export_input *in,
                     FILE *out, const char *out_name, int check_match)
{
    FILE *spool = NULL;
    char spool_name[PATH_MAX + 64];
    int rc;

    if (o->w == &export_mf4 && !out_seekable(out) && !(spool = open_spool()))
        return CLI_ERR;
    /* A write that fails while the MF4 is built (TMPDIR full) is the temporary file's, not
     * the output's: the message names where the room is missing. */
    snprintf(spool_name, sizeof spool_name, "the temporary MF4 in %s", spool_dir());
    rc = export_one(o, src, in, spool ? spool : out, spool ? spool_name : out_name,
                    check_match);
    if (spool) {
        if (in->complete && copy_spool(spool, out, out_name)) {
            in->complete = 0;
            rc = CLI_ERR;
        }
        fclose(spool);
    }
    return rc;
}

/* ---- --all ----------------------------------------------------------------------------- */

static int is_log_name(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".SFL") == 0;
}

struct walk {
    const struct export_opts *o;
    struct sf_vol *vol;
    const char *outdir;
    const struct stat *image;      /* no output file may be the image itself */
    unsigned logs, matched;        /* logs seen; logs the filters selected something from */
    int rc;
};

static int export_vol_file(struct walk *w, const char *path, const char *rel)
{
    size_t n = strlen(rel);
    char *out_path = malloc(strlen(w->outdir) + n + 16);
    struct sf_file f;
    struct export_input in = { -1, &f, 0 };
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
    w->logs++;
    if (!(out = open_out(&of, out_path, w->image))) {
        sf_close(&f);
        free(out_path);
        return CLI_ERR;
    }
    rc = export_to(w->o, path, &in, out, out_path, 1);
    if (close_out(out, &of, in.complete, out_path))
        rc = CLI_ERR;
    sf_close(&f);
    if (rc == EXPORT_NO_MATCH) {
        /* one log of many without a match is no error; none at all is (export_all) */
        printf("%s -> nothing matched, %s not written\n", path, out_path);
        rc = 0;
    } else {
        w->matched++;
        printf("%s -> %s%s\n", path, out_path, rc ? " (with errors)" : "");
    }
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

static int export_all(const struct export_opts *o, const char *target, const char *outdir,
                      uint32_t partition)
{
    struct target t;
    struct stat image;
    struct walk w = { o, NULL, outdir, stat(target, &image) ? NULL : &image, 0, 0, 0 };

    struct stat ost;
    if (mkdir(outdir, 0777) && errno != EEXIST) {
        cli_err("%s: %s", outdir, strerror(errno));
        return CLI_ERR;
    }
    if (stat(outdir, &ost) || !S_ISDIR(ost.st_mode)) {
        /* before: a regular file here let the walk run and say "no logs" */
        cli_err("%s: not a directory (--all writes one file per log into a directory)",
                outdir);
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
    else if (!w.matched && !w.rc) {
        cli_err("%s: no record of any log matched the filters", target);
        return EXPORT_NO_MATCH;
    }
    return w.rc;
}

/* ---- the command ----------------------------------------------------------------------- */

/* --key FILE: read once, before any log (a bad key file is one line, nothing exported). */
static int load_key(struct export_opts *o)
{
    if (!o->key_path)
        return 0;
    if (keyfile_read_secret(o->key_path, o->key_sec, o->key_pub))
        return CLI_ERR;
    o->have_key = 1;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    struct export_opts o;
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
                                 "csv-wide, raw, mf4, messages, messages-csv, uds, obd, "
                                 "j1939)", optarg);
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
            if (o.nchan == EXPORT_MAX_CHANNEL_FILTERS)
                return cli_usage("at most %d --channel options", EXPORT_MAX_CHANNEL_FILTERS);
            if (!*optarg)
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
        case OPT_ISOTP_PAIR:
            if (o.npairs == EXPORT_MAX_PAIRS)
                return cli_usage("at most %d --isotp-pair options", EXPORT_MAX_PAIRS);
            if (parse_pair(optarg, &o.pairs[o.npairs]))
                return cli_usage("--isotp-pair '%s': expects hex ID:ID, then :ext or :mixed "
                                 "for those addressings", optarg);
            o.npairs++;
            break;
        case OPT_FAST_PGN:
            if (o.npgns == EXPORT_MAX_PGNS)
                return cli_usage("at most %d --fast-pgn options", EXPORT_MAX_PGNS);
            if (cli_parse_uint(optarg, 0x3FFFF, &v))
                return cli_usage("--fast-pgn '%s': expects a PGN (0..262143)", optarg);
            o.pgns[o.npgns++] = (uint32_t)v;
            break;
        case OPT_KEY:
            o.key_path = optarg;
            break;
        }
    }
    if (c < 0)
        return cl.status;
    int msgs = o.w == &export_messages || o.w == &export_messages_csv;
    if (o.npgns && !msgs)
        return cli_usage("--fast-pgn applies to --format messages and messages-csv only");
    if (o.npairs && !msgs && o.w != &export_uds && o.w != &export_obd)
        return cli_usage("--isotp-pair applies to --format messages, messages-csv, uds and "
                         "obd only");
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
        if (load_key(&o))
            return CLI_ERR;
        rc = export_all(&o, argv[optind], argv[optind + 1], partition);
        sf_sodium_wipe(o.key_sec, sizeof o.key_sec);
        return rc;
    }
    if (nargs < 1)
        return cli_usage("missing FILE, or TARGET PATH");
    if (nargs > 2)
        return cli_usage("unexpected argument '%s'", argv[optind + 2]);
    if (nargs == 1 && partition)
        return cli_usage("--partition needs TARGET PATH");
    if (load_key(&o))
        return CLI_ERR;

    /* The input's identity, so that -o naming it (or the image holding it) is refused. */
    struct stat input;
    const char *inpath = argv[optind];
    int have_input = strcmp(inpath, "-") == 0 ? fstat(STDIN_FILENO, &input) == 0 :
                                                stat(inpath, &input) == 0;
    out = stdout;
    if (out_path && !(out = open_out(&of, out_path, have_input ? &input : NULL)))
        return CLI_ERR;
    if (!out_path)
        setvbuf(out, NULL, _IOFBF, 1 << 20);

    if (nargs == 1) {
        const char *file = argv[optind];
        int is_stdin = strcmp(file, "-") == 0;
        struct export_input in = {
            is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC), NULL, 0
        };
        struct stat ist;
        if (in.fd >= 0 && !is_stdin && fstat(in.fd, &ist) == 0 && S_ISDIR(ist.st_mode)) {
            close(in.fd);                 /* read() would say "I/O error" (EISDIR) */
            in.fd = -1;
            errno = EISDIR;
        }
        if (in.fd < 0) {
            cli_open_err(file, errno);
            rc = CLI_ERR;
        } else {
            rc = export_to(&o, is_stdin ? "standard input" : file, &in, out,
                           out_path ? out_path : "standard output", 1);
            complete = in.complete;
            if (!is_stdin)
                close(in.fd);
        }
    } else {
        struct target t;
        struct sf_file f;
        struct export_input in = { -1, &f, 0 };
        const char *path = argv[optind + 1];
        int err;
        if (target_open(&t, argv[optind], TARGET_RDONLY, partition)) {
            rc = CLI_ERR;
        } else {
            if ((err = sf_open(&t.vol, &f, path, SF_O_RDONLY))) {
                cli_err("%s: %s: %s", t.path, path, sf_strerror(err));
                rc = CLI_ERR;
            } else {
                rc = export_to(&o, path, &in, out, out_path ? out_path : "standard output",
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
    sf_sodium_wipe(o.key_sec, sizeof o.key_sec);
    return rc;
}
