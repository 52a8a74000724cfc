/* sf_probe: what file system is on a device, and with which sector size.
 *
 * An image file is opened with 512-byte sectors before anything is known, but it may hold
 * a volume made for 4096-byte sectors: then the partition table counts in 4096-byte units
 * (a GPT header at byte 4096, not 512). When the 512-byte view finds nothing, the device is
 * looked at again through a read-only 4096-byte view. */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/part.h"
#include "fs/exfat_ondisk.h"
#include "util/le.h"

/* The parent seen with sectors 8 times larger (read only; lives on the caller's stack). */
struct view4k {
    struct sf_bdev bd;
    struct sf_bdev *parent;
};

static int view_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct view4k *v = (struct view4k *)bd;
    if (count > UINT32_MAX / 8)
        return SF_EINVAL;
    return sf_bdev_read(v->parent, lba * 8, buf, count * 8);
}

/* The sector size a boot sector declares, or 0 when it declares nonsense. */
static uint32_t declared_sector_size(const uint8_t *sec, int kind)
{
    if (kind == SF_FS_EXFAT) {
        uint8_t shift = sec[EXBS_SECTOR_SHIFT];
        return shift >= 9 && shift <= 12 ? 1u << shift : 0;
    }
    return ld_le16(sec + 11);   /* BPB_BytsPerSec, checked by sf_boot_sector_kind */
}

static int probe_dev(struct sf_bdev *bd, uint32_t partition, uint8_t *buf, uint8_t *type,
                     uint32_t *sector_size)
{
    struct sf_part p;
    int err = sf_part_find(bd, partition, buf, &p);
    if (err)
        return err;
    if ((err = sf_bdev_read(bd, p.first, buf, 1)))
        return err;
    int kind = sf_boot_sector_kind(buf, bd->sector_size);
    uint32_t ss = kind ? declared_sector_size(buf, kind) : 0;
    if (!ss)
        return SF_ENOENT;
    *type = (uint8_t)kind;
    *sector_size = ss;
    return 0;
}

int sf_probe(struct sf_bdev *bd, uint32_t partition, void *buf4096, uint8_t *type,
             uint32_t *sector_size)
{
    int err;

    if (!bd || !buf4096 || !type || !sector_size || bd->sector_size > 4096)
        return SF_EINVAL;
    *type = SF_FS_NONE;
    *sector_size = bd->sector_size;
    err = probe_dev(bd, partition, buf4096, type, sector_size);
    if (err != SF_ENOENT && err != SF_ECORRUPT)
        return err;
    if (bd->sector_size == 512 && bd->sector_count >= 8 * 3) {
        struct view4k v;
        memset(&v, 0, sizeof v);
        v.bd.sector_size = 4096;
        v.bd.sector_count = bd->sector_count / 8;
        v.bd.align_sectors = 1;
        v.bd.mem_align = bd->mem_align;
        v.bd.flags = SF_BDEV_READONLY;
        v.bd.read = view_read;
        v.parent = bd;
        err = probe_dev(&v.bd, partition, buf4096, type, sector_size);
        if (err != SF_ENOENT && err != SF_ECORRUPT)
            return err;
    }
    *type = SF_FS_NONE;     /* nothing recognisable, or a table too damaged to follow */
    *sector_size = bd->sector_size;
    return 0;
}
