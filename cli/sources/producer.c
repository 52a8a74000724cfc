/* What every producer of the log sources shares (source_int.h): sleeping on the monotonic
 * clock, the run's first error, flushing the counters, waiting for ring room, pacing a
 * replay, the order of times per channel, bad input, and receiving from and binding a
 * socket. */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

void src_sleep_until(uint64_t mono_ns)
{
    struct timespec ts = { (time_t)(mono_ns / NS), (long)(mono_ns % NS) };

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void src_sleep_ns(uint64_t ns)
{
    src_sleep_until(now_ns(CLOCK_MONOTONIC) + ns);
}

void src_set_error(struct log_source *s, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&s->lock);
    if (!s->has_err) {
        va_start(ap, fmt);
        vsnprintf(s->err, sizeof s->err, fmt, ap);
        va_end(ap);
        s->has_err = 1;
    }
    pthread_mutex_unlock(&s->lock);
}

void src_flush_counters(struct producer *p)
{
    struct log_source *s = p->s;

    atomic_fetch_add_explicit(&s->offered, p->offered, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->offered_bytes, p->offered_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dropped, p->dropped, memory_order_relaxed);
    p->offered = p->offered_bytes = p->dropped = 0;
}

void src_wait_for_room(struct log_source *s, struct waiter *w, uint64_t need)
{
    for (;;) {
        unsigned e = atomic_load_explicit(&s->ring_epoch, memory_order_acquire);
        uint64_t freeb = atomic_load_explicit(&s->ring_free, memory_order_relaxed);
        if (e != w->epoch) {
            w->epoch = e;
            w->since = 0;
        }
        if (freeb >= w->since + need + w->margin || stopping(s))
            break;
        atomic_fetch_add_explicit(&s->waits, 1, memory_order_relaxed);
        src_sleep_ns(50000);
    }
    w->since += need;
}

void src_pace(struct log_source *s, struct pacer *pc, uint64_t ts)
{
    uint64_t at;

    if (s->o.fast)
        return;
    if (!pc->started) {
        pc->started = 1;
        pc->ts0 = ts;
        pc->t0 = now_ns(CLOCK_MONOTONIC);
    }
    if (ts <= pc->ts0)
        return;
    at = pc->t0 + (ts - pc->ts0);
    while (!stopping(s)) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now >= at)
            break;
        src_sleep_until(at - now > 100000000 ? now + 100000000 : at);
    }
}

int src_in_order(struct log_source *s, unsigned ch, uint64_t ts)
{
    if (s->have_last[ch] && ts < s->last_ts[ch])
        return 0;
    s->have_last[ch] = 1;
    s->last_ts[ch] = ts;
    return 1;
}

#define BAD_SHOWN_MAX 10            /* bad input lines reported one by one, then counted */

const char *src_name(const struct log_source *s)
{
    return s->path ? s->path : "stdin";
}

void src_bad_input(struct log_source *s, const char *what, uint64_t n, const char *why)
{
    atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
    if (s->bad_shown < BAD_SHOWN_MAX)
        cli_err("%s %s %" PRIu64 ": %s%s", src_name(s), what, n, why,
                ++s->bad_shown == BAD_SHOWN_MAX ? " (further bad input is only counted)" : "");
}

ssize_t src_recv_stamped(int fd, void *buf, size_t cap, uint64_t *ts, int *msg_flags)
{
    uint32_t drops;
    int have;

    return src_recv_meta(fd, buf, cap, ts, msg_flags, &drops, &have);
}

/* The control messages of one received datagram: its kernel time and drop counter. */
static void read_cmsgs(struct msghdr *mh, uint64_t *ts, uint32_t *drops, int *have_drops)
{
    struct cmsghdr *cm;

    *ts = 0;
    *have_drops = 0;
    for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec t;
            memcpy(&t, CMSG_DATA(cm), sizeof t);
            *ts = (uint64_t)t.tv_sec * NS + (uint64_t)t.tv_nsec;
        } else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL &&
                   cm->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
            memcpy(drops, CMSG_DATA(cm), sizeof *drops);
            *have_drops = 1;
        }
    }
}

/* Wait up to POLL_MS for fd to become readable: 1, or 0 (nothing: errno EAGAIN). */
static int wait_readable(int fd)
{
    struct pollfd pf = { fd, POLLIN, 0 };
    int pr = poll(&pf, 1, POLL_MS);

    if (pr == 0 || (pr < 0 && errno == EINTR)) {
        errno = EAGAIN;
        return 0;
    }
    return 1;
}

ssize_t src_recv_meta(int fd, void *buf, size_t cap, uint64_t *ts, int *msg_flags,
                      uint32_t *drops, int *have_drops)
{
    union {
        struct cmsghdr align;
        char buf[SRC_RX_CTL];
    } ctl;
    struct iovec iov = { buf, cap };
    struct msghdr mh;
    ssize_t r;

    *ts = 0;
    *have_drops = 0;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    /* read first, poll only when nothing is there: one system call a datagram while data
     * keeps coming (a busy bus), not two */
    r = recvmsg(fd, &mh, MSG_DONTWAIT);
    if (r < 0 && errno == EAGAIN) {
        if (!wait_readable(fd))
            return -1;
        mh.msg_controllen = sizeof ctl.buf;
        r = recvmsg(fd, &mh, MSG_DONTWAIT);
    }
    if (r < 0)
        return -1;
    read_cmsgs(&mh, ts, drops, have_drops);
    *msg_flags = mh.msg_flags;
    return r;
}

/* Each message's buffers are set again before every call: the kernel overwrites
 * msg_controllen (and msg_flags, msg_len) of the messages it fills. */
static int recv_batch_once(int fd, struct src_rx_batch *b, int flags)
{
    for (unsigned i = 0; i < SRC_RX_BATCH; i++) {
        struct msghdr *mh = &b->mm[i].msg_hdr;
        b->iov[i].iov_base = b->data[i];
        b->iov[i].iov_len = sizeof b->data[i];
        memset(mh, 0, sizeof *mh);
        mh->msg_iov = &b->iov[i];
        mh->msg_iovlen = 1;
        mh->msg_control = b->ctl[i].buf;
        mh->msg_controllen = sizeof b->ctl[i].buf;
    }
    return recvmmsg(fd, b->mm, SRC_RX_BATCH, flags, NULL);
}

int src_rx_blocking(int fd)
{
    struct timeval tv = { 0, POLL_MS * 1000 };
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || (fl & O_NONBLOCK))
        return 0;
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
}

int src_recv_batch(int fd, struct src_rx_batch *b, int block)
{
    int n;

    /* A blocking socket with a receive timeout: the first datagram waited for, the rest
     * taken as far as they are there (MSG_WAITFORONE): one system call per wake-up. */
    if (block)
        return recv_batch_once(fd, b, MSG_WAITFORONE);
    /* else as src_recv_meta: read first, poll only when the queue is empty */
    n = recv_batch_once(fd, b, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) {
        if (!wait_readable(fd))
            return -1;
        n = recv_batch_once(fd, b, MSG_DONTWAIT);
    }
    return n;
}

ssize_t src_rx_message(struct src_rx_batch *b, unsigned i, const uint8_t **data, uint64_t *ts,
                       int *msg_flags, uint32_t *drops, int *have_drops)
{
    read_cmsgs(&b->mm[i].msg_hdr, ts, drops, have_drops);
    *msg_flags = b->mm[i].msg_hdr.msg_flags;
    *data = b->data[i];
    return (ssize_t)b->mm[i].msg_len;
}

int src_bind_source(struct producer *p, int fd, const void *addr, socklen_t len,
                    const char *what)
{
    if (bind(fd, addr, len) < 0) {
        cli_err("%s: %s", what, strerror(errno));
        close(fd);
        return -1;
    }
    p->fd = fd;
    return 0;
}
