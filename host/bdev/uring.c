/* The asynchronous file device (include/streamfat/aiobd.h): entry points, the synchronous
 * callbacks shared by both backends, and the io_uring backend. Linux only, not part of the
 * core. Built without liburing (SF_HAVE_URING undefined) it always uses the threads
 * backend of aio_pool.c.
 *
 * Sections: synchronous callbacks; io_uring backend; init/close. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>

#ifdef SF_HAVE_URING
#include <liburing.h>
#endif

#include "streamfat/sf.h"
#include "streamfat/aiobd.h"
#include "aiobd_int.h"

static struct sf_aiobd *aiobd(struct sf_bdev *bd)
{
    return (struct sf_aiobd *)bd;
}

/* ---- synchronous callbacks: straight to the file device ---- */

static int aio_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sf_bdev *lo = &aiobd(bd)->file->bd;
    return lo->read(lo, lba, buf, count);
}

static int aio_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sf_bdev *lo = &aiobd(bd)->file->bd;
    return lo->write(lo, lba, buf, count);
}

static int aio_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    struct sf_bdev *lo = &aiobd(bd)->file->bd;
    return lo->trim ? lo->trim(lo, lba, count) : 0;
}

/* ---- io_uring backend ----
 *
 * Each request at the device holds a slot (its index is the SQE's user_data) recording
 * how many bytes are done, so a short transfer continues where it stopped. At most
 * queue_depth slots are busy, so neither ring can overflow (the kernel sizes the SQ ring
 * to at least queue_depth and the CQ ring to twice that). Requests without a slot wait in
 * a FIFO, and a FLUSH at its head waits for busy == 0 (the same rule as the threads
 * backend, see there). Everything here runs on the caller's thread. */
#ifdef SF_HAVE_URING

struct slot {
    struct sf_bio *bio;
    uint64_t done;              /* bytes transferred so far */
};

struct uring {
    struct io_uring ring;
    struct sf_bio *pend_head, *pend_tail;
    struct sf_bio *done_head, *done_tail;
    unsigned busy;              /* slots in use */
    unsigned nfree;
    int failed;                 /* io_uring_submit failed for good: every call fails so */
    uint16_t free_idx[SF_AIOBD_MAX_DEPTH];
    struct slot slot[SF_AIOBD_MAX_DEPTH];
};

_Static_assert(sizeof(struct uring) <= SF_AIOBD_PRIV_SIZE, "SF_AIOBD_PRIV_SIZE too small");

static struct uring *uring_of(struct sf_aiobd *a)
{
    return (struct uring *)(void *)a->priv.bytes;
}

/* Errors of a completed request, as file.c maps those of pread/pwrite. */
static int err_io(int e)
{
    switch (e) {
    case ENOSPC: return SF_ENOSPC;
    case EROFS:  return SF_EROFS;
    case EINVAL: return SF_EINVAL;
    default:     return SF_EIO;
    }
}

static void done_push(struct uring *u, struct sf_bio *bio)
{
    bio->next = NULL;
    if (u->done_tail)
        u->done_tail->next = bio;
    else
        u->done_head = bio;
    u->done_tail = bio;
}

static void complete(struct uring *u, unsigned idx, int result)
{
    struct sf_bio *bio = u->slot[idx].bio;

    bio->result = result;
    u->slot[idx].bio = NULL;
    u->free_idx[u->nfree++] = (uint16_t)idx;
    u->busy--;
    done_push(u, bio);
}

/* Queue the SQE for (the rest of) slot idx. A free SQE always exists: every prepared and
 * not yet consumed SQE belongs to a busy slot, and there are at most queue_depth <=
 * SQ entries of those. */
static void prep(struct sf_aiobd *a, unsigned idx)
{
    struct uring *u = uring_of(a);
    struct slot *s = &u->slot[idx];
    struct sf_bio *bio = s->bio;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    int fd = a->file->fd;

    if (!sqe) {
        complete(u, idx, SF_EIO);
        return;
    }
    if (bio->op == SF_BIO_FLUSH) {
        io_uring_prep_fsync(sqe, fd, a->file->is_blockdev ? 0 : IORING_FSYNC_DATASYNC);
    } else {
        uint64_t total = (uint64_t)bio->count * a->bd.sector_size;
        uint64_t left = total - s->done;
        unsigned len = left > SF_AIO_CHUNK ? SF_AIO_CHUNK : (unsigned)left;
        uint64_t off = bio->lba * a->bd.sector_size + s->done;
        uint8_t *p = (uint8_t *)bio->buf + s->done;

        if (bio->op == SF_BIO_READ)
            io_uring_prep_read(sqe, fd, p, len, off);
        else
            io_uring_prep_write(sqe, fd, p, len, off);
    }
    sqe->user_data = idx;
}

/* Move requests from the FIFO to the ring while slots last (a FLUSH only onto an idle
 * ring), then hand every prepared SQE to the kernel. */
static int issue(struct sf_aiobd *a)
{
    struct uring *u = uring_of(a);

    while (u->pend_head && u->busy < a->queue_depth &&
           (u->pend_head->op != SF_BIO_FLUSH || u->busy == 0)) {
        struct sf_bio *bio = u->pend_head;
        unsigned idx;

        u->pend_head = bio->next;
        if (!u->pend_head)
            u->pend_tail = NULL;
        idx = u->free_idx[--u->nfree];
        u->slot[idx].bio = bio;
        u->slot[idx].done = 0;
        u->busy++;
        prep(a, idx);
    }
    while (io_uring_sq_ready(&u->ring) > 0) {
        int r = io_uring_submit(&u->ring);
        if (r >= 0)
            break;
        if (r == -EINTR)
            continue;
        if (r == -EAGAIN || r == -EBUSY)
            break;              /* the kernel is short of resources: next time */
        u->failed = SF_EIO;
        return u->failed;
    }
    return 0;
}

/* One completion: finish the request, or queue the rest of a short transfer. */
static void reap_one(struct sf_aiobd *a, struct io_uring_cqe *cqe)
{
    struct uring *u = uring_of(a);
    unsigned idx = (unsigned)cqe->user_data;
    int res = cqe->res;
    struct slot *s;

    io_uring_cqe_seen(&u->ring, cqe);
    if (idx >= SF_AIOBD_MAX_DEPTH || !u->slot[idx].bio)
        return;                 /* not ours; cannot happen */
    s = &u->slot[idx];
    if (res == -EINTR || res == -EAGAIN) {
        prep(a, idx);
        return;
    }
    if (res < 0) {
        complete(u, idx, err_io(-res));
        return;
    }
    if (s->bio->op == SF_BIO_FLUSH) {
        complete(u, idx, 0);
        return;
    }
    if (res == 0) {
        complete(u, idx, SF_EIO);   /* end of file or device: it shrank under us */
        return;
    }
    s->done += (unsigned)res;
    if (s->done < (uint64_t)s->bio->count * a->bd.sector_size)
        prep(a, idx);
    else
        complete(u, idx, 0);
}

/* Hand the kernel any SQE still unsubmitted and block until a completion is ready.
 * Interruptions and transient shortages return 0: the callers loop. */
static int wait_one(struct uring *u)
{
    int r = io_uring_submit_and_wait(&u->ring, 1);

    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY && r != -ETIME)
        return u->failed = SF_EIO;
    return 0;
}

/* Reap what is ready; with wait, block until at least one request has completed (or
 * nothing is in flight). Then refill the ring. */
static int progress(struct sf_aiobd *a, int wait)
{
    struct uring *u = uring_of(a);
    struct io_uring_cqe *cqe;
    int err;

    for (;;) {
        while (io_uring_peek_cqe(&u->ring, &cqe) == 0)
            reap_one(a, cqe);
        if ((err = issue(a)) != 0)
            return err;
        if (!wait || u->done_head || u->busy == 0)
            return 0;
        if ((err = wait_one(u)) != 0)
            return err;
    }
}

static int uring_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    struct sf_aiobd *a = aiobd(bd);
    struct uring *u = uring_of(a);

    if (u->failed)
        return u->failed;
    bio->next = NULL;
    bio->result = 0;
    if (u->pend_tail)
        u->pend_tail->next = bio;
    else
        u->pend_head = bio;
    u->pend_tail = bio;
    /* Take completions first: they may free the slot this request needs. */
    (void)progress(a, 0);
    return 0;                   /* queued; a ring failure shows in poll */
}

static int uring_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    struct sf_aiobd *a = aiobd(bd);
    struct uring *u = uring_of(a);
    unsigned n = 0;
    int err = progress(a, wait && max);

    while (n < max && u->done_head) {
        struct sf_bio *bio = u->done_head;
        u->done_head = bio->next;
        bio->next = NULL;
        out[n++] = bio;
    }
    if (!u->done_head)
        u->done_tail = NULL;
    return n ? (int)n : err;
}

/* Wait until nothing is pending or at the device; completions stay on the done list. */
static int uring_drain(struct sf_aiobd *a)
{
    struct uring *u = uring_of(a);
    struct io_uring_cqe *cqe;
    int err;

    while (u->busy || u->pend_head) {
        if ((err = issue(a)) != 0)
            return err;
        if ((err = wait_one(u)) != 0)
            return err;
        while (io_uring_peek_cqe(&u->ring, &cqe) == 0)
            reap_one(a, cqe);
    }
    return 0;
}

static int uring_flush(struct sf_bdev *bd)
{
    struct sf_aiobd *a = aiobd(bd);
    struct sf_bdev *lo = &a->file->bd;
    int err = uring_drain(a);

    return err ? err : lo->flush(lo);
}

static int init_err(int e)
{
    switch (e) {
    case ENOMEM: return SF_ENOMEM;
    case EPERM:
    case EACCES: return SF_EPERM;
    case ENOSYS:
    case EINVAL: return SF_ENOTSUP;
    default:     return SF_EIO;
    }
}

/* 0 when a ring with READ, WRITE and FSYNC is ready, else why not (nothing left open). */
static int uring_start(struct sf_aiobd *a)
{
    struct uring *u = uring_of(a);
    struct io_uring_probe *probe;
    int r, ok;

    memset(u, 0, sizeof(*u));
    r = io_uring_queue_init(a->queue_depth, &u->ring, 0);
    if (r < 0)
        return init_err(-r);
    /* Kernels before 5.6 set up rings without the READ/WRITE opcodes. */
    probe = io_uring_get_probe_ring(&u->ring);
    ok = probe && io_uring_opcode_supported(probe, IORING_OP_READ) &&
         io_uring_opcode_supported(probe, IORING_OP_WRITE) &&
         io_uring_opcode_supported(probe, IORING_OP_FSYNC);
    if (probe)
        io_uring_free_probe(probe);
    if (!ok) {
        io_uring_queue_exit(&u->ring);
        return SF_ENOTSUP;
    }
    for (unsigned i = 0; i < a->queue_depth; i++)
        u->free_idx[u->nfree++] = (uint16_t)(a->queue_depth - 1 - i);
    a->backend = "io_uring";
    a->bd.submit = uring_submit;
    a->bd.poll = uring_poll;
    a->bd.flush = uring_flush;
    return 0;
}

static void uring_stop(struct sf_aiobd *a)
{
    struct uring *u = uring_of(a);

    (void)uring_drain(a);
    io_uring_queue_exit(&u->ring);
}

#endif /* SF_HAVE_URING */

/* ---- init / close ---- */

int sf_aiobd_init(struct sf_aiobd *a, struct sf_filebd *f, unsigned queue_depth,
                  unsigned flags)
{
    int err;

    if (!a)
        return SF_EINVAL;
    memset(a, 0, sizeof(*a));
    if (!f || f->fd < 0 || !f->bd.read || queue_depth < 1 ||
        queue_depth > SF_AIOBD_MAX_DEPTH || (flags & ~SF_AIOBD_NO_URING))
        return SF_EINVAL;
    a->file = f;
    a->queue_depth = queue_depth;
    a->bd.sector_size = f->bd.sector_size;
    a->bd.sector_count = f->bd.sector_count;
    a->bd.align_sectors = f->bd.align_sectors;
    a->bd.mem_align = f->bd.mem_align;
    a->bd.flags = f->bd.flags;
    a->bd.read = aio_read;
    a->bd.write = aio_write;
    a->bd.trim = aio_trim;

#ifdef SF_HAVE_URING
    if (flags & SF_AIOBD_NO_URING)
        a->uring_status = SF_ENOTSUP;
    else if ((a->uring_status = uring_start(a)) == 0)
        return 0;
#else
    a->uring_status = SF_ENOTSUP;
#endif
    err = sf_aio_pool_start(a);
    if (err) {
        memset(a, 0, sizeof(*a));
        return err;
    }
    return 0;
}

int sf_aiobd_close(struct sf_aiobd *a)
{
    if (!a || !a->bd.submit)
        return SF_EINVAL;
#ifdef SF_HAVE_URING
    if (a->uring_status == 0)
        uring_stop(a);
    else
#endif
        sf_aio_pool_stop(a);
    a->bd.read = NULL;
    a->bd.write = NULL;
    a->bd.flush = NULL;
    a->bd.trim = NULL;
    a->bd.submit = NULL;
    a->bd.poll = NULL;
    return 0;
}
