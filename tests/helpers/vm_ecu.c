/* vm_ecu IFACE PHYS_RX ANSWER_TX [FUNC_RX] OUT: a model ECU for the CAN test VM (tests/vm,
 * case 50_poll_isotp) on the Linux kernel's own ISO-TP stack (CAN_ISOTP sockets, module
 * can-isotp), so that the logger's poll client meets an ISO 15765-2 implementation that is
 * not its own. Ids in hex; 8 digits make a 29-bit id.
 *
 * It takes requests on PHYS_RX (physical) and FUNC_RX (functional, e.g. 7DF) and answers
 * every one on ANSWER_TX through the physical socket, whose receive side gets the tester's
 * flow control on PHYS_RX: the kernel then sends the consecutive frames with the block
 * size and STmin the tester asked for. Answers (a counter n makes each one different):
 *     01 PID       41 PID n PID                          single frame
 *     09 02        49 02 01 + 17-byte VIN ending in n     first + 2 consecutive frames
 *     22 F190      62 F1 90 + the same VIN                first + 2 consecutive frames
 *     22 F40C      62 F4 0C n-hi n-lo                     single frame
 *     22 F1A0      62 F1 A0 + 200 bytes n + i             first + 29 consecutive frames
 *     else         7F SID 31 (request out of range)
 * Frames are padded with 0xAA. Each answer is appended to OUT as one line of hex, in the
 * order they were sent, for the case to compare with what the log holds. Runs until
 * killed. */
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

static uint32_t parse_id(const char *s)
{
    uint32_t v = (uint32_t)strtoul(s, NULL, 16);
    return strlen(s) == 8 ? v | CAN_EFF_FLAG : v;
}

static int open_isotp(unsigned ifindex, uint32_t rx, uint32_t tx)
{
    struct sockaddr_can a;
    struct can_isotp_options o;
    int fd = socket(PF_CAN, SOCK_DGRAM, CAN_ISOTP);

    if (fd < 0) {
        perror("vm_ecu: socket(CAN_ISOTP)");
        exit(1);
    }
    memset(&o, 0, sizeof o);
    o.flags = CAN_ISOTP_TX_PADDING;
    o.txpad_content = 0xAA;
    if (setsockopt(fd, SOL_CAN_ISOTP, CAN_ISOTP_OPTS, &o, sizeof o) < 0) {
        perror("vm_ecu: CAN_ISOTP_OPTS");
        exit(1);
    }
    memset(&a, 0, sizeof a);
    a.can_family = AF_CAN;
    a.can_ifindex = (int)ifindex;
    a.can_addr.tp.rx_id = rx;
    a.can_addr.tp.tx_id = tx;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("vm_ecu: bind");
        exit(1);
    }
    return fd;
}

static size_t answer(const uint8_t *q, size_t n, uint8_t *a, unsigned ctr)
{
    static const char vin[] = "WVWZZZ1JZXW";
    size_t len = 0;

    if (n == 2 && q[0] == 0x01) {
        a[0] = 0x41;
        a[1] = q[1];
        a[2] = (uint8_t)ctr;
        a[3] = q[1];
        return 4;
    }
    if ((n == 2 && q[0] == 0x09 && q[1] == 0x02) ||
        (n == 3 && q[0] == 0x22 && q[1] == 0xF1 && q[2] == 0x90)) {
        if (q[0] == 0x09) {
            a[len++] = 0x49;
            a[len++] = 0x02;
            a[len++] = 0x01;
        } else {
            a[len++] = 0x62;
            a[len++] = 0xF1;
            a[len++] = 0x90;
        }
        memcpy(a + len, vin, 11);
        len += 11;
        len += (size_t)sprintf((char *)a + len, "%06u", ctr % 1000000u);
        return len;
    }
    if (n == 3 && q[0] == 0x22 && q[1] == 0xF4 && q[2] == 0x0C) {
        a[0] = 0x62;
        a[1] = 0xF4;
        a[2] = 0x0C;
        a[3] = (uint8_t)(ctr >> 8);
        a[4] = (uint8_t)ctr;
        return 5;
    }
    if (n == 3 && q[0] == 0x22 && q[1] == 0xF1 && q[2] == 0xA0) {
        a[0] = 0x62;
        a[1] = 0xF1;
        a[2] = 0xA0;
        for (unsigned i = 0; i < 200; i++)
            a[3 + i] = (uint8_t)(ctr + i);
        return 203;
    }
    a[0] = 0x7F;
    a[1] = n ? q[0] : 0;
    a[2] = 0x31;
    return 3;
}

int main(int argc, char **argv)
{
    unsigned ifindex, ctr = 0;
    int fds[2], nfd = 1;
    FILE *out;

    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: vm_ecu IFACE PHYS_RX ANSWER_TX [FUNC_RX] OUT\n");
        return 2;
    }
    ifindex = if_nametoindex(argv[1]);
    if (!ifindex) {
        fprintf(stderr, "vm_ecu: no interface %s\n", argv[1]);
        return 1;
    }
    fds[0] = open_isotp(ifindex, parse_id(argv[2]), parse_id(argv[3]));
    if (argc == 6)
        fds[nfd++] = open_isotp(ifindex, parse_id(argv[4]), parse_id(argv[3]));
    out = fopen(argv[argc - 1], "w");
    if (!out) {
        perror("vm_ecu: OUT");
        return 1;
    }
    for (;;) {
        struct pollfd pf[2];
        uint8_t q[4096], a[256];

        for (int i = 0; i < nfd; i++) {
            pf[i].fd = fds[i];
            pf[i].events = POLLIN;
        }
        if (poll(pf, (nfds_t)nfd, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("vm_ecu: poll");
            return 1;
        }
        for (int i = 0; i < nfd; i++) {
            ssize_t n;
            size_t al;

            if (!(pf[i].revents & POLLIN))
                continue;
            n = read(fds[i], q, sizeof q);
            if (n <= 0)
                continue;       /* a reception the kernel ended (timeout, wrong SN) */
            al = answer(q, (size_t)n, a, ++ctr);
            /* the physical socket: its receive side takes the flow control */
            if (write(fds[0], a, al) != (ssize_t)al) {
                fprintf(stderr, "vm_ecu: write: %s\n", strerror(errno));
                continue;
            }
            for (size_t k = 0; k < al; k++)
                fprintf(out, "%02x", a[k]);
            fputc('\n', out);
            fflush(out);
        }
    }
}
