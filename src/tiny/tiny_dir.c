/* The tiny logger's directory work: find the log directory, the highest LOGnnnnn.SFL in it,
 * a free entry for the next file (the directory grows by a zeroed cluster when it has none),
 * and the entry's updates at checkpoints.
 *
 * On-disk invariants: an entry is created with first cluster 0 and size 0 (a valid empty
 * file) and from then on only a checkpoint rewrites it, after a device flush made the data
 * and FAT sectors it refers to durable (tiny_log.c). A directory cluster is zeroed before the
 * chain is linked to it, so the directory never shows stale bytes as entries. Short 8.3
 * entries only; long-name entries of other files are passed over. */
#include "tiny_int.h"

#define DIR_ATTR 11
#define DIR_CLUS_HI 20
#define DIR_WTIME 22
#define DIR_CLUS_LO 26
#define DIR_SIZE 28
#define ATTR_DIR 0x10u
#define ATTR_VOLUME 0x08u
#define ATTR_LFN 0x0Fu

/* A walk over a directory's sectors: the FAT16 root's fixed sectors, or a chain. */
struct walk {
    uint32_t clus;      /* current cluster (0: the fixed root) */
    uint32_t i;         /* sector within the cluster, or within the fixed root */
    uint32_t lba;       /* the sector the walk is at */
    uint32_t last;      /* the chain's last cluster seen */
};

static void walk_start(const struct sf_tiny_vol *v, struct walk *w, uint32_t clus)
{
    w->clus = clus;
    w->i = 0;
    w->last = clus;
    w->lba = clus ? tiny_clus_lba(v, clus) : v->root_lba;
}

/* Move to the next sector: 1, 0 at the end of the directory, or an error. */
static int walk_next(struct sf_tiny_vol *v, struct walk *w)
{
    uint32_t next;
    int err;
    if (!w->clus)
        return ++w->i < v->root_sectors ? (w->lba++, 1) : 0;
    if (++w->i < (1u << v->cl_shift)) {
        w->lba++;
        return 1;
    }
    if ((err = tiny_fat_get(v, w->clus, &next)))
        return err;
    if (next < 2 || next >= v->clusters + 2)
        return 0;                     /* end of chain (or damage: treated as the end) */
    w->clus = w->last = next;
    w->i = 0;
    w->lba = tiny_clus_lba(v, next);
    return 1;
}

/* "NAME" or "NAME.EXT" (as given, upper-cased) in the 11 bytes of a short entry's name. */
static int name83(const char *s, uint8_t out[11])
{
    uint32_t i = 0, k = 0;
    memset(out, ' ', 11);
    for (; s[i] && s[i] != '.'; i++, k++) {
        if (k >= 8)
            return SF_EBADNAME;
        out[k] = (uint8_t)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    }
    if (s[i] == '.')
        for (i++, k = 8; s[i]; i++, k++) {
            if (k >= 11)
                return SF_EBADNAME;
            out[k] = (uint8_t)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
        }
    return k ? 0 : SF_EBADNAME;
}

/* LOGnnnnn.SFL -> nnnnn, else 0. */
static uint32_t log_number(const uint8_t *e)
{
    uint32_t n = 0;
    if (memcmp(e, "LOG", 3) || memcmp(e + 8, "SFL", 3))
        return 0;
    for (uint32_t i = 3; i < 8; i++) {
        if (e[i] < '0' || e[i] > '9')
            return 0;
        n = n * 10 + (e[i] - '0');
    }
    return n;
}

static uint32_t ent_clus(const struct sf_tiny_vol *v, const uint8_t *e)
{
    return (v->fat32 ? (uint32_t)ld_le16(e + DIR_CLUS_HI) << 16 : 0) | ld_le16(e + DIR_CLUS_LO);
}

/* Visit the entries of the directory starting at clus (0: the FAT16 root) until its end
 * mark: fn returns 0 to go on, 1 to stop (*found = 1). */
typedef int (*entry_fn)(struct sf_tiny_log *lg, const uint8_t *e, void *ctx);

static int dir_each(struct sf_tiny_log *lg, uint32_t clus, entry_fn fn, void *ctx)
{
    struct sf_tiny_vol *v = lg->v;
    struct walk w;
    int r = 1, err;
    for (walk_start(v, &w, clus); r == 1; r = walk_next(v, &w)) {
        if ((err = tiny_read(v, w.lba)))
            return err;
        for (uint32_t o = 0; o < v->ss; o += 32) {
            const uint8_t *e = v->buf + o;
            if (!e[0])
                return 0;
            if (e[0] != 0xE5 && e[DIR_ATTR] != ATTR_LFN && fn(lg, e, ctx))
                return 1;
        }
    }
    return r;
}

struct find {
    uint8_t name[11];
    uint32_t clus;
};

static int find_dir(struct sf_tiny_log *lg, const uint8_t *e, void *ctx)
{
    struct find *f = ctx;
    if (!(e[DIR_ATTR] & ATTR_DIR) || memcmp(e, f->name, 11))
        return 0;
    f->clus = ent_clus(lg->v, e);
    return 1;
}

static int find_highest(struct sf_tiny_log *lg, const uint8_t *e, void *ctx)
{
    uint32_t *hi = ctx, k = (e[DIR_ATTR] & (ATTR_DIR | ATTR_VOLUME)) ? 0 : log_number(e);
    (void)lg;
    if (k > *hi)
        *hi = k;
    return 0;
}

/* The log directory (dir NULL or "": the root) and the highest LOG number in it. */
int tiny_dir_open(struct sf_tiny_log *lg, const char *dir, uint32_t *highest)
{
    struct sf_tiny_vol *v = lg->v;
    int err;
    lg->dir_clus = v->fat32 ? v->root_clus : 0;
    *highest = 0;
    if (dir && dir[0]) {
        struct find f;
        if ((err = name83(dir, f.name)))
            return err;
        if ((err = dir_each(lg, lg->dir_clus, find_dir, &f)) <= 0)
            return err ? err : SF_ENOENT;
        if (f.clus < 2 || f.clus >= v->clusters + 2)
            return SF_ENOENT;
        lg->dir_clus = f.clus;
    }
    err = dir_each(lg, lg->dir_clus, find_highest, highest);
    return err < 0 ? err : 0;
}

/* Append a zeroed cluster to the directory whose last cluster is `last`. */
static int dir_grow(struct sf_tiny_vol *v, uint32_t last, uint32_t *lba)
{
    uint32_t c, n;
    int err = tiny_alloc(v, 0, 1, &c, &n);
    if (err)
        return err;
    memset(v->buf, 0, v->ss);
    for (uint32_t i = 0; i < (1u << v->cl_shift); i++)
        if ((err = tiny_write(v, tiny_clus_lba(v, c) + i)))
            return err;
    if ((err = sf_bdev_flush(v->bd)))        /* zeroes before the link */
        return err;
    if ((err = tiny_fat_set(v, last, 1, c, 1)))
        return err;
    *lba = tiny_clus_lba(v, c);
    return 0;
}

/* Create LOG<index>.SFL, empty, in the first free entry; lg->ent_lba / ent_off say where. */
int tiny_dir_create(struct sf_tiny_log *lg, uint32_t index)
{
    struct sf_tiny_vol *v = lg->v;
    struct walk w;
    int r = 1, err;
    uint32_t lba = 0, off = 0, found = 0, t = lg->cfg.fat_time;
    for (walk_start(v, &w, lg->dir_clus); r == 1 && !found; r = walk_next(v, &w)) {
        if ((err = tiny_read(v, w.lba)))
            return err;
        for (off = 0; off < v->ss; off += 32)
            if (v->buf[off] == 0 || v->buf[off] == 0xE5) {
                found = 1;
                lba = w.lba;
                break;
            }
    }
    if (r < 0)
        return r;
    if (!found) {
        if (!w.clus)
            return SF_ENOSPC;                 /* the FAT16 root is full */
        if ((err = dir_grow(v, w.last, &lba)))
            return err;
        off = 0;
    }
    if ((err = tiny_read(v, lba)))
        return err;
    uint8_t *e = v->buf + off;
    memset(e, 0, 32);
    memcpy(e, "LOG00000SFL", 11);
    for (uint32_t i = 7, k = index; i >= 3; i--, k /= 10)
        e[i] = (uint8_t)('0' + k % 10);
    e[DIR_ATTR] = 0x20;                       /* archive */
    st_le16(e + 14, (uint16_t)t);             /* created */
    st_le16(e + 16, (uint16_t)(t >> 16));
    st_le16(e + 18, (uint16_t)(t >> 16));     /* accessed */
    st_le16(e + DIR_WTIME, (uint16_t)t);      /* written */
    st_le16(e + DIR_WTIME + 2, (uint16_t)(t >> 16));
    lg->ent_lba = lba;
    lg->ent_off = off;
    return tiny_write(v, lba);
}

/* The entry says first cluster and size. */
int tiny_dir_update(struct sf_tiny_log *lg, uint32_t first, uint32_t size)
{
    struct sf_tiny_vol *v = lg->v;
    int err = tiny_read(v, lg->ent_lba);
    if (err)
        return err;
    uint8_t *e = v->buf + lg->ent_off;
    st_le16(e + DIR_CLUS_HI, (uint16_t)(v->fat32 ? first >> 16 : 0));
    st_le16(e + DIR_CLUS_LO, (uint16_t)first);
    st_le32(e + DIR_SIZE, size);
    return tiny_write(v, lg->ent_lba);
}
