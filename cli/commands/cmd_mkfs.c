/* streamfat mkfs: create an exFAT, FAT32 or FAT16 file system on an image file or a block
 * device. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/target.h"
#include "common/fault_env.h"
#include "common/format_guard.h"
#include "common/units.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
"NAME\n"
"  streamfat mkfs - create a file system\n"
"\n"
"SYNOPSIS\n"
"  streamfat mkfs [-t TYPE] [-c CLUSTER] [-s SIZE] [-L LABEL] [--fats N]\n"
"                 [--partition-table none|mbr|gpt] [--align SIZE] [--sector-size 512|4096]\n"
"                 [-F] TARGET\n"
"\n"
"DESCRIPTION\n"
"  Formats TARGET, an image file or a block device. When TARGET does not exist and -s is\n"
"  given, a sparse image file of SIZE bytes is created. The cluster heap or data area (and\n"
"  the partition, if any) is aligned to the allocation unit (--align, 4 MiB by default), as\n"
"  the SD Association formatter does. The serial number and GPT GUIDs are random.\n"
"  Everything on TARGET (or on its first SIZE bytes) is lost, so a TARGET that holds\n"
"  anything is refused unless --force is given: a FAT or exFAT volume (the line says its\n"
"  type, label and number of logs), an MBR or GPT partition table, another file system\n"
"  (ext4, NTFS ...) or any non-zero byte in its first MiB. A new, empty or all-zero\n"
"  TARGET is formatted without asking.\n"
"\n"
"OPTIONS\n"
"  -t, --type TYPE          exfat, fat32, fat16 or auto (the default): FAT16 up to 2 GiB,\n"
"                           FAT32 up to 32 GiB, exFAT above, as SD cards come formatted\n"
"  -c, --cluster-size SIZE  cluster size, a power of two (exFAT: 4K .. 32M; FAT: the sector\n"
"                           size .. 64K, keeping FAT32 at 65,525 clusters or more and\n"
"                           FAT16 at 4,085 .. 65,524); default: chosen by the volume size\n"
"  -s, --size SIZE          use only the first SIZE bytes of TARGET (the rest stays unused,\n"
"                           e.g. for over-provisioning); creates TARGET if it does not exist\n"
"  -L, --label LABEL        volume label, up to 11 characters (FAT: ASCII, upper-cased)\n"
"      --fats N             FAT32/FAT16: number of FATs, 1 or 2 (default 2)\n"
"      --partition-table SCHEME  none (superfloppy), mbr or gpt; default: none for\n"
"                           image files, mbr for block devices (the old spelling\n"
"                           --partition SCHEME still works; elsewhere --partition N is an index)\n"
"      --align SIZE         allocation-unit alignment (default 4M)\n"
"      --sector-size N      sector size of a new or existing image file: 512 (default) or 4096\n"
"  -F, --force              format even when TARGET holds a volume, a partition table or\n"
"                           other data (everything on it is lost)\n"
"  -q, --quiet              print nothing on success\n"
"  -h, --help               show this help\n"
"\n"
"  Sizes take K M G T (powers of 1024) or KB MB GB TB (powers of 1000).\n"
"\n"
"EXAMPLES\n"
"  streamfat mkfs -s 64M disk.img\n"
"  streamfat mkfs -F -c 128K -L LOGS --partition-table gpt /dev/sdb  # cards come formatted\n"
"  streamfat mkfs -F -s 120GB /dev/mmcblk0  # leave the rest of the card unused\n"
"  streamfat mkfs -F -t fat32 --fats 1 /dev/sdc   # FAT32 for an old logger\n"
"\n"
"EXIT STATUS\n"
"  0 formatted, 1 error (nothing usable is left behind for a new image file; TARGET holds\n"
"  data and --force was not given: TARGET is left as it was), 2 wrong usage.\n";

enum { OPT_FATS = 256 };          /* long only: -F is --force (docs/CLI.md) */

static const struct option longopts[] = {
    { "type", required_argument, NULL, 't' },
    { "cluster-size", required_argument, NULL, 'c' },
    { "size", required_argument, NULL, 's' },
    { "label", required_argument, NULL, 'L' },
    { "partition-table", required_argument, NULL, 'P' },
    { "partition", required_argument, NULL, 'P' },      /* the name before docs/CLI.md */
    { "align", required_argument, NULL, 'A' },
    { "sector-size", required_argument, NULL, 'S' },
    { "fats", required_argument, NULL, OPT_FATS },
    { "force", no_argument, NULL, 'F' },
    { "quiet", no_argument, NULL, 'q' },
    CLI_LONGOPTS_END,
};

static int random_bytes(void *p, size_t n)
{
    uint8_t *b = p;

    while (n) {
        ssize_t r = getrandom(b, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

static const char *scheme_name(int s)
{
    return s == SF_PART_GPT ? "GPT" : s == SF_PART_MBR ? "MBR" : "none";
}

/* At most 11 characters (exFAT: UTF-16 units, FAT: bytes; both limits hold for ASCII, and
 * sf_mkfs checks the rest). */
static int label_fits(const char *l)
{
    size_t units = 0;
    for (const unsigned char *p = (const unsigned char *)l; *p; p++)
        if ((*p & 0xC0) != 0x80)
            units += *p >= 0xF0 ? 2 : 1;
    return units <= 11;
}

/* mkfs_run with the number of FATs (0: the default) that struct mkfs_args does not carry. */
static int mkfs_format(const struct mkfs_args *a, unsigned fats)
{
    struct sf_filebd f;
    struct sf_mkfs_opts o;
    struct stat st;
    const char *why = "";
    int created = 0, grown = 0, err, rc = CLI_ERR;
    unsigned flags = 0;
    void *buf = NULL;
    char hs[32];

    memset(&o, 0, sizeof o);
    if (!target_dev_path(a->target))
        return CLI_ERR;
    if (stat(target_dev_path(a->target), &st) != 0) {
        if (errno != ENOENT) {
            cli_open_err(a->target, errno);
            return CLI_ERR;
        }
        if (!a->have_size) {
            cli_err("%s: no such file (give %s SIZE to create an image file)", a->target,
                    a->size_opt ? a->size_opt : "-s");
            return CLI_ERR;
        }
        if (a->size % (a->sector_size ? a->sector_size : 512)) {
            cli_err("%s: size %" PRIu64 " is not a multiple of the sector size (%u)",
                    a->target, a->size, a->sector_size ? a->sector_size : 512);
            return CLI_ERR;
        }
        flags |= SF_FILEBD_CREATE;
        created = 1;
    } else if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
        cli_err("%s: not a regular file or block device", a->target);
        return CLI_ERR;
    } else if (S_ISBLK(st.st_mode) && a->sector_size) {
        cli_err("%s: --sector-size applies to image files only", a->target);
        return CLI_ERR;
    }
    /* An empty image file is a new one that already has its name (and owner, mode): grown
     * to SIZE like a new one, and back to empty when formatting fails. */
    if (!created && S_ISREG(st.st_mode) && st.st_size == 0 && a->have_size) {
        if (truncate(target_dev_path(a->target), (off_t)a->size)) {
            cli_err("%s: %s", a->target, strerror(errno));
            return CLI_ERR;
        }
        grown = 1;
    }
    if (!created && !grown && !a->force &&
        format_guard(a->target, a->keep_hint ? a->keep_hint
                     : "'streamfat log' logs onto it as it is"))
        return CLI_ERR;
    if (target_open_dev(&f, a->target, flags, a->sector_size, created ? a->size : 0))
        return CLI_ERR;

    if (a->have_size && a->size > f.bytes) {
        cli_err("%s: size %" PRIu64 " is larger than the target (%" PRIu64 " bytes)",
                a->target, a->size, f.bytes);
        goto out;
    }
    if (a->have_size && a->size % f.bd.sector_size) {
        cli_err("%s: size %" PRIu64 " is not a multiple of the sector size (%u)",
                a->target, a->size, f.bd.sector_size);
        goto out;
    }

    o.fs_type = (uint8_t)a->fs_type;
    o.partition = (uint8_t)(a->partition >= 0 ? a->partition
                                              : f.is_blockdev ? SF_PART_MBR : SF_PART_NONE);
    o.cluster_size = a->cluster_size;
    o.fats = (uint8_t)fats;
    o.align = a->align;
    o.size = a->have_size ? a->size : 0;
    o.label = a->label;
    o.now = cli_clock(NULL);
    if (random_bytes(&o.serial, sizeof o.serial) || random_bytes(o.disk_guid, 16) ||
        random_bytes(o.part_guid, 16)) {
        cli_err("cannot get random numbers: %s", strerror(errno));
        goto out;
    }
    o.buf_size = 1u << 20;
    buf = target_alloc(&f.bd, o.buf_size);
    o.buf = buf;

    struct sf_bdev *bd = fault_env_wrap(&f.bd);   /* STREAMFAT_FAULT: tests only */
    err = sf_mkfs(bd, &o, &why);
    if (!err)
        err = sf_bdev_flush(bd);
    if (err) {
        if (why && *why)
            cli_err("%s: cannot format: %s (%s)", a->target, why, sf_strerror(err));
        else
            cli_err("%s: cannot format: %s", a->target, sf_strerror(err));
        goto out;
    }
    rc = CLI_OK;

out:
    free(buf);
    err = sf_filebd_close(&f);
    if (err && rc == CLI_OK) {
        cli_err("%s: close failed: %s", a->target, sf_strerror(err));
        rc = CLI_ERR;
    }
    if (rc != CLI_OK && created)
        unlink(a->target);
    if (rc != CLI_OK && grown && truncate(target_dev_path(a->target), 0))
        cli_err("%s: cannot make it empty again: %s", a->target, strerror(errno));
    if (rc != CLI_OK || a->quiet)
        return rc;

    /* Mount what was written, read-only, both to check it and to report it. */
    {
        struct target t;
        struct sf_vol_info vi;

        if (target_open(&t, a->target, TARGET_RDONLY, 0))
            return CLI_ERR;
        err = sf_vol_info(&t.vol, &vi);
        if (err) {
            cli_err("%s: %s", a->target, sf_strerror(err));
            target_close(&t);
            return CLI_ERR;
        }
        printf("formatted %s\n", a->target);
        printf("  type:          %s\n", cli_fs_name(vi.fs_type));
        printf("  partition:     %s\n", scheme_name(o.partition));
        printf("  size:          %" PRIu64 " bytes (%s)\n", vi.volume_size,
               units_format_size(vi.volume_size, hs, sizeof hs));
        printf("  sector size:   %u bytes\n", vi.sector_size);
        printf("  cluster size:  %u bytes (%s)\n", vi.cluster_size,
               units_format_size(vi.cluster_size, hs, sizeof hs));
        printf("  clusters:      %u\n", vi.cluster_count);
        printf("  label:         %s\n", vi.label[0] ? vi.label : "(none)");
        printf("  serial:        %04X-%04X\n", vi.serial >> 16, vi.serial & 0xFFFFu);
        return target_close(&t);
    }
}

int mkfs_run(const struct mkfs_args *a)
{
    return mkfs_format(a, 0);
}

int cmd_mkfs(int argc, char **argv)
{
    struct mkfs_args a;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":t:c:s:L:qFh", longopts, help, 0);
    const char *why;
    unsigned fats = 0;
    uint64_t v;
    int c;

    memset(&a, 0, sizeof a);
    a.partition = -1;
    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 't':
            if (strcmp(optarg, "exfat") == 0)
                a.fs_type = SF_FS_EXFAT;
            else if (strcmp(optarg, "auto") == 0)
                a.fs_type = 0;
            else if (strcmp(optarg, "fat32") == 0)
                a.fs_type = SF_FS_FAT32;
            else if (strcmp(optarg, "fat16") == 0)
                a.fs_type = SF_FS_FAT16;
            else
                return cli_usage("unknown file system type '%s' (exfat, fat32, fat16, auto)",
                                 optarg);
            break;
        case 'c':
            if (units_parse_size(optarg, &v, &why))
                return cli_usage("invalid cluster size '%s': %s", optarg, why);
            if (v == 0 || (v & (v - 1)) || v > (1ull << 31))
                return cli_usage("cluster size '%s' is not a power of two", optarg);
            a.cluster_size = (uint32_t)v;
            break;
        case 's':
            if (units_parse_size(optarg, &a.size, &why))
                return cli_usage("invalid size '%s': %s", optarg, why);
            if (a.size == 0)
                return cli_usage("size must not be 0");
            a.have_size = 1;
            break;
        case 'L':
            a.label = optarg;
            break;
        case 'P':
            if (strcmp(optarg, "none") == 0)
                a.partition = SF_PART_NONE;
            else if (strcmp(optarg, "mbr") == 0)
                a.partition = SF_PART_MBR;
            else if (strcmp(optarg, "gpt") == 0)
                a.partition = SF_PART_GPT;
            else
                return cli_usage("unknown partition scheme '%s' (none, mbr, gpt)", optarg);
            break;
        case 'A':
            if (units_parse_size(optarg, &a.align, &why))
                return cli_usage("invalid alignment '%s': %s", optarg, why);
            if (a.align == 0 || (a.align & (a.align - 1)))
                return cli_usage("alignment '%s' is not a power of two", optarg);
            break;
        case 'S':
            if (strcmp(optarg, "512") == 0)
                a.sector_size = 512;
            else if (strcmp(optarg, "4096") == 0 || strcmp(optarg, "4K") == 0)
                a.sector_size = 4096;
            else
                return cli_usage("sector size must be 512 or 4096, not '%s'", optarg);
            break;
        case OPT_FATS:
            if (strcmp(optarg, "1") == 0)
                fats = 1;
            else if (strcmp(optarg, "2") == 0)
                fats = 2;
            else
                return cli_usage("--fats: the number of FATs must be 1 or 2, not '%s'", optarg);
            break;
        case 'F':
            a.force = 1;
            break;
        case 'q':
            a.quiet = 1;
            break;
        }
    }
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, 1, "TARGET", NULL))
        return CLI_USAGE;
    a.target = argv[optind];
    if (fats && a.fs_type == SF_FS_EXFAT)
        return cli_usage("--fats applies to FAT32 and FAT16 only");
    /* What the command line alone gets wrong is wrong usage, whatever the target (the
     * limits of src/fs/exfat_mkfs.c and fat_mkfs.c); what depends on the target or the
     * size is found by sf_mkfs (exit 1). */
    if (a.cluster_size) {
        uint32_t lo = a.fs_type == SF_FS_EXFAT ? 4096 : 512;
        uint32_t hi = a.fs_type == SF_FS_EXFAT || !a.fs_type ? 32u << 20 : 64u << 10;
        if (a.cluster_size < lo || a.cluster_size > hi)
            return cli_usage("cluster size %" PRIu32 " out of range: %s", a.cluster_size,
                             a.fs_type == SF_FS_EXFAT ? "exFAT takes 4K to 32M"
                             : a.fs_type ? "FAT takes 512 to 64K" : "512 to 32M (exFAT)");
    }
    if (a.label && !label_fits(a.label))
        return cli_usage("label '%s' longer than 11 characters", a.label);
    return mkfs_format(&a, fats);
}
