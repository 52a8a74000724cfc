/* J1939 diagnostic messages DM1 (active DTCs, PGN 0xFECA) and DM2 (previously active,
 * 0xFECB), SAE J1939-73 (include/streamfat/diag.h): the lamp status and the DTCs, from a
 * single frame or a transport-protocol (BAM) message. */
#include "streamfat/diag.h"

int sf_dm1_parse(const uint8_t *msg, uint32_t n, struct sf_dm1 *d)
{
    *d = (struct sf_dm1){0};
    if (n < 6)
        return -1;
    /* byte 1: MIL 8-7, red stop 6-5, amber warning 4-3, protect 2-1; byte 2 the same
     * lamps' flash states */
    d->mil = msg[0] >> 6;
    d->red_stop = (msg[0] >> 4) & 3;
    d->amber_warning = (msg[0] >> 2) & 3;
    d->protect = msg[0] & 3;
    d->mil_flash = msg[1] >> 6;
    d->red_stop_flash = (msg[1] >> 4) & 3;
    d->amber_warning_flash = (msg[1] >> 2) & 3;
    d->protect_flash = msg[1] & 3;
    d->dtcs = msg + 2;
    /* DTCs are 4 bytes each; a message without any carries one of all zeros (SPN 0 is not
     * a parameter), and a single frame pads its last two bytes (or a DTC slot) with 0xFF */
    for (uint32_t pos = 2; pos + 4 <= n; pos += 4) {
        const uint8_t *r = msg + pos;
        uint32_t v = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
                     (uint32_t)r[3] << 24;
        if (v == 0 || v == 0xFFFFFFFFu)
            break;
        d->ndtc++;
    }
    return 0;
}

int sf_dm1_dtc_at(const struct sf_dm1 *d, uint32_t i, struct sf_dm1_dtc *o)
{
    if (i >= d->ndtc)
        return 0;
    const uint8_t *r = d->dtcs + 4 * i;
    o->fmi = r[2] & 0x1F;
    o->cm = r[3] >> 7;
    o->oc = r[3] & 0x7F;
    if (o->cm == 0)     /* version 4: SPN little-endian, its 3 high bits above the FMI */
        o->spn = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)(r[2] >> 5) << 16;
    else                /* version 1: SPN most significant byte first, 3 low bits last */
        o->spn = (uint32_t)r[0] << 11 | (uint32_t)r[1] << 3 | (uint32_t)(r[2] >> 5);
    return 1;
}

const char *sf_dm1_lamp_name(uint8_t v)
{
    static const char *const n[] = {"off", "on", "error", "na"};
    return n[v & 3];
}

const char *sf_dm1_flash_name(uint8_t v)
{
    static const char *const n[] = {"slow", "fast", "reserved", "off"};
    return n[v & 3];
}
