/* A reader: a boot loader taking firmware from a card, a player. Mount exFAT or FAT (read
 * only), look up, list and read files. Built with SF_READONLY (see scripts/size.sh). */
#include "size.h"
#include "streamfat/vol.h"

int sf_size_main(void)
{
    struct sf_vol *v = SIZE_PTR(struct sf_vol *, 1);
    struct sf_file *f = SIZE_PTR(struct sf_file *, 2);
    struct sf_dir *d = SIZE_PTR(struct sf_dir *, 3);
    struct sf_stat *st = SIZE_PTR(struct sf_stat *, 4);
    void *buf = SIZE_PTR(void *, 5);
    int r = 0;

    r += sf_mount(v, SIZE_PTR(const struct sf_vol_cfg *, 6));
    r += sf_stat(v, SIZE_PTR(const char *, 7), st);
    r += sf_opendir(v, d, SIZE_PTR(const char *, 8));
    r += sf_readdir(d, st);
    r += sf_closedir(d);
    r += sf_open(v, f, SIZE_PTR(const char *, 9), SF_O_RDONLY);
    r += (int)sf_seek(f, SIZE_U32(1), SF_SEEK_SET);
    r += (int)sf_read(f, buf, SIZE_U32(2));
    r += sf_close(f);
    r += sf_unmount(v);
    return r;
}
