/* Simulated SSD: an SLC-cache timing model over another device, in real time (simbd.h).
 *
 * Each write is given a completion time when it arrives; synchronous calls sleep until
 * then, submitted requests wait in a FIFO that poll releases as their times pass. The data
 * itself goes to the lower device immediately, so the host's own cost of storing it
 * overlaps the simulated transfer whenever more than one request is in flight. */
#include "streamfat/simbd.h"
#include "streamfat/sf.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static struct sf_simbd *sim(struct sf_bdev *bd)
{
    return (struct sf_simbd *)bd;
}

int64_t sf_simbd_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t_ns)
{
    struct timespec ts;

    if (t_ns <= sf_simbd_now_ns())
        return;
    ts.tv_sec = (time_t)(t_ns / 1000000000);
    ts.tv_nsec = (long)(t_ns % 1000000000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Nanoseconds to move `bytes` at `bps` bytes per second. */
static int64_t xfer_ns(uint64_t bytes, uint64_t bps)
{
    return (int64_t)((long double)bytes * 1e9L / (long double)bps);
}

/* The device accepts a write of `bytes` at `now`: drain the cache for the idle time since
 * the last write ended, then split the write into the part that still fits in the cache
 * (fast) and the rest (slow). Returns the completion time. */
static int64_t account_write(struct sf_simbd *s, uint64_t bytes, int64_t now)
{
    struct sf_simbd_state *st = s->st;
    int64_t start = now > st->busy_until_ns ? now : st->busy_until_ns;
    uint64_t room, fast;

    if (s->m.idle_flush_bps && now > st->busy_until_ns && st->cache_used) {
        long double drained = (long double)(now - st->busy_until_ns) *
                              (long double)s->m.idle_flush_bps / 1e9L;
        st->cache_used = drained >= (long double)st->cache_used
                             ? 0 : st->cache_used - (uint64_t)drained;
    }
    room = st->cache_used < s->m.cache_bytes ? s->m.cache_bytes - st->cache_used : 0;
    fast = bytes < room ? bytes : room;
    st->cache_used += fast;
    st->bytes_written += bytes;
    st->busy_until_ns = start + xfer_ns(fast, s->m.fast_bps) + xfer_ns(bytes - fast, s->m.slow_bps);
    return st->busy_until_ns;
}

/* Time of a request that moves no data through the cache (read, flush): it waits for the
 * writes before it, as on a device that does one thing at a time. */
static int64_t account_other(struct sf_simbd *s, int64_t now)
{
    return now > s->st->busy_until_ns ? now : s->st->busy_until_ns;
}

static int sim_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    return sf_bdev_read(sim(bd)->lower, lba, buf, count);
}

static int sim_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sf_simbd *s = sim(bd);
    int err = sf_bdev_write(s->lower, lba, buf, count);

    if (err)
        return err;
    sleep_until(account_write(s, (uint64_t)count * bd->sector_size, sf_simbd_now_ns()));
    return 0;
}

void sf_simbd_drain(struct sf_simbd *s)
{
    sleep_until(s->st->busy_until_ns);
}

static int sim_flush(struct sf_bdev *bd)
{
    sf_simbd_drain(sim(bd));
    return sf_bdev_flush(sim(bd)->lower);
}

static int sim_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    return sf_bdev_trim(sim(bd)->lower, lba, count);
}

static int sim_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    struct sf_simbd *s = sim(bd);
    int64_t now = sf_simbd_now_ns(), done;

    if (s->q_len == SF_SIMBD_QMAX)
        return SF_EBUSY;
    switch (bio->op) {
    case SF_BIO_WRITE:
        bio->result = sf_bdev_write(s->lower, bio->lba, bio->buf, bio->count);
        done = bio->result ? account_other(s, now)
                           : account_write(s, (uint64_t)bio->count * bd->sector_size, now);
        break;
    case SF_BIO_READ:
        bio->result = sf_bdev_read(s->lower, bio->lba, bio->buf, bio->count);
        done = account_other(s, now);
        break;
    default:
        bio->result = sf_bdev_flush(s->lower);
        done = account_other(s, now);
        break;
    }
    /* Completion times never decrease (account_* start at busy_until), so the FIFO is
     * also completion order. */
    s->q_done_ns[(s->q_first + s->q_len) % SF_SIMBD_QMAX] = done;
    s->q_len++;
    bio->next = NULL;
    if (s->q_tail)
        s->q_tail->next = bio;
    else
        s->q_head = bio;
    s->q_tail = bio;
    return 0;
}

static int sim_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    struct sf_simbd *s = sim(bd);
    unsigned n = 0;

    if (wait && max && s->q_len)
        sleep_until(s->q_done_ns[s->q_first]);
    while (n < max && s->q_len && s->q_done_ns[s->q_first] <= sf_simbd_now_ns()) {
        struct sf_bio *bio = s->q_head;
        s->q_head = bio->next;
        if (!s->q_head)
            s->q_tail = NULL;
        bio->next = NULL;
        out[n++] = bio;
        s->q_first = (s->q_first + 1) % SF_SIMBD_QMAX;
        s->q_len--;
    }
    return (int)n;
}

int sf_simbd_init(struct sf_simbd *s, struct sf_bdev *lower, const struct sf_simbd_model *m,
                  struct sf_simbd_state *st)
{
    if (!s || !lower || !m || !st || !m->fast_bps || !m->slow_bps)
        return SF_EINVAL;
    memset(s, 0, sizeof *s);
    s->lower = lower;
    s->m = *m;
    s->st = st;
    s->bd.sector_size = lower->sector_size;
    s->bd.sector_count = lower->sector_count;
    s->bd.align_sectors = lower->align_sectors;
    s->bd.mem_align = lower->mem_align;
    s->bd.flags = lower->flags;
    s->bd.read = sim_read;
    s->bd.write = sim_write;
    s->bd.flush = sim_flush;
    s->bd.trim = lower->trim ? sim_trim : NULL;
    s->bd.submit = sim_submit;
    s->bd.poll = sim_poll;
    return 0;
}
