/* streamfat export -f messages: what spans frames, reassembled by the library (src/proto/,
 * include/streamfat/proto.h; docs/DECODE.md), one JSON object a line per message:
 *
 *   {"proto":"isotp","status":"ok","channel":0,"iface":"can0","id":"7E8","eff":false,
 *    "fc_id":"7E0","mode":"normal","addr":null,"sa":null,"da":null,"pgn":null,
 *    "ts_first":1700000000000000000,"ts_last":1700000000020000000,"length":20,
 *    "declared":20,"frames":3,"data":"62F190..."}
 *
 * ISO-TP on the OBD-II / UDS ids by themselves and on the --isotp-pair pairs; J1939 TP (BAM,
 * RTS/CTS) always; NMEA 2000 fast packets of the --fast-pgn PGNs. Broken messages carry
 * what arrived and their status (timeout, bad_seq, ...); frames without a session are
 * counted on standard error, never written. Times are ns integers (from the log's start
 * with --relative); ids upper-case hex, data hex. Other records have no form here. */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "cli.h"

/* Sessions and payload arena: a log can hold thousands of open sessions only if it is
 * broken; 256 concurrent ones and 16 MiB (ISO-TP's escape allows more per message: a
 * longer one is refused and counted) are far beyond any bus. */
#define MSG_SESSIONS 256
#define MSG_ARENA (16u << 20)

struct msg_state {
    struct sf_proto p;
    struct sf_proto_session sess[MSG_SESSIONS];
    uint8_t arena[MSG_ARENA];
    char line[512 + 2 * 256];
};

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_u8_or_null(char *p, int have, unsigned v)
{
    return have ? export_put_dec(p, v, 1) : put_str(p, "null");
}

static char *put_ts(const struct export_ctx *x, char *p, uint64_t ts)
{
    if (x->relative) {
        if (ts < x->log_start) {
            *p++ = '-';
            return export_put_dec(p, x->log_start - ts, 1);
        }
        ts -= x->log_start;
    }
    return export_put_dec(p, ts, 1);
}

static int write_msg(struct export_ctx *x, struct msg_state *s, const struct sf_proto_msg *m)
{
    static const char *const modes[] = {"normal", "extended", "mixed"};
    char *p = s->line, ifn[EXPORT_IFNAME_INLINE + 8];
    int iso = m->proto == SF_PROTO_ISOTP;
    int fixed = iso && (m->flags & SF_CAN_EFF) && ((m->id >> 16) & 0xFE) == 0xDA;

    p = put_str(p, "{\"proto\":\"");
    p = put_str(p, sf_proto_kind_name(m->proto));
    p = put_str(p, "\",\"status\":\"");
    p = put_str(p, sf_proto_status_name(m->status));
    p = put_str(p, "\",\"channel\":");
    p = export_put_dec(p, m->channel, 1);
    p = put_str(p, ",\"iface\":\"");
    /* the channel's name as every reader gives it (docs/FORMAT.md, "Channel names"): whole,
     * so a long one goes out in pieces like the payload below */
    const char *name = ifn;
    char *q = export_put_ifname(x, ifn, m->channel);
    if (q)
        *q = '\0';
    else
        name = x->ifname[m->channel];
    for (const char *c = name; *c; c++) {
        if ((size_t)(p - s->line) > sizeof s->line - 8) {
            if (export_write(x, s->line, (size_t)(p - s->line)))
                return -1;
            p = s->line;
        }
        if (*c == '"' || *c == '\\')
            *p++ = '\\';
        *p++ = *c;
    }
    p = put_str(p, "\",\"id\":\"");
    p = export_put_hex(p, m->id, m->flags & SF_CAN_EFF ? 8 : 3);
    p = put_str(p, m->flags & SF_CAN_EFF ? "\",\"eff\":true" : "\",\"eff\":false");
    p = put_str(p, ",\"fc_id\":");
    if (iso && m->fc_id) {
        *p++ = '"';
        p = export_put_hex(p, m->fc_id, m->flags & SF_CAN_EFF ? 8 : 3);
        *p++ = '"';
    } else {
        p = put_str(p, "null");
    }
    p = put_str(p, ",\"mode\":");
    if (iso) {
        *p++ = '"';
        p = put_str(p, modes[m->mode < 3 ? m->mode : 0]);
        *p++ = '"';
    } else {
        p = put_str(p, "null");
    }
    p = put_str(p, ",\"addr\":");
    p = put_u8_or_null(p, iso && m->mode != SF_ISOTP_NORMAL, m->addr);
    p = put_str(p, ",\"sa\":");
    p = put_u8_or_null(p, !iso || fixed, m->sa);
    p = put_str(p, ",\"da\":");
    p = put_u8_or_null(p, !iso || fixed, m->da);
    p = put_str(p, ",\"pgn\":");
    p = put_u8_or_null(p, !iso, m->pgn);
    p = put_str(p, ",\"ts_first\":");
    p = put_ts(x, p, m->first_ts);
    p = put_str(p, ",\"ts_last\":");
    p = put_ts(x, p, m->last_ts);
    p = put_str(p, ",\"length\":");
    p = export_put_dec(p, m->length, 1);
    p = put_str(p, ",\"declared\":");
    p = export_put_dec(p, m->declared, 1);
    p = put_str(p, ",\"frames\":");
    p = export_put_dec(p, m->frames, 1);
    p = put_str(p, ",\"data\":\"");
    /* the payload in pieces: it can be far longer than the line buffer */
    const uint8_t *d = m->payload;
    for (uint32_t i = 0; i < m->length; i++) {
        if ((size_t)(p - s->line) > sizeof s->line - 8) {
            if (export_write(x, s->line, (size_t)(p - s->line)))
                return -1;
            p = s->line;
        }
        *p++ = export_hexu[d[i] >> 4];
        *p++ = export_hexu[d[i] & 0xF];
    }
    p = put_str(p, "\"}\n");
    x->written++;
    return export_write(x, s->line, (size_t)(p - s->line)) ? -1 : 0;
}

static int drain(struct export_ctx *x, struct msg_state *s)
{
    struct sf_proto_msg m;
    while (sf_proto_next(&s->p, &m))
        if (write_msg(x, s, &m))
            return -1;
    return 0;
}

static int messages_begin(struct export_ctx *x)
{
    struct msg_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    struct sf_proto_config cfg = {0};
    cfg.sessions = s->sess;
    cfg.nsessions = MSG_SESSIONS;
    cfg.arena = s->arena;
    cfg.arena_size = MSG_ARENA;
    cfg.isotp_pairs = x->isotp_pairs;
    cfg.n_isotp_pairs = x->n_isotp_pairs;
    cfg.fast_pgns = x->fast_pgns;
    cfg.n_fast_pgns = x->n_fast_pgns;
    if (sf_proto_init(&s->p, &cfg)) {
        free(s);
        return -1;
    }
    x->priv = s;
    return 0;
}

static int messages_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    struct msg_state *s = x->priv;
    struct sf_proto_frame f = {r->ts, c->id, c->flags, r->channel, c->len, c->data};
    if (sf_proto_feed(&s->p, &f) > 0 && drain(x, s))
        return -1;
    return 1;
}

static int messages_other(struct export_ctx *x, const struct sf_rec *r)
{
    (void)x;
    (void)r;
    return 0;
}

static int messages_end(struct export_ctx *x)
{
    struct msg_state *s = x->priv;
    int rc = 0;
    if (!s)
        return 0;
    sf_proto_finish(&s->p);
    rc = drain(x, s);
    const struct sf_proto_stats *st = sf_proto_stats(&s->p);
    uint64_t orphans = st->isotp_orphan_cf + st->j1939_orphan + st->fast_orphan;
    uint64_t refused = st->no_session + st->no_memory;
    if (st->messages_broken || orphans || refused || st->isotp_bad_pci || st->j1939_bad_cm ||
        st->fast_bad_len)
        cli_err("%s: messages: %llu whole, %llu broken; frames without a session %llu, "
                "malformed %llu, sessions refused %llu (docs/DECODE.md)", x->out_name,
                (unsigned long long)st->messages_ok, (unsigned long long)st->messages_broken,
                (unsigned long long)orphans,
                (unsigned long long)(st->isotp_bad_pci + st->j1939_bad_cm + st->fast_bad_len),
                (unsigned long long)refused);
    free(s);
    x->priv = NULL;
    return rc;
}

const struct export_writer export_messages = {
    "messages", "jsonl", 0, 0, messages_begin, messages_can, messages_other, messages_end,
};
