/* streamfat plan: the arithmetic of logging at a given rate onto a given device - time to
 * fill, time to wear out, whether the device keeps up once its write cache is full, what
 * formatting only part of it buys, and the settings to use (docs/BENCH.md, "plan"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/json.h"
#include "common/units.h"
#include "streamfat/block_pack.h"
#include "streamfat/rec.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"NAME\n"
"  streamfat plan - fill time, endurance and settings for a logging rate\n"
"\n"
"SYNOPSIS\n"
"  streamfat plan --rate R [--capacity C] [--tbw T | --pe-cycles N [--waf W]]\n"
"                 [--sustained S] [--cache C] [--cell slc|mlc|tlc|qlc]\n"
"                 [--compression X | --from-log FILE] [--json]\n"
"\n"
"DESCRIPTION\n"
"  Works out, for data arriving at R without pause:\n"
"    fill time      capacity / R\n"
"    endurance      --tbw, or capacity x P/E cycles / WAF (bytes the flash takes in)\n"
"    lifetime       endurance / R\n"
"    keeping up     after a cache of C bytes is full (C / R after the start, when the\n"
"                   device is faster than R until then) the device writes at S: below R\n"
"                   the backlog grows by R - S per second\n"
"    partial format formatting only a fraction of the device; at or below 1/bits per cell\n"
"                   (QLC 25 %, TLC 33 %) every byte can stay in SLC (pSLC) mode on a\n"
"                   drive whose SLC cache is dynamic\n"
"  and recommends the cluster size, chunk size and checkpoint interval for\n"
"  'streamfat mkfs' and 'streamfat log'. Assumptions and formulas: docs/BENCH.md.\n"
"  MB = 10^6 bytes; TB = 10^12 bytes.\n"
"\n"
"OPTIONS\n"
"      --rate R         logging rate (e.g. 500MB/s; required)\n"
"      --capacity C     device capacity (e.g. 120GB)\n"
"      --tbw T          rated endurance, bytes written (e.g. 600TB)\n"
"      --pe-cycles N    program/erase cycles of the flash (needs --capacity)\n"
"      --waf W          write amplification factor (default 1.0: sequential logging)\n"
"      --sustained S    write speed once the cache is full (e.g. 50MB/s)\n"
"      --cache C        SLC cache size (e.g. 45GB)\n"
"      --cell TYPE      bits per cell for the partial-format table: slc, mlc, tlc, qlc\n"
"                       (default qlc)\n"
"      --compression X  the logs are compressed X times (log --compress; a number, at\n"
"                       least 1): R / X reaches the device, and every figure above uses\n"
"                       that; the text says what the card's life gains\n"
"      --from-log FILE  X measured from a log file (a .SFL written with --compress, on\n"
"                       this computer: 'streamfat cat' copies one off a volume), as\n"
"                       'streamfat ls -l' shows it\n"
"      --json           print one JSON object\n"
"  -h, --help           show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat plan --rate 500MB/s --capacity 120GB --pe-cycles 60000 --waf 1.8\n"
"  streamfat plan --rate 200MB/s --capacity 2TB --tbw 720TB --cache 45GB --sustained 50MB/s\n"
"\n"
"EXIT STATUS\n"
"  0 done, 2 wrong usage.\n";

enum { OPT_RATE = 256, OPT_CAP, OPT_TBW, OPT_PE, OPT_WAF, OPT_SUST, OPT_CACHE, OPT_CELL,
       OPT_JSON, OPT_COMPRESSION, OPT_FROM_LOG };

static const struct option longopts[] = {
    { "rate", required_argument, NULL, OPT_RATE },
    { "capacity", required_argument, NULL, OPT_CAP },
    { "tbw", required_argument, NULL, OPT_TBW },
    { "pe-cycles", required_argument, NULL, OPT_PE },
    { "waf", required_argument, NULL, OPT_WAF },
    { "sustained", required_argument, NULL, OPT_SUST },
    { "cache", required_argument, NULL, OPT_CACHE },
    { "cell", required_argument, NULL, OPT_CELL },
    { "json", no_argument, NULL, OPT_JSON },
    { "compression", required_argument, NULL, OPT_COMPRESSION },
    { "from-log", required_argument, NULL, OPT_FROM_LOG },
    CLI_LONGOPTS_END,
};

#define RING_BYTES (64.0 * 1048576)   /* streamfat log's default --ring */

struct plan {
    double rate, cap, tbw, waf, sust, cache;
    double comp;                /* compression (1: none); rate / comp reaches the device */
    uint64_t pe;
    unsigned bits;
    int json;
};

/* Results, NAN where the inputs do not determine them. */
struct figures {
    double endurance, fill_s, life_s, cache_full_s, behind_bps, ring_s;
    int keeps_up;               /* 1 yes, 0 no, -1 unknown */
    uint64_t cluster, chunk;
    double ckpt_s;
};

static char *fmt_dur(double s, char *buf, size_t n)
{
    if (isnan(s))
        snprintf(buf, n, "-");
    else if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else if (s < 172800)
        snprintf(buf, n, "%.1f h", s / 3600);
    else if (s < 2 * 365.25 * 86400)
        snprintf(buf, n, "%.1f days", s / 86400);
    else
        snprintf(buf, n, "%.1f years", s / (365.25 * 86400));
    return buf;
}

/* mkfs's default cluster for a volume of this size (docs/DESIGN.md, mkfs table): the
 * stream allocates 64 MiB steps whatever the cluster, so the cluster does not limit speed;
 * the default keeps the bitmap or FAT small for mount. */
static uint64_t cluster_for(double vol)
{
    return vol <= 256.0 * 1048576 ? 4096 : vol <= 32.0 * 1073741824 ? 32768 : 131072;
}

static void compute(const struct plan *p, struct figures *f)
{
    double chunk;

    double w = p->rate / p->comp;           /* what reaches the device */

    f->endurance = p->tbw > 0 ? p->tbw : p->pe && p->cap > 0 ? p->cap * (double)p->pe / p->waf
                                                              : NAN;
    f->fill_s = p->cap > 0 ? p->cap / w : NAN;
    f->life_s = f->endurance / w;
    f->cache_full_s = p->cache > 0 ? p->cache / w : NAN;
    f->keeps_up = p->sust > 0 ? p->sust >= w : -1;
    f->behind_bps = p->sust > 0 && p->sust < w ? w - p->sust : NAN;
    f->ring_s = f->behind_bps > 0 ? RING_BYTES / f->behind_bps : NAN;
    f->cluster = cluster_for(p->cap > 0 ? p->cap : 64e9);
    /* About a millisecond of data per block, a power of two in 4 KiB .. 1 MiB: enough blocks
     * per second for a fine checkpoint, few enough that per-block work stays small. */
    chunk = p->rate / 1000;
    f->chunk = 4096;
    while ((double)f->chunk * 1.5 < chunk && f->chunk < (1u << 20))
        f->chunk <<= 1;
    /* A checkpoint pads the open block: keep that below 1 % of the data (100 blocks per
     * interval), and never wait less than the logger's 1 s default or more than a minute. */
    f->ckpt_s = 100.0 * (double)f->chunk / p->rate;
    f->ckpt_s = f->ckpt_s < 1 ? 1 : f->ckpt_s > 60 ? 60 : ceil(f->ckpt_s);
}

static void json_num(int *first, const char *key, double v)
{
    if (isnan(v))
        printf("%s\"%s\": null", *first ? "" : ", ", key);
    else
        printf("%s\"%s\": %.6g", *first ? "" : ", ", key, v);
    *first = 0;
}

static const double fractions[] = { 1.0, 0.5, 1.0 / 3, 0.25 };

static void report_json(const struct plan *p, const struct figures *f)
{
    int first = 1;
    unsigned i;

    printf("{");
    json_num(&first, "rate_mb_s", p->rate / 1e6);
    json_num(&first, "compression", p->comp);
    json_num(&first, "device_rate_mb_s", p->rate / p->comp / 1e6);
    json_num(&first, "capacity_bytes", p->cap > 0 ? p->cap : NAN);
    json_num(&first, "endurance_tb", f->endurance / 1e12);
    json_num(&first, "fill_seconds", f->fill_s);
    json_num(&first, "lifetime_days", f->life_s / 86400);
    json_num(&first, "full_volume_writes", p->cap > 0 ? f->endurance / p->cap : NAN);
    json_num(&first, "cache_full_seconds", f->cache_full_s);
    if (f->keeps_up < 0)
        printf(", \"keeps_up\": null");
    else
        json_kv_bool(stdout, &first, "keeps_up", f->keeps_up);
    json_num(&first, "backlog_mb_s", f->behind_bps / 1e6);
    json_num(&first, "ring_overflow_seconds", f->ring_s);
    if (p->cap > 0)
        json_kv_u64(stdout, &first, "cluster_bytes", f->cluster);
    else
        printf(", \"cluster_bytes\": null");
    json_kv_u64(stdout, &first, "chunk_bytes", f->chunk);
    json_num(&first, "checkpoint_seconds", f->ckpt_s);
    json_kv_u64(stdout, &first, "bits_per_cell", p->bits);
    printf(", \"partial_format\": [");
    for (i = 0; p->cap > 0 && i < sizeof fractions / sizeof *fractions; i++) {
        int f2 = 1;
        double part = p->cap * fractions[i];
        printf("%s{", i ? ", " : "");
        json_num(&f2, "fraction", fractions[i]);
        json_num(&f2, "bytes", floor(part));
        json_num(&f2, "fill_seconds", part / p->rate);
        json_num(&f2, "volume_writes", f->endurance / part);
        json_kv_bool(stdout, &f2, "all_slc", fractions[i] <= 1.0 / p->bits + 1e-9);
        printf("}");
    }
    printf("]}\n");
}

static void report_text(const struct plan *p, const struct figures *f)
{
    char a[48], b[48], c[48];
    unsigned i;

    printf("logging at %.1f MB/s (%.2f TB a day)\n", p->rate / 1e6, p->rate * 86400 / 1e12);
    if (p->comp > 1) {
        printf("  compressed %.2fx (log --compress): %.2f MB/s reach the device", p->comp,
               p->rate / p->comp / 1e6);
        if (!isnan(f->endurance))
            printf("; the card lasts %s instead of %s", fmt_dur(f->life_s, a, sizeof a),
                   fmt_dur(f->life_s / p->comp, b, sizeof b));
        printf("\n");
    }
    if (p->cap > 0)
        printf("  fills %.1f GB in %s\n", p->cap / 1e9, fmt_dur(f->fill_s, a, sizeof a));
    if (!isnan(f->endurance)) {
        if (p->tbw > 0)
            printf("  endurance %.1f TB written (rated)\n", f->endurance / 1e12);
        else
            printf("  endurance %.1f TB written (%.1f GB x %" PRIu64 " P/E cycles / WAF %.2f)\n",
                   f->endurance / 1e12, p->cap / 1e9, p->pe, p->waf);
        printf("  worn out after %s without pause (%.4g days)", fmt_dur(f->life_s, a, sizeof a),
               f->life_s / 86400);
        if (p->cap > 0)
            printf(", %.0f full-volume writes", f->endurance / p->cap);
        printf("\n");
    }
    if (f->keeps_up >= 0) {
        if (p->cache > 0)
            printf("  cache of %.1f GB full after %s; then %.1f MB/s: ", p->cache / 1e9,
                   fmt_dur(f->cache_full_s, a, sizeof a), p->sust / 1e6);
        else
            printf("  sustained %.1f MB/s: ", p->sust / 1e6);
        if (f->keeps_up)
            printf("keeps up (%.0f %% headroom)\n", (p->sust / p->rate - 1) * 100);
        else
            printf("DOES NOT keep up: %.1f MB/s behind, a 64 MiB ring overflows in %s\n",
                   f->behind_bps / 1e6, fmt_dur(f->ring_s, b, sizeof b));
    }
    if (p->cap > 0) {
        printf("  formatting part of the device (%u bits per cell; at or below 1/%u the whole "
               "volume fits in SLC mode):\n", p->bits, p->bits);
        printf("    %-9s %12s %12s %14s %s\n", "fraction", "size", "fill time", "volume writes",
               "all SLC");
        for (i = 0; i < sizeof fractions / sizeof *fractions; i++) {
            double part = p->cap * fractions[i];
            snprintf(c, sizeof c, "%.1f GB", part / 1e9);
            printf("    %7.1f %% %12s %12s %14s %s\n", fractions[i] * 100, c,
                   fmt_dur(part / p->rate, a, sizeof a),
                   isnan(f->endurance) ? "-" : (snprintf(b, sizeof b, "%.0f",
                                                         f->endurance / part), b),
                   fractions[i] <= 1.0 / p->bits + 1e-9 ? "yes" : "no");
        }
    }
    if (p->cap > 0)
        printf("  recommended: mkfs -c %s, log --chunk %s --sync-interval %.0fs",
               units_format_size(f->cluster, a, sizeof a),
               units_format_size(f->chunk, b, sizeof b), f->ckpt_s);
    else
        printf("  recommended: mkfs's default cluster size, log --chunk %s --sync-interval %.0fs",
               units_format_size(f->chunk, b, sizeof b), f->ckpt_s);
    printf(" (at most %.1f MB unsynced)\n", p->rate * f->ckpt_s / 1e6);
    if (p->cap > 4294967295.0)
        printf("  use exFAT: FAT32 files stop at 4 GiB - 1 (the logger rotates every %s)\n",
               fmt_dur(4294967295.0 / p->rate, a, sizeof a));
}

/* The compression of a log file (a host path), as `streamfat ls -l` gives it: record
 * payload bytes unpacked over stored, from each block's header and packed header. */
static int log_file_compression(const char *path, double *out)
{
    FILE *fp = fopen(path, "rb");
    uint8_t h[SF_BLOCK_HDR + SF_FILE_HDR];
    uint64_t raw = 0, stored = 0;
    uint32_t b;

    if (!fp) {
        cli_err("plan: %s: %s", path, strerror(errno));
        return CLI_ERR;
    }
    if (fread(h, 1, sizeof h, fp) != sizeof h || sf_block_peek_size(h, &b)) {
        fclose(fp);
        cli_err("plan: %s: not a log file (docs/FORMAT.md)", path);
        return CLI_ERR;
    }
    for (uint64_t off = b;; off += b) {
        uint8_t k[SF_BLOCK_HDR + SF_PACK_HDR];
        if (fseeko(fp, (off_t)off, SEEK_SET) || fread(k, 1, sizeof k, fp) != sizeof k)
            break;
        if (memcmp(k, "SFLB", 4))
            continue;
        uint32_t kind = k[6] | (uint32_t)k[7] << 8;
        uint32_t used = k[32] | (uint32_t)k[33] << 8 | (uint32_t)k[34] << 16 | (uint32_t)k[35] << 24;
        uint32_t rl = k[48] | (uint32_t)k[49] << 8 | (uint32_t)k[50] << 16 | (uint32_t)k[51] << 24;
        if (kind == SF_BLOCK_RECORDS) {
            raw += used;
            stored += used;
        } else if (kind == SF_BLOCK_PACKED && used >= SF_PACK_HDR) {
            raw += rl;
            stored += used;
        }
    }
    fclose(fp);
    if (!stored) {
        cli_err("plan: %s: no record blocks to measure", path);
        return CLI_ERR;
    }
    *out = raw > stored ? (double)raw / (double)stored : 1.0;
    return 0;
}

static int parse_size(const char *opt, const char *s, double *out)
{
    const char *why;
    uint64_t v;

    if (units_parse_size(s, &v, &why))
        return cli_usage("invalid %s '%s': %s", opt, s, why);
    if (v == 0)
        return cli_usage("invalid %s '%s': must be more than 0", opt, s);
    *out = (double)v;
    return 0;
}

static int parse_rate(const char *opt, const char *s, double *out)
{
    const char *why;
    uint64_t v;

    if (units_parse_rate(s, &v, &why))
        return cli_usage("invalid %s '%s': %s", opt, s, why);
    if (v == 0)
        return cli_usage("invalid %s '%s': must be more than 0", opt, s);
    *out = (double)v;
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    struct plan p;
    struct figures f;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, help, 0);
    char *end;
    int c, rc, from_log = 0;

    memset(&p, 0, sizeof p);
    p.waf = 1.0;
    p.bits = 4;
    while ((c = cli_getopt(&cl)) > 0) {
        rc = 0;
        switch (c) {
        case OPT_RATE: rc = parse_rate("--rate", optarg, &p.rate); break;
        case OPT_SUST: rc = parse_rate("--sustained", optarg, &p.sust); break;
        case OPT_CAP: rc = parse_size("--capacity", optarg, &p.cap); break;
        case OPT_TBW: rc = parse_size("--tbw", optarg, &p.tbw); break;
        case OPT_CACHE: rc = parse_size("--cache", optarg, &p.cache); break;
        case OPT_PE:
            if (cli_parse_uint(optarg, 100000000, &p.pe) || p.pe == 0)
                return cli_usage("invalid --pe-cycles '%s'", optarg);
            break;
        case OPT_WAF:
            p.waf = strtod(optarg, &end);
            if (end == optarg || *end || !(p.waf >= 1.0) || p.waf > 1000)
                return cli_usage("invalid --waf '%s' (a number, at least 1)", optarg);
            break;
        case OPT_CELL:
            if (strcmp(optarg, "slc") == 0)
                p.bits = 1;
            else if (strcmp(optarg, "mlc") == 0)
                p.bits = 2;
            else if (strcmp(optarg, "tlc") == 0)
                p.bits = 3;
            else if (strcmp(optarg, "qlc") == 0)
                p.bits = 4;
            else
                return cli_usage("invalid --cell '%s' (slc, mlc, tlc, qlc)", optarg);
            break;
        case OPT_JSON: p.json = 1; break;
        case OPT_COMPRESSION:
            if (from_log)
                return cli_usage("--compression and --from-log exclude each other");
            p.comp = strtod(optarg, &end);
            if (end == optarg || *end || !(p.comp >= 1.0) || p.comp > 1000)
                return cli_usage("invalid --compression '%s' (a number, at least 1)", optarg);
            break;
        case OPT_FROM_LOG:
            if (p.comp > 0 && !from_log)
                return cli_usage("--compression and --from-log exclude each other");
            from_log = 1;
            if ((rc = log_file_compression(optarg, &p.comp)))
                return rc;
            break;
        }
        if (rc)
            return rc;
    }
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, 0, NULL))
        return CLI_USAGE;
    if (p.rate <= 0)
        return cli_usage("--rate is required");
    if (p.tbw > 0 && p.pe)
        return cli_usage("--tbw and --pe-cycles exclude each other");
    if (p.pe && p.cap <= 0)
        return cli_usage("--pe-cycles needs --capacity");
    if (p.cache > 0 && p.sust <= 0)
        return cli_usage("--cache needs --sustained (the speed once it is full)");
    if (p.comp <= 0)
        p.comp = 1;
    compute(&p, &f);
    if (p.json)
        report_json(&p, &f);
    else
        report_text(&p, &f);
    return CLI_OK;
}
