/* Decoders on top of the reassembly (docs/DECODE.md, "Decoders"): UDS (ISO 14229-1),
 * OBD-II (SAE J1979 / ISO 15031-5) and J1939 diagnostic messages DM1/DM2 (SAE J1939-73).
 * Freestanding like src/proto/: no allocation, no floating point, no globals but const
 * tables; every function reads a payload the caller holds (a struct sf_proto_msg's, or a
 * single frame's) and fills fixed-size structs that point into it.
 *
 * Lists (PIDs in one OBD-II answer, DTCs in a UDS or DM1 message) are walked with an index
 * (..._at(msg, i, &item) for i = 0, 1, ... until it returns 0), so a reader fills one row
 * per item (a JSON line, an Arrow column batch) without a second buffer.
 *
 * OBD-II values are exact rationals: value = raw * num / den + offset, in `unit`; a firmware
 * keeps integers, a reader divides. */
#ifndef STREAMFAT_DIAG_H
#define STREAMFAT_DIAG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- UDS (ISO 14229-1) ------------------------------------------------------------ */

enum sf_uds_kind {
    SF_UDS_REQUEST = 0,
    SF_UDS_POSITIVE = 1,        /* SID | 0x40 */
    SF_UDS_NEGATIVE = 2,        /* 0x7F, SID, NRC */
};

#define SF_UDS_NRC_PENDING 0x78u  /* requestCorrectlyReceived-ResponsePending */

struct sf_uds {
    uint8_t kind;               /* enum sf_uds_kind */
    uint8_t sid;                /* the request's service id, also for responses */
    uint8_t nrc;                /* negative: the response code */
    uint8_t has_sub;            /* the service has a sub-function byte (ISO 14229-1) */
    uint8_t sub;                /* without the suppressPosRsp bit (0x80) */
    uint8_t suppress;           /* request: suppressPosRspMsgIndicationBit set */
    uint8_t has_did;            /* 0x22 request / 0x62, 0x2E / 0x6E, 0x2F / 0x6F */
    uint8_t dtc_list;           /* 0x59 with a sub-function whose records are DTC+status */
    uint16_t did;               /* the first data identifier */
    uint8_t avail_mask;         /* 0x59 DTC lists: DTCStatusAvailabilityMask */
    const uint8_t *data;        /* after SID, sub-function and DID */
    uint32_t len;
};

/* Parse a UDS message; 0, or -1 for nothing to parse (empty, or a negative response
 * shorter than 3 bytes). Any first byte parses: a caller decides which ids speak UDS. */
int sf_uds_parse(const uint8_t *msg, uint32_t n, struct sf_uds *out);
/* DTC i (0-based) of a 0x59 DTC list: 1 and the 24-bit DTC and its status byte, or 0. */
int sf_uds_dtc_at(const struct sf_uds *u, uint32_t i, uint32_t *dtc, uint8_t *status);
/* Names: "ReadDataByIdentifier", "requestOutOfRange"...; NULL for an id the standard does
 * not name (ISO/SAE reserved, vehicle-manufacturer specific). */
const char *sf_uds_service_name(uint8_t sid);
const char *sf_uds_nrc_name(uint8_t nrc);
/* Is the first byte a UDS service (request, positive response, 0x7F of a UDS service)
 * rather than OBD-II (modes 0x01-0x0A)? */
int sf_uds_is_uds(const uint8_t *msg, uint32_t n);

/* ---- OBD-II (SAE J1979) ----------------------------------------------------------- */

enum sf_obd_value_kind {
    SF_OBD_RAW = 0,             /* a PID without a formula here: data only */
    SF_OBD_LINEAR = 1,          /* raw * num / den + offset, in unit */
    SF_OBD_BITMAP = 2,          /* PIDs 0x00, 0x20, ...: the next 32 PIDs supported */
};

/* One PID of a mode 01 / 02 answer. */
struct sf_obd_pid {
    uint8_t mode;               /* 1 or 2 */
    uint8_t pid;
    uint8_t frame;              /* mode 02: the freeze frame number */
    uint8_t kind;               /* enum sf_obd_value_kind */
    uint8_t len;                /* data bytes */
    const uint8_t *data;
    uint32_t raw;               /* the bytes big-endian (LINEAR, BITMAP) */
    int32_t num, den, offset;   /* LINEAR: value = raw * num / den + offset */
    const char *name;           /* "engine_rpm"; NULL for RAW */
    const char *unit;           /* "rpm", "%", "degC", "km/h", "kPa", "g/s", "s", "V", ... */
};

/* PID i of a mode 01 (0x41) or mode 02 (0x42) positive answer: 1 and *out, or 0 (past the
 * end, another message, or a PID of unknown length after which nothing can be split: that
 * one is handed out RAW with the rest of the message). */
int sf_obd_pid_at(const uint8_t *msg, uint32_t n, uint32_t i, struct sf_obd_pid *out);
/* The service (mode) of an OBD-II answer: 0x41.. 0x4A -> 1..10; 0 if not one. */
int sf_obd_mode(const uint8_t *msg, uint32_t n);
/* DTC i of a mode 03 / 07 / 0A answer (0x43 / 0x47 / 0x4A, count byte, 2 bytes each; CAN,
 * ISO 15765-4): 1 and the 16-bit DTC, or 0. Zero DTCs (padding) are skipped. */
int sf_obd_dtc_at(const uint8_t *msg, uint32_t n, uint32_t i, uint16_t *dtc);
/* "P0301": the letter from the top two bits (P, C, B, U), then four hex digits. */
void sf_obd_dtc_text(uint16_t dtc, char out[6]);
/* Mode 09 PID 02 (0x49 0x02 count VIN): 1 and the 17 characters, or 0. */
int sf_obd_vin(const uint8_t *msg, uint32_t n, const uint8_t **vin);

/* ---- J1939 DM1 / DM2 (SAE J1939-73) ----------------------------------------------- */

#define SF_J1939_PGN_DM1 0xFECAu   /* active DTCs */
#define SF_J1939_PGN_DM2 0xFECBu   /* previously active DTCs */

/* Lamps: 0 off, 1 on, 2 error, 3 not available. Flash: 0 slow (1 Hz), 1 fast (2 Hz),
 * 2 reserved, 3 unavailable / do not flash. */
struct sf_dm1 {
    uint8_t mil, red_stop, amber_warning, protect;
    uint8_t mil_flash, red_stop_flash, amber_warning_flash, protect_flash;
    uint32_t ndtc;              /* DTCs in the message (what sf_dm1_dtc_at hands out) */
    const uint8_t *dtcs;        /* 4 bytes each */
};
struct sf_dm1_dtc {
    uint32_t spn;               /* 19 bits */
    uint8_t fmi;                /* 5 bits */
    uint8_t oc;                 /* occurrence count, 7 bits (127: not available) */
    uint8_t cm;                 /* conversion method bit: 0 = version 4, 1 = versions 1-3
                                   (decoded as version 1, docs/DECODE.md) */
};

/* Parse a DM1/DM2 payload (a single frame's 8 bytes or a BAM message): 0, or -1 if
 * shorter than 6 bytes. The one DTC of a message without any (SPN 0, FMI 0) and 0xFF
 * padding are not counted. */
int sf_dm1_parse(const uint8_t *msg, uint32_t n, struct sf_dm1 *out);
int sf_dm1_dtc_at(const struct sf_dm1 *d, uint32_t i, struct sf_dm1_dtc *out);
/* "off", "on", "error", "na"; flash: "slow", "fast", "reserved", "off". */
const char *sf_dm1_lamp_name(uint8_t v);
const char *sf_dm1_flash_name(uint8_t v);

#ifdef __cplusplus
}
#endif

#endif
