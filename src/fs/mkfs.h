/* Formatting internals shared by exfat_mkfs.c (which holds sf_mkfs, the dispatcher) and
 * fat_mkfs.c. */
#ifndef SF_FS_MKFS_H
#define SF_FS_MKFS_H

#include <stdint.h>
#include "streamfat/vol.h"

/* Where the volume goes on the device, in device sectors. */
struct mkfs_place {
    uint64_t align_s;       /* allocation-unit alignment, sectors */
    uint64_t vol_start;     /* first sector of the volume (0 without a partition table) */
    uint64_t vol_len;       /* sectors */
};

/* Check the generic options (sector size, work buffer, scheme, size, alignment) and place
 * the volume: at 0 without a table, else at the first aligned sector after the table, ending
 * on a 1 MiB boundary. *why names the option at fault. */
int mkfs_place(struct sf_bdev *bd, const struct sf_mkfs_opts *o, struct mkfs_place *p,
               const char **why);
/* Device sectors in use: o->size (when given and not past the end) or the whole device. */
uint64_t mkfs_use_sectors(const struct sf_bdev *bd, const struct sf_mkfs_opts *o);
/* 4 MiB, less below 256 MiB; a device's larger erase block wins (see exfat_mkfs.c). */
uint64_t mkfs_default_align(uint64_t bytes, const struct sf_bdev *bd);
/* Write the MBR (type mbr_type) or GPT (basic data) that o->partition asks for, if any;
 * o->buf is destroyed. */
int mkfs_write_table(struct sf_bdev *bd, const struct sf_mkfs_opts *o, uint64_t vol_start,
                     uint64_t vol_len, uint8_t mbr_type, const char **why);

/* fat_mkfs.c: format FAT32 or FAT16 (o->fs_type). */
int fat_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why);
/* Could fat_mkfs make a FAT16 volume here with default options? (auto's fallback) */
int fat_mkfs_fits(struct sf_bdev *bd, const struct sf_mkfs_opts *o);

#endif
