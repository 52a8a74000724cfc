/* Vector BLF (binary logging format): the on-disk layout that streamfat's BLF writer
 * (cli/formats/export_blf.c) and reader (the file: log source) share. Offsets and sizes only, read
 * and written through the little-endian helpers below, never by casting packed structs.
 *
 * A BLF file is
 *   file header ("LOGG", BLF_FILE_HDR_SIZE bytes, the rest of its header_size is zeros)
 *   log containers, one after another: an object ("LOBJ") of type BLF_OBJ_LOG_CONTAINER whose
 *     body is a container header and then the (zlib-deflated or stored) bytes of inner objects.
 * Inner objects are concatenated; one may continue in the next container, so a reader keeps
 * the unparsed tail of a container and glues it to the next one.
 *
 * Every object (outer container or inner) starts with the 16-byte base header; then, for inner
 * objects, header version 1 (16 bytes) or 2 (24 bytes); then the type's body. object_size
 * counts base + header + body. After an object come (object_size % 4) zero padding bytes:
 * that is the rule Vector's files and python-can follow (not padding *to* a multiple of 4),
 * and readers look for the next "LOBJ" within a few bytes rather than trusting the padding.
 *
 * Timestamps: the object header's timestamp counts from the file header's start time
 * (a Windows SYSTEMTIME, millisecond resolution) in units given by the object header's flags
 * (10 µs or 1 ns). python-can turns SYSTEMTIME into seconds as *local* time (naive
 * datetime), so a writer that wants exact absolute times in python-can writes the start as
 * local time too; streamfat writes UTC and documents it (docs/EXPORT.md).
 *
 * Channels are numbered from 1 in BLF (python-can subtracts 1). */
#ifndef STREAMFAT_CLI_BLF_FORMAT_H
#define STREAMFAT_CLI_BLF_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "util/le.h"

/* Fields are little-endian: read and written with ld_le* / st_le* of src/util/le.h. */

/* ---- file header ---- */
#define BLF_FILE_SIG             "LOGG"  /* 4 bytes */
#define BLF_FILE_HDR_SIZE        144u    /* header_size written; readers skip header_size */
#define BLF_FH_SIGNATURE         0       /* char[4] "LOGG" */
#define BLF_FH_HEADER_SIZE       4       /* u32, bytes of the file header */
#define BLF_FH_APP_ID            8       /* u8, application id (0 unknown) */
#define BLF_FH_APP_MAJOR         9       /* u8 */
#define BLF_FH_APP_MINOR         10      /* u8 */
#define BLF_FH_APP_BUILD         11      /* u8 */
#define BLF_FH_BL_MAJOR          12      /* u8, binlog library version */
#define BLF_FH_BL_MINOR          13      /* u8 */
#define BLF_FH_BL_BUILD          14      /* u8 */
#define BLF_FH_BL_PATCH          15      /* u8 */
#define BLF_FH_FILE_SIZE         16      /* u64, bytes of the whole file */
#define BLF_FH_UNCOMPRESSED_SIZE 24      /* u64, file size if every container were stored */
#define BLF_FH_OBJECT_COUNT      32      /* u32, inner objects in the file */
#define BLF_FH_OBJECTS_READ      36      /* u32, unused by writers (0) */
#define BLF_FH_START_TIME        40      /* SYSTEMTIME, first object's time */
#define BLF_FH_STOP_TIME         56      /* SYSTEMTIME, last object's time */

/* SYSTEMTIME: eight u16 (Windows), 16 bytes. */
#define BLF_SYSTEMTIME_SIZE 16u
#define BLF_ST_YEAR         0
#define BLF_ST_MONTH        2   /* 1..12 */
#define BLF_ST_DAY_OF_WEEK  4   /* 0 = Sunday */
#define BLF_ST_DAY          6   /* 1..31 */
#define BLF_ST_HOUR         8
#define BLF_ST_MINUTE       10
#define BLF_ST_SECOND       12
#define BLF_ST_MILLISECONDS 14

/* ---- object header ---- */
#define BLF_OBJ_SIG          "LOBJ"
#define BLF_OBJ_BASE_SIZE    16u
#define BLF_OB_SIGNATURE     0   /* char[4] "LOBJ" */
#define BLF_OB_HEADER_SIZE   4   /* u16, base + versioned header bytes */
#define BLF_OB_HEADER_VER    6   /* u16, 1 or 2 (log containers: 1, base only) */
#define BLF_OB_OBJECT_SIZE   8   /* u32, header + body bytes (padding not included) */
#define BLF_OB_OBJECT_TYPE   12  /* u32, BLF_OBJ_* */

/* Header version 1, after the base: 16 bytes (header_size 32). */
#define BLF_OBJ_V1_SIZE      16u
#define BLF_OH1_FLAGS        0   /* u32, BLF_TIME_* */
#define BLF_OH1_CLIENT_INDEX 4   /* u16 */
#define BLF_OH1_OBJ_VERSION  6   /* u16 */
#define BLF_OH1_TIMESTAMP    8   /* u64, since the file's start time */

/* Header version 2, after the base: 24 bytes (header_size 40). */
#define BLF_OBJ_V2_SIZE        24u
#define BLF_OH2_FLAGS          0   /* u32, BLF_TIME_* */
#define BLF_OH2_TS_STATUS      4   /* u8 */
#define BLF_OH2_OBJ_VERSION    6   /* u16 */
#define BLF_OH2_TIMESTAMP      8   /* u64 */
#define BLF_OH2_ORIG_TIMESTAMP 16  /* u64 */

#define BLF_TIME_TEN_MICS 0x00000001u  /* timestamp unit 10 µs */
#define BLF_TIME_ONE_NANS 0x00000002u  /* timestamp unit 1 ns */

/* ---- object types (u32) ---- */
#define BLF_OBJ_CAN_MESSAGE       1u
#define BLF_OBJ_LOG_CONTAINER     10u
#define BLF_OBJ_CAN_ERROR_EXT     73u
#define BLF_OBJ_CAN_MESSAGE2      86u
#define BLF_OBJ_GLOBAL_MARKER     96u
#define BLF_OBJ_CAN_FD_MESSAGE    100u
#define BLF_OBJ_CAN_FD_MESSAGE_64 101u

/* ---- log container body (after a base-only header of 16 bytes) ---- */
#define BLF_CONTAINER_HDR_SIZE     16u
#define BLF_LC_COMPRESSION         0   /* u16, BLF_COMPRESS_* */
#define BLF_LC_UNCOMPRESSED_SIZE   8   /* u32, bytes of inner objects after inflating */
#define BLF_COMPRESS_NONE          0u
#define BLF_COMPRESS_ZLIB          2u  /* zlib stream (RFC 1950) */
#define BLF_CONTAINER_DATA_MAX     (128u * 1024u) /* what Vector and python-can put in one */

/* ---- CAN_MESSAGE (1) and CAN_MESSAGE2 (86): body 16 bytes (86 adds 8 more) ---- */
#define BLF_CAN_MSG_SIZE     16u
#define BLF_CAN_MSG2_SIZE    24u
#define BLF_CM_CHANNEL       0   /* u16, from 1 */
#define BLF_CM_FLAGS         2   /* u8, BLF_CAN_DIR_TX | BLF_CAN_RTR */
#define BLF_CM_DLC           3   /* u8, 0..15 (data holds at most 8) */
#define BLF_CM_ID            4   /* u32, | BLF_CAN_ID_EXT for 29-bit ids */
#define BLF_CM_DATA          8   /* u8[8] */
#define BLF_CM2_FRAME_LENGTH 16  /* u32, ns on the bus (86 only) */
#define BLF_CM2_BIT_COUNT    20  /* u8 (86 only) */

#define BLF_CAN_ID_EXT 0x80000000u  /* in every id field: 29-bit identifier */
#define BLF_CAN_DIR_TX 0x01u        /* flags bit 0: transmitted (else received) */
#define BLF_CAN_RTR    0x80u        /* flags bit 7: remote frame */

/* ---- CAN_FD_MESSAGE (100): body 84 bytes ---- */
#define BLF_CAN_FD_MSG_SIZE   84u
#define BLF_CFD_CHANNEL       0   /* u16, from 1 */
#define BLF_CFD_FLAGS         2   /* u8, BLF_CAN_DIR_TX | BLF_CAN_RTR */
#define BLF_CFD_DLC           3   /* u8, DLC code 0..15 */
#define BLF_CFD_ID            4   /* u32, | BLF_CAN_ID_EXT */
#define BLF_CFD_FRAME_LENGTH  8   /* u32, ns (0 unknown) */
#define BLF_CFD_BIT_COUNT     12  /* u8 */
#define BLF_CFD_FD_FLAGS      13  /* u8, BLF_FD_* */
#define BLF_CFD_VALID_BYTES   14  /* u8, data bytes in use */
#define BLF_CFD_DATA          20  /* u8[64] (15..19 reserved) */

#define BLF_FD_EDL 0x01u  /* extended data length: a CAN FD frame */
#define BLF_FD_BRS 0x02u  /* bit rate switch */
#define BLF_FD_ESI 0x04u  /* error state indicator */

/* ---- CAN_FD_MESSAGE_64 (101): 40 bytes, then valid_bytes of data ---- */
#define BLF_CAN_FD64_HDR_SIZE   40u
#define BLF_CF64_CHANNEL        0   /* u8, from 1 */
#define BLF_CF64_DLC            1   /* u8, DLC code */
#define BLF_CF64_VALID_BYTES    2   /* u8 */
#define BLF_CF64_TX_COUNT       3   /* u8 */
#define BLF_CF64_ID             4   /* u32, | BLF_CAN_ID_EXT */
#define BLF_CF64_FRAME_LENGTH   8   /* u32 */
#define BLF_CF64_FLAGS          12  /* u32, BLF_FD64_* */
#define BLF_CF64_BTR_ARB        16  /* u32 */
#define BLF_CF64_BTR_DATA       20  /* u32 */
#define BLF_CF64_BRS_OFFSET_NS  24  /* u32 */
#define BLF_CF64_CRC_DEL_NS     28  /* u32 */
#define BLF_CF64_BIT_COUNT      32  /* u16 */
#define BLF_CF64_DIR            34  /* u8, 1 = transmitted */
#define BLF_CF64_EXT_OFFSET     35  /* u8 */
#define BLF_CF64_CRC            36  /* u32 */
#define BLF_CF64_DATA           40  /* u8[valid_bytes] */

#define BLF_FD64_RTR 0x0010u
#define BLF_FD64_EDL 0x1000u
#define BLF_FD64_BRS 0x2000u
#define BLF_FD64_ESI 0x4000u

/* ---- CAN_ERROR_EXT (73): body 32 bytes ---- */
#define BLF_CAN_ERR_EXT_SIZE   32u
#define BLF_CEE_CHANNEL        0   /* u16, from 1 */
#define BLF_CEE_LENGTH         2   /* u16, error frame length */
#define BLF_CEE_FLAGS          4   /* u32 */
#define BLF_CEE_ECC            8   /* u8, error code capture register */
#define BLF_CEE_POSITION       9   /* u8 */
#define BLF_CEE_DLC            10  /* u8 */
#define BLF_CEE_FRAME_LENGTH   12  /* u32, ns */
#define BLF_CEE_ID             16  /* u32, | BLF_CAN_ID_EXT */
#define BLF_CEE_FLAGS_EXT      20  /* u16 */
#define BLF_CEE_DATA           24  /* u8[8] */

/* CAN FD DLC code <-> length (ISO 11898-1). */
static inline uint8_t blf_dlc_to_len(uint8_t dlc)
{
    static const uint8_t len[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64 };
    return len[dlc & 15];
}

static inline uint8_t blf_len_to_dlc(uint8_t len)
{
    if (len <= 8)
        return len;
    if (len <= 24)
        return (uint8_t)(8 + (len - 8 + 3) / 4);
    if (len <= 32)
        return 13;
    if (len <= 48)
        return 14;
    return 15;
}

/* The padding after an object of object_size bytes. */
static inline uint32_t blf_obj_padding(uint32_t object_size)
{
    return object_size % 4u;
}

/* Is p (at least 4 bytes) an object's signature? */
static inline int blf_is_obj(const uint8_t *p)
{
    return memcmp(p, BLF_OBJ_SIG, 4) == 0;
}

#endif
