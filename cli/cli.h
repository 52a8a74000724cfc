/* Shared pieces of the streamfat command-line tool: exit statuses, error printing,
 * option-parsing helpers, time formatting, and the subcommands' entry points.
 *
 * Exit status, for every subcommand:
 *   0  success
 *   1  runtime error (a target, path or device failed); one line on stderr naming it
 *   2  wrong usage; "streamfat CMD: <what>" and "Try 'streamfat CMD --help'." on stderr */
#ifndef SF_CLI_CLI_H
#define SF_CLI_CLI_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "streamfat/sf.h"

#define CLI_OK 0
#define CLI_ERR 1
#define CLI_USAGE 2

/* Name of the running subcommand ("ls"), set by main before dispatch. */
extern const char *cli_cmd;

/* Print a usage error (two lines) and return CLI_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rc, or CLI_ERR with one line when standard output could not be written (cli/main.c);
 * main applies it to every command, a command that calls exit() itself applies it first. */
int cli_stdout_checked(int rc);
/* Until called again with NULL: messages (cli_err, cli_usage) show `shown` wherever they
 * would name the temporary file `tmp` (cli/main.c). */
void cli_path_alias(const char *tmp, const char *shown);
/* Print "streamfat CMD: <message>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A host file that cannot be opened, in the one form every command uses (common/open_err.c):
 * "streamfat CMD: PATH: cannot open: no such file or directory". cli_errno_text is
 * strerror in the lower case of sf_strerror's texts. */
void cli_open_err(const char *path, int errnum);
const char *cli_errno_text(int errnum);
/* Parse a non-negative decimal integer no larger than max; 0 or -1. */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* A command's option loop (cli/common/args.c). cli_getopt handles what commands share:
 * -h/--help (getopt code 'h') prints `help`; getopt's '?' and ':' become usage errors;
 * with CLI_OPT_PARTITION the code 'P' is --partition N, with CLI_OPT_JSON 'j' is --json.
 * It returns the next option for the command itself, 0 when the options end (optind is
 * then the first positional argument), or -1 when the command is done and returns
 * `status` (CLI_OK after the help, CLI_USAGE after a usage error). Usage:
 *     struct cli_opts cl = CLI_OPTS(argc, argv, ":ph", longopts, help, CLI_OPT_PARTITION);
 *     while ((c = cli_getopt(&cl)) > 0) switch (c) { case 'p': ...; }
 *     if (c < 0) return cl.status;
 * and cl.partition, cl.json hold the shared options' values. */
#define CLI_OPT_PARTITION 0x1u
#define CLI_OPT_JSON      0x2u
/* Their entries in a command's longopts (which needs <getopt.h>); every list ends with
 * CLI_LONGOPTS_END (--help, then the terminator). */
#define CLI_LONGOPT_PARTITION { "partition", required_argument, NULL, 'P' }
#define CLI_LONGOPT_JSON      { "json", no_argument, NULL, 'j' }
#define CLI_LONGOPTS_END      { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
struct option;
struct cli_opts {
    int argc;
    char **argv;
    const char *shortopts;          /* getopt_long's, beginning with ':' */
    const struct option *longopts;
    const char *help;
    unsigned shared;                /* CLI_OPT_* handled by cli_getopt */
    uint32_t partition;             /* --partition N; 0 = automatic */
    int json;                       /* --json given */
    int status;                     /* after -1: what the command returns */
    int started;
};
#define CLI_OPTS(argc, argv, shortopts, longopts, help, shared) \
    { (argc), (argv), (shortopts), (longopts), (help), (shared), 0, 0, 0, 0 }
int cli_getopt(struct cli_opts *o);
/* The positional arguments after the options: the NULL-terminated names ("TARGET",
 * "PATH") must all be there, else "missing NAME"; at most max in all (-1: any number),
 * else "unexpected argument 'X'" for the first extra. Returns 0 or CLI_USAGE. */
int cli_args(int argc, char **argv, int max, ...) __attribute__((sentinel));

/* Wall clock for timestamps (CLOCK_REALTIME in ms) and the local UTC offset rounded to
 * 15 minutes, as the library's sf_vol_cfg wants them. */
sf_time_ms cli_clock(void *ctx);
int16_t cli_utc_offset(void);
/* "2025-11-30T14:03:07" in local time; "2025-11-30T13:03:07.120Z" in UTC. */
void cli_time_local(sf_time_ms t, char *buf, size_t n);
void cli_time_utc(sf_time_ms t, char *buf, size_t n);
const char *cli_fs_name(unsigned fs_type);

/* Volume paths: join "dir" and "name" into a malloc'd "dir/name" (dir may be "" or "/"). */
char *cli_path_join(const char *dir, const char *name);
/* The last component of a path (no trailing slashes), into a malloc'd string. */
char *cli_basename(const char *path);
/* A volume path names the root directory ("", "/", "//"). */
int cli_is_root(const char *path);

int cmd_mkfs(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_put(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_demo(int argc, char **argv);

/* Listing, shared by ls and demo. flags: LS_LONG, LS_RECURSIVE, LS_JSON. Prints the
 * listing of `path` on vol to out; errors go to stderr naming `target`. 0 or CLI_ERR. */
#define LS_LONG      0x1u
#define LS_RECURSIVE 0x2u
#define LS_JSON      0x4u
struct sf_vol;
int ls_run(struct sf_vol *vol, const char *target, const char *path, unsigned flags, FILE *out);

/* mkfs, shared by mkfs and demo. */
struct mkfs_args {
    const char *target;
    unsigned fs_type;        /* 0 = auto */
    uint32_t cluster_size;   /* 0 = by size */
    uint64_t size;           /* 0 = whole target; required when the target does not exist */
    int have_size;
    const char *label;
    int partition;           /* -1 = default, else enum sf_part_scheme */
    uint64_t align;
    uint32_t sector_size;    /* image files only; 0 = 512 */
    int quiet;
    const char *size_opt;    /* the option that gives the size, for messages (NULL: -s) */
    int force;               /* format over whatever is there (common/format_guard.h) */
    const char *keep_hint;   /* how to log onto a volume mkfs refused, in the caller's words
                                (NULL: mkfs's) */
};
int mkfs_run(const struct mkfs_args *a);

/* A host output file that replaces an existing one only when complete (cli/common/outfile.c):
 * every command that writes a host file opens it here. out_open writes to a temporary file
 * beside path (a regular file; anything else is written in place) and refuses, before
 * writing anything, a path that is `input` itself (NULL: no check); out_close(ok) flushes,
 * fsyncs and renames it over path, or (not ok, or a write failed) removes it and leaves
 * path as it was. Both return 0 or CLI_ERR after printing an error. */
struct stat;
struct out_file {
    FILE *f;
    const char *name;        /* as the user gave it, for messages */
    char *final, *tmp;       /* NULL when written directly (not a regular file) */
};
int out_open(struct out_file *o, const char *path, const struct stat *input);
int out_close(struct out_file *o, int ok);
/* 1 when a and b are one file (inode, or block device). */
int out_same_file(const struct stat *a, const struct stat *b);
/* 1 when f can be seeked back in to patch what it wrote: a regular file, at offset 0,
 * not opened for appending. */
int out_seekable(FILE *f);

#endif
