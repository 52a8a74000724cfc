/* kern_isotp: ISO-TP messages through the Linux kernel's own stack (can-isotp), for the CAN
 * test VM (tests/vm/cases/70_kernel_isotp.sh): what streamfat logs of them must come back
 * whole from `export -f messages`.
 *
 *   kern_isotp IFACE DATA_ID FC_ID [options] SIZE...
 *
 * Two CAN_ISOTP sockets on IFACE in this one process: the sender sends on DATA_ID and takes
 * flow control on FC_ID, the receiver the other way round. The kernel answers the sender's
 * first frames with flow control by itself (in softirq context), so one thread sends a
 * message (waiting until its last frame is out), then reads it from the receiver socket and
 * checks that the kernel delivered exactly what was sent. Ids above 0x7FF are 29-bit.
 *
 *   -x TA:RA   extended addressing: the sender's frames start with TA, the flow control
 *              (the receiver's frames) with RA (hex)
 *   -p BYTE    both sockets pad every frame to 8 bytes (CAN FD: to the next DLC) with BYTE
 *   -f DL      CAN FD ISO-TP: link MTU 72, frames of up to DL (8..64) bytes, with BRS
 *   -b BS      the receiver's block size (flow control after every BS consecutive frames)
 *   -m STMIN   the receiver's STmin byte (0x00-0x7F ms, 0xF1-0xF9 100-900 us)
 *
 * Payload k of size n is a fixed function of k and n (a xorshift stream), so a run is
 * repeatable. For each message one line on stdout, as the case reads export's JSON:
 *     DATA_ID ADDR LENGTH HEX      (upper-case hex id as export writes it, ADDR the
 *                                   extended-addressing byte in decimal or null)
 * Exit 0 when the kernel delivered every message unchanged, 1 (one line on stderr why)
 * otherwise. */
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
#include <linux/can/isotp.h>

#define MAX_MSG 8200   /* can-isotp's largest PDU in Linux 6.1 (MAX_MSG_LENGTH) */

static void die(const char *what)
{
    fprintf(stderr, "kern_isotp: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static uint32_t parse_hex(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 16);
    if (errno || end == s || *end || v > 0x1FFFFFFFul) {
        fprintf(stderr, "kern_isotp: %s: not a hex number: %s\n", what, s);
        exit(2);
    }
    return (uint32_t)v;
}

static canid_t can_id(uint32_t id)
{
    return id > 0x7FF ? id | CAN_EFF_FLAG : id;
}

struct opts {
    int ext, pad, fd_dl, bs, stmin;
    uint8_t ta, ra, pad_byte;
};

/* One socket: data out on tx, in on rx; ext_tx/ext_rx the addressing bytes of its own
 * frames and of those it takes. */
static int open_isotp(int ifindex, uint32_t tx, uint32_t rx, const struct opts *o,
                      uint8_t ext_tx, uint8_t ext_rx, int receiver)
{
    int s = socket(PF_CAN, SOCK_DGRAM, CAN_ISOTP);
    if (s < 0)
        die("socket(CAN_ISOTP) (is can-isotp loaded?)");
    struct can_isotp_options opt = {0};
    opt.flags = receiver ? 0 : CAN_ISOTP_WAIT_TX_DONE;
    if (o->ext) {
        opt.flags |= CAN_ISOTP_EXTEND_ADDR | CAN_ISOTP_RX_EXT_ADDR;
        opt.ext_address = ext_tx;
        opt.rx_ext_address = ext_rx;
    }
    if (o->pad) {
        opt.flags |= CAN_ISOTP_TX_PADDING;
        opt.txpad_content = o->pad_byte;
    }
    if (setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_OPTS, &opt, sizeof opt) < 0)
        die("CAN_ISOTP_OPTS");
    if (receiver && (o->bs || o->stmin)) {
        struct can_isotp_fc_options fc = {.bs = (uint8_t)o->bs, .stmin = (uint8_t)o->stmin};
        if (setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_RECV_FC, &fc, sizeof fc) < 0)
            die("CAN_ISOTP_RECV_FC");
    }
    if (o->fd_dl) {
        struct can_isotp_ll_options ll = {.mtu = CANFD_MTU, .tx_dl = (uint8_t)o->fd_dl,
                                          .tx_flags = CANFD_BRS};
        if (setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_LL_OPTS, &ll, sizeof ll) < 0)
            die("CAN_ISOTP_LL_OPTS (is the interface's MTU 72?)");
    }
    struct sockaddr_can a = {0};
    a.can_family = AF_CAN;
    a.can_ifindex = ifindex;
    a.can_addr.tp.tx_id = can_id(tx);
    a.can_addr.tp.rx_id = can_id(rx);
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
    struct opts o = {0};
    int c;
    while ((c = getopt(argc, argv, "x:p:f:b:m:")) != -1) {
        switch (c) {
        case 'x': {
            char *colon = strchr(optarg, ':');
            if (!colon)
                return fprintf(stderr, "kern_isotp: -x TA:RA\n"), 2;
            *colon = 0;
            o.ext = 1;
            o.ta = (uint8_t)parse_hex(optarg, "-x");
            o.ra = (uint8_t)parse_hex(colon + 1, "-x");
            break;
        }
        case 'p': o.pad = 1; o.pad_byte = (uint8_t)parse_hex(optarg, "-p"); break;
        case 'f': o.fd_dl = atoi(optarg); break;
        case 'b': o.bs = atoi(optarg); break;
        case 'm': o.stmin = (int)parse_hex(optarg, "-m"); break;
        default: return 2;
        }
    }
    if (argc - optind < 4) {
        fprintf(stderr, "usage: kern_isotp IFACE DATA_ID FC_ID [-x TA:RA] [-p BYTE] "
                        "[-f DL] [-b BS] [-m STMIN] SIZE...\n");
        return 2;
    }
    int ifindex = (int)if_nametoindex(argv[optind]);
    if (!ifindex)
        die(argv[optind]);
    uint32_t data_id = parse_hex(argv[optind + 1], "DATA_ID");
    uint32_t fc_id = parse_hex(argv[optind + 2], "FC_ID");
    int tx = open_isotp(ifindex, data_id, fc_id, &o, o.ta, o.ra, 0);
    int rx = open_isotp(ifindex, fc_id, data_id, &o, o.ra, o.ta, 1);

    static uint8_t msg[MAX_MSG], got[MAX_MSG + 1];
    for (int k = optind + 3; k < argc; k++) {
        long n = atol(argv[k]);
        if (n < 1 || n > MAX_MSG)
            return fprintf(stderr, "kern_isotp: size %s: not 1..%d\n", argv[k], MAX_MSG), 2;
        rng = 2463534242u ^ (uint32_t)(n * 2654435761u) ^ (uint32_t)k;
        for (long i = 0; i < n; i++)
            msg[i] = next_byte();
        if (write(tx, msg, (size_t)n) != n)
            die("write (no flow control from the receiver?)");
        /* the whole message is in the receiver's queue by now, or soon (softirq) */
        struct pollfd pf = {.fd = rx, .events = POLLIN};
        if (poll(&pf, 1, 30000) != 1)
            die("the receiver socket got nothing in 30 s");
        ssize_t r = read(rx, got, sizeof got);
        if (r < 0)
            die("read");
        if (r != n || memcmp(got, msg, (size_t)n)) {
            fprintf(stderr, "kern_isotp: size %ld: the kernel delivered %zd different bytes\n",
                    n, r);
            return 1;
        }
        if (o.ext)
            printf("%X %u %ld ", data_id, o.ta, n);
        else
            printf("%X null %ld ", data_id, n);
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
