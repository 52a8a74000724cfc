/* Partition tables: find the volume inside an MBR or GPT, and write them for mkfs. */
#ifndef SF_FS_PART_H
#define SF_FS_PART_H

#include <stdint.h>
#include "streamfat/bdev.h"

struct sf_part {
    uint64_t first;   /* sectors from the start of the device */
    uint64_t count;   /* sectors */
    uint8_t scheme;   /* enum sf_part_scheme: SF_PART_NONE for a superfloppy */
    uint8_t mbr_type; /* MBR partition type byte (0x07 exFAT/NTFS, 0x0C FAT32 LBA, 0x0E FAT16 LBA) */
};

/* Locate the volume. index 0: sector 0 itself when it is a FAT/exFAT boot sector
 * (superfloppy), else the first MBR/GPT partition whose first sector is a FAT/exFAT boot
 * sector; index N >= 1: the Nth partition of the table (1-based, MBR primary or GPT entry),
 * whatever it holds. buf: one sector of bd. Returns 0, SF_ENOENT when there is no such
 * partition or nothing recognisable, SF_ECORRUPT for an inconsistent table (an entry
 * beyond the device, a GPT header whose CRC fails), or an I/O error. */
int sf_part_find(struct sf_bdev *bd, uint32_t index, void *buf, struct sf_part *out);

/* Is this sector an exFAT (returns SF_FS_EXFAT) or FAT (SF_FS_FAT32/16/12) boot sector by
 * its signature fields alone? 0 when neither. Reads no device. */
int sf_boot_sector_kind(const uint8_t *sec, uint32_t len);

/* Write a partition table with one partition [first, first + count) of the given MBR type
 * (for GPT: the Microsoft basic data type GUID, protective MBR, primary and backup header
 * and entry arrays, CRC32 over both). buf: one sector of bd, its contents destroyed. */
int sf_part_write_mbr(struct sf_bdev *bd, void *buf, uint64_t first, uint64_t count,
                      uint8_t mbr_type);
int sf_part_write_gpt(struct sf_bdev *bd, void *buf, uint64_t first, uint64_t count,
                      const uint8_t disk_guid[16], const uint8_t part_guid[16]);

/* Shared by part.c and part_gpt.c. */
/* Read sector `first` into buf and set *kind to sf_boot_sector_kind of it. */
int part_holds_fs(struct sf_bdev *bd, void *buf, uint64_t first, int *kind);
/* Fill MBR entry 0 (CHS, type, LBA, count) and the 0xAA55 signature of sector b. */
void part_mbr_entry(uint8_t *b, uint64_t first, uint64_t count, uint8_t type);
/* sf_part_find's GPT half, for a disk whose MBR is protective (part_gpt.c; with SF_NO_GPT
 * part_gpt_off.c: SF_ENOTSUP, as is sf_part_write_gpt). b: one sector of bd. */
int part_gpt_find(struct sf_bdev *bd, uint32_t index, uint8_t *b, struct sf_part *out);

#endif
