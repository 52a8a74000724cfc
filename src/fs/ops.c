/* Name operations (exFAT and FAT): stat, mkdir, unlink, rmdir, rename, and directory listing.
 *
 * Each operation that changes the volume runs between vol_begin_write (volume-dirty flag set
 * and flushed) and vol_end_write (flush, flag cleared when no file is open for writing).
 * Orders that matter on a power cut:
 * - mkdir: cluster allocated and zeroed, then the entry set written (a cut leaks a cluster);
 * - unlink: entry set marked unused (file entry first), then clusters freed (a cut leaks);
 * - rename: the new set is written before the old one is deleted. A cut in between leaves
 *   two names for the same clusters, which a checker reports; the data is never lost;
 * - replace: the source's entry removed, the target's entry pointed at the source's clusters
 *   in one sector write, then the target's old clusters freed (docs/DESIGN.md, "Replacing a
 *   file"). */
#include "fs/fs.h"
#include "util/utf.h"

/* An open file whose entry set is at loc, or NULL. When the file is open more than once,
 * the handle opened first (the list is newest first). */
static struct sf_file *open_file_at(const struct sf_vol *v, const struct sf_entry_loc *loc)
{
    struct sf_file *found = NULL;
    for (struct sf_file *f = v->open_files; f; f = f->next_open)
        if (f->loc.lba[0] == loc->lba[0] && f->loc.off == loc->off)
            found = f;
    return found;
}

static void fill_stat(const struct sf_vol *v, const struct dentry *d, struct sf_stat *st)
{
    if (sf_utf16_to_utf8(d->name, d->name_len, st->name, sizeof st->name) < 0)
        st->name[0] = 0;
    st->size = d->data_length;
    st->alloc_size = d->ch.size;
    st->attr = d->attr;
    st->first_cluster = d->ch.first;
    st->contiguous = d->ch.contiguous;
    st->ctime = d->ctime;
    st->mtime = d->mtime;
    st->atime = d->atime;
    /* A file open for writing is ahead of its entry on disk: show what the writer has. */
    const struct sf_file *f = open_file_at(v, &d->loc);
    if (f) {
        st->size = f->size;
        st->alloc_size = f->chain.size;
        st->first_cluster = f->chain.first;
        st->contiguous = f->chain.contiguous;
    }
}

int sf_stat(struct sf_vol *v, const char *path, struct sf_stat *st)
{
    struct pathres r;
    int err;
    if (!v || v->fs_type == SF_FS_NONE || !path || !st)
        return SF_EINVAL;
    if ((err = path_resolve(v, path, 0, &r)))
        return err;
    memset(st, 0, sizeof *st);
    if (!r.name_len) {
        st->attr = SF_ATTR_DIR;
        st->first_cluster = v->root_cluster;
        return 0;
    }
    if (!r.found)
        return SF_ENOENT;
    fill_stat(v, &r.d, st);
    return 0;
}

int sf_mkdir(struct sf_vol *v, const char *path)
{
    struct pathres r;
    struct sf_chain ch = { 0, 0, 0 };
    uint32_t last = 0;
    int err;
    if (!v || v->fs_type == SF_FS_NONE || !path)
        return SF_EINVAL;
    if (!SF_HAVE_WRITE || v->rdonly)
        return SF_EROFS;
    if ((err = path_resolve(v, path, 0, &r)))
        return err;
    if (!r.name_len || r.found)
        return SF_EEXIST;
    if ((err = vol_begin_write(v)))
        return err;
    sf_time_ms now = vol_now(v);
    if ((err = chain_grow(v, &ch, 0, &last, 1)) == 0 &&
        (err = dir_init_cluster(v, ch.first, &r.parent, now)) == 0) {
        memset(&r.d, 0, sizeof r.d);
        memcpy(r.d.name, r.name, r.name_len * sizeof r.name[0]);
        r.d.name_len = r.name_len;
        r.d.attr = SF_ATTR_DIR;
        r.d.ch = ch;
        r.d.data_length = r.d.valid_length = vol_cs(v);
        r.d.ctime = r.d.mtime = r.d.atime = now;
        err = dir_create(v, &r.parent, &r.parent_loc, &r.d, r.free_hint);
    }
    if (err && ch.first)
        chain_free(v, &ch, 1);      /* nothing refers to it yet */
    int e = vol_end_write(v);
    return err ? err : e;
}

static int remove_path(struct sf_vol *v, const char *path, int want_dir)
{
    struct pathres r;
    int err;
    if (!v || v->fs_type == SF_FS_NONE || !path)
        return SF_EINVAL;
    if (!SF_HAVE_WRITE || v->rdonly)
        return SF_EROFS;
    if ((err = path_resolve(v, path, 0, &r)))
        return err;
    if (!r.name_len)
        return SF_EPERM;            /* the root directory */
    if (!r.found)
        return SF_ENOENT;
    int is_dir = (r.d.attr & SF_ATTR_DIR) != 0;
    if (want_dir && !is_dir)
        return SF_ENOTDIR;
    if (is_dir && (err = dir_is_empty(v, &r.d.ch)) != 1)
        return err < 0 ? err : SF_ENOTEMPTY;
    if (open_file_at(v, &r.d.loc))
        return SF_EBUSY;
    if ((err = vol_begin_write(v)))
        return err;
    /* The removed entry is durable before its clusters are freed: freed clusters may be
     * allocated and written at once (cyclic logging does), and a cut that kept those new
     * data but not the removal would show the old file over another file's clusters. */
    err = dir_remove(v, &r.d.loc);
    if (!err && r.d.ch.first && !(err = vol_flush(v)))
        err = chain_free(v, &r.d.ch, (uint32_t)(r.d.ch.size >> v->cluster_shift));
    int e = vol_end_write(v);
    return err ? err : e;
}

int sf_unlink(struct sf_vol *v, const char *path)
{
    return remove_path(v, path, 0);
}

int sf_rmdir(struct sf_vol *v, const char *path)
{
    return remove_path(v, path, 1);
}

int sf_rename(struct sf_vol *v, const char *from, const char *to)
{
    struct pathres a, b;
    int err;
    if (!v || v->fs_type == SF_FS_NONE || !from || !to)
        return SF_EINVAL;
    if (!SF_HAVE_WRITE || v->rdonly)
        return SF_EROFS;
    if ((err = path_resolve(v, from, 0, &a)))
        return err;
    if (!a.name_len)
        return SF_EPERM;
    if (!a.found)
        return SF_ENOENT;
    int is_dir = (a.d.attr & SF_ATTR_DIR) != 0;
    if ((err = path_resolve(v, to, is_dir ? a.d.ch.first : 0, &b)))
        return err;
    if (!b.name_len)
        return SF_EEXIST;
    int same_entry = b.found && b.d.loc.lba[0] == a.d.loc.lba[0] && b.d.loc.off == a.d.loc.off;
    if (b.found && !same_entry)
        return SF_EEXIST;
    if (is_dir && b.parent.first == a.d.ch.first)
        return SF_EINVAL;           /* into itself */
    if (open_file_at(v, &a.d.loc))
        return SF_EBUSY;
    if ((err = vol_begin_write(v)))
        return err;
    /* The new entries keep everything of the old (attributes, times, allocation, sizes)
     * but the name. */
    struct dentry nd = a.d;
    memcpy(nd.name, b.name, b.name_len * sizeof b.name[0]);
    nd.name_len = b.name_len;
    err = dir_create(v, &b.parent, &b.parent_loc, &nd, b.found ? 0 : b.free_hint);
    if (!err)
        err = dir_remove(v, &a.d.loc);
    if (!err && is_dir && b.parent.first != a.parent.first)
        err = dir_reparent(v, &a.d.ch, &b.parent);
    int e = vol_end_write(v);
    return err ? err : e;
}

/* Each step is flushed before the next, so the device cannot reorder them: a cut leaves `to`
 * with its old or its new clusters (never both entries on one chain), and the clusters of
 * whichever lost are leaks a checker frees. */
int sf_replace(struct sf_vol *v, const char *from, const char *to)
{
    struct pathres a, b;
    int err;
    if (!v || v->fs_type == SF_FS_NONE || !from || !to)
        return SF_EINVAL;
    if (!SF_HAVE_WRITE || v->rdonly)
        return SF_EROFS;
    if ((err = path_resolve(v, from, 0, &a)) || (err = path_resolve(v, to, 0, &b)))
        return err;
    if (!a.name_len || !b.name_len)
        return SF_EPERM;
    if (!a.found || !b.found)
        return SF_ENOENT;
    if ((a.d.attr | b.d.attr) & SF_ATTR_DIR)
        return SF_EISDIR;
    if (b.d.loc.lba[0] == a.d.loc.lba[0] && b.d.loc.off == a.d.loc.off)
        return SF_EINVAL;
    if (open_file_at(v, &a.d.loc) || open_file_at(v, &b.d.loc))
        return SF_EBUSY;
    if ((err = vol_begin_write(v)))
        return err;
    if (!(err = dir_remove(v, &a.d.loc)) && !(err = vol_flush(v)) &&
        !(err = dir_update(v, &b.d.loc, UINT32_MAX, &a.d.ch, a.d.data_length,
                           a.d.valid_length, a.d.mtime, 1)) &&
        !(err = vol_flush(v)) && b.d.ch.first)
        err = chain_free(v, &b.d.ch, (uint32_t)(b.d.ch.size >> v->cluster_shift));
    int e = vol_end_write(v);
    return err ? err : e;
}

int sf_opendir(struct sf_vol *v, struct sf_dir *d, const char *path)
{
    struct pathres r;
    struct dwalk w;
    int err;
    memset(d, 0, sizeof *d);
    if (!v || v->fs_type == SF_FS_NONE || !path)
        return SF_EINVAL;
    if ((err = path_resolve(v, path, 0, &r)))
        return err;
    if (r.name_len) {
        if (!r.found)
            return SF_ENOENT;
        if (!(r.d.attr & SF_ATTR_DIR))
            return SF_ENOTDIR;
        d->chain = r.d.ch;
    } else {
        d->chain = r.parent;          /* the root */
    }
    if ((err = dwalk_open(&w, v, &d->chain)))
        return err;
    d->nclus = w.nclus;
    d->vol = v;
    return 0;
}

int sf_readdir(struct sf_dir *d, struct sf_stat *st)
{
    struct sf_vol *v = d->vol;
    struct dwalk w;
    struct dentry de;
    int err;
    if (!v)
        return SF_EBADF;
    if (d->done)
        return 0;
    /* Resume the walk where the last call stopped, without recounting the chain. */
    w.v = v;
    w.ch = d->chain;
    w.nclus = d->nclus;
    w.fixed = (!d->chain.first && v->root_entries) ? v->root_entries : 0;
    w.clus = d->cluster ? d->cluster : d->chain.first;
    w.cidx = d->cluster ? d->cluster_index : 0;
    err = dir_next(v, &w, &d->entry, &de);
    d->cluster = w.clus;
    d->cluster_index = w.cidx;
    if (err == 1) {
        fill_stat(v, &de, st);
        return 1;
    }
    if (!err)
        d->done = 1;
    return err;
}

int sf_closedir(struct sf_dir *d)
{
    d->vol = NULL;
    return 0;
}
