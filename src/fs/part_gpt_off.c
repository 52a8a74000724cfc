/* Built instead of part_gpt.c when GPT is left out (SF_NO_GPT, CMake -DSF_GPT=OFF; see
 * include/streamfat/config.h): a disk whose MBR is GPT-protective does not mount
 * (SF_ENOTSUP), and mkfs cannot write a GPT. MBR and unpartitioned volumes are unaffected. */
#include "streamfat/sf.h"
#include "fs/part.h"

int part_gpt_find(struct sf_bdev *bd, uint32_t index, uint8_t *b, struct sf_part *out)
{
    (void)bd, (void)index, (void)b, (void)out;
    return SF_ENOTSUP;
}

int sf_part_write_gpt(struct sf_bdev *bd, void *buf, uint64_t first, uint64_t count,
                      const uint8_t disk_guid[16], const uint8_t part_guid[16])
{
    (void)bd, (void)buf, (void)first, (void)count, (void)disk_guid, (void)part_guid;
    return SF_ENOTSUP;
}
