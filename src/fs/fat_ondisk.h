/* FAT12/16/32 on-disk format: offsets, widths and values only (Microsoft FAT specification,
 * "FAT: General Overview of On-Disk Format"). No code. */
#ifndef SF_FS_FAT_ONDISK_H
#define SF_FS_FAT_ONDISK_H

/* ---- BIOS Parameter Block, sector 0 of the volume ---- */
#define BPB_JMP            0    /* u8[3]  EB xx 90 or E9 xx xx */
#define BPB_OEM            3    /* u8[8]  OEM name */
#define BPB_BYTES_PER_SEC  11   /* u16    512, 1024, 2048, 4096 */
#define BPB_SEC_PER_CLUS   13   /* u8     1, 2, 4, ..., 128 */
#define BPB_RSVD_SEC_CNT   14   /* u16    reserved sectors (>= 1; FAT32 typically 32) */
#define BPB_NUM_FATS       16   /* u8     usually 2 */
#define BPB_ROOT_ENT_CNT   17   /* u16    FAT12/16 root entries; 0 on FAT32 */
#define BPB_TOT_SEC16      19   /* u16    total sectors if < 65536, else 0 */
#define BPB_MEDIA          21   /* u8     0xF8 fixed, 0xF0 removable; = low byte of FAT[0] */
#define BPB_FAT_SZ16       22   /* u16    sectors per FAT (FAT12/16); 0 on FAT32 */
#define BPB_SEC_PER_TRK    24   /* u16 */
#define BPB_NUM_HEADS      26   /* u16 */
#define BPB_HIDD_SEC       28   /* u32    sectors before the volume (partition start) */
#define BPB_TOT_SEC32      32   /* u32    total sectors if BPB_TOT_SEC16 is 0 */
/* FAT12/16 extended BPB */
#define BS16_DRV_NUM       36   /* u8 */
#define BS16_RESERVED1     37   /* u8     bit 0: dirty (Windows NT), bit 1: surface scan */
#define BS16_BOOT_SIG      38   /* u8     0x29 when the next three fields are valid */
#define BS16_VOL_ID        39   /* u32 */
#define BS16_VOL_LAB       43   /* u8[11] */
#define BS16_FIL_SYS_TYPE  54   /* u8[8]  "FAT12   " / "FAT16   " (informational only) */
/* FAT32 extended BPB */
#define BPB32_FAT_SZ32     36   /* u32    sectors per FAT */
#define BPB32_EXT_FLAGS    40   /* u16    bit 7: only one FAT active (bits 0-3 which) */
#define BPB32_FS_VER       42   /* u16    0 */
#define BPB32_ROOT_CLUS    44   /* u32    first cluster of the root directory */
#define BPB32_FS_INFO      48   /* u16    FSInfo sector (usually 1) */
#define BPB32_BK_BOOT_SEC  50   /* u16    backup boot sector (usually 6) */
#define BS32_DRV_NUM       64   /* u8 */
#define BS32_RESERVED1     65   /* u8     bit 0: dirty (Windows NT) */
#define BS32_BOOT_SIG      66   /* u8     0x29 */
#define BS32_VOL_ID        67   /* u32 */
#define BS32_VOL_LAB       71   /* u8[11] */
#define BS32_FIL_SYS_TYPE  82   /* u8[8]  "FAT32   " */
#define BS_SIGNATURE       510  /* u16    0xAA55 */

/* Cluster count ranges that decide the type (the only rule that counts). */
#define FAT12_MAX_CLUSTERS 4084u
#define FAT16_MAX_CLUSTERS 65524u
#define FAT32_MAX_CLUSTERS 0x0FFFFFF5u

/* ---- FSInfo sector (FAT32) ---- */
#define FSI_LEAD_SIG       0    /* u32 0x41615252 */
#define FSI_STRUC_SIG      484  /* u32 0x61417272 */
#define FSI_FREE_COUNT     488  /* u32 free clusters, 0xFFFFFFFF = unknown */
#define FSI_NXT_FREE       492  /* u32 hint: where to look for free clusters, 0xFFFFFFFF = none */
#define FSI_TRAIL_SIG      508  /* u32 0xAA550000 */
#define FSI_LEAD_VALUE     0x41615252u
#define FSI_STRUC_VALUE    0x61417272u
#define FSI_TRAIL_VALUE    0xAA550000u

/* ---- FAT[1] flags ---- */
#define FAT16_CLN_SHUT     0x8000u      /* clean shutdown: 1 = clean */
#define FAT16_HRD_ERR      0x4000u      /* hard error: 1 = no error seen */
#define FAT32_CLN_SHUT     0x08000000u
#define FAT32_HRD_ERR      0x04000000u

/* ---- Directory entries: 32 bytes ---- */
#define DIR_NAME           0    /* u8[11] 8.3 name, space padded; [0] = 0xE5 free, 0x00 end,
                                   0x05 stands for a leading 0xE5 */
#define DIR_ATTR           11   /* u8 */
#define DIR_NTRES          12   /* u8     bit 3: base lower case, bit 4: extension lower case */
#define DIR_CRT_TIME_TENTH 13   /* u8     0..199, 10 ms units */
#define DIR_CRT_TIME       14   /* u16 */
#define DIR_CRT_DATE       16   /* u16 */
#define DIR_LST_ACC_DATE   18   /* u16 */
#define DIR_FST_CLUS_HI    20   /* u16    high word of the first cluster (FAT32) */
#define DIR_WRT_TIME       22   /* u16 */
#define DIR_WRT_DATE       24   /* u16 */
#define DIR_FST_CLUS_LO    26   /* u16 */
#define DIR_FILE_SIZE      28   /* u32 */
#define DIR_FREE           0xE5u
#define DIR_END            0x00u
#define DIR_KANJI_E5       0x05u
#define NTRES_LOWER_BASE   0x08u
#define NTRES_LOWER_EXT    0x10u

#define ATTR_READ_ONLY     0x01u
#define ATTR_HIDDEN        0x02u
#define ATTR_SYSTEM        0x04u
#define ATTR_VOLUME_ID     0x08u
#define ATTR_DIRECTORY     0x10u
#define ATTR_ARCHIVE       0x20u
#define ATTR_LONG_NAME     0x0Fu    /* RO | HIDDEN | SYSTEM | VOLUME_ID */
#define ATTR_LONG_NAME_MASK 0x3Fu

/* ---- Long-name entries ---- */
#define LDIR_ORD           0    /* u8     sequence 1..20; 0x40 marks the last (first stored) */
#define LDIR_NAME1         1    /* u16[5] */
#define LDIR_ATTR          11   /* u8     ATTR_LONG_NAME */
#define LDIR_TYPE          12   /* u8     0 */
#define LDIR_CHKSUM        13   /* u8     checksum of the 8.3 name */
#define LDIR_NAME2         14   /* u16[6] */
#define LDIR_FST_CLUS_LO   26   /* u16    0 */
#define LDIR_NAME3         28   /* u16[2] */
#define LDIR_LAST          0x40u
#define LDIR_CHARS         13   /* name characters per entry */
#define LDIR_MAX_ENTRIES   20   /* 255 characters */

#endif
