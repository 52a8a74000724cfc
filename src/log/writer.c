/* The logger's writer: open, the service step, device requests, checkpoints, close,
 * statistics (contract in include/streamfat/log.h; ring protocol in ring.c).
 *
 * Sections: requests and completions - framed submission - raw mode - checkpoints and cuts -
 * service - open and close - statistics.
 *
 * Block life cycle (framed): producers fill the current block; it is closed (by the producer
 * whose record did not fit, or by the writer: full, or cut early by a checkpoint, rotation
 * or close) and, once every reservation in it is committed, taken by the writer
 * (sfl_ring_take: rel .. taken - 1 are the writer's). The writer seals taken blocks with the
 * current file's id and the next seq just before it submits them, in runs of consecutive
 * ring blocks up to request_size, straight from the ring (no copy). The stream hands requests
 * back in submission order; their blocks go back to the producers (sfl_ring_release), so the
 * producers' blocks, the writer's sealed blocks and the blocks in flight always form three
 * consecutive arcs of the ring.
 *
 * A cut ("write everything up to here") closes the current block early and records the
 * counter of the block after it; once every block before it is submitted the action runs:
 * a checkpoint (sf_stream_checkpoint: everything written so far, then the size), a
 * rotation, the end of a flight-recorder file, or close. Blocks written by a checkpoint are
 * final (docs/FORMAT.md): the writer simply continues in the next block. */
#include "log_impl.h"

#define DEFAULT_CKPT_NS 1000000000ull
#define DEFAULT_REQ (1u << 20)
#define CLOSE_SPINS 100000000u       /* close gives up on a producer that never commits */
#define CKPT_POLL_NS 100000ull      /* next_deadline while a checkpoint runs behind the data */

int sfl_fail(struct sf_log *lg, int err)
{
    if (!lg->stats.last_error)
        lg->stats.last_error = err;
    return err;
}

static void hist_add(struct sf_hist *h, uint64_t ns)
{
    uint32_t k = 0;
    for (uint64_t v = ns; v > 1 && k < SF_HIST_BUCKETS - 1; v >>= 1)
        k++;
    h->bucket[k]++;
    h->count++;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

/* ---- requests and completions ---- */

static uint32_t qd(const struct sf_log *lg)
{
    return lg->cfg.queue_depth;
}

int sfl_submit_buf(struct sf_log *lg, const void *buf, uint32_t bytes, uint32_t amount,
                   uint8_t kind, uint64_t first_ts)
{
    struct sf_stream *s = &lg->st[lg->cur];
    int err;
    for (;;) {
        err = sf_stream_submit(s, buf, bytes, NULL);
        /* The volume is full: make room (cyclic mode: delete this logger's oldest file; any
         * mode: give back the prepared file's allocation, which may hold all the free space)
         * and retry (the stream has not failed: ENOSPC leaves it as it was). */
        if (err == SF_ENOSPC && sfl_make_room(lg) == 0)
            continue;
        break;
    }
    if (err)
        return sfl_fail(lg, err);
    struct sf_log_req *r = &lg->req[(lg->req_head + lg->req_count) % SF_STREAM_MAX_QD];
    r->amount = amount;
    r->kind = kind;
    r->t_submit = log_now(lg);
    r->first_ts = first_ts;
    lg->req_count++;
    lg->file_bytes += bytes;
    lg->stats.bytes_written += bytes;
    return 0;
}

static void durable_update(struct sf_log *lg, const struct sf_stream *s, uint64_t now);

/* A checkpoint of the current file runs behind the data (see do_checkpoint). */
static int ckpt_running(const struct sf_log *lg)
{
    return lg->cur_open && sf_stream_checkpoint_busy(&lg->st[lg->cur]);
}

/* Take completed requests back from the stream (in order) and give their ring space back;
 * carry a running checkpoint on. */
int sfl_reap(struct sf_log *lg, int wait)
{
    void *out[16];
    if (!lg->cur_open || (!lg->req_count && !ckpt_running(lg)))
        return 0;
    struct sf_stream *s = &lg->st[lg->cur];
    int k = sf_stream_poll(s, out, 16, lg->req_count ? wait : 0);
    if (k < 0)
        return sfl_fail(lg, k);
    uint64_t now = log_now(lg);
    durable_update(lg, s, now);
    for (int i = 0; i < k; i++) {
        struct sf_log_req *r = &lg->req[lg->req_head];
        if (lg->cfg.clock)
            hist_add(&lg->h_dev, now - r->t_submit);
        if (r->kind == REQ_DATA || r->kind == REQ_PACKED) {
            if (r->kind == REQ_PACKED) {
                lg->cfg.packer->done(lg, r->amount);
            } else if (lg->flags & SF_LOG_RAW) {
                uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
                atomic_store_explicit(&lg->rel, ctr_add(lg, rel, r->amount), memory_order_release);
            } else {
                sfl_ring_release(lg, r->amount);
            }
            /* Append-to-durable is measured from when the writer took the data (its
             * submission): record timestamps may come from elsewhere (replayed files,
             * hardware clocks) and raw data has none. */
            if (lg->dur_n < sizeof lg->dur_ts / sizeof lg->dur_ts[0])
                lg->dur_ts[lg->dur_n++] = r->t_submit;
        }
        lg->req_head = (lg->req_head + 1) % SF_STREAM_MAX_QD;
        lg->req_count--;
    }
    return k;
}

/* Wait for every request of the current file. */
int sfl_drain(struct sf_log *lg)
{
    while (lg->req_count) {
        int k = sfl_reap(lg, 1);
        if (k < 0)
            return k;
        if (!k)
            return sfl_fail(lg, SF_EIO);        /* the stream lost a request */
    }
    return 0;
}

/* ---- framed submission ---- */

/* Seal the taken blocks from lg->sub on and submit them, in runs of consecutive ring blocks,
 * up to block counter `limit`. Without force a short run waits while another request is in
 * flight, so requests grow to request_size when the producers are fast. Rotates when the
 * file is full. Returns runs submitted or an error. */
int sfl_submit_runs(struct sf_log *lg, uint32_t limit, int force)
{
    int runs = 0, err;
    if (lg->pk)
        return lg->cfg.packer->runs(lg, limit, force);  /* compression: writer_pack.c */
    while (lg->sub != limit && lg->req_count < qd(lg)) {
        uint32_t avail = ctr_dist(lg, limit, lg->sub);
        uint32_t idx = ctr_index(lg, lg->sub);
        uint32_t n = avail;
        if (n > lg->nblk - idx)
            n = lg->nblk - idx;                 /* a request never wraps the ring */
        if (n > lg->req_blocks)
            n = lg->req_blocks;
        uint64_t room = lg->file_bytes < lg->file_limit ?
                        (lg->file_limit - lg->file_bytes) >> lg->bshift : 0;
        if (!room && lg->file_seq == lg->head_blocks)
            room = 1;               /* names filled the file: it holds one ring block anyway */
        if (!room) {
            if ((err = sfl_rotate(lg, log_now(lg))))
                return err;
            continue;
        }
        if (n > room)
            n = (uint32_t)room;
        if (!force && n == avail && n < lg->req_blocks && lg->req_count)
            break;
        uint32_t records = 0;                   /* < n * block / 16 */
        for (uint32_t i = 0; i < n; i++) {
            uint8_t *b = blk_ptr(lg, ctr_add(lg, lg->sub, i));
            struct sf_block_info bi = {
                .kind = SF_BLOCK_RECORDS, .file_id = lg->file_id, .seq = lg->file_seq + i,
                .first_ts = ld_le64(b + META_FIRST_TS), .used = ld_le32(b + META_USED),
                .count = ld_le32(b + META_COUNT), .block_size = lg->bsize,
            };
            records += bi.count;
            /* Sealed files: the cipher stage first (docs/FORMAT.md, "Sealed files"), then
             * the header and the CRC over the stored bytes. A block sealed before (its magic
             * replaces the producers' commit count, which never reaches it) keeps its stored
             * bytes: only the header is written again. */
            if (lg->cfg.cipher_port && ld_le32(b) != SF_BLOCK_MAGIC) {
                if ((err = lg->cfg.cipher_stage->seal_block(&lg->cipher, b, &bi)))
                    return sfl_fail(lg, err);
            }
            sf_block_seal(b, &bi);
        }
        uint8_t *first = blk_ptr(lg, lg->sub);
        if ((err = sfl_submit_buf(lg, first, n << lg->bshift, n, REQ_DATA,
                                  ld_le64(first + META_FIRST_TS))))
            return err;
        lg->sub = ctr_add(lg, lg->sub, n);
        lg->file_seq += n;
        lg->stats.records_written += records;
        runs++;
    }
    return runs;
}

/* ---- raw mode ----
 * Bytes are submitted as whole blocks fill (runs up to request_size, never across the ring's
 * end); a checkpoint, rotation or close also submits the whole sectors of a partly filled
 * block, so sub is always sector-aligned; the partial last sector stays in the ring and goes
 * out with the following bytes (docs/FORMAT.md: a checkpoint of a raw file covers whole
 * sectors only). */
static int raw_submit(struct sf_log *lg, int sectors)
{
    uint32_t ring = lg->nblk << lg->bshift;
    uint32_t ss = lg->v->bd->sector_size;
    uint32_t gran = sectors ? ss : lg->bsize;
    int runs = 0, err;
    uint32_t h = atomic_load_explicit(&lg->tail, memory_order_acquire);
    while (lg->req_count < qd(lg)) {
        uint32_t avail = ctr_dist(lg, h, lg->sub);
        uint32_t at = lg->sub >= ring ? lg->sub - ring : lg->sub;
        uint32_t n = avail < ring - at ? avail : ring - at;
        n = ((at + n) & ~(gran - 1)) > at ? ((at + n) & ~(gran - 1)) - at : 0;
        if (n > lg->req_blocks << lg->bshift)
            n = lg->req_blocks << lg->bshift;
        uint64_t room = (lg->file_limit - lg->file_bytes) & ~(uint64_t)(ss - 1);
        if (n && !room) {
            if ((err = sfl_rotate(lg, log_now(lg))))
                return err;
            continue;
        }
        if (n > room)
            n = (uint32_t)room;
        if (!n)
            break;
        if ((err = sfl_submit_buf(lg, lg->ring + at, n, n, REQ_DATA, 0)))
            return err;
        lg->sub = ctr_add(lg, lg->sub, n);
        lg->stats.bytes_in += n;
        runs++;
    }
    return runs;
}

/* Every whole sector the producer has written goes to the current file, waiting for the
 * device as needed (before a checkpoint, a rotation, close). */
static int raw_submit_whole(struct sf_log *lg)
{
    int err;
    while (ctr_dist(lg, atomic_load_explicit(&lg->tail, memory_order_acquire), lg->sub) >=
           lg->v->bd->sector_size) {
        if ((err = sfl_reap(lg, 1)) < 0 || (err = raw_submit(lg, 1)) < 0)
            return err;
    }
    return 0;
}

/* A rotation is due: asked for, or the file is split_ns old. */
static int rotate_due(const struct sf_log *lg, uint64_t now)
{
    return lg->rotate_req || (lg->cfg.split_ns && now - lg->file_start >= lg->cfg.split_ns);
}

/* A checkpoint is due (by time or bytes) and none is running. */
static SF_NOINLINE int ckpt_due(const struct sf_log *lg, uint64_t now)
{
    return (now >= lg->next_ckpt_ns ||
            (lg->cfg.checkpoint_bytes &&
             lg->stats.bytes_written - lg->ckpt_bytes_at >= lg->cfg.checkpoint_bytes)) &&
           !ckpt_running(lg);
}

static int do_checkpoint(struct sf_log *lg);

static int raw_service(struct sf_log *lg, uint64_t now)
{
    int did = 0, err;
    if ((err = sfl_reap(lg, 0)) < 0)
        return err;
    did += err;
    int rot = rotate_due(lg, now);
    int ckpt = ckpt_due(lg, now);
    if ((err = raw_submit(lg, rot || ckpt)) < 0)
        return err;
    did += err;
    if (rot) {
        if ((err = raw_submit_whole(lg)) < 0)  /* everything whole goes to this file */
            return err;
        lg->rotate_req = 0;
        if ((err = sfl_rotate(lg, now)))
            return err;
        return 1;
    }
    if (ckpt) {
        if ((err = raw_submit_whole(lg)) < 0 || (err = do_checkpoint(lg)))
            return err;
        did++;
    }
    return did;
}

/* ---- checkpoints and cuts ---- */

/* The first n append-to-durable samples became durable at `now`. */
void sfl_durable_samples(struct sf_log *lg, uint64_t now, uint32_t n)
{
    if (lg->cfg.clock) {
        for (uint32_t i = 0; i < n; i++)
            hist_add(&lg->h_dur, now > lg->dur_ts[i] ? now - lg->dur_ts[i] : 0);
    }
    memmove(lg->dur_ts, lg->dur_ts + n, (lg->dur_n - n) * sizeof lg->dur_ts[0]);
    lg->dur_n -= n;
    lg->dur_ck = 0;
}

/* A checkpoint of the current file completed: its size is durable, and so are the requests
 * that had completed when it started (those completing later are counted with the next one:
 * an upper bound on their latency). */
static void durable_update(struct sf_log *lg, const struct sf_stream *s, uint64_t now)
{
    uint64_t d = lg->durable_base + sf_stream_stats(s)->bytes_durable;
    if (d > lg->stats.bytes_durable) {
        lg->stats.bytes_durable = d;
        sfl_durable_samples(lg, now, lg->dur_ck);
    }
}

/* A checkpoint behind the data: the stream queues a FLUSH after the requests submitted so
 * far, writes the entry when it completes, then a second FLUSH, while the writer keeps the
 * device busy with the data that follows; sfl_reap sees it complete. Callers start one only
 * when none is running (ckpt_running), so that a checkpoint never cuts a block it could not
 * take. */
static int do_checkpoint(struct sf_log *lg)
{
    int err = sf_stream_checkpoint_start(&lg->st[lg->cur]);
    if (err)
        return sfl_fail(lg, err);
    lg->dur_ck = lg->dur_n;
    lg->next_ckpt_ns = log_now(lg) + lg->cfg.checkpoint_ns;
    lg->ckpt_bytes_at = lg->stats.bytes_written;
    return 0;
}

static void cut_start(struct sf_log *lg, enum log_cut kind)
{
    uint32_t next;
    sfl_ring_close_current(lg, &next);   /* ring full: the cut covers the closed blocks only */
    lg->cut = next;
    lg->cut_kind = (uint8_t)kind;
}

/* Blocks up to the cut that are taken: the limit for submission. */
static uint32_t cut_limit(const struct sf_log *lg)
{
    if (!lg->cut_kind)
        return lg->taken;
    uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    return ctr_dist(lg, lg->cut, rel) <= ctr_dist(lg, lg->taken, rel) ? lg->cut : lg->taken;
}

static int cut_finish(struct sf_log *lg, uint64_t now)
{
    int err = 0;
    enum log_cut kind = (enum log_cut)lg->cut_kind;
    lg->cut_kind = CUT_NONE;
    switch (kind) {
    case CUT_CKPT:
        err = do_checkpoint(lg);
        break;
    case CUT_ROTATE:
        lg->rotate_req = 0;
        err = sfl_rotate(lg, now);
        lg->next_ckpt_ns = now + lg->cfg.checkpoint_ns;
        break;
    case CUT_FR_END:
        err = sfl_end_file(lg);
        lg->fr_writing = 0;
        break;
    default:
        break;
    }
    return err;
}

/* Everything up to now goes to the current file: cut, then take and submit until the cut
 * is reached, waiting for the device when needed. For close: producers should be quiet (a
 * producer that never commits is given up on). */
static SF_NOINLINE int flush_for_close(struct sf_log *lg)
{
    int err;
    uint32_t spins = 0, next;
    /* Cut: closing the current block needs the next one free; the device gives blocks back. */
    for (;;) {
        if ((err = sfl_reap(lg, 0)) < 0)
            return err;
        sfl_ring_put_drops(lg);
        sfl_ring_take(lg);
        if ((err = sfl_submit_runs(lg, lg->taken, 1)) < 0)
            return err;
        if (sfl_ring_close_current(lg, &next) >= 0)
            break;
        if (lg->req_count) {
            if ((err = sfl_reap(lg, 1)) < 0)
                return err;
        } else if (++spins > CLOSE_SPINS) {
            break;                             /* cannot happen: nothing else holds blocks */
        }
    }
    lg->cut = next;
    lg->cut_kind = CUT_CLOSE;
    /* Every block before the cut: taken (once its producers committed) and submitted. */
    spins = 0;
    while (lg->sub != lg->cut) {
        int k = sfl_ring_take(lg);
        if ((err = sfl_submit_runs(lg, cut_limit(lg), 1)) < 0)
            return err;
        if (k || err)
            continue;
        if (lg->req_count) {
            if ((err = sfl_reap(lg, 1)) < 0)
                return err;
        } else if (++spins > CLOSE_SPINS) {
            lg->cut = lg->sub;                 /* a producer never committed: stop here */
        }
    }
    return sfl_drain(lg);
}

/* ---- service ---- */

static int framed_service(struct sf_log *lg, uint64_t now)
{
    int did = 0, err;
    if ((err = sfl_reap(lg, 0)) < 0)
        return err;
    did += err;
    did += sfl_ring_take(lg);
    did += sfl_ring_put_drops(lg);
    if (lg->fr && (err = sfl_fr_service(lg, now)) < 0)
        return err;
    if (!lg->cur_open)
        return did;                            /* flight recorder between triggers */
    if (!lg->cut_kind) {
        enum log_cut kind = CUT_NONE;
        if (lg->fr_writing && now >= lg->fr_end) {   /* trigger files need cfg.clock */
            kind = CUT_FR_END;
        } else if (rotate_due(lg, now)) {
            kind = CUT_ROTATE;
        } else if (ckpt_due(lg, now)) {
            if (lg->stats.bytes_written == lg->ckpt_bytes_at && lg->taken == lg->sub &&
                !sfl_ring_used_bytes(lg) && !lg->req_count)
                lg->next_ckpt_ns = now + lg->cfg.checkpoint_ns;   /* nothing new */
            else
                kind = CUT_CKPT;
        }
        if (kind) {
            cut_start(lg, kind);
            did += sfl_ring_take(lg);
        }
    }
    if ((err = sfl_submit_runs(lg, cut_limit(lg), lg->cut_kind != CUT_NONE)) < 0)
        return err;
    did += err;
    if (lg->cut_kind && lg->sub == lg->cut) {
        if ((err = cut_finish(lg, now)))
            return err;
        did++;
    }
    return did;
}

int sf_log_service(struct sf_log *lg)
{
    if (lg->stats.last_error)
        return lg->stats.last_error;
    uint64_t now = log_now(lg);
    int c = lg->ctl ? lg->ctl_ops->service(lg, now) : 0;
    if (c < 0)
        return c;
    int r = lg->flags & SF_LOG_RAW ? raw_service(lg, now) : framed_service(lg, now);
    if (r >= 0)
        r += c;
    uint64_t used = sfl_ring_used_bytes(lg);
    if (used > lg->stats.ring_high_water)
        lg->stats.ring_high_water = used;
    return r;
}

uint64_t sf_log_next_deadline_ns(const struct sf_log *lg)
{
    uint64_t now = log_now(lg), d = UINT64_MAX;
    if ((lg->taken != sfl_done_upto(lg) || (lg->pk && lg->pk_ready)) &&
        (lg->cur_open || !lg->fr))
        return 0;
    if (lg->cut_kind || lg->rotate_req)
        return 0;
    if (lg->cur_open) {
        uint64_t t = lg->next_ckpt_ns;
        if (lg->cfg.split_ns && lg->file_start + lg->cfg.split_ns < t)
            t = lg->file_start + lg->cfg.split_ns;
        if (lg->fr_writing && lg->fr_end < t)
            t = lg->fr_end;
        d = t > now ? t - now : 0;
        if (ckpt_running(lg) && d > CKPT_POLL_NS)
            d = CKPT_POLL_NS;                  /* come back to carry the checkpoint on */
    }
    return d;
}

int sf_log_rotate(struct sf_log *lg)
{
    if (lg->fr)
        return SF_EINVAL;                      /* trigger files end by themselves */
    lg->rotate_req = 1;
    return 0;
}

/* ---- open and close ---- */

/* After an error: the current file keeps what reached it, with the size the stream gives it. */
static void abandon_current(struct sf_log *lg)
{
    if (lg->cur_open) {
        sfl_drain(lg);
        sf_stream_close(&lg->st[lg->cur]);
        lg->cur_open = 0;
    }
    if (lg->cfg.cipher_stage)
        lg->cfg.cipher_stage->erase(&lg->cipher);
}

int sf_log_open(struct sf_log *lg, const struct sf_log_cfg *cfg)
{
    struct sf_vol_info vi;
    int err;
    memset(lg, 0, sizeof *lg);
    if (!cfg || !cfg->vol || !cfg->ring || !cfg->work)
        return SF_EINVAL;
    /* The defaults are filled in lg's own copy (a failed open leaves it half set: the log is
     * not open, nothing reads it). */
    struct sf_log_cfg *c = &lg->cfg;
    *c = *cfg;
    if ((err = sf_vol_info(c->vol, &vi)))
        return err;
    uint32_t ss = vi.sector_size;
    uint32_t align = c->vol->bd->mem_align > 8 ? c->vol->bd->mem_align : 8;
    uint32_t raw = c->flags & SF_LOG_RAW;
    if (!c->block_size)
        c->block_size = SF_BLOCK_DEFAULT;
    if ((c->block_size & (c->block_size - 1)) || c->block_size < SF_BLOCK_MIN ||
        c->block_size > SF_BLOCK_MAX || c->block_size < ss)
        return SF_EINVAL;                      /* a power of two, 512 .. 1 MiB */
    uint32_t bshift = (uint32_t)__builtin_ctz(c->block_size);
    /* Counters run modulo 2 * ring bytes (raw) or 2 * nblk (framed) in 32 bits. */
    if (c->ring_size > (raw ? 0x7FFFFFFFu : 0x80000000u))
        return SF_EINVAL;
    uint32_t ring = (uint32_t)c->ring_size, nblk = ring >> bshift;
    if (((uintptr_t)c->ring & (align - 1)) || ((uintptr_t)c->work & (align - 1)) ||
        (ring & (c->block_size - 1)) || nblk < 4 || c->work_size < (raw ? ss : c->block_size))
        return SF_EINVAL;
    lg->wrap = (raw ? ring : nblk) * 2u;
    if (!c->queue_depth)
        c->queue_depth = 4;
    if (c->queue_depth > SF_STREAM_MAX_QD)
        return SF_EINVAL;
    if (!c->request_size)
        c->request_size = DEFAULT_REQ;
    if (!c->checkpoint_ns)
        c->checkpoint_ns = DEFAULT_CKPT_NS;
    lg->fr = c->pre_bytes || c->pre_ns || c->post_ns;
    if (lg->fr && !SF_HAVE_LOG_TRIGGER)
        return SF_ENOTSUP;              /* the flight recorder is not built in */
    if (lg->fr && (raw || !c->clock))
        return SF_EINVAL;
    lg->v = c->vol;
    lg->ring = c->ring;
    lg->nblk = nblk;
    lg->bsize = c->block_size;
    lg->bshift = bshift;
    lg->payload = c->block_size - SF_BLOCK_HDR;
    /* Sealed files: every record block's payload also holds the nonce and tag. */
    uint32_t seal_room = c->cipher_port ? SF_CIPHER_OVERHEAD : 0;
    if (c->cipher_port && (raw || !c->cipher_pub || !c->cipher_stage))
        return SF_EINVAL;                      /* raw files have no blocks to seal */
    if (c->cipher_port && !c->cipher_aead)
        c->cipher_aead = SF_AEAD_XCHACHA20_POLY1305;
    lg->payload -= seal_room;
    lg->flags = c->flags;
    lg->req_blocks = c->request_size >> bshift;
    if (!lg->req_blocks)
        lg->req_blocks = 1;
    if (lg->req_blocks > nblk / 2)
        lg->req_blocks = nblk / 2;
    /* Files: rotate before split_bytes, and on FAT before 4 GiB; whole blocks (framed) or
     * sectors (raw). */
    uint64_t limit = c->split_bytes ? c->split_bytes : UINT64_MAX;
    lg->fs_fat = vi.fs_type != SF_FS_EXFAT;
    if (lg->fs_fat && limit > 0xFFFFFFFFull)
        limit = 0xFFFFFFFFull;
    limit &= ~(uint64_t)((raw ? ss : c->block_size) - 1);
    if (limit < 2 * c->block_size)
        limit = 2 * c->block_size;
    lg->file_limit = limit;
    /* Allocation step: large steps keep files contiguous; a small volume (and cyclic mode,
     * which needs the space back file by file) gets smaller ones. */
    uint64_t sixteenth = vi.volume_size / 16;
    uint32_t step = sixteenth > (64u << 20) ? 64u << 20 : (uint32_t)sixteenth;
    if (step < (1u << 20))
        step = 1u << 20;
    if (step < lg->req_blocks << bshift)
        step = lg->req_blocks << bshift;    /* <= ring / 2 < 2^31 */
    lg->step = step;
    lg->stats.ring_size = ring;
    if (c->packer && (err = c->packer->open(lg, align)))
        return err;
    if (!raw) {
        for (uint32_t i = 0; i < nblk; i++) {
            uint8_t *b = lg->ring + ((size_t)i << bshift);
            atomic_init(blk_committed(b), 0);
            atomic_init(blk_closed(b), 0);
        }
    }
    atomic_init(&lg->tail, 0);
    atomic_init(&lg->rel, 0);
    atomic_init(&lg->drops, 0);
    atomic_init(&lg->drop_lock, 0);
    /* Channel names and META strings: each fits in the header block (rotate.c). */
    if (c->channel_count > SF_LOG_CHANNELS)
        return SF_EINVAL;
    for (uint32_t i = 0; i < SF_LOG_CHANNELS; i++)
        atomic_init(&lg->chan_name[i], NULL);
    for (uint32_t i = 0; i < c->channel_count + c->meta_count; i++) {
        const char *t = i < c->channel_count ? c->channel_names[i] :
                        c->meta[i - c->channel_count];
        uint32_t n = 0;
        while (t && t[n] && n <= c->block_size - 96 - seal_room)
            n++;
        if (n > c->block_size - 96 - seal_room)
            return SF_EINVAL;
        if (t && i < c->channel_count)
            atomic_init(&lg->chan_name[i], t);
    }
    if ((err = sfl_first_index(lg, &lg->file_index)))
        return err;
    lg->oldest_index = lg->file_index + 1;
    uint64_t now = log_now(lg);
    err = lg->fr ? sfl_prepare_next(lg) : sfl_start_file(lg, now);
    if (err) {
        sfl_discard_next(lg);
        abandon_current(lg);                   /* no request in flight: nothing to drain */
        return err;
    }
    lg->next_ckpt_ns = now + c->checkpoint_ns;
    return 0;
}

int sf_log_close(struct sf_log *lg)
{
    int err = lg->stats.last_error, e;
    if (!err && lg->ctl) {
        /* the control stage's last stops and triggers (raised since the last service) */
        if ((e = lg->ctl_ops->service(lg, log_now(lg))) < 0)
            err = e;
    }
    lg->closing = 1;
    if (!err && lg->cur_open) {
        if (lg->flags & SF_LOG_RAW) {
            /* Every whole sector in the ring goes out through the normal path (so size
             * limits and rotation hold), as many requests as it takes. */
            if ((err = raw_submit(lg, 1)) >= 0 && (err = raw_submit_whole(lg)) >= 0)
                err = sfl_drain(lg);
            if (err >= 0) {
                /* The last partial sector: through the stream's own buffer. */
                uint32_t ring = lg->nblk << lg->bshift;
                uint32_t h = atomic_load_explicit(&lg->tail, memory_order_acquire);
                uint32_t left = ctr_dist(lg, h, lg->sub);
                uint32_t at = lg->sub >= ring ? lg->sub - ring : lg->sub;
                if (left) {
                    sf_ssize_t w = sf_stream_write(&lg->st[lg->cur], lg->ring + at, left);
                    err = w < 0 ? sfl_fail(lg, (int)w) : 0;
                    lg->stats.bytes_in += left;
                    lg->stats.bytes_written += left;
                    lg->file_bytes += left;
                    lg->sub = h;
                }
            }
        } else {
            /* Again while drops were counted meanwhile, so the file accounts for them. */
            for (int i = 0; i < 4 && !err; i++) {
                err = flush_for_close(lg);
                lg->cut_kind = CUT_NONE;
                if (atomic_load_explicit(&lg->drops, memory_order_relaxed) == lg->drops_seen)
                    break;
            }
        }
        e = sfl_end_file(lg);
        if (!err)
            err = e;
    } else {
        abandon_current(lg);
    }
    if (lg->fr && !lg->fr_writing)
        sfl_fr_release_all(lg);
    e = sfl_discard_next(lg);
    if (!err)
        err = e;
    return err;
}

/* ---- statistics ---- */

void sf_log_get_stats(const struct sf_log *lg, struct sf_log_stats *st)
{
    *st = lg->stats;
    uint32_t pending = atomic_load_explicit(&lg->drops, memory_order_relaxed) - lg->drops_seen;
    st->records_dropped = lg->drops_total + pending;
    /* lg->stats counts every record taken and submitted, the writer's own included: the
     * public counters leave those out (records_own), and records_in counts what producers
     * offered, dropped ones too (log.h). A record of the writer's not yet taken makes the
     * difference too small for a moment, hence the floor at 0; exact after close. */
    if (!(lg->flags & SF_LOG_RAW)) {
        uint64_t own = lg->stats.records_own;
        st->records_in = (st->records_in > own ? st->records_in - own : 0) + st->records_dropped;
        st->records_written = st->records_written > own ? st->records_written - own : 0;
    }
    if (lg->ctl)
        lg->ctl_ops->stats(lg, st);
    st->ring_used = sfl_ring_used_bytes(lg);
    if (st->ring_used > st->ring_high_water)
        st->ring_high_water = st->ring_used;
    if (lg->flags & SF_LOG_RAW) {
        uint32_t h = atomic_load_explicit(&lg->tail, memory_order_relaxed);
        st->bytes_in += ctr_dist(lg, h, lg->sub);   /* accepted, not yet submitted */
    }
}

void sf_log_get_hist(const struct sf_log *lg, struct sf_hist *append, struct sf_hist *device,
                     struct sf_hist *durable)
{
    if (append) {
        memset(append, 0, sizeof *append);
        for (uint32_t k = 0; k < SF_HIST_BUCKETS; k++) {
            append->bucket[k] = atomic_load_explicit(&lg->app_hist[k], memory_order_relaxed);
            append->count += append->bucket[k];
        }
        append->max_ns = atomic_load_explicit(&lg->app_max, memory_order_relaxed);
    }
    if (device)
        *device = lg->h_dev;
    if (durable)
        *durable = lg->h_dur;
}

uint64_t sf_hist_percentile(const struct sf_hist *h, double p)
{
    if (!h->count)
        return 0;
    if (p > 1.0)
        p /= 100.0;                            /* accept 99.9 as well as 0.999 */
    uint64_t want = (uint64_t)(p * (double)h->count);
    if ((double)want < p * (double)h->count)
        want++;
    if (!want)
        want = 1;
    uint64_t seen = 0;
    for (uint32_t k = 0; k < SF_HIST_BUCKETS; k++) {
        seen += h->bucket[k];
        if (seen >= want) {
            uint64_t upper = k + 1 < 64 ? 1ull << (k + 1) : UINT64_MAX;
            return upper < h->max_ns ? upper : h->max_ns;
        }
    }
    return h->max_ns;
}
