/* streamfat mkdir: create directories. */
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
"  streamfat mkdir - create directories\n"
"\n"
"SYNOPSIS\n"
"  streamfat mkdir [-p] [--partition N] TARGET PATH...\n"
"\n"
"DESCRIPTION\n"
"  Creates each directory PATH on the volume on TARGET. Its parent must exist, unless -p\n"
"  is given.\n"
"\n"
"OPTIONS\n"
"  -p, --parents    create missing parents too; no error if PATH is already a directory\n"
"  --partition N    use the Nth partition (from 1)\n"
"  -h, --help       show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat mkdir disk.img logs\n"
"  streamfat mkdir -p disk.img logs/2025/11\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error (exists, no such parent, no space), 2 wrong usage.\n";

static const struct option longopts[] = {
    { "parents", no_argument, NULL, 'p' },
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

/* mkdir, where an existing directory is fine. */
static int mkdir_exist_ok(struct target *t, const char *path)
{
    struct sf_stat st;
    int err = sf_mkdir(&t->vol, path);

    if (err == SF_EEXIST) {
        err = sf_stat(&t->vol, path, &st);
        if (!err && !(st.attr & SF_ATTR_DIR))
            err = SF_ENOTDIR;
    }
    return err;
}

static int make_one(struct target *t, const char *path, int parents)
{
    int err;

    if (cli_is_root(path)) {
        if (parents)
            return 0;
        cli_err("%s: /: %s", t->path, sf_strerror(SF_EEXIST));
        return CLI_ERR;
    }
    if (parents) {
        char *p = strdup(path), *s;
        if (!p) {
            cli_err("out of memory");
            return CLI_ERR;
        }
        /* Each prefix ending before a '/', then the whole path. */
        for (s = p; *s; s++) {
            if (*s != '/' || s == p || s[-1] == '/')
                continue;
            *s = '\0';
            err = mkdir_exist_ok(t, p);
            *s = '/';
            if (err) {
                s[0] = '\0';
                cli_err("%s: %s: %s", t->path, p, sf_strerror(err));
                free(p);
                return CLI_ERR;
            }
        }
        free(p);
        err = mkdir_exist_ok(t, path);
    } else {
        err = sf_mkdir(&t->vol, path);
    }
    if (err) {
        cli_err("%s: %s: %s", t->path, path, sf_strerror(err));
        return CLI_ERR;
    }
    return 0;
}

int cmd_mkdir(int argc, char **argv)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":ph", longopts, help, CLI_OPT_PARTITION);
    int parents = 0, c;

    while ((c = cli_getopt(&cl)) > 0)
        if (c == 'p')
            parents = 1;
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, -1, "TARGET", "PATH", NULL))
        return CLI_USAGE;
    return target_each_path(argv + optind, argc - optind, cl.partition, 0, make_one, parents);
}
