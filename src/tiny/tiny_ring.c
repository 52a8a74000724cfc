/* The tiny logger's ring: one producer (an interrupt handler or one thread) appends records
 * into blocks of caller memory, the writer (tiny_log.c) takes whole blocks; lock-free.
 *
 * The ring is nblocks slots (a power of two) of block_size bytes; block number h (counted
 * mod 2^14) lives in slot h mod nblocks, laid out as the block it becomes: 48 header bytes,
 * then the records. While a block is filled its header's `used`, `count` and `first_ts`
 * fields are the producer's running values; the writer fills in the rest when it writes it.
 *
 * All shared state is two 32-bit words, so a Cortex-M3/M4 needs no lock:
 *   pos   bits 0-14 used (payload bytes of the block being filled), bit 16 BUSY (the producer
 *         is writing a record), bit 17 CLOSED (the writer cut the block: a checkpoint,
 *         close), bits 18-31 the block's number h
 *   tail  the number of the oldest block the writer has not written yet
 * Blocks tail .. h - 1 are complete; block h is complete too once CLOSED. The producer moves
 * pos on to block h + 1 when a record does not fit (or the block is CLOSED) and that block's
 * slot is free (h + 1 - tail < nblocks); else the record is dropped and counted. The writer
 * only ever sets CLOSED when BUSY is clear (as an interrupt handler runs to its end before
 * the main loop goes on, it never waits there), or moves a CLOSED pos on itself. A record
 * is whole before `used` covers it (release store), so a closed block holds whole records.
 *
 * Drops: the producer counts the records it had to refuse, and the first record it accepts
 * after them is preceded by a DROP record (docs/FORMAT.md: count, first and last timestamp),
 * so no loss is silent; at close the writer appends a pending one. */
#include "tiny_int.h"
#include "log/rec_layout.h"

#define POS_USED 0x7FFFu
#define POS_BUSY (1u << 16)
#define POS_CLOSED (1u << 17)
#define POS_SHIFT 18
#define CTR_MASK 0x3FFFu

static uint8_t *slot(const struct sf_tiny_log *lg, uint32_t h)
{
    return lg->ring + (size_t)(h & (lg->nblocks - 1)) * lg->bsize;
}

/* Room for s record bytes: the block to write them in (their offset is the returned pos's
 * used bits), with pos BUSY, or NULL when the ring is full. */
static uint8_t *reserve(struct sf_tiny_log *lg, uint32_t s, uint64_t ts, uint32_t *pos)
{
    uint32_t cap = lg->bsize - SF_BLOCK_HDR;
    for (;;) {
        uint32_t p = atomic_load_explicit(&lg->pos, memory_order_acquire);
        uint32_t u = p & POS_USED, h = p >> POS_SHIFT;
        if (!(p & POS_CLOSED) && u + s <= cap) {
            if (!atomic_compare_exchange_weak_explicit(&lg->pos, &p, p | POS_BUSY,
                                                       memory_order_acquire,
                                                       memory_order_relaxed))
                continue;                  /* the writer closed it meanwhile */
            uint8_t *b = slot(lg, h);
            if (!u) {
                st_le64(b + 24, ts);       /* first_ts: the block's first record */
                st_le32(b + 36, 0);        /* count */
            }
            *pos = p;
            return b;
        }
        uint32_t t = atomic_load_explicit(&lg->tail, memory_order_acquire);
        uint32_t nh = (h + 1) & CTR_MASK;
        if (((nh - t) & CTR_MASK) >= lg->nblocks)
            return NULL;                   /* the next slot still holds block t */
        atomic_compare_exchange_weak_explicit(&lg->pos, &p, nh << POS_SHIFT,
                                              memory_order_acq_rel, memory_order_relaxed);
    }
}

/* The record at the reserved place is whole: publish it. */
static void commit(struct sf_tiny_log *lg, uint8_t *b, uint32_t p, uint32_t s)
{
    uint32_t used = (p & POS_USED) + s;
    st_le32(b + 32, used);
    st_le32(b + 36, ld_le32(b + 36) + 1);
    atomic_store_explicit(&lg->pos, p + s, memory_order_release);   /* BUSY clear */
}

static int dropped(struct sf_tiny_log *lg, uint64_t ts)
{
    if (!lg->drop_pending++)
        lg->drop_first = ts;
    lg->drop_last = ts;
    atomic_store_explicit(&lg->dropped,
                          atomic_load_explicit(&lg->dropped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return SF_EDROPPED;
}

/* The DROP record for the drops so far, if any; 0, or SF_EDROPPED when it found no room. */
static int put_drop(struct sf_tiny_log *lg)
{
    uint8_t body[24], *b;
    uint32_t p;
    if (!lg->drop_pending)
        return 0;
    if (!(b = reserve(lg, sf_rec_size(24), lg->drop_last, &p)))
        return SF_EDROPPED;
    st_le64(body, lg->drop_pending);
    st_le64(body + 8, lg->drop_first);
    st_le64(body + 16, lg->drop_last);
    sf_rec_put(b + SF_BLOCK_HDR + (p & POS_USED), SF_REC_DROP, 0, 0, lg->drop_last, body, 24);
    commit(lg, b, p, sf_rec_size(24));
    lg->drop_pending = 0;
    return 0;
}

void tiny_ring_flush_drops(struct sf_tiny_log *lg)
{
    (void)put_drop(lg);
}

void tiny_ring_cut(struct sf_tiny_log *lg)
{
    for (;;) {
        uint32_t p = atomic_load_explicit(&lg->pos, memory_order_acquire);
        if (p & POS_BUSY)
            continue;                      /* another core's producer: a record's copy */
        if ((p & POS_CLOSED) || !(p & POS_USED))
            return;
        if (atomic_compare_exchange_weak_explicit(&lg->pos, &p, p | POS_CLOSED,
                                                  memory_order_acq_rel, memory_order_relaxed))
            return;
    }
}

int sf_tiny_log_append(struct sf_tiny_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                       uint64_t ts, const void *body, uint16_t len)
{
    uint32_t s = sf_rec_size(len), p;
    uint8_t *b;
    if (s > lg->bsize - SF_BLOCK_HDR || type == SF_REC_DROP ||
        (type >= SF_REC_CAN && type <= SF_REC_LATENCY && channel >= lg->cfg.channel_count))
        return SF_EINVAL;              /* a channel the file does not name (FORMAT.md) */
    if (put_drop(lg) || !(b = reserve(lg, s, ts, &p)))
        return dropped(lg, ts);
    sf_rec_put(b + SF_BLOCK_HDR + (p & POS_USED), type, channel, flags, ts, body, len);
    commit(lg, b, p, s);
    return 0;
}

int sf_tiny_log_append_can(struct sf_tiny_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                           uint32_t flags, const uint8_t *data, uint8_t len)
{
    uint32_t s = sf_rec_size(SF_CAN_BODY + len), p;
    uint8_t *b;
    if (!sf_rec_can_valid(id, flags, len) || channel >= lg->cfg.channel_count)
        return SF_EINVAL;              /* broken, or a channel the file does not name */
    if (put_drop(lg) || !(b = reserve(lg, s, ts, &p)))
        return dropped(lg, ts);
    rec_put_can_valid(b + SF_BLOCK_HDR + (p & POS_USED), channel, ts, id, flags, data, len);
    commit(lg, b, p, s);
    return 0;
}
