/* DBC signals for streamfat report (--dbc, --signal): the Python package decodes them.
 *
 * Why Python and not C: the DBC file is parsed by cantools (its model: multiplexing, value
 * types, byte orders) in the package's streamfat.dbc, whose inner loops are C already
 * (_dbc.c, over Python buffers); a DBC parser of our own in the CLI would be a second
 * decoder to keep equal to it. So after its own pass, report runs
 * `$STREAMFAT_PYTHON -m streamfat signals` (python/src/streamfat/signals.py) with the
 * final time base (t0, bucket width, bucket count), the logs it read and the busiest ids;
 * the package reads the logs through the library's block decoder (_core), decodes with
 * streamfat.dbc and writes each signal's minimum and maximum per bucket as text, which is
 * parsed here into the same per-column [min, max] levels as every other series. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define BUSIEST 32                /* ids handed over for the default choice */

static char *xstrdup(const char *s)
{
    return strdup(s ? s : "");
}

/* "-" or a number, n of them after the tag; 0 or -1. */
static int parse_values(char *line, const char *tag, double *v, unsigned n)
{
    size_t k = strlen(tag);
    char *p = line, *end;

    if (strncmp(p, tag, k) || p[k] != '\t')
        return -1;
    p += k;
    for (unsigned i = 0; i < n; i++) {
        if (*p++ != '\t')
            return -1;
        if (*p == '-' && (p[1] == '\t' || p[1] == '\n' || !p[1])) {
            v[i] = NAN;
            p++;
            continue;
        }
        v[i] = strtod(p, &end);
        if (end == p)
            return -1;
        p = end;
    }
    return 0;
}

static int parse_output(struct rpt *r, FILE *in)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;

    while ((n = getline(&line, &cap, in)) > 0 && !rc) {
        if (strncmp(line, "signal\t", 7) == 0) {
            struct rpt_signal *s;
            char *f[4], *save = NULL, *tok = strtok_r(line + 7, "\t\n", &save);
            unsigned k = 0;
            if (r->nsignals == RPT_MAX_SIGNALS)
                continue;
            s = &r->signals[r->nsignals];
            memset(s, 0, sizeof *s);
            /* NAME MESSAGE UNIT COUNT (the unit may be empty: two tabs) */
            f[0] = tok;
            f[1] = tok ? strtok_r(NULL, "\t\n", &save) : NULL;
            if (f[1]) {
                char *rest = save, *t = strchr(rest, '\t');
                f[2] = rest;
                if (t) {
                    *t = '\0';
                    f[3] = t + 1;
                } else {
                    f[3] = NULL;
                }
            } else {
                f[2] = f[3] = NULL;
            }
            if (!f[0] || !f[1] || !f[3]) {
                rc = -1;
                break;
            }
            s->name = xstrdup(f[0]);
            s->message = xstrdup(f[1]);
            s->unit = xstrdup(f[2]);
            s->count = strtoull(f[3], NULL, 10);
            s->lo = malloc(RS_BUCKETS * sizeof *s->lo);
            s->hi = malloc(RS_BUCKETS * sizeof *s->hi);
            r->nsignals++;
            if (!s->name || !s->message || !s->unit || !s->lo || !s->hi)
                rc = -1;
            for (k = 0; k < 2 && !rc; k++) {
                if ((n = getline(&line, &cap, in)) <= 0 ||
                    parse_values(line, k ? "max" : "min", k ? s->hi : s->lo, RS_BUCKETS))
                    rc = -1;
            }
        } else if (strncmp(line, "frames\t", 7) == 0) {
            char *p = line + 7;
            r->dbc_frames = strtoull(p, &p, 10);
            r->dbc_undecoded = strtoull(p, NULL, 10);
            r->dbc_done = 1;
        }
    }
    free(line);
    return rc;
}

/* The argument list of `python -m streamfat signals`. */
static char **build_argv(const struct rpt *r, const struct rpt_dbc *o, const char *python)
{
    unsigned n = 0, cap = 32 + 2 * o->ndbc + 2 * o->nsignal + o->nlogs;
    char **av = calloc(cap, sizeof *av), buf[64];
    char busiest[BUSIEST * 12 + 1] = "";
    unsigned nb = BUSIEST;
    struct rid **top = rid_top(&r->ids, &nb);

    if (!av || !top) {
        free(av);
        free(top);
        return NULL;
    }
    for (unsigned i = 0, k = 0; i < nb; i++)
        k += (unsigned)snprintf(busiest + k, sizeof busiest - k, "%s%" PRIX32 ":%u",
                                i ? "," : "", (uint32_t)(top[i]->key - 1) & 0x1FFFFFFFu,
                                (unsigned)((top[i]->key - 1) >> 31 & 1));
    free(top);
#define ADD(s) (av[n++] = xstrdup(s))
    ADD(python);
    ADD("-m");
    ADD("streamfat");
    ADD("signals");
    for (unsigned i = 0; i < o->ndbc; i++) {
        ADD("--dbc");
        ADD(o->dbc[i]);
    }
    for (unsigned i = 0; i < o->nsignal; i++) {
        ADD("--signal");
        ADD(o->signal[i]);
    }
    if (o->key_path) {
        ADD("--key");
        ADD(o->key_path);
    }
    ADD("--busiest");
    ADD(busiest);
    snprintf(buf, sizeof buf, "--t0=%" PRIu64, r->rs.t0);
    ADD(buf);
    snprintf(buf, sizeof buf, "--shift=%u", r->rs.shift);
    ADD(buf);
    snprintf(buf, sizeof buf, "--buckets=%u", RS_BUCKETS);
    ADD(buf);
    if (o->volume) {
        ADD("--volume");
        ADD(o->volume);
        snprintf(buf, sizeof buf, "--partition=%" PRIu32, o->partition);
        ADD(buf);
    }
    ADD("--");
    for (unsigned i = 0; i < o->nlogs; i++)
        ADD(o->logs[i]);
#undef ADD
    for (unsigned i = 0; i < n; i++)
        if (!av[i]) {
            for (unsigned k = 0; k < n; k++)
                free(av[k]);
            free(av);
            return NULL;
        }
    return av;
}

int rpt_signals(struct rpt *r, const struct rpt_dbc *o)
{
    const char *python = getenv("STREAMFAT_PYTHON");
    posix_spawn_file_actions_t fa;
    char **av;
    int p[2], st = 0, rc = 0, err;
    pid_t pid;
    FILE *in;

    if (!python || !*python)
        python = "python3";
    if (!r->rs.started)
        return 0;                  /* no record at all: nothing to decode */
    if (!(av = build_argv(r, o, python))) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    if (pipe(p)) {
        cli_err("--dbc: pipe: %s", cli_errno_text(errno));
        rc = CLI_ERR;
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", 0, 0);
    fflush(NULL);
    err = posix_spawnp(&pid, python, &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (err) {
        cli_err("--dbc: cannot run %s: %s (DBC signals need Python 3 with the streamfat "
                "package and cantools: pip install './python[dbc]'; STREAMFAT_PYTHON names "
                "the interpreter)", python, cli_errno_text(err));
        close(p[0]);
        rc = CLI_ERR;
        goto out;
    }
    if (!(in = fdopen(p[0], "r"))) {
        close(p[0]);
        rc = -1;
    } else {
        rc = parse_output(r, in);
        fclose(in);
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        cli_err("--dbc: %s -m streamfat signals failed (exit %d%s)", python, code,
                code == 1 ? "; what it said is above. DBC signals need Python 3 with the "
                "streamfat package and cantools: pip install './python[dbc]'; "
                "STREAMFAT_PYTHON names the interpreter" : "");
        rc = code == 2 ? CLI_USAGE : CLI_ERR;
    } else if (rc || !r->dbc_done) {
        cli_err("--dbc: %s -m streamfat signals: output not understood", python);
        rc = CLI_ERR;
    }
out:
    for (unsigned i = 0; av[i]; i++)
        free(av[i]);
    free(av);
    return rc;
}

void rpt_signals_free(struct rpt *r)
{
    for (unsigned i = 0; i < r->nsignals; i++) {
        free(r->signals[i].name);
        free(r->signals[i].message);
        free(r->signals[i].unit);
        free(r->signals[i].lo);
        free(r->signals[i].hi);
    }
    r->nsignals = 0;
}
