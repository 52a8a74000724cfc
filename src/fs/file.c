/* Files on exFAT and FAT: open, read, write, seek, truncate, sync, close.
 *
 * Sizes: the clusters allocated cover exactly ceil(size / cluster size) clusters. exFAT's
 * ValidDataLength says how much of that was written: reads past it return zeros without
 * touching the medium, and a write that starts past it first writes zeros over the gap,
 * because it is a single watermark. FAT has no such field. Files this library grows (by
 * writing or by truncate) always have ValidDataLength = size: the zeros are written, so
 * readers that ignore the field see no stale data. FAT files stop at 4 GiB - 1.
 *
 * Write order (docs/DESIGN.md): clusters are marked allocated when a write needs them, the
 * data is written, and the directory entry (size, first cluster, NoFatChain) is rewritten
 * only by sf_sync / sf_close / sf_truncate, after a device flush. A cut before that leaves the
 * old size over valid data and, at worst, leaked clusters. Shrinking updates the entry
 * before it frees clusters. */
#include "fs/fs.h"

static int file_writable(const struct sf_file *f)
{
    /* A read-only build (SF_READONLY) knows at compile time: the write paths drop out. */
    return SF_HAVE_WRITE && (f->flags & SF_O_ACCMODE) != SF_O_RDONLY;
}

static SF_NOINLINE uint32_t file_clusters(const struct sf_file *f)
{
    return (uint32_t)(f->chain.size >> f->vol->cluster_shift);
}

static struct sf_file *find_open(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    for (struct sf_file *o = v->open_files; o; o = o->next_open)
        if (o->loc.lba[0] == loc->lba[0] && o->loc.off == loc->off)
            return o;
    return NULL;
}

int sf_open(struct sf_vol *v, struct sf_file *f, const char *path, uint32_t flags)
{
    struct pathres r;
    int err, writable = (flags & SF_O_ACCMODE) != SF_O_RDONLY || (flags & (SF_O_CREAT | SF_O_TRUNC));

    memset(f, 0, sizeof *f);
    if (!v || v->fs_type == SF_FS_NONE || !path)
        return SF_EINVAL;
    if ((flags & SF_O_ACCMODE) == SF_O_ACCMODE)
        return SF_EINVAL;
    if (writable && (!SF_HAVE_WRITE || v->rdonly))
        return SF_EROFS;
    if ((err = path_resolve(v, path, 0, &r)))
        return err;
    if (!r.name_len)
        return SF_EISDIR;
    if (r.found) {
        if ((flags & SF_O_CREAT) && (flags & SF_O_EXCL))
            return SF_EEXIST;
        if (r.d.attr & SF_ATTR_DIR)
            return SF_EISDIR;
        struct sf_file *o = find_open(v, &r.d.loc);
        if (o && (writable || file_writable(o)))
            return SF_EBUSY;
        if (writable && (r.d.attr & SF_ATTR_RDONLY))
            return SF_EPERM;
    } else {
        if (!SF_HAVE_WRITE || !(flags & SF_O_CREAT))   /* read-only build: refused above */
            return SF_ENOENT;
        sf_time_ms now = vol_now(v);
        if ((err = vol_begin_write(v)))
            return err;
        memset(&r.d, 0, sizeof r.d);
        memcpy(r.d.name, r.name, r.name_len * sizeof r.name[0]);
        r.d.name_len = r.name_len;
        r.d.attr = SF_ATTR_ARCH;
        r.d.ctime = r.d.mtime = r.d.atime = now;
        err = dir_create(v, &r.parent, &r.parent_loc, &r.d, r.free_hint);
        if (err) {
            vol_end_write(v);
            return err;
        }
    }
    /* the entry found, or the one just created (empty, no clusters) */
    f->loc = r.d.loc;
    f->chain = r.d.ch;
    f->data_length = r.d.data_length;
    f->valid_length = r.d.valid_length;
    f->attr = r.d.attr;
    f->ctime = r.d.ctime;
    f->mtime = r.d.mtime;
    f->vol = v;
    f->flags = flags;
    f->size = f->data_length;
    f->parent_first = r.parent.first;
    if (SF_HAVE_WRITE && writable) {
        if ((err = vol_begin_write(v)))
            return err;
        v->writers++;
    }
    f->next_open = v->open_files;
    v->open_files = f;
    if (SF_HAVE_WRITE && (flags & SF_O_TRUNC) && f->size && (err = sf_truncate(f, 0))) {
        sf_close(f);
        return err;
    }
    return 0;
}

/* Where byte `pos` of the file lies, and how many bytes from there (up to max) are
 * physically contiguous and allocated. */
static int file_map(struct sf_file *f, uint64_t pos, uint64_t max, uint64_t *lba, uint64_t *run)
{
    struct sf_vol *v = f->vol;
    uint32_t ci = (uint32_t)(pos >> v->cluster_shift), c;
    uint32_t in = (uint32_t)(pos & (vol_cs(v) - 1));
    if (ci - f->ext_idx < f->ext_n) {
        /* inside the run the allocation made: no FAT to follow */
        c = f->ext_clus + (ci - f->ext_idx);
        f->cur_cluster = c;
        f->cur_index = ci;
        *lba = clus_lba(v, c) + (in >> v->sector_shift);
        uint64_t n = ((uint64_t)(f->ext_idx + f->ext_n - ci) << v->cluster_shift) - in;
        *run = n < max ? n : max;
        return 0;
    }
    int err = chain_seek(v, &f->chain, ci, f->cur_cluster, f->cur_index, &c);
    if (err)
        return err;
    f->cur_cluster = c;
    f->cur_index = ci;
    *lba = clus_lba(v, c) + (in >> v->sector_shift);
    uint64_t n = vol_cs(v) - in;
    if (f->chain.contiguous) {
        n = f->chain.size - pos;
    } else {
        uint32_t cur = c;
        while (n < max) {
            uint32_t next;
            if ((err = chain_next(v, &f->chain, cur, &next)))
                return err;
            if (next != cur + 1)
                break;
            cur = next;
            n += vol_cs(v);
        }
    }
    *run = n < max ? n : max;
    return 0;
}

static int buf_aligned(const struct sf_vol *v, const void *p)
{
    uint32_t a = v->bd->mem_align;
    return a <= 1 || ((uintptr_t)p & (a - 1)) == 0;
}

/* Sectors of one transfer between the device and the caller's buffer: at most 65536 (so
 * that the byte count, at most 2^28, stays 32-bit). */
static uint32_t direct_secs(const struct sf_vol *v, uint64_t run)
{
    uint64_t secs = run >> v->sector_shift;
    return secs > 0x10000 ? 0x10000 : (uint32_t)secs;
}

/* ---- the sector buffer (vol.h, SF_FILE_BUF_SIZE) ---- */
static int fbuf_usable(const struct sf_file *f)
{
#if SF_FILE_BUF_SIZE > 0
    return vol_ss(f->vol) <= SF_FILE_BUF_SIZE && buf_aligned(f->vol, f->fbuf);
#else
    (void)f;
    return 0;
#endif
}

/* The changed sector in the buffer to the device. */
static int fbuf_flush(struct sf_file *f)
{
#if SF_FILE_BUF_SIZE > 0
    if (f->bstate == 2) {
        struct sf_vol *v = f->vol;
        v->unflushed = 1;               /* checked when filled; cache.c watches it since */
        int err = sf_bdev_write(v->bd, f->blba, f->fbuf, 1);
        if (err)
            return err;
        f->bstate = 1;
    }
#else
    (void)f;
#endif
    return 0;
}

/* Flush and forget the buffered sector (before the chain or the data change around it). */
static int fbuf_drop(struct sf_file *f)
{
    int err = fbuf_flush(f);
    f->bstate = 0;
    return err;
}

sf_ssize_t sf_read(struct sf_file *f, void *buf, size_t n)
{
    struct sf_vol *v = f->vol;
    uint8_t *out = buf;
    uint64_t done = 0;
    int err;

    if (!v || (f->flags & SF_O_ACCMODE) == SF_O_WRONLY)
        return SF_EBADF;
    if (f->failed)
        return f->failed;
    if (f->pos >= f->size)
        return 0;
    if ((err = fbuf_flush(f)))
        return f->failed = err;
    if (n > f->size - f->pos)
        n = (size_t)(f->size - f->pos);
    while (done < n) {
        uint64_t pos = f->pos + done, want = n - done;
        if (pos >= f->valid_length) {             /* never written: zeros */
            memset(out + done, 0, (size_t)want);
            done += want;
            break;
        }
        if (want > f->valid_length - pos)
            want = f->valid_length - pos;
        uint64_t lba, run;
        if ((err = file_map(f, pos, want, &lba, &run)))
            return err;
        uint32_t in = (uint32_t)(pos & (vol_ss(v) - 1));
        if (in == 0 && run >= vol_ss(v) && buf_aligned(v, out + done)) {
            uint32_t secs = direct_secs(v, run);
            if ((err = sf_bdev_read(v->bd, lba, out + done, secs)))
                return err;
            done += secs << v->sector_shift;
        } else {
            uint8_t *s = cache_scratch(v);
            uint64_t k = vol_ss(v) - in < run ? vol_ss(v) - in : run;
            if ((err = sf_bdev_read(v->bd, lba, s, 1)))
                return err;
            memcpy(out + done, s + in, (size_t)k);
            done += k;
        }
    }
    f->pos += done;
    return (sf_ssize_t)done;
}

/* Write `n` bytes at `pos`, from src, or zeros when src is NULL. The clusters exist. */
static int write_at(struct sf_file *f, uint64_t pos, const uint8_t *src, uint64_t n)
{
    struct sf_vol *v = f->vol;
    uint32_t ss = vol_ss(v);
    int err, fb = src && fbuf_usable(f);
    (void)fb;                              /* SF_FILE_BUF_SIZE 0: no buffer */
    if (!src && (err = fbuf_drop(f)))
        return err;
    while (n) {
        uint64_t lba, run;
        uint32_t in = (uint32_t)(pos & (ss - 1));
        int direct = src && in == 0 && n >= ss && buf_aligned(v, src);
#if SF_FILE_BUF_SIZE > 0
        if (fb && !direct && f->bstate && (pos >> v->sector_shift) == f->bsec) {
            run = ss - in < n ? ss - in : n;          /* the buffered sector: no mapping */
            memcpy(f->fbuf + in, src, (size_t)run);
            f->bstate = 2;
            pos += run;
            n -= run;
            src += run;
            continue;
        }
#endif
        /* Map only what this step uses: one sector unless the caller's buffer goes straight
         * to the device (mapping all of n walks the chain ahead each time: zero-filling a
         * FAT file sector by sector was quadratic in its clusters). */
        if ((err = file_map(f, pos, direct ? n : (n < ss - in ? n : ss - in), &lba, &run)))
            return err;
        if (direct) {
            uint32_t secs = direct_secs(v, run);
            if (f->bstate && f->bsec - (pos >> v->sector_shift) < secs)
                f->bstate = 0;         /* the buffered sector is overwritten whole */
            v->unflushed = 1;
            if ((err = cache_data_check(v, lba, secs)) ||
                (err = sf_bdev_write(v->bd, lba, src, secs)))
                return err;
            run = secs << v->sector_shift;
        } else {
            uint8_t *s;
            if (run > ss - in)
                run = ss - in;
            if ((err = cache_data_check(v, lba, 1)))
                return err;
            /* another sector: the changed one in the buffer goes out, this one comes in */
            if (fb && (err = fbuf_drop(f)))
                return err;
#if SF_FILE_BUF_SIZE > 0
            s = fb ? f->fbuf : cache_scratch(v);
#else
            s = cache_scratch(v);
#endif
            if (in == 0 && run == ss) {
                /* whole sector: nothing to keep */
            } else if (pos - in >= f->valid_length) {
                memset(s, 0, ss);           /* past the written part: reads as zeros */
            } else if ((err = sf_bdev_read(v->bd, lba, s, 1))) {
                return err;
            }
            if (src)
                memcpy(s + in, src, (size_t)run);
            else
                memset(s + in, 0, (size_t)run);
            if (fb) {
                f->bsec = pos >> v->sector_shift;
                f->blba = lba;
                f->bstate = 2;
            } else {
                v->unflushed = 1;
                if ((err = sf_bdev_write(v->bd, lba, s, 1)))
                    return err;
            }
        }
        pos += run;
        n -= run;
        if (src)
            src += run;
    }
    return 0;
}

/* exFAT: a file that grows past its first cluster grows on in place, where the clusters
 * after it are free, up to a multiple of 1 MiB of clusters (at least 8), so that a file
 * growing by small writes marks the bitmap once per step, not at every cluster. Only in
 * place (no new run: a NoFatChain file stays one). sf_close frees what the size does not
 * cover; a cut before leaves them allocated (leaked until a check), as the stream's
 * preallocation does. Nothing fails for want of the padding (SF_ENOSPC is no error here). */
static int file_pad_exfat(struct sf_file *f, uint64_t need)
{
    struct sf_vol *v = f->vol;
    uint32_t g = v->cluster_shift >= 17 ? 8u : 1u << (20 - v->cluster_shift);
    /* g is a power of two and need below 2^32 (reserve checked it against cluster_count):
     * a mask, not a 64-bit division a Cortex-M would take from libgcc */
    uint32_t pad = g - 1 - ((uint32_t)(need - 1) & (g - 1)), nr = 1, have = file_clusters(f);
    if (!pad || need + pad > v->cluster_count || have != need)
        return 0;
    struct sf_run run = { f->last_cluster, 1 };      /* full list: grow in place only */
    uint32_t old_last = f->last_cluster;
    int err = chain_grow_runs(v, &f->chain, have, &f->last_cluster, pad, &run, 1, &nr);
    if (err) {
        f->ext_n = 0;
        return err == SF_ENOSPC ? 0 : err;
    }
    uint32_t added = f->last_cluster - old_last;
    if (f->ext_n && f->ext_idx + f->ext_n == have && f->ext_clus + f->ext_n == old_last + 1)
        f->ext_n += added;
    return 0;
}

/* sf_write's fast path writes the run without cache_data_check: only a run the cache holds
 * nothing of gets one (cache.c ends it when a sector of it is cached later). Out of line:
 * it runs only when the run changed. */
#if SF_HAVE_XLINK_CHECK
static SF_NOINLINE void ext_check(struct sf_file *f)
{
    struct sf_vol *v = f->vol;
    if (cache_data_check(v, f->ext_lba, (uint64_t)f->ext_n << v->spc_shift))
        f->ext_end = 0;
}
#endif

/* The known run in bytes and sectors, for sf_write's direct path. */
SF_ALWAYS_INLINE void ext_note(struct sf_file *f)
{
    struct sf_vol *v = f->vol;
#if SF_HAVE_XLINK_CHECK
    uint64_t old_end = f->ext_end, old_lba = f->ext_lba;
#endif
    f->ext_pos = (uint64_t)f->ext_idx << v->cluster_shift;
    f->ext_end = f->ext_n ? (uint64_t)(f->ext_idx + f->ext_n) << v->cluster_shift : 0;
    if (!vol_is_exfat(v) && f->ext_end > SF_FAT_MAX_FILE)
        f->ext_end = SF_FAT_MAX_FILE;
    f->ext_lba = f->ext_n ? clus_lba(v, f->ext_clus) : 0;
#if SF_HAVE_XLINK_CHECK
    if (f->ext_end && (f->ext_end != old_end || f->ext_lba != old_lba))
        ext_check(f);
#endif
}

static int reserve(struct sf_file *f, uint64_t size);

/* Make the allocation cover `size` bytes. On SF_ENOSPC the chain keeps what could be had. */
static SF_NOINLINE int file_reserve(struct sf_file *f, uint64_t size)
{
    int err = reserve(f, size);
    ext_note(f);
    return err;
}

static int reserve(struct sf_file *f, uint64_t size)
{
    struct sf_vol *v = f->vol;
    uint64_t need = (size + vol_cs(v) - 1) >> v->cluster_shift;
    uint32_t have = file_clusters(f);
    int err;
    if (need <= have)
        return 0;
    if (need > v->cluster_count)
        return SF_ENOSPC;
    if (have && !f->last_cluster &&
        (err = chain_seek(v, &f->chain, have - 1, f->cur_cluster, f->cur_index, &f->last_cluster)))
        return err;
    uint32_t n = (uint32_t)(need - have), pad = 0;
    if (!vol_is_exfat(v) && f->last_cluster) {
        /* FAT: grow to the end of the FAT sector holding the last new entry (when the run
         * is contiguous), so a file growing by small writes writes each FAT sector once
         * per extent; sf_close frees what the size does not cover. */
        uint32_t eps = vol_ss(v) / (v->fat_bits / 8);
        pad = eps - 1 - (f->last_cluster + n) % eps;     /* clusters: below 2^32 */
        if ((need + pad) << v->cluster_shift > SF_FAT_MAX_FILE + 1 ||
            need + pad > v->cluster_count)
            pad = 0;
    }
    uint32_t target = have + n + pad;
    if (have && !f->ext_n) {
        f->ext_idx = have - 1;                /* the run starts at the last cluster */
        f->ext_clus = f->last_cluster;
        f->ext_n = 1;
    }
    do {
        struct sf_run runs[4];
        uint32_t nr = 0, idx = file_clusters(f);
        err = chain_grow_runs(v, &f->chain, idx, &f->last_cluster, target - idx, runs, 4, &nr);
        if (err) {
            f->ext_n = 0;
            break;
        }
        for (uint32_t i = 0; i < nr; idx += runs[i].count, i++) {
            if (f->ext_n && f->ext_idx + f->ext_n == idx && f->ext_clus + f->ext_n == runs[i].first) {
                f->ext_n += runs[i].count;
            } else {
                f->ext_idx = idx;
                f->ext_clus = runs[i].first;
                f->ext_n = runs[i].count;
            }
        }
    } while (file_clusters(f) < target);
    if (err == SF_ENOSPC && pad && file_clusters(f) >= need)
        return 0;                /* the padding did not fit, what was asked for did */
    if (!err && vol_is_exfat(v) && have)
        err = file_pad_exfat(f, need);
    return err;
}

/* sf_write's general path: allocation, zeros over a gap, mapping, partial sectors. */
static SF_NOINLINE sf_ssize_t write_slow(struct sf_file *f, const void *buf, size_t n)
{
    struct sf_vol *v = f->vol;
    int err;
    if (!v || !file_writable(f))
        return SF_EBADF;
    if (f->failed)
        return f->failed;
    if (f->flags & SF_O_APPEND)
        f->pos = f->size;
    uint64_t end = f->pos + n;
    if (n == 0)
        return 0;
    if (end < f->pos || (!vol_is_exfat(v) && end > SF_FAT_MAX_FILE))
        return SF_EFBIG;
    err = file_reserve(f, end);
    if (err == SF_ENOSPC) {                  /* write what fits, report the rest later */
        uint64_t cap = f->chain.size;
        if (cap <= f->pos)
            return SF_ENOSPC;
        end = cap;
        n = (size_t)(cap - f->pos);
    } else if (err) {
        return f->failed = err;
    }
    if (f->pos > f->valid_length) {
        if ((err = write_at(f, f->valid_length, NULL, f->pos - f->valid_length)))
            return f->failed = err;
        f->valid_length = f->pos;
    }
    if ((err = write_at(f, f->pos, buf, n)))
        return f->failed = err;
    f->pos = end;
    if (end > f->valid_length)
        f->valid_length = end;
    if (end > f->size)
        f->size = f->data_length = end;
    f->meta_dirty = 1;
    return (sf_ssize_t)n;
}

sf_ssize_t sf_write(struct sf_file *f, const void *buf, size_t n)
{
    struct sf_vol *v = f->vol;
    if (!v || !file_writable(f) || f->failed)
        return write_slow(f, buf, n);
    if (f->flags & SF_O_APPEND)
        f->pos = f->size;
    uint64_t pos = f->pos, end = pos + n;
#if SF_FILE_BUF_SIZE > 0
    /* Within the buffered sector, not past the written part (exFAT's watermark): a copy. */
    if (f->bstate && n && (pos >> v->sector_shift) == f->bsec &&
        ((end - 1) >> v->sector_shift) == f->bsec && pos <= f->valid_length &&
        (vol_is_exfat(v) || end <= SF_FAT_MAX_FILE)) {
        memcpy(f->fbuf + (pos & (vol_ss(v) - 1)), buf, n);
        f->bstate = 2;
        goto done;
    }
#endif
    /* Whole sectors inside the run the allocation made (ext_end: below FAT's 4 GiB), not
     * past the written part: straight to the device, nothing to allocate, map or zero. */
    if (n && !((pos | n) & (vol_ss(v) - 1)) && pos >= f->ext_pos && end <= f->ext_end &&
        pos <= f->valid_length && (n >> v->sector_shift) <= 0x10000 && buf_aligned(v, buf)) {
        uint32_t secs = (uint32_t)(n >> v->sector_shift);
        if (f->bstate && f->bsec - (pos >> v->sector_shift) < secs)
            f->bstate = 0;         /* the buffered sector is overwritten whole */
        v->unflushed = 1;
        int err = sf_bdev_write(v->bd, f->ext_lba + ((pos - f->ext_pos) >> v->sector_shift),
                                buf, secs);
        if (err)
            return f->failed = err;
        goto done;
    }
    return write_slow(f, buf, n);
done:
    f->pos = end;
    if (end > f->valid_length)
        f->valid_length = end;
    if (end > f->size)
        f->size = f->data_length = end;
    f->meta_dirty = 1;
    return (sf_ssize_t)n;
}

int64_t sf_seek(struct sf_file *f, int64_t off, int whence)
{
    int64_t base;
    if (!f->vol)
        return SF_EBADF;
    switch (whence) {
    case SF_SEEK_SET: base = 0; break;
    case SF_SEEK_CUR: base = (int64_t)f->pos; break;
    case SF_SEEK_END: base = (int64_t)f->size; break;
    default: return SF_EINVAL;
    }
    if ((off < 0 && base + off < 0) || (off > 0 && base > INT64_MAX - off))
        return SF_EINVAL;
    f->pos = (uint64_t)(base + off);
    return (int64_t)f->pos;
}

uint64_t sf_tell(const struct sf_file *f)
{
    return f->pos;
}

uint64_t sf_fsize(const struct sf_file *f)
{
    return f->size;
}

/* Data and allocation first (flush), then the entry for the allocation `ch`, then flush. */
static int entry_commit(struct sf_file *f, const struct sf_chain *ch)
{
    struct sf_vol *v = f->vol;
    int err;
    if ((err = vol_flush(v)))
        return err;
    f->mtime = vol_now(v);
    if ((err = dir_update(v, &f->loc, f->attr, ch, f->size, f->valid_length, f->mtime, 1)) ||
        (err = vol_flush(v)))
        return err;
    return 0;
}

static int file_commit(struct sf_file *f)
{
    int err = entry_commit(f, &f->chain);
    if (!err)
        f->meta_dirty = 0;
    return err;
}

/* Give back the clusters past `size` (the file's size already): the entry stops referring
 * to them (flush, entry, flush) before they are freed. */
static int file_release_tail(struct sf_file *f)
{
    struct sf_vol *v = f->vol;
    uint32_t keep = (uint32_t)((f->size + vol_cs(v) - 1) >> v->cluster_shift);
    uint32_t have = file_clusters(f);
    int err;
    if (keep >= have)
        return 0;
    struct sf_chain after = f->chain;
    if (keep == 0)
        after.first = 0;
    after.size = (uint64_t)keep << v->cluster_shift;
    uint32_t hc = f->cur_cluster, hi = f->cur_index;
    if (keep && keep - 1 - f->ext_idx < f->ext_n) {
        hi = keep - 1;                 /* the new last cluster is in the known run */
        hc = f->ext_clus + (hi - f->ext_idx);
    }
    if ((err = entry_commit(f, &after)) ||
        (err = chain_shrink(v, &f->chain, have, keep, &f->last_cluster, hc, hi)))
        return err;
    f->cur_cluster = 0;
    f->cur_index = 0;
    f->ext_n = 0;
    ext_note(f);
    f->meta_dirty = 0;
    return 0;
}

int sf_truncate(struct sf_file *f, uint64_t size)
{
    struct sf_vol *v = f->vol;
    int err;
    if (!v || !file_writable(f))
        return SF_EBADF;
    if (f->failed)
        return f->failed;
    if (size == f->size)
        return 0;
    if ((err = fbuf_drop(f)))
        return f->failed = err;
    if (size > f->size) {
        if (!vol_is_exfat(v) && size > SF_FAT_MAX_FILE)
            return SF_EFBIG;
        if ((err = file_reserve(f, size)))
            return err;        /* an incomplete reservation is freed by close */
        /* FAT cannot say "not written yet", and on exFAT readers that ignore
         * ValidDataLength (exfat-fuse, sleuthkit) or take the size from it (older Linux)
         * would show stale clusters or a short file: the new bytes become zeros on disk and
         * ValidDataLength follows the size. */
        if ((err = write_at(f, f->valid_length, NULL, size - f->valid_length)))
            return f->failed = err;
        f->valid_length = size;
        f->size = f->data_length = size;
        f->meta_dirty = 1;
        return 0;
    }
    f->size = f->data_length = size;
    if (f->valid_length > size)
        f->valid_length = size;
    f->meta_dirty = 1;
    if ((err = file_release_tail(f)) || (err = sf_sync(f)))
        return f->failed = err;
    return 0;
}

int sf_sync(struct sf_file *f)
{
    int err;
    if (!f->vol)
        return SF_EBADF;
    if (f->failed)
        return f->failed;
    if (!file_writable(f) || !f->meta_dirty)
        return 0;
    if ((err = fbuf_flush(f)) || (err = file_commit(f)))
        f->failed = err;
    return err;
}

int sf_close(struct sf_file *f)
{
    struct sf_vol *v = f->vol;
    if (!v)
        return SF_EBADF;
    int err = file_writable(f) ? f->failed : 0;
    if (file_writable(f) && !f->failed) {
        /* The buffered sector, then clusters allocated beyond the size (preallocation, a
         * failed grow) go back. */
        err = fbuf_flush(f);
        if (!err)
            err = file_release_tail(f);
        if (!err)
            err = sf_sync(f);
    }
    for (struct sf_file **p = &v->open_files; *p; p = &(*p)->next_open) {
        if (*p == f) {
            *p = f->next_open;
            break;
        }
    }
    if (file_writable(f)) {
        if (f->failed || err)
            v->info.dirty = 1;   /* leave the volume marked dirty for a checker */
        v->writers--;
        int e = vol_end_write(v);
        if (!err)
            err = e;
    }
    f->vol = NULL;
    return err;
}
