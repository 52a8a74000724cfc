/* streamfat put: copy a host file (or standard input) onto the volume. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (1u << 20)

static const char help[] =
"NAME\n"
"  streamfat put - copy a file onto the volume\n"
"\n"
"SYNOPSIS\n"
"  streamfat put [-f] [--partition N] TARGET SRC [PATH]\n"
"\n"
"DESCRIPTION\n"
"  Copies the host file SRC ('-': standard input) to PATH on the volume on TARGET. PATH\n"
"  defaults to the name of SRC in the root directory; when PATH is an existing directory\n"
"  (or ends in '/'), the file goes into it under the name of SRC. An existing file is not\n"
"  overwritten unless -f is given. On error, or when interrupted (Ctrl-C, SIGTERM), the\n"
"  partly written file is removed and the volume is unmounted cleanly.\n"
"\n"
"OPTIONS\n"
"  -f, --force      overwrite an existing file\n"
"  --partition N    use the Nth partition (from 1)\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat put disk.img notes.txt\n"
"  streamfat put disk.img run1.bin logs/\n"
"  dmesg | streamfat put disk.img - logs/dmesg.txt\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error (exists, no space, I/O), 2 wrong usage.\n";

static const struct option longopts[] = {
    { "force", no_argument, NULL, 'f' },
    { "partition", required_argument, NULL, 'P' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Ctrl-C or SIGTERM: stop copying, remove the partial file, unmount cleanly. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;   /* no SA_RESTART: a blocked read returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Read up to n bytes, retrying short reads (pipes) until n or end of file. -1 on error
 * (errno set; EINTR when interrupted by a signal). */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    size_t got = 0;

    while (got < n) {
        ssize_t r;
        if (interrupted) {
            errno = EINTR;
            return -1;
        }
        r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Where the file goes: PATH, or PATH/basename(SRC) when PATH is a directory. Returns a
 * malloc'd path, or NULL after printing an error (*rc set). */
static char *resolve_dest(struct target *t, const char *src, const char *path, int *rc)
{
    struct sf_stat st;
    size_t len;
    int is_dir = 0, err;

    *rc = CLI_ERR;
    if (!path || cli_is_root(path)) {
        is_dir = 1;
        path = "";
    } else {
        len = strlen(path);
        err = sf_stat(&t->vol, path, &st);
        if (err == 0 && (st.attr & SF_ATTR_DIR)) {
            is_dir = 1;
        } else if (path[len - 1] == '/') {
            cli_err("%s: %s: %s", t->path, path,
                    err ? sf_strerror(err) : sf_strerror(SF_ENOTDIR));
            return NULL;
        }
    }
    if (!is_dir)
        return strdup(path);
    if (strcmp(src, "-") == 0) {
        cli_err("%s: %s: is a directory; give a file name for standard input", t->path,
                *path ? path : "/");
        return NULL;
    }
    {
        char *base = cli_basename(src), *p;
        p = cli_path_join(path, base);
        free(base);
        return p;
    }
}

int cmd_put(int argc, char **argv)
{
    struct target t;
    struct sf_file f;
    uint32_t partition = 0;
    const char *src, *path;
    char *dest = NULL;
    const char *shown_src;
    uint8_t *buf = NULL;
    int force = 0, c, rc = CLI_ERR, err, fd = -1, created = 0;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': force = 1; break;
        case 'P':
            if (cli_parse_partition(optarg, &partition))
                return CLI_USAGE;
            break;
        case 'h': fputs(help, stdout); return CLI_OK;
        default:  return cli_bad_option(c, argv);
        }
    }
    if (optind >= argc)
        return cli_usage("missing TARGET");
    if (optind + 1 >= argc)
        return cli_usage("missing SRC");
    if (optind + 3 < argc)
        return cli_usage("unexpected argument '%s'", argv[optind + 3]);
    src = argv[optind + 1];
    path = optind + 2 < argc ? argv[optind + 2] : NULL;
    if (strcmp(src, "-") == 0 && !path)
        return cli_usage("PATH is required when SRC is '-'");
    shown_src = strcmp(src, "-") == 0 ? "standard input" : src;

    if (strcmp(src, "-") == 0) {
        fd = STDIN_FILENO;
    } else {
        struct stat hs;
        fd = open(src, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_err("%s: %s", src, strerror(errno));
            return CLI_ERR;
        }
        if (fstat(fd, &hs) == 0 && S_ISDIR(hs.st_mode)) {
            cli_err("%s: is a directory", src);
            close(fd);
            return CLI_ERR;
        }
    }

    catch_signals();
    if (target_open(&t, argv[optind], 0, partition))
        goto out_src;
    dest = resolve_dest(&t, src, path, &rc);
    if (!dest)
        goto out;
    rc = CLI_ERR;
    {
        struct sf_stat st;
        err = sf_stat(&t.vol, dest, &st);
        if (err == 0 && (st.attr & SF_ATTR_DIR)) {
            cli_err("%s: %s: is a directory", t.path, dest);
            goto out;
        }
        if (err == 0 && !force) {
            cli_err("%s: %s: file exists (use -f to overwrite)", t.path, dest);
            goto out;
        }
        if (err && err != SF_ENOENT) {
            cli_err("%s: %s: %s", t.path, dest, sf_strerror(err));
            goto out;
        }
    }
    err = sf_open(&t.vol, &f, dest,
                  SF_O_WRONLY | SF_O_CREAT | (force ? SF_O_TRUNC : SF_O_EXCL));
    if (err) {
        cli_err("%s: %s: cannot create: %s", t.path, dest, sf_strerror(err));
        goto out;
    }
    created = 1;
    buf = malloc(COPY_BUF);
    if (!buf) {
        cli_err("out of memory");
        sf_close(&f);
        goto out;
    }
    for (;;) {
        ssize_t n = read_full(fd, buf, COPY_BUF);
        sf_ssize_t w;
        if (n < 0 && interrupted) {
            cli_err("%s: %s: interrupted; partial file removed", t.path, dest);
            sf_close(&f);
            goto out;
        }
        if (n < 0) {
            cli_err("%s: read failed: %s", shown_src, strerror(errno));
            sf_close(&f);
            goto out;
        }
        if (n == 0)
            break;
        w = sf_write(&f, buf, (size_t)n);
        if (w < 0 || w != n) {
            cli_err("%s: %s: write failed: %s", t.path, dest,
                    sf_strerror(w < 0 ? (int)w : SF_EIO));
            sf_close(&f);
            goto out;
        }
    }
    err = sf_close(&f);
    if (err) {
        cli_err("%s: %s: close failed: %s", t.path, dest, sf_strerror(err));
        goto out;
    }
    rc = CLI_OK;

out:
    if (rc != CLI_OK && created) {
        err = sf_unlink(&t.vol, dest);
        if (err && err != SF_ENOENT)
            cli_err("%s: %s: could not remove the partial file: %s", t.path, dest,
                    sf_strerror(err));
    }
    if (target_close(&t))
        rc = CLI_ERR;
out_src:
    if (fd > STDIN_FILENO)
        close(fd);
    free(buf);
    free(dest);
    if (interrupted) {
        signal(interrupted, SIG_DFL);
        raise(interrupted);
    }
    return rc;
}
