/* streamfat export -f j1939: J1939 messages (SAE J1939-21), one JSON object a line
 * (docs/EXPORT.md): every 29-bit frame but the transport protocols' own (TP.CM, TP.DT,
 * ETP.CM, ETP.DT), and every message reassembled from them (BAM, RTS/CTS, ETP), with PGN,
 * priority, source and destination; DM1 / DM2 decoded (src/proto/dm1.c):
 *
 *   {"ts_first":..,"ts_last":..,"channel":0,"iface":"can0","id":"18FECA00","eff":true,
 *    "pgn":65226,"prio":6,"sa":0,"da":255,"tp":false,"length":8,"data":"...",
 *    "dm":{"mil":"on","mil_flash":"off",...,"dtcs":[{"spn":190,"fmi":2,"oc":5,"cm":0}]}}
 *
 * Broken TP messages are left to -f messages. */
#include "export_diag.h"

static int put_dm(struct export_ctx *x, struct diag_state *s, const uint8_t *d, uint32_t n)
{
    struct sf_dm1 dm;
    struct sf_dm1_dtc t;
    if (sf_dm1_parse(d, n, &dm))
        return dj_s(x, s, ",\"dm\":null");
    const uint8_t lamp[4] = {dm.mil, dm.red_stop, dm.amber_warning, dm.protect};
    const uint8_t flash[4] = {dm.mil_flash, dm.red_stop_flash, dm.amber_warning_flash,
                              dm.protect_flash};
    static const char *const names[4] = {"mil", "red_stop", "amber_warning", "protect"};
    if (dj_s(x, s, ",\"dm\":{"))
        return -1;
    for (int i = 0; i < 4; i++)
        if (dj_s(x, s, i ? ",\"" : "\"") || dj_s(x, s, names[i]) || dj_s(x, s, "\":\"") ||
            dj_s(x, s, sf_dm1_lamp_name(lamp[i])) || dj_s(x, s, "\",\"") ||
            dj_s(x, s, names[i]) || dj_s(x, s, "_flash\":\"") ||
            dj_s(x, s, sf_dm1_flash_name(flash[i])) || dj_s(x, s, "\""))
            return -1;
    if (dj_s(x, s, ",\"dtcs\":["))
        return -1;
    for (uint32_t i = 0; sf_dm1_dtc_at(&dm, i, &t); i++)
        if (dj_s(x, s, i ? ",{\"spn\":" : "{\"spn\":") || dj_dec(x, s, t.spn) ||
            dj_s(x, s, ",\"fmi\":") || dj_dec(x, s, t.fmi) || dj_s(x, s, ",\"oc\":") ||
            dj_dec(x, s, t.oc) || dj_s(x, s, ",\"cm\":") || dj_dec(x, s, t.cm) ||
            dj_s(x, s, "}"))
            return -1;
    return dj_s(x, s, "]}");
}

static int put(struct export_ctx *x, struct diag_state *s, uint64_t first, uint64_t last,
               uint8_t channel, uint32_t id, const struct sf_j1939_id *j, int tp,
               const uint8_t *d, uint32_t n)
{
    if (dj_head(x, s, first, last, channel, id, SF_CAN_EFF) || dj_s(x, s, ",\"pgn\":") ||
        dj_dec(x, s, j->pgn) || dj_s(x, s, ",\"prio\":") || dj_dec(x, s, j->prio) ||
        dj_s(x, s, ",\"sa\":") || dj_dec(x, s, j->sa) || dj_s(x, s, ",\"da\":") ||
        dj_dec(x, s, j->da) || dj_s(x, s, tp ? ",\"tp\":true" : ",\"tp\":false") ||
        dj_s(x, s, ",\"length\":") || dj_dec(x, s, n) || dj_s(x, s, ",\"data\":\"") ||
        dj_hex(x, s, d, n) || dj_s(x, s, "\""))
        return -1;
    if (j->pgn == SF_J1939_PGN_DM1 || j->pgn == SF_J1939_PGN_DM2) {
        if (put_dm(x, s, d, n))
            return -1;
    } else if (dj_s(x, s, ",\"dm\":null")) {
        return -1;
    }
    return dj_end(x, s);
}

static int j1939_frame(struct export_ctx *x, struct diag_state *s, const struct sf_rec *r,
                       const struct sf_can *c)
{
    if (!(c->flags & SF_CAN_EFF) || (c->flags & (SF_CAN_ERR | SF_CAN_RTR)))
        return 0;
    struct sf_j1939_id j;
    sf_j1939_split(c->id, &j);
    uint32_t pf = j.pgn & 0x3FF00;
    if (pf == 0xEC00 || pf == 0xEB00 || pf == 0xC800 || pf == 0xC700)
        return 0;   /* (E)TP.CM, (E)TP.DT: their message comes out of the reassembly */
    return put(x, s, r->ts, r->ts, r->channel, c->id, &j, 0, c->data, c->len);
}

static int j1939_msg(struct export_ctx *x, struct diag_state *s, const struct sf_proto_msg *m)
{
    if (m->proto != SF_PROTO_J1939 || m->status != SF_MSG_OK) {
        s->skipped++;
        return 0;
    }
    struct sf_j1939_id j = {m->pgn, m->prio, m->sa, m->da};
    return put(x, s, m->first_ts, m->last_ts, m->channel, m->id, &j, 1, m->payload,
               m->length);
}

static const struct diag_view view = {j1939_msg, j1939_frame};

static int j1939_begin(struct export_ctx *x)
{
    return diag_begin(x, &view);
}

const struct export_writer export_j1939 = {
    "j1939", "jsonl", 0, 0, j1939_begin, diag_can, diag_other, diag_end,
};
