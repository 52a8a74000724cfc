/* GPT (UEFI 2.x, section 5.3): finding the volume among the entries, and writing a
 * one-partition GPT with its protective MBR for mkfs. Left out with SF_NO_GPT
 * (part_gpt_off.c instead: a GPT disk then mounts as SF_ENOTSUP). */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/part.h"
#include "fs/part_ondisk.h"
#include "util/le.h"
#include "util/crc32.h"
#include "util/div64.h"

/* EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, Microsoft basic data, in on-disk (mixed-endian) form. */
static const uint8_t gpt_type_basic_data[16] = {
    0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44,
    0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99, 0xC7,
};

/* ---- reading ---- */

struct gpt_hdr {
    uint64_t entry_lba;
    uint32_t entry_count;
    uint32_t entry_size;
    uint32_t entry_crc;
    uint32_t entry_sectors;     /* sectors the entry array spans */
};

static int gpt_read_header(struct sf_bdev *bd, uint8_t *b, struct gpt_hdr *h)
{
    uint32_t ss = bd->sector_size;
    int err;

    if (bd->sector_count < 3)
        return SF_ECORRUPT;
    if ((err = sf_bdev_read(bd, 1, b, 1)))
        return err;
    if (memcmp(b + GPTH_SIG, "EFI PART", 8))
        return SF_ECORRUPT;           /* protective MBR without a GPT */
    uint32_t hsize = ld_le32(b + GPTH_SIZE), crc = ld_le32(b + GPTH_CRC);
    if (hsize < GPT_HEADER_SIZE || hsize > ss)
        return SF_ECORRUPT;
    st_le32(b + GPTH_CRC, 0);
    if (sf_crc32(0, b, hsize) != crc)
        return SF_ECORRUPT;
    h->entry_lba = ld_le64(b + GPTH_ENTRY_LBA);
    h->entry_count = ld_le32(b + GPTH_ENTRY_COUNT);
    h->entry_size = ld_le32(b + GPTH_ENTRY_SIZE);
    h->entry_crc = ld_le32(b + GPTH_ENTRY_CRC);
    if (ld_le64(b + GPTH_MY_LBA) != 1 || h->entry_size < GPT_ENTRY_SIZE ||
        (h->entry_size & (h->entry_size - 1)) || h->entry_size > ss || h->entry_lba < 2 ||
        h->entry_count > 65536)
        return SF_ECORRUPT;
    /* At most 65536 entries of at most one sector each: the count fits 32 bits. */
    h->entry_sectors = (uint32_t)sf_udiv64((uint64_t)h->entry_count * h->entry_size + ss - 1, ss);
    if (h->entry_lba > bd->sector_count || h->entry_sectors > bd->sector_count - h->entry_lba)
        return SF_ECORRUPT;
    return 0;
}

int part_gpt_find(struct sf_bdev *bd, uint32_t index, uint8_t *b, struct sf_part *out)
{
    uint32_t ss = bd->sector_size;
    struct gpt_hdr h;
    int err;

    if ((err = gpt_read_header(bd, b, &h)))
        return err;
    uint32_t per = ss / h.entry_size;

    /* Pass 1: the entry array's CRC, before any entry is believed. */
    uint32_t crc = 0, left = h.entry_count;
    for (uint32_t s = 0; s < h.entry_sectors; s++) {
        if ((err = sf_bdev_read(bd, h.entry_lba + s, b, 1)))
            return err;
        uint32_t n = left < per ? left : per;
        crc = sf_crc32(crc, b, (size_t)n * h.entry_size);
        left -= n;
    }
    if (crc != h.entry_crc)
        return SF_ECORRUPT;

    /* Pass 2: the Nth entry, or the first used one that holds FAT/exFAT. */
    uint32_t loaded = UINT32_MAX;       /* the entry sector now in b, from entry_lba */
    for (uint32_t i = 0; i < h.entry_count; i++) {
        uint32_t sec = i / per;
        if (sec != loaded) {
            if ((err = sf_bdev_read(bd, h.entry_lba + sec, b, 1)))
                return err;
            loaded = sec;
        }
        const uint8_t *e = b + (size_t)(i % per) * h.entry_size;
        uint8_t used = 0;               /* a type GUID of all zeros: the entry is unused */
        for (uint32_t k = 0; k < 16; k++)
            used |= e[GPTE_TYPE + k];
        if (!used) {
            if (index == i + 1)
                return SF_ENOENT;
            continue;
        }
        uint64_t first = ld_le64(e + GPTE_FIRST), last = ld_le64(e + GPTE_LAST);
        if (first > last || last >= bd->sector_count || first < 2)
            return SF_ECORRUPT;
        if (index && index != i + 1)
            continue;
        if (!index) {
            int kind;
            loaded = UINT32_MAX;        /* holds_fs reuses b */
            if ((err = part_holds_fs(bd, b, first, &kind)))
                return err;
            if (!kind)
                continue;
        }
        out->first = first;
        out->count = last - first + 1;
        out->scheme = SF_PART_GPT;
        out->mbr_type = 0;
        return 0;
    }
    return SF_ENOENT;
}

/* ---- writing ---- */

static void gpt_header(uint8_t *b, uint32_t ss, uint64_t my, uint64_t alt, uint64_t first_usable,
                       uint64_t last_usable, const uint8_t disk_guid[16], uint64_t entry_lba,
                       uint32_t entry_crc)
{
    memset(b, 0, ss);
    memcpy(b + GPTH_SIG, "EFI PART", 8);
    st_le32(b + GPTH_REVISION, 0x00010000u);
    st_le32(b + GPTH_SIZE, GPT_HEADER_SIZE);
    st_le64(b + GPTH_MY_LBA, my);
    st_le64(b + GPTH_ALT_LBA, alt);
    st_le64(b + GPTH_FIRST_USABLE, first_usable);
    st_le64(b + GPTH_LAST_USABLE, last_usable);
    memcpy(b + GPTH_DISK_GUID, disk_guid, 16);
    st_le64(b + GPTH_ENTRY_LBA, entry_lba);
    st_le32(b + GPTH_ENTRY_COUNT, GPT_ENTRIES);
    st_le32(b + GPTH_ENTRY_SIZE, GPT_ENTRY_SIZE);
    st_le32(b + GPTH_ENTRY_CRC, entry_crc);
    st_le32(b + GPTH_CRC, sf_crc32(0, b, GPT_HEADER_SIZE));
}

/* Write order: entry arrays, backup header, primary header, protective MBR last, so that
 * an interrupted write leaves no MBR claiming a GPT that is not all there. */
int sf_part_write_gpt(struct sf_bdev *bd, void *buf, uint64_t first, uint64_t count,
                      const uint8_t disk_guid[16], const uint8_t part_guid[16])
{
    uint8_t *b = buf;
    uint32_t ss = bd->sector_size;
    uint64_t n = bd->sector_count;
    uint32_t es = GPT_ENTRIES * GPT_ENTRY_SIZE / ss;   /* entry-array sectors */
    uint32_t per = ss / GPT_ENTRY_SIZE;
    int err;

    if (ss < 512 || n < 2 * (uint64_t)es + 4)
        return SF_EINVAL;
    uint64_t first_usable = 2 + es, last_usable = n - 2 - es, backup_entries = n - 1 - es;
    if (!count || first < first_usable || first > last_usable ||
        count - 1 > last_usable - first)
        return SF_EINVAL;

    uint32_t crc = 0;
    for (uint32_t s = 0; s < es; s++) {
        memset(b, 0, ss);
        if (s == 0) {
            memcpy(b + GPTE_TYPE, gpt_type_basic_data, 16);
            memcpy(b + GPTE_GUID, part_guid, 16);
            st_le64(b + GPTE_FIRST, first);
            st_le64(b + GPTE_LAST, first + count - 1);
            static const char name[] = "streamfat";
            for (unsigned i = 0; name[i]; i++)
                st_le16(b + GPTE_NAME + 2 * i, (uint8_t)name[i]);
        }
        crc = sf_crc32(crc, b, (size_t)per * GPT_ENTRY_SIZE);
        if ((err = sf_bdev_write(bd, 2 + s, b, 1)) ||
            (err = sf_bdev_write(bd, backup_entries + s, b, 1)))
            return err;
    }
    gpt_header(b, ss, n - 1, 1, first_usable, last_usable, disk_guid, backup_entries, crc);
    if ((err = sf_bdev_write(bd, n - 1, b, 1)))
        return err;
    gpt_header(b, ss, 1, n - 1, first_usable, last_usable, disk_guid, 2, crc);
    if ((err = sf_bdev_write(bd, 1, b, 1)))
        return err;

    memset(b, 0, ss);
    part_mbr_entry(b, 1, n - 1 > 0xFFFFFFFFu ? 0xFFFFFFFFu : n - 1, MBR_TYPE_GPT);
    uint8_t *e = b + MBR_TABLE;
    e[MBRE_CHS_FIRST] = 0x00;          /* UEFI: StartingCHS 0x000200 */
    e[MBRE_CHS_FIRST + 1] = 0x02;
    e[MBRE_CHS_FIRST + 2] = 0x00;
    return sf_bdev_write(bd, 0, b, 1);
}
