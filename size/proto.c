/* The reassembly alone (include/streamfat/proto.h): a gateway or a diagnostic tester that
 * turns CAN frames into ISO-TP, J1939 TP and fast-packet messages; the poll client's
 * receive side, with the decoders on top (include/streamfat/diag.h: UDS, OBD-II, DM1).
 * The context, sessions and arena are the caller's (no .bss here). */
#include "size.h"
#include "streamfat/proto.h"
#include "streamfat/diag.h"

int sf_size_main(void)
{
    struct sf_proto *p = SIZE_PTR(struct sf_proto *, 1);
    struct sf_proto_msg *m = SIZE_PTR(struct sf_proto_msg *, 2);
    int r = 0;

    r += sf_proto_init(p, SIZE_PTR(const struct sf_proto_config *, 3));
    r += sf_proto_feed(p, SIZE_PTR(const struct sf_proto_frame *, 4));
    r += sf_proto_next(p, m);
    r += sf_proto_expire(p, SIZE_U32(1));
    r += sf_proto_finish(p);

    /* the decoders, on the message's payload */
    struct sf_uds *u = SIZE_PTR(struct sf_uds *, 5);
    struct sf_obd_pid *o = SIZE_PTR(struct sf_obd_pid *, 6);
    struct sf_dm1 *d = SIZE_PTR(struct sf_dm1 *, 7);
    struct sf_dm1_dtc *t = SIZE_PTR(struct sf_dm1_dtc *, 8);
    uint32_t dtc = 0;
    uint16_t odtc = 0;
    uint8_t st = 0;
    const uint8_t *vin = 0;
    char txt[6];
    r += sf_uds_parse(m->payload, m->length, u);
    r += sf_uds_dtc_at(u, SIZE_U32(2), &dtc, &st);
    r += sf_uds_service_name(u->sid) != 0;
    r += sf_uds_nrc_name(u->nrc) != 0;
    r += sf_uds_is_uds(m->payload, m->length);
    r += sf_obd_pid_at(m->payload, m->length, SIZE_U32(3), o);
    r += sf_obd_dtc_at(m->payload, m->length, SIZE_U32(4), &odtc);
    sf_obd_dtc_text(odtc, txt);
    r += txt[0];
    r += sf_obd_vin(m->payload, m->length, &vin);
    r += sf_dm1_parse(m->payload, m->length, d);
    r += sf_dm1_dtc_at(d, SIZE_U32(5), t);
    r += sf_dm1_lamp_name(d->mil)[0] + sf_dm1_flash_name(d->mil_flash)[0];
    return r + (int)dtc + st + (vin != 0);
}
