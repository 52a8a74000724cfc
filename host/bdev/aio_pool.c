/* The threads backend of the asynchronous file device (include/streamfat/aiobd.h): used
 * where io_uring is not. Linux/POSIX only, not part of the core.
 *
 * Requests wait in a FIFO (linked through bio->next) until a worker takes them; a worker
 * runs one through the file device's own callbacks (pread/pwrite loops that retry EINTR
 * and continue short transfers, fdatasync/fsync) and appends it to the done list, which
 * poll empties. Everything below the mutex is shared between the caller and the workers.
 *
 * Invariants (under mu):
 *   - a request is in exactly one of: pending list, a worker's hands (counted by active),
 *     done list, or back with the caller;
 *   - a FLUSH at the head of the pending list is taken only when active == 0: since the
 *     list is FIFO, every request submitted before it has then completed. Nothing behind
 *     it is taken before it, so it cannot be starved; once it is taken, later requests run
 *     alongside the sync. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/aiobd.h"
#include "aiobd_int.h"

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t work;        /* workers: the head became takeable, or stop */
    pthread_cond_t done;        /* caller: a request completed */
    pthread_t thr[SF_AIOBD_MAX_THREADS];
    unsigned nthreads;
    struct sf_bio *pend_head, *pend_tail;
    struct sf_bio *done_head, *done_tail;
    unsigned active;            /* taken by a worker, not yet on the done list */
    int stop;
    struct sf_bdev *lower;      /* the file device */
};

_Static_assert(sizeof(struct pool) <= SF_AIOBD_PRIV_SIZE, "SF_AIOBD_PRIV_SIZE too small");

static struct pool *pool_of(struct sf_bdev *bd)
{
    return (struct pool *)(void *)((struct sf_aiobd *)bd)->priv.bytes;
}

/* Under mu: may a worker take the head now? */
static int takeable(const struct pool *p)
{
    return p->pend_head && (p->pend_head->op != SF_BIO_FLUSH || p->active == 0);
}

static void run(struct pool *p, struct sf_bio *bio)
{
    switch (bio->op) {
    case SF_BIO_READ:
        bio->result = p->lower->read(p->lower, bio->lba, bio->buf, bio->count);
        break;
    case SF_BIO_WRITE:
        bio->result = p->lower->write(p->lower, bio->lba, bio->buf, bio->count);
        break;
    default:
        bio->result = p->lower->flush(p->lower);
        break;
    }
}

static void *worker(void *arg)
{
    struct pool *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct sf_bio *bio;

        while (!p->stop && !takeable(p))
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop)
            break;              /* close drains the lists before it stops us */
        bio = p->pend_head;
        p->pend_head = bio->next;
        if (!p->pend_head)
            p->pend_tail = NULL;
        p->active++;
        /* One signal per submit may have woken a worker that was busy; pass it on. */
        if (takeable(p))
            pthread_cond_signal(&p->work);
        pthread_mutex_unlock(&p->mu);

        run(p, bio);

        pthread_mutex_lock(&p->mu);
        p->active--;
        bio->next = NULL;
        if (p->done_tail)
            p->done_tail->next = bio;
        else
            p->done_head = bio;
        p->done_tail = bio;
        pthread_cond_broadcast(&p->done);
        /* A FLUSH waiting for active == 0 is taken by this worker on its next turn. */
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int pool_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    struct pool *p = pool_of(bd);

    bio->next = NULL;
    bio->result = 0;
    pthread_mutex_lock(&p->mu);
    if (p->pend_tail)
        p->pend_tail->next = bio;
    else
        p->pend_head = bio;
    p->pend_tail = bio;
    if (takeable(p))
        pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

static int pool_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    struct pool *p = pool_of(bd);
    unsigned n = 0;

    pthread_mutex_lock(&p->mu);
    if (wait && max)
        while (!p->done_head && (p->pend_head || p->active))
            pthread_cond_wait(&p->done, &p->mu);
    while (n < max && p->done_head) {
        struct sf_bio *bio = p->done_head;
        p->done_head = bio->next;
        bio->next = NULL;
        out[n++] = bio;
    }
    if (!p->done_head)
        p->done_tail = NULL;
    pthread_mutex_unlock(&p->mu);
    return (int)n;
}

/* Under mu: wait until every submitted request has completed. */
static void drain(struct pool *p)
{
    while (p->pend_head || p->active)
        pthread_cond_wait(&p->done, &p->mu);
}

static int pool_flush(struct sf_bdev *bd)
{
    struct pool *p = pool_of(bd);

    pthread_mutex_lock(&p->mu);
    drain(p);
    pthread_mutex_unlock(&p->mu);
    return p->lower->flush(p->lower);
}

static void stop_workers(struct pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->thr[i], NULL);
    p->nthreads = 0;
}

int sf_aio_pool_start(struct sf_aiobd *a)
{
    struct pool *p = (struct pool *)(void *)a->priv.bytes;
    unsigned want = a->queue_depth < SF_AIOBD_MAX_THREADS ? a->queue_depth
                                                          : SF_AIOBD_MAX_THREADS;
    sigset_t all, old;
    int err = 0;

    memset(p, 0, sizeof(*p));
    p->lower = &a->file->bd;
    if (pthread_mutex_init(&p->mu, NULL))
        return SF_ENOMEM;
    if (pthread_cond_init(&p->work, NULL)) {
        pthread_mutex_destroy(&p->mu);
        return SF_ENOMEM;
    }
    if (pthread_cond_init(&p->done, NULL)) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        return SF_ENOMEM;
    }
    /* Workers inherit this mask: signals stay with the caller's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (unsigned i = 0; i < want; i++) {
        if (pthread_create(&p->thr[i], NULL, worker, p)) {
            err = SF_ENOMEM;
            break;
        }
        p->nthreads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        stop_workers(p);
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        return err;
    }
    a->backend = "threads";
    a->bd.submit = pool_submit;
    a->bd.poll = pool_poll;
    a->bd.flush = pool_flush;
    return 0;
}

void sf_aio_pool_stop(struct sf_aiobd *a)
{
    struct pool *p = (struct pool *)(void *)a->priv.bytes;

    pthread_mutex_lock(&p->mu);
    drain(p);
    pthread_mutex_unlock(&p->mu);
    stop_workers(p);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
}
