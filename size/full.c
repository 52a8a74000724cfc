/* Everything a firmware could call: the runtime set, the rest of the file API (directories,
 * rename, truncate), the logger's other entry points, the record decoder, mkfs, the checker
 * (when the core has it: SF_SIZE_HAVE_CHECK, set by scripts/size.sh) and the RAM device.
 * Not the fault-injection device (a test tool). */
#include "size.h"
#include "streamfat/decode.h"
#include "streamfat/log.h"
#include "streamfat/stream.h"
#include "streamfat/vol.h"
#if SF_SIZE_HAVE_CHECK
#include "streamfat/check.h"
#endif

int sf_size_main(void)
{
    struct sf_vol *v = SIZE_PTR(struct sf_vol *, 1);
    struct sf_file *f = SIZE_PTR(struct sf_file *, 2);
    struct sf_stream *s = SIZE_PTR(struct sf_stream *, 3);
    struct sf_log *lg = SIZE_PTR(struct sf_log *, 4);
    void *buf = SIZE_PTR(void *, 5);
    struct sf_dir *d = SIZE_PTR(struct sf_dir *, 11);
    struct sf_stat *st = SIZE_PTR(struct sf_stat *, 12);
    struct sf_dec *dec = SIZE_PTR(struct sf_dec *, 13);
    struct sf_dec_event *ev = SIZE_PTR(struct sf_dec_event *, 14);
    struct sf_bdev *bd = SIZE_PTR(struct sf_bdev *, 15);
    const char *p1 = SIZE_PTR(const char *, 7), *p2 = SIZE_PTR(const char *, 8);
    const char *why;
    uint8_t type;
    uint32_t ss;
    int r = 0;

    r += sf_rambd_init(SIZE_PTR(struct sf_rambd *, 16), buf, 512, SIZE_U32(1));
    r += sf_probe(bd, 0, buf, &type, &ss);
    r += sf_mkfs(bd, SIZE_PTR(const struct sf_mkfs_opts *, 17), &why);
#if SF_SIZE_HAVE_CHECK
    r += (int)sf_check_work_size_buf(bd, buf, SIZE_U32(2));
    r += sf_check(bd, SIZE_PTR(const struct sf_check_opts *, 18),
                  SIZE_PTR(struct sf_check_result *, 19));
#endif
    r += sf_mount(v, SIZE_PTR(const struct sf_vol_cfg *, 6));
    r += (int)sf_vol_free_clusters(v);
    r += sf_vol_info(v, SIZE_PTR(struct sf_vol_info *, 20));
    r += sf_open(v, f, p1, SIZE_U32(1));
    r += (int)sf_read(f, buf, SIZE_U32(2));
    r += (int)sf_write(f, buf, SIZE_U32(3));
    r += (int)sf_seek(f, SIZE_U32(4), SF_SEEK_SET);
    r += sf_truncate(f, SIZE_U32(5));
    r += sf_sync(f);
    r += sf_close(f);
    r += sf_stat(v, p1, st);
    r += sf_mkdir(v, p1);
    r += sf_rename(v, p1, p2);
    r += sf_unlink(v, p1);
    r += sf_rmdir(v, p2);
    r += sf_opendir(v, d, p2);
    r += sf_readdir(d, st);
    r += sf_closedir(d);
    r += sf_stream_open(v, s, p2, SIZE_PTR(const struct sf_stream_cfg *, 9), buf, SIZE_U32(5));
    r += (int)sf_stream_write(s, buf, SIZE_U32(6));
    r += sf_stream_submit(s, buf, SIZE_U32(6), buf);
    r += sf_stream_poll(s, SIZE_PTR(void **, 21), 4, 1);
    r += sf_stream_checkpoint(s);
    r += sf_stream_close(s);
    r += sf_log_open(lg, SIZE_PTR(const struct sf_log_cfg *, 10));
    r += sf_log_append(lg, (uint8_t)SIZE_U32(7), 0, 0, SIZE_U32(8), buf, (uint16_t)SIZE_U32(9));
    r += sf_log_append_can(lg, 0, SIZE_U32(8), SIZE_U32(10), 0, buf, 8);
    r += (int)sf_log_write_raw(lg, buf, SIZE_U32(11));
    r += sf_log_service(lg);
    r += (int)sf_log_next_deadline_ns(lg);
    r += sf_log_trigger(lg, SIZE_U32(8), p1);
    r += sf_log_rotate(lg);
    r += SIZE_PTR(const struct sfl_pack_ops *, 25) == &sf_log_packer;   /* compressed blocks */
    r += sf_log_control(lg, SIZE_PTR(const struct sf_ctl_cfg *, 23), buf, SIZE_U32(12));
    r += sf_log_get_chan_stats(lg, SIZE_U32(13), SIZE_PTR(struct sf_log_chan_stats *, 24));
    sf_log_get_stats(lg, SIZE_PTR(struct sf_log_stats *, 22));
    r += sf_log_close(lg);
    r += sf_unmount(v);
    r += sf_dec_init(dec, buf, SIZE_U32(12));
    r += (int)sf_dec_feed(dec, buf, SIZE_U32(13));
    r += sf_dec_next(dec, ev);
    r += (int)*sf_strerror(r);
    return r;
}
