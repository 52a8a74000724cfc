/* The checker and repairer alone (exFAT and FAT): a firmware that checks its card at boot. */
#include "size.h"
#include "streamfat/check.h"

int sf_size_main(void)
{
    struct sf_bdev *bd = SIZE_PTR(struct sf_bdev *, 1);
    return (int)sf_check_work_size_buf(bd, SIZE_PTR(void *, 4), SIZE_U32(1)) +
           sf_check(bd, SIZE_PTR(const struct sf_check_opts *, 2),
                    SIZE_PTR(struct sf_check_result *, 3));
}
