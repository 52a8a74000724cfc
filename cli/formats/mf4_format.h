/* ASAM MDF 4.1x (MF4): the on-disk layout that streamfat's MF4 writer (cli/formats/export_mf4.c)
 * and reader (cli/formats/import_mf4.c) share. Offsets and sizes only, read and written through the
 * little-endian helpers of src/util/le.h, never by casting packed structs.
 *
 * A file is the 64-byte ID block at offset 0, the HD block at 64, then blocks anywhere,
 * each starting at an offset that is a multiple of 8. A block (all but ID) starts with a
 * 24-byte header: "##XX" id, 4 reserved bytes, u64 length (header + links + data) and u64
 * link count; then link_count u64 file offsets (0 = none); then the block's data fields.
 * Field offsets below (MF4_xx_*) count from the start of the data fields, which are at
 * MF4_HDR_SIZE + 8 * link_count; links are listed by index (MF4_xx_L_*).
 *
 * The CAN bus-logging layout (ASAM MDF bus logging, as asammdf and python-can use it): one
 * data group per channel group ("sorted"), the channel group flagged bus event, its
 * acquisition source an SI block of type BUS, bus type CAN; a master time channel (float64
 * seconds from the HD start) and a structure channel (byte array, cn_composition -> its
 * members, whose byte offsets count from the record's start) named CAN_DataFrame,
 * CAN_RemoteFrame or CAN_ErrorFrame with members "CAN_DataFrame.ID" and so on. */
#ifndef STREAMFAT_CLI_MF4_FORMAT_H
#define STREAMFAT_CLI_MF4_FORMAT_H

#include <stdint.h>

#include "util/le.h"

/* ---- ID block (no block header), 64 bytes at offset 0 ---- */
#define MF4_ID_SIZE          64u
#define MF4_ID_FILE          0     /* char[8] "MDF     ", or "UnFinMF " while unfinished */
#define MF4_ID_VERS          8     /* char[8] "4.11    " */
#define MF4_ID_PROG          16    /* char[8] the writing program */
#define MF4_ID_VER           28    /* u16, version number: 411 */
#define MF4_ID_UNFIN_FLAGS   60    /* u16, standard unfinalized flags (0 = finalized) */
#define MF4_ID_CUSTOM_UNFIN  62    /* u16, custom unfinalized flags */
#define MF4_ID_FILE_FINAL    "MDF     "
#define MF4_ID_FILE_UNFIN    "UnFinMF "

/* ---- block header, 24 bytes ---- */
#define MF4_HDR_SIZE         24u
#define MF4_H_ID             0     /* char[4] "##XX" */
#define MF4_H_LENGTH         8     /* u64, bytes of the block (header, links, data) */
#define MF4_H_LINK_COUNT     16    /* u64, links after the header */
#define MF4_ALIGN            8u    /* every block starts at a multiple of 8 */

/* ---- HD (header), at offset 64: 6 links, 32 data bytes ---- */
#define MF4_HD_OFFSET        64u
#define MF4_HD_LINKS         6u
#define MF4_HD_L_DG_FIRST    0
#define MF4_HD_L_FH_FIRST    1
#define MF4_HD_L_CH_FIRST    2
#define MF4_HD_L_AT_FIRST    3
#define MF4_HD_L_EV_FIRST    4
#define MF4_HD_L_MD_COMMENT  5
#define MF4_HD_DATA          32u
#define MF4_HD_START_NS      0     /* u64, start time, ns since the epoch (UTC) */
#define MF4_HD_TZ_OFFSET_MIN 8     /* i16, time zone offset in minutes */
#define MF4_HD_DST_OFFSET_MIN 10   /* i16, daylight saving offset in minutes */
#define MF4_HD_TIME_FLAGS    12    /* u8, MF4_TIME_* */
#define MF4_HD_TIME_CLASS    13    /* u8, 0 local PC reference time */
#define MF4_HD_FLAGS         14    /* u8, start angle / distance valid */
#define MF4_HD_START_ANGLE   16    /* f64 */
#define MF4_HD_START_DIST    24    /* f64 */
#define MF4_TIME_LOCAL       0x01u /* start time is local time (not UTC) */
#define MF4_TIME_OFFSETS_VALID 0x02u /* tz and dst offsets are valid */

/* ---- FH (file history): 2 links, 16 data bytes ---- */
#define MF4_FH_LINKS         2u
#define MF4_FH_L_NEXT        0
#define MF4_FH_L_MD_COMMENT  1
#define MF4_FH_DATA          16u
#define MF4_FH_TIME_NS       0     /* u64 */
#define MF4_FH_TZ_OFFSET_MIN 8     /* i16 */
#define MF4_FH_DST_OFFSET_MIN 10   /* i16 */
#define MF4_FH_TIME_FLAGS    12    /* u8, MF4_TIME_* */

/* ---- DG (data group): 4 links, 8 data bytes ---- */
#define MF4_DG_LINKS         4u
#define MF4_DG_L_NEXT        0
#define MF4_DG_L_CG_FIRST    1
#define MF4_DG_L_DATA        2     /* DT, DZ, DL, HL (or 0: no data) */
#define MF4_DG_L_MD_COMMENT  3
#define MF4_DG_DATA          8u
#define MF4_DG_REC_ID_SIZE   0     /* u8, 0 sorted, else 1, 2, 4 or 8 bytes before a record */

/* ---- CG (channel group): 6 links, 32 data bytes ---- */
#define MF4_CG_LINKS         6u
#define MF4_CG_L_NEXT        0
#define MF4_CG_L_CN_FIRST    1
#define MF4_CG_L_TX_ACQ_NAME 2
#define MF4_CG_L_SI_ACQ_SOURCE 3
#define MF4_CG_L_SR_FIRST    4
#define MF4_CG_L_MD_COMMENT  5
#define MF4_CG_DATA          32u
#define MF4_CG_RECORD_ID     0     /* u64 */
#define MF4_CG_CYCLE_COUNT   8     /* u64, records */
#define MF4_CG_FLAGS         16    /* u16, MF4_CG_F_* */
#define MF4_CG_PATH_SEP      18    /* u16, UTF-16 path separator ('.') */
#define MF4_CG_DATA_BYTES    24    /* u32, record bytes (without the record id) */
#define MF4_CG_INVAL_BYTES   28    /* u32, invalidation bytes after the data bytes */
#define MF4_CG_F_VLSD        0x0001u
#define MF4_CG_F_BUS_EVENT   0x0002u
#define MF4_CG_F_PLAIN_BUS   0x0004u

/* ---- CN (channel): 8 links, 72 data bytes ---- */
#define MF4_CN_LINKS         8u
#define MF4_CN_L_NEXT        0
#define MF4_CN_L_COMPOSITION 1     /* first member CN of a structure, or a CA */
#define MF4_CN_L_TX_NAME     2
#define MF4_CN_L_SI_SOURCE   3
#define MF4_CN_L_CC          4     /* conversion */
#define MF4_CN_L_DATA        5     /* signal data (VLSD: SD, DZ, DL, HL or a VLSD CG) */
#define MF4_CN_L_MD_UNIT     6
#define MF4_CN_L_MD_COMMENT  7
#define MF4_CN_DATA          72u
#define MF4_CN_TYPE          0     /* u8, MF4_CNT_* */
#define MF4_CN_SYNC_TYPE     1     /* u8, 0 none, 1 time */
#define MF4_CN_DATA_TYPE     2     /* u8, MF4_DT_* */
#define MF4_CN_BIT_OFFSET    3     /* u8, 0..7 */
#define MF4_CN_BYTE_OFFSET   4     /* u32, from the record's start (after the record id) */
#define MF4_CN_BIT_COUNT     8     /* u32 */
#define MF4_CN_FLAGS         12    /* u32, MF4_CN_F_* */
#define MF4_CN_INVAL_BIT_POS 16    /* u32 */
#define MF4_CN_PRECISION     20    /* u8 */
#define MF4_CN_ATTACH_COUNT  22    /* u16 */
#define MF4_CN_VAL_RANGE_MIN 24    /* f64, then val max, limit min/max, ext limit min/max */
#define MF4_CNT_FIXED        0
#define MF4_CNT_VLSD         1
#define MF4_CNT_MASTER       2
#define MF4_CNT_VIRT_MASTER  3
#define MF4_SYNC_TIME        1
#define MF4_DT_UINT_LE       0
#define MF4_DT_UINT_BE       1
#define MF4_DT_INT_LE        2
#define MF4_DT_INT_BE        3
#define MF4_DT_FLOAT_LE      4
#define MF4_DT_FLOAT_BE      5
#define MF4_DT_BYTES         10
#define MF4_CN_F_BUS_EVENT   0x0400u

/* ---- SI (source information): 3 links, 8 data bytes ---- */
#define MF4_SI_LINKS         3u
#define MF4_SI_L_TX_NAME     0
#define MF4_SI_L_TX_PATH     1
#define MF4_SI_L_MD_COMMENT  2
#define MF4_SI_DATA          8u
#define MF4_SI_TYPE          0     /* u8, 2 = BUS */
#define MF4_SI_BUS_TYPE      1     /* u8, 2 = CAN */
#define MF4_SI_FLAGS         2     /* u8, 1 = simulated */
#define MF4_SI_TYPE_BUS      2
#define MF4_SI_BUS_CAN       2

/* ---- TX and MD: no links; zero-terminated UTF-8 (MD: XML), padded to 8 ---- */

/* ---- DT (data) and SD (signal data): no links, the bytes ---- */

/* ---- DL (data list): 1 + count links, then 8 + (8 * count) data bytes ---- */
#define MF4_DL_L_NEXT        0     /* next DL; links 1..count are the data blocks */
#define MF4_DL_FLAGS         0     /* u8, MF4_DL_F_* */
#define MF4_DL_COUNT         4     /* u32, data blocks listed */
#define MF4_DL_OFFSETS       8     /* u64[count] data offsets (or one equal length) */
#define MF4_DL_F_EQUAL       0x01u /* one u64 block length instead of the offsets */

/* ---- DZ (zipped data): no links, 24 data bytes, then the zipped bytes ---- */
#define MF4_DZ_DATA          24u
#define MF4_DZ_ORG_TYPE      0     /* char[2] "DT" or "SD" */
#define MF4_DZ_ZIP_TYPE      2     /* u8, 0 deflate, 1 transposition + deflate */
#define MF4_DZ_ZIP_PARAM     4     /* u32, transposition: columns (the record size) */
#define MF4_DZ_ORG_LEN       8     /* u64, bytes once unzipped */
#define MF4_DZ_DATA_LEN      16    /* u64, zipped bytes that follow (a zlib stream) */
#define MF4_ZIP_DEFLATE      0
#define MF4_ZIP_TRANSPOSE    1

/* ---- HL (header of list): 1 link, 8 data bytes ---- */
#define MF4_HL_LINKS         1u
#define MF4_HL_L_DL_FIRST    0
#define MF4_HL_DATA          8u
#define MF4_HL_FLAGS         0     /* u16, as DL's flags */
#define MF4_HL_ZIP_TYPE      2     /* u8, zip type of the DZ blocks */

/* ---- EV (event): 5 links (no scope, no attachments), 32 data bytes ---- */
#define MF4_EV_LINKS         5u
#define MF4_EV_L_NEXT        0
#define MF4_EV_L_PARENT      1
#define MF4_EV_L_RANGE       2
#define MF4_EV_L_TX_NAME     3
#define MF4_EV_L_MD_COMMENT  4
#define MF4_EV_DATA          32u
#define MF4_EV_TYPE          0     /* u8, MF4_EVT_* */
#define MF4_EV_SYNC_TYPE     1     /* u8, 1 time (s) */
#define MF4_EV_RANGE_TYPE    2     /* u8, 0 point */
#define MF4_EV_CAUSE         3     /* u8, MF4_EVC_* */
#define MF4_EV_FLAGS         4     /* u8 */
#define MF4_EV_SCOPE_COUNT   8     /* u32 */
#define MF4_EV_ATTACH_COUNT  12    /* u16 */
#define MF4_EV_CREATOR       14    /* u16, index of the FH block of the creating tool */
#define MF4_EV_SYNC_BASE     16    /* i64, sync value = base * factor */
#define MF4_EV_SYNC_FACTOR   24    /* f64 */
#define MF4_EVT_ACQ_INTERRUPT 2    /* acquisition interrupted: data lost */
#define MF4_EVT_MARKER       6
#define MF4_EVC_ERROR        1
#define MF4_EVC_TOOL         2
#define MF4_EVC_USER         4

/* ---- bus logging record layouts (streamfat's writer; readers look the offsets up) ---- */
#define MF4_REC_TIME         0     /* f64 seconds from the HD start */
#define MF4_REC_BUS_CHANNEL  8     /* u8, from 1 */
#define MF4_REC_ID           9     /* u32, bit 31 set for an extended id */
#define MF4_REC_IDE          13    /* u8 */
#define MF4_REC_DLC          14    /* u8, the DLC code */
#define MF4_REC_DATA_LENGTH  15    /* u8, bytes of data */
#define MF4_REC_DATA_BYTES   16    /* u8[64] (data frames, error frames) */
#define MF4_REC_DIR          80    /* u8, 0 Rx, 1 Tx (remote frames: at 16) */
#define MF4_REC_EDL          81    /* u8 */
#define MF4_REC_BRS          82    /* u8 */
#define MF4_REC_ESI          83    /* u8 */
#define MF4_REC_FRAME_SIZE   84u   /* data and error frames */
#define MF4_REC_RTR_DIR      16    /* u8, remote frames */
#define MF4_REC_RTR_SIZE     17u
#define MF4_ID_EXT           0x80000000u /* bit 31 of the ID: extended (Vector's tools) */

#endif
