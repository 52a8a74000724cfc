/* streamfat._proto: what spans frames, for the Python package (streamfat.messages,
 * docs/PYTHON.md "Messages"): the library's reassembly (src/proto/, include/streamfat/
 * proto.h) and its decoders (include/streamfat/diag.h), run over the CAN columns that
 * streamfat._core.Decoder hands out for each chunk of a log. No reassembly or decoding is
 * done in Python: this module feeds the columns frame by frame to sf_proto_feed with the GIL
 * released and collects, per table, fixed-size rows (C structs that Python reads with a
 * numpy structured dtype of the same layout, messages.py) and their variable bytes (Arrow
 * binary offsets and data).
 *
 * Tables (what a Reassembler is asked for, `want`):
 *   messages  one row per reassembled message, every status (struct msg_row)
 *   uds       one row per whole ISO-TP message whose first byte is a UDS service
 *             (sf_uds_is_uds), with its DTC records as a list (struct uds_row, dtc rows)
 *   obd       one row per item of an OBD-II answer: a PID of mode 01/02, a DTC of mode
 *             03/07/0A, the VIN of mode 09 PID 02, else the answer's bytes (struct obd_row)
 *   dm1       one row per DTC of a J1939 DM1 / DM2 (single frame or TP), one row without
 *             a DTC for a message that has none, so its lamps are kept (struct dm1_row)
 *
 * Memory: the rows of a chunk are taken (take()) after every chunk, so a reader's memory
 * stays in proportion to the chunk; the reassembly itself has a fixed table of sessions
 * and a fixed arena (MSG_SESSIONS, MSG_ARENA, as `export -f messages`). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/proto.h"
#include "streamfat/diag.h"

#define MSG_SESSIONS 256
#define MSG_ARENA (16u << 20)

#define WANT_MESSAGES 1
#define WANT_UDS 2
#define WANT_OBD 4
#define WANT_DM1 8

/* ---- growable byte arrays ------------------------------------------------------------ */

struct gbuf {
    uint8_t *p;
    size_t n, cap;
};

static int gbuf_put(struct gbuf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static PyObject *gbuf_take(struct gbuf *b)
{
    PyObject *o = PyBytes_FromStringAndSize((const char *)b->p, (Py_ssize_t)b->n);
    b->n = 0;
    return o;
}

/* Variable bytes of a table: Arrow binary offsets (int32, starting at 0) and data. A chunk
 * holds at most a few MiB of payload, far below 2 GiB. */
struct var {
    struct gbuf off, data;
};

static int var_put(struct var *v, const void *p, size_t n)
{
    int32_t o;
    if (!v->off.n) {
        o = 0;
        if (gbuf_put(&v->off, &o, 4))
            return -1;
    }
    if (gbuf_put(&v->data, p, n))
        return -1;
    o = (int32_t)v->data.n;
    return gbuf_put(&v->off, &o, 4);
}

/* ---- the rows (messages.py has the same layouts as numpy dtypes) ------------------- */

/* pos, in every row: the index (in the frames fed by that feed() call) of the frame whose
 * feed handed the message out, or -1 for finish(): the lake keeps a message with the block
 * of that frame, so a grown file adds each message once. */
struct msg_row {                 /* 56 bytes */
    int64_t first_ts, last_ts;
    uint32_t id, fc_id, pgn, length, declared, frames;
    uint8_t proto, status, channel, mode, addr, sa, da, prio;
    uint8_t eff, fd, pad[2];
    int32_t pos;
};

struct uds_row {                 /* 48 bytes (44 and alignment) */
    int64_t first_ts, last_ts, req_ts;     /* req_ts -1: no request found */
    uint32_t id, fc_id;
    uint16_t did;
    uint8_t channel, eff, kind, sid, sub, nrc;
    uint8_t has_sub, has_did, dtc_list, avail_mask;
    int32_t pos;
};

struct obd_row {                 /* 40 bytes; the DTC text and the VIN in obd_t */
    int64_t first_ts, last_ts;
    double value;
    uint32_t id;
    uint8_t channel, eff, mode, pid;
    uint8_t frame, kind, has_pid, pad;
    int32_t pos;
};

/* obd_row.kind */
#define OBD_RAW 0                /* a PID without a formula: data only */
#define OBD_LINEAR 1
#define OBD_BITMAP 2
#define OBD_DTC 3
#define OBD_VIN 4
#define OBD_OTHER 5              /* another mode: the answer's bytes */

struct dm1_row {                 /* 56 bytes */
    int64_t first_ts, last_ts;
    uint32_t id, pgn, spn;
    uint8_t channel, sa, da, prio;
    uint8_t tp, has_dtc, fmi, oc;
    uint8_t cm, lamp[4], flash[4], pad[3];
    int32_t pos, pad2;
};

/* UDS request / response pairing (as export -f uds, cli/formats/export_uds.c): the last
 * requests by channel and id; a response takes the request of its service on its
 * flow-control id, else the latest functional one (0x7DF, 0x18DB....) on its channel. */
#define REQS 16
struct req {
    uint8_t used, channel, sid;
    uint32_t id, flags;
    uint64_t ts;
};

typedef struct {
    PyObject_HEAD
    struct sf_proto p;
    struct sf_proto_session *sess;
    uint8_t *arena;
    struct sf_isotp_pair *pairs;
    uint32_t *pgns;
    int want;
    int32_t pos;                 /* the frame being fed (rows' pos), -1 in finish() */
    struct req req[REQS];
    uint32_t req_next;
    uint64_t n_msg, n_uds, n_obd, n_dm1, n_dtc;
    struct gbuf msg, uds, obd, dm1, dtc_code, dtc_status, dtc_off;
    struct var msg_v, uds_v, obd_v, obd_t;
} ReassemblerObject;

/* ---- decoding each message into the tables ---------------------------------------- */

static struct req *find_req(ReassemblerObject *r, const struct sf_proto_msg *m, uint8_t sid)
{
    struct req *best = NULL;
    for (unsigned i = 0; i < REQS; i++) {
        struct req *q = &r->req[i];
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

static void note_req(ReassemblerObject *r, const struct sf_proto_msg *m, uint8_t sid)
{
    struct req *q = NULL;
    for (unsigned i = 0; i < REQS && !q; i++)
        if (r->req[i].used && r->req[i].channel == m->channel && r->req[i].id == m->id)
            q = &r->req[i];
    if (!q)
        q = &r->req[r->req_next++ % REQS];
    *q = (struct req){1, m->channel, sid, m->id, m->flags, m->first_ts};
}

static int put_uds(ReassemblerObject *r, const struct sf_proto_msg *m)
{
    struct sf_uds u;
    if (!sf_uds_is_uds(m->payload, m->length) || sf_uds_parse(m->payload, m->length, &u))
        return 0;
    struct uds_row w = {0};
    w.first_ts = (int64_t)m->first_ts;
    w.last_ts = (int64_t)m->last_ts;
    w.req_ts = -1;
    w.pos = r->pos;
    w.id = m->id;
    w.fc_id = m->fc_id;
    w.channel = m->channel;
    w.eff = (m->flags & SF_CAN_EFF) != 0;
    w.kind = u.kind;
    w.sid = u.sid;
    w.has_sub = u.has_sub;
    w.sub = u.sub;
    w.nrc = u.kind == SF_UDS_NEGATIVE ? u.nrc : 0;
    w.has_did = u.has_did;
    w.did = u.did;
    w.dtc_list = u.dtc_list;
    w.avail_mask = u.avail_mask;
    if (u.kind == SF_UDS_REQUEST) {
        note_req(r, m, u.sid);
    } else {
        struct req *q = find_req(r, m, u.sid);
        if (q) {
            w.req_ts = (int64_t)q->ts;
            if (!(u.kind == SF_UDS_NEGATIVE && u.nrc == SF_UDS_NRC_PENDING))
                q->used = 0;
        }
    }
    /* the DTC list: Arrow list offsets (int32) into the dtc children */
    if (!r->dtc_off.n) {
        int32_t z = 0;
        if (gbuf_put(&r->dtc_off, &z, 4))
            return -1;
    }
    if (u.dtc_list) {
        uint32_t dtc;
        uint8_t st;
        for (uint32_t i = 0; sf_uds_dtc_at(&u, i, &dtc, &st); i++) {
            if (gbuf_put(&r->dtc_code, &dtc, 4) || gbuf_put(&r->dtc_status, &st, 1))
                return -1;
            r->n_dtc++;
        }
    }
    int32_t end = (int32_t)r->n_dtc;
    if (gbuf_put(&r->dtc_off, &end, 4) || gbuf_put(&r->uds, &w, sizeof w) ||
        var_put(&r->uds_v, u.data, u.len))
        return -1;
    r->n_uds++;
    return 0;
}

static int obd_put(ReassemblerObject *r, const struct obd_row *w, const void *d, size_t n,
                   const char *text, size_t tn)
{
    if (gbuf_put(&r->obd, w, sizeof *w) || var_put(&r->obd_v, d, n) ||
        var_put(&r->obd_t, text, tn))
        return -1;
    r->n_obd++;
    return 0;
}

static int put_obd(ReassemblerObject *r, const struct sf_proto_msg *m)
{
    int mode = sf_obd_mode(m->payload, m->length);
    if (!mode)
        return 0;
    struct obd_row w = {0};
    w.first_ts = (int64_t)m->first_ts;
    w.last_ts = (int64_t)m->last_ts;
    w.id = m->id;
    w.channel = m->channel;
    w.eff = (m->flags & SF_CAN_EFF) != 0;
    w.mode = (uint8_t)mode;
    w.pos = r->pos;
    if (mode == 1 || mode == 2) {
        struct sf_obd_pid o;
        for (uint32_t i = 0; sf_obd_pid_at(m->payload, m->length, i, &o); i++) {
            w.pid = o.pid;
            w.has_pid = 1;
            w.frame = o.frame;
            w.kind = o.kind;
            w.value = o.kind == SF_OBD_LINEAR ? (double)o.raw * o.num / o.den + o.offset
                                              : (double)o.raw;
            if (obd_put(r, &w, o.data, o.len, "", 0))
                return -1;
        }
        return 0;
    }
    if (mode == 3 || mode == 7 || mode == 10) {
        uint16_t d;
        char t[6];
        w.kind = OBD_DTC;
        for (uint32_t i = 0; sf_obd_dtc_at(m->payload, m->length, i, &d); i++) {
            uint8_t raw[2] = {(uint8_t)(d >> 8), (uint8_t)d};
            sf_obd_dtc_text(d, t);
            w.value = d;
            if (obd_put(r, &w, raw, 2, t, 5))
                return -1;
        }
        return 0;
    }
    const uint8_t *vin;
    if (sf_obd_vin(m->payload, m->length, &vin)) {
        w.kind = OBD_VIN;
        w.pid = 2;
        w.has_pid = 1;
        return obd_put(r, &w, m->payload, m->length, (const char *)vin, 17);
    }
    w.kind = OBD_OTHER;
    return obd_put(r, &w, m->payload, m->length, "", 0);
}

static int put_dm1(ReassemblerObject *r, uint64_t first, uint64_t last, uint8_t channel,
                   uint32_t id, const struct sf_j1939_id *j, int tp, const uint8_t *d,
                   uint32_t n)
{
    struct sf_dm1 dm;
    struct sf_dm1_dtc t;
    if (sf_dm1_parse(d, n, &dm))
        return 0;
    struct dm1_row w = {0};
    w.first_ts = (int64_t)first;
    w.last_ts = (int64_t)last;
    w.id = id;
    w.pgn = j->pgn;
    w.channel = channel;
    w.sa = j->sa;
    w.da = j->da;
    w.prio = j->prio;
    w.tp = (uint8_t)tp;
    w.pos = r->pos;
    w.lamp[0] = dm.mil;
    w.lamp[1] = dm.red_stop;
    w.lamp[2] = dm.amber_warning;
    w.lamp[3] = dm.protect;
    w.flash[0] = dm.mil_flash;
    w.flash[1] = dm.red_stop_flash;
    w.flash[2] = dm.amber_warning_flash;
    w.flash[3] = dm.protect_flash;
    uint32_t i = 0;
    for (; sf_dm1_dtc_at(&dm, i, &t); i++) {
        w.has_dtc = 1;
        w.spn = t.spn;
        w.fmi = t.fmi;
        w.oc = t.oc;
        w.cm = t.cm;
        if (gbuf_put(&r->dm1, &w, sizeof w))
            return -1;
        r->n_dm1++;
    }
    if (!i) {
        if (gbuf_put(&r->dm1, &w, sizeof w))
            return -1;
        r->n_dm1++;
    }
    return 0;
}

static int put_msg(ReassemblerObject *r, const struct sf_proto_msg *m)
{
    if (r->want & WANT_MESSAGES) {
        struct msg_row w = {0};
        w.first_ts = (int64_t)m->first_ts;
        w.last_ts = (int64_t)m->last_ts;
        w.id = m->id;
        w.fc_id = m->fc_id;
        w.pgn = m->pgn;
        w.length = m->length;
        w.declared = m->declared;
        w.frames = m->frames;
        w.proto = m->proto;
        w.status = m->status;
        w.channel = m->channel;
        w.mode = m->mode;
        w.addr = m->addr;
        w.sa = m->sa;
        w.da = m->da;
        w.prio = m->prio;
        w.eff = (m->flags & SF_CAN_EFF) != 0;
        w.fd = m->fd;
        w.pos = r->pos;
        if (gbuf_put(&r->msg, &w, sizeof w) || var_put(&r->msg_v, m->payload, m->length))
            return -1;
        r->n_msg++;
    }
    if (m->status != SF_MSG_OK)
        return 0;                /* the decoded tables take whole messages only */
    if (m->proto == SF_PROTO_ISOTP) {
        if ((r->want & WANT_UDS) && put_uds(r, m))
            return -1;
        if ((r->want & WANT_OBD) && put_obd(r, m))
            return -1;
    } else if (m->proto == SF_PROTO_J1939 && (r->want & WANT_DM1) &&
               (m->pgn == SF_J1939_PGN_DM1 || m->pgn == SF_J1939_PGN_DM2)) {
        struct sf_j1939_id j = {m->pgn, m->prio, m->sa, m->da};
        if (put_dm1(r, m->first_ts, m->last_ts, m->channel, m->id, &j, 1, m->payload,
                    m->length))
            return -1;
    }
    return 0;
}

static int drain(ReassemblerObject *r)
{
    struct sf_proto_msg m;
    while (sf_proto_next(&r->p, &m))
        if (m.event == SF_PROTO_EV_MESSAGE && put_msg(r, &m))
            return -1;
    return 0;
}

/* ---- the type ---------------------------------------------------------------------- */

static void r_free(ReassemblerObject *r)
{
    struct gbuf *g[] = {&r->msg, &r->uds, &r->obd, &r->dm1, &r->dtc_code, &r->dtc_status,
                        &r->dtc_off, &r->msg_v.off, &r->msg_v.data, &r->uds_v.off,
                        &r->uds_v.data, &r->obd_v.off, &r->obd_v.data, &r->obd_t.off,
                        &r->obd_t.data};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        free(g[i]->p);
        memset(g[i], 0, sizeof *g[i]);
    }
    free(r->sess);
    free(r->arena);
    free(r->pairs);
    free(r->pgns);
    r->sess = NULL;
    r->arena = NULL;
    r->pairs = NULL;
    r->pgns = NULL;
}

static void Reassembler_dealloc(ReassemblerObject *self)
{
    r_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Reassembler(want, off, pairs, pgns, timers): want the WANT_* bits; off SF_PROTO_NO_*;
 * pairs a list of (id_a, id_b, eff, mode, channel); pgns a list of fast-packet PGNs;
 * timers (n_cr, t1, t2, t3, t4, fast) in ms, 0 for the default. */
static int Reassembler_init(ReassemblerObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"want", "off", "pairs", "pgns", "timers", NULL};
    int want = WANT_MESSAGES;
    unsigned int off = 0;
    PyObject *pairs = NULL, *pgns = NULL, *timers = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|iIOOO", kwlist, &want, &off, &pairs, &pgns,
                                     &timers))
        return -1;
    r_free(self);
    self->want = want;
    self->sess = calloc(MSG_SESSIONS, sizeof *self->sess);
    self->arena = malloc(MSG_ARENA);
    if (!self->sess || !self->arena) {
        PyErr_NoMemory();
        return -1;
    }
    struct sf_proto_config cfg = {0};
    cfg.sessions = self->sess;
    cfg.nsessions = MSG_SESSIONS;
    cfg.arena = self->arena;
    cfg.arena_size = MSG_ARENA;
    cfg.off = off;
    if (pairs && pairs != Py_None) {
        PyObject *seq = PySequence_Fast(pairs, "pairs: a list of tuples");
        if (!seq)
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        self->pairs = calloc((size_t)n + 1, sizeof *self->pairs);
        if (!self->pairs) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned int a, b, eff, mode, ch;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "IIIII", &a, &b, &eff,
                                  &mode, &ch)) {
                Py_DECREF(seq);
                return -1;
            }
            self->pairs[i] = (struct sf_isotp_pair){a, b, (uint8_t)eff, (uint8_t)mode,
                                                    (uint8_t)ch};
        }
        cfg.isotp_pairs = self->pairs;
        cfg.n_isotp_pairs = (uint32_t)n;
        Py_DECREF(seq);
    }
    if (pgns && pgns != Py_None) {
        PyObject *seq = PySequence_Fast(pgns, "pgns: a list of integers");
        if (!seq)
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        self->pgns = calloc((size_t)n + 1, sizeof *self->pgns);
        if (!self->pgns) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(seq, i));
            if (PyErr_Occurred()) {
                Py_DECREF(seq);
                return -1;
            }
            self->pgns[i] = (uint32_t)v;
        }
        cfg.fast_pgns = self->pgns;
        cfg.n_fast_pgns = (uint32_t)n;
        Py_DECREF(seq);
    }
    if (timers && timers != Py_None &&
        !PyArg_ParseTuple(timers, "IIIIII", &cfg.n_cr_ms, &cfg.t1_ms, &cfg.t2_ms, &cfg.t3_ms,
                          &cfg.t4_ms, &cfg.fast_ms))
        return -1;
    if (sf_proto_init(&self->p, &cfg)) {
        PyErr_SetString(PyExc_ValueError, "_proto: sf_proto_init refused the configuration");
        return -1;
    }
    memset(self->req, 0, sizeof self->req);
    return 0;
}

struct cols {
    Py_buffer ts, id, flags, chan, len, off, data;
};

static void cols_release(struct cols *c, int k)
{
    Py_buffer *b[] = {&c->ts, &c->id, &c->flags, &c->chan, &c->len, &c->off, &c->data};
    for (int i = 0; i < k; i++)
        PyBuffer_Release(b[i]);
}

/* feed(n, ts, id, flags, channel, len, offsets, data): n frames from the CAN columns of
 * _core.Decoder.take() (int64, uint32, uint8, uint8, uint8, int32 offsets, bytes). */
static PyObject *Reassembler_feed(ReassemblerObject *self, PyObject *args)
{
    Py_ssize_t n;
    PyObject *o[7];
    struct cols c;
    if (!PyArg_ParseTuple(args, "nOOOOOOO", &n, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6]))
        return NULL;
    if (!self->sess) {
        PyErr_SetString(PyExc_RuntimeError, "_proto: Reassembler not initialised");
        return NULL;
    }
    Py_buffer *b[] = {&c.ts, &c.id, &c.flags, &c.chan, &c.len, &c.off, &c.data};
    for (int i = 0; i < 7; i++)
        if (PyObject_GetBuffer(o[i], b[i], PyBUF_C_CONTIGUOUS) < 0) {
            cols_release(&c, i);
            return NULL;
        }
    /* the columns must hold n frames, and the offsets stay inside the data */
    if (n < 0 || c.ts.len < n * 8 || c.id.len < n * 4 || c.flags.len < n || c.chan.len < n ||
        c.len.len < n || c.off.len < (n + 1) * 4) {
        cols_release(&c, 7);
        PyErr_SetString(PyExc_ValueError, "_proto: feed: columns shorter than n frames");
        return NULL;
    }
    const int64_t *ts = c.ts.buf;
    const uint32_t *id = c.id.buf;
    const uint8_t *fl = c.flags.buf, *ch = c.chan.buf, *ln = c.len.buf, *data = c.data.buf;
    const int32_t *off = c.off.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int32_t a = off[i];
        uint8_t len = ln[i];
        if (a < 0 || (Py_ssize_t)a + len > c.data.len || len > 64) {
            bad = 1;
            break;
        }
        struct sf_proto_frame f = {(uint64_t)ts[i], id[i], fl[i], ch[i], len, data + a};
        self->pos = (int32_t)i;
        if (sf_proto_feed(&self->p, &f) > 0 && drain(self))
            bad = 2;
        /* DM1 / DM2 in one frame (J1939 PDU2, PGN 0xFECA / 0xFECB; not TP) */
        if ((self->want & WANT_DM1) && (fl[i] & (SF_CAN_EFF | SF_CAN_ERR | SF_CAN_RTR)) ==
            SF_CAN_EFF && ((id[i] >> 8) & 0x3FFFE) == SF_J1939_PGN_DM1) {
            struct sf_j1939_id j;
            sf_j1939_split(id[i], &j);
            if (put_dm1(self, f.ts, f.ts, f.channel, f.id, &j, 0, f.data, len))
                bad = 2;
        }
    }
    Py_END_ALLOW_THREADS
    cols_release(&c, 7);
    if (bad == 1) {
        PyErr_SetString(PyExc_ValueError, "_proto: feed: a frame's offset outside the data");
        return NULL;
    }
    if (bad == 2)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* finish(): the log (file) ended: open sessions come out with status "end"; then the
 * reassembly starts again (a new file). */
static PyObject *Reassembler_finish(ReassemblerObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->sess) {
        PyErr_SetString(PyExc_RuntimeError, "_proto: Reassembler not initialised");
        return NULL;
    }
    self->pos = -1;
    sf_proto_finish(&self->p);
    if (drain(self))
        return PyErr_NoMemory();
    memset(self->req, 0, sizeof self->req);
    Py_RETURN_NONE;
}

static PyObject *var_take(struct var *v)
{
    if (!v->off.n) {
        int32_t z = 0;
        if (gbuf_put(&v->off, &z, 4))
            return PyErr_NoMemory();
    }
    PyObject *t = Py_BuildValue("(NN)", gbuf_take(&v->off), gbuf_take(&v->data));
    return t;
}

/* take(): the rows collected since the last take, as bytes: {table: (n, rows, ...)}. */
static PyObject *Reassembler_take(ReassemblerObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->dtc_off.n) {
        int32_t z = 0;
        if (gbuf_put(&self->dtc_off, &z, 4))
            return PyErr_NoMemory();
    }
    PyObject *r = Py_BuildValue(
        "{s:(KNN),s:(KNNNNNK),s:(KNNN),s:(KN)}",
        "messages", (unsigned long long)self->n_msg, gbuf_take(&self->msg),
        var_take(&self->msg_v),
        "uds", (unsigned long long)self->n_uds, gbuf_take(&self->uds), var_take(&self->uds_v),
        gbuf_take(&self->dtc_off), gbuf_take(&self->dtc_code), gbuf_take(&self->dtc_status),
        (unsigned long long)self->n_dtc,
        "obd", (unsigned long long)self->n_obd, gbuf_take(&self->obd), var_take(&self->obd_v),
        var_take(&self->obd_t),
        "dm1", (unsigned long long)self->n_dm1, gbuf_take(&self->dm1));
    self->n_msg = self->n_uds = self->n_obd = self->n_dm1 = self->n_dtc = 0;
    return r;
}

static PyObject *Reassembler_stats(ReassemblerObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->sess)
        return PyDict_New();
    const struct sf_proto_stats *s = sf_proto_stats(&self->p);
#define S(f) #f, (unsigned long long)s->f
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
        "s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
        S(frames), S(messages_ok), S(messages_broken), S(no_session), S(no_memory),
        S(not_taken), S(timeouts), S(replaced), S(ended), S(isotp_sf), S(isotp_ff),
        S(isotp_cf), S(isotp_fc), S(isotp_bad_pci), S(isotp_orphan_cf), S(isotp_wrong_sn),
        S(isotp_dup_cf), S(isotp_short_cf), S(isotp_overflow), S(j1939_cm), S(j1939_dt),
        S(j1939_bad_cm), S(j1939_orphan), S(j1939_wrong_seq), S(j1939_dup_dt),
        S(j1939_short_dt), S(j1939_abort), S(fast_frames), S(fast_bad_len), S(fast_orphan),
        S(fast_wrong_seq), S(fast_dup));
#undef S
}

static PyMethodDef Reassembler_methods[] = {
    {"feed", (PyCFunction)Reassembler_feed, METH_VARARGS, "feed CAN columns"},
    {"finish", (PyCFunction)Reassembler_finish, METH_NOARGS, "the file ended"},
    {"take", (PyCFunction)Reassembler_take, METH_NOARGS, "the rows collected"},
    {"stats", (PyCFunction)Reassembler_stats, METH_NOARGS, "sf_proto_stats as a dict"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReassemblerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamfat._proto.Reassembler",
    .tp_basicsize = sizeof(ReassemblerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "the library's reassembly and decoders over CAN columns",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reassembler_init,
    .tp_dealloc = (destructor)Reassembler_dealloc,
    .tp_methods = Reassembler_methods,
};

/* ---- name tables -------------------------------------------------------------------- */

/* names(): the decoders' names, for the string columns: {"uds_service": [256], "uds_nrc":
 * [256], "obd_pid": [(name, unit)] * 256, "lamp": [4], "flash": [4], "status": [7],
 * "proto": [4]} (None where the standard names nothing). */
static PyObject *str_or_none(const char *s)
{
    if (s)
        return PyUnicode_FromString(s);
    Py_RETURN_NONE;
}

static PyObject *names(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    PyObject *svc = PyList_New(256), *nrc = PyList_New(256), *pid = PyList_New(256);
    PyObject *lamp = PyList_New(4), *flash = PyList_New(4), *st = PyList_New(7);
    PyObject *pr = PyList_New(4);
    if (!svc || !nrc || !pid || !lamp || !flash || !st || !pr)
        goto fail;
    for (int i = 0; i < 256; i++) {
        PyList_SET_ITEM(svc, i, str_or_none(sf_uds_service_name((uint8_t)i)));
        PyList_SET_ITEM(nrc, i, str_or_none(sf_uds_nrc_name((uint8_t)i)));
        /* a PID's name and unit: its first item in a mode 01 answer of 4 data bytes */
        uint8_t msg[6] = {0x41, (uint8_t)i, 0, 0, 0, 0};
        struct sf_obd_pid o;
        if (sf_obd_pid_at(msg, sizeof msg, 0, &o) && o.kind == SF_OBD_LINEAR)
            PyList_SET_ITEM(pid, i, Py_BuildValue("(ss)", o.name, o.unit));
        else
            PyList_SET_ITEM(pid, i, Py_BuildValue("(OO)", Py_None, Py_None));
    }
    for (int i = 0; i < 4; i++) {
        PyList_SET_ITEM(lamp, i, str_or_none(sf_dm1_lamp_name((uint8_t)i)));
        PyList_SET_ITEM(flash, i, str_or_none(sf_dm1_flash_name((uint8_t)i)));
        PyList_SET_ITEM(pr, i, i ? str_or_none(sf_proto_kind_name(i)) : Py_BuildValue(""));
    }
    for (int i = 0; i < 7; i++)
        PyList_SET_ITEM(st, i, str_or_none(sf_proto_status_name(i)));
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "uds_service", svc, "uds_nrc", nrc,
                         "obd_pid", pid, "lamp", lamp, "flash", flash, "status", st,
                         "proto", pr);
fail:
    Py_XDECREF(svc);
    Py_XDECREF(nrc);
    Py_XDECREF(pid);
    Py_XDECREF(lamp);
    Py_XDECREF(flash);
    Py_XDECREF(st);
    Py_XDECREF(pr);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"names", names, METH_NOARGS, "the decoders' name tables"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "streamfat._proto",
    "the library's reassembly (ISO-TP, J1939 TP, fast packets) and decoders (UDS, OBD-II, "
    "DM1) over CAN columns", -1, module_methods,
};

PyMODINIT_FUNC PyInit__proto(void)
{
    if (PyType_Ready(&ReassemblerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    Py_INCREF(&ReassemblerType);
    if (PyModule_AddObject(m, "Reassembler", (PyObject *)&ReassemblerType) < 0) {
        Py_DECREF(&ReassemblerType);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "WANT_MESSAGES", WANT_MESSAGES);
    PyModule_AddIntConstant(m, "WANT_UDS", WANT_UDS);
    PyModule_AddIntConstant(m, "WANT_OBD", WANT_OBD);
    PyModule_AddIntConstant(m, "WANT_DM1", WANT_DM1);
    PyModule_AddIntConstant(m, "NO_ISOTP", SF_PROTO_NO_ISOTP);
    PyModule_AddIntConstant(m, "NO_ISOTP_AUTO", SF_PROTO_NO_ISOTP_AUTO);
    PyModule_AddIntConstant(m, "NO_J1939", SF_PROTO_NO_J1939);
    /* the row sizes, which messages.py's dtypes must match */
    PyModule_AddIntConstant(m, "MSG_ROW", (long)sizeof(struct msg_row));
    PyModule_AddIntConstant(m, "UDS_ROW", (long)sizeof(struct uds_row));
    PyModule_AddIntConstant(m, "OBD_ROW", (long)sizeof(struct obd_row));
    PyModule_AddIntConstant(m, "DM1_ROW", (long)sizeof(struct dm1_row));
    return m;
}
