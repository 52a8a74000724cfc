/* RAM block device: sectors in memory the caller passes in. Writes are durable at once
 * (there is no power to lose); trim zeroes the sectors so that code relying on trimmed
 * data shows up in tests. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/bdev.h"

static struct sf_rambd *ram(struct sf_bdev *bd)
{
    return (struct sf_rambd *)bd;
}

/* The wrappers have checked the range, so offsets fit in size_t (init checked the total). */
static int ram_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    memcpy(buf, ram(bd)->mem + (size_t)lba * bd->sector_size, (size_t)count * bd->sector_size);
    return 0;
}

static int ram_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    memcpy(ram(bd)->mem + (size_t)lba * bd->sector_size, buf, (size_t)count * bd->sector_size);
    return 0;
}

static int ram_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static int ram_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    memset(ram(bd)->mem + (size_t)lba * bd->sector_size, 0, (size_t)count * bd->sector_size);
    return 0;
}

int sf_rambd_init(struct sf_rambd *r, void *mem, uint32_t sector_size, uint64_t sector_count)
{
    if (!r || !mem || (sector_size != 512 && sector_size != 4096) || sector_count == 0 ||
        sector_count > SIZE_MAX / sector_size)
        return SF_EINVAL;
    memset(r, 0, sizeof(*r));
    r->mem = mem;
    r->bd.sector_size = sector_size;
    r->bd.sector_count = sector_count;
    r->bd.align_sectors = 1;
    r->bd.mem_align = 1;
    r->bd.flags = 0;
    r->bd.read = ram_read;
    r->bd.write = ram_write;
    r->bd.flush = ram_flush;
    r->bd.trim = ram_trim;
    return 0;
}
