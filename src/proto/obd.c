/* OBD-II answers (SAE J1979 / ISO 15031-5 on CAN, ISO 15765-4): mode 01/02 PIDs to values
 * by the standard's formulas, mode 03/07/0A DTCs, mode 09 VIN (include/streamfat/diag.h).
 * Integers only: a value is the exact rational raw * num / den + offset. */
#include "streamfat/diag.h"

/* Data bytes of the mode 01 PIDs 0x00-0x60 (J1979 appendix B), so that an answer
 * carrying several PIDs can be split; 0 for a PID past the table. */
static const uint8_t pid_len[0x61] = {
    4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,   /* 00-0F */
    2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2,   /* 10-1F */
    4, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 1, 1, 1, 1,   /* 20-2F */
    1, 2, 2, 1, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2,   /* 30-3F */
    4, 4, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4,   /* 40-4F */
    4, 1, 1, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 1,   /* 50-5F */
    4,                                                /* 60 */
};

struct pid_formula {
    uint8_t pid;
    int32_t num, den, offset;   /* den > 0 */
    const char *name, *unit;
};

/* J1979 appendix B formulas, for the PIDs whose value is linear in one unsigned raw
 * integer (the PID's bytes big-endian). Names follow what readers call them. */
static const struct pid_formula formulas[] = {
    {0x04, 100, 255, 0, "engine_load", "%"},
    {0x05, 1, 1, -40, "coolant_temp", "degC"},
    {0x06, 100, 128, -100, "short_fuel_trim_1", "%"},
    {0x07, 100, 128, -100, "long_fuel_trim_1", "%"},
    {0x08, 100, 128, -100, "short_fuel_trim_2", "%"},
    {0x09, 100, 128, -100, "long_fuel_trim_2", "%"},
    {0x0A, 3, 1, 0, "fuel_pressure", "kPa"},
    {0x0B, 1, 1, 0, "intake_pressure", "kPa"},
    {0x0C, 1, 4, 0, "rpm", "rpm"},
    {0x0D, 1, 1, 0, "speed", "km/h"},
    {0x0E, 1, 2, -64, "timing_advance", "deg"},
    {0x0F, 1, 1, -40, "intake_temp", "degC"},
    {0x10, 1, 100, 0, "maf", "g/s"},
    {0x11, 100, 255, 0, "throttle_pos", "%"},
    {0x1F, 1, 1, 0, "run_time", "s"},
    {0x21, 1, 1, 0, "distance_w_mil", "km"},
    {0x22, 79, 1000, 0, "fuel_rail_pressure_vac", "kPa"},
    {0x23, 10, 1, 0, "fuel_rail_pressure_direct", "kPa"},
    {0x2C, 100, 255, 0, "commanded_egr", "%"},
    {0x2D, 100, 128, -100, "egr_error", "%"},
    {0x2E, 100, 255, 0, "evaporative_purge", "%"},
    {0x2F, 100, 255, 0, "fuel_level", "%"},
    {0x30, 1, 1, 0, "warmups_since_dtc_clear", "count"},
    {0x31, 1, 1, 0, "distance_since_dtc_clear", "km"},
    {0x33, 1, 1, 0, "barometric_pressure", "kPa"},
    {0x3C, 1, 10, -40, "catalyst_temp_b1s1", "degC"},
    {0x3D, 1, 10, -40, "catalyst_temp_b2s1", "degC"},
    {0x3E, 1, 10, -40, "catalyst_temp_b1s2", "degC"},
    {0x3F, 1, 10, -40, "catalyst_temp_b2s2", "degC"},
    {0x42, 1, 1000, 0, "control_module_voltage", "V"},
    {0x43, 100, 255, 0, "absolute_load", "%"},
    {0x44, 2, 65536, 0, "commanded_equiv_ratio", "ratio"},
    {0x45, 100, 255, 0, "relative_throttle_pos", "%"},
    {0x46, 1, 1, -40, "ambient_air_temp", "degC"},
    {0x47, 100, 255, 0, "throttle_pos_b", "%"},
    {0x48, 100, 255, 0, "throttle_pos_c", "%"},
    {0x49, 100, 255, 0, "accelerator_pos_d", "%"},
    {0x4A, 100, 255, 0, "accelerator_pos_e", "%"},
    {0x4B, 100, 255, 0, "accelerator_pos_f", "%"},
    {0x4C, 100, 255, 0, "throttle_actuator", "%"},
    {0x4D, 1, 1, 0, "run_time_mil", "min"},
    {0x4E, 1, 1, 0, "time_since_dtc_cleared", "min"},
    {0x52, 100, 255, 0, "ethanol_percent", "%"},
    {0x59, 10, 1, 0, "fuel_rail_pressure_abs", "kPa"},
    {0x5A, 100, 255, 0, "relative_accel_pos", "%"},
    {0x5B, 100, 255, 0, "hybrid_battery_remaining", "%"},
    {0x5C, 1, 1, -40, "oil_temp", "degC"},
    {0x5D, 1, 128, -210, "fuel_inject_timing", "deg"},
    {0x5E, 1, 20, 0, "fuel_rate", "L/h"},
};

int sf_obd_mode(const uint8_t *msg, uint32_t n)
{
    if (n == 0 || msg[0] < 0x41 || msg[0] > 0x4A)
        return 0;
    return msg[0] - 0x40;
}

static uint8_t length_of(uint8_t pid)
{
    if ((pid & 0x1F) == 0)
        return 4;                       /* every supported-PIDs bitmap */
    return pid < sizeof pid_len ? pid_len[pid] : 0;
}

static void describe(struct sf_obd_pid *o)
{
    o->raw = 0;
    for (uint8_t k = 0; k < o->len && k < 4; k++)
        o->raw = o->raw << 8 | o->data[k];
    if ((o->pid & 0x1F) == 0 && o->len == 4) {
        o->kind = SF_OBD_BITMAP;
        o->name = "pids_supported";
        o->unit = "";
        return;
    }
    for (uint32_t k = 0; k < sizeof formulas / sizeof formulas[0]; k++)
        if (formulas[k].pid == o->pid && length_of(o->pid) == o->len) {
            o->kind = SF_OBD_LINEAR;
            o->num = formulas[k].num;
            o->den = formulas[k].den;
            o->offset = formulas[k].offset;
            o->name = formulas[k].name;
            o->unit = formulas[k].unit;
            return;
        }
}

int sf_obd_pid_at(const uint8_t *msg, uint32_t n, uint32_t i, struct sf_obd_pid *o)
{
    int mode = sf_obd_mode(msg, n);
    if (mode != 1 && mode != 2)
        return 0;
    uint32_t hdr = mode == 2 ? 2u : 1u;     /* PID, and mode 02's frame number */
    uint32_t pos = 1;
    for (uint32_t k = 0;; k++) {
        if (pos + hdr > n)
            return 0;
        uint8_t pid = msg[pos];
        uint32_t len = length_of(pid);
        /* mode 02 PID 0x02 is the DTC that stored the freeze frame (2 bytes) */
        if (mode == 2 && pid == 0x02)
            len = 2;
        int last = len == 0 || pos + hdr + len > n;
        if (last)
            len = n - pos - hdr;            /* unknown or cut: the rest, raw */
        if (k == i) {
            *o = (struct sf_obd_pid){0};
            o->mode = (uint8_t)mode;
            o->pid = pid;
            o->frame = mode == 2 ? msg[pos + 1] : 0;
            o->data = msg + pos + hdr;
            o->len = (uint8_t)(len > 255 ? 255 : len);
            if (!last)
                describe(o);
            return 1;
        }
        if (last)
            return 0;
        pos += hdr + len;
    }
}

int sf_obd_dtc_at(const uint8_t *msg, uint32_t n, uint32_t i, uint16_t *dtc)
{
    int mode = sf_obd_mode(msg, n);
    if (mode != 3 && mode != 7 && mode != 10)
        return 0;
    /* CAN answers (ISO 15765-4) carry the number of DTCs after the service id */
    uint32_t k = 0;
    for (uint32_t pos = 2; pos + 2 <= n; pos += 2) {
        uint16_t d = (uint16_t)(msg[pos] << 8 | msg[pos + 1]);
        if (d == 0)
            continue;
        if (k++ == i) {
            *dtc = d;
            return 1;
        }
    }
    return 0;
}

void sf_obd_dtc_text(uint16_t dtc, char out[6])
{
    static const char letter[] = "PCBU";
    static const char hex[] = "0123456789ABCDEF";
    out[0] = letter[dtc >> 14];
    out[1] = hex[(dtc >> 12) & 0x3];
    out[2] = hex[(dtc >> 8) & 0xF];
    out[3] = hex[(dtc >> 4) & 0xF];
    out[4] = hex[dtc & 0xF];
    out[5] = '\0';
}

int sf_obd_vin(const uint8_t *msg, uint32_t n, const uint8_t **vin)
{
    /* 0x49 0x02, NODI (number of data items: 1 on CAN), 17 characters */
    if (n < 20 || msg[0] != 0x49 || msg[1] != 0x02)
        return 0;
    *vin = msg + 3;
    return 1;
}
