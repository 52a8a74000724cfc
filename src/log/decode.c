/* The streaming log decoder (include/streamfat/decode.h): blocks are checked one by one as
 * the bytes arrive, and every departure from docs/FORMAT.md becomes an event.
 *
 * States: SEARCH and CAND while the block size is unknown (at every 512-byte boundary, peek
 * at a header; CAND waits for the whole candidate block and checks it), BLOCK once it is known
 * (wait for B bytes, check), RECORDS while handing out a valid block's records, DONE after the
 * end. The bytes not yet decoded are buf[pos .. fill); a step needs `want` of them. Each step
 * queues at most three events (a finished run, a gap, the header), handed out before the next
 * step runs. */
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"

#include <string.h>
#include "util/div64.h"

enum { ST_SEARCH, ST_CAND, ST_BLOCK, ST_RECORDS, ST_DONE };

#define SECTOR 512u   /* blocks start on multiples of their size, itself >= 512 */

int sf_dec_init(struct sf_dec *d, void *buf, size_t cap)
{
    if (!buf || cap < SF_BLOCK_MIN)
        return SF_EINVAL;
    memset(d, 0, sizeof *d);
    d->buf = buf;
    d->cap = cap < SF_BLOCK_MAX ? cap : SF_BLOCK_MAX;
    d->state = ST_SEARCH;
    d->want = SECTOR;
    return 0;
}

int sf_dec_set_unpack(struct sf_dec *d, void *buf, size_t cap)
{
    if (!buf || cap < SF_UNPACK_MEM || ((uintptr_t)buf & 7u))
        return SF_EINVAL;
    d->ubuf = buf;
    d->ucap = cap;
    return 0;
}

const struct sf_dec_stats *sf_dec_stats(const struct sf_dec *d)
{
    return &d->stats;
}

const char *sf_dec_reason_str(int reason)
{
    switch (reason) {
    case SF_DEC_BAD_HEADER: return "no block header";
    case SF_DEC_BAD_SIZE:   return "wrong block size";
    case SF_DEC_BAD_FIELD:  return "header field out of range";
    case SF_DEC_BAD_CRC:    return "CRC mismatch";
    case SF_DEC_BAD_RECORD: return "malformed records";
    case SF_DEC_UNWRITTEN:  return "unwritten (all zeros)";
    case SF_DEC_TRUNCATED:  return "file ends inside the block";
    case SF_DEC_TOO_BIG:    return "block size larger than the decoder's buffer";
    case SF_DEC_NO_BLOCK:   return "no valid block";
    case SF_DEC_MISPLACED:  return "kind does not match its place";
    case SF_DEC_OUT_OF_SEQ: return "out of sequence (seq is not its block number)";
    case SF_DEC_DIRTY_TAIL: return "non-zero bytes after the used payload";
    case SF_DEC_UNAUTHENTIC: return "sealed block does not open (altered, cut, moved or "
                                    "from another file)";
    default:                return "damaged";
    }
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Why a block of b bytes (b = the file's block size) fails sf_block_check. */
static int classify(const uint8_t *p, uint32_t b)
{
    uint32_t size;

    if (all_zero(p, b))
        return SF_DEC_UNWRITTEN;
    if (sf_block_peek_size(p, &size))
        return SF_DEC_BAD_HEADER;
    if (size != b)
        return SF_DEC_BAD_SIZE;
    {
        /* Same field checks as sf_block_check: kind (u16 at 6), used (u32 at 32). */
        uint32_t kind = (uint32_t)p[6] | (uint32_t)p[7] << 8;
        uint32_t used = (uint32_t)p[32] | (uint32_t)p[33] << 8 | (uint32_t)p[34] << 16 |
                        (uint32_t)p[35] << 24;
        if ((kind != SF_BLOCK_FILE_HEADER && kind != SF_BLOCK_RECORDS &&
             kind != SF_BLOCK_PACKED) || used > b - SF_BLOCK_HDR)
            return SF_DEC_BAD_FIELD;
    }
    return SF_DEC_BAD_CRC;
}

static struct sf_dec_event *queue(struct sf_dec *d, int kind)
{
    struct sf_dec_event *e = &d->q[d->qn++];

    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->block_size = d->block_size;
    if (kind == SF_DEC_DAMAGED || kind == SF_DEC_GAP || kind == SF_DEC_FOREIGN)
        d->stats.damage_events++;
    return e;
}

static void queue_range(struct sf_dec *d, int kind, int reason, uint64_t block, uint64_t count,
                        uint64_t offset, uint64_t length)
{
    struct sf_dec_event *e = queue(d, kind);

    e->reason = reason;
    e->block = block;
    e->count = count;
    e->offset = offset;
    e->length = length;
    /* A dirty tail or a truncated end adds no skipped block of its own. */
    if (kind == SF_DEC_DAMAGED && reason != SF_DEC_DIRTY_TAIL && reason != SF_DEC_TRUNCATED)
        d->stats.blocks_damaged += count;
}

/* Report the pending run of bad blocks, if any. */
static void run_flush(struct sf_dec *d)
{
    if (!d->run_count)
        return;
    if (d->run_kind == SF_DEC_FOREIGN) {
        queue_range(d, SF_DEC_FOREIGN, 0, d->run_block, d->run_count, d->run_offset,
                    d->run_length);
        d->q[d->qn - 1].file_id = d->run_file_id;
        d->stats.blocks_foreign += d->run_count;
    } else {
        queue_range(d, SF_DEC_DAMAGED, d->run_reason, d->run_block, d->run_count,
                    d->run_offset, d->run_length);
    }
    d->run_count = 0;
}

/* Block n is bad in the same way as the run before it: extend the run; else start one. */
static void run_add(struct sf_dec *d, int kind, int reason, uint64_t file_id, uint64_t n)
{
    if (d->run_count && d->run_kind == kind && d->run_reason == reason &&
        d->run_file_id == file_id && d->run_block + d->run_count == n) {
        d->run_count++;
        d->run_length += d->block_size;
        return;
    }
    run_flush(d);
    d->run_kind = kind;
    d->run_reason = reason;
    d->run_file_id = file_id;
    d->run_block = n;
    d->run_count = 1;
    d->run_offset = n * d->block_size;
    d->run_length = d->block_size;
}

/* Drop `n` decoded bytes at pos. */
static void consume(struct sf_dec *d, size_t n)
{
    d->pos += n;
    if (d->pos >= d->fill) {
        d->base += d->fill;
        d->pos = d->fill = 0;
    }
}

static void next_block(struct sf_dec *d)
{
    consume(d, d->block_size);
    d->state = ST_BLOCK;
    d->want = d->block_size;
}

/* FORMAT.md check 5: the layout of a block that passed the block check. */
static int layout_ok(const uint8_t *p, const struct sf_block_info *bi)
{
    uint32_t off = 0, count = 0;
    struct sf_rec r;
    int k;

    if (bi->kind == SF_BLOCK_FILE_HEADER) {
        struct sf_file_header h;
        if (bi->used < SF_FILE_HDR)
            return 0;
        sf_file_header_get(p + SF_BLOCK_HDR, &h);
        if (bi->first_ts != h.start_ts)
            return 0;
        off = SF_FILE_HDR;
    }
    while ((k = sf_rec_next(p, bi, &off, &r)) == 1) {
        uint32_t pad = sf_rec_size(r.length) - SF_REC_HDR;
        if (!all_zero(r.body + r.length, pad - r.length))
            return 0;
        if (count == 0 && bi->kind == SF_BLOCK_RECORDS && r.ts != bi->first_ts)
            return 0;
        count++;
    }
    return k == 0 && count == bi->count;
}

/* The one place compressed blocks meet the reader (docs/FORMAT.md, "Compressed record
 * blocks"): a kind-3 block at p is unpacked into the scratch, laid out as a plain block (its
 * 48-byte header, then the payload) so that the layout checks and the record walk that
 * follow are the plain ones; *bi becomes that plain block's. A stream that does not unpack
 * (or no scratch) makes the block malformed. */
static int unpack(struct sf_dec *d, const uint8_t *p, struct sf_block_info *bi)
{
    uint8_t *blk;
    uint32_t raw, cap = sf_pack_raw_max(d->block_size);

    if (!d->ubuf)
        return -1;
    blk = d->ubuf + SF_UNPACK_DICT_MEM;
    if (sf_unpack(p + SF_BLOCK_HDR, bi->used, bi->first_ts, blk + SF_BLOCK_HDR, cap, d->ubuf,
                  &raw))
        return -1;
    memcpy(blk, p, SF_BLOCK_HDR);
    bi->kind = SF_BLOCK_RECORDS;
    bi->used = raw;
    d->rb = blk;
    return 0;
}

/* Sealed files: the header block just accepted names the file key (FORMAT.md, "Sealed
 * files"); open it with the reader's key pair. */
static void key_from_header(struct sf_dec *d, const uint8_t *p, const struct sf_block_info *bi,
                            const struct sf_file_header *h)
{
    struct sf_cipher_rec cr;
    struct sf_rec r;
    uint32_t off = SF_FILE_HDR;
    int found = 0;

    sf_cipher_erase(&d->cipher);
    if (!(h->features & SF_FEATURE_ENCRYPTED)) {
        d->key_state = SF_DEC_KEY_NONE;
        return;
    }
    while (!found && sf_rec_next(p, bi, &off, &r) == 1)
        found = r.type == SF_REC_CIPHER && sf_cipher_rec_get(r.body, r.length, &cr) == 0;
    if (!found) {
        d->key_state = SF_DEC_KEY_BAD;
        return;
    }
    memcpy(d->key_want, cr.key_id, sizeof d->key_want);
    d->key_aead = cr.aead;
    if (!d->key_port) {
        d->key_state = SF_DEC_KEY_MISSING;
        return;
    }
    switch (sf_cipher_open_key(&d->cipher, d->key_port, &cr, d->key_pub, d->key_sec)) {
    case 0:           d->key_state = SF_DEC_KEY_OK; break;
    case SF_ENOENT:   d->key_state = SF_DEC_KEY_OTHER; break;
    case SF_ENOTSUP:  d->key_state = SF_DEC_KEY_AEAD; break;
    default:          d->key_state = SF_DEC_KEY_BAD; break;
    }
}

void sf_dec_set_key(struct sf_dec *d, const struct sf_cipher_port *port, const uint8_t *pub32,
                    const uint8_t *sec32)
{
    d->key_port = port;
    memcpy(d->key_pub, pub32, sizeof d->key_pub);
    memcpy(d->key_sec, sec32, sizeof d->key_sec);
}

int sf_dec_key(const struct sf_dec *d, uint8_t *key_id8, uint32_t *aead)
{
    if (key_id8)
        memcpy(key_id8, d->key_want, sizeof d->key_want);
    if (aead)
        *aead = d->key_aead;
    return d->key_state;
}

void sf_dec_wipe_keys(struct sf_dec *d)
{
    volatile uint8_t *v = d->key_sec;
    for (size_t i = 0; i < sizeof d->key_sec; i++)
        v[i] = 0;
    sf_cipher_erase(&d->cipher);
    d->key_port = NULL;
}

/* A block at pos that passed the block check: FORMAT.md checks 3 to 8 (and 4a: a sealed
 * file's record block is opened in place, before the layout checks). The position rule
 * (check 6): block n is accepted only with seq n, so a block with a wrong seq (a wild value,
 * a copy, a swapped block) is skipped alone and hides nothing after it; every position not
 * accepted is counted once, by the check that refused it (there are no gaps to report). The
 * file's id comes from the first block that passes the block check at its own place (seq =
 * position, kind right for it): a stray block in front cannot make the file foreign. */
static void block_valid(struct sf_dec *d, const struct sf_block_info *bi_stored, uint64_t n)
{
    uint8_t *p = d->buf + d->pos;
    struct sf_block_info ob = *bi_stored;   /* a sealed block's: `used` of the plaintext */
    const struct sf_block_info *bi = &ob;
    struct sf_block_info view;              /* a compressed block's: as unpacked (kind 2) */
    int reason = 0;
    int placed = (bi->kind == SF_BLOCK_FILE_HEADER) == (n == 0 && bi->seq == 0) &&
                 (bi->kind != SF_BLOCK_FILE_HEADER) == (n != 0 && bi->seq != 0);

    if (!d->have_file_id && placed && bi->seq == n) {
        d->file_id = bi->file_id;
        d->have_file_id = 1;
    }
    if (d->have_file_id && bi->file_id != d->file_id) {
        run_add(d, SF_DEC_FOREIGN, 0, bi->file_id, n);
        next_block(d);
        return;
    }
    d->rb = p;
    if (placed && (bi->kind == SF_BLOCK_RECORDS || bi->kind == SF_BLOCK_PACKED) &&
        d->key_state != SF_DEC_KEY_NONE) {
        /* A sealed file's record block, plain or compressed: opened in place before it is
         * unpacked and before the layout checks (the stage's one call site: FORMAT.md row
         * 4a comes before row 5, so a tampered compressed block is unauthentic, not
         * malformed). Without a usable key only the framing is judged: the block is
         * passed over, not counted as damage. */
        if (d->key_state == SF_DEC_KEY_OK || d->key_state == SF_DEC_KEY_BAD) {
            if (d->key_state == SF_DEC_KEY_BAD || sf_cipher_open_block(&d->cipher, p, &ob))
                reason = SF_DEC_UNAUTHENTIC;
        } else if (bi->seq == n) {
            run_flush(d);
            d->stats.blocks_sealed++;
            next_block(d);
            return;
        } else {
            reason = SF_DEC_OUT_OF_SEQ;
        }
    }
    view = ob;
    if (!reason) {
        if (!placed)
            reason = SF_DEC_MISPLACED;
        else if (view.kind == SF_BLOCK_PACKED && unpack(d, p, &view))
            reason = SF_DEC_BAD_RECORD;
        else if (!layout_ok(d->rb, &view))
            reason = SF_DEC_BAD_RECORD;
        else if (bi->seq != n)
            reason = SF_DEC_OUT_OF_SEQ;
    }
    if (reason) {
        run_add(d, SF_DEC_DAMAGED, reason, 0, n);
        next_block(d);
        return;
    }
    run_flush(d);
    if (!all_zero(p + SF_BLOCK_HDR + bi->used, d->block_size - SF_BLOCK_HDR - bi->used))
        queue_range(d, SF_DEC_DAMAGED, SF_DEC_DIRTY_TAIL, n, 1, n * d->block_size,
                    d->block_size);
    d->last_seq = bi->seq;
    d->last_block = n;
    d->have_seq = 1;
    d->stats.blocks_ok++;
    d->bi = view;
    d->cur_block = n;
    d->rec_off = 0;
    d->rec_n = 0;
    if (bi->kind == SF_BLOCK_FILE_HEADER) {
        struct sf_dec_event *e = queue(d, SF_DEC_HEADER);
        sf_file_header_get(p + SF_BLOCK_HDR, &e->hdr);
        key_from_header(d, p, bi, &e->hdr);
        e->block = n;
        e->file_id = bi->file_id;
        d->rec_off = SF_FILE_HDR;
    }
    d->state = ST_RECORDS;
}

/* B known, B bytes at pos. */
static void step_block(struct sf_dec *d)
{
    const uint8_t *p = d->buf + d->pos;
    uint64_t n = sf_udiv64(d->base + d->pos, d->block_size);
    struct sf_block_info bi;

    if (sf_block_check(p, d->block_size, &bi) == 0) {
        block_valid(d, &bi, n);
        return;
    } else {
        /* A different reason ends the run: zeros followed by more are reported then. */
        run_add(d, SF_DEC_DAMAGED, classify(p, d->block_size), 0, n);
    }
    next_block(d);
}

static void note_reason0(struct sf_dec *d, int why)
{
    if (d->base + d->pos == 0)
        d->fail_reason0 = why;
}

/* B unknown, SECTOR bytes at pos (a 512-byte boundary of the file). */
static void step_search(struct sf_dec *d)
{
    uint32_t size;

    if (sf_block_peek_size(d->buf + d->pos, &size) == 0 &&
        sf_umod64(d->base + d->pos, size) == 0) {
        if (size <= d->cap) {
            d->state = ST_CAND;
            d->want = size;
            return;
        }
        note_reason0(d, SF_DEC_TOO_BIG);
    } else {
        note_reason0(d, SF_DEC_BAD_HEADER);
    }
    if (!d->seen_data && !all_zero(d->buf + d->pos, SECTOR))
        d->seen_data = 1;
    consume(d, SECTOR);
}

/* B unknown, a whole candidate block at pos. */
static void step_cand(struct sf_dec *d)
{
    struct sf_block_info bi;
    uint64_t off = d->base + d->pos;

    if (sf_block_check(d->buf + d->pos, d->want, &bi) == 0) {
        d->block_size = d->want;
        if (off)
            queue_range(d, SF_DEC_DAMAGED, d->fail_reason0, 0, sf_udiv64(off, d->block_size), 0,
                        off);
        d->state = ST_BLOCK;      /* checks this block again, as a block of the file */
        return;
    }
    note_reason0(d, classify(d->buf + d->pos, d->want));
    d->seen_data = 1;              /* it had a block header */
    d->state = ST_SEARCH;
    d->want = SECTOR;
    consume(d, SECTOR);
}

static void step_end(struct sf_dec *d)
{
    size_t rem = d->fill - d->pos;

    if (d->state == ST_CAND) {
        /* A header claiming a block longer than the rest of the file: not the one. Search
         * on through what is buffered (all of the rest). */
        note_reason0(d, SF_DEC_TRUNCATED);
        d->seen_data = 1;
        d->state = ST_SEARCH;
        d->want = SECTOR;
        consume(d, SECTOR);
        return;
    }
    if (d->state == ST_SEARCH) {
        /* Nothing found: not a log, unless the file is empty or all zeros (created,
         * perhaps allocated, never written: FORMAT.md, "Reading a file"). */
        if (d->seen_data || !all_zero(d->buf + d->pos, rem))
            queue_range(d, SF_DEC_DAMAGED, SF_DEC_NO_BLOCK, 0, 0, 0, d->base + d->fill);
    } else {
        if (rem && !all_zero(d->buf + d->pos, rem)) {
            /* FORMAT.md check 10: judge the partial block as if the rest were zeros, then
             * report the truncation (below, when the decoder comes back here). */
            if (d->pos + d->block_size > d->cap) {
                memmove(d->buf, d->buf + d->pos, rem);
                d->base += d->pos;
                d->pos = 0;
                d->fill = rem;
            }
            memset(d->buf + d->fill, 0, d->pos + d->block_size - d->fill);
            d->trunc_len = rem;
            d->trunc_block = sf_udiv64(d->base + d->pos, d->block_size);
            d->fill = d->pos + d->block_size;
            return;
        }
        /* Zeros at the very end are allocated space never written: not damage. */
        if (d->run_count && d->run_reason == SF_DEC_UNWRITTEN)
            d->run_count = 0;
        run_flush(d);
        if (d->trunc_len)
            queue_range(d, SF_DEC_DAMAGED, SF_DEC_TRUNCATED, d->trunc_block, 1,
                        d->trunc_block * d->block_size, d->trunc_len);
    }
    d->pos = d->fill = 0;
    d->state = ST_DONE;
}

int sf_dec_next(struct sf_dec *d, struct sf_dec_event *ev)
{
    for (;;) {
        if (d->qi < d->qn) {
            *ev = d->q[d->qi++];
            if (d->qi == d->qn)
                d->qi = d->qn = 0;
            return ev->kind;
        }
        switch (d->state) {
        case ST_RECORDS: {
            int r = sf_rec_next(d->rb, &d->bi, &d->rec_off, &ev->rec);
            if (r == 1) {
                struct sf_rec rec = ev->rec;
                memset(ev, 0, sizeof *ev);
                ev->kind = SF_DEC_RECORD;
                ev->rec = rec;
                ev->block = d->cur_block;
                ev->block_size = d->block_size;
                ev->file_id = d->file_id;
                ev->bi = &d->bi;
                d->stats.records++;
                d->rec_n++;
                return SF_DEC_RECORD;
            }
            if (r < 0)
                queue_range(d, SF_DEC_DAMAGED, SF_DEC_BAD_RECORD, d->cur_block, 1,
                            d->cur_block * d->block_size, d->block_size);
            next_block(d);
            break;
        }
        case ST_DONE:
            memset(ev, 0, sizeof *ev);
            ev->kind = SF_DEC_END;
            ev->block_size = d->block_size;
            return SF_DEC_END;
        default:
            if (d->fill - d->pos < d->want) {
                if (!d->finished) {
                    memset(ev, 0, sizeof *ev);
                    return SF_DEC_NEED_DATA;
                }
                step_end(d);
            } else if (d->state == ST_SEARCH) {
                step_search(d);
            } else if (d->state == ST_CAND) {
                step_cand(d);
            } else {
                step_block(d);
            }
            break;
        }
    }
}

int sf_dec_next_block(struct sf_dec *d, struct sf_dec_block *b)
{
    for (;;) {
        if (d->qi < d->qn)
            return 0;                 /* events come first */
        if (d->state == ST_RECORDS) {
            b->p = d->rb;
            b->bi = d->bi;
            b->block = d->cur_block;
            b->off = d->rec_off;
            d->stats.records += d->bi.count - d->rec_n;
            next_block(d);            /* moves pos on; the bytes stay until the next feed */
            return 1;
        }
        if (d->state != ST_BLOCK || d->fill - d->pos < d->want)
            return 0;
        step_block(d);
    }
}

size_t sf_dec_space(struct sf_dec *d, uint8_t **where)
{
    size_t have = d->fill - d->pos;

    *where = NULL;
    if (d->finished || d->qi < d->qn || d->state == ST_RECORDS || d->state == ST_DONE ||
        have >= d->want)
        return 0;
    if (d->pos + d->want > d->cap) {
        memmove(d->buf, d->buf + d->pos, have);
        d->base += d->pos;
        d->pos = 0;
        d->fill = have;
    }
    *where = d->buf + d->fill;
    return d->want - have;
}

void sf_dec_commit(struct sf_dec *d, size_t n)
{
    d->fill += n;
    d->stats.bytes += n;
}

size_t sf_dec_feed(struct sf_dec *d, const void *p, size_t n)
{
    uint8_t *w;
    size_t k = sf_dec_space(d, &w);

    if (k > n)
        k = n;
    if (k) {
        memcpy(w, p, k);
        sf_dec_commit(d, k);
    }
    return k;
}

int sf_dec_skip(struct sf_dec *d, uint64_t offset)
{
    if (d->state != ST_BLOCK || d->finished || d->qi < d->qn || d->pos != d->fill ||
        offset < d->base + d->fill || sf_umod64(offset, d->block_size))
        return SF_EINVAL;
    d->base = offset;
    d->pos = d->fill = 0;
    return 0;
}

void sf_dec_finish(struct sf_dec *d)
{
    d->finished = 1;
}

int sf_dec_read(struct sf_dec *d, sf_dec_read_fn fn, void *ctx, struct sf_dec_event *ev)
{
    for (;;) {
        int k = sf_dec_next(d, ev);
        uint8_t *w;
        size_t n;
        sf_ssize_t r;

        if (k != SF_DEC_NEED_DATA)
            return k;
        n = sf_dec_space(d, &w);
        if (n == 0) {               /* cannot happen while NEED_DATA; do not spin */
            sf_dec_finish(d);
            continue;
        }
        r = fn(ctx, w, n);
        if (r < 0)
            return (int)r;
        if (r == 0)
            sf_dec_finish(d);
        else
            sf_dec_commit(d, (size_t)r > n ? n : (size_t)r);
    }
}
