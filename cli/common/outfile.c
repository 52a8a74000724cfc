/* Host output files that replace an existing file only when complete (export -o): the
 * output goes to a temporary file in the same directory (".NAME.XXXXXX"), which rename(2)
 * puts in place after a flush and fsync; on any error the temporary file is removed and
 * the existing file stays as it was. Outputs that are not regular files (/dev/null, a
 * FIFO, a terminal) are written directly: there is nothing to replace. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_open(struct out_file *o, const char *path)
{
    struct stat st;
    char *real = NULL;
    mode_t mode;
    int fd;

    memset(o, 0, sizeof *o);
    o->name = path;
    int have = stat(path, &st) == 0;
    if (have && !S_ISREG(st.st_mode)) {
        if (!(o->f = fopen(path, "w"))) {
            cli_err("%s: %s", path, strerror(errno));
            return CLI_ERR;
        }
        return 0;
    }
    if (have) {
        mode = st.st_mode & 07777;
        real = realpath(path, NULL);        /* a symbolic link: replace what it points to */
    } else {
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
        cli_err("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
        cli_err("%s: %s", o->tmp, strerror(errno));
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
    if (c)
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
