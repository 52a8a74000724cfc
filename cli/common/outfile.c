/* The one path by which a command writes a host file (export -o, export --all, get,
 * bench --plot/--csv; demo's image follows the same rule in cmd_demo.c): the output goes
 * to a temporary file in the same directory (".NAME.XXXXXX"), which rename(2) puts in
 * place after a flush and fsync, and only when the command says the result is one the
 * user wants (out_close's ok); otherwise, or when a write fails, the temporary file is
 * removed and the existing file stays as it was, byte for byte. Outputs that are not
 * regular files (/dev/null, a FIFO, a terminal, a device) are written directly: there is
 * nothing to replace. A process killed in between leaves its ".NAME.XXXXXX" behind and
 * the target untouched; mkstemp never reuses such a name, so a later run is not hindered.
 *
 * An output that is the command's input (the same inode, or the same block device) is
 * refused before anything is written: replacing a log by its own export, or an image by
 * a file copied out of it, would lose the input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_same_file(const struct stat *a, const struct stat *b)
{
    if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
        return a->st_rdev == b->st_rdev;
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int out_seekable(FILE *f)
{
    struct stat st;
    int fl, fd = fileno(f);

    /* O_APPEND: every write goes to the end whatever the offset, so a seek back to patch
     * a header would append the patch instead. */
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           (fl = fcntl(fd, F_GETFL)) >= 0 && !(fl & O_APPEND) && ftello(f) == 0;
}

/* A symbolic link whose target does not exist yet: the path of that target (followed
 * through further links), so the new file is created where the link points, as open(2)
 * would, instead of replacing the link. NULL with errno 0 when path is no such link. */
static char *dangling_target(const char *path)
{
    char *cur = strdup(path), link[PATH_MAX];
    struct stat ls;

    for (int hops = 0; cur && hops < 40; hops++) {
        ssize_t n;
        if (lstat(cur, &ls) || !S_ISLNK(ls.st_mode) ||
            (n = readlink(cur, link, sizeof link - 1)) < 0)
            break;
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dl = link[0] != '/' && slash ? (size_t)(slash - cur + 1) : 0;
        char *next = malloc(dl + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dl);
            memcpy(next + dl, link, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    if (!cur) {
        errno = ENOMEM;
        return NULL;
    }
    if (strcmp(cur, path) == 0) {   /* no link: the path itself */
        free(cur);
        errno = 0;
        return NULL;
    }
    return cur;
}

int out_open(struct out_file *o, const char *path, const struct stat *input)
{
    struct stat st;
    char *real = NULL;
    mode_t mode;
    int fd;

    memset(o, 0, sizeof *o);
    o->name = path;
    int have = stat(path, &st) == 0;
    if (have && input && out_same_file(&st, input)) {
        cli_err("%s: is the file this command reads; not written over (name another output)", path);
        return CLI_ERR;
    }
    if (have && !S_ISREG(st.st_mode)) {
        if (!(o->f = fopen(path, "w"))) {
            cli_open_err(path, errno);
            return CLI_ERR;
        }
        return 0;
    }
    /* rename(2) needs only the directory's permission: a file the user may not write (mode
     * 0444, another user's) is refused as opening it for writing would refuse it. */
    if (have && access(path, W_OK)) {
        cli_open_err(path, errno);
        return CLI_ERR;
    }
    if (have) {
        mode = st.st_mode & 07777;
        real = realpath(path, NULL);        /* a symbolic link: replace what it points to */
    } else if (!(real = dangling_target(path)) && errno == ENOMEM) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    if (!have) {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    const char *p = real ? real : path, *slash = strrchr(p, '/');
    size_t dl = slash ? (size_t)(slash - p + 1) : 0;
    o->final = strdup(p);
    o->tmp = malloc(strlen(p) + 16);
    if (o->tmp)
        sprintf(o->tmp, "%.*s.%s.XXXXXX", (int)dl, p, p + dl);
    free(real);
    if (!o->final || !o->tmp) {
        cli_err("out of memory");
        goto fail;
    }
    if ((fd = mkstemp(o->tmp)) < 0) {
        int e = errno;
        if (have && (e == EACCES || e == EROFS))   /* the file could be written, not its dir */
            cli_err("%s: cannot open: %s (the new file is written beside it and renamed into "
                    "place: its directory must be writable)", path, cli_errno_text(e));
        else
            cli_open_err(path, e);
        goto fail;
    }
    /* The replacement keeps the owner of the file it replaces where we may set it (root:
     * 'sudo streamfat get ... ~/f' must not leave a file its user cannot write; open with
     * O_TRUNC kept it). Not allowed otherwise, and then nothing to keep: ignored. */
    if (have && fchown(fd, st.st_uid, st.st_gid)) {
        /* not the owner and not root: the new file is the user's, as a new file is */
    }
    if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
        cli_err("%s: %s", path, cli_errno_text(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    return 0;
fail:
    free(o->final);
    free(o->tmp);
    o->final = o->tmp = NULL;
    return CLI_ERR;
}

int out_close(struct out_file *o, int ok)
{
    int c = fflush(o->f) || ferror(o->f) ? EOF : 0, e = errno;

    if (!c && ok && o->tmp && fsync(fileno(o->f))) {
        c = EOF;
        e = errno;
    }
    if (fclose(o->f) && !c) {
        c = EOF;
        e = errno;
    }
    if (c && ok)                /* a caller that failed has said why already */
        cli_err("%s: write failed: %s", o->name, strerror(e));
    if (o->tmp) {
        if (ok && !c && rename(o->tmp, o->final)) {
            cli_err("%s: cannot put the new file in place: %s", o->name, strerror(errno));
            c = EOF;
        }
        if (!ok || c)
            unlink(o->tmp);
        free(o->tmp);
        free(o->final);
    }
    memset(o, 0, sizeof *o);
    return c ? CLI_ERR : 0;
}
