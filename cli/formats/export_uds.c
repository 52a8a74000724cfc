/* streamfat export -f uds: the UDS (ISO 14229-1) messages among the reassembled ISO-TP
 * messages, decoded (src/proto/uds.c), one JSON object a line (docs/EXPORT.md):
 *
 *   {"ts_first":..,"ts_last":..,"channel":0,"iface":"can0","id":"7E8","eff":false,
 *    "fc_id":"7E0","kind":"positive","sid":"22","service":"ReadDataByIdentifier",
 *    "sub":null,"nrc":null,"nrc_name":null,"did":"F190","data":"5744...","dtcs":null,
 *    "req_ts":..}
 *
 * A message is UDS when its first byte is a UDS service (sf_uds_is_uds); OBD-II modes go
 * to -f obd. Broken messages are left to -f messages. A response names the time of its
 * request (req_ts): the last request of the same service on the id its flow control goes
 * on, or else a functional one (0x7DF, 0x18DB....) on the same channel; a response pending
 * (NRC 0x78) keeps the request for the answer that follows. */
#include <string.h>

#include "export_diag.h"

static struct diag_req *find_req(struct diag_state *s, const struct sf_proto_msg *m,
                                 uint8_t sid)
{
    struct diag_req *best = NULL;
    for (unsigned i = 0; i < DIAG_REQS; i++) {
        struct diag_req *q = &s->req[i];
        if (!q->used || q->channel != m->channel || q->sid != sid)
            continue;
        int functional = (q->flags & SF_CAN_EFF) ? ((q->id >> 16) & 0xFF) == 0xDB
                                                 : q->id == 0x7DF;
        if (m->fc_id && q->id == m->fc_id)
            return q;
        if (functional && (!best || q->ts > best->ts))
            best = q;
    }
    return best;
}

static void note_req(struct diag_state *s, const struct sf_proto_msg *m, uint8_t sid)
{
    struct diag_req *q = NULL;
    for (unsigned i = 0; i < DIAG_REQS && !q; i++)
        if (s->req[i].used && s->req[i].channel == m->channel && s->req[i].id == m->id)
            q = &s->req[i];
    if (!q)
        q = &s->req[s->req_next++ % DIAG_REQS];
    *q = (struct diag_req){1, m->channel, sid, m->id, m->flags, m->first_ts};
}

static int uds_msg(struct export_ctx *x, struct diag_state *s, const struct sf_proto_msg *m)
{
    struct sf_uds u;
    if (m->proto != SF_PROTO_ISOTP || m->status != SF_MSG_OK ||
        !sf_uds_is_uds(m->payload, m->length) || sf_uds_parse(m->payload, m->length, &u)) {
        s->skipped++;
        return 0;
    }
    static const char *const kinds[] = {"request", "positive", "negative"};
    int eff = (m->flags & SF_CAN_EFF) != 0;
    const char *svc = sf_uds_service_name(u.sid);
    if (dj_head(x, s, m->first_ts, m->last_ts, m->channel, m->id, m->flags) ||
        dj_s(x, s, ",\"fc_id\":"))
        return -1;
    if (m->fc_id ? dj_s(x, s, "\"") || dj_num(x, s, m->fc_id, eff ? 8 : 3) || dj_s(x, s, "\"")
                 : dj_s(x, s, "null"))
        return -1;
    if (dj_s(x, s, ",\"kind\":\"") || dj_s(x, s, kinds[u.kind]) || dj_s(x, s, "\",\"sid\":\"") ||
        dj_num(x, s, u.sid, 2) || dj_s(x, s, "\",\"service\":") ||
        (svc ? dj_str(x, s, svc, (uint32_t)strlen(svc)) : dj_s(x, s, "null")) ||
        dj_s(x, s, ",\"sub\":"))
        return -1;
    if (u.has_sub ? dj_dec(x, s, u.sub) : dj_s(x, s, "null"))
        return -1;
    if (dj_s(x, s, ",\"nrc\":"))
        return -1;
    if (u.kind == SF_UDS_NEGATIVE) {
        const char *n = sf_uds_nrc_name(u.nrc);
        if (dj_s(x, s, "\"") || dj_num(x, s, u.nrc, 2) || dj_s(x, s, "\",\"nrc_name\":") ||
            (n ? dj_str(x, s, n, (uint32_t)strlen(n)) : dj_s(x, s, "null")))
            return -1;
    } else if (dj_s(x, s, "null,\"nrc_name\":null")) {
        return -1;
    }
    if (dj_s(x, s, ",\"did\":"))
        return -1;
    if (u.has_did ? dj_s(x, s, "\"") || dj_num(x, s, u.did, 4) || dj_s(x, s, "\"")
                  : dj_s(x, s, "null"))
        return -1;
    if (dj_s(x, s, ",\"data\":\"") || dj_hex(x, s, u.data, u.len) || dj_s(x, s, "\",\"dtcs\":"))
        return -1;
    if (u.dtc_list) {
        uint32_t dtc;
        uint8_t st;
        if (dj_s(x, s, "["))
            return -1;
        for (uint32_t i = 0; sf_uds_dtc_at(&u, i, &dtc, &st); i++)
            if (dj_s(x, s, i ? ",{\"dtc\":\"" : "{\"dtc\":\"") || dj_num(x, s, dtc, 6) ||
                dj_s(x, s, "\",\"status\":\"") || dj_num(x, s, st, 2) || dj_s(x, s, "\"}"))
                return -1;
        if (dj_s(x, s, "]"))
            return -1;
    } else if (dj_s(x, s, "null")) {
        return -1;
    }
    if (dj_s(x, s, ",\"req_ts\":"))
        return -1;
    if (u.kind == SF_UDS_REQUEST) {
        note_req(s, m, u.sid);
        if (dj_s(x, s, "null"))
            return -1;
    } else {
        struct diag_req *q = find_req(s, m, u.sid);
        if (q) {
            if (dj_ts(x, s, q->ts))
                return -1;
            if (!(u.kind == SF_UDS_NEGATIVE && u.nrc == SF_UDS_NRC_PENDING))
                q->used = 0;
        } else if (dj_s(x, s, "null")) {
            return -1;
        }
    }
    return dj_end(x, s);
}

static const struct diag_view view = {uds_msg, NULL};

static int uds_begin(struct export_ctx *x)
{
    return diag_begin(x, &view);
}

const struct export_writer export_uds = {
    "uds", "jsonl", 0, 0, uds_begin, diag_can, diag_other, diag_end,
};
