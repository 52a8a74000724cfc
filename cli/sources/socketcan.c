/* can:IFACE[,IFACE...]: SocketCAN raw sockets, CAN FD on, SO_TIMESTAMPNS; one producer per
 * interface. canpair:FD[,FD...] (hidden, for tests): the same reading loop on inherited
 * descriptors delivering struct can_frame / canfd_frame datagrams, e.g. one end of
 * socketpair(AF_UNIX, SOCK_SEQPACKET). */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
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

/* The reading loop of can: and canpair: (and anything else delivering SocketCAN frames as
 * datagrams). Ends at end of file (the peer closed), an error, the budget, or stop. */
static void *can_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    union {
        struct canfd_frame fd;
        uint8_t bytes[CANFD_MTU + 16];
    } u;
    int done = 0;

    while (!stopping(s)) {
        struct src_can_frame f;
        uint64_t ts;
        int mflags;
        ssize_t r = src_recv_stamped(p->fd, u.bytes, sizeof u.bytes, &ts, &mflags);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            src_set_error(s, "%s: receive: %s", s->names[p->ch], strerror(errno));
            break;
        }
        if (r == 0) {
            done = 1;
            break;
        }
        if ((mflags & MSG_TRUNC) || src_can_decode(u.bytes, (size_t)r, &f)) {
            atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
            continue;
        }
        f.ts = ts ? ts : now_ns(CLOCK_REALTIME);
        if (src_emit_can(p, &f) < 0) {
            done = 1;
            break;
        }
    }
    src_flush_counters(p);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
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
    /* CAN FD frames too; a classic-only interface refuses this, which is fine */
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof on);
    setsockopt(fd, SOL_CAN_RAW, CAN_RAW_ERR_FILTER, &(can_err_mask_t){ CAN_ERR_MASK },
               sizeof(can_err_mask_t));
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
        cli_err("can:%s: note: no kernel timestamps (%s)", name, strerror(errno));
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
