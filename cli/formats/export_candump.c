/* candump -L lines, as can-utils' candump -L writes them and canplayer, python-can and
 * Wireshark read them:
 *   (1700000000.123456) can0 123#11223344           11-bit id: 3 hex digits
 *   (1700000000.123456) can0 1ABCDEF0#11            29-bit id: 8 hex digits
 *   (1700000000.123456) can0 123#R   123#R5         remote frame, with its length if > 0
 *   (1700000000.123456) can0 123##7112233           CAN FD: '##', a hex digit of flags
 *                                                   (1 BRS, 2 ESI, 4 FDF), the data
 *   (1700000000.123456) can0 20000080#0000000000000000   error frame: the id is
 *                                                   CAN_ERR_FLAG | error class, 8 digits
 * The flags digit carries FDF (4) as candump 2020.11 prints it on Linux 6.1, which sets
 * CANFD_FDF in every CAN FD frame it delivers (checked in the CAN test VM, tests/vm: case
 * 11_capture_vcan_fd); older candump wrote 0-3 there, and readers take both.
 * Hex is upper case; the interface name is the channel's (CHANNEL records), else can<N>.
 * Other records have no candump form. */
#include "export.h"

#include <string.h>

#define CAN_ERR_FLAG 0x20000000u
#define CAN_ID_MASK  0x1FFFFFFFu
#define CANFD_FDF    0x04u         /* linux/can.h: the frame is CAN FD */

static int candump_begin(struct export_ctx *x)
{
    (void)x;
    return 0;
}

static int candump_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    char line[64 + EXPORT_IFNAME_INLINE + 2 * 64], *p = line, *q;

    *p++ = '(';
    p = export_put_time(x, p, r->ts);
    *p++ = ')';
    *p++ = ' ';
    q = export_put_ifname(x, p, r->channel);
    if (!q) {                          /* a long name: written whole, on its own */
        const char *ifn = x->ifname[r->channel];
        if (export_write(x, line, (size_t)(p - line)) || export_write(x, ifn, strlen(ifn)))
            return -1;
        q = line;
    }
    p = q;
    *p++ = ' ';
    if (c->flags & SF_CAN_ERR)
        p = export_put_hex(p, CAN_ERR_FLAG | (c->id & CAN_ID_MASK), 8);
    else if (c->flags & SF_CAN_EFF)
        p = export_put_hex(p, c->id & CAN_ID_MASK, 8);
    else
        p = export_put_hex(p, c->id, 3);
    *p++ = '#';
    if (c->flags & SF_CAN_FD) {
        *p++ = '#';
        *p++ = export_hexu[CANFD_FDF | ((c->flags & SF_CAN_BRS) ? 1 : 0) |
                           ((c->flags & SF_CAN_ESI) ? 2 : 0)];
    } else if (c->flags & SF_CAN_RTR) {
        *p++ = 'R';
        if (c->len)
            *p++ = export_hexu[c->len & 0xF];
    }
    if (!(c->flags & SF_CAN_RTR))
        for (unsigned i = 0; i < c->len; i++) {
            *p++ = export_hexu[c->data[i] >> 4];
            *p++ = export_hexu[c->data[i] & 0xF];
        }
    *p++ = '\n';
    x->written++;
    return export_write(x, line, (size_t)(p - line)) ? -1 : 1;
}

static int candump_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

static int candump_end(struct export_ctx *x)
{
    (void)x;
    return 0;
}

const struct export_writer export_candump = {
    "candump", "log", 0, 0, candump_begin, candump_can, candump_other, candump_end,
};
