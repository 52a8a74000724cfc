/* streamfat ls: list a directory (read-only). Entries are sorted by name (byte order);
 * -R walks depth-first, each directory followed by its contents. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/json.h"
#include "common/target.h"

#include "streamfat/block_pack.h"
#include "streamfat/rec.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char help[] =
"NAME\n"
"  streamfat ls - list a directory\n"
"\n"
"SYNOPSIS\n"
"  streamfat ls [-l] [-R] [--json] [--partition N] TARGET [PATH]\n"
"\n"
"DESCRIPTION\n"
"  Lists the directory PATH (default: the root) of the volume on TARGET, sorted by name.\n"
"  Without -l, prints each name exactly as stored, one per line and nothing else. When\n"
"  PATH is a file, lists that file. TARGET is opened read-only and is not changed.\n"
"\n"
"OPTIONS\n"
"  -l, --long        print type (file/dir), size in bytes, modification time (local,\n"
"                    ISO 8601), 'c' for a contiguous (NoFatChain) file or '-', and name;\n"
"                    a log with compressed blocks (log --compress) has its compression\n"
"                    before the name: '4.8x' (record bytes as plain blocks hold them,\n"
"                    divided by the bytes its record blocks store)\n"
"  -R, --recursive   list subdirectories too, printing paths relative to PATH\n"
"      --json        print a JSON array of objects {name, path, type (\"file\"|\"dir\"),\n"
"                    size, mtime (ISO 8601 UTC), attr, contiguous}; path is from the root;\n"
"                    a compressed log also has \"compression\" (the ratio of -l)\n"
"      --partition N use the Nth partition (from 1)\n"
"  -h, --help        show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat ls disk.img\n"
"  streamfat ls -lR disk.img logs\n"
"  streamfat ls --json -R disk.img | python3 -m json.tool\n"
"\n"
"EXIT STATUS\n"
"  0 success, 1 error (no such path, unreadable volume), 2 wrong usage.\n";

static const struct option longopts[] = {
    { "long", no_argument, NULL, 'l' },
    { "recursive", no_argument, NULL, 'R' },
    CLI_LONGOPT_JSON,
    CLI_LONGOPT_PARTITION,
    CLI_LONGOPTS_END,
};

static uint64_t ld_le64_cli(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

struct ls_ctx {
    struct sf_vol *vol;
    const char *target;
    unsigned flags;
    FILE *out;
    int json_first;
};

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct sf_stat *)a)->name, ((const struct sf_stat *)b)->name);
}

/* Read the directory `path` into a sorted malloc'd array. */
static int read_dir(struct ls_ctx *c, const char *path, struct sf_stat **out, size_t *n)
{
    struct sf_dir d;
    struct sf_stat *v = NULL;
    size_t cap = 0, len = 0;
    int err;

    err = sf_opendir(c->vol, &d, path);
    if (err)
        return err;
    for (;;) {
        if (len == cap) {
            struct sf_stat *nv;
            cap = cap ? cap * 2 : 16;
            nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                free(v);
                sf_closedir(&d);
                return SF_ENOMEM;
            }
            v = nv;
        }
        err = sf_readdir(&d, &v[len]);
        if (err <= 0)
            break;
        len++;
    }
    sf_closedir(&d);
    if (err < 0) {
        free(v);
        return err;
    }
    qsort(v, len, sizeof *v, cmp_name);
    *out = v;
    *n = len;
    return 0;
}

/* A log with compressed record blocks (header feature bit 32, docs/FORMAT.md): its
 * compression, the record payload bytes unpacked over the bytes stored, from the block
 * headers and the packed headers alone (56 bytes a block); 0 for any other file. Damaged
 * blocks are left out. */
static double log_compression(struct ls_ctx *c, const char *path, uint64_t size)
{
    struct sf_file f;
    uint8_t h[SF_BLOCK_HDR + SF_FILE_HDR];
    uint64_t raw = 0, stored = 0;
    uint32_t b;

    if (size < sizeof h || sf_open(c->vol, &f, path, SF_O_RDONLY))
        return 0;
    if (sf_read(&f, h, sizeof h) != (sf_ssize_t)sizeof h || sf_block_peek_size(h, &b) ||
        !(ld_le64_cli(h + SF_BLOCK_HDR + 24) & SF_FEATURE_PACKED)) {
        sf_close(&f);
        return 0;
    }
    for (uint64_t off = b; off + SF_BLOCK_HDR + SF_PACK_HDR <= size; off += b) {
        uint8_t k[SF_BLOCK_HDR + SF_PACK_HDR];
        if (sf_seek(&f, (int64_t)off, SF_SEEK_SET) < 0 ||
            sf_read(&f, k, sizeof k) != (sf_ssize_t)sizeof k || memcmp(k, "SFLB", 4))
            continue;
        uint32_t kind = k[6] | (uint32_t)k[7] << 8, used = (uint32_t)ld_le64_cli(k + 32);
        if (kind == SF_BLOCK_RECORDS) {
            raw += used;
            stored += used;
        } else if (kind == SF_BLOCK_PACKED && used >= SF_PACK_HDR) {
            raw += (uint32_t)ld_le64_cli(k + SF_BLOCK_HDR);
            stored += used;
        }
    }
    sf_close(&f);
    return stored ? (double)raw / (double)stored : 0;
}

/* One entry; `shown` is what to print as its name, `full` its path from the root. */
static void print_entry(struct ls_ctx *c, const struct sf_stat *st, const char *shown,
                        const char *full)
{
    int is_dir = (st->attr & SF_ATTR_DIR) != 0;
    char tbuf[48];
    double ratio = 0;
    size_t nl = strlen(st->name);

    if (!is_dir && (c->flags & (LS_JSON | LS_LONG)) && nl > 4 &&
        !strcasecmp(st->name + nl - 4, ".SFL"))
        ratio = log_compression(c, full, st->size);

    if (c->flags & LS_JSON) {
        int first = 1;
        size_t fl;
        char *p;
        while (*full == '/')
            full++;
        fl = strlen(full);
        p = malloc(fl + 2);
        if (!p) {
            fprintf(stderr, "streamfat: out of memory\n");
            exit(CLI_ERR);
        }
        p[0] = '/';
        memcpy(p + 1, full, fl + 1);
        fputs(c->json_first ? "\n  {" : ",\n  {", c->out);
        c->json_first = 0;
        json_kv_str(c->out, &first, "name", st->name);
        json_kv_str(c->out, &first, "path", p);
        free(p);
        json_kv_str(c->out, &first, "type", is_dir ? "dir" : "file");
        json_kv_u64(c->out, &first, "size", st->size);
        cli_time_utc(st->mtime, tbuf, sizeof tbuf);
        json_kv_str(c->out, &first, "mtime", tbuf);
        json_kv_u64(c->out, &first, "attr", st->attr);
        json_kv_bool(c->out, &first, "contiguous", st->contiguous);
        if (ratio > 0)
            fprintf(c->out, ", \"compression\": %.2f", ratio);
        fputc('}', c->out);
        return;
    }
    if (c->flags & LS_LONG) {
        cli_time_local(st->mtime, tbuf, sizeof tbuf);
        if (ratio > 0)
            fprintf(c->out, "%-4s %14" PRIu64 "  %s  %c  %.1fx  %s\n", is_dir ? "dir" : "file",
                    st->size, tbuf, st->contiguous ? 'c' : '-', ratio, shown);
        else
            fprintf(c->out, "%-4s %14" PRIu64 "  %s  %c  %s\n", is_dir ? "dir" : "file",
                    st->size, tbuf, st->contiguous ? 'c' : '-', shown);
        return;
    }
    fprintf(c->out, "%s\n", shown);
}

static int list_dir(struct ls_ctx *c, const char *path, const char *rel)
{
    struct sf_stat *v;
    size_t n, i;
    int err, rc = 0;

    err = read_dir(c, path, &v, &n);
    if (err) {
        cli_err("%s: %s: %s", c->target, *path ? path : "/", sf_strerror(err));
        return CLI_ERR;
    }
    for (i = 0; i < n && rc == 0; i++) {
        char *full = cli_path_join(path, v[i].name);
        char *shown = cli_path_join(rel, v[i].name);
        print_entry(c, &v[i], (c->flags & LS_RECURSIVE) ? shown : v[i].name, full);
        if ((c->flags & LS_RECURSIVE) && (v[i].attr & SF_ATTR_DIR))
            rc = list_dir(c, full, shown);
        free(full);
        free(shown);
    }
    free(v);
    return rc;
}

int ls_run(struct sf_vol *vol, const char *target, const char *path, unsigned flags, FILE *out)
{
    struct ls_ctx c = { vol, target, flags, out, 1 };
    struct sf_dir d;
    struct sf_stat st;
    int err, rc;

    while (*path == '/')
        path++;
    if (flags & LS_JSON)
        fputc('[', out);
    err = sf_opendir(vol, &d, path);
    if (err == 0) {
        sf_closedir(&d);
        rc = list_dir(&c, path, "");
    } else if (err == SF_ENOTDIR && (err = sf_stat(vol, path, &st)) == 0) {
        print_entry(&c, &st, path, path);
        rc = 0;
    } else {
        cli_err("%s: %s: %s", target, *path ? path : "/", sf_strerror(err));
        rc = CLI_ERR;
    }
    if (flags & LS_JSON)
        fputs(c.json_first ? "]\n" : "\n]\n", out);
    return rc;
}

int cmd_ls(int argc, char **argv)
{
    struct target t;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":lRh", longopts, help,
                                  CLI_OPT_PARTITION | CLI_OPT_JSON);
    unsigned flags = 0;
    const char *path = "";
    int c, rc;

    while ((c = cli_getopt(&cl)) > 0) {
        switch (c) {
        case 'l': flags |= LS_LONG; break;
        case 'R': flags |= LS_RECURSIVE; break;
        }
    }
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, 2, "TARGET", NULL))
        return CLI_USAGE;
    if (optind + 1 < argc)
        path = argv[optind + 1];
    if (cl.json)
        flags |= LS_JSON;

    if (target_open(&t, argv[optind], TARGET_RDONLY, cl.partition))
        return CLI_ERR;
    rc = ls_run(&t.vol, t.path, path, flags, stdout);
    if (target_close(&t))
        rc = CLI_ERR;
    return rc;
}
