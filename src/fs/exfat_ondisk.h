/* exFAT on-disk format: offsets, widths and values only (Microsoft exFAT specification,
 * sections 3 (boot region), 4 (FAT), 6-7 (directory entries)). No code with side effects. */
#ifndef SF_FS_EXFAT_ONDISK_H
#define SF_FS_EXFAT_ONDISK_H

/* ---- Main boot sector (sector 0 of the volume; backup at sector 12) ---- */
#define EXBS_JUMP              0    /* u8[3]  EB 76 90 */
#define EXBS_FSNAME            3    /* u8[8]  "EXFAT   " */
#define EXBS_MBZ               11   /* u8[53] must be zero (overlaps a FAT BPB) */
#define EXBS_MBZ_LEN           53
#define EXBS_PARTITION_OFFSET  64   /* u64 sectors from the start of the media; 0 = ignore */
#define EXBS_VOLUME_LENGTH     72   /* u64 sectors */
#define EXBS_FAT_OFFSET        80   /* u32 sectors from the volume start */
#define EXBS_FAT_LENGTH        84   /* u32 sectors per FAT */
#define EXBS_HEAP_OFFSET       88   /* u32 ClusterHeapOffset, sectors */
#define EXBS_CLUSTER_COUNT     92   /* u32 */
#define EXBS_ROOT_CLUSTER      96   /* u32 FirstClusterOfRootDirectory */
#define EXBS_SERIAL            100  /* u32 VolumeSerialNumber */
#define EXBS_FS_REVISION       104  /* u16 FileSystemRevision, 0x0100 */
#define EXBS_VOLUME_FLAGS      106  /* u16 VolumeFlags (excluded from the boot checksum) */
#define EXBS_SECTOR_SHIFT      108  /* u8 BytesPerSectorShift, 9..12 */
#define EXBS_SPC_SHIFT         109  /* u8 SectorsPerClusterShift; sector + spc shift <= 25 */
#define EXBS_NUM_FATS          110  /* u8 NumberOfFats, 1 (2 only for TexFAT) */
#define EXBS_DRIVE_SELECT      111  /* u8 0x80 */
#define EXBS_PERCENT_IN_USE    112  /* u8 0..100 or 0xFF (excluded from the boot checksum) */
#define EXBS_BOOT_CODE         120  /* u8[390] */
#define EXBS_SIGNATURE         510  /* u16 0xAA55 */

#define EXFAT_VOLFLAG_ACTIVE_FAT    0x0001u
#define EXFAT_VOLFLAG_DIRTY         0x0002u  /* VolumeDirty */
#define EXFAT_VOLFLAG_MEDIA_FAILURE 0x0004u
#define EXFAT_VOLFLAG_CLEAR_TO_ZERO 0x0008u

/* Boot region layout, in sectors from its start: main region 0..11, backup 12..23. */
#define EXFAT_BOOT_MAIN        0
#define EXFAT_BOOT_BACKUP      12
#define EXFAT_BOOT_EXT_FIRST   1    /* extended boot sectors 1..8: last u32 = 0xAA550000 */
#define EXFAT_BOOT_EXT_LAST    8
#define EXFAT_BOOT_OEM         9
#define EXFAT_BOOT_RESERVED    10
#define EXFAT_BOOT_CHECKSUM    11   /* the sector repeats the u32 checksum of sectors 0..10 */
#define EXFAT_BOOT_REGION_SECTORS 12
#define EXFAT_EXT_SIGNATURE    0xAA550000u

/* ---- FAT ---- */
#define EXFAT_FAT_MEDIA        0xFFFFFFF8u  /* FatEntry[0] */
#define EXFAT_FAT_ENTRY1       0xFFFFFFFFu  /* FatEntry[1] */
#define EXFAT_FAT_BAD          0xFFFFFFF7u
#define EXFAT_FAT_EOC          0xFFFFFFFFu
#define EXFAT_FIRST_CLUSTER    2
#define EXFAT_MAX_CLUSTERS     0xFFFFFFF5u  /* ClusterCount upper bound */

/* ---- Directory entries: 32 bytes each ---- */
#define EXDE_SIZE              32
#define EXDE_TYPE              0    /* u8 EntryType */
#define EXDE_INUSE             0x80u
#define EXDE_END               0x00u  /* end of directory: no further entries in use */

#define EXDE_BITMAP            0x81u  /* allocation bitmap (critical primary) */
#define EXDE_UPCASE            0x82u  /* up-case table (critical primary) */
#define EXDE_LABEL             0x83u  /* volume label (critical primary) */
#define EXDE_FILE              0x85u  /* file (critical primary) */
#define EXDE_GUID              0xA0u  /* volume GUID (benign primary) */
#define EXDE_STREAM            0xC0u  /* stream extension (critical secondary) */
#define EXDE_NAME              0xC1u  /* file name (critical secondary) */
#define EXDE_TYPE_BENIGN       0x20u  /* TypeImportance bit */
#define EXDE_TYPE_SECONDARY    0x40u  /* TypeCategory bit */

/* Generic primary/secondary fields shared by bitmap, up-case and stream entries. */
#define EXDE_FIRST_CLUSTER     20   /* u32 */
#define EXDE_DATA_LENGTH       24   /* u64 */

/* Allocation bitmap entry */
#define EXDE_BITMAP_FLAGS      1    /* u8 bit0: which FAT/bitmap (TexFAT) */
/* Up-case table entry */
#define EXDE_UPCASE_CHECKSUM   4    /* u32 TableChecksum */
/* Volume label entry */
#define EXDE_LABEL_LEN         1    /* u8 CharacterCount, 0..11 */
#define EXDE_LABEL_CHARS       2    /* u16[11] */
#define EXFAT_LABEL_MAX        11

/* File entry */
#define EXDE_FILE_SECONDARY_COUNT 1 /* u8 SecondaryCount, 2..18 */
#define EXDE_FILE_SET_CHECKSUM 2    /* u16 SetChecksum (excluded from itself) */
#define EXDE_FILE_ATTR         4    /* u16 FileAttributes */
#define EXDE_FILE_CTIME        8    /* u32 CreateTimestamp (DOS date/time, local) */
#define EXDE_FILE_MTIME        12   /* u32 LastModifiedTimestamp */
#define EXDE_FILE_ATIME        16   /* u32 LastAccessedTimestamp */
#define EXDE_FILE_CTIME_10MS   20   /* u8 Create10msIncrement, 0..199 */
#define EXDE_FILE_MTIME_10MS   21   /* u8 LastModified10msIncrement */
#define EXDE_FILE_CTIME_UTC    22   /* u8 CreateUtcOffset: bit7 valid, bits0-6 signed 15 min */
#define EXDE_FILE_MTIME_UTC    23   /* u8 LastModifiedUtcOffset */
#define EXDE_FILE_ATIME_UTC    24   /* u8 LastAccessedUtcOffset */

/* Stream extension entry */
#define EXDE_STREAM_FLAGS      1    /* u8 GeneralSecondaryFlags */
#define EXDE_STREAM_NAME_LEN   3    /* u8 NameLength, 1..255 */
#define EXDE_STREAM_NAME_HASH  4    /* u16 NameHash over the up-cased name */
#define EXDE_STREAM_VALID_LEN  8    /* u64 ValidDataLength */
#define EXDE_FLAG_ALLOC_POSSIBLE 0x01u
#define EXDE_FLAG_NO_FAT_CHAIN 0x02u

/* File name entry */
#define EXDE_NAME_CHARS        2    /* u16[15] */
#define EXFAT_NAME_PER_ENTRY   15

#define EXFAT_MAX_SECONDARY    18   /* stream + 17 name entries (255 chars) */
#define EXFAT_DIR_MAX_BYTES    (256u * 1024 * 1024)  /* a directory is at most 256 MiB */

#endif
