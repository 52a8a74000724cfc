/* Asynchronous file block device (Linux; host/bdev/uring.c, host/bdev/aio_pool.c).
 * Not part of the freestanding core.
 *
 * Wraps an open struct sf_filebd (image file or block device node, with or without
 * O_DIRECT) and adds the asynchronous pair of bdev.h: up to queue_depth requests are at
 * the device at once. Two backends give the same results:
 *   "io_uring"  liburing, one ring of queue_depth entries; used when the library was built
 *               with liburing (SF_HAVE_URING) and the kernel lets us set up a ring that
 *               supports READ, WRITE and FSYNC;
 *   "threads"   min(queue_depth, 8) worker threads doing pread/pwrite/fdatasync; used when
 *               io_uring is unavailable (not built, ENOSYS, EPERM in sandboxes, disabled by
 *               sysctl) or when SF_AIOBD_NO_URING asks for it.
 *
 * Geometry, mem_align and the read-only flag are copied from the file device at init, so
 * set the file's sector size (sf_filebd_set_sector_size) before sf_aiobd_init.
 *
 * Requests:
 *   - submit never blocks and never refuses for lack of room: requests beyond queue_depth
 *     wait in the device's FIFO (linked through bio->next) and go to the device as earlier
 *     ones complete. With io_uring they move on only inside submit and poll, so a caller
 *     that stops polling also stops the queue; the threads backend moves on by itself.
 *   - a FLUSH is started only when every request submitted before it has completed; then
 *     fdatasync (image) or fsync (block device). Requests submitted after it may start
 *     before it completes; it does not promise their durability.
 *   - short transfers are continued until the request is whole; EINTR/EAGAIN are retried.
 *     Errors land in bio->result: SF_EIO, SF_ENOSPC, SF_EROFS, SF_EINVAL (an O_DIRECT
 *     alignment the checks did not foresee).
 *   - read, write and trim are synchronous and go straight to the file device; they may be
 *     mixed with requests in flight (the caller keeps them off sectors in flight). flush
 *     first waits until every submitted request has completed (their completions stay
 *     queued for poll), then syncs the file.
 *
 * Threading: as every device, one caller thread at a time (any thread, not necessarily
 * the same one each call). The threads backend's workers run with every signal blocked,
 * so signal handlers only ever run on the caller's threads.
 *
 * Memory: the struct is caller-allocated (about 6 KiB, for the io_uring request slots);
 * the threads backend's threads and the kernel's ring are the only other resources, and
 * sf_aiobd_close releases them. The wrapped file device must stay open until then. */
#ifndef STREAMFAT_AIOBD_H
#define STREAMFAT_AIOBD_H

#include <stddef.h>
#include <stdint.h>

#include "bdev.h"
#include "filebd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_AIOBD_NO_URING 0x1u      /* use the threads backend even where io_uring works */

#define SF_AIOBD_MAX_DEPTH 256u     /* queue_depth is 1 .. SF_AIOBD_MAX_DEPTH */
#define SF_AIOBD_MAX_THREADS 8u     /* worker threads of the threads backend, at most */
#define SF_AIOBD_PRIV_SIZE 6144u    /* backend state inside struct sf_aiobd */

struct sf_aiobd {
    struct sf_bdev bd;          /* use this one; its callbacks are the device */
    struct sf_filebd *file;
    const char *backend;        /* "io_uring" or "threads" */
    unsigned queue_depth;
    /* Why io_uring is not in use: 0 when it is; SF_ENOTSUP when built without liburing or
     * asked for by SF_AIOBD_NO_URING; otherwise the failure of setting up a ring
     * (SF_ENOTSUP for ENOSYS or missing opcodes, SF_EPERM, SF_ENOMEM, ...). */
    int uring_status;
    /* Backend state; do not touch. */
    union {
        max_align_t align;
        unsigned char bytes[SF_AIOBD_PRIV_SIZE];
    } priv;
};

/* Set up the device over the open file device f. queue_depth 1..SF_AIOBD_MAX_DEPTH.
 * Returns 0, SF_EINVAL (arguments), or SF_ENOMEM / SF_EIO when not even the threads
 * backend can start. On error nothing is left to release. */
int sf_aiobd_init(struct sf_aiobd *a, struct sf_filebd *f, unsigned queue_depth,
                  unsigned flags);

/* Wait for every submitted request to complete (completed requests not yet polled are
 * left as they are: their result is set, the caller owns them), then release the ring or
 * the threads. Neither flushes nor closes the file device. */
int sf_aiobd_close(struct sf_aiobd *a);

#ifdef __cplusplus
}
#endif

#endif
