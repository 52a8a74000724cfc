/* streamfat rm: remove files and (empty, or with -r any) directories. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/target.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"NAME\n"
"  streamfat rm - remove files and directories\n"
"\n"
"SYNOPSIS\n"
"  streamfat rm [-r] [--partition N] TARGET PATH...\n"
"\n"
"DESCRIPTION\n"
"  Removes each PATH on the volume on TARGET: a file, or an empty directory. With -r a\n"
"  directory is removed with everything in it. The root directory cannot be removed.\n"
"\n"
"OPTIONS\n"
"  -r, -R, --recursive  remove directories and their contents\n"
"  --partition N        use the Nth partition (from 1)\n"
"  -h, --help           show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat rm disk.img logs/old.bin\n"
"  streamfat rm -r disk.img logs\n"
"\n"
"EXIT STATUS\n"
"  0 everything removed, 1 a PATH could not be removed (the others still are; each\n"
"  failure is reported), 2 wrong usage.\n";

static const struct option longopts[] = {
    { "recursive", no_argument, NULL, 'r' },
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

/* Names in a directory, read completely before anything is removed so that removal does
 * not disturb the iteration. */
static int list_names(struct sf_vol *v, const char *path, char ***names, size_t *n)
{
    struct sf_dir d;
    struct sf_stat *st;
    char **vec = NULL;
    size_t cap = 0, len = 0;
    int err;

    st = malloc(sizeof *st);
    if (!st)
        return SF_ENOMEM;
    err = sf_opendir(v, &d, path);
    if (err) {
        free(st);
        return err;
    }
    while ((err = sf_readdir(&d, st)) > 0) {
        if (len == cap) {
            char **nv;
            cap = cap ? cap * 2 : 16;
            nv = realloc(vec, cap * sizeof *vec);
            if (!nv) {
                err = SF_ENOMEM;
                break;
            }
            vec = nv;
        }
        vec[len] = strdup(st->name);
        if (!vec[len]) {
            err = SF_ENOMEM;
            break;
        }
        len++;
    }
    sf_closedir(&d);
    free(st);
    if (err < 0) {
        while (len)
            free(vec[--len]);
        free(vec);
        return err;
    }
    *names = vec;
    *n = len;
    return 0;
}

static int remove_tree(struct target *t, const char *path)
{
    struct sf_stat st;
    char **names;
    size_t n, i;
    int err;

    err = sf_stat(&t->vol, path, &st);
    if (err) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        return CLI_ERR;
    }
    if (st.attr & SF_ATTR_DIR) {
        err = list_names(&t->vol, path, &names, &n);
        if (err) {
            cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
            return CLI_ERR;
        }
        for (i = 0; i < n; i++) {
            char *child = cli_path_join(path, names[i]);
            int rc = remove_tree(t, child);
            free(child);
            if (rc) {
                while (i < n)
                    free(names[i++]);
                free(names);
                return rc;
            }
            free(names[i]);
        }
        free(names);
        err = sf_rmdir(&t->vol, path);
    } else {
        err = sf_unlink(&t->vol, path);
    }
    if (err) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        return CLI_ERR;
    }
    return 0;
}

static int remove_one(struct target *t, const char *path, int recursive)
{
    struct sf_stat st;
    int err;

    if (cli_is_root(path)) {
        cli_err("%s: refusing to remove the root directory", t->path);
        return CLI_ERR;
    }
    if (recursive)
        return remove_tree(t, path);
    err = sf_stat(&t->vol, path, &st);
    if (!err)
        err = (st.attr & SF_ATTR_DIR) ? sf_rmdir(&t->vol, path) : sf_unlink(&t->vol, path);
    if (err == SF_ENOTEMPTY) {
        cli_err("%s: %s: directory not empty (use -r)", t->path, path);
        return CLI_ERR;
    }
    if (err) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        return CLI_ERR;
    }
    return 0;
}

int cmd_rm(int argc, char **argv)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":rRh", longopts, help, CLI_OPT_PARTITION);
    int recursive = 0, c;

    while ((c = cli_getopt(&cl)) > 0)
        if (c == 'r' || c == 'R')
            recursive = 1;
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, -1, "TARGET", "PATH", NULL))
        return CLI_USAGE;
    /* Like rm(1): a path that cannot be removed is reported and the others still go. */
    return target_each_path(argv + optind, argc - optind, cl.partition, 1, remove_one,
                            recursive);
}
