/* Partition tables: MBR (four primary entries) and GPT (UEFI 2.x, section 5.3), reading to
 * find the volume and writing one-partition tables for mkfs.
 *
 * Sections: boot sector recognition, MBR reading, GPT reading, sf_part_find, writing. */
#include <string.h>
#include "streamfat/sf.h"
#include "fs/part.h"
#include "util/le.h"
#include "util/crc32.h"
#include "util/div64.h"

/* ---- MBR: sector 0 ---- */
#define MBR_DISK_SIG     440   /* u32 disk signature */
#define MBR_TABLE        446   /* 4 entries of 16 bytes */
#define MBR_ENTRY_SIZE   16
#define MBRE_STATUS      0     /* u8 0x80 active, 0x00 inactive */
#define MBRE_CHS_FIRST   1     /* u8[3] */
#define MBRE_TYPE        4     /* u8 partition type */
#define MBRE_CHS_LAST    5     /* u8[3] */
#define MBRE_LBA         8     /* u32 first sector */
#define MBRE_COUNT       12    /* u32 sectors */
#define MBR_SIGNATURE    510   /* u16 0xAA55 */
#define MBR_TYPE_GPT     0xEE  /* protective MBR */

/* ---- GPT header (LBA 1, backup at the last LBA) ---- */
#define GPTH_SIG         0     /* u8[8] "EFI PART" */
#define GPTH_REVISION    8     /* u32 0x00010000 */
#define GPTH_SIZE        12    /* u32 header size, 92 */
#define GPTH_CRC         16    /* u32 CRC32 of the header with this field zero */
#define GPTH_MY_LBA      24    /* u64 */
#define GPTH_ALT_LBA     32    /* u64 the other header */
#define GPTH_FIRST_USABLE 40   /* u64 */
#define GPTH_LAST_USABLE 48    /* u64 */
#define GPTH_DISK_GUID   56    /* u8[16] */
#define GPTH_ENTRY_LBA   72    /* u64 start of the entry array */
#define GPTH_ENTRY_COUNT 80    /* u32 */
#define GPTH_ENTRY_SIZE  84    /* u32 128 * 2^n */
#define GPTH_ENTRY_CRC   88    /* u32 CRC32 of the whole entry array */
#define GPT_HEADER_SIZE  92

/* ---- GPT partition entry ---- */
#define GPTE_TYPE        0     /* u8[16] type GUID, all zero = unused */
#define GPTE_GUID        16    /* u8[16] unique partition GUID */
#define GPTE_FIRST       32    /* u64 first LBA */
#define GPTE_LAST        40    /* u64 last LBA, inclusive */
#define GPTE_ATTR        48    /* u64 */
#define GPTE_NAME        56    /* u16[36] UTF-16LE */
#define GPT_ENTRY_SIZE   128
#define GPT_ENTRIES      128   /* written by mkfs: 16 KiB of entries, the usual minimum */

/* EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, Microsoft basic data, in on-disk (mixed-endian) form. */
static const uint8_t gpt_type_basic_data[16] = {
    0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44,
    0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99, 0xC7,
};

/* ---- boot sector recognition ---- */

static int is_pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

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
    uint64_t meta = rsvd + (uint64_t)nfats * fatsz + (root_ents * 32 + bps - 1) / bps;
    if (tot <= meta)
        return 0;
    uint32_t clusters = (uint32_t)(tot - meta) / spc;    /* tot > meta, both 32-bit */
    if (clusters < 4085)
        return SF_FS_FAT12;
    /* A 16-bit FAT size means FAT12/16 whatever the count (as Linux decides): a count past
     * FAT16's range is mounted as FAT16 with a warning. */
    return SF_FS_FAT16;
}

/* ---- reading ---- */

/* Read the first sector of a candidate partition and say whether it holds FAT/exFAT. */
static int holds_fs(struct sf_bdev *bd, void *buf, uint64_t first, int *kind)
{
    int err = sf_bdev_read(bd, first, buf, 1);
    if (err)
        return err;
    *kind = sf_boot_sector_kind(buf, bd->sector_size);
    return 0;
}

struct gpt_hdr {
    uint64_t entry_lba;
    uint32_t entry_count;
    uint32_t entry_size;
    uint32_t entry_crc;
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
        !is_pow2(h->entry_size) || h->entry_size > ss || h->entry_lba < 2 ||
        h->entry_count > 65536)
        return SF_ECORRUPT;
    uint64_t sectors = sf_udiv64((uint64_t)h->entry_count * h->entry_size + ss - 1, ss);
    if (h->entry_lba > bd->sector_count || sectors > bd->sector_count - h->entry_lba)
        return SF_ECORRUPT;
    return 0;
}

static int gpt_find(struct sf_bdev *bd, uint32_t index, uint8_t *b, struct sf_part *out)
{
    uint32_t ss = bd->sector_size;
    struct gpt_hdr h;
    int err;

    if ((err = gpt_read_header(bd, b, &h)))
        return err;
    uint32_t per = ss / h.entry_size;
    uint64_t sectors = sf_udiv64((uint64_t)h.entry_count * h.entry_size + ss - 1, ss);

    /* Pass 1: the entry array's CRC, before any entry is believed. */
    uint32_t crc = 0, left = h.entry_count;
    for (uint64_t s = 0; s < sectors; s++) {
        if ((err = sf_bdev_read(bd, h.entry_lba + s, b, 1)))
            return err;
        uint32_t n = left < per ? left : per;
        crc = sf_crc32(crc, b, (size_t)n * h.entry_size);
        left -= n;
    }
    if (crc != h.entry_crc)
        return SF_ECORRUPT;

    /* Pass 2: the Nth entry, or the first used one that holds FAT/exFAT. */
    uint64_t loaded = UINT64_MAX;       /* the entry sector now in b */
    for (uint32_t i = 0; i < h.entry_count; i++) {
        uint64_t lba = h.entry_lba + i / per;
        if (lba != loaded) {
            if ((err = sf_bdev_read(bd, lba, b, 1)))
                return err;
            loaded = lba;
        }
        const uint8_t *e = b + (size_t)(i % per) * h.entry_size;
        static const uint8_t zero[16];
        int used = memcmp(e + GPTE_TYPE, zero, 16) != 0;
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
            loaded = UINT64_MAX;        /* holds_fs reuses b */
            if ((err = holds_fs(bd, b, first, &kind)))
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
            return gpt_find(bd, index, b, out);
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
            if ((err = holds_fs(bd, b, first, &kind)))
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

static void mbr_entry(uint8_t *b, uint64_t first, uint64_t count, uint8_t type)
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
    mbr_entry(b, first, count, mbr_type);
    return sf_bdev_write(bd, 0, b, 1);
}

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
    mbr_entry(b, 1, n - 1 > 0xFFFFFFFFu ? 0xFFFFFFFFu : n - 1, MBR_TYPE_GPT);
    uint8_t *e = b + MBR_TABLE;
    e[MBRE_CHS_FIRST] = 0x00;          /* UEFI: StartingCHS 0x000200 */
    e[MBRE_CHS_FIRST + 1] = 0x02;
    e[MBRE_CHS_FIRST + 2] = 0x00;
    return sf_bdev_write(bd, 0, b, 1);
}
