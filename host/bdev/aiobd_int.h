/* Shared between the two backends of the asynchronous file device (include/streamfat/aiobd.h):
 * host/bdev/uring.c (the entry points and the io_uring backend) and
 * host/bdev/aio_pool.c (the threads backend). Linux only. */
#ifndef SF_BDEV_AIOBD_INT_H
#define SF_BDEV_AIOBD_INT_H

#include "streamfat/aiobd.h"

/* Largest single transfer handed to the kernel; longer requests continue in steps, as
 * short transfers do. */
#define SF_AIO_CHUNK (1u << 30)

/* The threads backend: fills a->bd.submit, poll, flush and a->backend. 0, SF_ENOMEM when a
 * thread cannot be started (then nothing is left running). */
int sf_aio_pool_start(struct sf_aiobd *a);
/* Waits for the requests in flight, stops and joins the workers. */
void sf_aio_pool_stop(struct sf_aiobd *a);

#endif
