/* streamfat report: one self-contained HTML page about a recording (docs/REPORT.md). This
 * file has the options and the inputs (a volume's logs, a host folder of logs, single log
 * files) and the output; the scan is report/report_scan.c, the page report/report_html.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "report/report.h"
#include "common/target.h"
#include "common/keyfile.h"
#include "streamfat/cipher_sodium.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 32
#define MAX_BITRATES 256
#define MAX_DBC 16

static const char report_help[] =
"NAME\n"
"  streamfat report - one HTML page showing what a recording holds\n"
"\n"
"SYNOPSIS\n"
"  streamfat report [OPTIONS] [-o OUT] [--partition N] TARGET [LOG...]\n"
"  streamfat report [OPTIONS] [-o OUT] DIR [LOG...]\n"
"  streamfat report [OPTIONS] [-o OUT] FILE...\n"
"\n"
"DESCRIPTION\n"
"  Reads the logs of a recording and writes one self-contained HTML file (OUT, by\n"
"  default report.html) that opens offline in any browser: nothing in it is fetched.\n"
"  TARGET is an image or a block device (opened read-only): its logs LOG (volume\n"
"  paths), or every *.SFL file on it. DIR is a host folder: its files LOG, or every\n"
"  *.SFL file in it. FILE... are log files on the host. Logs are read in name order and\n"
"  shown on one time axis.\n"
"\n"
"  The page shows: the recording at a glance (files, start, end, duration, device id,\n"
"  channels, records, DROP totals, damaged blocks, rotations, checkpoints, triggers,\n"
"  annotations) and a timeline of those events; per channel frames per second, bus\n"
"  load and error frames over time; the busiest ids (count, rate, period, jitter, first\n"
"  and last seen), sortable; for latency: logs the histogram and the worst events.\n"
"  Wheel zooms, dragging pans, hovering shows exact values; DROP intervals are shaded.\n"
"\n"
"  The series are reduced to at most 4096 columns of [min, max] per zoom level, so the\n"
"  page stays a few MiB for a log of any size and no spike is hidden. Memory use does\n"
"  not grow with the logs' size.\n"
"\n"
"  Damaged logs are read by the reader rules of docs/FORMAT.md: the page names what was\n"
"  damaged (blocks, reasons) and shows the rest.\n"
"\n"
"OPTIONS\n"
"  -o, --output OUT    the HTML file (default report.html); an existing OUT is replaced\n"
"                      only by a complete report\n"
"  --bitrate NAME=RATE[/DRATE]\n"
"                      the bitrate of channel NAME for its bus load: RATE the nominal\n"
"                      (arbitration) rate, DRATE the CAN FD data rate (frames with BRS);\n"
"                      500k, 1M, 250000 (bit/s; k = 1000, M = 10^6). Repeatable. A channel\n"
"                      not named is taken at 500k/2M, and the page says it is assumed\n"
"  --dbc FILE          decode DBC signals and plot them, one panel each on the shared\n"
"                      time axis with their units; repeatable. Done by the Python package\n"
"                      (python3 -m streamfat signals; STREAMFAT_PYTHON names another\n"
"                      interpreter), which needs cantools: pip install './python[dbc]'\n"
"  --signal NAME       the signals to plot (NAME or MESSAGE.NAME; repeatable); without\n"
"                      it, up to six varying signals of the busiest messages\n"
"  --key FILE          the secret key (NAME.key of streamfat keygen) of sealed logs; a\n"
"                      sealed log without it is not read, with a line naming its key id\n"
"  --partition N       use the Nth partition of TARGET (from 1)\n"
"  -h, --help          show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat report -o drive.html sd.img\n"
"  streamfat report --bitrate can0=500k --bitrate can1=500k/2M -o run.html sd.img\n"
"  streamfat report -o lat.html LOG00001.SFL\n"
"  streamfat report --dbc car.dbc --signal RPM --signal Speed -o drive.html sd.img\n"
"\n"
"EXIT STATUS\n"
"  0 the report is written, 1 an error, no log to show (nothing written), or damage\n"
"  was found (the report is written and says what), 2 wrong usage.\n";

enum { OPT_BITRATE = 256, OPT_DBC, OPT_SIGNAL, OPT_KEY };

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "bitrate", required_argument, NULL, OPT_BITRATE },
    { "dbc", required_argument, NULL, OPT_DBC },
    { "signal", required_argument, NULL, OPT_SIGNAL },
    { "key", required_argument, NULL, OPT_KEY },
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

/* "500k", "2M", "250000", "1.5M" -> bit/s (powers of 1000, as every CAN tool writes them). */
static int parse_bps(const char *s, uint64_t *out)
{
    char *end;
    double v;

    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1e3, end++;
    else if (*end == 'M')
        v *= 1e6, end++;
    if (strcmp(end, "") && strcmp(end, "bit/s") && strcmp(end, "bps"))
        return -1;
    if (v < 1000 || v > 100e6 || v != (double)(uint64_t)v)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_bitrate(const char *arg, struct rpt_bitrate *b)
{
    const char *eq = strchr(arg, '='), *sl;
    char rate[64];

    memset(b, 0, sizeof b[0]);
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof b->name)
        return -1;
    memcpy(b->name, arg, (size_t)(eq - arg));
    sl = strchr(eq + 1, '/');
    if (sl && (size_t)(sl - eq - 1) < sizeof rate) {
        memcpy(rate, eq + 1, (size_t)(sl - eq - 1));
        rate[sl - eq - 1] = '\0';
        return parse_bps(rate, &b->nominal) || parse_bps(sl + 1, &b->data) ? -1 : 0;
    }
    return sl ? -1 : parse_bps(eq + 1, &b->nominal);
}

/* ---- inputs -------------------------------------------------------------------------- */

static int is_log_name(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".SFL") == 0;
}

struct names {
    char **v;
    unsigned n, cap;
};

static int names_add(struct names *l, char *s)
{
    if (!s)
        return -1;
    if (l->n == l->cap) {
        unsigned cap = l->cap ? l->cap * 2 : 32;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(s);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

static void names_free(struct names *l)
{
    for (unsigned i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.SFL under the volume directory path, recursively. */
static int vol_walk(struct sf_vol *vol, const char *path, unsigned depth, struct names *l)
{
    struct sf_dir d;
    struct sf_stat *st = malloc(sizeof *st);
    int k, rc = 0;

    if (!st)
        return -1;
    if ((k = sf_opendir(vol, &d, path))) {
        cli_err("%s: %s", *path ? path : "/", sf_strerror(k));
        free(st);
        return CLI_ERR;
    }
    while ((k = sf_readdir(&d, st)) == 1 && !rc) {
        if (!strcmp(st->name, ".") || !strcmp(st->name, ".."))
            continue;
        char *sub = cli_path_join(path, st->name);
        if (!sub) {
            rc = -1;
        } else if (st->attr & SF_ATTR_DIR) {
            if (depth < MAX_DEPTH)
                rc = vol_walk(vol, sub, depth + 1, l);
            free(sub);
        } else if (is_log_name(st->name)) {
            rc = names_add(l, sub);
        } else {
            free(sub);
        }
    }
    if (k < 0 && !rc) {
        cli_err("%s: %s", *path ? path : "/", sf_strerror(k));
        rc = CLI_ERR;
    }
    sf_closedir(&d);
    free(st);
    return rc;
}

static int host_dir(const char *dir, struct names *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d) {
        cli_open_err(dir, errno);
        return CLI_ERR;
    }
    while ((e = readdir(d)))
        if (is_log_name(e->d_name) && names_add(l, cli_path_join(dir, e->d_name))) {
            closedir(d);
            return -1;
        }
    closedir(d);
    return 0;
}

/* A host file that is a log (its first bytes are a block header, or it is named *.SFL),
 * not a volume. */
static int looks_like_log(const char *path)
{
    unsigned char m[4] = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, m, 4) : -1;

    if (fd >= 0)
        close(fd);
    if (n == 4 && m[0] == 'S' && m[1] == 'F' && m[2] == 'L' && m[3] == 'B')
        return 1;
    return is_log_name(path);
}

static int scan_host(struct rpt *r, const char *path)
{
    struct rpt_input in = { open(path, O_RDONLY | O_CLOEXEC), NULL };
    struct stat st;
    int rc;

    if (in.fd < 0 || fstat(in.fd, &st) || S_ISDIR(st.st_mode)) {
        int e = in.fd < 0 ? errno : EISDIR;
        if (in.fd >= 0)
            close(in.fd);
        cli_open_err(path, e);
        return CLI_ERR;
    }
    rc = rpt_scan(r, path, &in, (uint64_t)st.st_size);
    close(in.fd);
    return rc;
}

static int scan_vol(struct rpt *r, struct sf_vol *vol, const char *path)
{
    struct sf_file f;
    struct sf_stat st;
    struct rpt_input in = { -1, &f };
    int err, rc;

    if ((err = sf_stat(vol, path, &st)) || (err = sf_open(vol, &f, path, SF_O_RDONLY))) {
        cli_err("%s: %s", path, sf_strerror(err));
        return CLI_ERR;
    }
    rc = rpt_scan(r, path, &in, st.size);
    sf_close(&f);
    return rc;
}

/* ---- the command ---------------------------------------------------------------------- */

struct job {
    const char *target;
    char **logs;
    int nlogs;
    uint32_t partition;
    struct stat input;
    int have_input;
    struct names read;             /* the logs read, in order (for --dbc) */
    int on_volume;
};

/* Read every log into r; 0, or CLI_ERR (said). */
static int gather(struct job *j, struct rpt *r)
{
    struct names l = { 0 };
    struct stat st;
    int rc = 0, vol = 0;
    struct target t;

    if (stat(j->target, &st)) {
        cli_open_err(j->target, errno);
        return CLI_ERR;
    }
    j->input = st;
    j->have_input = 1;
    if (j->partition && (S_ISDIR(st.st_mode) ||
                         (S_ISREG(st.st_mode) && looks_like_log(j->target))))
        return cli_usage("--partition applies to an image or a device, not to log files");
    if (S_ISDIR(st.st_mode)) {
        for (int i = 0; i < j->nlogs && !rc; i++)
            rc = names_add(&l, cli_path_join(j->target, j->logs[i]));
        if (!j->nlogs && !rc)
            rc = host_dir(j->target, &l);
        if (!rc && !l.n) {
            cli_err("%s: no log files (*.SFL) in this folder", j->target);
            rc = CLI_ERR;
        }
    } else if (S_ISREG(st.st_mode) && looks_like_log(j->target)) {
        rc = names_add(&l, strdup(j->target));
        for (int i = 0; i < j->nlogs && !rc; i++)
            rc = names_add(&l, strdup(j->logs[i]));
    } else {
        if (target_open(&t, j->target, TARGET_RDONLY, j->partition))
            return CLI_ERR;
        vol = 1;
        for (int i = 0; i < j->nlogs && !rc; i++)
            rc = names_add(&l, strdup(j->logs[i]));
        if (!j->nlogs && !rc)
            rc = vol_walk(&t.vol, "/", 0, &l);
        if (!rc && !l.n) {
            cli_err("%s: no log files (*.SFL) on this volume", j->target);
            rc = CLI_ERR;
        }
    }
    if (rc < 0) {
        cli_err("out of memory");
        rc = CLI_ERR;
    }
    if (!rc && !j->nlogs)
        qsort(l.v, l.n, sizeof *l.v, by_name);
    for (unsigned i = 0; i < l.n && !rc; i++) {
        int k = vol ? scan_vol(r, &t.vol, l.v[i]) : scan_host(r, l.v[i]);
        if (k && r->oom)
            rc = CLI_ERR;
        else if (k)
            rc = CLI_ERR;
    }
    if (vol && target_close(&t))
        rc = CLI_ERR;
    j->read = l;
    j->on_volume = vol;
    if (!rc && !r->logs_read) {
        /* why not, file by file, where a file says (a sealed log without its key) */
        for (unsigned i = 0; i < r->nfiles; i++)
            if (r->files[i].refused && r->files[i].error[0])
                cli_err("%s: not read: %s", r->files[i].name, r->files[i].error);
        cli_err("%s: no readable log among %u file%s", j->target, r->nfiles,
                r->nfiles == 1 ? "" : "s");
        rc = CLI_ERR;
    }
    return rc;
}

static int damaged(const struct rpt *r)
{
    int any = 0;

    for (unsigned i = 0; i < r->nfiles; i++) {
        const struct rpt_file *f = &r->files[i];
        if (f->refused && f->error[0]) {
            cli_err("%s: not read: %s", f->name, f->error);
            any = 1;
            continue;
        } else if (f->refused)
            cli_err("%s: not read: it requires a feature this reader does not know", f->name);
        else if (!f->is_log)
            cli_err("%s: damaged: not a log", f->name);
        else if (f->damage[0])
            cli_err("%s: damaged: %s (the report shows the rest)", f->name, f->damage);
        else if (!f->error[0])
            continue;
        if (f->error[0])
            cli_err("%s: %s", f->name, f->error);
        any = 1;
    }
    return any;
}

int cmd_report(int argc, char **argv)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":o:h", longopts, report_help, CLI_OPT_PARTITION);
    struct rpt_bitrate br[MAX_BITRATES];
    const char *dbc_files[MAX_DBC], *signals[RPT_MAX_SIGNALS];
    struct rpt_dbc dbc = { dbc_files, signals, 0, 0, NULL, 0, NULL, 0, NULL };
    struct job j = { 0 };
    const char *out_path = "report.html", *key_path = NULL;
    struct rpt *r;
    struct out_file of;
    char gen[128];
    int c, rc;
    unsigned nbr = 0;

    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 'o':
            out_path = optarg;
            break;
        case OPT_BITRATE:
            if (nbr == MAX_BITRATES)
                return cli_usage("at most %d --bitrate options", MAX_BITRATES);
            if (parse_bitrate(optarg, &br[nbr]))
                return cli_usage("--bitrate '%s': expects NAME=RATE or NAME=RATE/DATARATE "
                                 "(500k, 1M, 250000: 1 kbit/s to 100 Mbit/s)", optarg);
            nbr++;
            break;
        case OPT_DBC:
            if (dbc.ndbc == MAX_DBC)
                return cli_usage("at most %d --dbc options", MAX_DBC);
            dbc.dbc[dbc.ndbc++] = optarg;
            break;
        case OPT_KEY:
            key_path = optarg;
            break;
        case OPT_SIGNAL:
            if (dbc.nsignal == RPT_MAX_SIGNALS)
                return cli_usage("at most %d --signal options", RPT_MAX_SIGNALS);
            dbc.signal[dbc.nsignal++] = optarg;
            break;
        }
    }
    if (c < 0)
        return cl.status;
    if (dbc.nsignal && !dbc.ndbc)
        return cli_usage("--signal needs --dbc");
    if (argc - optind < 1)
        return cli_usage("missing TARGET, DIR or FILE");
    j.target = argv[optind];
    j.logs = argv + optind + 1;
    j.nlogs = argc - optind - 1;
    j.partition = cl.partition;
    if (!(r = malloc(sizeof *r))) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    if (rpt_init(r)) {
        free(r);
        return CLI_ERR;
    }
    r->bitrates = br;
    r->nbitrates = nbr;
    /* --key: read once, before any log (a bad key file is one line, nothing written) */
    if (key_path) {
        if (keyfile_read_secret(key_path, r->key_sec, r->key_pub)) {
            rpt_free(r);
            free(r);
            return CLI_ERR;
        }
        r->have_key = 1;
        r->key_path = key_path;
    }
    rc = gather(&j, r);
    if (rc == CLI_USAGE) {
        rpt_free(r);
        free(r);
        return rc;
    }
    if (!rc && dbc.ndbc) {
        dbc.volume = j.on_volume ? j.target : NULL;
        dbc.partition = j.partition;
        dbc.logs = j.read.v;
        dbc.nlogs = j.read.n;
        dbc.key_path = key_path;
        rc = rpt_signals(r, &dbc);
    }
    if (!rc) {
        /* the other host inputs may not be the output either */
        struct stat os;
        if (stat(out_path, &os) == 0)
            for (int i = 0; i < j.nlogs; i++) {
                struct stat is;
                if (stat(j.logs[i], &is) == 0 && out_same_file(&is, &os)) {
                    cli_err("%s: is the file this command reads; not written over (name another output)", out_path);
                    rc = CLI_ERR;
                }
            }
    }
    if (!rc && !out_open(&of, out_path, j.have_input ? &j.input : NULL)) {
        int bad;
        setvbuf(of.f, NULL, _IOFBF, 1 << 20);
        snprintf(gen, sizeof gen, "streamfat report %s", SF_VERSION_STRING);
        struct rpt_html_opts ho = { j.target, gen };
        bad = rpt_html(of.f, r, &ho);
        if (bad)
            cli_err("%s: write failed: %s", out_path, strerror(errno));
        if (out_close(&of, !bad) || bad)
            rc = CLI_ERR;
        else if (damaged(r))
            rc = CLI_ERR;
    } else if (!rc) {
        rc = CLI_ERR;
    }
    names_free(&j.read);
    rpt_signals_free(r);
    sf_sodium_wipe(r->key_sec, sizeof r->key_sec);
    rpt_free(r);
    free(r);
    return rc;
}
