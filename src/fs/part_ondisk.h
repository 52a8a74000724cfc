/* On-disk layout of the partition tables (offsets only): MBR (sector 0, four primary
 * entries) and GPT (UEFI 2.x, section 5.3: header at LBA 1, backup at the last LBA). */
#ifndef SF_FS_PART_ONDISK_H
#define SF_FS_PART_ONDISK_H

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

#endif
