/* The `tiny` set: the smallest useful logger (issue 19). Mount one file system, run the
 * logger (producers append CAN frames and records from an interrupt, the main loop services
 * it, rotation by size, checkpoints, DROP records), close, unmount. No general file API: the
 * logger's own files only. The block device is the firmware's (an SD driver over SPI). */
#include "size.h"
#include "streamfat/log.h"
#include "streamfat/vol.h"

int sf_size_main(void)
{
    struct sf_vol *v = SIZE_PTR(struct sf_vol *, 1);
    struct sf_log *lg = SIZE_PTR(struct sf_log *, 4);
    void *buf = SIZE_PTR(void *, 5);
    int r = 0;

    r += sf_mount(v, SIZE_PTR(const struct sf_vol_cfg *, 6));
    r += sf_log_open(lg, SIZE_PTR(const struct sf_log_cfg *, 10));
    r += sf_log_append(lg, (uint8_t)SIZE_U32(7), 0, 0, SIZE_U32(8), buf, (uint16_t)SIZE_U32(9));
    r += sf_log_append_can(lg, 0, SIZE_U32(8), SIZE_U32(10), 0, buf, 8);
    r += sf_log_service(lg);
    r += (int)sf_log_next_deadline_ns(lg);
    r += sf_log_close(lg);
    r += sf_unmount(v);
    return r;
}
