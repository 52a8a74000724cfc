/* What a data logger flashes: mount exFAT or FAT32 (partition table or not), read and write
 * files, the streaming write path, the logger (ring, writer, rotation) and the record codec.
 * The block device is the firmware's own (an SD/eMMC driver), so no bdev of ours is linked
 * beyond the dispatch in bdev.c. */
#include "size.h"
#include "streamfat/log.h"
#include "streamfat/stream.h"
#include "streamfat/vol.h"

int sf_size_main(void)
{
    struct sf_vol *v = SIZE_PTR(struct sf_vol *, 1);
    struct sf_file *f = SIZE_PTR(struct sf_file *, 2);
    struct sf_stream *s = SIZE_PTR(struct sf_stream *, 3);
    struct sf_log *lg = SIZE_PTR(struct sf_log *, 4);
    void *buf = SIZE_PTR(void *, 5);
    int r = 0;

    r += sf_mount(v, SIZE_PTR(const struct sf_vol_cfg *, 6));
    /* files: config read at boot, a status file written */
    r += sf_open(v, f, SIZE_PTR(const char *, 7), SIZE_U32(1));
    r += (int)sf_read(f, buf, SIZE_U32(2));
    r += (int)sf_write(f, buf, SIZE_U32(3));
    r += (int)sf_seek(f, SIZE_U32(4), SF_SEEK_SET);
    r += sf_close(f);
    /* the streaming path on its own (raw captures) */
    r += sf_stream_open(v, s, SIZE_PTR(const char *, 8), SIZE_PTR(const struct sf_stream_cfg *, 9),
                        buf, SIZE_U32(5));
    r += (int)sf_stream_write(s, buf, SIZE_U32(6));
    r += sf_stream_checkpoint(s);
    r += sf_stream_close(s);
    /* the logger: producers (CAN frames, sensor rows) and the service step */
    r += sf_log_open(lg, SIZE_PTR(const struct sf_log_cfg *, 10));
    r += sf_log_append(lg, (uint8_t)SIZE_U32(7), 0, 0, SIZE_U32(8), buf, (uint16_t)SIZE_U32(9));
    r += sf_log_append_can(lg, 0, SIZE_U32(8), SIZE_U32(10), 0, buf, 8);
    r += sf_log_service(lg);
    r += (int)sf_log_next_deadline_ns(lg);
#if SF_SIZE_CONTROL
    /* scripts/size.sh's runtime-control: the control stage attached */
    r += sf_log_control(lg, SIZE_PTR(const struct sf_ctl_cfg *, 11), buf, SIZE_U32(12));
#endif
    r += sf_log_close(lg);
    r += sf_unmount(v);
    return r;
}
