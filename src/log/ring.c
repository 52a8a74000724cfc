/* The lock-free multi-producer ring: reservation, commit, drops, and the hand-over of whole
 * blocks to the writer. Freestanding; only 32-bit C11 atomics.
 *
 * Sections: producers (reserve, commit, append, drops) - raw mode - writer side (take,
 * release, DROP records).
 *
 * The protocol (framed mode)
 * --------------------------
 * lg->tail = (block counter << bshift) | offset: the next free payload byte of the current
 * block. A producer reserves a record of `size` bytes with one CAS on tail:
 * - it fits (offset + size <= payload): tail advances by size; the record is the producer's;
 * - it does not: the producer closes the block and starts the next one in the same CAS
 *   (tail = next block | size), provided the next block is free, i.e. it is less than nblk
 *   blocks ahead of lg->rel (the oldest block the writer still owns). If it is not free the
 *   ring is full: the record is dropped and counted; nothing waits. The closing producer
 *   then stores closed = RING_CLOSED | offset (`used` = the bytes reserved before the pad).
 * After writing its record the producer adds size to the block's `committed` counter.
 * The writer takes block b when closed[b] is set and committed[b] == used: every
 * reservation in b happened before the CAS that closed it, so all of them are counted in
 * used, and none can be added later. It never waits for a block: a producer preempted
 * between reserve and commit (on bare metal: by the writer's own context, or a lower-priority
 * interrupt preempted by the main loop) only delays its block; the writer returns and takes
 * it on a later call. That is also why the writer never spins on `committed`.
 *
 * Memory ordering
 * - Record bytes are published by the producer's fetch_add on committed (release) and read
 *   by the writer after its load of committed (acquire).
 * - The CAS that closes a block happens before the store of closed (same thread); the writer
 *   reads closed with acquire, then committed with acquire.
 * - Reuse: the writer resets committed/closed of a block (relaxed) and then publishes it with
 *   a store-release of rel. The producer that moves into that block loaded rel with acquire
 *   before its CAS; its CAS is acq_rel, and every later CAS on tail reads from the release
 *   sequence it heads, so every producer that reserves in the block sees the reset.
 * - ABA: a producer that loaded tail, then stalled while the ring went round 2 * nblk blocks
 *   and tail came back to the same value, would CAS with a stale view of rel. Round trips
 *   of that length while one producer is stalled are not a case we defend against.
 *
 * CAS loops retry only when another producer succeeded meanwhile (lock-free, not
 * wait-free); every path is O(1) otherwise. */
#include "log_impl.h"
#include "rec_layout.h"

/* ---- producers ---- */

/* static inline: the producers' paths below inline it (it was a call per record) */
static inline int ring_reserve(struct sf_log *lg, uint32_t size, uint8_t **rec, uint32_t *blk)
{
    uint32_t mask = (1u << lg->bshift) - 1;
    uint32_t t = atomic_load_explicit(&lg->tail, memory_order_relaxed);
    for (;;) {
        uint32_t b = t >> lg->bshift, off = t & mask, nt, nb, at;
        if (off + size <= lg->payload) {
            nb = b;
            at = off;
            nt = t + size;
        } else {
            nb = ctr_add(lg, b, 1);
            uint32_t r = atomic_load_explicit(&lg->rel, memory_order_acquire);
            if (ctr_dist(lg, nb, r) >= lg->nblk)
                return SF_EDROPPED;              /* the next block is still the writer's */
            at = 0;
            nt = nb << lg->bshift | size;
        }
        if (atomic_compare_exchange_weak_explicit(&lg->tail, &t, nt, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            if (nb != b)
                atomic_store_explicit(blk_closed(blk_ptr(lg, b)), RING_CLOSED | off,
                                      memory_order_release);
            *rec = blk_ptr(lg, nb) + SF_BLOCK_HDR + at;
            *blk = nb;
            return 0;
        }
    }
}

void sfl_ring_commit(struct sf_log *lg, uint32_t blk, uint32_t size)
{
    atomic_fetch_add_explicit(blk_committed(blk_ptr(lg, blk)), size, memory_order_release);
}

/* The count is exact. The run's first/last timestamps are kept under a try-lock that no one
 * waits on: a drop that finds it taken (another dropping producer, or the writer harvesting)
 * is still counted, only its timestamp is not considered. */
void sfl_ring_count_drop(struct sf_log *lg, uint64_t ts)
{
    if (atomic_exchange_explicit(&lg->drop_lock, 1, memory_order_acquire)) {
        atomic_fetch_add_explicit(&lg->drops, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&lg->drops, 1, memory_order_relaxed);
    if (!lg->drop_have) {
        lg->drop_first = ts;
        lg->drop_last = ts;
        lg->drop_have = 1;
    } else {
        if (ts < lg->drop_first)
            lg->drop_first = ts;
        if (ts > lg->drop_last)
            lg->drop_last = ts;
    }
    atomic_store_explicit(&lg->drop_lock, 0, memory_order_release);
}

static uint32_t log2u(uint64_t v)
{
    uint32_t hi = (uint32_t)(v >> 32);
    if (hi)
        return 63u - (uint32_t)__builtin_clz(hi);
    return (uint32_t)v ? 31u - (uint32_t)__builtin_clz((uint32_t)v) : 0u;
}

void sfl_measure_end(struct sf_log *lg, uint64_t t0)
{
    uint64_t d = log_now(lg) - t0;
    uint32_t k = log2u(d);
    if (k >= SF_HIST_BUCKETS)
        k = SF_HIST_BUCKETS - 1;
    atomic_fetch_add_explicit(&lg->app_hist[k], 1, memory_order_relaxed);
    uint32_t d32 = d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
    uint32_t m = atomic_load_explicit(&lg->app_max, memory_order_relaxed);
    while (d32 > m && !atomic_compare_exchange_weak_explicit(&lg->app_max, &m, d32,
                                                             memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

int sf_log_reserve(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                   uint64_t ts, uint16_t len, struct sf_log_resv *r)
{
    uint32_t size = sf_rec_size(len), blk;
    uint8_t *p;
    if (lg->flags & SF_LOG_RAW || size > lg->payload)
        return SF_EINVAL;
    if (ring_reserve(lg, size, &p, &blk)) {
        sfl_ring_count_drop(lg, ts);
        return SF_EDROPPED;
    }
    p[0] = type;
    p[1] = channel;
    st_le16(p + 2, len);
    st_le32(p + 4, flags);
    st_le64(p + 8, ts);
    if (len & 7u)
        memset(p + size - 8, 0, 8);          /* the body's zero padding */
    r->body = p + SF_REC_HDR;
    r->pos = blk;
    r->size = size;
    return 0;
}

void sf_log_commit(struct sf_log *lg, struct sf_log_resv *r)
{
    sfl_ring_commit(lg, r->pos, r->size);
}

int sf_log_append(struct sf_log *lg, uint8_t type, uint8_t channel, uint32_t flags,
                  uint64_t ts, const void *body, uint16_t len)
{
    uint64_t t0 = lg->flags & SF_LOG_MEASURE ? log_now(lg) : 0;
    uint32_t size = sf_rec_size(len), blk;
    uint8_t *p;
    if (lg->flags & SF_LOG_RAW || size > lg->payload || (len && !body))
        return SF_EINVAL;
    if (ring_reserve(lg, size, &p, &blk)) {
        sfl_ring_count_drop(lg, ts);
        return SF_EDROPPED;
    }
    sf_rec_put(p, type, channel, flags, ts, body, len);
    sfl_ring_commit(lg, blk, size);
    if (lg->flags & SF_LOG_MEASURE)
        sfl_measure_end(lg, t0);
    return 0;
}

static SF_NOINLINE int drop_can(struct sf_log *lg, uint64_t ts)
{
    sfl_ring_count_drop(lg, ts);
    return SF_EDROPPED;
}

/* A validated CAN frame into the ring, timed (SF_LOG_MEASURE); with a control stage the
 * stage times the whole call (control.c), so not here. */
static SF_NOINLINE int put_can_measured(struct sf_log *lg, uint32_t channel, uint64_t ts,
                                        uint32_t id, uint32_t flags, const uint8_t *data,
                                        uint32_t len)
{
    uint64_t t0 = log_now(lg);
    uint32_t size = sf_rec_size(SF_CAN_BODY + len), blk;
    uint8_t *p;
    int err = 0;
    if (ring_reserve(lg, size, &p, &blk)) {
        sfl_ring_count_drop(lg, ts);
        err = SF_EDROPPED;
    } else {
        rec_put_can_valid(p, channel, ts, id, flags, data, len);
        sfl_ring_commit(lg, blk, size);
    }
    if (!lg->ctl)
        sfl_measure_end(lg, t0);
    return err;
}

/* A validated CAN frame into the ring (sf_log_append_can; the control stage's last step).
 * Its usual path makes no call but tail calls. */
int sfl_ring_put_can(struct sf_log *lg, uint32_t channel, uint64_t ts, uint32_t id,
                     uint32_t flags, const uint8_t *data, uint32_t len)
{
    if (lg->flags & SF_LOG_MEASURE)
        return put_can_measured(lg, channel, ts, id, flags, data, len);
    uint32_t size = sf_rec_size(SF_CAN_BODY + len), blk;
    uint8_t *p;
    if (ring_reserve(lg, size, &p, &blk))
        return drop_can(lg, ts);
    rec_put_can_valid(p, channel, ts, id, flags, data, len);      /* validated by the caller */
    sfl_ring_commit(lg, blk, size);
    return 0;
}

/* Frames with flags, or on a raw log: the whole validation, then sfl_ring_put_can. */
static SF_NOINLINE int append_can_check(struct sf_log *lg, uint32_t channel, uint64_t ts,
                                        uint32_t id, uint32_t flags, const uint8_t *data,
                                        uint32_t len)
{
    if (lg->flags & SF_LOG_RAW || !rec_can_valid_fast(id, flags, len) ||
        (len && !data && !(flags & SF_CAN_RTR)))
        return SF_EINVAL;           /* refused before reserving: nothing vanishes unseen */
    return sfl_ring_put_can(lg, channel, ts, id, flags, data, len);
}

/* A dispatcher that makes only tail calls, so it saves no registers: the control stage
 * (which validates and ends in sfl_ring_put_can); the usual frame (11-bit id, no flags,
 * <= 8 bytes) straight to the ring; the rest through append_can_check. */
int sf_log_append_can(struct sf_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                      uint32_t flags, const uint8_t *data, uint8_t len)
{
    if (lg->ctl)
        return lg->ctl_ops->append_can(lg, channel, ts, id, flags, data, len);
    if (!flags && len <= 8 && id <= 0x7FFu && !(lg->flags & SF_LOG_RAW) && (data || !len))
        return sfl_ring_put_can(lg, channel, ts, id, flags, data, len);
    return append_can_check(lg, channel, ts, id, flags, data, len);
}

/* The longest channel name or META string: its record fits in the header block after the
 * file header (16 + len <= B - 48 - 32, len padded to 8). */
static inline uint32_t name_max(const struct sf_log *lg)
{
    return lg->payload - SF_FILE_HDR - SF_REC_HDR;   /* payload: less a sealed block's room */
}

int sf_log_name_channel(struct sf_log *lg, uint8_t channel, const char *name, uint64_t ts)
{
    uint32_t len = 0;
    if (lg->flags & SF_LOG_RAW || !name)
        return SF_EINVAL;
    while (name[len] && len <= name_max(lg))
        len++;
    if (len > name_max(lg))
        return SF_EINVAL;
    const char *old = atomic_load_explicit(&lg->chan_name[channel], memory_order_acquire);
    if (old && old != name) {
        uint32_t i = 0;
        while (i < len && old[i] == name[i])
            i++;
        if (i < len || old[i])
            return SF_EEXIST;                  /* a channel keeps its name */
    }
    /* The name before the record: a writer that takes the record's block (acquire on its
     * commit) sees the name when it starts the next file. */
    if (!old)
        atomic_store_explicit(&lg->chan_name[channel], name, memory_order_release);
    return sf_log_append(lg, SF_REC_CHANNEL, channel, 0, ts, name, (uint16_t)len);
}

/* A record the writer makes (DROP, ANNOTATION): it goes through the ring like any other. */
int sfl_put_own(struct sf_log *lg, uint8_t type, uint64_t ts, const void *body, uint16_t len)
{
    uint32_t size = sf_rec_size(len), blk;
    uint8_t *p;
    if (size > lg->payload)
        return SF_EINVAL;
    if (ring_reserve(lg, size, &p, &blk))
        return SF_EDROPPED;
    sf_rec_put(p, type, 0, 0, ts, body, len);
    sfl_ring_commit(lg, blk, size);
    lg->stats.records_own++;
    return 0;
}

/* ---- raw mode: one producer, bytes straight into the ring ----
 * tail counts bytes written and rel bytes released, both modulo 2 * ring bytes. The producer
 * copies, then publishes with a store-release of tail; the writer reads tail with acquire
 * before it submits the bytes, and releases them with a store-release of rel, which the
 * producer loads with acquire before overwriting. */
sf_ssize_t sf_log_write_raw(struct sf_log *lg, const void *p, size_t n)
{
    if (!(lg->flags & SF_LOG_RAW))
        return SF_EINVAL;
    uint64_t t0 = lg->flags & SF_LOG_MEASURE ? log_now(lg) : 0;
    uint32_t ring = lg->nblk << lg->bshift;
    uint32_t h = atomic_load_explicit(&lg->tail, memory_order_relaxed);
    uint32_t r = atomic_load_explicit(&lg->rel, memory_order_acquire);
    uint32_t room = ring - ctr_dist(lg, h, r);
    uint32_t take = n < room ? (uint32_t)n : room;
    uint32_t at = h >= ring ? h - ring : h;
    uint32_t first = ring - at < take ? ring - at : take;
    memcpy(lg->ring + at, p, first);
    memcpy(lg->ring, (const uint8_t *)p + first, take - first);
    atomic_store_explicit(&lg->tail, ctr_add(lg, h, take), memory_order_release);
    if (take < n) {
        size_t lost = n - take;
        atomic_fetch_add_explicit(&lg->drops, lost > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)lost,
                                  memory_order_relaxed);
    }
    if (lg->flags & SF_LOG_MEASURE)
        sfl_measure_end(lg, t0);
    return (sf_ssize_t)take;
}

/* ---- writer side ---- */

uint32_t sfl_ring_current(const struct sf_log *lg)
{
    return atomic_load_explicit(&lg->tail, memory_order_relaxed) >> lg->bshift;
}

/* Close the current block early (checkpoint, rotation, close). 1: closed a block holding
 * records; 0: it is empty, nothing to close; SF_EDROPPED: the next block is not free. In
 * every case *next is the first block counter not closed (so blocks before it are complete
 * once committed). */
int sfl_ring_close_current(struct sf_log *lg, uint32_t *next)
{
    uint32_t mask = (1u << lg->bshift) - 1;
    uint32_t t = atomic_load_explicit(&lg->tail, memory_order_relaxed);
    for (;;) {
        uint32_t b = t >> lg->bshift, off = t & mask;
        *next = b;
        if (!off)
            return 0;
        uint32_t nb = ctr_add(lg, b, 1);
        if (ctr_dist(lg, nb, atomic_load_explicit(&lg->rel, memory_order_relaxed)) >= lg->nblk)
            return SF_EDROPPED;
        if (atomic_compare_exchange_weak_explicit(&lg->tail, &t, nb << lg->bshift,
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            atomic_store_explicit(blk_closed(blk_ptr(lg, b)), RING_CLOSED | off,
                                  memory_order_release);
            *next = nb;
            return 1;
        }
    }
}

/* Take every block that is closed and fully committed, in order; note its first timestamp,
 * `used` and record count where sealing will find them. A current block too full for the
 * smallest record is closed here, so it need not wait for the next producer. Returns the
 * number of blocks taken. */
int sfl_ring_take(struct sf_log *lg)
{
    int n = 0;
    uint32_t t = atomic_load_explicit(&lg->tail, memory_order_relaxed), next;
    if ((t & ((1u << lg->bshift) - 1)) + SF_REC_HDR > lg->payload)
        sfl_ring_close_current(lg, &next);
    for (;;) {
        uint8_t *b = blk_ptr(lg, lg->taken);
        uint32_t c = atomic_load_explicit(blk_closed(b), memory_order_acquire);
        if (!c)
            break;
        uint32_t used = c & ~RING_CLOSED;
        if (atomic_load_explicit(blk_committed(b), memory_order_acquire) != used)
            break;                            /* a producer is still writing: later */
        const uint8_t *pl = b + SF_BLOCK_HDR;
        uint32_t off = 0, count = 0;
        while (off + SF_REC_HDR <= used) {
            uint32_t sz = sf_rec_size(ld_le16(pl + off + 2));
            if (sz > used - off)
                break;                        /* cannot happen: records are ours */
            off += sz;
            count++;
        }
        st_le64(b + META_FIRST_TS, used ? ld_le64(pl + 8) : 0);
        st_le32(b + META_USED, used);
        st_le32(b + META_COUNT, count);
        lg->stats.records_in += count;
        lg->stats.bytes_in += used;
        lg->taken = ctr_add(lg, lg->taken, 1);
        n++;
    }
    return n;
}

/* Give the n oldest writer-owned blocks back to the producers. */
void sfl_ring_release(struct sf_log *lg, uint32_t n)
{
    uint32_t r = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *b = blk_ptr(lg, r);
        atomic_store_explicit(blk_committed(b), 0, memory_order_relaxed);
        atomic_store_explicit(blk_closed(b), 0, memory_order_relaxed);
        r = ctr_add(lg, r, 1);
    }
    atomic_store_explicit(&lg->rel, r, memory_order_release);
}

/* A DROP record for the drops counted since the last one: their number and the first and
 * last timestamps of the run. 1 when placed; 0 when there are none, the lock is busy or the
 * ring is full (the run stays for the next call). */
int sfl_ring_put_drops(struct sf_log *lg)
{
    if (atomic_load_explicit(&lg->drops, memory_order_relaxed) == lg->drops_seen)
        return 0;
    if (atomic_exchange_explicit(&lg->drop_lock, 1, memory_order_acquire))
        return 0;
    uint32_t count = atomic_load_explicit(&lg->drops, memory_order_relaxed) - lg->drops_seen;
    uint64_t first, last;
    if (lg->drop_have) {
        first = lg->drop_first;
        last = lg->drop_last;
    } else {
        first = last = log_now(lg);          /* every drop of the run lost the lock race */
    }
    uint8_t body[24];
    st_le64(body, count);
    st_le64(body + 8, first);
    st_le64(body + 16, last);
    int ok = sfl_put_own(lg, SF_REC_DROP, first, body, sizeof body) == 0;
    if (ok) {
        lg->drops_seen += count;
        lg->drops_total += count;
        lg->drop_have = 0;
    }
    atomic_store_explicit(&lg->drop_lock, 0, memory_order_release);
    return ok;
}

uint64_t sfl_ring_used_bytes(const struct sf_log *lg)
{
    uint32_t t = atomic_load_explicit(&lg->tail, memory_order_relaxed);
    uint32_t r = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    if (lg->flags & SF_LOG_RAW)
        return ctr_dist(lg, t, r);
    /* < nblk blocks: below the ring size, so below 2^31 (sf_log_open) */
    return (ctr_dist(lg, t >> lg->bshift, r) << lg->bshift) + (t & ((1u << lg->bshift) - 1));
}
