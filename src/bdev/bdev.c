/* Block device wrappers: argument checks in one place, the synchronous fallback of
 * submit/poll, and the window device (a partition seen as a device of its own).
 *
 * Sections: argument checks; synchronous wrappers; asynchronous wrappers and fallback;
 * window device. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/bdev.h"
#include "util/div64.h"

/* ---- argument checks ---- */

/* count sectors at lba lie inside the device; count 0 is refused (a caller bug). */
static int range_ok(const struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    return count != 0 && lba <= bd->sector_count && count <= bd->sector_count - lba;
}

static int buf_ok(const struct sf_bdev *bd, const void *buf)
{
    if (!buf)
        return 0;
    if (bd->mem_align > 1 && ((uintptr_t)buf & (uintptr_t)(bd->mem_align - 1)) != 0)
        return 0;
    return 1;
}

/* ---- synchronous wrappers ---- */

int sf_bdev_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    if (!bd || !buf_ok(bd, buf) || !range_ok(bd, lba, count))
        return SF_EINVAL;
    if (!bd->read)
        return SF_ENOTSUP;
    return bd->read(bd, lba, buf, count);
}

int sf_bdev_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    if (!bd || !buf_ok(bd, buf) || !range_ok(bd, lba, count))
        return SF_EINVAL;
    if ((bd->flags & SF_BDEV_READONLY) || !bd->write)
        return SF_EROFS;
    return bd->write(bd, lba, buf, count);
}

int sf_bdev_flush(struct sf_bdev *bd)
{
    if (!bd)
        return SF_EINVAL;
    if (!bd->flush)
        return 0;           /* a device without a cache has nothing to make durable */
    return bd->flush(bd);
}

int sf_bdev_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    if (!bd)
        return SF_EINVAL;
    if (count == 0)
        return 0;
    if (!range_ok(bd, lba, count))
        return SF_EINVAL;
    if (bd->flags & SF_BDEV_READONLY)
        return SF_EROFS;
    if (!bd->trim)
        return 0;
    return bd->trim(bd, lba, count);
}

/* ---- asynchronous wrappers ---- */

/* The checks submit makes before a request is accepted; a refused request is not queued. */
static int bio_check(const struct sf_bdev *bd, const struct sf_bio *bio)
{
    switch (bio->op) {
    case SF_BIO_READ:
    case SF_BIO_WRITE:
        if (!buf_ok(bd, bio->buf) || !range_ok(bd, bio->lba, bio->count))
            return SF_EINVAL;
        if (bio->op == SF_BIO_WRITE && (bd->flags & SF_BDEV_READONLY))
            return SF_EROFS;
        return 0;
    case SF_BIO_FLUSH:
        return 0;           /* lba and count are ignored */
    default:
        return SF_EINVAL;
    }
}

/* Without submit/poll the request runs now and waits on bd->done_head..done_tail, so
 * completions come back from poll in submission order (which also satisfies the FLUSH
 * ordering rule trivially). */
int sf_bdev_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    int err;

    if (!bd || !bio)
        return SF_EINVAL;
    if ((err = bio_check(bd, bio)) != 0)
        return err;
    if (bd->submit && bd->poll)
        return bd->submit(bd, bio);

    switch (bio->op) {
    case SF_BIO_READ:
        bio->result = sf_bdev_read(bd, bio->lba, bio->buf, bio->count);
        break;
    case SF_BIO_WRITE:
        bio->result = sf_bdev_write(bd, bio->lba, bio->buf, bio->count);
        break;
    default:
        bio->result = sf_bdev_flush(bd);
        break;
    }
    bio->next = NULL;
    if (bd->done_tail)
        bd->done_tail->next = bio;
    else
        bd->done_head = bio;
    bd->done_tail = bio;
    return 0;
}

int sf_bdev_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    unsigned n = 0;

    if (!bd || (!out && max))
        return SF_EINVAL;
    if (bd->submit && bd->poll)
        return bd->poll(bd, out, max, wait);

    /* Nothing is ever in flight here: every request completed at submit, so waiting
     * would never end differently. */
    while (n < max && bd->done_head) {
        struct sf_bio *bio = bd->done_head;
        bd->done_head = bio->next;
        bio->next = NULL;
        out[n++] = bio;
    }
    if (!bd->done_head)
        bd->done_tail = NULL;
    return (int)n;
}

/* ---- window device ---- */

static struct sf_bdev_window *win(struct sf_bdev *bd)
{
    return (struct sf_bdev_window *)bd;
}

static int win_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    return sf_bdev_read(win(bd)->parent, win(bd)->first + lba, buf, count);
}

static int win_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    return sf_bdev_write(win(bd)->parent, win(bd)->first + lba, buf, count);
}

static int win_flush(struct sf_bdev *bd)
{
    return sf_bdev_flush(win(bd)->parent);
}

static int win_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    return sf_bdev_trim(win(bd)->parent, win(bd)->first + lba, count);
}

/* Requests travel to the parent with their LBA shifted and come back shifted again.
 * While a window is used asynchronously, every asynchronous request on the parent must go
 * through this window (poll cannot tell whose completion it is). */
static int win_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    uint64_t first = bio->op == SF_BIO_FLUSH ? 0 : win(bd)->first;
    int err;

    bio->lba += first;
    err = sf_bdev_submit(win(bd)->parent, bio);
    if (err)
        bio->lba -= first;
    return err;
}

static int win_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    int n = sf_bdev_poll(win(bd)->parent, out, max, wait);
    for (int i = 0; i < n; i++)
        if (out[i]->op != SF_BIO_FLUSH)
            out[i]->lba -= win(bd)->first;
    return n;
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int sf_bdev_window_init(struct sf_bdev_window *w, struct sf_bdev *parent,
                        uint64_t first, uint64_t count)
{
    uint32_t align;

    if (!w || !parent || !range_ok(parent, first, count))
        return SF_EINVAL;
    memset(w, 0, sizeof(*w));
    w->parent = parent;
    w->first = first;
    w->bd.sector_size = parent->sector_size;
    w->bd.sector_count = count;
    w->bd.mem_align = parent->mem_align;
    w->bd.flags = parent->flags;
    /* A window that starts off the parent's alignment grid keeps only the part of the
     * alignment that still lines up (gcd), so "aligned in the window" stays true. */
    align = parent->align_sectors ? parent->align_sectors : 1;
    uint32_t off = sf_umod64(first, align);
    if (off)
        align = gcd32(align, off);
    w->bd.align_sectors = align;
    w->bd.read = win_read;
    /* A read-only core (SF_READONLY) never writes, so its windows are read-only (nothing
     * to flush either): a program linked against it then carries no write, flush, trim or
     * asynchronous path. */
    if (!SF_HAVE_WRITE) {
        w->bd.flags |= SF_BDEV_READONLY;
        return 0;
    }
    w->bd.write = win_write;
    w->bd.flush = win_flush;
    w->bd.trim = win_trim;
    if (parent->submit && parent->poll) {
        w->bd.submit = win_submit;
        w->bd.poll = win_poll;
    }
    return 0;
}
