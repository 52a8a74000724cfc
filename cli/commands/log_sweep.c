/* Removing what a run that logged nothing created (log_sweep.h). The volume belongs to the
 * calling thread: log_names_take before sf_log_open, log_names_sweep after the writer thread
 * closed the log, both while the target is mounted. */
#include "log_sweep.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"

static const char *dir_path(const char *dir)
{
    return dir && *dir ? dir : "/";
}

static int known(const struct log_names *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->v[i], name) == 0)
            return 1;
    return 0;
}

int log_names_take(struct sf_vol *vol, const char *target, const char *dir,
                   struct log_names *before)
{
    struct sf_dir d;
    struct sf_stat st;
    size_t cap = 0;
    int err, r;

    memset(before, 0, sizeof *before);
    err = sf_opendir(vol, &d, dir_path(dir));
    if (err == SF_ENOENT) {          /* made by the run (--dir): which of its parents exist */
        char p[1024];
        size_t n = strlen(dir);
        for (size_t i = 1; i < n && i < sizeof p; i++) {
            if (dir[i] != '/')
                continue;
            memcpy(p, dir, i);
            p[i] = '\0';
            if (sf_stat(vol, p, &st) != 0)
                break;
            before->dir_existed = i;
        }
        return 0;
    }
    if (err) {
        cli_err("%s: %s: %s", target, dir_path(dir), sf_strerror(err));
        return -1;
    }
    before->dir_existed = dir ? strlen(dir) : 0;
    while ((r = sf_readdir(&d, &st)) == 1) {
        if (before->n == cap) {
            char **v = realloc(before->v, (cap = cap ? 2 * cap : 64) * sizeof *v);
            if (!v)
                break;
            before->v = v;
        }
        if (!(before->v[before->n] = strdup(st.name)))
            break;
        before->n++;
    }
    sf_closedir(&d);
    if (r != 0) {
        cli_err("%s: %s: %s", target, dir_path(dir), r < 0 ? sf_strerror(r) : "out of memory");
        log_names_free(before);
        return -1;
    }
    return 0;
}

long log_names_sweep(struct sf_vol *vol, const char *target, const char *dir,
                     const struct log_names *before)
{
    struct sf_dir d;
    struct sf_stat st;
    char path[1024];
    char **gone = NULL;
    size_t n = 0, cap = 0;
    long removed = 0;
    int err, r;

    err = sf_opendir(vol, &d, dir_path(dir));
    if (err) {
        cli_err("%s: %s: %s", target, dir_path(dir), sf_strerror(err));
        return -1;
    }
    /* Collect first, remove after: no unlink while the directory is being walked. */
    while ((r = sf_readdir(&d, &st)) == 1) {
        if ((st.attr & SF_ATTR_DIR) || known(before, st.name))
            continue;
        if (n == cap) {
            char **v = realloc(gone, (cap = cap ? 2 * cap : 8) * sizeof *v);
            if (!v)
                break;
            gone = v;
        }
        if (!(gone[n] = strdup(st.name)))
            break;
        n++;
    }
    sf_closedir(&d);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "", gone[i]);
        err = sf_unlink(vol, path);
        if (err) {
            cli_err("%s: %s: cannot remove the empty log: %s", target, path, sf_strerror(err));
            removed = -1;
        } else if (removed >= 0) {
            removed++;
        }
        free(gone[i]);
    }
    free(gone);
    /* The directories the run made, leaf first; sf_rmdir refuses one that is not empty. */
    if (removed >= 0 && dir && strlen(dir) < sizeof path) {
        size_t len = strlen(dir);
        memcpy(path, dir, len + 1);
        while (len > before->dir_existed && sf_rmdir(vol, path) == 0) {
            while (len > 0 && path[len] != '/')
                len--;
            path[len] = '\0';
        }
    }
    return removed;
}

void log_names_free(struct log_names *names)
{
    for (size_t i = 0; i < names->n; i++)
        free(names->v[i]);
    free(names->v);
    memset(names, 0, sizeof *names);
}
