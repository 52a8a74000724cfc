/* The `tiny` set: the smallest useful logger (issue 19, docs/PORTING.md "The tiny set"): the
 * dedicated tiny logger (include/streamfat/tiny.h, src/tiny/). Mount a FAT16/FAT32 volume,
 * open the log (the directory, the first file), append CAN frames and records as an
 * interrupt would, service it from the main loop (whole blocks, checkpoints, rotation by
 * size), close, unmount. The block device is the firmware's (an SD driver over SPI). */
#include "size.h"
#include "streamfat/tiny.h"

int sf_size_main(void)
{
    struct sf_tiny_vol *v = SIZE_PTR(struct sf_tiny_vol *, 1);
    struct sf_tiny_log *lg = SIZE_PTR(struct sf_tiny_log *, 4);
    void *buf = SIZE_PTR(void *, 5);
    int r = 0;

    r += sf_tiny_mount(v, SIZE_PTR(struct sf_bdev *, 6), SIZE_PTR(void *, 7));
    r += sf_tiny_log_open(lg, SIZE_PTR(const struct sf_tiny_log_cfg *, 10));
    r += sf_tiny_log_append(lg, (uint8_t)SIZE_U32(7), 0, 0, SIZE_U32(8), buf,
                            (uint16_t)SIZE_U32(9));
    r += sf_tiny_log_append_can(lg, 0, SIZE_U32(8), SIZE_U32(10), 0, buf, 8);
    r += sf_tiny_log_service(lg);
    r += sf_tiny_log_close(lg);
    r += sf_tiny_unmount(v);
    return r;
}
