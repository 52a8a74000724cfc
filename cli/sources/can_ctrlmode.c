/* --listen-only (docs/LOG.md "Listen-only"): whether a CAN interface's controller is in
 * listen-only mode, asked of the kernel over rtnetlink (RTM_GETLINK: IFLA_LINKINFO's
 * IFLA_INFO_DATA carries the CAN driver's IFLA_CAN_CTRLMODE). The logger only reads the
 * mode: setting it needs the interface down and CAP_NET_ADMIN, and taking a bus interface
 * down under another program is not the logger's call, so it names the ip command instead
 * (socketcan.c). */
#include "source_int.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/can/netlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* The attribute of `type` among those in [p, p + len), or NULL. */
static const struct rtattr *find_attr(const void *p, size_t len, unsigned short type)
{
    const struct rtattr *a = p;
    int n = (int)len;

    for (; RTA_OK(a, n); a = RTA_NEXT(a, n))
        if ((a->rta_type & NLA_TYPE_MASK) == type)
            return a;
    return NULL;
}

int src_can_listen_only(unsigned ifindex, char *kind, size_t kindlen)
{
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
    } req;
    union {
        struct nlmsghdr h;
        char b[16384];
    } resp;
    const struct rtattr *info, *a;
    const struct ifinfomsg *ifi;
    ssize_t r;
    int fd, rc = -2;

    if (kindlen)
        kind[0] = 0;
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -2;
    memset(&req, 0, sizeof req);
    req.h.nlmsg_len = sizeof req;
    req.h.nlmsg_type = RTM_GETLINK;
    req.h.nlmsg_flags = NLM_F_REQUEST;
    req.i.ifi_family = AF_UNSPEC;
    req.i.ifi_index = (int)ifindex;
    if (send(fd, &req, sizeof req, 0) != (ssize_t)sizeof req)
        goto out;
    r = recv(fd, &resp, sizeof resp, 0);
    if (r < (ssize_t)NLMSG_LENGTH(sizeof *ifi) || !NLMSG_OK(&resp.h, (unsigned)r) ||
        resp.h.nlmsg_type != RTM_NEWLINK)
        goto out;
    ifi = NLMSG_DATA(&resp.h);
    info = find_attr(IFLA_RTA(ifi), IFLA_PAYLOAD(&resp.h), IFLA_LINKINFO);
    rc = -1;                            /* no CAN control mode: not a CAN controller */
    if (!info)
        goto out;
    a = find_attr(RTA_DATA(info), RTA_PAYLOAD(info), IFLA_INFO_KIND);
    if (a && kindlen) {
        size_t n = RTA_PAYLOAD(a) < kindlen ? RTA_PAYLOAD(a) : kindlen - 1;
        memcpy(kind, RTA_DATA(a), n);
        kind[n] = 0;
        kind[strnlen(kind, n)] = 0;
    }
    a = find_attr(RTA_DATA(info), RTA_PAYLOAD(info), IFLA_INFO_DATA);
    if (a)
        a = find_attr(RTA_DATA(a), RTA_PAYLOAD(a), IFLA_CAN_CTRLMODE);
    if (a && RTA_PAYLOAD(a) >= sizeof(struct can_ctrlmode)) {
        struct can_ctrlmode cm;
        memcpy(&cm, RTA_DATA(a), sizeof cm);
        rc = (cm.flags & CAN_CTRLMODE_LISTENONLY) != 0;
    }
out:
    close(fd);
    return rc;
}
