/* can:IFACE[,IFACE...]: SocketCAN raw sockets, CAN FD on, one producer per interface.
 * canpair:FD[,FD...] (hidden, for tests): the same reading loop on inherited descriptors
 * delivering struct can_frame / canfd_frame datagrams, e.g. one end of
 * socketpair(AF_UNIX, SOCK_SEQPACKET).
 *
 * What the kernel tells us besides the frames (docs/LOG.md "Live CAN interfaces"):
 *  - times: SO_TIMESTAMPNS, the skb's receive time, so a reader that falls behind keeps
 *    the frames' spacing;
 *  - drops: SO_RXQ_OVFL, the socket's count of frames its full receive queue refused
 *    (cumulative, in every datagram queued after the first drop); each increase becomes a
 *    DROP record with SF_DROP_SOURCE on the interface's channel, between the times of the
 *    frames around the loss; the count at the end from SO_MEMINFO. The receive buffer is
 *    sized (SO_RCVBUFFORCE as root) so that this stays rare;
 *  - an interface going down: ENETDOWN from the receive; an ANNOTATION record on its
 *    channel, and another when it is up again (the socket stays bound; frames resume).
 * Reading costs one system call per wake-up, not per frame: recvmmsg batches with
 * per-message control messages (src_recv_batch), and on a busy bus a short wait between
 * batches so that frames gather (docs/BENCHMARKS.md, capture against candump -l). */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/can.h>
#include <linux/can/raw.h>

#ifndef AF_CAN
#define AF_CAN 29
#endif
#ifndef SOL_CAN_RAW
#define SOL_CAN_RAW (SOL_CAN_BASE + CAN_RAW)
#endif
#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define COALESCE_NS 1000000u        /* can_main: a burst's frames gather this long */

static int can_match(const char *spec)
{
    return strncmp(spec, "can:", 4) == 0 && spec[4];
}

static int canpair_match(const char *spec)
{
    return strncmp(spec, "canpair:", 8) == 0 && spec[8];
}

/* The interface (can:) or descriptor (canpair:) list: one producer each. */
static int can_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    int pair = spec[3] != ':';
    const char *p = spec + (pair ? 8 : 4);

    if (s->o.raw) {
        snprintf(err, errlen, "CAN sources make records; --raw does not apply");
        return -1;
    }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || n >= IFNAMSIZ || s->nprod == SRC_MAX_CHANNELS) {
            snprintf(err, errlen, "bad interface list '%s'", spec);
            return -1;
        }
        if (pair) {
            uint64_t fd;
            if (src_parse_u64_dec(p, n, &fd) || fd > 1000000) {
                snprintf(err, errlen, "canpair: expects descriptor numbers");
                return -1;
            }
            s->prod[s->nprod].fd = (int)fd;
            char nm[24];
            snprintf(nm, sizeof nm, "pair%u", s->nprod);
            src_add_name(s, nm, strlen(nm));
        } else {
            src_add_name(s, p, n);
        }
        s->nprod++;
        p = end ? end + 1 : p + n;
    }
    return 0;
}

int src_can_decode(const void *buf, size_t len, struct src_can_frame *f)
{
    uint32_t id;

    memset(f, 0, sizeof *f);
    if (len == CAN_MTU) {
        struct can_frame cf;
        memcpy(&cf, buf, sizeof cf);
        if (cf.len > CAN_MAX_DLEN)
            return -1;
        id = cf.can_id;
        f->len = cf.len;
        memcpy(f->data, cf.data, cf.len);
    } else if (len == CANFD_MTU) {
        struct canfd_frame cf;
        unsigned k;
        memcpy(&cf, buf, sizeof cf);
        for (k = 0; k < sizeof src_fd_lens; k++)
            if (src_fd_lens[k] == cf.len)
                break;
        if (k == sizeof src_fd_lens)
            return -1;
        id = cf.can_id;
        f->len = cf.len;
        f->flags |= SF_CAN_FD;
        if (cf.flags & CANFD_BRS)
            f->flags |= SF_CAN_BRS;
        if (cf.flags & CANFD_ESI)
            f->flags |= SF_CAN_ESI;
        memcpy(f->data, cf.data, cf.len);
    } else {
        return -1;
    }
    if (id & CAN_ERR_FLAG) {
        f->flags |= SF_CAN_ERR;
        f->id = id & CAN_ERR_MASK;
        if (f->id > CAN_SFF_MASK)
            f->flags |= SF_CAN_EFF;        /* docs/FORMAT.md: like any id above 0x7FF */
    } else if (id & CAN_EFF_FLAG) {
        f->flags |= SF_CAN_EFF;
        f->id = id & CAN_EFF_MASK;
    } else {
        f->id = id & CAN_SFF_MASK;
    }
    if ((id & CAN_RTR_FLAG) && !(f->flags & SF_CAN_FD)) {
        f->flags |= SF_CAN_RTR;
    }
    return 0;
}

/* The kernel's drop counter of one socket, turned into DROP records. */
struct kdrops {
    uint32_t seen;                  /* the counter's value already recorded */
    uint64_t last_ts;               /* time of the last frame read (or of the start) */
};

/* The socket's counter says `now`: record what is new as lost between the last frame
 * read and `ts`. */
static void note_kernel_drops(struct producer *p, struct kdrops *k, uint32_t now, uint64_t ts)
{
    struct log_source *s = p->s;
    uint32_t n = now - k->seen;     /* modulo 2^32, as the kernel counts */
    uint8_t body[24];

    if (!n)
        return;
    k->seen = now;
    put_le64(body, n);
    put_le64(body + 8, k->last_ts);
    put_le64(body + 16, ts);
    atomic_fetch_add_explicit(&s->kdropped, n, memory_order_relaxed);
    /* A full ring refuses this record too: then the ring's own DROP record counts it as
     * one record, and the kernel's count stays in the statistics (exit status 3). */
    sf_log_append(s->lg, SF_REC_DROP, (uint8_t)p->ch, SF_DROP_SOURCE, k->last_ts, body,
                  sizeof body);
}

/* The count at the end: SO_MEMINFO's drops are the same counter SO_RXQ_OVFL reports. */
static void final_kernel_drops(struct producer *p, struct kdrops *k)
{
    uint32_t mi[SK_MEMINFO_VARS];
    socklen_t len = sizeof mi;

    if (getsockopt(p->fd, SOL_SOCKET, SO_MEMINFO, mi, &len) == 0 &&
        len > SK_MEMINFO_DROPS * sizeof mi[0])
        note_kernel_drops(p, k, mi[SK_MEMINFO_DROPS], now_ns(CLOCK_REALTIME));
}

static void annotate(struct producer *p, uint64_t ts, const char *what)
{
    struct log_source *s = p->s;
    char text[IFNAMSIZ + 64];
    int n = snprintf(text, sizeof text, "%s: %s", s->names[p->ch], what);

    sf_log_append(s->lg, SF_REC_ANNOTATION, (uint8_t)p->ch, SF_ANNOT_CHANNEL, ts, text,
                  (uint16_t)n);
}

/* Is the interface of a can: producer up? 1, 0, or -1 when unknown (canpair:). */
static int iface_up(struct producer *p)
{
    struct ifreq ifr;

    if (p->s->ops != &src_can_ops)
        return -1;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", p->s->names[p->ch]);
    if (ioctl(p->fd, SIOCGIFFLAGS, &ifr) < 0)
        return -1;
    return (ifr.ifr_flags & IFF_UP) != 0;
}

/* The reading loop of can: and canpair: (and anything else delivering SocketCAN frames as
 * datagrams). Ends at end of file (the peer closed), an error, the budget, or stop; on a
 * stop it first reads what the kernel received before it (frames timed up to the moment
 * the stop was seen), so `kill -INT` after the last frame of a burst loses none of it. */
static void *can_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    struct src_rx_batch *rx = malloc(sizeof *rx);
    struct kdrops k = { 0, now_ns(CLOCK_REALTIME) };
    int done = 0, down = 0, draining = 0, block = src_rx_blocking(p->fd);
    uint64_t stop_ts = 0, last_batch = 0;

    if (!rx) {
        src_set_error(s, "%s: out of memory", s->names[p->ch]);
        goto out;
    }
    if (src_send_start(p) || src_poll_start(p))
        goto out;

    while (!done) {
        int n;

        if (!draining && stopping(s)) {
            if (atomic_load_explicit(&s->limit_hit, memory_order_relaxed))
                break;
            draining = 1;
            stop_ts = now_ns(CLOCK_REALTIME);
        }
        /* every datagram the socket holds, up to a batch, in one system call (while
         * draining: only what is there) */
        n = src_recv_batch(p->fd, rx, block && !draining);
        if (n < 0) {
            if (draining && (errno == EAGAIN || errno == ENETDOWN))
                break;
            if (errno == EINTR || errno == EAGAIN) {
                if (down && iface_up(p) == 1) {
                    down = 0;
                    annotate(p, now_ns(CLOCK_REALTIME), "interface up again");
                }
                continue;
            }
            if (errno == ENETDOWN) {
                /* the driver stopped (ip link set IFACE down): the socket stays bound
                 * and reads again when the interface is back */
                if (!down)
                    annotate(p, now_ns(CLOCK_REALTIME), "interface down");
                down = 1;
                continue;
            }
            src_set_error(s, "%s: receive: %s", s->names[p->ch], strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            struct src_can_frame f;
            const uint8_t *bytes;
            uint64_t ts;
            uint32_t drops;
            int mflags, have_drops;
            ssize_t r = src_rx_message(rx, (unsigned)i, &bytes, &ts, &mflags, &drops,
                                       &have_drops);

            if (r == 0) {
                done = 1;
                break;
            }
            if (!ts)
                ts = now_ns(CLOCK_REALTIME);
            if (draining && ts > stop_ts) {
                done = -1;
                break;
            }
            if (down) {
                down = 0;
                annotate(p, ts, "interface up again");
            }
            if (have_drops)
                note_kernel_drops(p, &k, drops, ts);
            k.last_ts = ts;
            if ((mflags & MSG_TRUNC) || src_can_decode(bytes, (size_t)r, &f)) {
                atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
                continue;
            }
            f.ts = ts;
            /* the echo of a frame this socket sent (--send): MSG_CONFIRM, its time the
             * driver's transmit confirmation; other sockets' frames echoed by the
             * interface's loopback come without it and stay received frames */
            if (mflags & MSG_CONFIRM)
                f.flags |= SF_CAN_TX;
            else {
                if (p->poll)
                    src_poll_feed(p, &f);   /* before the log: flow control goes out at once */
                if (s->nsend_trig)
                    src_send_on_frame(s, &f);
            }
            if (src_emit_can(p, &f) < 0) {
                done = 1;
                break;
            }
        }
        /* A busy bus (this batch came within COALESCE_NS of the last one): let the next
         * frames gather for COALESCE_NS instead of waking for each (the wake-up, not the
         * frame, is most of the cost); the times are the kernel's, so nothing but latency
         * changes. Not when the batch was full (the reader is behind: read on at once) or
         * while draining. */
        if (n > 0 && n < SRC_RX_BATCH && !draining && !done) {
            uint64_t now = now_ns(CLOCK_MONOTONIC);
            if (now - last_batch < COALESCE_NS)
                src_sleep_ns(COALESCE_NS);
            last_batch = now;
        }
    }
    final_kernel_drops(p, &k);
out:
    free(rx);
    src_send_join(p);
    src_poll_join(p);
    src_flush_counters(p);
    if (done > 0)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

/* The receive buffer (struct src_opts can_rcvbuf): as root SO_RCVBUFFORCE passes
 * net.core.rmem_max; otherwise SO_RCVBUF, which the kernel caps there. The kernel doubles
 * what it is given (its bookkeeping), so half is asked for. */
static void size_rcvbuf(struct log_source *s, int fd, const char *name)
{
    uint64_t want = s->o.can_rcvbuf;
    int half, got = 0;
    socklen_t len = sizeof got;

    if (!want)
        return;
    half = want / 2 > INT32_MAX ? INT32_MAX : (int)(want / 2);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &half, sizeof half) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &half, sizeof half);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && (uint64_t)got + 4096 < want &&
        s->o.can_rcvbuf_given)
        cli_err("can:%s: warning: receive buffer %d bytes, not %llu: the kernel caps it at "
                "net.core.rmem_max without root (CAP_NET_ADMIN)", name, got,
                (unsigned long long)want);
}

static int open_can(struct log_source *s, struct producer *p)
{
    struct sockaddr_can addr;
    int on = 1, fd;
    unsigned idx;
    const char *name = s->names[p->ch];
    char what[128];

    fd = socket(AF_CAN, SOCK_RAW, CAN_RAW);
    if (fd < 0) {
        cli_err("can:%s: cannot open a CAN socket: %s%s", name, strerror(errno),
                errno == EAFNOSUPPORT ? " (this kernel has no SocketCAN)" : "");
        return -1;
    }
    idx = if_nametoindex(name);
    if (!idx) {
        cli_err("can:%s: no such interface", name);
        close(fd);
        return -1;
    }
    for (unsigned k = 0; k < s->o.nlisten_only; k++) {
        char kind[16];
        int lo;
        if (strcmp(s->o.listen_only[k], name))
            continue;
        lo = src_can_listen_only(idx, kind, sizeof kind);
        if (lo == 0) {
            cli_err("can:%s: --listen-only: the interface is not in listen-only mode; as "
                    "root: ip link set %s down && ip link set %s type can listen-only on && "
                    "ip link set %s up", name, name, name, name);
            close(fd);
            return -1;
        }
        if (lo < 0)
            cli_err("can:%s: note: --listen-only: %s has no listen-only mode (%s): the "
                    "logger sends nothing on it, other programs still may", name, name,
                    lo == -1 ? (kind[0] ? kind : "not a CAN controller")
                             : "the kernel did not say");
    }
    /* CAN FD frames too; a classic-only interface refuses this, which is fine */
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof on);
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_ERR_FILTER,
               &(can_err_mask_t){ s->o.can_err_given ? s->o.can_err_mask : CAN_ERR_MASK },
               sizeof(can_err_mask_t));
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
        cli_err("can:%s: note: no kernel timestamps (%s)", name, strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on) < 0)
        cli_err("can:%s: note: the kernel will not count dropped frames (%s)", name,
                strerror(errno));
    size_rcvbuf(s, fd, name);
    /* --send on this interface: the kernel echoes each frame this socket sends once it
     * went out (MSG_CONFIRM), and that echo is what gets logged, with SF_CAN_TX */
    if ((p->tx || p->poll) && setsockopt(fd, SOL_CAN_RAW, CAN_RAW_RECV_OWN_MSGS, &on, sizeof on) < 0)
        cli_err("can:%s: note: the sent frames will not be logged (%s)", name, strerror(errno));
    memset(&addr, 0, sizeof addr);
    addr.can_family = AF_CAN;
    addr.can_ifindex = (int)idx;
    snprintf(what, sizeof what, "can:%s: bind", name);
    return src_bind_source(p, fd, &addr, sizeof addr, what);
}

static int can_prepare(struct log_source *s, struct producer *p)
{
    return open_can(s, p);
}

static int canpair_prepare(struct log_source *s, struct producer *p)
{
    int on = 1;

    (void)s;
    if (fcntl(p->fd, F_GETFD) < 0) {
        cli_err("canpair:%d: not an open descriptor", p->fd);
        return -1;
    }
    setsockopt(p->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    return 0;
}

const struct src_ops src_can_ops = {
    .name = "can:",
    .match = can_match,
    .parse = can_parse,
    .prepare = can_prepare,
    .run = can_main,
};

const struct src_ops src_canpair_ops = {
    .name = "canpair:",
    .match = canpair_match,
    .parse = can_parse,
    .prepare = canpair_prepare,
    .run = can_main,
    .borrowed_fds = 1,
};
