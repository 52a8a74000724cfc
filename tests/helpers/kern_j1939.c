/* kern_j1939: J1939 messages through the Linux kernel's own stack (can-j1939), for the CAN
 * test VM (tests/vm/cases/71_kernel_j1939.sh): what streamfat logs of them must come back
 * whole from `export -f j1939` with their PGN, priority, source and destination.
 *
 *   kern_j1939 IFACE SA DA PGN PRIO SIZE...
 *
 * Two CAN_J1939 datagram sockets on IFACE in this one process, with static addresses (no
 * address claiming): the sender bound to SA sends PGN at priority PRIO to DA (hex; FF is
 * broadcast), the receiver is bound to DA (to 0x80 when DA is FF) and takes broadcasts. The
 * kernel chooses the transport by size and destination: one frame up to 8 bytes, TP BAM to
 * FF and TP RTS/CTS to an address up to 1,785 bytes (the kernel answers the RTS and CTS on
 * the receiver's behalf, because a socket holds DA), ETP above (destination-specific only).
 * For each message the receiver's copy is read and checked against what was sent (bytes,
 * PGN, source, destination), then one line goes to stdout, as the case reads export -f
 * j1939's JSON:
 *     PGN PRIO SA DA TP LENGTH HEX   (decimal, TP true above 8 bytes, PRIO the kernel's
 *                                     receiver's, HEX upper case)
 * Payload k of size n is a fixed function of k and n. Exit 0 when the kernel delivered every
 * message unchanged, 1 (one line on stderr why) otherwise. */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/can.h>
#include <linux/can/j1939.h>

#define MAX_MSG (1u << 20)

static void die(const char *what)
{
    fprintf(stderr, "kern_j1939: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static uint32_t parse_hex(const char *s, const char *what, uint32_t max)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 16);
    if (errno || end == s || *end || v > max) {
        fprintf(stderr, "kern_j1939: %s: not a hex number up to %X: %s\n", what, max, s);
        exit(2);
    }
    return (uint32_t)v;
}

static int open_j1939(int ifindex, uint8_t addr)
{
    int s = socket(PF_CAN, SOCK_DGRAM, CAN_J1939);
    if (s < 0)
        die("socket(CAN_J1939) (is can-j1939 loaded?)");
    int one = 1, big = 4 << 20;
    if (setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0)
        die("SO_BROADCAST");
    /* an ETP message is queued whole: room for the largest one sent */
    if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0 &&
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big) < 0)
        die("SO_RCVBUF");
    struct sockaddr_can a = {0};
    a.can_family = AF_CAN;
    a.can_ifindex = ifindex;
    a.can_addr.j1939.name = J1939_NO_NAME;
    a.can_addr.j1939.pgn = J1939_NO_PGN;
    a.can_addr.j1939.addr = addr;
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0)
        die("bind");
    return s;
}

static uint32_t rng;
static uint8_t next_byte(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (uint8_t)(rng >> 11);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: kern_j1939 IFACE SA DA PGN PRIO SIZE...\n");
        return 2;
    }
    int ifindex = (int)if_nametoindex(argv[1]);
    if (!ifindex)
        die(argv[1]);
    uint8_t sa = (uint8_t)parse_hex(argv[2], "SA", 0xFD);
    uint8_t da = (uint8_t)parse_hex(argv[3], "DA", 0xFF);
    uint32_t pgn = parse_hex(argv[4], "PGN", 0x3FFFF);
    int prio = (int)parse_hex(argv[5], "PRIO", 7);
    int tx = open_j1939(ifindex, sa);
    int rx = open_j1939(ifindex, da == J1939_NO_ADDR ? 0x80 : da);
    if (setsockopt(tx, SOL_CAN_J1939, SO_J1939_SEND_PRIO, &prio, sizeof prio) < 0)
        die("SO_J1939_SEND_PRIO");

    static uint8_t msg[MAX_MSG], got[MAX_MSG + 1];
    for (int k = 6; k < argc; k++) {
        long n = atol(argv[k]);
        if (n < 0 || n > (long)MAX_MSG)
            return fprintf(stderr, "kern_j1939: size %s: not 0..%u\n", argv[k], MAX_MSG), 2;
        rng = 88172645u ^ (uint32_t)(n * 2654435761u) ^ (uint32_t)k;
        for (long i = 0; i < n; i++)
            msg[i] = next_byte();
        struct sockaddr_can to = {0};
        to.can_family = AF_CAN;
        to.can_addr.j1939.name = J1939_NO_NAME;
        to.can_addr.j1939.pgn = pgn;
        to.can_addr.j1939.addr = da;
        if (sendto(tx, msg, (size_t)n, 0, (struct sockaddr *)&to, sizeof to) != n)
            die("sendto");

        struct pollfd pf = {.fd = rx, .events = POLLIN};
        if (poll(&pf, 1, 60000) != 1)
            die("the receiver socket got nothing in 60 s");
        struct sockaddr_can from = {0};
        char cbuf[256];
        struct iovec iov = {.iov_base = got, .iov_len = sizeof got};
        struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov,
                            .msg_iovlen = 1, .msg_control = cbuf,
                            .msg_controllen = sizeof cbuf};
        ssize_t r = recvmsg(rx, &mh, 0);
        if (r < 0)
            die("recvmsg");
        int got_da = -1, got_prio = -1;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            if (cm->cmsg_level != SOL_CAN_J1939)
                continue;
            if (cm->cmsg_type == SCM_J1939_DEST_ADDR)
                got_da = *(uint8_t *)CMSG_DATA(cm);
            else if (cm->cmsg_type == SCM_J1939_PRIO)
                got_prio = *(uint8_t *)CMSG_DATA(cm);
        }
        if (r != n || memcmp(got, msg, (size_t)n) || from.can_addr.j1939.addr != sa ||
            from.can_addr.j1939.pgn != pgn || (got_da >= 0 && got_da != da)) {
            fprintf(stderr, "kern_j1939: size %ld: the kernel delivered %zd bytes of PGN %X "
                            "from %02X to %d, not what was sent\n",
                    n, r, from.can_addr.j1939.pgn, from.can_addr.j1939.addr, got_da);
            return 1;
        }
        printf("%u %d %u %u %s %ld ", pgn, got_prio, sa, da, n > 8 ? "true" : "false", n);
        for (long i = 0; i < n; i++)
            printf("%02X", msg[i]);
        putchar('\n');
    }
    if (fflush(stdout))
        die("stdout");
    close(tx);
    close(rx);
    return 0;
}
