/* `streamfat log --config FILE.json` and `--print-config` (cli/commands/log_config.h).
 *
 * The file is one JSON object whose keys are the long options of `log` (TARGET is the key
 * "target"): a string or number for an option with a value, an array of them for a
 * repeatable one, a boolean for a flag. It is turned into command-line arguments placed
 * before the real ones, so the command line wins: an option given there is left out of
 * the file altogether (a repeatable one given on the command line replaces the file's list),
 * and so is the file's target when the command line has one. cJSON parses it. */
#include "log_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const repeatable[] = { "filter", "trigger", "prescale", "signal", "send",
                                          "poll", NULL };

static int is_repeatable(const char *name)
{
    for (const char *const *r = repeatable; *r; r++)
        if (!strcmp(*r, name))
            return 1;
    return 0;
}

static const struct option *find_long(const struct option *o, const char *name, size_t n)
{
    for (; o->name; o++)
        if (strlen(o->name) == n && !strncmp(o->name, name, n))
            return o;
    return NULL;
}

/* The long option a short one stands for (-s is --size, -q --quiet: docs/CLI.md). */
static const struct option *find_short(const struct option *o, char c)
{
    for (; o->name; o++)
        if (o->val == c)
            return o;
    return NULL;
}

/* Which long options the command line gives, and whether it has a positional argument.
 * A short option counts as its long one. */
static void scan(int argc, char **argv, const struct option *lo, char *given, int *positional,
                 const char **config)
{
    *positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            *positional += argc - i - 1;
            return;
        }
        if (!strncmp(a, "--", 2)) {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            const struct option *o = find_long(lo, a + 2, n);
            if (!o)
                continue;
            given[o - lo] = 1;
            if (o->has_arg == required_argument && !eq && i + 1 < argc) {
                if (!strcmp(o->name, "config"))
                    *config = argv[i + 1];
                i++;
            } else if (eq && !strcmp(o->name, "config")) {
                *config = eq + 1;
            }
        } else if (a[0] == '-' && a[1]) {
            const struct option *o = find_short(lo, a[1]);
            if (o) {
                given[o - lo] = 1;
                if (o->has_arg == required_argument && !a[2])
                    i++;
            }
        } else {
            (*positional)++;
        }
    }
}

static int push(char ***v, int *n, int *cap, const char *s)
{
    if (*n + 2 > *cap) {
        int c = *cap ? *cap * 2 : 32;
        char **nv = realloc(*v, (size_t)c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    if (!((*v)[(*n)++] = strdup(s)))
        return -1;
    (*v)[*n] = NULL;
    return 0;
}

/* A JSON scalar as an option value: a string, or a number written back as given. */
static int scalar(const cJSON *j, char *buf, size_t n)
{
    if (cJSON_IsString(j)) {
        snprintf(buf, n, "%s", j->valuestring);
        return 0;
    }
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d == (double)(long long)d) {
            snprintf(buf, n, "%lld", (long long)d);
            return 0;
        }
        /* The shortest text that reads back as the same double is what the file said:
         * 0.1, not %.17g's 0.10000000000000001, which a duration refuses as finer than a
         * nanosecond and a message would show as a value nobody wrote. */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, n, "%.*g", prec, d);
            if (strtod(buf, NULL) == d)
                break;
        }
        return 0;
    }
    return -1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (n + 1 < cap)
            break;
        char *nb = realloc(b, cap *= 2);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
    }
    if (b && ferror(f)) {           /* a directory opens, and its read fails (EISDIR) */
        int e = errno;
        free(b);
        b = NULL;
        errno = e;
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

int log_config_merge(int argc, char **argv, const struct option *lo, int *out_argc,
                     char ***out_argv)
{
    const char *config = NULL;
    int positional, n = 0, cap = 0, rc = CLI_USAGE;
    size_t nlo = 0;
    while (lo[nlo].name)
        nlo++;
    char *given = calloc(nlo + 1, 1);
    char **v = NULL, val[4096];
    cJSON *root = NULL;
    *out_argv = NULL;
    if (!given)
        goto oom;
    scan(argc, argv, lo, given, &positional, &config);
    if (!config) {
        free(given);
        *out_argc = argc;
        return 0;                          /* nothing to merge: use argv as it is */
    }
    char *text = read_file(config);
    if (!text) {
        cli_open_err(config, errno);
        free(given);
        return CLI_ERR;
    }
    root = cJSON_Parse(text);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t line = 1;
        for (const char *p = text; at && p < at; p++)
            line += *p == '\n';
        cli_usage("--config %s: JSON syntax error on line %zu", config, line);
        free(text);
        goto out;
    }
    free(text);
    if (!cJSON_IsObject(root)) {
        cli_usage("--config %s: not a JSON object", config);
        goto out;
    }
    if (push(&v, &n, &cap, argv[0]))
        goto oom;
    const char *target = NULL;
    for (const cJSON *j = root->child; j; j = j->next) {
        const char *key = j->string;
        /* cJSON keeps both of a repeated key; which one would win is nobody's guess */
        for (const cJSON *k = root->child; k != j; k = k->next)
            if (!strcmp(k->string, key)) {
                cli_usage("--config %s: key '%s' given twice", config, key);
                goto out;
            }
        if (!strcmp(key, "target")) {
            if (!cJSON_IsString(j)) {
                cli_usage("--config %s: key 'target' must be a string", config);
                goto out;
            }
            target = j->valuestring;
            continue;
        }
        const struct option *o = find_long(lo, key, strlen(key));
        if (!o || !strcmp(key, "config") || !strcmp(key, "help") ||
            !strcmp(key, "print-config")) {
            cli_usage("--config %s: unknown key '%s'", config, key);
            goto out;
        }
        char opt[128];
        snprintf(opt, sizeof opt, "--%s", o->name);
        if (o->has_arg == no_argument) {
            if (!cJSON_IsBool(j)) {
                cli_usage("--config %s: key '%s' must be true or false", config, key);
                goto out;
            }
            if (cJSON_IsTrue(j) && !given[o - lo] && push(&v, &n, &cap, opt))
                goto oom;
            continue;
        }
        if (cJSON_IsArray(j)) {
            if (!is_repeatable(o->name)) {
                cli_usage("--config %s: key '%s' takes one value, not a list", config, key);
                goto out;
            }
            for (const cJSON *e = j->child; e; e = e->next) {
                if (scalar(e, val, sizeof val)) {
                    cli_usage("--config %s: key '%s' must be a list of strings", config, key);
                    goto out;
                }
                if (!given[o - lo] && (push(&v, &n, &cap, opt) || push(&v, &n, &cap, val)))
                    goto oom;
            }
            continue;
        }
        if (scalar(j, val, sizeof val)) {
            cli_usage("--config %s: key '%s' must be a %s", config, key,
                      is_repeatable(o->name) ? "string or a list of strings" :
                      "string or a number");
            goto out;
        }
        if (!given[o - lo] && (push(&v, &n, &cap, opt) || push(&v, &n, &cap, val)))
            goto oom;
    }
    /* then the command line (its --config is ignored by the option loop) */
    for (int i = 1; i < argc; i++)
        if (push(&v, &n, &cap, argv[i]))
            goto oom;
    if (target && !positional && push(&v, &n, &cap, target))
        goto oom;
    *out_argc = n;
    *out_argv = v;
    cJSON_Delete(root);
    free(given);
    return 0;
oom:
    cli_err("out of memory");
    rc = CLI_ERR;
out:
    cJSON_Delete(root);
    free(given);
    log_config_free(n, v);
    return rc;
}

void log_config_free(int argc, char **argv)
{
    if (!argv)
        return;
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

int log_config_print(int argc, char **argv, const struct option *lo, const char *target)
{
    size_t nlo = 0;
    while (lo[nlo].name)
        nlo++;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return CLI_ERR;
    /* in the order the options were applied: the last value of a single option wins, a
     * repeatable one collects every value */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        if (!strcmp(a, "--"))
            break;
        if (!strncmp(a, "--", 2)) {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            const struct option *o = find_long(lo, a + 2, n);
            if (!o || !strcmp(o->name, "config") || !strcmp(o->name, "print-config"))
                continue;
            if (o->has_arg == required_argument) {
                value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : "");
                if (is_repeatable(o->name)) {
                    cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, o->name);
                    if (!arr)
                        arr = cJSON_AddArrayToObject(root, o->name);
                    cJSON_AddItemToArray(arr, cJSON_CreateString(value));
                } else {
                    cJSON_DeleteItemFromObjectCaseSensitive(root, o->name);
                    cJSON_AddStringToObject(root, o->name, value);
                }
            } else {
                cJSON_DeleteItemFromObjectCaseSensitive(root, o->name);
                cJSON_AddTrueToObject(root, o->name);
            }
        } else if (a[0] == '-' && a[1] && find_short(lo, a[1])) {
            const struct option *o = find_short(lo, a[1]);
            cJSON_DeleteItemFromObjectCaseSensitive(root, o->name);
            if (o->has_arg == required_argument) {
                value = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : "");
                cJSON_AddStringToObject(root, o->name, value);
            } else {
                cJSON_AddTrueToObject(root, o->name);
            }
        }
    }
    if (target)
        cJSON_AddStringToObject(root, "target", target);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return CLI_ERR;
    puts(s);
    free(s);
    return CLI_OK;
}
