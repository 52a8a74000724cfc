/* The tiny logger's writer: open, the service step, checkpoints, rotation by size, close
 * (include/streamfat/tiny.h; the ring is tiny_ring.c, the FAT tiny_fat.c and tiny_dir.c).
 *
 * A file is LOG<index>.SFL (docs/FORMAT.md): its header block (the file header, CHANNEL and
 * META records; built a sector at a time in the volume's sector buffer), then the ring's
 * blocks, each sealed (seq, file id, CRC) just before its write. The file grows in runs of
 * contiguous clusters, one FAT sector each (tiny_alloc), allocated before any data goes into
 * them; a block goes out in one device write per contiguous piece.
 *
 * Write order, the full logger's (src/stream/stream.c), and what a power cut leaves:
 *   1. the entry is created empty (first cluster 0, size 0);
 *   2. a run is chained and ended in every FAT copy, then linked to the file's chain;
 *   3. blocks are written into allocated clusters only; the header block first, and a
 *      checkpoint right after it (step 4), before any record block: from then on the entry
 *      names the first cluster, so a cut before the next checkpoint leaves a file that
 *      repair can find and extend, never an empty entry over leaked blocks (issue 26);
 *   4. a checkpoint: the block being filled is cut (written as it is), a device flush (data
 *      and FAT durable), the entry rewritten with the first cluster and the size, a flush;
 *   5. closing a file (rotation, close): the clusters allocated past its last byte are freed
 *      (the last used one ended first), then a checkpoint.
 * A cut anywhere leaves the size of the last completed checkpoint over valid blocks; clusters
 * allocated after it are leaked until `streamfat fsck --repair` reclaims them, and the
 * blocks written after it are attached by that repair (docs/RELIABILITY.md). */
#include "tiny_int.h"

#define DEFAULT_BLOCK 4096u
#define DEFAULT_CKPT_NS 1000000000ull
#define MAX_INDEX 99999u                 /* LOGnnnnn.SFL: five digits in an 8.3 name */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t now(const struct sf_tiny_log *lg)
{
    return lg->cfg.clock ? lg->cfg.clock(lg->cfg.clock_ctx) : 0;
}

static int fail(struct sf_tiny_log *lg, int err)
{
    if (!lg->err)
        lg->err = err;
    return lg->err;
}

/* A channel's name for its CHANNEL record: the caller's, else can<N> (docs/FORMAT.md: a
 * file names every channel it uses; a reader calls an unnamed channel can<N> too). buf has
 * room for "can255". Returns the name and its length in *len. */
static const char *chan_name(const struct sf_tiny_log_cfg *c, uint32_t i, char *buf,
                             uint32_t *len);

static uint32_t slen(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* Block header fields (docs/FORMAT.md) and the CRC over them and the used payload; the
 * payload (used, count, first_ts at 32, 36, 24) is already there. */
static void seal(const struct sf_tiny_log *lg, uint8_t *b, uint16_t kind)
{
    st_le32(b, SF_BLOCK_MAGIC);
    st_le16(b + 4, SF_REC_VERSION);
    st_le16(b + 6, kind);
    st_le64(b + 8, lg->file_id);
    st_le64(b + 16, lg->seq);
    st_le32(b + 40, lg->bsize);
    st_le32(b + 44, sf_crc32c(sf_crc32c(0, b, 44), b + SF_BLOCK_HDR, ld_le32(b + 32)));
}

/* ---- the file's clusters ---- */

/* Where the next byte goes: its sector (*lba) and how many bytes from there are contiguous
 * and allocated (*n, at most want), allocating a run when the allocation ends here. */
static int map(struct sf_tiny_log *lg, uint32_t want, uint32_t *lba, uint32_t *n)
{
    struct sf_tiny_vol *v = lg->v;
    uint32_t cb = v->cl_shift + v->ss_shift, csize = 1u << cb;
    int err;
    if (!lg->clus || (lg->clus_off == csize && lg->clus + 1 == lg->run_end)) {
        /* As many clusters as the file can still take, up to a FAT sector's run. */
        uint32_t left = lg->cfg.split_bytes - lg->size, first, k;
        uint32_t want_cl = (left >> cb) + ((left & (csize - 1)) != 0);   /* no overflow */
        if ((err = tiny_alloc(v, lg->clus, want_cl, &first, &k)))
            return err;
        if (!lg->first_clus)
            lg->first_clus = first;
        lg->clus = first;
        lg->clus_off = 0;
        lg->run_end = first + k;
    } else if (lg->clus_off == csize) {
        lg->clus++;
        lg->clus_off = 0;
    }
    *lba = tiny_clus_lba(v, lg->clus) + (lg->clus_off >> v->ss_shift);
    *n = ((lg->run_end - lg->clus) << cb) - lg->clus_off;
    if (*n > want)
        *n = want;
    return 0;
}

/* n bytes (whole sectors, n > 0) were written at the mapped place. */
static void advance(struct sf_tiny_log *lg, uint32_t n)
{
    uint32_t cb = lg->v->cl_shift + lg->v->ss_shift, total = lg->clus_off + n;
    uint32_t k = (total - 1) >> cb;          /* the last cluster written stays current */
    lg->clus += k;
    lg->clus_off = total - (k << cb);
    lg->size += n;
    lg->st.bytes_written += n;
}

/* Write `len` bytes (whole sectors) at the end of the file. */
static int put(struct sf_tiny_log *lg, const uint8_t *p, uint32_t len)
{
    struct sf_tiny_vol *v = lg->v;
    while (len) {
        uint32_t lba, n;
        int err = map(lg, len, &lba, &n);
        if (!err)
            err = sf_bdev_write(v->bd, v->base + lba, p, n >> v->ss_shift);
        if (err)
            return err;
        advance(lg, n);
        p += n;
        len -= n;
    }
    return 0;
}

/* ---- files ---- */

static int checkpoint(struct sf_tiny_log *lg)
{
    struct sf_tiny_vol *v = lg->v;
    int err;
    if (lg->size == lg->ckpt_size)
        return 0;
    if ((err = sf_bdev_flush(v->bd)) || (err = tiny_dir_update(lg, lg->first_clus, lg->size)) ||
        (err = sf_bdev_flush(v->bd)))
        return err;
    lg->st.bytes_durable += lg->size - lg->ckpt_size;
    lg->ckpt_size = lg->size;
    return 0;
}

/* The file ends here: free what was allocated past its last byte, then a checkpoint. */
static int end_file(struct sf_tiny_log *lg)
{
    int err;
    if (lg->clus && lg->clus + 1 < lg->run_end) {
        uint32_t rest = lg->run_end - lg->clus - 1;
        if ((err = tiny_fat_set(lg->v, lg->clus, 1, TINY_EOC, 1)) ||
            (err = tiny_fat_set(lg->v, lg->clus + 1, rest, 0, 0)))
            return err;
        lg->run_end = lg->clus + 1;
    }
    if ((err = checkpoint(lg)))
        return err;
    lg->open = 0;
    return 0;
}

/* Create the next file and write its header block (block 0, kind 1: the file header, then
 * a CHANNEL record per named channel and a META record per string; open checked they fit
 * in the first sector), a sector at a time in the sector buffer. */
static int start_file(struct sf_tiny_log *lg)
{
    struct sf_tiny_vol *v = lg->v;
    /* The header's start time is wall-clock time or 0, "no wall clock" (docs/FORMAT.md):
     * the clock's time only when it is the realtime clock, never an uptime. */
    uint64_t ts = lg->cfg.clock_kind == SF_CLOCK_REALTIME ? now(lg) : 0;
    int err;
    if (lg->index >= MAX_INDEX)
        return SF_ENOSPC;
    lg->index++;
    lg->file_id = splitmix64(lg->cfg.session_id + lg->index);
    lg->seq = 0;
    lg->size = lg->ckpt_size = 0;
    lg->first_clus = lg->clus = lg->run_end = lg->clus_off = 0;
    if ((err = tiny_dir_create(lg, lg->index)))
        return err;
    lg->open = 1;
    lg->st.files++;
    for (uint32_t done = 0; done < lg->bsize; done += v->ss) {
        uint32_t lba, n;
        if ((err = map(lg, v->ss, &lba, &n)))
            return err;
        memset(v->buf, 0, v->ss);
        if (!done) {
            struct sf_file_header fh = { .start_ts = ts, .clock = lg->cfg.clock_kind,
                                         .file_index = lg->index,
                                         .session_id = lg->cfg.session_id };
            uint8_t *pl = v->buf + SF_BLOCK_HDR;
            uint32_t used = SF_FILE_HDR, count = 0;
            sf_file_header_put(pl, &fh);
            for (uint32_t i = 0; i < lg->cfg.channel_count + lg->cfg.meta_count; i++) {
                int chan = i < lg->cfg.channel_count;
                char dflt[8];
                uint32_t n32 = 0;
                const char *s = chan ? chan_name(&lg->cfg, i, dflt, &n32)
                                     : lg->cfg.meta[i - lg->cfg.channel_count];
                if (!s)
                    continue;
                uint16_t len = (uint16_t)(chan ? n32 : slen(s));
                sf_rec_put(pl + used, chan ? SF_REC_CHANNEL : SF_REC_META,
                           (uint8_t)(chan ? i : 0), 0, ts, s, len);
                used += sf_rec_size(len);
                count++;
            }
            st_le64(v->buf + 24, ts);          /* first_ts = start_ts */
            st_le32(v->buf + 32, used);
            st_le32(v->buf + 36, count);
            seal(lg, v->buf, SF_BLOCK_FILE_HEADER);
        }
        if ((err = sf_bdev_write(v->bd, v->base + lba, v->buf, 1)))
            return err;
        advance(lg, v->ss);
    }
    lg->seq = 1;
    return checkpoint(lg);      /* the first cluster in the entry before any record block */
}

/* ---- the ring's blocks ---- */

/* Write the ring's complete blocks (rotating when one would pass the size limit): 1 when
 * some were written, 0 when none waited, or an error. */
static int write_blocks(struct sf_tiny_log *lg)
{
    int did = 0, err;
    for (;;) {
        uint32_t t = atomic_load_explicit(&lg->tail, memory_order_relaxed);
        uint32_t p = atomic_load_explicit(&lg->pos, memory_order_acquire), h = p >> 18;
        if (t == h) {
            if (!(p & (1u << 17)))
                return did;
            /* The block being filled was cut (CLOSED): move the producer on. */
            atomic_compare_exchange_strong_explicit(&lg->pos, &p, ((h + 1) & 0x3FFFu) << 18,
                                                    memory_order_acq_rel,
                                                    memory_order_relaxed);
            continue;
        }
        uint8_t *b = lg->ring + (size_t)(t & (lg->nblocks - 1)) * lg->bsize;
        uint32_t used = ld_le32(b + 32);
        if (lg->size + lg->bsize > lg->cfg.split_bytes &&
            ((err = end_file(lg)) || (err = start_file(lg))))
            return err;
        memset(b + SF_BLOCK_HDR + used, 0, lg->bsize - SF_BLOCK_HDR - used);
        seal(lg, b, SF_BLOCK_RECORDS);
        if ((err = put(lg, b, lg->bsize)))
            return err;
        lg->seq++;
        lg->st.records_written += ld_le32(b + 36);
        atomic_store_explicit(&lg->tail, (t + 1) & 0x3FFFu, memory_order_release);
        did = 1;
        if (lg->cfg.checkpoint_bytes && lg->size - lg->ckpt_size >= lg->cfg.checkpoint_bytes &&
            (err = checkpoint(lg)))
            return err;
    }
}

int sf_tiny_log_service(struct sf_tiny_log *lg)
{
    int err, did;
    if (lg->err)
        return lg->err;
    uint32_t p = atomic_load_explicit(&lg->pos, memory_order_relaxed);
    uint32_t inuse = (((p >> 18) - atomic_load_explicit(&lg->tail, memory_order_relaxed)) &
                      0x3FFFu) + 1;
    if (inuse * lg->bsize > lg->st.ring_high_water)
        lg->st.ring_high_water = inuse * lg->bsize;
    uint64_t t = lg->cfg.clock ? now(lg) : 0;
    int due = lg->cfg.clock && t >= lg->next_ckpt;
    if (due)
        tiny_ring_cut(lg);
    if ((did = write_blocks(lg)) < 0)
        return fail(lg, did);
    if (due) {
        lg->next_ckpt = t + lg->cfg.checkpoint_ns;
        if ((err = checkpoint(lg)))
            return fail(lg, err);
        did = 1;
    }
    return did;
}

int sf_tiny_log_open(struct sf_tiny_log *lg, const struct sf_tiny_log_cfg *cfg)
{
    struct sf_tiny_vol *v = cfg->vol;
    uint32_t b = cfg->block_size ? cfg->block_size : DEFAULT_BLOCK, hdr = SF_FILE_HDR;
    uint32_t n = b ? cfg->ring_size / b : 0, highest;
    int err;
    memset(lg, 0, sizeof *lg);
    if (!v || !cfg->ring || (b & (b - 1)) || b < v->ss || b > 32768u || n * b != cfg->ring_size ||
        n < 2 || n > 8192u || (n & (n - 1)))
        return SF_EINVAL;
    if (cfg->channel_count > 256)
        return SF_EINVAL;
    for (uint32_t i = 0; i < cfg->channel_count + cfg->meta_count; i++) {
        char dflt[8];
        uint32_t nl = 0;
        const char *s = i < cfg->channel_count ? chan_name(cfg, i, dflt, &nl)
                                               : cfg->meta[i - cfg->channel_count];
        if (s && i >= cfg->channel_count)
            nl = slen(s);
        if (s && i < cfg->channel_count && !sf_rec_name_ok((const uint8_t *)s, nl))
            return SF_EINVAL;                  /* a name readers would not take */
        if (s && (hdr += sf_rec_size(nl & 0xFFFFu)) > v->ss - SF_BLOCK_HDR)
            return SF_EINVAL;                  /* the header must fit its first sector */
    }
    lg->cfg = *cfg;
    lg->cfg.block_size = b;
    if (!lg->cfg.checkpoint_ns)
        lg->cfg.checkpoint_ns = DEFAULT_CKPT_NS;
    /* The largest file: split_bytes (FAT: under 4 GiB) rounded down to whole blocks. */
    lg->cfg.split_bytes = (cfg->split_bytes ? cfg->split_bytes : 0xFFFFFFFFu) & ~(b - 1);
    if (lg->cfg.split_bytes < 2 * b)
        return SF_EINVAL;
    lg->v = v;
    lg->ring = cfg->ring;
    lg->bsize = b;
    lg->nblocks = n;
    atomic_init(&lg->pos, 0);
    atomic_init(&lg->tail, 0);
    atomic_init(&lg->dropped, 0);
    if ((err = tiny_dir_open(lg, cfg->dir, &highest)))
        return err;
    lg->index = highest;
    lg->next_ckpt = now(lg) + lg->cfg.checkpoint_ns;
    if ((err = start_file(lg)))
        return fail(lg, err);
    return 0;
}

int sf_tiny_log_close(struct sf_tiny_log *lg)
{
    int err;
    if (!lg->err && lg->open) {
        if ((err = write_blocks(lg)) >= 0) {
            tiny_ring_flush_drops(lg);
            tiny_ring_cut(lg);
            if ((err = write_blocks(lg)) >= 0)
                err = end_file(lg);
        }
        if (err < 0)
            fail(lg, err);
    }
    lg->open = 0;
    return lg->err;
}

void sf_tiny_log_get_stats(const struct sf_tiny_log *lg, struct sf_tiny_log_stats *st)
{
    *st = lg->st;
    st->records_dropped = atomic_load_explicit(&lg->dropped, memory_order_relaxed);
}

static const char *chan_name(const struct sf_tiny_log_cfg *c, uint32_t i, char *buf,
                             uint32_t *len)
{
    const char *s = c->channel_names ? c->channel_names[i] : NULL;
    uint32_t n = 3;

    if (s) {
        *len = slen(s);
        return s;
    }
    buf[0] = 'c', buf[1] = 'a', buf[2] = 'n';
    if (i >= 100)
        buf[n++] = (char)('0' + i / 100);
    if (i >= 10)
        buf[n++] = (char)('0' + i / 10 % 10);
    buf[n++] = (char)('0' + i % 10);
    *len = n;
    return buf;
}
