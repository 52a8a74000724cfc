/* streamfat cat and get: copy a file from the volume to stdout or to a host file
 * (read-only on the target). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/target.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (1u << 20)

static const char cat_help[] =
"NAME\n"
"  streamfat cat - write a file of the volume to standard output\n"
"\n"
"SYNOPSIS\n"
"  streamfat cat [--partition N] TARGET PATH\n"
"\n"
"DESCRIPTION\n"
"  Writes the content of the file PATH on TARGET to standard output. TARGET is opened\n"
"  read-only and is not changed.\n"
"\n"
"OPTIONS\n"
"  --partition N    use the Nth partition (from 1)\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat cat disk.img logs/run1.txt | less\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error (no such file, read error), 2 wrong usage.\n";

static const char get_help[] =
"NAME\n"
"  streamfat get - copy a file from the volume\n"
"\n"
"SYNOPSIS\n"
"  streamfat get [--partition N] TARGET PATH [DEST]\n"
"\n"
"DESCRIPTION\n"
"  Copies the file PATH on TARGET to DEST on the host: by default a file of the same name\n"
"  in the current directory; into DEST when DEST is a directory; '-' is standard output.\n"
"  An existing DEST file is replaced once the copy is complete (it is written beside\n"
"  DEST first); on error DEST stays as it was. DEST naming TARGET itself is refused.\n"
"  The copy gets the file's modification time. TARGET is opened read-only.\n"
"\n"
"OPTIONS\n"
"  --partition N    use the Nth partition (from 1)\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat get disk.img logs/run1.bin\n"
"  streamfat get disk.img logs/run1.bin /tmp/\n"
"  streamfat get disk.img data.csv - | head\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error, 2 wrong usage.\n";

static const struct option longopts[] = {
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

static int write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;

    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copy PATH to fd. `dest` names fd in messages. Returns 0 or CLI_ERR. */
static int copy_out(struct target *t, const char *path, int fd, const char *dest,
                    sf_time_ms *mtime)
{
    struct sf_file f;
    struct sf_stat st;
    uint8_t *buf;
    int err, rc = 0;

    err = sf_stat(&t->vol, path, &st);
    if (err == 0 && (st.attr & SF_ATTR_DIR))
        err = SF_EISDIR;
    if (err == 0)
        err = sf_open(&t->vol, &f, path, SF_O_RDONLY);
    if (err) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        return CLI_ERR;
    }
    *mtime = st.mtime;
    buf = malloc(COPY_BUF);
    if (!buf) {
        cli_err("out of memory");
        sf_close(&f);
        return CLI_ERR;
    }
    for (;;) {
        sf_ssize_t n = sf_read(&f, buf, COPY_BUF);
        if (n < 0) {
            cli_err("%s: %s: read failed: %s", t->path, path, sf_strerror((int)n));
            rc = CLI_ERR;
            break;
        }
        if (n == 0)
            break;
        if (write_all(fd, buf, (size_t)n)) {
            cli_err("%s: write failed: %s", dest, strerror(errno));
            rc = CLI_ERR;
            break;
        }
    }
    free(buf);
    err = sf_close(&f);
    if (err && !rc) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        rc = CLI_ERR;
    }
    return rc;
}

int cmd_cat(int argc, char **argv)
{
    struct target t;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, cat_help, CLI_OPT_PARTITION);
    sf_time_ms mtime;
    int rc;

    if (cli_getopt(&cl) < 0)                 /* it has no options of its own */
        return cl.status;
    if (cli_args(argc, argv, 2, "TARGET", "PATH", NULL))
        return CLI_USAGE;
    if (target_open(&t, argv[optind], TARGET_RDONLY, cl.partition))
        return CLI_ERR;
    rc = copy_out(&t, argv[optind + 1], STDOUT_FILENO, "standard output", &mtime);
    if (target_close(&t))
        rc = CLI_ERR;
    return rc;
}

int cmd_get(int argc, char **argv)
{
    struct target t;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, get_help, CLI_OPT_PARTITION);
    sf_time_ms mtime = 0;
    const char *path, *dest_arg;
    char *dest, *base;
    struct stat hs, image;
    struct out_file of;
    int rc, fd, have_image;

    if (cli_getopt(&cl) < 0)                 /* it has no options of its own */
        return cl.status;
    if (cli_args(argc, argv, 3, "TARGET", "PATH", NULL))
        return CLI_USAGE;
    path = argv[optind + 1];
    dest_arg = optind + 2 < argc ? argv[optind + 2] : NULL;
    if (cli_is_root(path))
        return cli_usage("PATH names the root directory, not a file");

    base = cli_basename(path);
    if (dest_arg && strcmp(dest_arg, "-") == 0)
        dest = NULL;
    else if (!dest_arg)
        dest = strdup(base);
    else if (stat(dest_arg, &hs) == 0 && S_ISDIR(hs.st_mode))
        dest = cli_path_join(dest_arg, base);
    else
        dest = strdup(dest_arg);
    free(base);

    have_image = stat(argv[optind], &image) == 0;
    if (target_open(&t, argv[optind], TARGET_RDONLY, cl.partition)) {
        free(dest);
        return CLI_ERR;
    }
    if (!dest) {
        rc = copy_out(&t, path, STDOUT_FILENO, "standard output", &mtime);
    } else {
        /* Make sure the source is a readable file before creating anything. */
        struct sf_stat st;
        int err = sf_stat(&t.vol, path, &st);
        if (err == 0 && (st.attr & SF_ATTR_DIR))
            err = SF_EISDIR;
        if (err) {
            cli_err("%s: %s: %s", t.path, path, sf_strerror(err));
            rc = CLI_ERR;
        } else if (out_open(&of, dest, have_image ? &image : NULL)) {
            rc = CLI_ERR;                /* the copy goes beside dest, renamed when complete */
        } else {
            fd = fileno(of.f);
            rc = copy_out(&t, path, fd, dest, &mtime);
            if (rc == 0 && mtime >= 0) {
                struct timespec ts[2];
                ts[0].tv_sec = 0;
                ts[0].tv_nsec = UTIME_OMIT;
                ts[1].tv_sec = (time_t)(mtime / 1000);
                ts[1].tv_nsec = (long)(mtime % 1000) * 1000000;
                if (of.tmp)              /* not on a device or FIFO written in place */
                    futimens(fd, ts);
            }
            if (out_close(&of, rc == 0))
                rc = CLI_ERR;
        }
    }
    if (target_close(&t))
        rc = CLI_ERR;
    free(dest);
    return rc;
}
