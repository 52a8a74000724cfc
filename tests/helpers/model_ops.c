/* model_ops IMAGE SEED NOPS [CHECK_EVERY] [DUMP_DIR]
 *
 * Test helper: a seeded random sequence of file-system operations on a mounted image -
 * create, write at random offsets (also extending and appending), truncate up and down,
 * O_TRUNC, delete, rename (also across directories and of directories), mkdir, rmdir,
 * partial reads, stat, and calls that must fail with a given error - each applied to an
 * in-memory model as well (a tree of nodes; file contents in malloc'd buffers). Every
 * CHECK_EVERY operations and at each phase end the volume is compared with the model:
 * every directory's listing (exact stored names, types, sizes) and every file's content.
 * The volume is unmounted and mounted again between the four phases.
 *
 * Names come from groups of spellings that the up-case table makes equal ("café.txt",
 * "CAFÉ.TXT"); paths to existing nodes use a random spelling, so every lookup also tests
 * case-insensitive matching, while listings must show the spelling used at creation.
 *
 * With DUMP_DIR the final model is written there as a directory tree, for the calling
 * script to compare against what exfat-fuse shows, and DUMP_DIR.vdl lists each file as
 * "VDL<TAB>SIZE<TAB>PATH", VDL being the bytes the model expects to be really written
 * (a grow by sf_truncate writes nothing: the bytes past VDL are zeros by exFAT's
 * ValidDataLength, which some readers ignore). Exit 0 when everything matched; on a
 * mismatch, prints the seed, the operation number and the last operations, exits 1.
 * MODEL_OPS_TRACE=1 in the environment prints every operation as it is done. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "helper_vol.h"

#define MAXN 160                 /* nodes, root included */
#define MAX_DEPTH 3              /* directory levels below the root */
#define MAX_FILE (2u << 20)      /* bytes per file */
#define BUDGET (20u << 20)       /* bytes of file content in the whole model */

/* Spellings equal under the up-case table; the first is the canonical one. */
static const char *const groups[][4] = {
    { "alpha", "ALPHA", "Alpha", NULL },
    { "beta.bin", "BETA.BIN", "Beta.Bin", NULL },
    { "caf\xc3\xa9.txt", "CAF\xc3\x89.TXT", "Caf\xc3\xa9.txt", NULL },      /* café */
    { "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", NULL, NULL, NULL },           /* 日本語 */
    { "d1", "D1", NULL, NULL },
    { "dir two", "DIR TWO", "Dir Two", NULL },
    { "x\xf0\x9f\x98\x80y", "X\xf0\x9f\x98\x80Y", NULL, NULL },            /* x😀y */
    { "gamma.log", "GAMMA.LOG", NULL, NULL },
    { "\xc3\xbc" "ber", "\xc3\x9c" "BER", NULL, NULL },                     /* über */
    { "a rather long name that needs several name entries in the set, 0123456789 "
      "abcdefghijklmnopqrstuvwxyz.dat",
      "A RATHER LONG NAME THAT NEEDS SEVERAL NAME ENTRIES IN THE SET, 0123456789 "
      "ABCDEFGHIJKLMNOPQRSTUVWXYZ.DAT", NULL, NULL },
    { "z", "Z", NULL, NULL },
    { "file.with.dots", "FILE.WITH.DOTS", NULL, NULL },
    { "\xd0\xb6\xd0\xb8\xd0\xb7\xd0\xbd\xd1\x8c", "\xd0\x96\xd0\x98\xd0\x97\xd0\x9d\xd0\xac",
      NULL, NULL },                                                         /* жизнь */
    { "n13", "N13", NULL, NULL },
    { "n14.txt", "N14.TXT", "N14.txt", NULL },
    { "q", "Q", NULL, NULL },
};
#define NGROUPS (int)(sizeof groups / sizeof groups[0])

struct node {
    int used;
    int parent;
    int is_dir;
    int group;
    int variant;             /* spelling stored on the volume */
    uint8_t *data;
    size_t size;
    size_t vdl;              /* bytes surely written to the medium (exFAT ValidDataLength as
                                the model expects it): a grow by truncate writes nothing */
};

static struct node nodes[MAXN];
static struct hvol hv;
static uint64_t rng;
static unsigned long seed_arg;
static long opno;
static size_t total_bytes;
static char hist[8][700];
static int hist_n;
static int trace;                /* MODEL_OPS_TRACE=1: print every operation */

static uint64_t rnd64(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}
static uint32_t rnd(uint32_t n) { return n ? (uint32_t)(rnd64() % n) : 0; }

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hist[hist_n % 8], sizeof hist[0], fmt, ap);
    va_end(ap);
    if (trace)
        fprintf(stderr, "%ld: %s\n", opno, hist[hist_n % 8]);
    hist_n++;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    int i;
    fprintf(stderr, "model_ops: FAILED (seed %lu, operation %ld): ", seed_arg, opno);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nlast operations, oldest first:\n");
    for (i = hist_n > 8 ? hist_n - 8 : 0; i < hist_n; i++)
        fprintf(stderr, "  %s\n", hist[i % 8]);
    exit(1);
}

static const char *spelling(int group, int variant)
{
    return groups[group][variant];
}
static int nvariants(int group)
{
    int n = 0;
    while (n < 4 && groups[group][n])
        n++;
    return n;
}

/* Path of node i; `exact` uses the stored spelling, else a random spelling per component. */
static void node_path(int i, char *buf, size_t n, int exact)
{
    int chain[MAX_DEPTH + 3], depth = 0, k;
    size_t len = 0;
    buf[0] = 0;
    for (k = i; k != 0; k = nodes[k].parent)
        chain[depth++] = k;
    for (k = depth - 1; k >= 0; k--) {
        const struct node *nd = &nodes[chain[k]];
        int v = exact ? nd->variant : (int)rnd((uint32_t)nvariants(nd->group));
        len += (size_t)snprintf(buf + len, n - len, "/%s", spelling(nd->group, v));
    }
    if (i == 0)
        snprintf(buf, n, "/");
}
static void child_path(int parent, int group, int variant, char *buf, size_t n)
{
    char p[1200];
    node_path(parent, p, sizeof p, 0);
    snprintf(buf, n, "%s%s%s", parent ? p : "", "/", spelling(group, variant));
}

static int depth_of(int i)
{
    int d = 0;
    while (i) {
        i = nodes[i].parent;
        d++;
    }
    return d;
}
static int find_child(int parent, int group)
{
    for (int i = 1; i < MAXN; i++)
        if (nodes[i].used && nodes[i].parent == parent && nodes[i].group == group)
            return i;
    return -1;
}
static int count_children(int parent)
{
    int c = 0;
    for (int i = 1; i < MAXN; i++)
        if (nodes[i].used && nodes[i].parent == parent)
            c++;
    return c;
}
static int is_ancestor(int a, int i)   /* a is i or above it */
{
    for (;;) {
        if (i == a)
            return 1;
        if (i == 0)
            return 0;
        i = nodes[i].parent;
    }
}
static int free_slot(void)
{
    for (int i = 1; i < MAXN; i++)
        if (!nodes[i].used)
            return i;
    return -1;
}
/* A random used node of the kind wanted (1 dir, 0 file, -1 any); dirs include the root
 * when with_root. -1 when there is none. */
static int pick(int want_dir, int with_root)
{
    int cand[MAXN], n = 0;
    for (int i = with_root ? 0 : 1; i < MAXN; i++) {
        if (i == 0 && want_dir == 0)
            continue;
        if ((i == 0 || nodes[i].used) && (want_dir < 0 || nodes[i].is_dir == want_dir))
            cand[n++] = i;
    }
    return n ? cand[rnd((uint32_t)n)] : -1;
}

static void fill_random(uint8_t *p, size_t n)
{
    size_t i = 0;
    uint64_t r = 0;
    for (; i < n; i++) {
        if ((i & 7) == 0)
            r = rnd64();
        p[i] = (uint8_t)r;
        r >>= 8;
    }
}

static void model_resize(struct node *nd, size_t size)
{
    if (size > nd->size) {
        nd->data = realloc(nd->data, size ? size : 1);
        if (!nd->data)
            die("out of memory");
        memset(nd->data + nd->size, 0, size - nd->size);
    }
    total_bytes = total_bytes - nd->size + size;
    nd->size = size;
}

static void expect(int got, int want, const char *what, const char *path)
{
    if (got != want)
        die("%s %s: got %d (%s), expected %d (%s)", what, path, got, sf_strerror(got), want,
            sf_strerror(want));
}

static void open_or_die(struct sf_file *f, const char *path, uint32_t flags)
{
    int err = sf_open(&hv.vol, f, path, flags);
    if (err)
        die("open %s (flags 0x%x): %s", path, flags, sf_strerror(err));
}
static void close_or_die(struct sf_file *f, const char *path)
{
    int err = sf_close(f);
    if (err)
        die("close %s: %s", path, sf_strerror(err));
}
/* Write in a few calls of random sizes. */
static void write_all(struct sf_file *f, const uint8_t *p, size_t n, const char *path)
{
    while (n) {
        size_t k = rnd(3) ? n : 1 + rnd((uint32_t)n);
        sf_ssize_t w = sf_write(f, p, k);
        if (w < 0)
            die("write %zu bytes to %s: %s", k, path, sf_strerror((int)w));
        if ((size_t)w != k)
            die("write %zu bytes to %s: wrote %lld", k, path, (long long)w);
        p += k;
        n -= k;
    }
}

/* ---- checks ---------------------------------------------------------------------- */

static void check_file(int i)
{
    struct node *nd = &nodes[i];
    char path[1200];
    struct sf_file f;
    uint8_t *buf;
    size_t got = 0;

    node_path(i, path, sizeof path, 0);
    open_or_die(&f, path, SF_O_RDONLY);
    if (sf_fsize(&f) != nd->size)
        die("check %s: sf_fsize %llu, model %zu", path, (unsigned long long)sf_fsize(&f),
            nd->size);
    buf = malloc(nd->size + 4096);
    if (!buf)
        die("out of memory");
    for (;;) {
        size_t want = 1 + rnd(rnd(4) ? 300000 : 5000);
        sf_ssize_t r = sf_read(&f, buf + got, want > nd->size + 4096 - got ? nd->size + 4096 - got : want);
        if (r < 0)
            die("read %s at %zu: %s", path, got, sf_strerror((int)r));
        if (r == 0)
            break;
        got += (size_t)r;
        if (got > nd->size)
            die("read %s: more than the %zu bytes of the model", path, nd->size);
    }
    if (got != nd->size)
        die("read %s: %zu bytes, model %zu", path, got, nd->size);
    if (nd->size && memcmp(buf, nd->data, nd->size)) {
        size_t k = 0;
        while (buf[k] == nd->data[k])
            k++;
        die("read %s: content differs from byte %zu of %zu", path, k, nd->size);
    }
    free(buf);
    close_or_die(&f, path);
}

static void check_dir(int d)
{
    char path[1200];
    struct sf_dir dir;
    struct sf_stat st;
    int seen[MAXN], n = 0, err;
    memset(seen, 0, sizeof seen);
    node_path(d, path, sizeof path, 0);
    err = sf_opendir(&hv.vol, &dir, path);
    if (err)
        die("opendir %s: %s", path, sf_strerror(err));
    while ((err = sf_readdir(&dir, &st)) == 1) {
        int found = -1;
        for (int i = 1; i < MAXN; i++) {
            if (nodes[i].used && nodes[i].parent == d &&
                !strcmp(spelling(nodes[i].group, nodes[i].variant), st.name)) {
                found = i;
                break;
            }
        }
        if (found < 0)
            die("readdir %s: unexpected entry \"%s\"", path, st.name);
        if (seen[found]++)
            die("readdir %s: \"%s\" listed twice", path, st.name);
        if (!!(st.attr & SF_ATTR_DIR) != nodes[found].is_dir)
            die("readdir %s: \"%s\" has attr 0x%x, model says %s", path, st.name, st.attr,
                nodes[found].is_dir ? "directory" : "file");
        if (!nodes[found].is_dir && st.size != nodes[found].size)
            die("readdir %s: \"%s\" size %llu, model %zu", path, st.name,
                (unsigned long long)st.size, nodes[found].size);
        n++;
    }
    if (err < 0)
        die("readdir %s: %s", path, sf_strerror(err));
    sf_closedir(&dir);
    if (n != count_children(d))
        die("readdir %s: %d entries, model has %d", path, n, count_children(d));
}

static void check_all(const char *why)
{
    note("check (%s)", why);
    check_dir(0);
    for (int i = 1; i < MAXN; i++) {
        if (!nodes[i].used)
            continue;
        if (nodes[i].is_dir)
            check_dir(i);
        else
            check_file(i);
    }
}

/* ---- operations ------------------------------------------------------------------- */

static size_t rand_len(void)
{
    switch (rnd(8)) {
    case 0: return 1 + rnd(16);
    case 1: case 2: return 1 + rnd(600);
    case 3: case 4: return 1 + rnd(9000);
    case 5: case 6: return 1 + rnd(70000);
    default: return 1 + rnd(1u << 20);
    }
}
static size_t clamp_growth(const struct node *nd, size_t new_size)
{
    if (new_size > MAX_FILE)
        new_size = MAX_FILE;
    if (new_size > nd->size && total_bytes + (new_size - nd->size) > BUDGET)
        new_size = nd->size;
    return new_size;
}

static void op_create(void)
{
    int parent = pick(1, 1), g = (int)rnd(NGROUPS), v = (int)rnd((uint32_t)nvariants(g));
    int slot = free_slot(), exists = find_child(parent, g);
    char path[1400];
    struct sf_file f;
    int err;

    if (slot < 0)
        return;
    child_path(parent, g, v, path, sizeof path);
    note("create %s", path);
    err = sf_open(&hv.vol, &f, path, SF_O_RDWR | SF_O_CREAT | SF_O_EXCL);
    if (exists >= 0) {
        if (!err)
            sf_close(&f);
        expect(err, SF_EEXIST, "create (O_EXCL) over an existing name", path);
        return;
    }
    if (err)
        die("create %s: %s", path, sf_strerror(err));
    struct node *nd = &nodes[slot];
    memset(nd, 0, sizeof *nd);
    nd->used = 1;
    nd->parent = parent;
    nd->group = g;
    nd->variant = v;
    size_t len = rnd(4) ? clamp_growth(nd, rand_len()) : 0;
    model_resize(nd, len);
    nd->vdl = len;
    fill_random(nd->data, len);
    write_all(&f, nd->data, len, path);
    close_or_die(&f, path);
}

static void op_write(void)
{
    int i = pick(0, 0);
    char path[1200];
    struct sf_file f;
    if (i < 0)
        return;
    struct node *nd = &nodes[i];
    node_path(i, path, sizeof path, 0);
    int append = rnd(6) == 0;
    size_t off = append ? nd->size : (rnd(4) == 0 ? nd->size : rnd((uint32_t)nd->size + 1));
    size_t len = rand_len();
    if (clamp_growth(nd, off + len) < off + len) {
        if (off >= nd->size)
            return;
        len = nd->size - off;   /* overwrite in place only */
        if (!len)
            return;
    }
    note("write %s off %zu len %zu%s (size %zu)", path, off, len, append ? " O_APPEND" : "",
         nd->size);
    uint8_t *src = malloc(len);
    if (!src)
        die("out of memory");
    fill_random(src, len);
    if (append) {
        open_or_die(&f, path, SF_O_WRONLY | SF_O_APPEND);
    } else {
        open_or_die(&f, path, rnd(2) ? SF_O_RDWR : SF_O_WRONLY);
        int64_t p = sf_seek(&f, (int64_t)off, SF_SEEK_SET);
        if (p != (int64_t)off)
            die("seek %s to %zu: %lld", path, off, (long long)p);
    }
    write_all(&f, src, len, path);
    if (sf_tell(&f) != off + len)
        die("tell %s after writing %zu at %zu: %llu", path, len, off,
            (unsigned long long)sf_tell(&f));
    if (rnd(4) == 0) {
        int err = sf_sync(&f);
        if (err)
            die("sync %s: %s", path, sf_strerror(err));
    }
    close_or_die(&f, path);
    if (off + len > nd->size)
        model_resize(nd, off + len);
    if (off + len > nd->vdl)
        nd->vdl = off + len;     /* a gap before off must have been zero-filled */
    memcpy(nd->data + off, src, len);
    free(src);
}

static void op_truncate(void)
{
    int i = pick(0, 0);
    char path[1200];
    struct sf_file f;
    int err;
    if (i < 0)
        return;
    struct node *nd = &nodes[i];
    node_path(i, path, sizeof path, 0);
    if (rnd(5) == 0) {
        note("open O_TRUNC %s (size %zu)", path, nd->size);
        open_or_die(&f, path, SF_O_WRONLY | SF_O_TRUNC);
        if (sf_fsize(&f) != 0)
            die("O_TRUNC %s: size %llu after open", path, (unsigned long long)sf_fsize(&f));
        close_or_die(&f, path);
        model_resize(nd, 0);
        nd->vdl = 0;
        return;
    }
    size_t ns = rnd(2) ? rnd((uint32_t)nd->size + 1) : nd->size + rnd(200000);
    ns = clamp_growth(nd, ns);
    note("truncate %s from %zu to %zu", path, nd->size, ns);
    open_or_die(&f, path, SF_O_RDWR);
    err = sf_truncate(&f, ns);
    if (err)
        die("truncate %s to %zu: %s", path, ns, sf_strerror(err));
    if (sf_fsize(&f) != ns)
        die("truncate %s to %zu: sf_fsize %llu", path, ns, (unsigned long long)sf_fsize(&f));
    close_or_die(&f, path);
    model_resize(nd, ns);
    if (nd->vdl > ns)
        nd->vdl = ns;
}

static void op_delete(void)
{
    int i = pick(0, 0);
    char path[1200];
    if (i < 0)
        return;
    node_path(i, path, sizeof path, 0);
    note("unlink %s", path);
    expect(sf_unlink(&hv.vol, path), 0, "unlink", path);
    model_resize(&nodes[i], 0);
    free(nodes[i].data);
    memset(&nodes[i], 0, sizeof nodes[i]);
}

static void op_mkdir(void)
{
    int parent = pick(1, 1), g = (int)rnd(NGROUPS), v = (int)rnd((uint32_t)nvariants(g));
    int slot = free_slot();
    char path[1400];
    if (slot < 0 || depth_of(parent) >= MAX_DEPTH)
        return;
    child_path(parent, g, v, path, sizeof path);
    note("mkdir %s", path);
    int err = sf_mkdir(&hv.vol, path);
    if (find_child(parent, g) >= 0) {
        expect(err, SF_EEXIST, "mkdir over an existing name", path);
        return;
    }
    expect(err, 0, "mkdir", path);
    memset(&nodes[slot], 0, sizeof nodes[slot]);
    nodes[slot].used = 1;
    nodes[slot].is_dir = 1;
    nodes[slot].parent = parent;
    nodes[slot].group = g;
    nodes[slot].variant = v;
}

static void op_rmdir(void)
{
    int d = pick(1, 0);
    char path[1200];
    if (d < 0)
        return;
    node_path(d, path, sizeof path, 0);
    int use_unlink = rnd(3) == 0;
    note("%s %s (%d children)", use_unlink ? "unlink(dir)" : "rmdir", path, count_children(d));
    int err = use_unlink ? sf_unlink(&hv.vol, path) : sf_rmdir(&hv.vol, path);
    if (count_children(d)) {
        expect(err, SF_ENOTEMPTY, "remove a non-empty directory", path);
        return;
    }
    expect(err, 0, use_unlink ? "unlink of an empty directory" : "rmdir", path);
    memset(&nodes[d], 0, sizeof nodes[d]);
}

static int subtree_height(int d)
{
    int h = 0;
    for (int i = 1; i < MAXN; i++)
        if (nodes[i].used && nodes[i].parent == d && nodes[i].is_dir) {
            int c = 1 + subtree_height(i);
            if (c > h)
                h = c;
        }
    return h;
}

static void op_rename(void)
{
    int s = pick(-1, 0), dp = pick(1, 1), g = (int)rnd(NGROUPS);
    int v = (int)rnd((uint32_t)nvariants(g));
    char from[1200], to[1400];
    if (s < 0)
        return;
    if (rnd(3) == 0)
        dp = nodes[s].parent;            /* plain rename in the same directory */
    int t = find_child(dp, g);
    if (t == s)
        return;                          /* a change of case only: not specified */
    if (nodes[s].is_dir && !is_ancestor(s, dp) &&
        depth_of(dp) + 1 + subtree_height(s) > MAX_DEPTH)
        return;                          /* keep paths short */
    node_path(s, from, sizeof from, 0);
    child_path(dp, g, v, to, sizeof to);
    note("rename %s -> %s", from, to);
    int err = sf_rename(&hv.vol, from, to);
    if (nodes[s].is_dir && is_ancestor(s, dp)) {
        if (err >= 0)
            die("rename of directory %s into itself (%s) succeeded", from, to);
        return;
    }
    if (t >= 0) {
        expect(err, SF_EEXIST, "rename onto an existing name", to);
        return;
    }
    expect(err, 0, "rename", to);
    nodes[s].parent = dp;
    nodes[s].group = g;
    nodes[s].variant = v;
}

static void op_read(void)
{
    int i = pick(0, 0);
    char path[1200];
    struct sf_file f;
    if (i < 0)
        return;
    struct node *nd = &nodes[i];
    node_path(i, path, sizeof path, 0);
    size_t off = rnd((uint32_t)nd->size + 10), len = rand_len();
    note("read %s off %zu len %zu (size %zu)", path, off, len, nd->size);
    open_or_die(&f, path, rnd(2) ? SF_O_RDONLY : SF_O_RDWR);
    int64_t p = sf_seek(&f, (int64_t)off, SF_SEEK_SET);
    if (off > nd->size) {
        /* seeking past the end may be allowed or refused; reading there gives nothing */
        if (p >= 0) {
            uint8_t b[16];
            sf_ssize_t r = sf_read(&f, b, sizeof b);
            if (r != 0)
                die("read %s past the end (%zu of %zu): %lld", path, off, nd->size, (long long)r);
        }
        close_or_die(&f, path);
        return;
    }
    if (p != (int64_t)off)
        die("seek %s to %zu: %lld", path, off, (long long)p);
    uint8_t *buf = malloc(len);
    if (!buf)
        die("out of memory");
    sf_ssize_t r = sf_read(&f, buf, len);
    size_t want = nd->size - off < len ? nd->size - off : len;
    if (r < 0)
        die("read %s: %s", path, sf_strerror((int)r));
    /* a short read is allowed only at the end of the file */
    if ((size_t)r != want)
        die("read %s off %zu len %zu: %lld bytes, expected %zu", path, off, len, (long long)r,
            want);
    if (want && memcmp(buf, nd->data + off, want))
        die("read %s off %zu len %zu: content differs", path, off, len);
    free(buf);
    if (rnd(2)) {
        int64_t e = sf_seek(&f, 0, SF_SEEK_END);
        if (e != (int64_t)nd->size)
            die("seek END on %s: %lld, size %zu", path, (long long)e, nd->size);
    }
    close_or_die(&f, path);
}

static void op_stat(void)
{
    int i = pick(-1, 0);
    char path[1200];
    struct sf_stat st;
    if (i < 0)
        return;
    node_path(i, path, sizeof path, 0);
    note("stat %s", path);
    int err = sf_stat(&hv.vol, path, &st);
    if (err)
        die("stat %s: %s", path, sf_strerror(err));
    if (strcmp(st.name, spelling(nodes[i].group, nodes[i].variant)))
        die("stat %s: name \"%s\", stored as \"%s\"", path, st.name,
            spelling(nodes[i].group, nodes[i].variant));
    if (!!(st.attr & SF_ATTR_DIR) != nodes[i].is_dir)
        die("stat %s: attr 0x%x", path, st.attr);
    if (!nodes[i].is_dir && st.size != nodes[i].size)
        die("stat %s: size %llu, model %zu", path, (unsigned long long)st.size, nodes[i].size);
}

/* Calls that must fail, with the error the header documents. */
static void op_negative(void)
{
    char path[1400];
    struct sf_file f;
    int d = pick(1, 1), g = (int)rnd(NGROUPS), err;
    switch (rnd(4)) {
    case 0:                                  /* open of a missing name without O_CREAT */
        if (find_child(d, g) >= 0)
            return;
        child_path(d, g, 0, path, sizeof path);
        note("open missing %s", path);
        err = sf_open(&hv.vol, &f, path, SF_O_RDONLY);
        if (!err)
            sf_close(&f);
        expect(err, SF_ENOENT, "open of a missing file", path);
        break;
    case 1:                                  /* unlink of a missing name */
        if (find_child(d, g) >= 0)
            return;
        child_path(d, g, 0, path, sizeof path);
        note("unlink missing %s", path);
        expect(sf_unlink(&hv.vol, path), SF_ENOENT, "unlink of a missing file", path);
        break;
    case 2: {                                /* a file used as a directory */
        int i = pick(0, 0);
        char fp[1200];
        if (i < 0)
            return;
        node_path(i, fp, sizeof fp, 0);
        snprintf(path, sizeof path, "%s/%s", fp, spelling(g, 0));
        note("mkdir under a file %s", path);
        expect(sf_mkdir(&hv.vol, path), SF_ENOTDIR, "mkdir below a file", path);
        break;
    }
    default: {                               /* a directory opened for writing */
        int i = pick(1, 0);
        if (i < 0)
            return;
        node_path(i, path, sizeof path, 0);
        note("open dir for writing %s", path);
        err = sf_open(&hv.vol, &f, path, SF_O_WRONLY);
        if (!err) {
            sf_close(&f);
            die("open of directory %s for writing succeeded", path);
        }
        expect(err, SF_EISDIR, "open of a directory for writing", path);
        break;
    }
    }
}

/* ---- phases, dump ---------------------------------------------------------------- */

static void remount(void)
{
    note("remount");
    if (hvol_unmount(&hv))
        die("unmount failed");
    if (hvol_mount(&hv, hv.path))
        die("mount failed");
}

static void dump(const char *dir)
{
    char rel[1200], full[2400];
    FILE *man;
    if (mkdir(dir, 0755) && errno != EEXIST)
        die("mkdir %s: %s", dir, strerror(errno));
    snprintf(full, sizeof full, "%s.vdl", dir);
    man = fopen(full, "w");
    if (!man)
        die("dump: %s: %s", full, strerror(errno));
    /* parents have lower depth: create level by level */
    for (int lvl = 1; lvl <= MAX_DEPTH + 1; lvl++) {
        for (int i = 1; i < MAXN; i++) {
            if (!nodes[i].used || depth_of(i) != lvl)
                continue;
            node_path(i, rel, sizeof rel, 1);
            snprintf(full, sizeof full, "%s%s", dir, rel);
            if (nodes[i].is_dir) {
                if (mkdir(full, 0755))
                    die("dump: mkdir %s: %s", full, strerror(errno));
            } else {
                FILE *fp = fopen(full, "wb");
                if (!fp || (nodes[i].size && fwrite(nodes[i].data, 1, nodes[i].size, fp) != nodes[i].size) ||
                    fclose(fp))
                    die("dump: write %s", full);
                fprintf(man, "%zu\t%zu\t%s\n", nodes[i].vdl, nodes[i].size, rel + 1);
            }
        }
    }
    if (fclose(man))
        die("dump: manifest");
}

int main(int argc, char **argv)
{
    long nops, every, phase_len;
    if (argc < 4) {
        fprintf(stderr, "usage: model_ops IMAGE SEED NOPS [CHECK_EVERY] [DUMP_DIR]\n");
        return 2;
    }
    seed_arg = strtoul(argv[2], NULL, 0);
    nops = strtol(argv[3], NULL, 10);
    every = argc > 4 ? strtol(argv[4], NULL, 10) : 100;
    if (every <= 0)
        every = 100;
    trace = getenv("MODEL_OPS_TRACE") && *getenv("MODEL_OPS_TRACE") == '1';
    rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed_arg * 0xD1B54A32D192ED03ull);
    if (!rng)
        rng = 1;
    if (hvol_mount(&hv, argv[1]))
        return 1;
    nodes[0].is_dir = 1;
    /* The model starts from an empty root: refuse anything else. */
    if (count_children(0) == 0) {
        struct sf_dir d;
        struct sf_stat st;
        if (sf_opendir(&hv.vol, &d, "/") || sf_readdir(&d, &st) != 0)
            die("the image's root directory is not empty (or cannot be read)");
        sf_closedir(&d);
    }
    phase_len = nops / 4 ? nops / 4 : 1;
    for (opno = 1; opno <= nops; opno++) {
        uint32_t r = rnd(100);
        if (r < 16) op_create();
        else if (r < 40) op_write();
        else if (r < 50) op_truncate();
        else if (r < 57) op_delete();
        else if (r < 67) op_rename();
        else if (r < 75) op_mkdir();
        else if (r < 81) op_rmdir();
        else if (r < 89) op_read();
        else if (r < 95) op_stat();
        else op_negative();
        if (opno % every == 0)
            check_all("periodic");
        if (opno % phase_len == 0 && opno < nops) {
            check_all("phase end");
            remount();
            check_all("after remount");
        }
    }
    opno = nops;
    check_all("end");
    remount();
    check_all("end, after remount");
    int files = 0, dirs = 0;
    for (int i = 1; i < MAXN; i++)
        if (nodes[i].used)
            nodes[i].is_dir ? dirs++ : files++;
    if (hvol_unmount(&hv))
        die("final unmount failed");
    if (argc > 5)
        dump(argv[5]);
    printf("model_ops: seed %lu, %ld operations: %d files (%zu bytes), %d directories\n",
           seed_arg, nops, files, total_bytes, dirs);
    return 0;
}
