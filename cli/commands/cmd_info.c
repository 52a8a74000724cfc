/* streamfat info: what is on a volume (read-only). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/json.h"
#include "common/target.h"
#include "common/units.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static const char help[] =
"NAME\n"
"  streamfat info - show what is on a volume\n"
"\n"
"SYNOPSIS\n"
"  streamfat info [--json] [--partition N] TARGET\n"
"\n"
"DESCRIPTION\n"
"  Prints the file system type, sector and cluster size, cluster count, where the volume\n"
"  and its cluster heap start, serial number, label, the volume-dirty flag as found, and\n"
"  the free space (this reads the whole allocation bitmap once). Offsets and sizes are in\n"
"  bytes. TARGET is opened read-only and is not changed.\n"
"\n"
"OPTIONS\n"
"  --json           print one JSON object instead of text\n"
"  --partition N    use the Nth partition (from 1) instead of the first FAT/exFAT one\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat info disk.img\n"
"  streamfat info --json /dev/sdb | python3 -m json.tool\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 no file system or an error reading it, 2 wrong usage.\n";

static const struct option longopts[] = {
    CLI_LONGOPT_JSON,
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

int cmd_info(int argc, char **argv)
{
    struct target t;
    struct sf_vol_info vi;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, help,
                                  CLI_OPT_PARTITION | CLI_OPT_JSON);
    int json, err, first = 1;
    int64_t free_cl;
    char serial[16], hs[32];
    uint64_t free_bytes;

    if (cli_getopt(&cl) < 0)                 /* it has no options of its own */
        return cl.status;
    if (cli_args(argc, argv, 1, "TARGET", NULL))
        return CLI_USAGE;
    json = cl.json;

    if (target_open(&t, argv[optind], TARGET_RDONLY, cl.partition))
        return CLI_ERR;
    err = sf_vol_info(&t.vol, &vi);
    if (err) {
        cli_err("%s: %s", t.path, sf_strerror(err));
        target_close(&t);
        return CLI_ERR;
    }
    free_cl = sf_vol_free_clusters(&t.vol);
    if (free_cl < 0) {
        cli_err("%s: cannot count free clusters: %s", t.path, sf_strerror((int)free_cl));
        target_close(&t);
        return CLI_ERR;
    }
    free_bytes = (uint64_t)free_cl * vi.cluster_size;
    snprintf(serial, sizeof serial, "%04X-%04X", vi.serial >> 16, vi.serial & 0xFFFFu);

    if (json) {
        fputc('{', stdout);
        json_kv_str(stdout, &first, "target", t.path);
        json_kv_str(stdout, &first, "fs", cli_fs_name(vi.fs_type));
        json_kv_u64(stdout, &first, "sector_size", vi.sector_size);
        json_kv_u64(stdout, &first, "cluster_size", vi.cluster_size);
        json_kv_u64(stdout, &first, "cluster_count", vi.cluster_count);
        json_kv_u64(stdout, &first, "volume_offset", vi.volume_offset);
        json_kv_u64(stdout, &first, "volume_size", vi.volume_size);
        json_kv_u64(stdout, &first, "heap_offset", vi.heap_offset);
        json_kv_str(stdout, &first, "serial", serial);
        json_kv_str(stdout, &first, "label", vi.label);
        json_kv_bool(stdout, &first, "dirty", vi.dirty);
        json_kv_u64(stdout, &first, "free_clusters", (uint64_t)free_cl);
        json_kv_u64(stdout, &first, "free_bytes", free_bytes);
        if (vi.fs_type == SF_FS_EXFAT) {
            char rev[16];
            snprintf(rev, sizeof rev, "%u.%02u", vi.fs_revision >> 8, vi.fs_revision & 0xFFu);
            json_kv_str(stdout, &first, "fs_revision", rev);
        }
        fputs("}\n", stdout);
    } else {
        printf("target:         %s\n", t.path);
        if (vi.fs_type == SF_FS_EXFAT)
            printf("file system:    exFAT %u.%02u\n", vi.fs_revision >> 8,
                   vi.fs_revision & 0xFFu);
        else
            printf("file system:    %s\n", cli_fs_name(vi.fs_type));
        printf("sector size:    %u\n", vi.sector_size);
        printf("cluster size:   %u (%s)\n", vi.cluster_size,
               units_format_size(vi.cluster_size, hs, sizeof hs));
        printf("cluster count:  %u\n", vi.cluster_count);
        printf("volume offset:  %" PRIu64 "\n", vi.volume_offset);
        printf("volume size:    %" PRIu64 " (%s)\n", vi.volume_size,
               units_format_size(vi.volume_size, hs, sizeof hs));
        printf("heap offset:    %" PRIu64 "\n", vi.heap_offset);
        printf("serial:         %s\n", serial);
        printf("label:          %s\n", vi.label[0] ? vi.label : "(none)");   /* as mkfs */
        printf("dirty:          %s\n", vi.dirty ? "yes" : "no");
        printf("free:           %" PRIu64 " (%s, %" PRId64 " clusters)\n", free_bytes,
               units_format_size(free_bytes, hs, sizeof hs), free_cl);
    }
    return target_close(&t);
}
