/* streamfat._dbc: the DBC decoder's inner loops (streamfat.dbc, docs/PYTHON.md).
 *
 * group():  one pass over a frames table's id/ext/rtr/err/dlc columns that puts every
 *           frame's row number into its DBC message's group (a count per message, then a
 *           scatter: rows stay in table order within a group); frames of no message, of
 *           the wrong length, remote or error frames go to a last group (the raw frames).
 * decode(): one message's signals for the rows of its group, whole columns at once, from a
 *           signal table compiled once (streamfat.dbc.compile_message): bit extraction for
 *           little-endian (Intel) and big-endian (Motorola) layouts as DBC and cantools
 *           number them, sign extension, IEEE floats, scale and offset (integer arithmetic
 *           for integer signals), and the multiplexer selection (a row of a multiplexed
 *           signal is valid when its multiplexer is valid and selects it).
 *
 * Only the buffer protocol: the caller (Python) allocates every output with numpy, so the
 * module needs no numpy headers. Row and byte offsets are checked against the buffers'
 * sizes: a wrong argument is a ValueError, never a read out of bounds. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* ---- buffers ----------------------------------------------------------------------- */

typedef struct {
    Py_buffer v;
    int held;
} buf_t;

static int get_buf(PyObject *o, buf_t *b, int writable, const char *what)
{
    if (PyObject_GetBuffer(o, &b->v, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS
                                              : PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Format(PyExc_TypeError, "_dbc: %s: not a contiguous%s buffer", what,
                     writable ? " writable" : "");
        return -1;
    }
    b->held = 1;
    return 0;
}

static void rel(buf_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i].held) {
            PyBuffer_Release(&b[i].v);
            b[i].held = 0;
        }
}

static inline int bit_at(const uint8_t *bm, int64_t i)
{
    return (bm[i >> 3] >> (i & 7)) & 1;
}

/* ---- group ------------------------------------------------------------------------- */

static inline uint64_t hash_key(uint64_t k, int shift)
{
    return (k * 0x9E3779B97F4A7C15ull) >> shift;
}

/* group(keys, lengths, ids, ext_bits, ext_off, rtr_bits, rtr_off, err_bits, err_off, dlc,
 *       ts, chan, offsets, offsets_first, values,
 *       order, starts, mismatch, ts_out, chan_out, words_out)
 * keys: uint64[m] (frame id | ext << 32, distinct); lengths: int64[m] (bytes);
 * ids: uint32[n]; *_bits: Arrow bitmaps with a bit offset; dlc: uint8[n]; ts: int64[n];
 * chan: int32[n]; offsets/values: the data column (int32 offsets from offsets_first).
 * out: order int64[n] (row numbers, grouped), starts int64[m + 2], mismatch int64[m], and
 * in the same grouped order ts_out int64[n], chan_out int32[n], words_out uint64[n] (a
 * frame's first 8 data bytes as a little-endian word, zero past its end): one sequential
 * pass over the table's columns, so that each message's columns are contiguous. */
static PyObject *py_group(PyObject *self, PyObject *args)
{
    enum { NB = 17 };
    PyObject *o[NB];
    Py_ssize_t ext_off, rtr_off, err_off, first;
    if (!PyArg_ParseTuple(args, "OOOOnOnOnOOOOnOOOOOOO", &o[0], &o[1], &o[2], &o[3], &ext_off,
                          &o[4], &rtr_off, &o[5], &err_off, &o[6], &o[7], &o[8], &o[9],
                          &first, &o[10], &o[11], &o[12], &o[13], &o[14], &o[15], &o[16]))
        return NULL;
    buf_t b[NB];
    memset(b, 0, sizeof b);
    static const char *names[NB] = {"keys", "lengths", "ids", "ext", "rtr", "err", "dlc",
                                    "ts", "chan", "offsets", "values", "order", "starts",
                                    "mismatch", "ts_out", "chan_out", "words_out"};
    for (int i = 0; i < NB; i++)
        if (get_buf(o[i], &b[i], i >= 11, names[i]) < 0) {
            rel(b, NB);
            return NULL;
        }
    int64_t m = b[0].v.len / 8, n = b[2].v.len / 4;
    const uint64_t *keys = b[0].v.buf;
    const int64_t *lengths = b[1].v.buf;
    const uint32_t *ids = b[2].v.buf;
    const uint8_t *ext = b[3].v.buf, *rtr = b[4].v.buf, *err = b[5].v.buf, *dlc = b[6].v.buf;
    const int64_t *ts = b[7].v.buf;
    const int32_t *chan = b[8].v.buf, *offs = b[9].v.buf;
    const uint8_t *vals = b[10].v.buf;
    int64_t *order = b[11].v.buf, *starts = b[12].v.buf, *mismatch = b[13].v.buf;
    int64_t *ts_out = b[14].v.buf;
    int32_t *chan_out = b[15].v.buf;
    uint64_t *words = b[16].v.buf;
    int64_t nvals = b[10].v.len;
    int bad = b[1].v.len / 8 != m || b[6].v.len < n || b[7].v.len / 8 < n ||
              b[8].v.len / 4 < n || first < 0 || b[9].v.len / 4 < first + n + 1 ||
              b[11].v.len / 8 < n || b[12].v.len / 8 < m + 2 || b[13].v.len / 8 < m ||
              b[14].v.len / 8 < n || b[15].v.len / 4 < n || b[16].v.len / 8 < n ||
              ext_off < 0 || rtr_off < 0 || err_off < 0 ||
              (ext_off + n + 7) / 8 > b[3].v.len || (rtr_off + n + 7) / 8 > b[4].v.len ||
              (err_off + n + 7) / 8 > b[5].v.len;
    for (int64_t i = 0; !bad && i <= n; i++)
        if (offs[first + i] < 0 || offs[first + i] > nvals ||
            (i && offs[first + i] < offs[first + i - 1]))
            bad = 1;
    if (bad) {
        rel(b, NB);
        PyErr_SetString(PyExc_ValueError, "_dbc.group: buffer sizes do not match");
        return NULL;
    }
    /* open addressing: a table of at least 4 slots per message */
    int bits = 2;
    while ((1ll << bits) < 4 * m + 4)
        bits++;
    int64_t size = 1ll << bits;
    int shift = 64 - bits;
    int32_t *slot = PyMem_Malloc(size * sizeof *slot);
    int32_t *grp = PyMem_Malloc((n ? n : 1) * sizeof *grp);
    int64_t *cnt = PyMem_Calloc(m + 1, sizeof *cnt);
    if (!slot || !grp || !cnt) {
        PyMem_Free(slot);
        PyMem_Free(grp);
        PyMem_Free(cnt);
        rel(b, NB);
        return PyErr_NoMemory();
    }
    for (int64_t i = 0; i < size; i++)
        slot[i] = -1;
    for (int64_t k = 0; k < m; k++) {
        uint64_t h = hash_key(keys[k], shift);
        while (slot[h] >= 0)
            h = (h + 1) & (size - 1);
        slot[h] = (int32_t)k;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k < m; k++)
        mismatch[k] = 0;
    uint64_t last_key = ~0ull;
    int32_t last_g = (int32_t)m;
    for (int64_t i = 0; i < n; i++) {
        int32_t g = (int32_t)m;
        if (!bit_at(rtr, rtr_off + i) && !bit_at(err, err_off + i)) {
            uint64_t key = ids[i] | ((uint64_t)bit_at(ext, ext_off + i) << 32);
            if (key == last_key) {
                g = last_g;
            } else {
                uint64_t h = hash_key(key, shift);
                int32_t s;
                while ((s = slot[h]) >= 0 && keys[s] != key)
                    h = (h + 1) & (size - 1);
                g = s >= 0 ? s : (int32_t)m;
                last_key = key;
                last_g = g;
            }
            if (g < m && dlc[i] != lengths[g]) {
                mismatch[g]++;
                g = (int32_t)m;
            }
        }
        grp[i] = g;
        cnt[g]++;
    }
    starts[0] = 0;
    for (int64_t k = 0; k <= m; k++)
        starts[k + 1] = starts[k] + cnt[k];
    for (int64_t k = 0; k <= m; k++)
        cnt[k] = starts[k];
    for (int64_t i = 0; i < n; i++) {
        int64_t p = cnt[grp[i]]++;
        int32_t a = offs[first + i], len = offs[first + i + 1] - a;
        uint64_t w = 0;
        if (len >= 8)
            memcpy(&w, vals + a, 8);
        else if (len > 0)
            memcpy(&w, vals + a, (size_t)len);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        order[p] = i;
        ts_out[p] = ts[i];
        chan_out[p] = chan[i];
        words[p] = w;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(slot);
    PyMem_Free(grp);
    PyMem_Free(cnt);
    rel(b, NB);
    Py_RETURN_NONE;
}

/* ---- decode ------------------------------------------------------------------------ */

/* one signal's row of the compiled table (int64[nsig, SIG_COLS], see dbc.py) */
enum { S_START, S_LEN, S_BE, S_SIGNED, S_FLOAT, S_KIND, S_PARENT, S_MUX0, S_MUX1, S_ISCALE,
       S_IOFF, SIG_COLS };
enum { K_INT, K_UINT, K_DOUBLE };     /* output: int64, uint64, float64 */

typedef struct {
    int start, len, be, sign, flt, kind, parent;
    int64_t mux0, mux1, iscale, ioff;
    double scale, offset;
    int msb_lin;                      /* big endian: the MSB in linear (MSB-first) order */
    uint64_t mask;
} sig_t;

/* The raw bits of a signal of a message of any length (data: at least 72 bytes readable,
 * zero past the frame's end). Little endian: bit i is byte i / 8, bit i % 8. Big endian:
 * in a numbering where bit 0 is the first byte's MSB, the signal is bits msb_lin ..
 * msb_lin + len - 1, the first its MSB. */
static inline uint64_t raw_any(const uint8_t *d, const sig_t *s)
{
    uint64_t acc = 0;
    if (!s->be) {
        int lo = s->start / 8, hi = (s->start + s->len - 1) / 8, sh = s->start % 8;
        for (int b = lo; b <= hi && b - lo < 8; b++)
            acc |= (uint64_t)d[b] << (8 * (b - lo));
        acc >>= sh;
        if (hi - lo >= 8)
            acc |= (uint64_t)d[hi] << (64 - sh);
    } else {
        int lo = s->msb_lin / 8, hi = (s->msb_lin + s->len - 1) / 8;
        int sh = 8 * (hi + 1) - (s->msb_lin + s->len);
        if (hi - lo >= 8) {
            for (int b = lo + 1; b <= hi; b++)
                acc |= (uint64_t)d[b] << (8 * (hi - b));
            acc >>= sh;
            acc |= (uint64_t)d[lo] << (64 - sh);
        } else {
            for (int b = lo; b <= hi; b++)
                acc |= (uint64_t)d[b] << (8 * (hi - b));
            acc >>= sh;
        }
    }
    return acc & s->mask;
}

static inline uint64_t bswap64(uint64_t x)
{
    return __builtin_bswap64(x);
}

/* n raw values (in place) to the physical values' 64 bits: int64, uint64 or double by
 * s->kind; one loop per case so that the compiler can vectorise it */
static void convert(uint64_t *v, int64_t n, const sig_t *s)
{
    const int l = 64 - s->len;
    const double scale = s->scale, offset = s->offset;
    if (s->flt == 32) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)v[i];
            float f;
            double d;
            memcpy(&f, &u, 4);
            d = (double)f * scale + offset;
            memcpy(&v[i], &d, 8);
        }
    } else if (s->flt == 64) {
        for (int64_t i = 0; i < n; i++) {
            double d;
            memcpy(&d, &v[i], 8);
            d = d * scale + offset;
            memcpy(&v[i], &d, 8);
        }
    } else if (s->kind == K_DOUBLE) {
        if (s->sign) {
            for (int64_t i = 0; i < n; i++) {
                double d = (double)((int64_t)(v[i] << l) >> l) * scale + offset;
                memcpy(&v[i], &d, 8);
            }
        } else if (s->len < 64) {
            for (int64_t i = 0; i < n; i++) {
                double d = (double)(int64_t)v[i] * scale + offset;
                memcpy(&v[i], &d, 8);
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                double d = (double)v[i] * scale + offset;
                memcpy(&v[i], &d, 8);
            }
        }
    } else if (s->kind == K_INT) {
        const uint64_t is = (uint64_t)s->iscale, io = (uint64_t)s->ioff;
        if (s->sign) {
            for (int64_t i = 0; i < n; i++)
                v[i] = (uint64_t)((int64_t)(v[i] << l) >> l) * is + io;
        } else if (is != 1 || io != 0) {
            for (int64_t i = 0; i < n; i++)
                v[i] = v[i] * is + io;
        }
    }
    /* K_UINT: the raw bits are the value */
}

/* the integer a multiplexer's physical value selects with (Python's int(): truncation) */
static inline int64_t mux_value(uint64_t bits, const sig_t *p, int *ok)
{
    if (p->kind == K_DOUBLE) {
        double v;
        memcpy(&v, &bits, 8);
        if (!(v > -9.2e18 && v < 9.2e18)) {       /* NaN, infinities: selects nothing */
            *ok = 0;
            return 0;
        }
        return (int64_t)v;
    }
    if (p->kind == K_UINT && bits > (uint64_t)INT64_MAX) {
        *ok = 0;
        return 0;
    }
    return (int64_t)bits;
}

#define CHUNK 1024
/* the longest message decoded: a J1939 transport-protocol message (SAE J1939-21: 255
 * packets of 7 bytes), reassembled by streamfat.messages; CAN FD frames have 64 */
#define MSG_MAX 1785

/* decode(words, offsets, offsets_first, values, rows, msg_length, sigs_i, sigs_f, mux_ids,
 *        out, valid)
 * words: for a message of up to 8 bytes, the rows' data as little-endian words (group()'s
 * words_out), else an empty buffer;
 * offsets: the data column's int32 offsets (offsets_first: the array's offset into them);
 * values: its bytes; rows: int64 row numbers (every one a frame of msg_length bytes);
 * sigs_i: int64[nsig, SIG_COLS]; sigs_f: float64[nsig, 2] (scale, offset);
 * mux_ids: int64[]; out: 8-byte[nsig, len(rows)]; valid: uint8[nsig, len(rows)], written
 * for the multiplexed signals only. Signals are in an order where a multiplexer comes
 * before the signals it selects. */
static PyObject *py_decode(PyObject *self, PyObject *args)
{
    PyObject *o[9];
    Py_ssize_t first, msg_len;
    if (!PyArg_ParseTuple(args, "OOnOOnOOOOO", &o[8], &o[0], &first, &o[1], &o[2], &msg_len,
                          &o[3], &o[4], &o[5], &o[6], &o[7]))
        return NULL;
    buf_t b[9];
    memset(b, 0, sizeof b);
    static const char *names[9] = {"offsets", "values", "rows", "sigs_i", "sigs_f",
                                   "mux_ids", "out", "valid", "words"};
    for (int i = 0; i < 9; i++)
        if (get_buf(o[i], &b[i], i == 6 || i == 7, names[i]) < 0) {
            rel(b, 9);
            return NULL;
        }
    const uint64_t *wordsin = b[8].v.buf;
    uint64_t *word = NULL;
    const int32_t *offs = b[0].v.buf;
    const uint8_t *vals = b[1].v.buf;
    const int64_t *rows = b[2].v.buf;
    const int64_t *si = b[3].v.buf;
    const double *sf = b[4].v.buf;
    const int64_t *mux = b[5].v.buf;
    uint64_t *out = b[6].v.buf;
    uint8_t *valid = b[7].v.buf;
    int64_t noffs = b[0].v.len / 4, nvals = b[1].v.len, n = b[2].v.len / 8;
    int64_t nsig = b[3].v.len / 8 / SIG_COLS, nmux = b[5].v.len / 8;
    const char *bad = NULL;
    if (b[4].v.len / 16 != nsig || b[6].v.len / 8 < nsig * n || b[7].v.len < nsig * n ||
        msg_len < 0 || msg_len > MSG_MAX || first < 0 || (msg_len <= 8 && b[8].v.len / 8 < n))
        bad = "buffer sizes do not match";
    sig_t *sig = bad ? NULL : PyMem_Calloc(nsig ? nsig : 1, sizeof *sig);
    if (!bad && !sig) {
        rel(b, 9);
        return PyErr_NoMemory();
    }
    for (int64_t k = 0; !bad && k < nsig; k++) {
        const int64_t *r = si + k * SIG_COLS;
        sig_t *s = &sig[k];
        s->start = (int)r[S_START];
        s->len = (int)r[S_LEN];
        s->be = (int)r[S_BE];
        s->sign = (int)r[S_SIGNED];
        s->flt = (int)r[S_FLOAT];
        s->kind = (int)r[S_KIND];
        s->parent = (int)r[S_PARENT];
        s->mux0 = r[S_MUX0];
        s->mux1 = r[S_MUX1];
        s->iscale = r[S_ISCALE];
        s->ioff = r[S_IOFF];
        s->scale = sf[2 * k];
        s->offset = sf[2 * k + 1];
        s->mask = s->len >= 64 ? ~0ull : (1ull << s->len) - 1;
        s->msb_lin = (s->start / 8) * 8 + (7 - s->start % 8);
        int lo_bit = s->be ? s->msb_lin : s->start;
        if (s->len < 1 || s->len > 64 || r[S_START] < 0 || lo_bit + s->len > 8 * msg_len ||
            (s->flt && s->flt != 32 && s->flt != 64) || s->parent >= k ||
            s->mux0 < 0 || s->mux1 < s->mux0 || s->mux1 > nmux || s->kind < 0 || s->kind > 2)
            bad = "a signal does not fit its message (or a bad signal table)";
    }
    for (int64_t i = 0; !bad && msg_len > 8 && i < n; i++) {
        int64_t r = rows[i];
        if (r < 0 || first + r + 1 >= noffs || offs[first + r] < 0 ||
            offs[first + r + 1] - offs[first + r] != msg_len ||
            offs[first + r + 1] > nvals)
            bad = "a row is not a frame of the message's length";
    }
    if (bad) {
        PyMem_Free(sig);
        rel(b, 9);
        PyErr_Format(PyExc_ValueError, "_dbc.decode: %s", bad);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    uint64_t bword[CHUNK];            /* ... and as a big-endian one */
    int any_be = 0;
    for (int64_t k = 0; k < nsig; k++)
        any_be |= sig[k].be;
    const int short_msg = msg_len <= 8;
    for (int64_t c0 = 0; c0 < n; c0 += CHUNK) {
        int64_t cn = n - c0 < CHUNK ? n - c0 : CHUNK;
        if (short_msg) {
            /* words past the message's length are zero: group() pads the data */
            word = (uint64_t *)wordsin + c0;
            if (any_be)
                for (int64_t i = 0; i < cn; i++)
                    bword[i] = bswap64(word[i]);
        }
        for (int64_t k = 0; k < nsig; k++) {
            const sig_t *s = &sig[k];
            uint64_t *o_ = out + k * n + c0;
            uint8_t *v_ = valid + k * n + c0;
            if (short_msg) {
                /* two tight loops (vectorisable): the bits, then the physical value */
                const uint64_t *w = s->be ? bword : word;
                int sh = s->be ? 64 - (s->msb_lin + s->len) : s->start;
                uint64_t mask = s->mask;
                for (int64_t i = 0; i < cn; i++)
                    o_[i] = (w[i] >> sh) & mask;
                convert(o_, cn, s);
            } else {
                /* in place: every row was checked to hold msg_len bytes, and the
                 * signal's bytes to lie within them */
                for (int64_t i = 0; i < cn; i++)
                    o_[i] = raw_any(vals + offs[first + rows[c0 + i]], s);
                convert(o_, cn, s);
            }
            if (s->parent >= 0) {
                /* valid is written for multiplexed signals only (the others are valid) */
                const sig_t *p = &sig[s->parent];
                const uint64_t *po = out + (int64_t)s->parent * n + c0;
                const uint8_t *pv = p->parent >= 0 ? valid + (int64_t)s->parent * n + c0 : NULL;
                for (int64_t i = 0; i < cn; i++) {
                    int ok = pv ? pv[i] : 1;
                    int64_t mv = ok ? mux_value(po[i], p, &ok) : 0;
                    int sel = 0;
                    for (int64_t j = s->mux0; ok && j < s->mux1; j++)
                        if (mux[j] == mv) {
                            sel = 1;
                            break;
                        }
                    v_[i] = (uint8_t)sel;
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(sig);
    rel(b, 9);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"group", py_group, METH_VARARGS, "group frames by DBC message (see _dbc.c)"},
    {"decode", py_decode, METH_VARARGS, "decode one message's signals (see _dbc.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "streamfat._dbc",
    .m_doc = "DBC decoding loops of streamfat.dbc",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__dbc(void)
{
    return PyModule_Create(&module);
}
