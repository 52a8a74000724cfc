/* Directories, whatever the file system: the entry walker, names, path resolution, growth,
 * room for a new entry set, and dispatch of entry operations to exfat_dir.c / fat_dir.c. */
#include "fs/fs.h"
#include "fs/exfat.h"
#include "fs/fat.h"
#include "util/utf.h"

/* ---- walker ---- */

int dwalk_open(struct dwalk *w, struct sf_vol *v, const struct sf_chain *ch)
{
    int err;
    w->v = v;
    w->ch = *ch;
    w->clus = ch->first;
    w->cidx = 0;
    w->fixed = 0;
    w->nclus = 0;
    if (!ch->first && v->root_entries) {      /* FAT12/16 root region */
        w->fixed = v->root_entries;
        return 0;
    }
    if (!clus_ok(v, ch->first))
        return SF_ECORRUPT;
    if (ch->contiguous) {
        uint64_t n = (ch->size + vol_cs(v) - 1) >> v->cluster_shift;
        if ((uint64_t)(ch->first - SF_FIRST_CLUSTER) + n > v->cluster_count)
            return SF_ECORRUPT;
        w->nclus = (uint32_t)n;
    } else if ((err = chain_length(v, ch->first, &w->nclus))) {
        return err;
    }
    if ((uint64_t)w->nclus << v->cluster_shift > SF_DIR_MAX_BYTES)
        return SF_ECORRUPT;
    return 0;
}

uint32_t dwalk_entries(const struct dwalk *w)
{
    return w->fixed ? w->fixed : w->nclus << (w->v->cluster_shift - 5);
}

int dwalk_locate(struct dwalk *w, uint32_t idx, uint64_t *lba, uint32_t *off)
{
    struct sf_vol *v = w->v;
    /* 32 bits suffice once idx is inside the directory: dwalk_open limits it to 256 MiB */
    uint32_t byte = idx * SF_DIRENT_SIZE;
    if (idx >= dwalk_entries(w))
        return SF_ENOENT;
    if (w->fixed) {
        *lba = v->root_sector + (byte >> v->sector_shift);
    } else {
        uint32_t ci = byte >> v->cluster_shift;
        if (ci != w->cidx || !w->clus) {
            uint32_t c;
            int err = chain_seek(v, &w->ch, ci, w->clus, w->cidx, &c);
            if (err)
                return err;
            w->clus = c;
            w->cidx = ci;
        }
        *lba = clus_lba(v, w->clus) + ((byte & (vol_cs(v) - 1)) >> v->sector_shift);
    }
    *off = byte & (vol_ss(v) - 1);
    return 0;
}

int dwalk_type(struct dwalk *w, uint32_t idx, uint8_t *type)
{
    uint64_t lba;
    uint32_t off;
    uint8_t *sec;
    int err = dwalk_locate(w, idx, &lba, &off);
    if (err || (err = cache_get(w->v, lba, &sec)))
        return err;
    *type = sec[off];
    return 0;
}

/* ---- names ---- */

int name_from_utf8(const char *s, uint32_t len, uint16_t *out, uint32_t *outlen)
{
    int n = sf_utf8_to_utf16(s, len, out, SF_NAME_MAX);
    if (n < 0)
        return n;
    if (n == 0 || (n == 1 && out[0] == '.') || (n == 2 && out[0] == '.' && out[1] == '.'))
        return SF_EBADNAME;
    for (int i = 0; i < n; i++) {
        uint16_t c = out[i];
        /* control characters; " * / : < > ? as bits of 0x20..0x3F; backslash and | */
        if (c < 0x20 || (c < 0x40 && (0xD4008404u >> (c - 0x20) & 1u)) || c == '\\' || c == '|')
            return SF_EBADNAME;
    }
    *outlen = (uint32_t)n;
    return 0;
}

int name_equal(const struct sf_vol *v, const uint16_t *a, const uint16_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i] && vol_upcase(v, a[i]) != vol_upcase(v, b[i]))
            return 0;
    return 1;
}

/* ---- growth ---- */

/* In requests of up to half the cache's memory, zeroed (cache_zeros): a 1 MiB cluster was
 * 2,048 single-sector writes. */
int dir_zero_cluster(struct sf_vol *v, uint32_t c)
{
    uint64_t lba = clus_lba(v, c);
    uint32_t n = 1u << v->spc_shift, m;
    cache_forget(v, lba, n);
    uint8_t *z = cache_zeros(v, n, &m);
    v->unflushed = 1;
    for (uint32_t i = 0; i < n; i += m) {
        uint32_t k = n - i < m ? n - i : m;
        int err = sf_bdev_write(v->bd, lba + i, z, k);
        if (err)
            return err;
    }
    return 0;
}

int dir_grow(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
             uint32_t nclus)
{
    uint32_t last, max = vol_is_exfat(v) ? SF_DIR_MAX_BYTES : 65536u * SF_DIRENT_SIZE;
    int err;
    if (!dir->first || (uint64_t)(nclus + 1) << v->cluster_shift > max)
        return SF_ENOSPC;          /* a FAT12/16 root cannot grow; size limits */
    if ((err = chain_seek(v, dir, nclus - 1, 0, 0, &last)))
        return err;
    struct sf_chain grown = *dir;
    grown.size = (uint64_t)nclus << v->cluster_shift;
    if ((err = chain_grow(v, &grown, nclus, &last, 1)) || (err = dir_zero_cluster(v, last)))
        return err;
    if (dir_loc && dir_loc->count) {
        uint64_t len = grown.size;
        if ((err = dir_update(v, dir_loc, UINT32_MAX, &grown, len, len, 0, 0)))
            return err;
    }
    *dir = grown;
    return 0;
}

/* ---- room for a new entry set ----
 * Placement rules shared by both file systems (docs/DESIGN.md, "Crash consistency"): a set
 * that fits in one sector never straddles two, so creating it is one sector write; exFAT
 * also keeps its file and stream entries in one sector (r->head 2). No entry in use may
 * follow an end-of-directory entry, so end entries skipped to keep these rules are rewritten
 * as unused ones before the set is written. */

static int slot_free(const struct dir_slot_rules *r, uint8_t type)
{
    return type == r->end || type == r->unused || (r->in_use && !(type & r->in_use));
}

/* May a set of n entries start at index idx? */
static int slot_ok(const struct sf_vol *v, const struct dir_slot_rules *r, uint32_t idx,
                   uint32_t n)
{
    uint32_t eps = vol_ss(v) / SF_DIRENT_SIZE, in = idx % eps;
    if (in + r->head > eps)
        return 0;                  /* the head entries must share a sector */
    return !(n <= eps && in + n > eps);     /* a set that fits in a sector stays in one */
}

static int set_type(struct dwalk *w, uint32_t idx, uint8_t type)
{
    uint64_t lba;
    uint32_t off;
    uint8_t *sec;
    int err;
    if ((err = dwalk_locate(w, idx, &lba, &off)) || (err = cache_get(w->v, lba, &sec)))
        return err;
    sec[off] = type;
    return cache_put(w->v, lba);
}

int dir_find_slots(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
                   const struct dir_slot_rules *r, uint32_t n, uint32_t hint,
                   struct sf_entry_loc *loc, uint32_t *at)
{
    struct dwalk w;
    int err;
    for (;;) {
        if ((err = dwalk_open(&w, v, dir)))
            return err;
        uint32_t total = dwalk_entries(&w), cand = UINT32_MAX, found = UINT32_MAX;
        uint32_t end_idx = UINT32_MAX;     /* first end-of-directory entry */
        if (hint >= total)
            hint = 0;
        for (uint32_t idx = hint; idx < total; idx++) {
            uint8_t type = r->end;         /* entries after the end entry are not read */
            if (end_idx == UINT32_MAX && (err = dwalk_type(&w, idx, &type)))
                return err;
            if (type == r->end && end_idx == UINT32_MAX)
                end_idx = idx;
            if (!slot_free(r, type)) {
                cand = UINT32_MAX;
                continue;
            }
            if (cand == UINT32_MAX && slot_ok(v, r, idx, n))
                cand = idx;
            if (cand != UINT32_MAX && idx - cand + 1 == n) {
                found = cand;
                break;
            }
        }
        if (found != UINT32_MAX) {
            for (uint32_t i = end_idx; i < found; i++)
                if ((err = set_type(&w, i, r->unused)))
                    return err;
            memset(loc, 0, sizeof *loc);
            for (uint32_t i = 0; i < n; i++) {
                uint64_t lba;
                uint32_t off;
                if ((err = dwalk_locate(&w, found + i, &lba, &off)))
                    return err;
                if (i == 0)
                    loc->off = (uint16_t)off;
                loc->lba[(loc->off + i * SF_DIRENT_SIZE) >> v->sector_shift] = lba;
            }
            loc->count = (uint8_t)n;
            *at = found;
            return 0;
        }
        if ((err = dir_grow(v, dir, dir_loc, w.nclus)))
            return err;                    /* SF_ENOSPC for a full FAT12/16 root */
        hint = end_idx < total ? end_idx : total;
    }
}

int dir_mark_entries(struct sf_vol *v, const struct sf_entry_loc *loc, uint8_t keep, uint8_t set,
                     int last_first)
{
    uint32_t last = (loc->off + (loc->count - 1u) * SF_DIRENT_SIZE) >> v->sector_shift;
    for (uint32_t j = 0; j <= last; j++) {
        uint32_t k = !last_first ? j : j == 0 ? last : j - 1;
        uint8_t *sec;
        int err = cache_get(v, loc->lba[k], &sec);
        if (err)
            return err;
        for (uint32_t i = 0; i < loc->count; i++) {
            uint32_t byte = loc->off + i * SF_DIRENT_SIZE;
            if ((byte >> v->sector_shift) == k) {
                uint8_t *t = sec + (byte & (vol_ss(v) - 1));
                *t = (uint8_t)((*t & keep) | set);
            }
        }
        if ((err = cache_put(v, loc->lba[k])))
            return err;
    }
    return 0;
}

/* ---- dispatch ---- */

int dir_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    return vol_is_exfat(v) ? exfat_lookup(v, dir, name, len, d, free_hint)
                           : fat_lookup(v, dir, name, len, d, free_hint);
}

int dir_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint)
{
    /* A new name must not end in a dot or a space: Windows strips them when it opens a
     * file, so it could neither open nor delete one. Existing names are still found. */
    if (d->name_len && (d->name[d->name_len - 1] == '.' || d->name[d->name_len - 1] == ' '))
        return SF_EBADNAME;
    return vol_is_exfat(v) ? exfat_create(v, dir, dir_loc, d, hint)
                           : fat_create(v, dir, dir_loc, d, hint);
}

int dir_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
               sf_time_ms mtime, int touch_mtime)
{
    return vol_is_exfat(v)
        ? exfat_update(v, loc, attr, ch, data_length, valid_length, mtime, touch_mtime)
        : fat_update(v, loc, attr, ch, data_length, mtime, touch_mtime);
}

int dir_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    return vol_is_exfat(v) ? exfat_remove(v, loc) : fat_remove(v, loc);
}

int dir_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    return vol_is_exfat(v) ? exfat_next(v, w, idx, d) : fat_next(v, w, idx, d);
}

int dir_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    return vol_is_exfat(v) ? exfat_is_empty(v, dir) : fat_is_empty(v, dir);
}

int dir_init_cluster(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now)
{
    int err = dir_zero_cluster(v, c);
    if (err || vol_is_exfat(v))
        return err;
    return fat_init_dir(v, c, parent, now);
}

int dir_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent)
{
    return vol_is_exfat(v) ? 0 : fat_reparent(v, dir, parent);
}

/* ---- paths ---- */

int path_resolve(struct sf_vol *v, const char *path, uint32_t avoid_first, struct pathres *r)
{
    const char *p = path;
    int err;
    r->avoid_first = avoid_first;
    memset(&r->parent_loc, 0, sizeof r->parent_loc);
    r->parent = vol_root(v);
    r->name_len = 0;
    r->found = 0;
    r->free_hint = 0;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            return 0;
        const char *end = p;
        while (*end && *end != '/')
            end++;
        const char *rest = end;
        while (*rest == '/')
            rest++;
        if (r->name_len) {             /* descend into the previous component */
            if (!r->found)
                return SF_ENOENT;
            if (!(r->d.attr & SF_ATTR_DIR))
                return SF_ENOTDIR;
            if (r->avoid_first && r->d.ch.first == r->avoid_first)
                return SF_EINVAL;     /* a directory would move into itself */
            r->parent = r->d.ch;
            r->parent_loc = r->d.loc;
        }
        if ((err = name_from_utf8(p, (uint32_t)(end - p), r->name, &r->name_len)))
            return err;
        err = dir_lookup(v, &r->parent, r->name, r->name_len, &r->d, &r->free_hint);
        if (err && err != SF_ENOENT)
            return err;
        r->found = !err;
        if (!*rest)
            return 0;
        p = end;
    }
}
