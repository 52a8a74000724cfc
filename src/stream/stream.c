/* The streaming write path (contract in include/streamfat/stream.h).
 *
 * Sections: allocation ahead of the data - mapping and data writes - asynchronous requests -
 * checkpoints - open and close.
 *
 * Write order and what a power cut leaves (docs/DESIGN.md, "Streaming"):
 * 1. Clusters are allocated (exFAT bitmap bits; FAT chain runs with their end mark, in every
 *    FAT copy) before any data goes into them, in steps of cfg.prealloc_step.
 * 2. Data goes to the device straight from the caller's buffers, in requests that span
 *    cluster boundaries within each contiguous extent.
 * 3. A checkpoint waits for every request, flushes (data and allocation durable), rewrites
 *    the directory entry with the size written so far (one sector), and flushes again.
 *    One started behind the data (sf_stream_checkpoint_start) puts a FLUSH request behind
 *    the requests submitted so far instead of waiting for them (the device contract: a FLUSH
 *    completes after every write submitted before it is durable), writes the entry for that
 *    size when it completes and then a second FLUSH, while later data keeps flowing. The
 *    entry it writes is the one of that moment: size ck_pos and the chain as it stood then
 *    (ck_chain), so it refers only to clusters and FAT links written before its first FLUSH,
 *    even if the file grew or its exFAT chain was converted to a FAT chain since; the
 *    next checkpoint writes the new shape after its own FLUSH.
 * A cut before 3 completes leaves the previous checkpoint's size over valid data; clusters
 * allocated ahead are leaked until a checker reclaims them. Nothing else is written while
 * streaming: no directory entry, no FAT or bitmap sector outside an allocation step. */
#include "streamfat/stream.h"
#include "fs/fs.h"

#define DEFAULT_STEP (64ull << 20)
#define MAX_AUTO_STEP (1ull << 30)

static SF_NOINLINE int fail(struct sf_stream *s, int err)
{
    if (!s->failed)
        s->failed = err;
    s->f.failed = err;
    return err;
}

/* ---- allocation ahead of the data ---- */

static void ext_append(struct sf_stream *s, uint32_t first, uint32_t count)
{
    if (s->ext_n && s->ext[s->ext_n - 1].first + s->ext[s->ext_n - 1].count == first)
        s->ext[s->ext_n - 1].count += count;
    else
        s->ext[s->ext_n++] = (struct sf_stream_extent){ first, count };
}

/* Forget extents that lie wholly before the next byte to be written. */
static void ext_compact(struct sf_stream *s, uint64_t written)
{
    uint32_t k = 0;
    while (k < s->ext_n) {
        uint64_t len = (uint64_t)s->ext[k].count << s->v->cluster_shift;
        if (s->ext_off + len > written)
            break;
        s->ext_off += len;
        k++;
    }
    if (k) {
        memmove(s->ext, s->ext + k, (s->ext_n - k) * sizeof s->ext[0]);
        s->ext_n -= k;
    }
}

/* Where the FAT steps' bulk buffer starts in the work buffer: past its first sector (the
 * tail), at the device's memory alignment. */
static uint32_t bulk_offset(const struct sf_vol *v)
{
    uint32_t a = v->bd->mem_align ? v->bd->mem_align : 1;
    return (vol_ss(v) + a - 1) & ~(a - 1);
}

/* Make the allocation cover `end` bytes, or at least `need` of them (need <= end) when the
 * extent table fills first: on a volume whose free space is in many pieces a preallocation
 * (`need` 0) takes what the table can track and the writes allocate the rest as they pass
 * extents; a write (`need` == `end`) needing more pieces than the table holds is refused.
 * Cluster counts are 32-bit: a volume has fewer than 2^32 clusters, and a FAT file's (at
 * most 4 GiB) fewer than 2^23. */
static int stream_reserve(struct sf_stream *s, uint64_t need, uint64_t end)
{
    struct sf_vol *v = s->v;
    if (end <= s->alloc)
        return 0;                 /* every write asks: the common case costs one compare */
    uint64_t step = s->cfg.prealloc_step;
    int fat = !vol_is_exfat(v);
    uint32_t ss = vol_ss(v), lend = bulk_offset(v);
    uint32_t per = fat ? (ss * 8) / v->fat_bits : 1;     /* FAT entries in a FAT sector */
    int err;
    /* Without a configured step the steps grow with the file, half of what it has up to
     * 1 GiB: each allocation write waits behind the data in flight (about one request's
     * time), so a 4 GiB stream takes 11 of them rather than 64. The excess goes back at
     * close, or leaks to a checker after a power cut, as any preallocation does. */
    if (!step) {
        step = s->alloc / 2 > DEFAULT_STEP ? s->alloc / 2 : DEFAULT_STEP;
        if (step > MAX_AUTO_STEP)
            step = MAX_AUTO_STEP;
        /* FAT: no further than one request per FAT copy can carry (the work buffer past
         * its first sector, see below), less the sector holding the link from the previous
         * step and one for the rounding to whole FAT sectors */
        if (fat && s->buf_size >= lend + 3 * ss) {
            uint64_t cover = ((uint64_t)((s->buf_size - lend) / ss - 2) * per) << v->cluster_shift;
            if (step > cover)
                step = cover > DEFAULT_STEP ? cover : DEFAULT_STEP;
        }
    }
    /* `end` may be rounded up to a whole sector: the file itself stops at 4 GiB - 1, checked
     * by the callers against the byte count; the allocation may cover the last sector. */
    if (fat && end > SF_FAT_MAX_FILE + 1)
        return SF_EFBIG;
    while (s->alloc < end) {
        uint64_t want = end - s->alloc > step ? end - s->alloc : step;
        uint32_t have = (uint32_t)(s->alloc >> v->cluster_shift);
        if (fat && s->alloc + want > SF_FAT_MAX_FILE + 1)
            want = SF_FAT_MAX_FILE + 1 - s->alloc;       /* FAT files end below 4 GiB */
        uint64_t n = (want + vol_cs(v) - 1) >> v->cluster_shift;
        if (fat) {
            /* Whole FAT sectors: the extent's FAT entries fill the sectors they touch, so
             * each is written once, never read back and rewritten by the next step. */
            uint32_t next = have ? s->f.last_cluster + 1 : v->next_free;
            uint32_t stop = (next + (uint32_t)n + per - 1) / per * per;
            if (stop > next + (uint32_t)n &&
                (uint64_t)(stop - next) << v->cluster_shift <= SF_FAT_MAX_FILE + 1 - s->alloc)
                n = stop - next;
        }
        if (n > v->cluster_count - have)
            n = v->cluster_count - have;
        if (!n)
            return SF_ENOSPC;
        ext_compact(s, s->pos - s->tail_len);
        if (s->ext_n == SF_STREAM_EXTENTS)
            return s->alloc >= need ? 0 : SF_EINVAL;
        struct sf_run runs[SF_STREAM_EXTENTS];
        uint32_t nruns = 0;
        /* FAT: lend the work buffer past its first (tail) sector for the step's FAT sectors,
         * so they go out as one request per FAT copy. */
        if (fat && s->buf_size >= lend + ss) {
            v->bulk = s->buf + lend;
            v->bulk_size = (s->buf_size - lend) & ~(ss - 1);
        }
        err = chain_grow_runs(v, &s->f.chain, have, &s->f.last_cluster, (uint32_t)n, runs,
                              SF_STREAM_EXTENTS - s->ext_n, &nruns);
        v->bulk = NULL;
        v->bulk_size = 0;
        /* New clusters the cache holds as metadata (a corrupt volume: free in the map, in
         * use by a directory): the stream's direct path must not write them (fs.h). */
        int clash = 0;
        for (uint32_t i = 0; i < nruns; i++) {
            ext_append(s, runs[i].first, runs[i].count);
            if (!clash)
                clash = cache_data_check(v, clus_lba(v, runs[i].first),
                                         (uint64_t)runs[i].count << v->spc_shift);
        }
        if (clash)
            return clash;
        uint64_t before = s->alloc;
        s->alloc = s->f.chain.size;
        if (s->alloc > before)
            s->st.extents++;
        if (err == SF_ENOSPC && s->alloc > before)
            continue;              /* use what could be had, then report */
        if (err)
            return err;
        if (s->alloc == before)
            return SF_ENOSPC;
    }
    return 0;
}

/* Reserve for data up to byte `end` of the file, allocating up to `alloc_end` (end rounded to
 * a whole sector). Running out of room (SF_ENOSPC, SF_EFBIG) is reported without failing the
 * stream: the caller may close it or write less. */
static int reserve_for(struct sf_stream *s, uint64_t end, uint64_t alloc_end)
{
    if (!vol_is_exfat(s->v) && end > SF_FAT_MAX_FILE)
        return SF_EFBIG;
    int err = stream_reserve(s, alloc_end, alloc_end);
    return !err || err == SF_ENOSPC || err == SF_EFBIG ? err : fail(s, err);
}

/* ---- mapping and data writes ---- */

/* Device LBA of file offset `off` (sector aligned) and the contiguous bytes from there. */
static int stream_map(struct sf_stream *s, uint64_t off, uint64_t *lba, uint64_t *run)
{
    struct sf_vol *v = s->v;
    uint64_t o = s->ext_off;
    for (uint32_t i = 0; i < s->ext_n; i++) {
        uint64_t len = (uint64_t)s->ext[i].count << v->cluster_shift;
        if (off < o + len) {
            *lba = clus_lba(v, s->ext[i].first) + ((off - o) >> v->sector_shift);
            *run = o + len - off;
            return 0;
        }
        o += len;
    }
    return SF_EINVAL;   /* not reserved: a programming error */
}

/* Write whole sectors at file offset `off`, synchronously. */
static int write_sectors(struct sf_stream *s, uint64_t off, const uint8_t *src, uint64_t bytes)
{
    struct sf_vol *v = s->v;
    while (bytes) {
        uint64_t lba, run;
        int err = stream_map(s, off, &lba, &run);
        if (err)
            return err;
        if (run > bytes)
            run = bytes;
        if (run > (1u << 30))
            run = 1u << 30;
        v->unflushed = 1;
        if ((err = cache_data_check(v, lba, run >> v->sector_shift)) ||
            (err = sf_bdev_write(v->bd, lba, src, (uint32_t)(run >> v->sector_shift))))
            return err;
        s->st.data_requests++;
        off += run;
        src += run;
        bytes -= run;
    }
    return 0;
}

static int buf_aligned(const struct sf_vol *v, const void *p)
{
    uint32_t a = v->bd->mem_align;
    return a <= 1 || ((uintptr_t)p & (a - 1)) == 0;
}

static uint32_t pending_bios(const struct sf_stream *s)
{
    return SF_STREAM_BIOS - s->bio_top;
}

static int drain(struct sf_stream *s);
static int maybe_checkpoint(struct sf_stream *s, int behind);

/* sf_stream_write's general path. */
static SF_NOINLINE sf_ssize_t write_general(struct sf_stream *s, const void *buf, size_t n)
{
    struct sf_vol *v = s->v;
    const uint8_t *src = buf;
    uint32_t ss = vol_ss(v);
    size_t left = n;
    int err;
    if (!v)
        return SF_EBADF;
    if (s->failed)
        return s->failed;
    if (!n)
        return 0;
    uint64_t end = s->pos + n;
    if ((err = drain(s)))
        return err;
    if ((err = reserve_for(s, end, (end + ss - 1) & ~(uint64_t)(ss - 1))))
        return err;
    uint64_t off = s->pos - s->tail_len;       /* sector-aligned start of pending data */
    if (s->tail_len) {
        size_t take = ss - s->tail_len < left ? ss - s->tail_len : left;
        memcpy(s->buf + s->tail_len, src, take);
        s->tail_len += (uint32_t)take;
        src += take;
        left -= take;
        if (s->tail_len < ss) {
            s->pos = end;
            s->st.bytes_accepted += n;
            return (sf_ssize_t)n;
        }
        if ((err = write_sectors(s, off, s->buf, ss)))
            return fail(s, err);
        s->tail_len = 0;
        off += ss;
    }
    size_t whole = left & ~(size_t)(ss - 1);
    if (whole && buf_aligned(v, src)) {
        if ((err = write_sectors(s, off, src, whole)))
            return fail(s, err);
    } else if (whole) {
        /* Misaligned for the device (O_DIRECT): stage through the work buffer. */
        uint32_t chunk = s->buf_size & ~(ss - 1);
        for (size_t done = 0; done < whole;) {
            size_t k = whole - done < chunk ? whole - done : chunk;
            memcpy(s->buf, src + done, k);
            if ((err = write_sectors(s, off + done, s->buf, k)))
                return fail(s, err);
            done += k;
        }
    }
    src += whole;
    left -= whole;
    memcpy(s->buf, src, left);
    s->tail_len = (uint32_t)left;
    s->pos = end;
    s->done_end = s->pos - s->tail_len;
    s->st.bytes_accepted += n;
    if ((err = maybe_checkpoint(s, 0)))
        return err;
    return (sf_ssize_t)n;
}

sf_ssize_t sf_stream_write(struct sf_stream *s, const void *buf, size_t n)
{
    struct sf_vol *v = s->v;
    /* Whole sectors, nothing in flight or queued, no checkpoint due by size or time, all of
     * it allocated inside the first extent: one device write (what the general path comes
     * to, without its bookkeeping). */
    if (v && !s->failed && !s->tail_len && n && !(n & (vol_ss(v) - 1)) && !s->count &&
        !pending_bios(s) && !s->ck_state && !s->cfg.checkpoint_bytes && !s->cfg.checkpoint_ms &&
        s->ext_n && s->pos >= s->ext_off &&
        s->pos + n - s->ext_off <= (uint64_t)s->ext[0].count << v->cluster_shift &&
        s->pos + n <= s->alloc && (vol_is_exfat(v) || s->pos + n <= SF_FAT_MAX_FILE) &&
        (n >> v->sector_shift) <= 0x10000 && buf_aligned(v, buf)) {
        uint64_t lba = v->heap_offset +
                       ((uint64_t)(s->ext[0].first - SF_FIRST_CLUSTER) << v->spc_shift) +
                       ((s->pos - s->ext_off) >> v->sector_shift);
        v->unflushed = 1;
        /* A directory sector read into the cache after this run was reserved (a corrupt
         * volume, fs.h): the reservation's check could not see it. The check's own first
         * test inline (outside the heap sectors cached since mount: nothing to see), so a
         * call costs two compares. */
        int err = 0;
        if (lba <= v->cache_heap_hi && lba + (n >> v->sector_shift) > v->cache_heap_lo)
            err = cache_data_check(v, lba, n >> v->sector_shift);
        if (!err)
            err = sf_bdev_write(v->bd, lba, buf, (uint32_t)(n >> v->sector_shift));
        if (err)
            return fail(s, err);
        s->st.data_requests++;
        s->pos += n;
        s->done_end = s->pos;
        s->st.bytes_accepted += n;
        return (sf_ssize_t)n;
    }
    return write_general(s, buf, n);
}

/* ---- asynchronous requests ---- */

static int ck_done(struct sf_stream *s, int result);

/* Collect device completions into their requests (and the checkpoint's FLUSH); wait for one
 * if asked. */
static int reap(struct sf_stream *s, int wait)
{
    struct sf_bio *done[16];
    int k = sf_bdev_poll(s->v->bd, done, 16, wait);
    if (k < 0)
        return fail(s, k);
    for (int i = 0; i < k; i++) {
        if (done[i] == &s->ck_bio) {
            int err = ck_done(s, done[i]->result);
            if (err)
                return err;
            continue;
        }
        struct sf_stream_req *r = done[i]->user;
        if (done[i]->result && !r->result)
            r->result = done[i]->result;
        r->pending--;
        s->bio_stack[s->bio_top++] = (uint16_t)(done[i] - s->bio);
    }
    return k;
}

/* The error of a completed request not yet handed back by poll, among those ending at or
 * before `upto` (0 when none failed). */
static SF_NOINLINE int req_error(const struct sf_stream *s, uint64_t upto)
{
    for (uint32_t i = 0; i < s->count; i++) {
        const struct sf_stream_req *r = &s->req[(s->head + i) % s->qd];
        if (r->end <= upto && r->result)
            return r->result;
    }
    return 0;
}

/* Wait until no request is in flight on the device (requests stay queued for poll) and no
 * checkpoint is running. */
static int drain(struct sf_stream *s)
{
    while (pending_bios(s) || s->ck_state) {
        int k = reap(s, 1);
        if (k < 0)
            return k;
        if (k == 0 && (pending_bios(s) || s->ck_state))
            return fail(s, SF_EIO);    /* the device lost requests */
    }
    int err = req_error(s, UINT64_MAX);
    return err ? fail(s, err) : 0;
}

int sf_stream_submit(struct sf_stream *s, const void *buf, size_t n, void *user)
{
    struct sf_vol *v = s->v;
    int err;
    if (!v)
        return SF_EBADF;
    if (s->failed)
        return s->failed;
    if (!n || (n & (vol_ss(v) - 1)) || s->tail_len || !buf_aligned(v, buf))
        return SF_EINVAL;
    if (s->count == s->qd)
        return SF_EBUSY;
    {
        /* Data in the stream's own buffer (the logger builds its header blocks there): a
         * FAT allocation step must not lend that buffer to its FAT sectors meanwhile, or
         * the data would go out as FAT entries. Without the buffer it writes them the slow
         * way (found by the reader's dirty-tail check, issue 15). */
        const uint8_t *p = buf;
        uint32_t keep = s->buf_size;
        if (p < s->buf + s->buf_size && p + n > s->buf)
            s->buf_size = 0;
        err = reserve_for(s, s->pos + n, s->pos + n);
        s->buf_size = keep;
        if (err)
            return err;
    }
    struct sf_stream_req *r = &s->req[(s->head + s->count) % s->qd];
    r->user = user;
    r->end = s->pos + n;
    r->pending = 0;
    r->result = 0;
    r->used = 1;
    const uint8_t *src = buf;
    uint64_t off = s->pos;
    s->st.bytes_accepted += n;
    s->count++;
    s->pos += n;
    while (n) {
        uint64_t lba, run;
        if ((err = stream_map(s, off, &lba, &run)))
            return fail(s, err);
        if (run > n)
            run = n;
        if ((err = cache_data_check(v, lba, run >> v->sector_shift)))
            return fail(s, err);
        while (!s->bio_top) {              /* every bio in flight: wait for one */
            if ((err = reap(s, 1)) < 0)
                return err;
        }
        struct sf_bio *b = &s->bio[s->bio_stack[--s->bio_top]];
        b->lba = lba;
        b->count = (uint32_t)(run >> v->sector_shift);
        b->op = SF_BIO_WRITE;
        b->buf = (void *)(uintptr_t)src;
        b->result = 0;
        b->user = r;
        v->unflushed = 1;
        r->pending++;
        if ((err = sf_bdev_submit(v->bd, b))) {
            r->pending--;
            s->bio_stack[s->bio_top++] = (uint16_t)(b - s->bio);
            return fail(s, err);
        }
        s->st.data_requests++;
        off += run;
        src += run;
        n -= run;
    }
    if (s->count > s->st.max_in_flight)
        s->st.max_in_flight = s->count;
    return maybe_checkpoint(s, 1);
}

int sf_stream_poll(struct sf_stream *s, void **out, unsigned max, int wait)
{
    unsigned k = 0;
    if (!s->v)
        return SF_EBADF;
    for (;;) {
        while (k < max && s->count) {
            struct sf_stream_req *r = &s->req[s->head];
            if (r->pending)
                break;
            if (r->result)
                return fail(s, r->result);
            out[k++] = r->user;
            s->done_end = r->end;
            r->used = 0;
            s->head = (s->head + 1) % s->qd;
            s->count--;
        }
        if (k || !s->count || k == max) {
            if (!s->count && s->ck_state && reap(s, 0) < 0)   /* carry the checkpoint on */
                return s->failed;
            return (int)k;
        }
        int got = reap(s, wait);
        if (got < 0)
            return got;
        if (!got && !wait)
            return 0;
    }
}

/* ---- checkpoints ---- */

int sf_stream_checkpoint(struct sf_stream *s)
{
    struct sf_vol *v = s->v;
    uint32_t ss = vol_ss(v);
    int err;
    if (!v)
        return SF_EBADF;
    if (s->failed)
        return s->failed;
    if ((err = drain(s)))
        return err;
    if (s->tail_len) {
        /* The partial last sector goes out too, zero padded; later writes complete it. */
        memset(s->buf + s->tail_len, 0, ss - s->tail_len);
        if ((err = write_sectors(s, s->pos - s->tail_len, s->buf, ss)))
            return fail(s, err);
    }
    s->f.size = s->f.data_length = s->f.valid_length = s->pos;
    s->f.meta_dirty = 1;
    if ((err = sf_sync(&s->f)))                 /* flush, entry, flush */
        return fail(s, err);
    s->ckpt_pos = s->pos;
    s->ckpt_time = vol_now(v);
    s->st.checkpoints++;
    s->st.bytes_durable = s->pos;
    return 0;
}

/* ---- checkpoints behind the data ---- */

/* The checkpoint ends without making anything durable; the stream fails with err. */
static SF_NOINLINE int ck_fail(struct sf_stream *s, int err)
{
    s->ck_state = 0;
    return fail(s, err);
}

static int ck_flush(struct sf_stream *s, uint8_t state)
{
    memset(&s->ck_bio, 0, sizeof s->ck_bio);
    s->ck_bio.op = SF_BIO_FLUSH;
    s->ck_state = state;
    int err = sf_bdev_submit(s->v->bd, &s->ck_bio);
    return err ? ck_fail(s, err) : 0;
}

int sf_stream_checkpoint_start(struct sf_stream *s)
{
    if (!s->v)
        return SF_EBADF;
    if (s->failed)
        return s->failed;
    if (s->tail_len)
        return SF_EINVAL;
    if (s->ck_state)
        return SF_EBUSY;
    s->ckpt_pos = s->pos;
    s->ckpt_time = vol_now(s->v);
    if (s->pos == s->st.bytes_durable && s->st.checkpoints)
        return 0;
    s->ck_pos = s->pos;
    s->ck_chain = s->f.chain;
    return ck_flush(s, 1);
}

/* The checkpoint's FLUSH came back: after the first, the entry and the second FLUSH; after
 * the second, the size is durable. */
static int ck_done(struct sf_stream *s, int result)
{
    struct sf_vol *v = s->v;
    int err;
    if (result || (result = s->failed))
        return ck_fail(s, result);
    if (s->ck_state == 1) {
        /* The data it covers has completed (the FLUSH came after it): the entry may say
         * ck_pos only if all of it was written. A failed request not yet handed back by
         * poll still holds its result. */
        if ((err = req_error(s, s->ck_pos)))
            return ck_fail(s, err);
        s->f.mtime = vol_now(v);
        if ((err = dir_update(v, &s->f.loc, s->f.attr, &s->ck_chain, s->ck_pos, s->ck_pos,
                              s->f.mtime, 1)))
            return ck_fail(s, err);
        return ck_flush(s, 2);
    }
    s->ck_state = 0;
    s->st.checkpoints++;
    s->st.bytes_durable = s->ck_pos;
    if (s->f.size < s->ck_pos)                /* what sf_stat shows of an open file */
        s->f.size = s->f.data_length = s->f.valid_length = s->ck_pos;
    return 0;
}

/* The configured checkpoints: behind the data on the submit path (one at a time: while one
 * runs, the next waits), blocking on the write path. */
static int maybe_checkpoint(struct sf_stream *s, int behind)
{
    if (!(s->cfg.checkpoint_bytes && s->pos - s->ckpt_pos >= s->cfg.checkpoint_bytes) &&
        !(s->cfg.checkpoint_ms &&
          vol_now(s->v) - s->ckpt_time >= (sf_time_ms)s->cfg.checkpoint_ms))
        return 0;
    if (!behind)
        return sf_stream_checkpoint(s);
    int err = sf_stream_checkpoint_start(s);
    return err == SF_EBUSY ? 0 : err;
}

/* ---- open and close ---- */

int sf_stream_open(struct sf_vol *v, struct sf_stream *s, const char *path,
                   const struct sf_stream_cfg *cfg, void *buf, uint32_t buf_size)
{
    int err;
    memset(s, 0, sizeof *s);
    if (!v || v->fs_type == SF_FS_NONE || !buf || buf_size < vol_ss(v) || !buf_aligned(v, buf))
        return SF_EINVAL;
    if (cfg)
        s->cfg = *cfg;
    s->qd = s->cfg.queue_depth ? s->cfg.queue_depth : 4;
    if (s->qd > SF_STREAM_MAX_QD)
        return SF_EINVAL;
    uint32_t flags = SF_O_WRONLY | SF_O_CREAT |
                     ((s->cfg.flags & SF_STREAM_REPLACE) ? SF_O_TRUNC : SF_O_EXCL);
    if ((err = sf_open(v, &s->f, path, flags)))
        return err;
    s->v = v;
    s->buf = buf;
    s->buf_size = buf_size;
    s->alloc = s->f.chain.size;
    for (uint32_t i = 0; i < SF_STREAM_BIOS; i++)
        s->bio_stack[i] = (uint16_t)i;
    s->bio_top = SF_STREAM_BIOS;
    s->ckpt_time = vol_now(v);
    if (s->cfg.expected_size && (err = stream_reserve(s, 0, s->cfg.expected_size)) &&
        err != SF_ENOSPC) {
        sf_close(&s->f);
        s->v = NULL;
        return err;
    }
    return 0;
}

int sf_stream_close(struct sf_stream *s)
{
    int err;
    if (!s->v)
        return SF_EBADF;
    err = s->failed ? s->failed : sf_stream_checkpoint(s);
    if (err) {
        drain(s);                     /* never leave requests on the caller's buffers */
        s->f.failed = err;
    }
    /* The file's last cluster from the stream's extents, so that the close cuts the chain
     * there instead of walking it from the start (its cost grew with the file's length:
     * 2.2 M Ir at 64 MiB on FAT32 4K). */
    struct sf_vol *v = s->v;
    uint32_t keep = (uint32_t)((s->f.size + vol_cs(v) - 1) >> v->cluster_shift);
    uint32_t idx = (uint32_t)(s->ext_off >> v->cluster_shift);
    for (uint32_t i = 0; keep && i < s->ext_n; idx += s->ext[i++].count) {
        if (keep - 1 - idx < s->ext[i].count && keep - 1 >= idx) {
            s->f.cur_cluster = s->ext[i].first + (keep - 1 - idx);
            s->f.cur_index = keep - 1;
            break;
        }
    }
    int e = sf_close(&s->f);          /* trims the allocation to the size */
    s->v = NULL;
    return err ? err : e;
}
