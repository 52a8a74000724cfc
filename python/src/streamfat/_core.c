/* streamfat._core: the C side of the Python package (docs/PYTHON.md).
 *
 * Two types over the library of this repository, built into the extension (python/setup.py):
 *   Volume   a FAT/exFAT volume on an image file or a block device, mounted read-only
 *            (sf_filebd, sf_probe, sf_mount with SF_VOL_RDONLY); listdir, stat, open
 *   VFile    a file of a Volume: readinto, seek (sf_read, sf_seek)
 *   Decoder  the damage-tolerant log decoder (include/streamfat/decode.h) that decodes
 *            whole chunks of a file into column buffers (C arrays) with the GIL released:
 *            whole accepted blocks at a time (sf_dec_next_block), their CAN frames in runs
 *            (sf_rec_can_cols); take() hands the CAN columns to Python without a copy (Buf:
 *            the malloc'ed array itself, buffer protocol), which pyarrow wraps as Arrow
 *            buffers without a Python object per record. Decoder(batch=False) takes every
 *            record through sf_dec_next instead: the reference the tests hold it to.
 * Memory: the decoder's columns grow with the chunk fed in (a chunk of B bytes makes at most
 * B / 24 records) and are emptied by take(), so a reader that takes after every chunk uses
 * memory in proportion to the chunk, not to the file. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/bdev.h"
#include "streamfat/filebd.h"
#include "streamfat/vol.h"
#include "streamfat/rec.h"
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/cipher_sodium.h"

static PyObject *NotAVolumeError;   /* set from streamfat/__init__.py's classes */

/* ---- growable byte arrays ------------------------------------------------------------- */

struct gbuf {
    uint8_t *p;
    size_t n, cap;
};

static int gbuf_reserve(struct gbuf *b, size_t more)
{
    size_t want = b->n + more, cap = b->cap ? b->cap : 4096;
    uint8_t *p;

    if (want <= b->cap)
        return 0;
    while (cap < want)
        cap *= 2;
    p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int gbuf_put(struct gbuf *b, const void *src, size_t n)
{
    if (gbuf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static void gbuf_free(struct gbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* The contents as a bytes object; the array is emptied (its memory kept). */
static PyObject *gbuf_take(struct gbuf *b)
{
    PyObject *o = PyBytes_FromStringAndSize((const char *)b->p, (Py_ssize_t)b->n);
    b->n = 0;
    return o;
}

/* ---- Buf: a malloc'ed array handed to Python without a copy -------------------------- */

/* Read-only buffer protocol over memory it owns (freed with it): pa.py_buffer and
 * np.frombuffer wrap it as it is, so a column decoded in C reaches Arrow without a copy. */
typedef struct {
    PyObject_HEAD
    void *p;
    Py_ssize_t n;
} BufObject;

static int Buf_getbuffer(BufObject *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p, self->n, 1, flags);
}

static void Buf_dealloc(BufObject *self)
{
    free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs Buf_as_buffer = {
    .bf_getbuffer = (getbufferproc)Buf_getbuffer,
};

static Py_ssize_t Buf_len(BufObject *self)
{
    return self->n;
}

static PySequenceMethods Buf_as_sequence = {
    .sq_length = (lenfunc)Buf_len,
};

static PyTypeObject BufType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamfat._core.Buf",
    .tp_basicsize = sizeof(BufObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a column buffer decoded in C (buffer protocol, read-only)",
    .tp_dealloc = (destructor)Buf_dealloc,
    .tp_as_buffer = &Buf_as_buffer,
    .tp_as_sequence = &Buf_as_sequence,
};

/* A Buf owning p (n bytes in use), or NULL (p freed) on failure. */
static PyObject *buf_own(void *p, size_t n)
{
    BufObject *o = PyObject_New(BufObject, &BufType);

    if (!o) {
        free(p);
        return NULL;
    }
    o->p = p;
    o->n = (Py_ssize_t)n;
    return (PyObject *)o;
}

/* The contents as a Buf, without a copy (its memory trimmed to n and handed over; the array
 * starts again empty); an empty array gives an empty bytes object. */
static PyObject *gbuf_take_buf(struct gbuf *b)
{
    uint8_t *p = b->p, *q;
    size_t n = b->n;

    if (!n) {
        b->n = 0;
        return PyBytes_FromStringAndSize("", 0);
    }
    q = n < b->cap ? realloc(p, n) : p;
    memset(b, 0, sizeof *b);
    return buf_own(q ? q : p, n);
}

/* ---- Volume --------------------------------------------------------------------------- */

#define VOL_CACHE (256u * 1024u)

typedef struct {
    PyObject_HEAD
    struct sf_filebd fbd;
    struct sf_vol vol;
    void *cache;
    uint16_t *upcase;
    int have_fbd, mounted;
    long files;          /* VFiles open on it */
} VolumeObject;

typedef struct {
    PyObject_HEAD
    VolumeObject *vol;   /* a reference */
    struct sf_file f;
    int open;
} VFileObject;

static PyTypeObject VolumeType, VFileType;

static PyObject *sf_error(int err, const char *what)
{
    PyObject *exc = err == SF_ENOENT ? PyExc_FileNotFoundError
                    : err == SF_ENOTDIR ? PyExc_NotADirectoryError
                    : err == SF_EISDIR ? PyExc_IsADirectoryError : PyExc_OSError;
    PyErr_Format(exc, "%s: %s", what, sf_strerror(err));
    return NULL;
}

static void vol_release(VolumeObject *v)
{
    if (v->mounted)
        sf_unmount(&v->vol);
    v->mounted = 0;
    if (v->have_fbd)
        sf_filebd_close(&v->fbd);
    v->have_fbd = 0;
    free(v->cache);
    free(v->upcase);
    v->cache = NULL;
    v->upcase = NULL;
}

static int Volume_init(VolumeObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = { "path", "partition", NULL };
    PyObject *pathobj = NULL;
    unsigned int partition = 0;
    const char *path;
    struct sf_vol_cfg cfg;
    uint8_t type = SF_FS_NONE;
    uint32_t ss = 0;
    void *probe;
    int err;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|I", kwlist, PyUnicode_FSConverter, &pathobj,
                                     &partition))
        return -1;
    vol_release(self);
    path = PyBytes_AS_STRING(pathobj);
    err = sf_filebd_open(&self->fbd, path, SF_FILEBD_RDONLY, 0, 0);
    if (err) {
        sf_error(err, path);
        Py_DECREF(pathobj);
        return -1;
    }
    self->have_fbd = 1;
    probe = aligned_alloc(4096, 4096);
    if (!probe) {
        PyErr_NoMemory();
        goto fail;
    }
    err = sf_probe(&self->fbd.bd, partition, probe, &type, &ss);
    free(probe);
    if (err) {
        sf_error(err, path);
        goto fail;
    }
    if (type == SF_FS_NONE) {
        PyErr_Format(NotAVolumeError, "%s: not a FAT or exFAT volume%s", path,
                     partition ? " (in that partition)" : "");
        goto fail;
    }
    if (ss != self->fbd.bd.sector_size) {
        if (self->fbd.is_blockdev) {
            PyErr_Format(NotAVolumeError, "%s: the file system has %u-byte sectors, the "
                         "device %u-byte sectors", path, ss, self->fbd.bd.sector_size);
            goto fail;
        }
        err = sf_filebd_set_sector_size(&self->fbd, ss);
        if (err) {
            sf_error(err, path);
            goto fail;
        }
    }
    self->cache = aligned_alloc(4096, VOL_CACHE);
    self->upcase = malloc(SF_UPCASE_BUF_SIZE);
    if (!self->cache || !self->upcase) {
        PyErr_NoMemory();
        goto fail;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &self->fbd.bd;
    cfg.buf = self->cache;
    cfg.buf_size = VOL_CACHE;
    cfg.upcase_buf = self->upcase;
    cfg.flags = SF_VOL_RDONLY;
    cfg.partition = partition;
    err = sf_mount(&self->vol, &cfg);
    if (err) {
        const char *why = sf_mount_error(&self->vol);
        PyErr_Format(NotAVolumeError, "%s: cannot mount: %s%s%s", path, sf_strerror(err),
                     why && *why ? ": " : "", why ? why : "");
        goto fail;
    }
    self->mounted = 1;
    Py_DECREF(pathobj);
    return 0;

fail:
    Py_DECREF(pathobj);
    vol_release(self);
    return -1;
}

static void Volume_dealloc(VolumeObject *self)
{
    vol_release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int vol_check(VolumeObject *self)
{
    if (!self->mounted) {
        PyErr_SetString(PyExc_ValueError, "the volume is closed");
        return -1;
    }
    return 0;
}

static PyObject *stat_tuple(const struct sf_stat *st)
{
    return Py_BuildValue("(sKKIOLL)", st->name, (unsigned long long)st->size,
                         (unsigned long long)st->alloc_size, (unsigned)st->attr,
                         (st->attr & SF_ATTR_DIR) ? Py_True : Py_False, (long long)st->mtime,
                         (long long)st->ctime);
}

static PyObject *Volume_listdir(VolumeObject *self, PyObject *args)
{
    const char *path = "/";
    struct sf_dir d;
    struct sf_stat st;
    PyObject *list;
    int err;

    if (!PyArg_ParseTuple(args, "|s", &path) || vol_check(self))
        return NULL;
    err = sf_opendir(&self->vol, &d, path);
    if (err)
        return sf_error(err, path);
    list = PyList_New(0);
    if (!list)
        goto out;
    while ((err = sf_readdir(&d, &st)) == 1) {
        PyObject *t = stat_tuple(&st);
        if (!t || PyList_Append(list, t)) {
            Py_XDECREF(t);
            Py_CLEAR(list);
            goto out;
        }
        Py_DECREF(t);
    }
    if (err < 0) {
        Py_CLEAR(list);
        sf_error(err, path);
    }
out:
    sf_closedir(&d);
    return list;
}

static PyObject *Volume_stat(VolumeObject *self, PyObject *args)
{
    const char *path;
    struct sf_stat st;
    int err;

    if (!PyArg_ParseTuple(args, "s", &path) || vol_check(self))
        return NULL;
    err = sf_stat(&self->vol, path, &st);
    if (err)
        return sf_error(err, path);
    return stat_tuple(&st);
}

static PyObject *Volume_info(VolumeObject *self, PyObject *unused)
{
    struct sf_vol_info in;
    static const char *const fs[] = { "none", "exfat", "fat32", "fat16", "fat12" };
    int err;

    (void)unused;
    if (vol_check(self))
        return NULL;
    err = sf_vol_info(&self->vol, &in);
    if (err)
        return sf_error(err, "volume");
    return Py_BuildValue("{s:s,s:I,s:I,s:I,s:K,s:K,s:I,s:s,s:O}", "fs_type",
                         in.fs_type < 5 ? fs[in.fs_type] : "?", "sector_size", in.sector_size,
                         "cluster_size", in.cluster_size, "cluster_count", in.cluster_count,
                         "volume_offset", (unsigned long long)in.volume_offset, "volume_size",
                         (unsigned long long)in.volume_size, "serial", in.serial, "label",
                         in.label, "dirty", in.dirty ? Py_True : Py_False);
}

static PyObject *Volume_open(VolumeObject *self, PyObject *args)
{
    const char *path;
    VFileObject *f;
    int err;

    if (!PyArg_ParseTuple(args, "s", &path) || vol_check(self))
        return NULL;
    f = PyObject_New(VFileObject, &VFileType);
    if (!f)
        return NULL;
    f->open = 0;
    Py_INCREF(self);
    f->vol = self;
    err = sf_open(&self->vol, &f->f, path, SF_O_RDONLY);
    if (err) {
        Py_DECREF(f);
        return sf_error(err, path);
    }
    f->open = 1;
    self->files++;
    return (PyObject *)f;
}

static PyObject *Volume_close(VolumeObject *self, PyObject *unused)
{
    (void)unused;
    if (self->files) {
        PyErr_SetString(PyExc_ValueError, "files of the volume are still open");
        return NULL;
    }
    vol_release(self);
    Py_RETURN_NONE;
}

static PyMethodDef Volume_methods[] = {
    { "listdir", (PyCFunction)Volume_listdir, METH_VARARGS,
      "listdir(path='/') -> [(name, size, alloc_size, attr, is_dir, mtime_ms, ctime_ms)]" },
    { "stat", (PyCFunction)Volume_stat, METH_VARARGS, "stat(path) -> tuple as listdir" },
    { "info", (PyCFunction)Volume_info, METH_NOARGS, "the volume's geometry" },
    { "open", (PyCFunction)Volume_open, METH_VARARGS, "open(path) -> VFile (read-only)" },
    { "close", (PyCFunction)Volume_close, METH_NOARGS, "unmount and close the device" },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject VolumeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamfat._core.Volume",
    .tp_basicsize = sizeof(VolumeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Volume(path, partition=0): a FAT/exFAT volume, read-only",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Volume_init,
    .tp_dealloc = (destructor)Volume_dealloc,
    .tp_methods = Volume_methods,
};

/* ---- VFile ---------------------------------------------------------------------------- */

static void vfile_close(VFileObject *self)
{
    if (self->open) {
        sf_close(&self->f);
        self->open = 0;
        self->vol->files--;
    }
}

static void VFile_dealloc(VFileObject *self)
{
    vfile_close(self);
    Py_XDECREF(self->vol);
    PyObject_Del(self);
}

static PyObject *VFile_readinto(VFileObject *self, PyObject *args)
{
    Py_buffer b;
    sf_ssize_t n;

    if (!PyArg_ParseTuple(args, "w*", &b))
        return NULL;
    if (!self->open) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "the file is closed");
        return NULL;
    }
    n = sf_read(&self->f, b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    if (n < 0)
        return sf_error((int)n, "read");
    return PyLong_FromSsize_t((Py_ssize_t)n);
}

static PyObject *VFile_seek(VFileObject *self, PyObject *args)
{
    long long off;
    int whence = SF_SEEK_SET;
    int64_t r;

    if (!PyArg_ParseTuple(args, "L|i", &off, &whence))
        return NULL;
    if (!self->open) {
        PyErr_SetString(PyExc_ValueError, "the file is closed");
        return NULL;
    }
    r = sf_seek(&self->f, off, whence);
    if (r < 0)
        return sf_error((int)r, "seek");
    return PyLong_FromLongLong(r);
}

static PyObject *VFile_close(VFileObject *self, PyObject *unused)
{
    (void)unused;
    vfile_close(self);
    Py_RETURN_NONE;
}

static PyObject *VFile_size(VFileObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(self->f.size);
}

static PyMethodDef VFile_methods[] = {
    { "readinto", (PyCFunction)VFile_readinto, METH_VARARGS, "readinto(buffer) -> bytes read" },
    { "seek", (PyCFunction)VFile_seek, METH_VARARGS, "seek(offset, whence=0) -> position" },
    { "close", (PyCFunction)VFile_close, METH_NOARGS, "close" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef VFile_getset[] = {
    { "size", (getter)VFile_size, NULL, "file size in bytes", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject VFileType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamfat._core.VFile",
    .tp_basicsize = sizeof(VFileObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a file of a Volume (Volume.open)",
    .tp_dealloc = (destructor)VFile_dealloc,
    .tp_methods = VFile_methods,
    .tp_getset = VFile_getset,
};

/* ---- Decoder -------------------------------------------------------------------------- */

/* Damage, in the order of docs/FORMAT.md's reader table (as streamfat export counts it). */
enum { DMG_UNWRITTEN, DMG_INVALID, DMG_FOREIGN, DMG_MISPLACED, DMG_UNAUTHENTIC, DMG_MALFORMED,
       DMG_OUT_OF_SEQ, DMG_MISSING, DMG_DIRTY_TAIL, DMG_BAD_CAN, DMG_SHORT_BODY, DMG_BAD_TIME,
       DMG_TRUNCATED, DMG_NOT_LOG, DMG_N };
static const char *const dmg_name[DMG_N] = {
    "unwritten", "invalid", "foreign", "misplaced", "unauthentic", "malformed",
    "out-of-sequence", "missing",
    "dirty-tail", "bad-can", "short-body", "bad-time", "truncated", "not a log",
};

struct damage {
    int cat;                     /* DMG_* */
    int reason;                  /* enum sf_dec_reason, or 0 */
    int feature;                 /* not a log: 1 + the unknown required feature bit */
    int key;                     /* a sealed file refused: enum sf_dec_key (MISSING, ...) */
    uint8_t key_id[SF_CIPHER_KEY_ID];   /* and the key id it wants */
    uint64_t block, count, offset, length, blocks;   /* blocks: what the counter adds */
    uint64_t at_can, at_other;   /* records taken before it */
};

#define DEC_BUF SF_BLOCK_MAX

typedef struct {
    PyObject_HEAD
    struct sf_dec dec;
    uint8_t *buf;
    int finished, ended, nomem;
    int batch;                   /* whole blocks (sf_dec_next_block); else record by record */
    int have_header;
    struct sf_file_header hdr;
    uint64_t file_id;
    uint32_t block_size;
    /* CAN frames: ts i64, channel u8, id u32, len u8, flags u8, data (offsets i32 + bytes),
     * block: the block each came from, as runs (block u64, frames u64) */
    uint64_t ncan;
    struct gbuf c_ts, c_chan, c_id, c_len, c_flags, c_off, c_data, c_block;
    /* every other record: ts, type, channel, flags u32, body (offsets + bytes) */
    uint64_t nother;
    struct gbuf o_ts, o_type, o_chan, o_flags, o_off, o_data, o_pos, o_block;   /* pos: frames before it */
    struct gbuf dmg;             /* struct damage[] */
    /* docs/FORMAT.md, Channel names: a channel's name is fixed once it is named or used;
     * naming: u32 indices (among the batch's other records) of the CHANNEL records that
     * name their channel. */
    uint8_t chan_fixed[256];
    struct gbuf naming;
    int refused;                 /* 1 + an unknown required feature bit: nothing is read */
    int have_key;                /* Decoder(key=...): sealed files are opened */
    uint64_t counts[DMG_N];
    uint64_t total_can, total_other;
} DecoderObject;

static PyTypeObject DecoderType;

static void dec_free(DecoderObject *d)
{
    sf_dec_wipe_keys(&d->dec);
    struct gbuf *all[] = { &d->c_ts, &d->c_chan, &d->c_id, &d->c_len, &d->c_flags, &d->c_off,
                           &d->c_data, &d->c_block, &d->o_ts, &d->o_type, &d->o_chan,
                           &d->o_flags, &d->o_off, &d->o_data, &d->o_pos, &d->o_block, &d->dmg,
                           &d->naming };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gbuf_free(all[i]);
    free(d->buf);
    d->buf = NULL;
}

static int Decoder_init(DecoderObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = { "batch", "key", NULL };
    int32_t zero = 0;
    int batch = 1;
    Py_buffer key = { 0 };
    uint8_t pub[SF_CIPHER_KEY], sec[SF_CIPHER_KEY];
    int have = 0;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "|pz*", kwlist, &batch, &key))
        return -1;
    if (key.buf) {
        have = 1;
        /* the recipient's secret key (docs/FORMAT.md, "Sealed files"): 32 bytes */
        int ok = key.len == SF_CIPHER_KEY;
        if (ok)
            memcpy(sec, key.buf, SF_CIPHER_KEY);
        PyBuffer_Release(&key);
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "key: a secret key of 32 bytes");
            return -1;
        }
        if (!sf_sodium_port() || sf_sodium_public_of(sec, pub)) {
            sf_sodium_wipe(sec, sizeof sec);
            PyErr_SetString(PyExc_RuntimeError, "key: sealed logs need libsodium, which this "
                            "build of streamfat lacks (libsodium-dev)");
            return -1;
        }
    }
    dec_free(self);
    memset((char *)self + offsetof(DecoderObject, dec), 0,
           sizeof *self - offsetof(DecoderObject, dec));
    self->batch = batch;
    self->buf = malloc(DEC_BUF + SF_UNPACK_MEM);   /* + compressed blocks */
    if (!self->buf) {
        PyErr_NoMemory();
        return -1;
    }
    sf_dec_init(&self->dec, self->buf, DEC_BUF);
    sf_dec_set_unpack(&self->dec, self->buf + DEC_BUF, SF_UNPACK_MEM);
    if (have) {
        sf_dec_set_key(&self->dec, sf_sodium_port(), pub, sec);
        sf_sodium_wipe(sec, sizeof sec);
        self->have_key = 1;
    }
    if (gbuf_put(&self->c_off, &zero, 4) || gbuf_put(&self->o_off, &zero, 4)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void Decoder_dealloc(DecoderObject *self)
{
    dec_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int add_damage(DecoderObject *d, int cat, const struct sf_dec_event *ev, uint64_t blocks)
{
    struct damage g;

    memset(&g, 0, sizeof g);
    g.cat = cat;
    g.reason = ev ? ev->reason : 0;
    if (ev) {
        g.block = ev->block;
        g.count = ev->count;
        g.offset = ev->offset;
        g.length = ev->length;
        if (ev->kind == SF_DEC_GAP) {
            g.offset = ev->block * (uint64_t)ev->block_size;
            g.length = 0;
        }
    }
    g.blocks = blocks;
    g.at_can = d->ncan;
    g.at_other = d->nother;
    d->counts[cat] += blocks;
    return gbuf_put(&d->dmg, &g, sizeof g);
}

/* Room for `frames` more frames and `bytes` more data bytes in the CAN columns. */
static int can_reserve(DecoderObject *d, size_t frames, size_t bytes)
{
    return gbuf_reserve(&d->c_ts, frames * 8) || gbuf_reserve(&d->c_chan, frames) ||
           gbuf_reserve(&d->c_id, frames * 4) || gbuf_reserve(&d->c_len, frames) ||
           gbuf_reserve(&d->c_flags, frames) ||
           gbuf_reserve(&d->c_off, frames * 4) || gbuf_reserve(&d->c_data, bytes);
}

/* k more frames from block `block` (the block column, as runs) */
static int block_run(DecoderObject *d, uint64_t block, uint64_t k)
{
    uint64_t *r = (uint64_t *)(void *)d->c_block.p, pair[2] = { block, k };
    size_t m = d->c_block.n / 16;

    if (m && r[2 * m - 2] == block) {
        r[2 * m - 1] += k;
        return 0;
    }
    return gbuf_put(&d->c_block, pair, 16);
}

static int put_body(struct gbuf *off, struct gbuf *data, const void *p, size_t n)
{
    int32_t end;

    if (data->n + n > INT32_MAX)
        return -1;
    end = (int32_t)(data->n + n);
    return gbuf_put(data, p, n) || gbuf_put(off, &end, 4);
}

static int handle(DecoderObject *d, const struct sf_dec_event *ev)
{
    const struct sf_rec *r = &ev->rec;

    if (d->refused)
        return 0;                /* a file this reader cannot read: nothing of it is used */
    switch (ev->kind) {
    case SF_DEC_HEADER: {
        /* Sealed files (bit 33) are this reader's when it has libsodium; the key decides
         * (docs/FORMAT.md, "Sealed files"): without it, or with another, nothing is read
         * and the file is refused naming the key id it wants. */
        uint64_t known = sf_sodium_port() ? SF_FEATURE_ENCRYPTED : 0;
        int bit = sf_file_features_refused(ev->hdr.features & ~known);
        int ks = sf_dec_key(&d->dec, NULL, NULL);
        if (bit < 0 && (ev->hdr.features & SF_FEATURE_ENCRYPTED) && ks != SF_DEC_KEY_OK &&
            ks != SF_DEC_KEY_BAD && ks != SF_DEC_KEY_NONE) {
            d->refused = 1;
            if (add_damage(d, DMG_NOT_LOG, NULL, 1))
                return -1;
            struct damage *g = (struct damage *)(void *)(d->dmg.p + d->dmg.n) - 1;
            g->key = ks;
            sf_dec_key(&d->dec, g->key_id, NULL);
            return 0;
        }
        if (bit >= 0) {          /* docs/FORMAT.md, Versioning: refused as not a log */
            d->refused = bit + 1;
            if (add_damage(d, DMG_NOT_LOG, NULL, 1))
                return -1;
            ((struct damage *)(void *)(d->dmg.p + d->dmg.n))[-1].feature = bit + 1;
            return 0;
        }
        d->have_header = 1;
        d->hdr = ev->hdr;
        d->file_id = ev->file_id;
        d->block_size = ev->block_size;
        return 0;
    }
    case SF_DEC_RECORD:
        if (r->ts >> 63 && sf_rec_type_known(r->type))
            return add_damage(d, DMG_BAD_TIME, ev, 1);   /* FORMAT.md, Records */
        if (r->type == SF_REC_CAN) {
            struct sf_can c;
            uint64_t i = d->ncan;
            uint32_t dl;
            int32_t end;
            if (sf_rec_get_can(r, &c) != 0)    /* the reader's rules, in one place */
                return add_damage(d, DMG_BAD_CAN, ev, 1);
            d->chan_fixed[r->channel] = 1;
            dl = (c.flags & SF_CAN_RTR) ? 0 : c.len;
            /* room for this frame in every column (reserved ahead in decode(); this is
             * the fallback) */
            if ((i + 1) * 8 > d->c_ts.cap || d->c_data.n + dl > d->c_data.cap ||
                d->c_data.n + dl > INT32_MAX)
                if (can_reserve(d, 1024, 64 * 1024) || d->c_data.n + dl > INT32_MAX)
                    return -1;
            ((int64_t *)d->c_ts.p)[i] = (int64_t)r->ts;
            d->c_chan.p[i] = r->channel;
            memcpy(d->c_id.p + 4 * i, &c.id, 4);
            d->c_len.p[i] = c.len;
            d->c_flags.p[i] = (uint8_t)c.flags;
            if (block_run(d, ev->block, 1))
                return -1;
            memcpy(d->c_data.p + d->c_data.n, c.data, dl);
            d->c_data.n += dl;
            end = (int32_t)d->c_data.n;
            memcpy(d->c_off.p + 4 * (i + 1), &end, 4);
            d->c_ts.n += 8;
            d->c_chan.n++;
            d->c_id.n += 4;
            d->c_len.n++;
            d->c_flags.n++;
            d->c_off.n += 4;
            d->ncan++;
            d->total_can++;
        } else {
            int64_t ts = (int64_t)r->ts;
            if ((r->type == SF_REC_LATENCY && r->length < SF_LATENCY_BODY) ||
                (r->type == SF_REC_DROP && r->length < SF_DROP_BODY))
                return add_damage(d, DMG_SHORT_BODY, ev, 1);   /* FORMAT.md, Record types */
            if (r->type == SF_REC_CHANNEL && !d->chan_fixed[r->channel] &&
                sf_rec_name_ok(r->body, r->length)) {
                uint32_t at = (uint32_t)d->nother;
                d->chan_fixed[r->channel] = 1;
                if (gbuf_put(&d->naming, &at, 4))
                    return -1;
            } else if (r->type >= SF_REC_SAMPLE && r->type <= SF_REC_LATENCY) {
                d->chan_fixed[r->channel] = 1;
            }
            if (gbuf_put(&d->o_ts, &ts, 8) || gbuf_put(&d->o_type, &r->type, 1) ||
                gbuf_put(&d->o_chan, &r->channel, 1) || gbuf_put(&d->o_flags, &r->flags, 4) ||
                gbuf_put(&d->o_pos, &d->ncan, 8) || gbuf_put(&d->o_block, &ev->block, 8) ||
                put_body(&d->o_off, &d->o_data, r->body, r->length))
                return -1;
            d->nother++;
            d->total_other++;
        }
        return 0;
    case SF_DEC_DAMAGED:
        switch (ev->reason) {
        case SF_DEC_UNWRITTEN: return add_damage(d, DMG_UNWRITTEN, ev, ev->count);
        case SF_DEC_MISPLACED: return add_damage(d, DMG_MISPLACED, ev, ev->count);
        case SF_DEC_UNAUTHENTIC: return add_damage(d, DMG_UNAUTHENTIC, ev, ev->count);
        case SF_DEC_BAD_RECORD: return add_damage(d, DMG_MALFORMED, ev, ev->count);
        case SF_DEC_OUT_OF_SEQ: return add_damage(d, DMG_OUT_OF_SEQ, ev, ev->count);
        case SF_DEC_DIRTY_TAIL: return add_damage(d, DMG_DIRTY_TAIL, ev, 1);
        case SF_DEC_TRUNCATED: return add_damage(d, DMG_TRUNCATED, ev, 1);
        case SF_DEC_NO_BLOCK: return add_damage(d, DMG_NOT_LOG, ev, 1);
        default: return add_damage(d, DMG_INVALID, ev, ev->count);
        }
    case SF_DEC_GAP:
        return add_damage(d, DMG_MISSING, ev, ev->seq - ev->seq_expected);
    case SF_DEC_FOREIGN:
        return add_damage(d, DMG_FOREIGN, ev, ev->count);
    default:
        return 0;
    }
}

/* A whole accepted block (sf_dec_next_block): runs of CAN frames straight into the columns
 * (sf_rec_can_cols: no event, no call per frame), every other record through handle() as a
 * RECORD event, exactly as sf_dec_next would have delivered it. */
static int do_block(DecoderObject *d, const struct sf_dec_block *b)
{
    uint32_t off = b->off, used = b->bi.used;
    struct sf_dec_event ev;

    if (d->refused)
        return 0;
    /* every CAN record takes 24 bytes or more, its data at most its own size */
    if (can_reserve(d, used / 24 + 1, (size_t)used + 64))
        return -1;
    while (off < used) {
        struct sf_can_cols c;
        size_t cap = d->c_ts.cap / 8, k, i0 = d->ncan;
        if (d->c_chan.cap < cap) cap = d->c_chan.cap;
        if (d->c_id.cap / 4 < cap) cap = d->c_id.cap / 4;
        if (d->c_len.cap < cap) cap = d->c_len.cap;
        if (d->c_flags.cap < cap) cap = d->c_flags.cap;
        if (d->c_off.cap / 4 - 1 < cap) cap = d->c_off.cap / 4 - 1;
        c.ts = (uint64_t *)(void *)d->c_ts.p;
        c.channel = d->c_chan.p;
        c.id = (uint32_t *)(void *)d->c_id.p;
        c.len = d->c_len.p;
        c.flags = d->c_flags.p;
        c.data_end = (uint32_t *)(void *)d->c_off.p + 1;    /* offsets[i + 1]: frame i's end */
        c.data = d->c_data.p;
        c.n = i0;
        c.cap = cap;
        c.data_n = d->c_data.n;
        c.data_cap = d->c_data.cap < INT32_MAX ? d->c_data.cap : INT32_MAX;
        k = sf_rec_can_cols(b->p, &b->bi, &off, &c);
        if (k) {
            if (block_run(d, b->block, k))
                return -1;
            d->c_ts.n += 8 * k;
            d->c_chan.n += k;
            d->c_id.n += 4 * k;
            d->c_len.n += k;
            d->c_flags.n += k;
            d->c_off.n += 4 * k;
            d->c_data.n = c.data_n;
            for (size_t i = i0; i < i0 + k; i++)
                d->chan_fixed[d->c_chan.p[i]] = 1;
            d->ncan += k;
            d->total_can += k;
        }
        if (off >= used)
            break;
        /* a record the run does not take (another type, a bad CAN body, or full columns) */
        memset(&ev, 0, sizeof ev);
        ev.block = b->block;
        ev.block_size = b->bi.block_size;
        ev.bi = &b->bi;
        if (sf_rec_next(b->p, &b->bi, &off, &ev.rec) != 1) {
            /* cannot happen after the decoder's layout check; as sf_dec_next reports it */
            ev.kind = SF_DEC_DAMAGED;
            ev.reason = SF_DEC_BAD_RECORD;
            ev.count = 1;
            ev.offset = b->block * b->bi.block_size;
            ev.length = b->bi.block_size;
            return handle(d, &ev);
        }
        ev.kind = SF_DEC_RECORD;
        if (handle(d, &ev))
            return -1;
    }
    return 0;
}

/* decode(chunk, final=False): every byte of chunk goes through the decoder (the file's next
 * bytes, in order); final: the file ends after it. Returns True once the decoder has ended. */
static PyObject *Decoder_decode(DecoderObject *self, PyObject *args)
{
    Py_buffer b;
    int final = 0, k = 0, failed = 0;
    size_t off = 0;

    if (!PyArg_ParseTuple(args, "y*|p", &b, &final))
        return NULL;
    if (!self->buf) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "decoder not initialised");
        return NULL;
    }
    if (self->ended && b.len) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "the decoder has ended");
        return NULL;
    }
    /* every CAN record takes 24 bytes of the file or more, and the decoder may hold up to
     * DEC_BUF bytes from earlier chunks */
    if (can_reserve(self, ((size_t)b.len + DEC_BUF) / 24 + 16, (size_t)b.len + DEC_BUF)) {
        PyBuffer_Release(&b);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    struct sf_dec_event ev;
    struct sf_dec_block blk;
    const uint8_t *p = b.buf;
    size_t n = (size_t)b.len;
    while (!self->ended) {
        for (;;) {
            if (self->batch && sf_dec_next_block(&self->dec, &blk) == 1) {   /* batch path */
                if (do_block(self, &blk)) {
                    failed = 1;
                    break;
                }
                continue;
            }
            k = sf_dec_next(&self->dec, &ev);
            if (k == SF_DEC_NEED_DATA || k == SF_DEC_END)
                break;
            if (handle(self, &ev)) {
                failed = 1;
                break;
            }
        }
        if (failed)
            break;
        if (k == SF_DEC_END) {
            self->ended = 1;
            break;
        }
        if (off < n)
            off += sf_dec_feed(&self->dec, p + off, n - off);
        else if (final && !self->finished) {
            sf_dec_finish(&self->dec);
            self->finished = 1;
        } else
            break;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (failed)
        return PyErr_NoMemory();
    return PyBool_FromLong(self->ended);
}

/* The seven flag columns as Arrow bitmaps (LSB first), one after the other, each
 * (n + 7) / 8 bytes: ext (EFF), rtr, fd, brs, esi, err, tx (bit 6: the logger sent it). */
#define NFLAGCOLS 7
static PyObject *flag_bitmaps(const uint8_t *fl, size_t n)
{
    static const uint8_t bit[NFLAGCOLS] = { SF_CAN_EFF, SF_CAN_RTR, SF_CAN_FD, SF_CAN_BRS,
                                            SF_CAN_ESI, SF_CAN_ERR, SF_CAN_TX };
    size_t nb = (n + 7) / 8, full = n / 8;
    uint8_t *p = malloc(nb ? NFLAGCOLS * nb : 1);
    int shift[NFLAGCOLS];

    if (!p)
        return PyErr_NoMemory();
    for (int k = 0; k < NFLAGCOLS; k++)
        shift[k] = __builtin_ctz(bit[k]);
    /* eight frames at a time: bit k of each of 8 flag bytes gathered into one byte by a
     * multiply (byte j's bit lands on bit 56 + j, no two terms overlap, so no carries) */
    for (size_t j = 0; j < full; j++) {
        uint64_t v;
        memcpy(&v, fl + 8 * j, 8);
        for (int k = 0; k < NFLAGCOLS; k++)
            p[k * nb + j] = (uint8_t)((((v >> shift[k]) & 0x0101010101010101ull) *
                                       0x0102040810204080ull >> 56));
    }
    if (full < nb)
        for (int k = 0; k < NFLAGCOLS; k++) {
            uint8_t m = 0;
            for (size_t i = 8 * full; i < n; i++)
                m |= (uint8_t)(((fl[i] & bit[k]) != 0) << (i & 7));
            p[k * nb + full] = m;
        }
    return buf_own(p, NFLAGCOLS * nb);
}

/* The channel column as Arrow dictionary indices: int32 indices into the sorted list of
 * the channel numbers used (returned as bytes in *used). */
static PyObject *chan_indices(const uint8_t *ch, size_t n, PyObject **used)
{
    uint8_t seen[256] = { 0 }, list[256];
    int32_t lut[256], *out;
    int m = 0;

    for (size_t i = 0; i < n; i++)
        seen[ch[i]] = 1;
    for (int c = 0; c < 256; c++)
        if (seen[c]) {
            lut[c] = m;
            list[m++] = (uint8_t)c;
        }
    out = malloc(n ? 4 * n : 1);
    if (!out)
        return PyErr_NoMemory();
    for (size_t i = 0; i < n; i++)
        out[i] = lut[ch[i]];
    *used = PyBytes_FromStringAndSize((const char *)list, m);
    if (!*used) {
        free(out);
        return NULL;
    }
    return buf_own(out, 4 * n);
}

/* take() -> dict of the columns decoded since the last take (the CAN columns as Bufs, handed
 * over without a copy; the rest as bytes objects), then empty. */
static PyObject *Decoder_take(DecoderObject *self, PyObject *unused)
{
    PyObject *r, *dl, *bits, *cidx, *cused = NULL;
    size_t nd = self->dmg.n / sizeof(struct damage);
    const struct damage *g = (const struct damage *)self->dmg.p;
    int32_t zero = 0;

    (void)unused;
    dl = PyList_New((Py_ssize_t)nd);
    if (!dl)
        return NULL;
    for (size_t i = 0; i < nd; i++) {
        char why[120], id[17];
        if (g[i].feature)
            snprintf(why, sizeof why, "requires feature bit %d, unknown to this reader",
                     g[i].feature - 1);
        if (g[i].key) {
            sf_cipher_key_id_hex(g[i].key_id, id);
            snprintf(why, sizeof why, g[i].key == SF_DEC_KEY_MISSING ?
                     "sealed to key id %s: give its secret key (key=)" :
                     g[i].key == SF_DEC_KEY_OTHER ? "sealed to key id %s, not to the key given" :
                     "sealed (key id %s) with an AEAD this reader cannot open", id);
        }
        PyObject *t = Py_BuildValue("(ssKKKKKKK)", dmg_name[g[i].cat],
                                    g[i].feature || g[i].key ? why :
                                    g[i].reason ? sf_dec_reason_str(g[i].reason) : "",
                                    (unsigned long long)g[i].block,
                                    (unsigned long long)g[i].count,
                                    (unsigned long long)g[i].offset,
                                    (unsigned long long)g[i].length,
                                    (unsigned long long)g[i].blocks,
                                    (unsigned long long)g[i].at_can,
                                    (unsigned long long)g[i].at_other);
        if (!t) {
            Py_DECREF(dl);
            return NULL;
        }
        PyList_SET_ITEM(dl, (Py_ssize_t)i, t);
    }
    self->dmg.n = 0;
    bits = flag_bitmaps(self->c_flags.p, self->ncan);
    if (!bits) {
        Py_DECREF(dl);
        return NULL;
    }
    cidx = chan_indices(self->c_chan.p, self->ncan, &cused);
    if (!cidx) {
        Py_DECREF(dl);
        Py_DECREF(bits);
        return NULL;
    }
    r = Py_BuildValue("{s:N,s:K," "s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N," "s:K," "s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
                      "can_bits", bits, "ncan", (unsigned long long)self->ncan,
                      "can_chan_idx", cidx, "can_chan_used", cused,
                      "can_ts", gbuf_take_buf(&self->c_ts),
                      "can_channel", gbuf_take_buf(&self->c_chan),
                      "can_id", gbuf_take_buf(&self->c_id), "can_len", gbuf_take_buf(&self->c_len),
                      "can_flags", gbuf_take_buf(&self->c_flags),
                      "can_offsets", gbuf_take_buf(&self->c_off), "can_data",
                      gbuf_take_buf(&self->c_data), "can_block_runs", gbuf_take(&self->c_block),
                      "nother", (unsigned long long)self->nother,
                      "ts", gbuf_take(&self->o_ts), "type", gbuf_take(&self->o_type),
                      "channel", gbuf_take(&self->o_chan), "flags", gbuf_take(&self->o_flags),
                      "offsets", gbuf_take(&self->o_off), "data", gbuf_take(&self->o_data), "pos", gbuf_take(&self->o_pos), "block", gbuf_take(&self->o_block),
                      "damage", dl, "naming", gbuf_take(&self->naming));
    self->ncan = self->nother = 0;
    if (gbuf_put(&self->c_off, &zero, 4) || gbuf_put(&self->o_off, &zero, 4)) {
        Py_XDECREF(r);
        return PyErr_NoMemory();
    }
    return r;
}

static PyObject *Decoder_header(DecoderObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->have_header)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:K,s:I,s:I,s:K,s:K,s:I,s:K}", "start_ts",
                         (unsigned long long)self->hdr.start_ts, "clock", self->hdr.clock,
                         "file_index", self->hdr.file_index, "session_id",
                         (unsigned long long)self->hdr.session_id, "file_id",
                         (unsigned long long)self->file_id, "block_size", self->block_size,
                         "features", (unsigned long long)self->hdr.features);
}

static PyObject *Decoder_stats(DecoderObject *self, PyObject *unused)
{
    const struct sf_dec_stats *s = sf_dec_stats(&self->dec);
    PyObject *c = PyDict_New();

    (void)unused;
    if (!c)
        return NULL;
    for (int i = 0; i < DMG_N; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(self->counts[i]);
        if (!v || PyDict_SetItemString(c, dmg_name[i], v)) {
            Py_XDECREF(v);
            Py_DECREF(c);
            return NULL;
        }
        Py_DECREF(v);
    }
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:N}", "bytes",
                         (unsigned long long)s->bytes, "blocks_ok",
                         (unsigned long long)s->blocks_ok, "blocks_damaged",
                         (unsigned long long)s->blocks_damaged, "blocks_foreign",
                         (unsigned long long)s->blocks_foreign, "frames",
                         (unsigned long long)self->total_can, "other_records",
                         (unsigned long long)self->total_other, "damage", c);
}

/* skip(offset) -> bool: the next bytes are the file's from offset on (sf_dec_skip); False
 * when the decoder cannot (block size not known yet, bytes pending). */
static PyObject *Decoder_skip(DecoderObject *self, PyObject *args)
{
    unsigned long long off;

    if (!PyArg_ParseTuple(args, "K", &off))
        return NULL;
    return PyBool_FromLong(sf_dec_skip(&self->dec, (uint64_t)off) == 0);
}

static PyMethodDef Decoder_methods[] = {
    { "decode", (PyCFunction)Decoder_decode, METH_VARARGS,
      "decode(chunk, final=False) -> ended: decode the file's next bytes into the columns" },
    { "take", (PyCFunction)Decoder_take, METH_NOARGS,
      "take() -> dict of column buffers (bytes) and damage events since the last take" },
    { "header", (PyCFunction)Decoder_header, METH_NOARGS, "the file header, or None" },
    { "stats", (PyCFunction)Decoder_stats, METH_NOARGS, "counters and damage counts" },
    { "skip", (PyCFunction)Decoder_skip, METH_VARARGS,
      "skip(offset) -> bool: the next bytes are the file's from offset on" },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamfat._core.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Decoder(batch=True): one log file's bytes in, column buffers out (batch=False:\n"
              "record by record through sf_dec_next, the reference for the batch path)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Decoder_init,
    .tp_dealloc = (destructor)Decoder_dealloc,
    .tp_methods = Decoder_methods,
};

/* ---- module --------------------------------------------------------------------------- */

static PyObject *set_errors(PyObject *mod, PyObject *args)
{
    PyObject *nav;

    (void)mod;
    if (!PyArg_ParseTuple(args, "O", &nav))
        return NULL;
    Py_INCREF(nav);
    Py_XSETREF(NotAVolumeError, nav);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    { "_set_errors", set_errors, METH_VARARGS, "the exception class for non-volumes" },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "streamfat._core", "the C side of streamfat", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m;

    if (PyType_Ready(&VolumeType) < 0 || PyType_Ready(&VFileType) < 0 ||
        PyType_Ready(&DecoderType) < 0 || PyType_Ready(&BufType) < 0)
        return NULL;
    m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    NotAVolumeError = PyExc_OSError;
    Py_INCREF(NotAVolumeError);
    Py_INCREF(&VolumeType);
    Py_INCREF(&VFileType);
    Py_INCREF(&DecoderType);
    if (PyModule_AddObject(m, "Volume", (PyObject *)&VolumeType) ||
        PyModule_AddObject(m, "VFile", (PyObject *)&VFileType) ||
        PyModule_AddObject(m, "Decoder", (PyObject *)&DecoderType) ||
        PyModule_AddStringConstant(m, "LIB_VERSION", SF_VERSION_STRING)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
