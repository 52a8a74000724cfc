/* streamfat fsck: check (and repair) a volume with the library's checker (src/check/). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/json.h"
#include "common/target.h"
#include "common/fault_env.h"
#include "streamfat/check.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"NAME\n"
"  streamfat fsck - check a FAT or exFAT volume, and repair it\n"
"\n"
"SYNOPSIS\n"
"  streamfat fsck [--repair] [--json] [--no-recover] [--partition N] TARGET\n"
"\n"
"DESCRIPTION\n"
"  Reads the whole volume without mounting it and reports every problem: boot region and\n"
"  checksums, the allocation bitmap or FAT against the clusters files reach (leaks,\n"
"  cross-links, loops, chains leaving the volume), directory entry sets and checksums,\n"
"  names, sizes against allocation, the dirty flag. Log files (.SFL) are searched for\n"
"  blocks written after their last checkpoint: every valid block up to the file's last\n"
"  one is re-attached, the damaged ones between are counted (\"N damaged blocks among\n"
"  them\", recovered_damaged in --json), as readers skip them. Without --repair nothing\n"
"  is written.\n"
"  exFAT, FAT32 and FAT16 are checked and repaired; FAT12 is checked only.\n"
"  docs/FSCK.md lists every check and repair rule.\n"
"\n"
"OPTIONS\n"
"  --repair         repair: reclaim leaked clusters, cut sizes and chains to their valid\n"
"                   allocation, fix checksums, re-attach log blocks, clear the dirty flag\n"
"  --no-recover     do not look for log blocks past a log file's recorded end\n"
"  --json           print one JSON object instead of text\n"
"  --partition N    use the Nth partition (from 1) instead of the first FAT/exFAT one\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat fsck disk.img\n"
"  streamfat fsck --repair --json /dev/sdb1\n"
"\n"
"EXIT STATUS\n"
"  0 clean; 1 problems found (with --repair: all of them repaired); 2 problems that\n"
"  cannot be repaired, no FAT/exFAT volume, an I/O error, or wrong usage.\n";

static const struct option longopts[] = {
    { "repair", no_argument, NULL, 'r' },
    { "no-recover", no_argument, NULL, 'N' },
    CLI_LONGOPT_JSON,
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

struct out {
    int json;
    int n;
};

static void finding(void *user, const struct sf_check_finding *f)
{
    struct out *o = user;
    if (o->json) {
        int first = 1;
        fputs(o->n ? ",\n  {" : "\n  {", stdout);
        json_kv_str(stdout, &first, "kind", sf_check_kind_name(f->kind));
        if (f->path)
            json_kv_str(stdout, &first, "path", f->path);
        json_kv_str(stdout, &first, "message", f->msg);
        json_kv_bool(stdout, &first, "repaired", f->repaired);
        json_kv_bool(stdout, &first, "fatal", f->fatal);
        fputc('}', stdout);
    } else {
        printf("%s: %s%s%s%s\n", sf_check_kind_name(f->kind), f->path ? f->path : "",
               f->path ? ": " : "", f->msg,
               f->repaired ? " [repaired]" : f->fatal ? " [not repairable]" : "");
    }
    o->n++;
}

/* Locate the volume without mounting it: bd is the whole device or a partition window.
 * Where sf_probe recognises nothing fsck still looks (the partition's first sector may be
 * what is damaged), and the checker says what it finds. */
static int open_volume(struct target *t, const char *path, int repair, uint32_t partition,
                       struct sf_bdev **bd)
{
    uint8_t type;

    if (target_locate(t, path, repair ? 0 : TARGET_RDONLY, partition, &type))
        return CLI_ERR;
    *bd = target_volume_bd(t, partition);
    if (!*bd) {
        target_close(t);
        return CLI_ERR;
    }
    if (repair)
        *bd = fault_env_wrap(*bd);         /* STREAMFAT_FAULT: tests only */
    return 0;
}

int cmd_fsck(int argc, char **argv)
{
    struct target t;
    struct sf_bdev *bd;
    struct sf_check_result r;
    struct out o = { 0, 0 };
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, help,
                                  CLI_OPT_PARTITION | CLI_OPT_JSON);
    uint32_t partition, flags = 0;
    int c;

    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 'r': flags |= SF_CHECK_REPAIR; break;
        case 'N': flags |= SF_CHECK_NO_RECOVER; break;
        }
    }
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, 1, "TARGET", NULL))
        return CLI_USAGE;
    const char *path = argv[optind];
    partition = cl.partition;
    o.json = cl.json;

    /* fsck's own statuses: an error opening or reading the target is 2, not 1. */
    if (open_volume(&t, path, (flags & SF_CHECK_REPAIR) != 0, partition, &bd)) {
        return 2;
    }
    sf_ssize_t need = sf_check_work_size(bd);
    if (need < 0) {
        cli_err("%s: %s", path, need == SF_ECORRUPT ? "no FAT or exFAT file system found"
                                                    : sf_strerror((int)need));
        target_close(&t);
        return 2;
    }
    void *work = target_alloc(bd, (size_t)need);
    struct sf_check_opts opts = { flags, work, (size_t)need, finding, &o };
    if (o.json) {
        int first = 1;
        fputc('{', stdout);
        json_kv_str(stdout, &first, "target", path);
        fputs(", \"problems\": [", stdout);
    }
    int rc = sf_check(bd, &opts, &r);
    free(work);
    int cerr = sf_filebd_close(&t.fbd);     /* its error is the check's: no second line */
    t.opened = 0;
    if (rc >= 0 && cerr && (flags & SF_CHECK_REPAIR))
        rc = SF_EIO;
    if (o.json) {
        int first = 0;
        fputs(o.n ? "\n  ]" : "]", stdout);
        json_kv_str(stdout, &first, "fs", r.fs == 64 ? "exfat" : r.fs == 32 ? "fat32"
                                          : r.fs == 16 ? "fat16" : r.fs == 12 ? "fat12" : "none");
        if (rc < 0)
            json_kv_str(stdout, &first, "error", sf_strerror(rc));
        json_kv_bool(stdout, &first, "clean", rc == 0);
        json_kv_u64(stdout, &first, "problem_count", r.problems);
        json_kv_u64(stdout, &first, "repaired", r.repaired);
        json_kv_u64(stdout, &first, "unrepairable", r.unrepairable);
        json_kv_u64(stdout, &first, "files", r.files);
        json_kv_u64(stdout, &first, "dirs", r.dirs);
        json_kv_u64(stdout, &first, "clusters_used", r.clusters_used);
        json_kv_u64(stdout, &first, "leaked_clusters", r.leaked_clusters);
        json_kv_u64(stdout, &first, "recovered_blocks", r.recovered_blocks);
        json_kv_u64(stdout, &first, "recovered_bytes", r.recovered_bytes);
        json_kv_u64(stdout, &first, "recovered_damaged", r.recovered_damaged);
        fputs("}\n", stdout);
    }
    if (rc < 0) {
        if (!o.json)
            cli_err("%s: %s", path, rc == SF_ECORRUPT ? "no FAT or exFAT file system found"
                                                      : sf_strerror(rc));
        return 2;
    }
    if (!o.json) {
        const char *fs = r.fs == 64 ? "exFAT" : r.fs == 32 ? "FAT32" : r.fs == 16 ? "FAT16"
                                                                                  : "FAT12";
        if (rc == 0)
            printf("%s: %s clean, %" PRIu64 " files, %" PRIu64 " directories\n", path, fs,
                   r.files, r.dirs);
        else
            printf("%s: %s: %u problems, %u repaired, %u not repairable%s\n", path, fs,
                   r.problems, r.repaired, r.unrepairable,
                   (flags & SF_CHECK_REPAIR) || r.problems == r.unrepairable
                       ? "" : " (run with --repair to fix)");
        if (r.recovered_blocks)
            printf("%s: %" PRIu64 " log blocks (%" PRIu64 " bytes) %s, %" PRIu64
                   " damaged blocks among them\n", path,
                   r.recovered_blocks, r.recovered_bytes,
                   (flags & SF_CHECK_REPAIR) ? "re-attached" : "can be re-attached",
                   r.recovered_damaged);
    }
    return rc;
}
