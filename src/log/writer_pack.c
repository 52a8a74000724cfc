/* The writer with compression on (cfg.pack_mem; docs/FORMAT.md "Compressed record blocks"):
 * sfl_submit_runs hands over to pack_runs (through cfg.packer = &sf_log_packer), which packs the taken ring blocks' records into
 * output blocks (src/log/block_pack.c) and submits those.
 *
 * Why output blocks of their own: a packed block holds the records of several ring blocks,
 * and the last ring block it takes from is usually split with the next packed block, so
 * packing in place would overwrite records not yet packed. The ring blocks go back to the
 * producers as soon as every packed block that refers to them is finished (their records
 * are then in output blocks), before the device has them; output blocks go back when their
 * request completes (sfl_reap, REQ_PACKED). A packed block is finished when it is full, at a
 * cut (checkpoint, rotation, close: force), when its ring blocks hold half the ring, or when
 * the ring wraps under it; so what a checkpoint covers is exactly as without compression. */
#include "log_impl.h"

#include "streamfat/block_pack.h"

static uint8_t *out_blk(const struct sf_log *lg, uint32_t i)
{
    if (i >= lg->pk_nout)
        i -= lg->pk_nout;
    return lg->pk_out + ((size_t)i << lg->bshift);
}

static int pack_open(struct sf_log *lg, uint32_t align)
{
    const struct sf_log_cfg *c = &lg->cfg;
    uintptr_t at = (uintptr_t)c->pack_mem, end = at + c->pack_mem_size;
    uintptr_t out = (at + SF_LOG_PACK_ENC + align - 1) & ~(uintptr_t)(align - 1);

    if ((lg->flags & SF_LOG_RAW) || lg->fr || (at & 7u) || out > end ||
        sizeof(struct sf_pack) > SF_LOG_PACK_ENC)
        return SF_EINVAL;
    lg->pk = c->pack_mem;
    lg->pk_out = (uint8_t *)out;
    lg->pk_nout = (uint32_t)((end - out) >> lg->bshift);
    if (lg->pk_nout < 2)
        return SF_EINVAL;
    return 0;
}

/* Give back the ring blocks whose records are all in finished packed blocks. */
static void release_inputs(struct sf_log *lg)
{
    uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    uint32_t n = ctr_dist(lg, lg->pk_cur ? lg->pk_hold : lg->pk_in, rel);
    if (n)
        sfl_ring_release(lg, n);
}

static uint8_t *cur_blk(const struct sf_log *lg)
{
    return out_blk(lg, lg->pk_head + lg->pk_n - 1);
}

/* The block being filled is done: note its header fields where sealing finds them (kind at
 * 6, as the sealed header has it). An empty one is given back. */
static void finish_cur(struct sf_log *lg)
{
    uint8_t *b = cur_blk(lg);
    uint32_t n = sf_pack_finish(lg->pk);

    lg->pk_cur = 0;
    if (!n) {
        lg->pk_n--;
    } else {
        st_le32(b, 0);               /* not sealed yet (pack_runs' guard): a reused block */
        st_le16(b + 6, SF_BLOCK_PACKED);
        st_le64(b + META_FIRST_TS, lg->pk->first_ts);
        st_le32(b + META_USED, n);
        st_le32(b + META_COUNT, lg->pk->count);
        lg->pk_ready++;
    }
    release_inputs(lg);
}

/* A record too large for an empty packed block (a body near B - 64 bytes): it goes alone
 * into a plain record block, the output block being filled. */
static void plain_one(struct sf_log *lg, const uint8_t *rec)
{
    uint8_t *b = cur_blk(lg);
    uint32_t size = sf_rec_size(ld_le16(rec + 2));

    memcpy(b + SF_BLOCK_HDR, rec, size);
    st_le32(b, 0);
    st_le16(b + 6, SF_BLOCK_RECORDS);
    st_le64(b + META_FIRST_TS, ld_le64(rec + 8));
    st_le32(b + META_USED, size);
    st_le32(b + META_COUNT, 1);
    lg->pk_cur = 0;
    lg->pk_ready++;
    lg->pk_off += size;
}

/* Pack the taken ring blocks up to `limit` as far as output blocks are free. */
static int pack(struct sf_log *lg, uint32_t limit, int force)
{
    while (lg->pk_in != limit) {
        uint8_t *b = blk_ptr(lg, lg->pk_in);
        uint32_t used = ld_le32(b + META_USED), took;
        if (lg->pk_cur && ctr_index(lg, lg->pk_in) == 0 && lg->pk_hold != lg->pk_in &&
            ctr_index(lg, lg->pk_hold) != 0)
            finish_cur(lg);          /* the ring wraps: a packed block refers to one arc */
        if (!lg->pk_cur) {
            if (lg->pk_n == lg->pk_nout)
                break;               /* every output block in use: after the next reap */
            sf_pack_begin(lg->pk, out_blk(lg, lg->pk_head + lg->pk_n) + SF_BLOCK_HDR,
                          lg->payload, sf_pack_raw_max(lg->bsize));
            lg->pk_n++;
            lg->pk_cur = 1;
            lg->pk_hold = lg->pk_in;
        }
        int r = sf_pack_add(lg->pk, b + SF_BLOCK_HDR + lg->pk_off, used - lg->pk_off, &took);
        lg->pk_off += took;
        if (r < 0)
            return sfl_fail(lg, SF_EIO);         /* cannot happen: the records are ours */
        if (r && !lg->pk->count)
            plain_one(lg, b + SF_BLOCK_HDR + lg->pk_off);
        else if (r)
            finish_cur(lg);
        if (lg->pk_off == used) {
            lg->pk_in = ctr_add(lg, lg->pk_in, 1);
            lg->pk_off = 0;
        }
    }
    if (lg->pk_cur) {
        uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
        if (force || ctr_dist(lg, lg->taken, rel) >= lg->nblk / 2)
            finish_cur(lg);
    }
    release_inputs(lg);
    return 0;
}

static int pack_runs(struct sf_log *lg, uint32_t limit, int force)
{
    int runs = 0, err;

    if ((err = pack(lg, limit, force)))
        return err;
    while (lg->pk_ready && lg->req_count < lg->cfg.queue_depth) {
        uint32_t fly = lg->pk_n - lg->pk_ready - lg->pk_cur;
        uint32_t idx = lg->pk_head + fly;
        if (idx >= lg->pk_nout)
            idx -= lg->pk_nout;
        uint32_t n = lg->pk_ready;
        if (n > lg->pk_nout - idx)
            n = lg->pk_nout - idx;               /* a request never wraps the output blocks */
        if (n > lg->req_blocks)
            n = lg->req_blocks;
        uint64_t room = lg->file_bytes < lg->file_limit ?
                        (lg->file_limit - lg->file_bytes) >> lg->bshift : 0;
        if (!room && lg->file_seq == lg->head_blocks)
            room = 1;
        if (!room) {
            if ((err = sfl_rotate(lg, log_now(lg))))
                return err;
            continue;
        }
        if (n > room)
            n = (uint32_t)room;
        uint32_t want = lg->req_blocks < lg->pk_nout / 2 ? lg->req_blocks : lg->pk_nout / 2;
        if (!force && n == lg->pk_ready && n < want && lg->req_count)
            break;
        uint32_t records = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint8_t *b = out_blk(lg, idx + i);
            struct sf_block_info bi = {
                .kind = ld_le16(b + 6) == SF_BLOCK_PACKED ? SF_BLOCK_PACKED : SF_BLOCK_RECORDS,
                .file_id = lg->file_id, .seq = lg->file_seq + i,
                .first_ts = ld_le64(b + META_FIRST_TS), .used = ld_le32(b + META_USED),
                .count = ld_le32(b + META_COUNT), .block_size = lg->bsize,
            };
            records += bi.count;
            /* Sealed files: packed first, then the cipher stage on the stored payload (its
             * AD holds the final kind and `used`: pack_begin was given lg->payload, already
             * short of the nonce and tag), then the header and CRC. A block sealed before
             * (the magic at 0, which finish_cur and plain_one clear) keeps its bytes. */
            if (lg->cfg.cipher_port && ld_le32(b) != SF_BLOCK_MAGIC) {
                if ((err = lg->cfg.cipher_stage->seal_block(&lg->cipher, b, &bi)))
                    return sfl_fail(lg, err);
            }
            sf_block_seal(b, &bi);
        }
        uint8_t *first = out_blk(lg, idx);
        if ((err = sfl_submit_buf(lg, first, n << lg->bshift, n, REQ_PACKED,
                                  ld_le64(first + META_FIRST_TS))))
            return err;
        lg->pk_ready -= n;
        lg->file_seq += n;
        lg->stats.records_written += records;
        runs++;
    }
    if (!lg->pk_ready && !lg->pk_cur && !lg->pk_off)
        lg->sub = lg->pk_in;
    return runs;
}

/* A packed request completed: its output blocks are free again. */
static void pack_done(struct sf_log *lg, uint32_t n)
{
    lg->pk_head += n;
    if (lg->pk_head >= lg->pk_nout)
        lg->pk_head -= lg->pk_nout;
    lg->pk_n -= n;
}

const struct sfl_pack_ops sf_log_packer = { pack_open, pack_runs, pack_done };
