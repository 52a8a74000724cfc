/* The reassembly alone (include/streamfat/proto.h): a gateway or a diagnostic tester that
 * turns CAN frames into ISO-TP, J1939 TP and fast-packet messages; the poll client's
 * receive side. The context, sessions and arena are the caller's (no .bss here). */
#include "size.h"
#include "streamfat/proto.h"

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
    return r;
}
