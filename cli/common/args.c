/* Command-line parsing that every subcommand shares: the getopt_long loop with --help,
 * --partition N, --json and getopt's own errors handled in one place, and the check of the
 * positional arguments that follow the options. The messages are the ones cli_usage
 * prints for every command ("missing TARGET", "unexpected argument 'x'"), so that all
 * commands word their usage errors alike. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>

/* getopt_long's '?' (unknown option) or ':' (a value missing) as a usage error. */
static int bad_option(int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";

    if (c == ':') {
        if (optopt > 0 && optopt < 256 && !(arg[0] == '-' && arg[1] == '-'))
            return cli_usage("option '-%c' needs a value", optopt);
        return cli_usage("option '%s' needs a value", arg);
    }
    if (optopt > 0 && optopt < 256)
        return cli_usage("unknown option '-%c'", optopt);
    return cli_usage("unknown option '%s'", arg);
}

/* --partition N for commands that open an existing volume. */
static int parse_partition(const char *s, uint32_t *out)
{
    uint64_t v;

    if (cli_parse_uint(s, 256, &v))
        return cli_usage("invalid partition number '%s' (1..256, or 0 for automatic)", s);
    *out = (uint32_t)v;
    return 0;
}

int cli_getopt(struct cli_opts *o)
{
    int c;

    if (!o->started) {
        /* Each command parses its own argv from the start; getopt keeps state across. */
        opterr = 0;
        optind = 1;
        o->started = 1;
    }
    for (;;) {
        c = getopt_long(o->argc, o->argv, o->shortopts, o->longopts, NULL);
        switch (c) {
        case -1:
            return 0;
        case 'h':
            fputs(o->help, stdout);
            o->status = CLI_OK;
            return -1;
        case '?':
        case ':':
            o->status = bad_option(c, o->argv);
            return -1;
        case 'P':
            if (!(o->shared & CLI_OPT_PARTITION))
                return c;
            if (parse_partition(optarg, &o->partition)) {
                o->status = CLI_USAGE;
                return -1;
            }
            break;
        case 'j':
            if (!(o->shared & CLI_OPT_JSON))
                return c;
            o->json = 1;
            break;
        default:
            return c;
        }
    }
}

int cli_args(int argc, char **argv, int max, ...)
{
    const char *name;
    va_list ap;
    int i = optind;

    va_start(ap, max);
    while ((name = va_arg(ap, const char *)) != NULL) {
        if (i >= argc) {
            va_end(ap);
            return cli_usage("missing %s", name);
        }
        i++;
    }
    va_end(ap);
    if (max >= 0 && optind + max < argc)
        return cli_usage("unexpected argument '%s'", argv[optind + max]);
    return 0;
}
