/* Fault-injection device for tests: wraps another device, counts operations, fails reads
 * and writes on command and simulates a power cut (contract in include/streamfat/bdev.h).
 *
 * Model: the lower device is the medium; the overlay is the volatile write cache. Every
 * write since the last flush lives in the overlay (one entry per sector, the newest data
 * for that LBA) and reaches the medium at flush, when the overlay fills (the device
 * "flushed by itself"), or at a cut according to the policy. Reads see the overlay.
 *
 * Overlay memory (mem passed to sf_faultbd_init): entries of (u64 LE lba, sector_size
 * bytes of data), so it holds mem_size / (8 + sector_size) sectors.
 *
 * Write numbering: c.writes counts every write call made while the device is alive
 * (including ones that fail by injection, which also move the position that seq_writes
 * and jumps compare against); eio_after_writes and cut_after_writes compare
 * against it, so resetting the counters restarts that count.
 *
 * TEAR: the PRNG (xorshift32) is seeded from f->seed at each cut, so a cut's outcome
 * depends only on the seed and the overlay contents. Each unsynced sector is kept,
 * dropped or torn with equal chance; torn means a prefix of 1..sector_size-1 new bytes
 * over the old sector. If f->bd.flags has SF_BDEV_ATOMIC_SECTOR (copied from the lower
 * device at init; the test may set or clear it), sectors are only kept or dropped. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/bdev.h"
#include "util/le.h"

#define FAULT_TEAR_MAX 4096u        /* largest sector a torn write can be built for */

static struct sf_faultbd *fault(struct sf_bdev *bd)
{
    return (struct sf_faultbd *)bd;
}

/* ---- overlay ---- */

static size_t ent_size(const struct sf_faultbd *f)
{
    return (size_t)8 + f->bd.sector_size;
}

static uint8_t *ent(const struct sf_faultbd *f, size_t i)
{
    return f->ovl + i * ent_size(f);
}

static uint64_t prev_end_get(const struct sf_faultbd *f)
{
    return f->next_lba;
}

static void prev_end_set(struct sf_faultbd *f, uint64_t v)
{
    f->next_lba = v;
}

static uint8_t *ovl_find(const struct sf_faultbd *f, uint64_t lba)
{
    for (size_t i = 0; i < f->ovl_n; i++)
        if (ld_le64(ent(f, i)) == lba)
            return ent(f, i);
    return NULL;
}

/* Write every entry to the medium and empty the overlay. On error the overlay stays as it
 * is (entries already written are simply written again next time). */
static int ovl_drain(struct sf_faultbd *f)
{
    for (size_t i = 0; i < f->ovl_n; i++) {
        uint8_t *e = ent(f, i);
        int err = sf_bdev_write(f->lower, ld_le64(e), e + 8, 1);
        if (err)
            return err;
    }
    f->ovl_n = 0;
    return 0;
}

static int ovl_put(struct sf_faultbd *f, uint64_t lba, const uint8_t *buf, uint32_t count)
{
    uint32_t ss = f->bd.sector_size;

    if (f->ovl_cap == 0)
        return sf_bdev_write(f->lower, lba, buf, count);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *e = ovl_find(f, lba + i);
        if (!e) {
            if (f->ovl_n == f->ovl_cap) {
                int err = ovl_drain(f);
                if (err)
                    return err;
            }
            e = ent(f, f->ovl_n++);
            st_le64(e, lba + i);
        }
        memcpy(e + 8, buf + (size_t)i * ss, ss);
    }
    return 0;
}

/* ---- device callbacks ---- */

static int fault_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sf_faultbd *f = fault(bd);
    uint32_t ss = bd->sector_size;
    int err;

    if (f->dead)
        return SF_EIO;
    f->c.reads++;
    if (f->eio_read_lba != UINT64_MAX && f->eio_read_lba - lba < count)
        return SF_EIO;      /* unsigned: lba <= eio_read_lba < lba + count */
    if ((err = sf_bdev_read(f->lower, lba, buf, count)) != 0)
        return err;
    for (size_t i = 0; i < f->ovl_n; i++) {
        const uint8_t *e = ent(f, i);
        uint64_t l = ld_le64(e);
        if (l - lba < count)
            memcpy((uint8_t *)buf + (size_t)(l - lba) * ss, e + 8, ss);
    }
    f->c.sectors_read += count;
    return 0;
}

static int fault_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sf_faultbd *f = fault(bd);
    uint64_t n;
    int err;

    if (f->dead)
        return SF_EIO;
    n = ++f->c.writes;
    if (prev_end_get(f) == lba)
        f->c.seq_writes++;
    else
        f->c.jumps++;
    prev_end_set(f, lba + count);

    if (f->eio_after_writes && n >= f->eio_after_writes)
        err = SF_EIO;
    else if (f->eio_write_lba != UINT64_MAX && f->eio_write_lba - lba < count)
        err = SF_EIO;
    else
        err = ovl_put(f, lba, buf, count);
    if (!err)
        f->c.sectors_written += count;

    /* The cut comes right after the write: it was accepted, and its data is unsynced. */
    if (f->cut_after_writes && n >= f->cut_after_writes)
        sf_faultbd_cut(f);
    return err;
}

static int fault_flush(struct sf_bdev *bd)
{
    struct sf_faultbd *f = fault(bd);
    int err;

    if (f->dead)
        return SF_EIO;
    f->c.flushes++;
    if ((err = ovl_drain(f)) != 0)
        return err;
    return sf_bdev_flush(f->lower);
}

static int fault_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    struct sf_faultbd *f = fault(bd);
    size_t i = 0;

    if (f->dead)
        return SF_EIO;
    f->c.trims++;
    /* Unsynced data of trimmed sectors is forgotten: reads then return the medium's old
     * data or zeros, which the trim contract allows. */
    while (i < f->ovl_n) {
        if (ld_le64(ent(f, i)) - lba < count) {
            f->ovl_n--;
            if (i != f->ovl_n)
                memcpy(ent(f, i), ent(f, f->ovl_n), ent_size(f));
        } else {
            i++;
        }
    }
    return sf_bdev_trim(f->lower, lba, count);
}

/* ---- public ---- */

int sf_faultbd_init(struct sf_faultbd *f, struct sf_bdev *lower, void *mem, size_t mem_size)
{
    if (!f || !lower || lower->sector_size == 0 || (!mem && mem_size))
        return SF_EINVAL;
    memset(f, 0, sizeof(*f));
    f->lower = lower;
    f->bd.sector_size = lower->sector_size;
    f->bd.sector_count = lower->sector_count;
    f->bd.align_sectors = lower->align_sectors ? lower->align_sectors : 1;
    f->bd.mem_align = lower->mem_align ? lower->mem_align : 1;
    f->bd.flags = lower->flags;
    f->bd.read = fault_read;
    f->bd.write = fault_write;
    f->bd.flush = fault_flush;
    f->bd.trim = fault_trim;
    f->eio_read_lba = UINT64_MAX;
    f->eio_write_lba = UINT64_MAX;
    f->policy = SF_FAULT_KEEP;
    f->next_lba = UINT64_MAX;
    if (mem) {
        f->ovl = mem;
        f->ovl_cap = mem_size / ent_size(f);
    }
    return 0;
}

static uint32_t xorshift32(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

void sf_faultbd_cut(struct sf_faultbd *f)
{
    uint8_t tmp[FAULT_TEAR_MAX];
    uint32_t ss = f->bd.sector_size;
    uint32_t s = f->seed ^ 0x9E3779B9u;
    unsigned ways = (f->bd.flags & SF_BDEV_ATOMIC_SECTOR) || ss > FAULT_TEAR_MAX || ss < 2 ? 2 : 3;

    if (!s)
        s = 0x2545F491u;
    /* Errors of the medium are ignored here: the power is gone either way. */
    for (size_t i = 0; i < f->ovl_n; i++) {
        uint8_t *e = ent(f, i);
        uint64_t lba = ld_le64(e);
        unsigned what = f->policy == SF_FAULT_KEEP ? 0 : f->policy == SF_FAULT_DROP ? 1
                      : xorshift32(&s) % ways;
        if (what == 0) {
            (void)sf_bdev_write(f->lower, lba, e + 8, 1);
        } else if (what == 2) {
            uint32_t k = 1 + xorshift32(&s) % (ss - 1);
            if (sf_bdev_read(f->lower, lba, tmp, 1) == 0) {
                memcpy(tmp, e + 8, k);
                (void)sf_bdev_write(f->lower, lba, tmp, 1);
            }
        }
    }
    f->ovl_n = 0;
    (void)sf_bdev_flush(f->lower);
    f->dead = 1;
}

void sf_faultbd_revive(struct sf_faultbd *f)
{
    f->dead = 0;
    f->cut_after_writes = 0;
    prev_end_set(f, UINT64_MAX);
}
