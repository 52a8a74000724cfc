/* streamfat bench: sustained sequential write speed of a device, raw or through a file on
 * the volume, with the cache boundary, the steady state and request latencies
 * (docs/BENCH.md). The figures come from cli/tools/bench_analyze.c, the chart from
 * cli/tools/bench_svg.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tools/bench_analyze.h"
#include "cli.h"
#include "common/json.h"
#include "tools/sim_target.h"
#include "common/target.h"
#include "common/units.h"

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "streamfat/stream.h"

static const char help[] =
"NAME\n"
"  streamfat bench - measure sustained sequential write speed\n"
"\n"
"SYNOPSIS\n"
"  streamfat bench [--raw|--fs] [--bs SIZE] [--qd N] [--size SIZE | --full] [--duration T]\n"
"                  [--plot FILE.svg] [--csv FILE] [--json] [--destroy] TARGET\n"
"\n"
"DESCRIPTION\n"
"  Writes TARGET sequentially from its start with --qd requests of --bs bytes in flight\n"
"  and reports the average speed, the steady-state speed, the slowest window, where the\n"
"  speed drops (an SSD's write cache filling up) and request latency percentiles. The run\n"
"  is cut into 200 windows by data written; the drop is the two-level split of their\n"
"  speeds with the least absolute deviation, counted when the later level is below 85 %\n"
"  of the earlier (docs/BENCH.md). MB = 10^6 bytes, MiB = 2^20 bytes.\n"
"  TARGET is an image file, a block device, or a simulated SSD\n"
"  sim:SIZE,cache=SIZE,fast=RATE,slow=RATE[,idle_flush=RATE] (e.g.\n"
"  sim:1G,cache=256M,fast=1000MB/s,slow=200MB/s).\n"
"  Everything on TARGET is overwritten: a target that holds a file system or partition\n"
"  table is refused unless --destroy is given.\n"
"\n"
"OPTIONS\n"
"      --raw          write the device itself (the default)\n"
"      --fs           write the device raw, then format it exFAT and write one file of\n"
"                     the same size through the streaming API, and print fs/raw\n"
"      --bs SIZE      request size (default 1M; a multiple of the sector size)\n"
"      --qd N         requests in flight, 1..64 (default 4)\n"
"      --size SIZE    write this much (default: the whole device, --full); more than\n"
"                     TARGET holds is refused (exit 1)\n"
"      --full         write the whole device\n"
"      --duration T   stop after T (whichever of size and time comes first)\n"
"      --plot FILE    draw throughput against data written into FILE (SVG)\n"
"      --csv FILE     write the windows as CSV (window, start and end byte, time, MB/s)\n"
"                     (an existing FILE is replaced only by a complete one; FILE naming\n"
"                     TARGET is refused before anything is written)\n"
"      --json         print one JSON object instead of the text report\n"
"      --destroy      allow overwriting a file system or partition table\n"
"  -h, --help         show this help\n"
"\n"
"  A progress line is shown on a terminal. Ctrl-C stops early and reports what was done.\n"
"\n"
"EXAMPLES\n"
"  streamfat bench --size 4G --plot ssd.svg --destroy /dev/sdb\n"
"  streamfat bench --json 'sim:512M,cache=128M,fast=400MB/s,slow=100MB/s'\n"
"  streamfat bench --fs --size 1G disk.img\n"
"\n"
"EXIT STATUS\n"
"  0 measured, 1 runtime error, 2 wrong usage.\n";

enum { OPT_RAW = 256, OPT_FS, OPT_BS, OPT_QD, OPT_SIZE, OPT_FULL, OPT_DURATION, OPT_PLOT,
       OPT_CSV, OPT_JSON, OPT_DESTROY };

static const struct option longopts[] = {
    { "raw", no_argument, NULL, OPT_RAW },
    { "fs", no_argument, NULL, OPT_FS },
    { "bs", required_argument, NULL, OPT_BS },
    { "qd", required_argument, NULL, OPT_QD },
    { "size", required_argument, NULL, OPT_SIZE },
    { "full", no_argument, NULL, OPT_FULL },
    { "duration", required_argument, NULL, OPT_DURATION },
    { "plot", required_argument, NULL, OPT_PLOT },
    { "csv", required_argument, NULL, OPT_CSV },
    { "json", no_argument, NULL, OPT_JSON },
    { "destroy", no_argument, NULL, OPT_DESTROY },
    CLI_LONGOPTS_END,
};

#define MAX_QD 64u
#define WORK_BYTES 65536u            /* the stream's work memory */
#define TRIM_STEP (64ull << 20)      /* a sim: device's storage is freed behind a raw run */

struct opts {
    int fs, full, json, destroy;
    uint64_t bs, size, duration_ns;
    unsigned qd;
    const char *plot, *csv, *target;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Where the requests go: the device itself, or a file through the streaming API. */
struct sink {
    struct sf_bdev *bd;          /* raw */
    uint64_t lba;                /* raw: next LBA */
    int trim_behind;             /* raw on a sim: device */
    struct sf_stream *st;        /* fs */
    struct sf_bio bio[MAX_QD];
};

struct run {
    struct bench_sample *s;
    size_t n, cap;
    int err;
};

static int record(struct run *r, int64_t t, uint64_t bytes, int64_t lat)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4096;
        struct bench_sample *p = realloc(r->s, cap * sizeof *p);
        if (!p)
            return -1;
        r->s = p;
        r->cap = cap;
    }
    r->s[r->n].t_ns = t;
    r->s[r->n].bytes = bytes;
    r->s[r->n].lat_ns = lat;
    r->n++;
    return 0;
}

/* "raw [##########..........]  50.0%  128 MiB  412.3 MB/s" on stderr, redrawn in place. */
static void progress(const char *what, uint64_t done, uint64_t total, int64_t t_ns)
{
    char sz[32], bar[31];
    double frac = total ? (double)done / (double)total : 0;
    unsigned i, fill = (unsigned)(frac * 30);

    for (i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r%s [%s] %5.1f%%  %s  %.1f MB/s \033[K", what, bar, frac * 100,
            units_format_size(done, sz, sizeof sz),
            t_ns > 0 ? (double)done * 1e3 / (double)t_ns : 0.0);
}

/* Write `total` bytes (a multiple of bs) through the sink with qd requests in flight,
 * recording each completion. Stops early at the deadline or on a signal. */
static int run_writes(struct sink *k, uint8_t **bufs, const struct opts *o, uint64_t total,
                      const char *what, struct run *r)
{
    int64_t t_sub[MAX_QD], t0 = now_ns(), last_prog = 0;
    unsigned free_slots[MAX_QD], nfree = o->qd, i;
    uint64_t submitted = 0, completed = 0, trimmed = 0;
    int tty = isatty(STDERR_FILENO);
    unsigned inflight = 0;

    for (i = 0; i < o->qd; i++)
        free_slots[i] = o->qd - 1 - i;
    for (;;) {
        while (nfree && submitted < total && !stop &&
               !(o->duration_ns && now_ns() - t0 >= (int64_t)o->duration_ns)) {
            unsigned slot = free_slots[--nfree];
            int err;
            t_sub[slot] = now_ns();
            if (k->st) {
                err = sf_stream_submit(k->st, bufs[slot], o->bs, (void *)(uintptr_t)(slot + 1));
            } else {
                struct sf_bio *b = &k->bio[slot];
                memset(b, 0, sizeof *b);
                b->op = SF_BIO_WRITE;
                b->lba = k->lba;
                b->count = (uint32_t)(o->bs / k->bd->sector_size);
                b->buf = bufs[slot];
                b->user = (void *)(uintptr_t)(slot + 1);
                err = sf_bdev_submit(k->bd, b);
                k->lba += b->count;
            }
            if (err) {
                r->err = err;
                return -1;
            }
            submitted += o->bs;
            inflight++;
        }
        if (!inflight)
            break;
        {
            void *done[MAX_QD];
            struct sf_bio *bios[MAX_QD];
            int n, j;
            int64_t t;
            if (k->st) {
                n = sf_stream_poll(k->st, done, MAX_QD, 1);
            } else {
                n = sf_bdev_poll(k->bd, bios, MAX_QD, 1);
                for (j = 0; j < n; j++) {
                    done[j] = bios[j]->user;
                    if (bios[j]->result && !r->err)
                        r->err = bios[j]->result;
                }
            }
            if (n < 0 || r->err) {
                if (n < 0)
                    r->err = n;
                return -1;
            }
            t = now_ns();
            for (j = 0; j < n; j++) {
                unsigned slot = (unsigned)(uintptr_t)done[j] - 1;
                completed += o->bs;
                if (record(r, t - t0, completed, t - t_sub[slot])) {
                    r->err = SF_ENOMEM;
                    return -1;
                }
                free_slots[nfree++] = slot;
                inflight--;
            }
        }
        /* A sim: device keeps what is written in a temporary file; a raw run never reads it
         * back, so give it back (completions of a sim: device come in order). */
        if (k->trim_behind && completed - trimmed >= TRIM_STEP) {
            sf_bdev_trim(k->bd, trimmed / k->bd->sector_size,
                         (completed - trimmed) / k->bd->sector_size);
            trimmed = completed;
        }
        if (tty && now_ns() - last_prog > 250000000) {
            last_prog = now_ns();
            progress(what, completed, total, last_prog - t0);
        }
    }
    if (tty)
        fputs("\r\033[K", stderr);
    return 0;
}

/* Known signatures in the first 64 KiB: a boot sector or MBR (FAT, exFAT, NTFS, MBR all
 * end sector 0 with 55 AA), GPT, ext2/3/4, XFS, LUKS. */
static const char *signature(const uint8_t *p)
{
    if (p[510] == 0x55 && p[511] == 0xAA)
        return "a boot sector or partition table";
    if (memcmp(p + 512, "EFI PART", 8) == 0 || memcmp(p + 4096, "EFI PART", 8) == 0)
        return "a GPT partition table";
    if (p[1080] == 0x53 && p[1081] == 0xEF)
        return "an ext2/3/4 file system";
    if (memcmp(p, "XFSB", 4) == 0)
        return "an XFS file system";
    if (memcmp(p, "LUKS\xba\xbe", 6) == 0)
        return "a LUKS volume";
    return NULL;
}

static int check_destroy(struct target *t, const struct opts *o)
{
    struct sf_bdev *bd = target_bd(t);
    uint8_t *p;
    const char *what;
    uint32_t count = 65536 / bd->sector_size;

    if (o->destroy || sim_target_is(o->target))
        return 0;
    if (bd->sector_count < count)
        count = (uint32_t)bd->sector_count;
    p = target_alloc(bd, 65536);
    if (sf_bdev_read(bd, 0, p, count)) {
        free(p);
        cli_err("%s: cannot read", o->target);
        return CLI_ERR;
    }
    what = count * bd->sector_size >= 8192 ? signature(p) : NULL;
    free(p);
    if (what) {
        cli_err("%s holds %s; bench overwrites it (give --destroy to go on)", o->target, what);
        return CLI_ERR;
    }
    return 0;
}

static uint8_t **alloc_bufs(struct sf_bdev *bd, const struct opts *o)
{
    uint8_t **b = calloc(o->qd, sizeof *b);
    unsigned i;
    uint64_t j;

    if (!b) {
        cli_err("out of memory");
        exit(CLI_ERR);
    }
    for (i = 0; i < o->qd; i++) {
        b[i] = target_alloc(bd, o->bs);
        for (j = 0; j < o->bs; j += 8)      /* not zeros: no device may compress them away */
            memcpy(b[i] + j, &(uint64_t){ (j * 0x9E3779B97F4A7C15ull) ^ i }, 8);
    }
    return b;
}

static void free_bufs(uint8_t **b, unsigned qd)
{
    unsigned i;

    for (i = 0; b && i < qd; i++)
        free(b[i]);
    free(b);
}

static int bench_raw(const struct opts *o, struct bench_result *res)
{
    struct target t;
    struct sink k;
    struct run r;
    uint8_t **bufs;
    uint64_t total, dev;
    int rc = CLI_ERR;

    if (target_open_raw(&t, o->target, TARGET_DIRECT | TARGET_ASYNC, o->qd))
        return CLI_ERR;
    if (check_destroy(&t, o)) {
        target_close(&t);
        return CLI_ERR;
    }
    memset(&k, 0, sizeof k);
    memset(&r, 0, sizeof r);
    k.bd = target_bd(&t);
    k.trim_behind = t.is_sim;
    if (o->bs % k.bd->sector_size) {
        target_close(&t);
        return cli_usage("--bs %" PRIu64 " is not a multiple of the sector size (%u)", o->bs,
                         k.bd->sector_size);
    }
    dev = k.bd->sector_count * k.bd->sector_size;
    if (o->size > dev) {            /* never measure less than asked without saying so */
        char hs[32], hd[32];
        target_close(&t);
        cli_err("%s: --size %s is more than the target holds (%s): give at most that, or "
                "--full", o->target, units_format_size(o->size, hs, sizeof hs),
                units_format_size(dev, hd, sizeof hd));
        return CLI_ERR;
    }
    total = o->size ? o->size : dev;
    total -= total % o->bs;
    bufs = alloc_bufs(k.bd, o);
    if (run_writes(&k, bufs, o, total, "raw", &r) == 0) {
        int err = sf_bdev_flush(k.bd);
        if (err)
            r.err = err;
    }
    if (r.err) {
        cli_err("%s: write failed: %s", o->target, sf_strerror(r.err));
    } else if (r.n == 0) {
        cli_err("%s: nothing written (device smaller than --bs?)", o->target);
    } else if (bench_analyze(r.s, r.n, o->bs, o->qd, res)) {
        cli_err("out of memory");
    } else {
        rc = CLI_OK;
    }
    if (k.trim_behind)
        sf_bdev_trim(k.bd, 0, k.bd->sector_count);
    if (target_close(&t))       /* first: after an error requests may still be in flight */
        rc = CLI_ERR;
    free(r.s);
    free_bufs(bufs, o->qd);
    return rc;
}

static int bench_fs(const struct opts *o, uint64_t raw_bytes, struct bench_result *res)
{
    struct mkfs_args m;
    struct sf_stream_cfg cfg;
    struct sf_stream *st;
    struct sf_vol_info vi;
    struct target t;
    struct sink k;
    struct run r;
    uint8_t **bufs, *work;
    uint64_t total, free_b;
    int64_t fc;
    int rc = CLI_ERR, err;

    memset(&m, 0, sizeof m);
    m.target = o->target;
    m.fs_type = SF_FS_EXFAT;
    m.partition = -1;
    m.quiet = 1;
    m.force = 1;           /* the raw pass just wrote it; check_destroy guarded it before */
    if ((rc = mkfs_run(&m)))
        return rc;
    rc = CLI_ERR;
    if (target_open_async(&t, o->target, TARGET_ASYNC | TARGET_DIRECT, 0, o->qd))
        return CLI_ERR;
    fc = sf_vol_free_clusters(&t.vol);
    if (fc < 0 || sf_vol_info(&t.vol, &vi)) {
        cli_err("%s: cannot count free space", o->target);
        target_close(&t);
        return CLI_ERR;
    }
    free_b = (uint64_t)fc * vi.cluster_size;
    total = raw_bytes < free_b - free_b / 100 ? raw_bytes : free_b - free_b / 100;
    total -= total % o->bs;

    st = calloc(1, sizeof *st);
    work = target_alloc(target_bd(&t), WORK_BYTES);
    bufs = alloc_bufs(target_bd(&t), o);
    memset(&cfg, 0, sizeof cfg);
    cfg.queue_depth = o->qd;
    cfg.checkpoint_ms = 1000;             /* as the logger's default --sync-interval */
    cfg.flags = SF_STREAM_REPLACE;
    memset(&k, 0, sizeof k);
    memset(&r, 0, sizeof r);
    k.st = st;
    if (!st) {
        cli_err("out of memory");
        goto out;
    }
    err = sf_stream_open(&t.vol, st, "BENCH.BIN", &cfg, work, WORK_BYTES);
    if (err) {
        cli_err("%s: BENCH.BIN: cannot create: %s", o->target, sf_strerror(err));
        goto out;
    }
    run_writes(&k, bufs, o, total, "fs ", &r);
    while (sf_stream_in_flight(st) && sf_stream_poll(st, (void *[MAX_QD]){ 0 }, MAX_QD, 1) > 0)
        ;
    err = sf_stream_close(st);
    if (!r.err && err)
        r.err = err;
    if (r.err)
        cli_err("%s: BENCH.BIN: write failed: %s", o->target, sf_strerror(r.err));
    else if (r.n == 0)
        cli_err("%s: nothing written", o->target);
    else if (bench_analyze(r.s, r.n, o->bs, o->qd, res))
        cli_err("out of memory");
    else
        rc = CLI_OK;
    if ((err = sf_unlink(&t.vol, "BENCH.BIN")) != 0 && rc == CLI_OK) {
        cli_err("%s: BENCH.BIN: cannot remove: %s", o->target, sf_strerror(err));
        rc = CLI_ERR;
    }
out:
    if (target_close(&t))       /* first: the device may still hold the buffers */
        rc = CLI_ERR;
    free(r.s);
    free(st);
    free(work);
    free_bufs(bufs, o->qd);
    return rc;
}

static void fmt_lat(int64_t ns, char *buf, size_t n)
{
    if (ns < 1000000)
        snprintf(buf, n, "%.0f us", (double)ns / 1e3);
    else if (ns < 10000000000)
        snprintf(buf, n, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.2f s", (double)ns / 1e9);
}

static void report_text(const char *what, const struct opts *o, const struct bench_result *r)
{
    char a[32], b[32], c[32], d[32];

    printf("%s: %" PRIu64 " bytes (%s) in %.2f s, %s requests, queue depth %u\n", what,
           r->bytes, units_format_size(r->bytes, a, sizeof a), r->seconds,
           units_format_size(o->bs, b, sizeof b), o->qd);
    printf("  average          %10.1f MB/s\n", r->avg_bps / 1e6);
    printf("  steady state     %10.1f MB/s\n", r->steady_bps / 1e6);
    printf("  slowest window   %10.1f MB/s  (windows of %s)\n", r->min_window_bps / 1e6,
           units_format_size(r->window_bytes, a, sizeof a));
    if (r->have_boundary)
        printf("  cache boundary   %10.1f MB   (%s); %.1f MB/s before, %.1f MB/s after\n",
               (double)r->boundary_bytes / 1e6,
               units_format_size(r->boundary_bytes, a, sizeof a), r->fast_bps / 1e6,
               r->steady_bps / 1e6);
    else
        printf("  cache boundary   none found\n");
    fmt_lat(r->lat_p50, a, sizeof a);
    fmt_lat(r->lat_p99, b, sizeof b);
    fmt_lat(r->lat_p999, c, sizeof c);
    fmt_lat(r->lat_max, d, sizeof d);
    printf("  latency          p50 %s, p99 %s, p99.9 %s, max %s\n", a, b, c, d);
}

static void json_num(FILE *f, int *first, const char *key, double v)
{
    fprintf(f, "%s\"%s\": %.3f", *first ? "" : ", ", key, v);
    *first = 0;
}

static void report_json_body(FILE *f, int *first, const struct opts *o,
                             const struct bench_result *r)
{
    json_kv_u64(f, first, "bytes", r->bytes);
    json_num(f, first, "seconds", r->seconds);
    json_kv_u64(f, first, "bs", o->bs);
    json_kv_u64(f, first, "qd", o->qd);
    json_num(f, first, "avg_mb_s", r->avg_bps / 1e6);
    json_num(f, first, "steady_mb_s", r->steady_bps / 1e6);
    json_num(f, first, "min_window_mb_s", r->min_window_bps / 1e6);
    json_kv_u64(f, first, "window_bytes", r->window_bytes);
    if (r->have_boundary) {
        json_kv_u64(f, first, "cache_boundary_bytes", r->boundary_bytes);
        json_num(f, first, "fast_mb_s", r->fast_bps / 1e6);
    } else {
        fprintf(f, ", \"cache_boundary_bytes\": null, \"fast_mb_s\": null");
    }
    fprintf(f, ", \"latency_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p999\": %.1f, \"max\": %.1f}",
            (double)r->lat_p50 / 1e3, (double)r->lat_p99 / 1e3, (double)r->lat_p999 / 1e3,
            (double)r->lat_max / 1e3);
}

/* --csv and --plot go through cli/common/outfile.c: an existing file is replaced only by a
 * complete new one, and never when it is the target benchmarked. */
static int write_csv(const char *path, const struct bench_result *r, const struct stat *target)
{
    struct out_file of;
    unsigned i;
    FILE *f;

    if (out_open(&of, path, target))
        return CLI_ERR;
    f = of.f;
    fprintf(f, "window,start_bytes,end_bytes,t_start_s,t_end_s,mb_s\n");
    for (i = 0; i < r->nwin; i++)
        fprintf(f, "%u,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.3f\n", i,
                (uint64_t)i * r->window_bytes, (uint64_t)(i + 1) * r->window_bytes,
                i ? r->win_t[i - 1] : 0.0, r->win_t[i], r->win_bps[i] / 1e6);
    return out_close(&of, 1);
}

static int write_svg(const char *path, const struct bench_result *r, const char *title,
                     const struct stat *target)
{
    struct out_file of;

    if (out_open(&of, path, target))
        return CLI_ERR;
    bench_svg(of.f, r, title);
    return out_close(&of, 1);
}

static int parse(int argc, char **argv, struct opts *o)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, help, 0);
    const char *why;
    uint64_t v;
    int c;

    memset(o, 0, sizeof *o);
    o->bs = 1u << 20;
    o->qd = 4;
    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case OPT_RAW: o->fs = 0; break;
        case OPT_FS: o->fs = 1; break;
        case OPT_FULL: o->full = 1; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_DESTROY: o->destroy = 1; break;
        case OPT_PLOT: o->plot = optarg; break;
        case OPT_CSV: o->csv = optarg; break;
        case OPT_BS:
            if (units_parse_size(optarg, &v, &why))
                return cli_usage("invalid --bs '%s': %s", optarg, why);
            if (v < 512 || v > (64u << 20) || v % 512)
                return cli_usage("--bs must be a multiple of 512 from 512 to 64M");
            o->bs = v;
            break;
        case OPT_QD:
            if (cli_parse_uint(optarg, MAX_QD, &v) || v == 0)
                return cli_usage("--qd must be 1..%u", MAX_QD);
            o->qd = (unsigned)v;
            break;
        case OPT_SIZE:
            if (units_parse_size(optarg, &v, &why))
                return cli_usage("invalid --size '%s': %s", optarg, why);
            if (v == 0)
                return cli_usage("invalid --size '%s': must be more than 0", optarg);
            o->size = v;
            break;
        case OPT_DURATION:
            if (units_parse_duration(optarg, &v, &why))
                return cli_usage("invalid --duration '%s': %s", optarg, why);
            if (v == 0)
                return cli_usage("invalid --duration '%s': must be more than 0", optarg);
            o->duration_ns = v;
            break;
        }
    }
    if (c < 0)
        return cl.status == CLI_OK ? -1 : cl.status;
    if (o->full && o->size)
        return cli_usage("--size and --full exclude each other");
    if (optind + 1 != argc)
        return cli_usage(optind == argc ? "missing TARGET" : "too many arguments");
    o->target = argv[optind];
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_result raw, fs;
    struct sigaction sa;
    struct opts o;
    struct stat target, hs;
    char title[512];
    int rc, first = 1, have_target;

    rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    /* --plot and --csv into one file: the second would replace the first. */
    if (o.plot && o.csv) {
        struct stat ps, cs;
        if (!strcmp(o.plot, o.csv) ||
            (stat(o.plot, &ps) == 0 && stat(o.csv, &cs) == 0 && out_same_file(&ps, &cs)))
            return cli_usage("--plot and --csv name the same file %s: one would replace the "
                             "other", o.csv);
    }
    /* A --plot or --csv that names the target is refused before the target is written. */
    have_target = stat(o.target, &target) == 0;
    for (int i = 0; i < 2 && have_target; i++) {
        const char *p = i ? o.csv : o.plot;
        if (p && stat(p, &hs) == 0 && out_same_file(&hs, &target)) {
            cli_err("%s: is the target benchmarked; not written over (name another output)", p);
            return CLI_ERR;
        }
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    memset(&raw, 0, sizeof raw);
    memset(&fs, 0, sizeof fs);

    rc = bench_raw(&o, &raw);
    if (rc == CLI_OK && o.fs && !stop)      /* Ctrl-C during the raw run ends it all */
        rc = bench_fs(&o, raw.bytes, &fs);
    if (o.fs && !fs.nwin)
        o.fs = 0;                            /* report what there is: the raw run */
    if (rc != CLI_OK)
        goto out;
    {
        const struct bench_result *shown = o.fs ? &fs : &raw;
        snprintf(title, sizeof title, "streamfat bench %s: %s, %" PRIu64 " KiB requests, qd %u",
                 o.fs ? "--fs (file)" : "--raw", o.target, o.bs >> 10, o.qd);
        if (o.plot && write_svg(o.plot, shown, title, have_target ? &target : NULL))
            rc = CLI_ERR;
        if (o.csv && write_csv(o.csv, shown, have_target ? &target : NULL))
            rc = CLI_ERR;
    }
    if (o.json) {
        printf("{");
        json_kv_str(stdout, &first, "target", o.target);
        json_kv_str(stdout, &first, "mode", o.fs ? "fs" : "raw");
        report_json_body(stdout, &first, &o, &raw);
        if (o.fs) {
            int f2 = 1;
            printf(", \"fs\": {");
            report_json_body(stdout, &f2, &o, &fs);
            printf("}, \"fs_raw_steady_ratio\": %.4f, \"fs_raw_avg_ratio\": %.4f",
                   raw.steady_bps > 0 ? fs.steady_bps / raw.steady_bps : 0,
                   raw.avg_bps > 0 ? fs.avg_bps / raw.avg_bps : 0);
        }
        printf("}\n");
    } else {
        report_text(o.fs ? "raw" : o.target, &o, &raw);
        if (o.fs) {
            report_text("through a file (exFAT)", &o, &fs);
            printf("fs/raw: steady state %.3f, average %.3f\n",
                   raw.steady_bps > 0 ? fs.steady_bps / raw.steady_bps : 0,
                   raw.avg_bps > 0 ? fs.avg_bps / raw.avg_bps : 0);
        }
    }
out:
    bench_result_free(&raw);
    bench_result_free(&fs);
    return rc;
}
