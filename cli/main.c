/* streamfat: command dispatch, the top-level help, and helpers every subcommand uses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/units.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *cli_cmd = "";

static const char main_help[] =
"streamfat - log data to FAT32/exFAT volumes on flash storage\n"
"\n"
"SYNOPSIS\n"
"  streamfat COMMAND [OPTIONS] TARGET [ARGS]\n"
"  streamfat --help | --version\n"
"\n"
"DESCRIPTION\n"
"  TARGET is a disk image file or a block device. On a device with a partition table the\n"
"  first FAT/exFAT partition is used unless --partition N says otherwise.\n"
"  Read commands (info, ls, cat, get) open the target read-only and never change it.\n"
"\n"
"COMMANDS\n"
"  mkfs    create a file system (exFAT, FAT32, FAT16)\n"
"  info    show what is on a volume\n"
"  ls      list a directory\n"
"  cat     write a file to standard output\n"
"  get     copy a file from the volume\n"
"  put     copy a file onto the volume\n"
"  rm      remove files and directories\n"
"  mkdir   create directories\n"
"  fsck    check a volume, and repair it (--repair)\n"
"  log     record CAN, UDP, latency or raw data into log files\n"
"  demo    log a synthetic vehicle into demo.img, read it back and check it\n"
"  export  decode log files to candump, ASC, BLF, CSV, MF4 or raw\n"
"  report  one HTML page showing a recording: timeline, bus load, ids, latency\n"
"  bench   measure sustained write speed (cache boundary, steady state, latency)\n"
"  plan    fill time, endurance and settings for a logging rate\n"
"  keygen  make a key pair for sealed logs (log --encrypt-to, export --key)\n"
"\n"
"  'streamfat COMMAND --help' describes each command.\n"
"\n"
"UNITS\n"
"  sizes:     256M = 256 MiB (K M G T and KiB MiB GiB TiB are powers of 1024),\n"
"             120GB = 120 * 10^9 bytes (KB MB GB TB are powers of 1000), 4096 = bytes\n"
"  rates:     500MB/s (powers of 1000), 500MiB/s (powers of 1024)\n"
"  durations: 1.5 = seconds; 500us, 200ms, 10s, 10m, 2h\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 runtime error, 2 wrong usage.\n";

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static int cmd_parse_debug(int argc, char **argv);
int cmd_log(int argc, char **argv);   /* cli/commands/cmd_log.c */
int cmd_export(int argc, char **argv);   /* cli/commands/cmd_export.c */
int cmd_bench(int argc, char **argv);    /* cli/commands/cmd_bench.c */
int cmd_report(int argc, char **argv);   /* cli/commands/cmd_report.c */
int cmd_plan(int argc, char **argv);     /* cli/commands/cmd_plan.c */
int cmd_fsck(int argc, char **argv);     /* cli/commands/cmd_fsck.c */
int cmd_keygen(int argc, char **argv);   /* cli/commands/cmd_keygen.c */

static const struct command commands[] = {
    { "mkfs", cmd_mkfs }, { "info", cmd_info }, { "ls", cmd_ls },
    { "cat", cmd_cat }, { "get", cmd_get }, { "put", cmd_put }, { "rm", cmd_rm },
    { "mkdir", cmd_mkdir }, { "log", cmd_log }, { "demo", cmd_demo }, { "export", cmd_export },
    { "report", cmd_report }, { "bench", cmd_bench }, { "plan", cmd_plan }, { "fsck", cmd_fsck },
    { "keygen", cmd_keygen },
    /* Hidden, for tests: print what a value parses to. */
    { "__parse-size", cmd_parse_debug }, { "__parse-rate", cmd_parse_debug },
    { "__parse-duration", cmd_parse_debug },
    { NULL, NULL },
};

/* What a command prints on standard output is its output as much as a file it writes:
 * `info --json > v.json` or `log --print-config > cfg.json` on a full disk must not exit 0
 * with the file empty or cut. Checked once here for every command. A command that failed
 * already said why (export, cat and get - report their own failed writes); a second line
 * would only repeat it. */
int cli_stdout_checked(int rc)
{
    int e = 0;

    if (fflush(stdout))
        e = errno;
    else if (ferror(stdout))
        e = EIO;
    if (!e || rc != CLI_OK)
        return rc;
    cli_err("standard output: write failed: %s", strerror(e));
    return CLI_ERR;
}

static int run_main(int argc, char **argv)
{
    const struct command *c;

    if (argc < 2) {
        fprintf(stderr, "streamfat: missing command\nTry 'streamfat --help'.\n");
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_help, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("streamfat %s\n", SF_VERSION_STRING);
        return CLI_OK;
    }
    for (c = commands; c->name; c++) {
        if (strcmp(argv[1], c->name) == 0) {
            cli_cmd = c->name;
            return c->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "streamfat: unknown command '%s'\nTry 'streamfat --help'.\n", argv[1]);
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    return cli_stdout_checked(run_main(argc, argv));
}

static int cmd_parse_debug(int argc, char **argv)
{
    uint64_t v;
    const char *why = "";
    int err;

    if (argc != 2)
        return cli_usage("expected one value");
    if (strcmp(cli_cmd, "__parse-size") == 0)
        err = units_parse_size(argv[1], &v, &why);
    else if (strcmp(cli_cmd, "__parse-rate") == 0)
        err = units_parse_rate(argv[1], &v, &why);
    else
        err = units_parse_duration(argv[1], &v, &why);
    if (err)
        return cli_usage("invalid value '%s': %s", argv[1], why);
    printf("%" PRIu64 "\n", v);
    return CLI_OK;
}

/* A command that builds its output in a temporary file (demo -o: cli/common/outfile.c)
 * hands that file's path to code that names its target in messages; the user knows only
 * the output's name, so every message shows that name in its place. */
static const char *alias_tmp, *alias_shown;

void cli_path_alias(const char *tmp, const char *shown)
{
    alias_tmp = tmp;
    alias_shown = shown;
}

/* "streamfat CMD: <message>" on stderr, without the newline. */
__attribute__((format(printf, 1, 0)))
static void vcmd_msg(const char *fmt, va_list ap)
{
    char buf[4096];
    const char *p = buf, *hit;

    fprintf(stderr, "streamfat%s%s: ", *cli_cmd ? " " : "", cli_cmd);
    if (!alias_tmp || !*alias_tmp) {
        vfprintf(stderr, fmt, ap);
        return;
    }
    vsnprintf(buf, sizeof buf, fmt, ap);
    while ((hit = strstr(p, alias_tmp)) != NULL) {
        fprintf(stderr, "%.*s%s", (int)(hit - p), p, alias_shown);
        p = hit + strlen(alias_tmp);
    }
    fputs(p, stderr);
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vcmd_msg(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'streamfat %s --help'.\n", cli_cmd);
    return CLI_USAGE;
}

void cli_err(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vcmd_msg(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

sf_time_ms cli_clock(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (sf_time_ms)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int16_t cli_utc_offset(void)
{
    time_t now = time(NULL);
    struct tm tm;
    long m;

    if (!localtime_r(&now, &tm))
        return 0;
    m = tm.tm_gmtoff / 60;
    m = m >= 0 ? (m + 7) / 15 * 15 : -((-m + 7) / 15 * 15);
    if (m < -720)
        m = -720;
    if (m > 840)
        m = 840;
    return (int16_t)m;
}

/* Floor division so that times before 1970 format correctly. */
static void split_ms(sf_time_ms t, time_t *sec, int *ms)
{
    sf_time_ms s = t / 1000, r = t % 1000;

    if (r < 0) {
        r += 1000;
        s--;
    }
    *sec = (time_t)s;
    *ms = (int)r;
}

void cli_time_local(sf_time_ms t, char *buf, size_t n)
{
    time_t s;
    int ms;
    struct tm tm;

    split_ms(t, &s, &ms);
    if (!localtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm))
        snprintf(buf, n, "?");
}

void cli_time_utc(sf_time_ms t, char *buf, size_t n)
{
    time_t s;
    int ms;
    struct tm tm;
    char tmp[40];

    split_ms(t, &s, &ms);
    if (!gmtime_r(&s, &tm) || !strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm)) {
        snprintf(buf, n, "?");
        return;
    }
    snprintf(buf, n, "%s.%03dZ", tmp, ms);
}

const char *cli_fs_name(unsigned fs_type)
{
    switch (fs_type) {
    case SF_FS_EXFAT: return "exFAT";
    case SF_FS_FAT32: return "FAT32";
    case SF_FS_FAT16: return "FAT16";
    case SF_FS_FAT12: return "FAT12";
    default:          return "none";
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);

    if (!p) {
        fprintf(stderr, "streamfat: out of memory\n");
        exit(CLI_ERR);
    }
    return p;
}

char *cli_path_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char *p;

    while (dl > 0 && dir[dl - 1] == '/')
        dl--;
    while (*name == '/') {
        name++;
        nl--;
    }
    p = xmalloc(dl + nl + 2);
    memcpy(p, dir, dl);
    if (dl)
        p[dl++] = '/';
    memcpy(p + dl, name, nl + 1);
    return p;
}

char *cli_basename(const char *path)
{
    size_t end = strlen(path), start;
    char *p;

    while (end > 0 && path[end - 1] == '/')
        end--;
    start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    p = xmalloc(end - start + 1);
    memcpy(p, path + start, end - start);
    p[end - start] = '\0';
    return p;
}

int cli_is_root(const char *path)
{
    for (; *path; path++)
        if (*path != '/')
            return 0;
    return 1;
}
