/* streamfat put: copy a host file (or standard input) onto the volume, through the
 * streaming write path (include/streamfat/stream.h): the target opened with O_DIRECT,
 * an asynchronous device (io_uring or threads) under the volume, --qd requests of --bs bytes
 * in flight straight from aligned buffers, one checkpoint at the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/target.h"
#include "common/units.h"

#include "streamfat/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BS (1u << 20)
#define DEFAULT_QD 4u
#define MIN_BS 4096u              /* a multiple of every sector size and O_DIRECT alignment */
#define MAX_BS (64u << 20)        /* the stream's allocation step: one request fits in it */
#define FAT_MAX_FILE 0xFFFFFFFFull
#define WORK_BYTES 65536u         /* the stream's work memory: the partial last sector */

static const char help[] =
"NAME\n"
"  streamfat put - copy a file onto the volume\n"
"\n"
"SYNOPSIS\n"
"  streamfat put [-F] [-v] [--bs SIZE] [--qd N] [--no-direct] [--no-uring] [--keep-partial]\n"
"                [--partition N] TARGET SRC [PATH]\n"
"\n"
"DESCRIPTION\n"
"  Copies the host file SRC ('-': standard input) to PATH on the volume on TARGET. PATH\n"
"  defaults to the name of SRC in the root directory; when PATH is an existing directory\n"
"  (or ends in '/'), the file goes into it under the name of SRC. An existing file is not\n"
"  overwritten unless -F (--force) is given.\n"
"\n"
"  With -F over an existing file, the new copy is written under a temporary name in the\n"
"  same directory ('.NAME.sftmp') and takes the place of the old one only when it is\n"
"  complete: on any failure, interrupt or power cut the old file stays as it was, and\n"
"  'streamfat fsck --repair' removes a temporary file a cut left behind. The volume must\n"
"  hold both copies meanwhile: when its free space cannot, -F refuses before writing\n"
"  (remove the old file first).\n"
"\n"
"  The copy takes the streaming write path: the target is opened with O_DIRECT (where the\n"
"  host file system refuses it, e.g. tmpfs, buffered I/O is used and a note says so), SRC\n"
"  is read in --bs blocks that go to the device straight from memory with --qd requests\n"
"  in flight (io_uring, or worker threads where io_uring is unavailable), clusters are\n"
"  allocated ahead in contiguous runs, and the directory entry is written once, at the\n"
"  end, after a flush.\n"
"\n"
"  On error (no space, file too large, I/O), or when interrupted (Ctrl-C, SIGTERM), the\n"
"  partly written file is removed and the volume is unmounted cleanly; with --keep-partial\n"
"  it is closed at what was written instead (a whole number of --bs blocks) and kept (with\n"
"  -F over an existing file: under its temporary name, the old file untouched).\n"
"  FAT32 and FAT16 files end at 4 GiB - 1 bytes: a larger regular file is refused before\n"
"  anything is written (\"file too large\"); standard input fails when it gets there.\n"
"\n"
"OPTIONS\n"
"  -F, --force      replace an existing file (the old one stays until the new one is whole)\n"
"  --bs SIZE        request size, a multiple of 4K from 4K to 64M (default 1M)\n"
"  --qd N           requests in flight, 1..64 (default 4)\n"
"  --no-direct      buffered I/O on the target (no O_DIRECT)\n"
"  --no-uring       use worker threads instead of io_uring (also: SF_NO_URING=1)\n"
"  --keep-partial   on error or interrupt keep what was written instead of removing it\n"
"  --partition N    use the Nth partition (from 1)\n"
"  -v, --verbose    report bytes, time, rate and the I/O path on standard error\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat put disk.img notes.txt\n"
"  streamfat put disk.img run1.bin logs/\n"
"  dmesg | streamfat put disk.img - logs/dmesg.txt\n"
"  streamfat put --bs 64K --qd 8 /dev/sdb capture.bin\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error (exists, no space, file too large, I/O), 2 wrong usage.\n";

/* The temporary name of a replace: ".NAME.sftmp" beside NAME (docs/DESIGN.md, "Replacing a
 * file"; the checker removes such files, src/check/leftover.c). NAME is cut, at a UTF-8
 * character boundary, so that the result stays within 255 characters. */
#define TMP_SUFFIX ".sftmp"
#define TMP_NAME_MAX 255u

static char *temp_path(const char *dest)
{
    const char *slash = strrchr(dest, '/');
    size_t dl = slash ? (size_t)(slash - dest + 1) : 0, nl = strlen(dest + dl);
    size_t room = TMP_NAME_MAX - 1 - (sizeof TMP_SUFFIX - 1);
    char *p;

    if (nl > room) {
        nl = room;
        while (nl > 0 && ((unsigned char)dest[dl + nl] & 0xC0) == 0x80)
            nl--;
    }
    p = malloc(dl + 1 + nl + sizeof TMP_SUFFIX);
    if (!p)
        return NULL;
    memcpy(p, dest, dl);
    p[dl] = '.';
    memcpy(p + dl + 1, dest + dl, nl);
    memcpy(p + dl + 1 + nl, TMP_SUFFIX, sizeof TMP_SUFFIX);
    return p;
}

enum { OPT_BS = 256, OPT_QD, OPT_NO_DIRECT, OPT_NO_URING, OPT_KEEP };

static const struct option longopts[] = {
    { "force", no_argument, NULL, 'F' },
    { "verbose", no_argument, NULL, 'v' },
    { "bs", required_argument, NULL, OPT_BS },
    { "qd", required_argument, NULL, OPT_QD },
    { "no-direct", no_argument, NULL, OPT_NO_DIRECT },
    { "no-uring", no_argument, NULL, OPT_NO_URING },
    { "keep-partial", no_argument, NULL, OPT_KEEP },
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
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

struct put_opts {
    uint32_t bs, qd, partition;
    int force, verbose, direct, uring, keep;
};

/* Outcomes of copy_stream besides 0 and a negative sf_err. */
#define COPY_READ_ERR 1           /* reading SRC failed; errno kept in *read_errno */
#define COPY_INTERRUPTED 2

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Read fd into the qd buffers and keep them in flight on the stream: a buffer goes back to
 * reading as soon as the stream hands its request back. The last, partial block goes
 * through sf_stream_write (whole sectors straight from the buffer, the rest into the
 * stream's tail). Whatever happens, returns with nothing in flight, so the buffers may be
 * freed once the stream is closed. */
static int copy_stream(struct sf_stream *s, int fd, uint8_t **bufs, const struct put_opts *o,
                       int *read_errno)
{
    void *done[SF_STREAM_MAX_QD];
    uint8_t *free_bufs[SF_STREAM_MAX_QD];
    uint32_t nfree = o->qd;
    uint8_t *last = NULL;
    size_t last_n = 0;
    int eof = 0, rc = 0;

    for (uint32_t i = 0; i < o->qd; i++)
        free_bufs[i] = bufs[i];
    while (!rc && !eof) {
        while (!rc && !eof && nfree) {
            uint8_t *b = free_bufs[--nfree];
            ssize_t n = read_full(fd, b, o->bs);
            if (n < 0) {
                *read_errno = errno;
                rc = interrupted ? COPY_INTERRUPTED : COPY_READ_ERR;
                free_bufs[nfree++] = b;
            } else if ((size_t)n == o->bs) {
                int err = sf_stream_submit(s, b, o->bs, b);
                if (err) {
                    rc = err;
                    free_bufs[nfree++] = b;
                }
            } else {
                eof = 1;
                last = b;
                last_n = (size_t)n;
            }
        }
        if (rc || eof || !sf_stream_in_flight(s))
            break;
        int k = sf_stream_poll(s, done, SF_STREAM_MAX_QD, 1);
        if (k < 0)
            rc = k;
        for (int i = 0; i < k; i++)
            free_bufs[nfree++] = done[i];
    }
    /* Let every request finish before the last block or the error goes further. */
    while (sf_stream_in_flight(s)) {
        int k = sf_stream_poll(s, done, SF_STREAM_MAX_QD, 1);
        if (k < 0) {
            if (!rc)
                rc = k;
            break;      /* the stream failed; close drains what the device still holds */
        }
    }
    if (!rc && last_n) {
        sf_ssize_t w = sf_stream_write(s, last, last_n);
        if (w < 0)
            rc = (int)w;
    }
    if (!rc && interrupted)
        rc = COPY_INTERRUPTED;
    return rc;
}

static int parse_opts(int argc, char **argv, struct put_opts *o)
{
    const char *why = "";
    const char *env = getenv("SF_NO_URING");
    struct cli_opts cl = CLI_OPTS(argc, argv, ":Fvh", longopts, help, CLI_OPT_PARTITION);
    uint64_t v;
    int c;

    memset(o, 0, sizeof *o);
    o->bs = DEFAULT_BS;
    o->qd = DEFAULT_QD;
    o->direct = 1;
    o->uring = !(env && *env && strcmp(env, "0") != 0);
    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 'F': o->force = 1; break;
        case 'v': o->verbose = 1; break;
        case OPT_BS:
            if (units_parse_size(optarg, &v, &why))
                return cli_usage("invalid --bs '%s': %s", optarg, why);
            if (v < MIN_BS || v > MAX_BS || v % MIN_BS)
                return cli_usage("invalid --bs '%s': a multiple of 4K from 4K to 64M", optarg);
            o->bs = (uint32_t)v;
            break;
        case OPT_QD:
            if (cli_parse_uint(optarg, SF_STREAM_MAX_QD, &v) || v == 0)
                return cli_usage("invalid --qd '%s': 1..%u", optarg, SF_STREAM_MAX_QD);
            o->qd = (uint32_t)v;
            break;
        case OPT_NO_DIRECT: o->direct = 0; break;
        case OPT_NO_URING: o->uring = 0; break;
        case OPT_KEEP: o->keep = 1; break;
        }
    }
    if (c < 0)
        return cl.status == CLI_OK ? -1 : cl.status;
    o->partition = cl.partition;
    if ((uint64_t)o->bs * o->qd > (1ull << 30))
        return cli_usage("--bs times --qd is more than 1G of buffers");
    if (cli_args(argc, argv, 3, "TARGET", "SRC", NULL))
        return CLI_USAGE;
    if (strcmp(argv[optind + 1], "-") == 0 && optind + 2 >= argc)
        return cli_usage("PATH is required when SRC is '-'");
    return 0;
}

static void report(const struct target *t, const struct sf_stream_stats *st,
                   const struct put_opts *o, double secs)
{
    char bs[24];
    double mib = (double)st->bytes_accepted / (1 << 20);

    units_format_size(o->bs, bs, sizeof bs);
    fprintf(stderr, "put: %" PRIu64 " bytes in %.3f s (%.1f MiB/s); %s, %s, bs %s, qd %u; "
            "%" PRIu64 " data requests, %" PRIu64 " allocation steps, %" PRIu64
            " checkpoints\n", st->bytes_accepted, secs, secs > 0 ? mib / secs : 0.0,
            t->async ? t->aio.backend : "sync", t->fbd.direct ? "O_DIRECT" : "buffered", bs,
            o->qd, st->data_requests, st->extents, st->checkpoints);
}

/* Before a replace: the temporary name (*tmp), a temporary file an earlier cut left there
 * removed, and the free space checked: the old file stays until the new one is whole, so
 * both must fit. Non-zero after printing an error. */
static int prepare_replace(struct target *t, const char *dest, int src_regular,
                           uint64_t src_size, char **tmp)
{
    struct sf_vol_info vi;
    struct sf_stat st;
    uint64_t stale = 0;
    int64_t fc;
    int err, have_stale;

    if (!(*tmp = temp_path(dest))) {
        cli_err("out of memory");
        return -1;
    }
    err = sf_stat(&t->vol, *tmp, &st);
    if (err == 0 && (st.attr & SF_ATTR_DIR)) {
        cli_err("%s: %s: is a directory; it is in the way of the temporary copy", t->path,
                *tmp);
        return -1;
    }
    if (err && err != SF_ENOENT) {
        cli_err("%s: %s: %s", t->path, *tmp, sf_strerror(err));
        return -1;
    }
    have_stale = err == 0;
    if (have_stale)
        stale = st.alloc_size;
    if (src_regular) {
        if ((err = sf_vol_info(&t->vol, &vi)) ||
            (fc = sf_vol_free_clusters(&t->vol)) < 0) {
            cli_err("%s: %s", t->path, sf_strerror(err ? err : (int)fc));
            return -1;
        }
        uint64_t cs = vi.cluster_size, avail = (uint64_t)fc * cs + stale;
        uint64_t need = (src_size + cs - 1) / cs * cs;
        if (need > avail) {
            cli_err("%s: %s: not enough free space for the new copy beside the old one "
                    "(%" PRIu64 " bytes needed, %" PRIu64 " free); nothing written: remove "
                    "the old file first", t->path, dest, need, avail);
            return -1;
        }
    }
    if (have_stale) {
        if ((err = sf_unlink(&t->vol, *tmp))) {
            cli_err("%s: %s: cannot remove an old temporary copy: %s", t->path, *tmp,
                    sf_strerror(err));
            return -1;
        }
    }
    return 0;
}

int cmd_put(int argc, char **argv)
{
    struct put_opts o;
    struct target t;
    struct sf_stream *s = NULL;
    struct sf_stream_cfg scfg;
    uint32_t flags;
    const char *src, *path, *shown_src, *wpath;
    char *dest = NULL, *tmp = NULL;
    uint8_t **bufs = NULL, *work = NULL;
    uint64_t src_size = 0;
    int src_regular = 0, rc = CLI_ERR, err, fd = -1, created = 0, read_errno = 0, replace = 0;
    double t0;

    if ((err = parse_opts(argc, argv, &o)))
        return err < 0 ? CLI_OK : err;
    src = argv[optind + 1];
    path = optind + 2 < argc ? argv[optind + 2] : NULL;
    shown_src = strcmp(src, "-") == 0 ? "standard input" : src;

    if (strcmp(src, "-") == 0) {
        fd = STDIN_FILENO;
    } else {
        struct stat hs;
        fd = open(src, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_open_err(src, errno);
            return CLI_ERR;
        }
        if (fstat(fd, &hs) == 0 && S_ISDIR(hs.st_mode)) {
            cli_open_err(src, EISDIR);
            close(fd);
            return CLI_ERR;
        }
        /* The image copied into itself grows as it is read, until the volume is full. */
        struct stat is;
        const char *dev = target_dev_path(argv[optind]);
        if (dev && stat(dev, &is) == 0 && out_same_file(&hs, &is)) {
            cli_err("%s: is the image this command writes into; not copied into itself", src);
            close(fd);
            return CLI_ERR;
        }
        if (S_ISREG(hs.st_mode)) {
            src_regular = 1;
            src_size = (uint64_t)hs.st_size;
            posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        }
    }

    catch_signals();
    flags = TARGET_ASYNC | (o.direct ? TARGET_DIRECT : 0) | (o.uring ? 0 : TARGET_NO_URING);
    if (target_open_async(&t, argv[optind], flags, o.partition, o.qd))
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
        if (err == 0 && !o.force) {
            cli_err("%s: %s: file exists (use -F (--force) to overwrite)", t.path, dest);
            goto out;
        }
        if (err && err != SF_ENOENT) {
            cli_err("%s: %s: %s", t.path, dest, sf_strerror(err));
            goto out;
        }
        replace = err == 0;
    }
    if (src_regular && src_size > FAT_MAX_FILE && t.vol.fs_type != SF_FS_EXFAT) {
        cli_err("%s: %s: file too large: %s files end at 4 GiB - 1 bytes", t.path, dest,
                cli_fs_name(t.vol.fs_type));
        goto out;
    }

    if (replace && prepare_replace(&t, dest, src_regular, src_size, &tmp))
        goto out;
    wpath = replace ? tmp : dest;

    bufs = calloc(o.qd, sizeof *bufs);
    s = malloc(sizeof *s);
    if (!bufs || !s) {
        cli_err("out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < o.qd; i++)
        bufs[i] = target_alloc(target_bd(&t), o.bs);
    work = target_alloc(target_bd(&t), WORK_BYTES);

    memset(&scfg, 0, sizeof scfg);
    scfg.queue_depth = o.qd;          /* checkpoint only at close: no bytes, no time */
    scfg.flags = o.force && !replace ? SF_STREAM_REPLACE : 0;
    err = sf_stream_open(&t.vol, s, wpath, &scfg, work, WORK_BYTES);
    if (err) {
        cli_err("%s: %s: cannot create: %s", t.path, dest, sf_strerror(err));
        goto out;
    }
    created = 1;

    t0 = mono_s();
    err = copy_stream(s, fd, bufs, &o, &read_errno);
    const char *gone = !o.keep ? "partial file removed"
                     : replace ? "partial file kept under its temporary name" : "partial file kept";
    if (err == COPY_INTERRUPTED)
        cli_err("%s: %s: interrupted; %s", t.path, dest, gone);
    else if (err == COPY_READ_ERR)
        cli_err("%s: read failed: %s", shown_src, strerror(read_errno));
    else if (err == SF_ENOSPC)
        cli_err("%s: %s: no space left on the volume after %" PRIu64 " bytes; %s", t.path,
                dest, sf_stream_stats(s)->bytes_accepted, gone);
    else if (err == SF_EFBIG)
        cli_err("%s: %s: file too large: %s files end at 4 GiB - 1 bytes", t.path, dest,
                cli_fs_name(t.vol.fs_type));
    else if (err)
        cli_err("%s: %s: write failed: %s", t.path, dest, sf_strerror(err));
    {
        int cerr = sf_stream_close(s);    /* checkpoint, trim, close; drains on failure */
        if (cerr && !err)
            cli_err("%s: %s: close failed: %s", t.path, dest, sf_strerror(cerr));
        if (!err && !cerr)
            rc = CLI_OK;
        else if (o.keep && !cerr)
            created = 0;                  /* closed at what was written: keep it */
        if (rc == CLI_OK && replace && (err = sf_replace(&t.vol, tmp, dest))) {
            cli_err("%s: %s: could not put the new copy in place of the old one: %s", t.path,
                    dest, sf_strerror(err));
            rc = CLI_ERR;
        }
    }
    if (o.verbose)
        report(&t, sf_stream_stats(s), &o, mono_s() - t0);

out:
    if (rc != CLI_OK && created) {
        err = sf_unlink(&t.vol, wpath);
        if (err && err != SF_ENOENT)
            cli_err("%s: %s: could not remove the partial file: %s", t.path, dest,
                    sf_strerror(err));
    }
    if (target_close(&t))
        rc = CLI_ERR;
out_src:
    if (fd > STDIN_FILENO)
        close(fd);
    if (bufs)
        for (uint32_t i = 0; i < o.qd; i++)
            free(bufs[i]);
    free(bufs);
    free(work);
    free(s);
    free(dest);
    free(tmp);
    if (interrupted) {
        signal(interrupted, SIG_DFL);
        raise(interrupted);
    }
    return rc;
}
