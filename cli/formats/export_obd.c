/* streamfat export -f obd: the OBD-II (SAE J1979) answers among the reassembled ISO-TP
 * messages, decoded (src/proto/obd.c), one JSON object a line (docs/EXPORT.md):
 *
 *   {"ts_first":..,"ts_last":..,"channel":0,"iface":"can0","id":"7E8","eff":false,
 *    "mode":1,"pids":[{"pid":12,"name":"rpm","value":1726,"unit":"rpm"}],
 *    "dtcs":null,"vin":null,"data":"410C1AF8"}
 *
 * Modes 01/02: every PID of the answer (mode 02 with its freeze frame number); a
 * supported-PIDs bitmap as the list of PIDs it marks; a PID without a formula here as its
 * bytes ("raw"). Modes 03/07/0A: the DTCs as P/C/B/U codes. Mode 09 PID 02: the VIN. Other
 * modes: the bytes. Requests (modes 0x01-0x0A), negative answers and broken messages are
 * not written (-f messages shows them). */
#include "export_diag.h"

static int put_pid(struct export_ctx *x, struct diag_state *s, const struct sf_obd_pid *o,
                   int first)
{
    if (dj_s(x, s, first ? "{\"pid\":" : ",{\"pid\":") || dj_dec(x, s, o->pid))
        return -1;
    if (o->mode == 2 && (dj_s(x, s, ",\"frame\":") || dj_dec(x, s, o->frame)))
        return -1;
    if (o->kind == SF_OBD_LINEAR) {
        double v = (double)o->raw * o->num / o->den + o->offset;
        if (dj_s(x, s, ",\"name\":\"") || dj_s(x, s, o->name) || dj_s(x, s, "\",\"value\":") ||
            dj_double(x, s, v) || dj_s(x, s, ",\"unit\":\"") || dj_s(x, s, o->unit) ||
            dj_s(x, s, "\"}"))
            return -1;
        return 0;
    }
    if (o->kind == SF_OBD_BITMAP) {
        if (dj_s(x, s, ",\"name\":\"pids_supported\",\"supported\":["))
            return -1;
        int n = 0;
        for (unsigned b = 0; b < 32; b++)
            if ((o->raw >> (31 - b)) & 1)
                if ((n++ && dj_s(x, s, ",")) || dj_dec(x, s, o->pid + b + 1u))
                    return -1;
        return dj_s(x, s, "]}");
    }
    if (dj_s(x, s, ",\"raw\":\"") || dj_hex(x, s, o->data, o->len) || dj_s(x, s, "\"}"))
        return -1;
    return 0;
}

static int obd_msg(struct export_ctx *x, struct diag_state *s, const struct sf_proto_msg *m)
{
    int mode = sf_obd_mode(m->payload, m->length);
    if (m->proto != SF_PROTO_ISOTP || m->status != SF_MSG_OK || !mode) {
        s->skipped++;
        return 0;
    }
    if (dj_head(x, s, m->first_ts, m->last_ts, m->channel, m->id, m->flags) ||
        dj_s(x, s, ",\"mode\":") || dj_dec(x, s, (unsigned)mode) || dj_s(x, s, ",\"pids\":"))
        return -1;
    struct sf_obd_pid o;
    if (mode == 1 || mode == 2) {
        if (dj_s(x, s, "["))
            return -1;
        for (uint32_t i = 0; sf_obd_pid_at(m->payload, m->length, i, &o); i++)
            if (put_pid(x, s, &o, i == 0))
                return -1;
        if (dj_s(x, s, "]"))
            return -1;
    } else if (dj_s(x, s, "null")) {
        return -1;
    }
    if (dj_s(x, s, ",\"dtcs\":"))
        return -1;
    if (mode == 3 || mode == 7 || mode == 10) {
        uint16_t d;
        char t[6];
        if (dj_s(x, s, "["))
            return -1;
        for (uint32_t i = 0; sf_obd_dtc_at(m->payload, m->length, i, &d); i++) {
            sf_obd_dtc_text(d, t);
            if (dj_s(x, s, i ? ",\"" : "\"") || dj_s(x, s, t) || dj_s(x, s, "\""))
                return -1;
        }
        if (dj_s(x, s, "]"))
            return -1;
    } else if (dj_s(x, s, "null")) {
        return -1;
    }
    const uint8_t *vin;
    if (dj_s(x, s, ",\"vin\":"))
        return -1;
    if (sf_obd_vin(m->payload, m->length, &vin) ? dj_str(x, s, (const char *)vin, 17)
                                                : dj_s(x, s, "null"))
        return -1;
    if (dj_s(x, s, ",\"data\":\"") || dj_hex(x, s, m->payload, m->length) || dj_s(x, s, "\""))
        return -1;
    return dj_end(x, s);
}

static const struct diag_view view = {obd_msg, NULL};

static int obd_begin(struct export_ctx *x)
{
    return diag_begin(x, &view);
}

const struct export_writer export_obd = {
    "obd", "jsonl", 0, 0, obd_begin, diag_can, diag_other, diag_end,
};
