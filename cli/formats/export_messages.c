/* streamfat export -f messages: what spans frames, reassembled by the library (src/proto/,
 * include/streamfat/proto.h; docs/DECODE.md), one JSON object a line per message:
 *
 *   {"proto":"isotp","status":"ok","channel":0,"iface":"can0","id":"7E8","eff":false,
 *    "fc_id":"7E0","mode":"normal","addr":null,"sa":null,"da":null,"pgn":null,
 *    "ts_first":1700000000000000000,"ts_last":1700000000020000000,"length":20,
 *    "declared":20,"frames":3,"data":"62F190..."}
 *
 * -f messages-csv: the same fields as CSV (RFC 4180) under a header line, in the same
 * order; a null is an empty field, true / false are 1 / 0, iface is always quoted:
 *
 *   proto,status,channel,iface,id,eff,fc_id,mode,addr,sa,da,pgn,ts_first,ts_last,length,
 *   declared,frames,data
 *   isotp,ok,0,"can0",7E8,0,7E0,normal,,,,,1700000000000000000,...,20,20,3,62F190...
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
    int csv;                    /* -f messages-csv */
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

/* a null: JSON's null, CSV's empty field */
static char *put_null(const struct msg_state *s, char *p)
{
    return s->csv ? p : put_str(p, "null");
}

static char *put_u8_or_null(const struct msg_state *s, char *p, int have, unsigned v)
{
    return have ? export_put_dec(p, v, 1) : put_null(s, p);
}

/* a field's start: JSON's ,"key": ({"key": for the first), CSV's comma (none first) */
static char *key(const struct msg_state *s, char *p, const char *k, int first)
{
    if (s->csv)
        return first ? p : put_str(p, ",");
    p = put_str(p, first ? "{\"" : ",\"");
    p = put_str(p, k);
    return put_str(p, "\":");
}

/* a string of known safe characters (names, hex): quoted in JSON, bare in CSV */
static char *put_word(const struct msg_state *s, char *p, const char *w)
{
    if (!s->csv)
        *p++ = '"';
    p = put_str(p, w);
    if (!s->csv)
        *p++ = '"';
    return p;
}

static char *put_hexid(const struct msg_state *s, char *p, uint32_t id, int eff)
{
    if (!s->csv)
        *p++ = '"';
    p = export_put_hex(p, id, eff ? 8 : 3);
    if (!s->csv)
        *p++ = '"';
    return p;
}

static char *put_bool(const struct msg_state *s, char *p, int v)
{
    return put_str(p, s->csv ? (v ? "1" : "0") : (v ? "true" : "false"));
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
    int eff = (m->flags & SF_CAN_EFF) != 0;
    int fixed = iso && eff && ((m->id >> 16) & 0xFE) == 0xDA;

    p = key(s, p, "proto", 1);
    p = put_word(s, p, sf_proto_kind_name(m->proto));
    p = key(s, p, "status", 0);
    p = put_word(s, p, sf_proto_status_name(m->status));
    p = key(s, p, "channel", 0);
    p = export_put_dec(p, m->channel, 1);
    p = key(s, p, "iface", 0);
    *p++ = '"';
    /* the channel's name as every reader gives it (docs/FORMAT.md, "Channel names"): whole,
     * so a long one goes out in pieces like the payload below; JSON escapes " and \, CSV
     * doubles " (RFC 4180) */
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
        if (*c == '"')
            *p++ = s->csv ? '"' : '\\';
        else if (*c == '\\' && !s->csv)
            *p++ = '\\';
        *p++ = *c;
    }
    *p++ = '"';
    p = key(s, p, "id", 0);
    p = put_hexid(s, p, m->id, eff);
    p = key(s, p, "eff", 0);
    p = put_bool(s, p, eff);
    p = key(s, p, "fc_id", 0);
    p = iso && m->fc_id ? put_hexid(s, p, m->fc_id, eff) : put_null(s, p);
    p = key(s, p, "mode", 0);
    p = iso ? put_word(s, p, modes[m->mode < 3 ? m->mode : 0]) : put_null(s, p);
    p = key(s, p, "addr", 0);
    p = put_u8_or_null(s, p, iso && m->mode != SF_ISOTP_NORMAL, m->addr);
    p = key(s, p, "sa", 0);
    p = put_u8_or_null(s, p, !iso || fixed, m->sa);
    p = key(s, p, "da", 0);
    p = put_u8_or_null(s, p, !iso || fixed, m->da);
    p = key(s, p, "pgn", 0);
    p = put_u8_or_null(s, p, !iso, m->pgn);
    p = key(s, p, "ts_first", 0);
    p = put_ts(x, p, m->first_ts);
    p = key(s, p, "ts_last", 0);
    p = put_ts(x, p, m->last_ts);
    p = key(s, p, "length", 0);
    p = export_put_dec(p, m->length, 1);
    p = key(s, p, "declared", 0);
    p = export_put_dec(p, m->declared, 1);
    p = key(s, p, "frames", 0);
    p = export_put_dec(p, m->frames, 1);
    p = key(s, p, "data", 0);
    if (!s->csv)
        *p++ = '"';
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
    p = put_str(p, s->csv ? "\n" : "\"}\n");
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

static int begin(struct export_ctx *x, int csv)
{
    struct msg_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->csv = csv;
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
    if (csv) {
        /* the header, even for a log without messages (a reader sees the columns) */
        static const char head[] = "proto,status,channel,iface,id,eff,fc_id,mode,addr,sa,da,"
                                   "pgn,ts_first,ts_last,length,declared,frames,data\n";
        if (export_write(x, head, sizeof head - 1))
            return -1;
    }
    return 0;
}

static int messages_begin(struct export_ctx *x)
{
    return begin(x, 0);
}

static int messages_csv_begin(struct export_ctx *x)
{
    return begin(x, 1);
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

const struct export_writer export_messages_csv = {
    "messages-csv", "csv", 0, 0, messages_csv_begin, messages_can, messages_other,
    messages_end,
};
