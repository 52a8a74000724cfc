/* Partition tables: recognising a boot sector, finding the volume in an MBR (or, through
 * part_gpt.c, a GPT), and writing one-partition MBRs for mkfs. The GPT half is a file of its
 * own so that SF_NO_GPT (include/streamfat/config.h) can leave it out: SD cards carry an
 * MBR by the SD specification, so a card logger's firmware need not read GPT.
 *
 * Sections: boot sector recognition, reading, writing. */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/part.h"
#include "fs/part_ondisk.h"
#include "util/le.h"

/* ---- boot sector recognition ---- */

static int is_pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

/* fat_mount and exfat_mount rely on what this establishes (fat_vol.c, check_bpb): keep the
 * two in step. */
int sf_boot_sector_kind(const uint8_t *sec, uint32_t len)
{
    if (len < 512)
        return 0;
    if (!memcmp(sec + 3, "EXFAT   ", 8))
        return SF_FS_EXFAT;
    if (sec[0] != 0xEB && sec[0] != 0xE9)
        return 0;
    uint32_t bps = ld_le16(sec + 11), spc = sec[13], rsvd = ld_le16(sec + 14);
    uint32_t nfats = sec[16], root_ents = ld_le16(sec + 17);
    uint32_t tot = ld_le16(sec + 19), fatsz = ld_le16(sec + 22);
    if (bps < 512 || bps > 4096 || !is_pow2(bps) || !is_pow2(spc) || !rsvd || !nfats)
        return 0;                     /* rejects NTFS too: no reserved sectors, no FATs */
    if (!fatsz)
        return ld_le32(sec + 36) ? SF_FS_FAT32 : 0;  /* BPB_FATSz32 */
    if (!tot)
        tot = ld_le32(sec + 32);
    /* 16-bit counts and an 8-bit number of FATs: no overflow in 32 bits. */
    uint32_t meta = rsvd + nfats * fatsz + (root_ents * 32 + bps - 1) / bps;
    if (tot <= meta)
        return 0;
    uint32_t clusters = (tot - meta) / spc;
    if (clusters < 4085)
        return SF_FS_FAT12;
    /* A 16-bit FAT size means FAT12/16 whatever the count (as Linux decides): a count past
     * FAT16's range is mounted as FAT16 with a warning. */
    return SF_FS_FAT16;
}

/* ---- reading ---- */

int part_holds_fs(struct sf_bdev *bd, void *buf, uint64_t first, int *kind)
{
    int err = sf_bdev_read(bd, first, buf, 1);
    if (err)
        return err;
    *kind = sf_boot_sector_kind(buf, bd->sector_size);
    return 0;
}

int sf_part_find(struct sf_bdev *bd, uint32_t index, void *buf, struct sf_part *out)
{
    uint8_t *b = buf;
    uint32_t ss = bd->sector_size;
    int err;

    if (ss < 512 || !bd->sector_count)
        return SF_EINVAL;
    if ((err = sf_bdev_read(bd, 0, b, 1)))
        return err;
    if (!index && sf_boot_sector_kind(b, ss)) {
        out->first = 0;
        out->count = bd->sector_count;
        out->scheme = SF_PART_NONE;
        out->mbr_type = 0;
        return 0;
    }
    if (ld_le16(b + MBR_SIGNATURE) != 0xAA55)
        return SF_ENOENT;

    /* Copy the table out: reading candidates reuses buf. */
    uint8_t tab[4][MBR_ENTRY_SIZE];
    memcpy(tab, b + MBR_TABLE, sizeof tab);
    for (int i = 0; i < 4; i++) {
        if ((tab[i][MBRE_STATUS] & 0x7F) != 0)
            return SF_ENOENT;         /* not a partition table (e.g. a boot sector of
                                         something else that happens to end in 55AA) */
        if (tab[i][MBRE_TYPE] == MBR_TYPE_GPT)
            return part_gpt_find(bd, index, b, out);
    }
    for (uint32_t i = 0; i < 4; i++) {
        const uint8_t *e = tab[i];
        uint64_t first = ld_le32(e + MBRE_LBA), count = ld_le32(e + MBRE_COUNT);
        if (!e[MBRE_TYPE] || !count) {
            if (index == i + 1)
                return SF_ENOENT;
            continue;
        }
        if (!first || first > bd->sector_count || count > bd->sector_count - first)
            return SF_ECORRUPT;
        if (index && index != i + 1)
            continue;
        if (!index) {
            int kind;
            if (e[MBRE_TYPE] == 0x05 || e[MBRE_TYPE] == 0x0F || e[MBRE_TYPE] == 0x85)
                continue;             /* extended partitions: not followed */
            if ((err = part_holds_fs(bd, b, first, &kind)))
                return err;
            if (!kind)
                continue;
        }
        out->first = first;
        out->count = count;
        out->scheme = SF_PART_MBR;
        out->mbr_type = e[MBRE_TYPE];
        return 0;
    }
    return SF_ENOENT;
}

/* ---- writing ---- */

/* CHS of an LBA in the conventional 255 heads x 63 sectors geometry; beyond cylinder 1023
 * the maximum (1023, 254, 63), as every partitioner writes it. */
static void put_chs(uint8_t *p, uint64_t lba)
{
    uint32_t c = 1023, h = 254, s = 63;
    if (lba < 1024 * 255 * 63) {           /* fits 32 bits: no 64-bit divide */
        uint32_t l = (uint32_t)lba;
        c = l / (255 * 63);
        h = l / 63 % 255;
        s = l % 63 + 1;
    }
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(s | ((c >> 2) & 0xC0));
    p[2] = (uint8_t)c;
}

void part_mbr_entry(uint8_t *b, uint64_t first, uint64_t count, uint8_t type)
{
    uint8_t *e = b + MBR_TABLE;
    put_chs(e + MBRE_CHS_FIRST, first);
    put_chs(e + MBRE_CHS_LAST, first + count - 1);
    e[MBRE_TYPE] = type;
    st_le32(e + MBRE_LBA, (uint32_t)first);
    st_le32(e + MBRE_COUNT, (uint32_t)count);
    st_le16(b + MBR_SIGNATURE, 0xAA55);
}

int sf_part_write_mbr(struct sf_bdev *bd, void *buf, uint64_t first, uint64_t count,
                      uint8_t mbr_type)
{
    uint8_t *b = buf;
    uint32_t ss = bd->sector_size;
    int err;

    if (!first || !count || first > bd->sector_count || count > bd->sector_count - first ||
        first > 0xFFFFFFFFu || count > 0xFFFFFFFFu || !mbr_type || mbr_type == MBR_TYPE_GPT)
        return SF_EINVAL;
    /* Stale GPT headers would make tools see two tables: clear both (the backup one lies at
     * the device's end, inside the new volume or past it, which mkfs overwrites anyway). */
    memset(b, 0, ss);
    if ((err = sf_bdev_write(bd, 1, b, 1)))
        return err;
    if (bd->sector_count > 2 && (err = sf_bdev_write(bd, bd->sector_count - 1, b, 1)))
        return err;
    /* A disk signature derived from the geometry: deterministic, and non-zero. */
    uint32_t sig = (uint32_t)(first * 0x9E3779B1u) ^ (uint32_t)(count * 0x85EBCA77u) ^ 0x5F3A1C2Du;
    st_le32(b + MBR_DISK_SIG, sig ? sig : 1);
    part_mbr_entry(b, first, count, mbr_type);
    return sf_bdev_write(bd, 0, b, 1);
}

