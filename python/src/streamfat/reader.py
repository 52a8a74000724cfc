"""Reading log files: typed records (read_log) and Arrow tables (read_arrow, iter_batches).

The C decoder (streamfat._core.Decoder, over src/log/decode.c) turns each chunk of a file
into column buffers (whole blocks at a time: sf_dec_next_block and sf_rec_can_cols); here
they become Arrow arrays with pyarrow.Array.from_buffers (no copy: the CAN columns are
memory the C side hands over; no Python object per frame). Damage follows docs/FORMAT.md's reader rules: blocks
the rules skip are never delivered; errors="raise" stops at the first damage with a
FormatError, errors="skip" goes on and reports it (damage_summary)."""
import heapq
import json
import os
import stat
from typing import NamedTuple, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core
from .errors import (FormatError, NotALogError, NotAVolumeError, SealedLogError,
                     SourceNotFoundError)
from .volume import Volume, VolumeFile

CHUNK = 4 << 20               # bytes of a file decoded per batch
CLOCKS = {0: "realtime", 1: "monotonic", 2: "hardware"}
KINDS = ("frames", "drop", "latency", "sample", "text", "annotation", "meta", "channel")
REC_CAN, REC_SAMPLE, REC_TEXT, REC_LATENCY, REC_DROP, REC_ANNOTATION = 1, 2, 3, 4, 5, 6
REC_CHANNEL, REC_META = 0x10, 0x11
TS_UTC = pa.timestamp("ns", tz="UTC")
CHANNEL_TYPE = pa.dictionary(pa.int32(), pa.string())

FRAME_SCHEMA = pa.schema([
    ("ts", TS_UTC), ("channel", CHANNEL_TYPE), ("id", pa.uint32()),
    ("ext", pa.bool_()), ("rtr", pa.bool_()), ("fd", pa.bool_()), ("brs", pa.bool_()),
    ("esi", pa.bool_()), ("err", pa.bool_()), ("dlc", pa.uint8()), ("data", pa.binary()),
    ("tx", pa.bool_()),
])
# the C-made bitmaps' order (_core.c flag_bitmaps); tx (bit 6: the logger sent the frame,
# docs/FORMAT.md) comes last, after dlc and data, so the older columns keep their places
_FLAG_BITS = (("ext", 0x01), ("rtr", 0x02), ("fd", 0x08), ("brs", 0x10), ("esi", 0x20),
              ("err", 0x04))
_TX_BIT = 0x40


# ---- typed records (read_log) ------------------------------------------------------------

class Header(NamedTuple):
    file: str
    start_ts: Optional[int]      # None: the writer had no wall clock (docs/FORMAT.md)
    clock: str
    file_index: int
    session_id: int
    file_id: int
    block_size: int


class Frame(NamedTuple):
    ts: int
    channel: str
    id: int
    ext: bool
    rtr: bool
    fd: bool
    brs: bool
    esi: bool
    err: bool
    dlc: int
    data: bytes
    tx: bool = False        # the logger sent it (CAN flag bit 6, `log --send`)


class Sample(NamedTuple):
    ts: int
    channel: str
    flags: int
    data: bytes


class Text(NamedTuple):
    ts: int
    channel: str
    text: str


class Latency(NamedTuple):
    ts: int
    channel: str
    latency_ns: int
    period_ns: int


class Drop(NamedTuple):
    ts: int
    count: int
    first_ts: int
    last_ts: int


class Annotation(NamedTuple):
    ts: int
    text: str


class Channel(NamedTuple):
    ts: int
    channel: int
    name: str


class Meta(NamedTuple):
    ts: int
    key: str
    value: str


class Damage(NamedTuple):
    """errors="skip": what the reader rules skipped (kind: the reader table's word)."""
    file: str
    kind: str
    reason: str
    block: int
    offset: int
    blocks: int


# ---- sources -----------------------------------------------------------------------------

def _is_stream(x):
    return hasattr(x, "readinto") or hasattr(x, "read")


def _sfl_files_in_dir(path):
    out = []
    for dirpath, dirs, files in os.walk(path):
        dirs.sort()
        out += [os.path.join(dirpath, f) for f in files if f.lower().endswith(".sfl")]
    return sorted(out)


def _iter_files(source, strict=False):
    """(name, binary stream) for every log file of source: a path (.SFL file, directory,
    image or block device: every .SFL file of its volume), a stream, a VolumeFile, or a
    list of those. Streams opened here are closed after use. strict: a file that is
    neither (no .SFL name, no block magic, no volume) raises NotAVolumeError instead of
    being read as a log whose first block is damaged."""
    if isinstance(source, (list, tuple)):
        for s in source:
            yield from _iter_files(s, strict)
        return
    if _is_stream(source):
        yield getattr(source, "name", "<stream>"), source
        return
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SourceNotFoundError(path) from None
    if stat.S_ISDIR(st.st_mode):
        for f in _sfl_files_in_dir(path):
            with open(f, "rb", buffering=0) as fh:
                yield f, fh
        return
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb", buffering=0) as fh:
            head = fh.read(4)
        # an empty file is a log never written (docs/FORMAT.md): no records, no damage
        if path.lower().endswith(".sfl") or head == b"SFLB" or not st.st_size:
            with open(path, "rb", buffering=0) as fh:
                yield path, fh
            return
    try:
        vol = Volume(path)
    except NotAVolumeError:
        if strict or not stat.S_ISREG(st.st_mode):
            raise
        # a log whose block 0 is damaged? Read as one; if no block is valid, the error
        # says it is neither a log nor a volume
        with open(path, "rb", buffering=0) as fh:
            yield path, _NeitherFile(fh)
        return
    with vol:
        for p in vol.log_files():
            with vol.open(p) as f:
                yield f.name, f


class _NeitherFile:
    """A file that is no volume, read as a log: its not-a-log error says both."""
    neither = True

    def __init__(self, f):
        self.f = f
        self.name = f.name

    def readinto(self, b):
        return self.f.readinto(b)


def list_sources(source):
    """The names of the log files read_arrow(source) would read."""
    return [name for name, _f in _iter_files(source)]


# ---- decoding ----------------------------------------------------------------------------

class _FileState:
    def __init__(self, name):
        self.name = name
        self.header = None
        self.names = {}              # channel number -> name
        self.meta = {}
        self.stats = None
        self.damage = []             # Damage records
        self.size = 0                # bytes read so far
        self.neither = False         # a file that is no volume either (_NeitherFile)


def secret_key(key):
    """key= of the readers (sealed logs, docs/FORMAT.md "Sealed files"): the recipient's
    secret key as 32 bytes, or the path of its key file (NAME.key from `streamfat keygen`:
    one line, 'streamfat-secret-key' and 64 hex digits); None: no key."""
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray, memoryview)):
        if len(key) != 32:
            raise ValueError("key: a secret key of 32 bytes, or the path of a key file")
        return bytes(key)
    path = os.fspath(key)
    with open(path, encoding="ascii", errors="replace") as fh:
        words = fh.readline().split()
    if len(words) != 2 or words[0] != "streamfat-secret-key" or len(words[1]) != 64:
        what = "a public key file" if words[:1] == ["streamfat-public-key"] else \
            "not a streamfat secret key file"
        raise ValueError(f"{path}: {what} (the secret key NAME.key of streamfat keygen opens "
                         "sealed logs)")
    return bytes.fromhex(words[1])


def _decode_file(name, f, chunk=CHUNK, key=None):
    """Yield (state, batch) per chunk of one file; state.stats is set after the last.
    key: a sealed log's secret key (32 bytes, secret_key())."""
    st = _FileState(name)
    st.neither = getattr(f, "neither", False)
    dec = _core.Decoder(key=key)
    buf = bytearray(chunk)
    mv = memoryview(buf)
    ended = False
    while not ended:
        jump = getattr(f, "jump", None)
        if jump is not None:          # a range of the file (spark._Range): blocks keep
            f.jump = None             # their numbers, or the gap comes as zeros
            if not dec.skip(jump):
                f.zero_gap()
        if hasattr(f, "readinto"):
            n = f.readinto(mv)
            piece = mv[:n] if n else b""
        else:
            piece = f.read(chunk) or b""
            n = len(piece)
        st.size += n or 0
        ended = dec.decode(piece, not n)
        b = dec.take()
        if st.header is None and dec.header() is not None:
            h = dec.header()
            # start_ts 0: the writer had no wall clock (docs/FORMAT.md): None
            st.header = Header(name, h["start_ts"] or None,
                               CLOCKS.get(h["clock"], str(h["clock"])),
                               h["file_index"], h["session_id"], h["file_id"], h["block_size"])
        bs = st.header.block_size if st.header else 0
        for cat, reason, block, count, offset, length, blocks, at_can, at_other in b["damage"]:
            if cat in ("bad-can", "short-body", "bad-time") and bs:
                offset = block * bs
            st.damage.append(Damage(name, cat, reason, block, offset, blocks))
        _names_and_meta(st, b)
        yield st, b
    st.stats = dec.stats()


def _others(b):
    """Columns of the non-CAN records of a batch as numpy arrays."""
    m = b["nother"]
    return (m, np.frombuffer(b["type"], np.uint8), np.frombuffer(b["offsets"], np.int32))


def _body(b, i, offs):
    return b["data"][offs[i]:offs[i + 1]]


def _names_and_meta(st, b):
    m, types, offs = _others(b)
    if not m:
        return
    # docs/FORMAT.md, Channel names: the decoder picks the CHANNEL records that name their
    # channel (the first usable name, before any use); the rest change nothing.
    for i in np.frombuffer(b["naming"], np.uint32).tolist():
        st.names[int(b["channel"][i])] = _body(b, i, offs).decode("utf-8")
    for i in np.nonzero(types == REC_META)[0]:
        k, _, v = _body(b, i, offs).decode("utf-8", "replace").partition("=")
        st.meta.setdefault(k, v)


def _chan_name(names, c):
    """A channel's name: its CHANNEL record's, else can<N> (docs/FORMAT.md)."""
    return names.get(c) or "can%d" % c


def _damage_error(st, d):
    """The exception errors="raise" raises for damage d: a file without one valid block
    is "not a streamfat log" (NotALogError, the words and the exit status of `streamfat
    export`), anything else a FormatError naming the block."""
    if d.kind == "not a log" and d.reason.startswith("sealed"):
        return SealedLogError(st.name, st.size, d.reason)
    if d.kind == "not a log":
        return NotALogError(st.name, st.size, st.neither, d.reason)
    return FormatError(st.name, d.block, d.offset, d.kind, d.reason, d.blocks)


def _raise_first(st, b):
    if b["damage"]:
        raise _damage_error(st, st.damage[-len(b["damage"])])


def _clock(st):
    return st.header.clock if st.header else "unknown"


def _ts_type(st):
    return TS_UTC if _clock(st) == "realtime" else pa.int64()


def _channel_array(chan_u8, names):
    used = np.nonzero(np.bincount(chan_u8, minlength=256))[0]
    lut = np.zeros(256, np.int32)
    lut[used] = np.arange(len(used), dtype=np.int32)
    dictionary = pa.array([_chan_name(names, int(c)) for c in used], pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(lut[chan_u8], pa.int32()), dictionary)


def _channel_dict(b, names):
    """The channel column from the C-made dictionary indices (int32 into the sorted
    channel numbers used)."""
    used = b["can_chan_used"]
    dictionary = pa.array([_chan_name(names, c) for c in used], pa.string())
    idx = pa.Array.from_buffers(pa.int32(), b["ncan"], [None, pa.py_buffer(b["can_chan_idx"])])
    return pa.DictionaryArray.from_arrays(idx, dictionary, safe=False)


def _frames_batch(st, b, with_block=False):
    n = b["ncan"]
    tst = _ts_type(st)
    cols = [
        pa.Array.from_buffers(tst, n, [None, pa.py_buffer(b["can_ts"])]),
        _channel_dict(b, st.names),
        pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(b["can_id"])]),
    ]
    bits, nb = pa.py_buffer(b["can_bits"]), (n + 7) // 8     # C-made bitmaps
    cols += [pa.Array.from_buffers(pa.bool_(), n, [None, bits.slice(k * nb, nb)])
             for k in range(len(_FLAG_BITS))]
    cols += [
        pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(b["can_len"])]),
        pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(b["can_offsets"]),
                                               pa.py_buffer(b["can_data"])]),
        pa.Array.from_buffers(pa.bool_(), n, [None, bits.slice(len(_FLAG_BITS) * nb, nb)]),
    ]
    names = ["ts", "channel", "id"] + [x for x, _ in _FLAG_BITS] + ["dlc", "data", "tx"]
    if with_block:
        runs = np.frombuffer(b["can_block_runs"], np.uint64).reshape(-1, 2)
        cols.append(pa.array(np.repeat(runs[:, 0], runs[:, 1].astype(np.int64)), pa.uint64()))
        names.append("block")
    return pa.RecordBatch.from_arrays(cols, names=names)


def _fixed(b, sel, offs, nbytes, dtype):
    """The first nbytes of the bodies of rows sel, as an (len(sel), nbytes/8) array."""
    raw = np.frombuffer(b["data"], np.uint8)
    if not len(sel):
        return np.zeros((0, nbytes // 8), dtype)
    idx = offs[sel][:, None] + np.arange(nbytes)
    return np.ascontiguousarray(raw[idx]).view(dtype).reshape(len(sel), nbytes // 8)


def _text(arr):
    try:
        return arr.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if x is None else x.decode("utf-8", "replace")
                         for x in arr.to_pylist()], pa.string())


def _other_batch(st, b, kind, with_block=False):
    m, types, offs = _others(b)
    tst = _ts_type(st)
    ts_all = np.frombuffer(b["ts"], np.int64)
    lens = np.diff(offs) if m else np.zeros(0, np.int32)
    code = {"drop": REC_DROP, "latency": REC_LATENCY, "sample": REC_SAMPLE, "text": REC_TEXT,
            "annotation": REC_ANNOTATION, "meta": REC_META, "channel": REC_CHANNEL}[kind]
    need = {"drop": 24, "latency": 16}.get(kind, 0)
    sel = np.nonzero((types == code) & (lens >= need))[0] if m else np.zeros(0, np.int64)
    chan = np.frombuffer(b["channel"], np.uint8)[sel] if m else np.zeros(0, np.uint8)
    ts = pa.array(ts_all[sel], pa.int64()).cast(tst) if m else pa.array([], tst)
    cols, names = [ts], ["ts"]
    if kind == "drop":
        v = _fixed(b, sel, offs, 24, "<u8")
        cols += [pa.array(v[:, 0], pa.uint64()), pa.array(v[:, 1].view(np.int64)).cast(tst),
                 pa.array(v[:, 2].view(np.int64)).cast(tst)]
        names += ["count", "first_ts", "last_ts"]
    elif kind == "latency":
        v = _fixed(b, sel, offs, 16, "<i8")
        cols += [_channel_array(chan, st.names), pa.array(v[:, 0], pa.int64()),
                 pa.array(v[:, 1].view(np.uint64), pa.uint64())]
        names += ["channel", "latency_ns", "period_ns"]
    elif kind == "channel":
        bodies = pa.Array.from_buffers(pa.binary(), m, [None, pa.py_buffer(b["offsets"]),
                                                         pa.py_buffer(b["data"])])
        cols += [pa.array(chan, pa.uint8()), _text(bodies.take(pa.array(sel)))]
        names += ["channel", "name"]
    elif kind == "meta":
        kv = [_body(b, i, offs).decode("utf-8", "replace").partition("=") for i in sel]
        cols += [pa.array([k for k, _, _ in kv], pa.string()),
                 pa.array([v for _, _, v in kv], pa.string())]
        names += ["key", "value"]
    else:
        bodies = pa.Array.from_buffers(pa.binary(), m, [None, pa.py_buffer(b["offsets"]),
                                                         pa.py_buffer(b["data"])]) if m \
            else pa.array([], pa.binary())
        body = bodies.take(pa.array(sel, pa.int64()))
        if kind == "sample":
            fl = np.frombuffer(b["flags"], np.uint32)[sel] if m else np.zeros(0, np.uint32)
            cols += [_channel_array(chan, st.names), pa.array(fl, pa.uint32()), body]
            names += ["channel", "flags", "data"]
        elif kind == "text":
            cols += [_channel_array(chan, st.names), _text(body)]
            names += ["channel", "text"]
        else:
            cols += [_text(body)]
            names += ["text"]
    if with_block:
        blk = np.frombuffer(b["block"], np.uint64)[sel] if m else np.zeros(0, np.uint64)
        cols.append(pa.array(blk, pa.uint64()))
        names.append("block")
    return pa.RecordBatch.from_arrays(cols, names=names)


def _check_args(kind, errors):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', not {errors!r}")


def iter_file_batches(name, f, kind="frames", errors="raise", with_block=False,
                      chunk=CHUNK, key=None):
    """(state, RecordBatch) per chunk of one log file; state: header, channel names, META,
    damage, and after the last batch the decoder's stats. key: secret_key()'s bytes."""
    _check_args(kind, errors)
    for st, b in _decode_file(name, f, chunk, key):
        if errors == "raise":
            _raise_first(st, b)
        if kind == "frames":
            yield st, _frames_batch(st, b, with_block)
        else:
            yield st, _other_batch(st, b, kind, with_block)


def iter_batches(source, kind="frames", errors="raise", key=None):
    """pyarrow.RecordBatch after RecordBatch (one per 4 MiB of log), file after file: the
    memory of a whole read stays in proportion to one chunk. key: as read_arrow's."""
    key = secret_key(key)
    for name, f in _iter_files(source):
        for _st, batch in iter_file_batches(name, f, kind, errors, key=key):
            yield batch


def _summary_meta(files):
    out = {"files": []}
    total = {}
    for st in files:
        counts = {k: v for k, v in (st.stats or {}).get("damage", {}).items() if v}
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
        out["files"].append({
            "file": st.name, "clock": _clock(st), "device": st.meta.get("device"),
            "file_id": st.header.file_id if st.header else None,
            "damage": counts,
            "skipped": [d._asdict() for d in st.damage],
        })
    out["damage"] = total
    return out


def read_arrow(source, kind="frames", errors="raise", key=None):
    """A pyarrow.Table of the records of one kind from source (see _iter_files): frames
    (ts, channel, id, ext, rtr, fd, brs, esi, err, dlc, data), or "drop", "latency",
    "sample", "text", "annotation", "meta", "channel". ts is timestamp[ns, UTC] when every
    file's clock is the realtime clock, else int64 ns; schema metadata streamfat.clock
    names the clock and streamfat.summary (JSON; damage_summary()) the files and the damage
    skipped with errors="skip". key: the secret key of sealed logs (docs/PYTHON.md): the
    path of NAME.key from `streamfat keygen`, or its 32 bytes; a sealed log without it (or
    sealed to another key) raises SealedLogError naming the key id it wants."""
    _check_args(kind, errors)
    key = secret_key(key)
    batches, files = [], []
    for name, f in _iter_files(source):
        st = None
        for st, batch in iter_file_batches(name, f, kind, errors, key=key):
            if batch.num_rows:
                batches.append(batch)
        if st is not None:
            files.append(st)
    clocks = sorted({_clock(st) for st in files}) or ["realtime"]
    clock = clocks[0] if len(clocks) == 1 else "mixed"
    ts_type = TS_UTC if clock == "realtime" else pa.int64()
    if batches:
        out = []
        for bt in batches:
            cols = [c.cast(pa.int64()).cast(ts_type) if pa.types.is_timestamp(c.type)
                    or (f.name in ("ts", "first_ts", "last_ts") and pa.types.is_integer(c.type))
                    else c for f, c in zip(bt.schema, bt.columns)]
            out.append(pa.RecordBatch.from_arrays(cols, names=bt.schema.names))
        table = pa.Table.from_batches(out).unify_dictionaries()
    else:
        table = _decode_empty(kind)          # int64 ts: the header-less state
        if clock == "realtime":
            table = table.cast(_with_ts(table.schema, TS_UTC))
    meta = {b"streamfat.clock": clock.encode(),
            b"streamfat.summary": json.dumps(_summary_meta(files)).encode()}
    return table.replace_schema_metadata(meta)


def _with_ts(schema, tst):
    return pa.schema([pa.field(f.name, tst) if f.name in ("ts", "first_ts", "last_ts") else f
                      for f in schema])


def _decode_empty(kind):
    """An empty table of a kind (no file, or no rows): the schema from an empty batch."""
    dec = _core.Decoder()
    dec.decode(b"", True)
    b = dec.take()
    st = _FileState("")
    batch = _frames_batch(st, b) if kind == "frames" else _other_batch(st, b, kind)
    return pa.Table.from_batches([batch])


def damage_summary(table):
    """The damage a read_arrow(..., errors="skip") table skipped: {"damage": {kind: count},
    "files": [{"file", "clock", "device", "file_id", "damage", "skipped": [...]}]}."""
    meta = table.schema.metadata or {}
    return json.loads(meta.get(b"streamfat.summary", b'{"damage": {}, "files": []}'))


# ---- read_log ----------------------------------------------------------------------------

def _records(st, b):
    """The records of a batch in file order, and the damage in between: (key, record)."""
    n = b["ncan"]
    out = []
    if n:
        ts = np.frombuffer(b["can_ts"], np.int64).tolist()
        ch = np.frombuffer(b["can_channel"], np.uint8).tolist()
        ids = np.frombuffer(b["can_id"], np.uint32).tolist()
        ln = np.frombuffer(b["can_len"], np.uint8).tolist()
        fl = np.frombuffer(b["can_flags"], np.uint8).tolist()
        offs = np.frombuffer(b["can_offsets"], np.int32).tolist()
        data = bytes(b["can_data"])
    m, types, ooffs = _others(b)
    pos = np.frombuffer(b["pos"], np.uint64).tolist() if m else []
    # frame i comes after the other records with pos <= i
    before = np.searchsorted(np.asarray(pos, np.uint64), np.arange(n, dtype=np.uint64),
                             side="right").tolist() if n else []
    names = st.names

    def frames():
        for i in range(n):
            f = fl[i]
            yield (i, before[i], 2), Frame(
                ts[i], _chan_name(names, ch[i]), ids[i], bool(f & 1), bool(f & 2),
                bool(f & 8), bool(f & 16), bool(f & 32), bool(f & 4), ln[i],
                data[offs[i]:offs[i + 1]], bool(f & _TX_BIT))

    def others():
        ots = np.frombuffer(b["ts"], np.int64).tolist() if m else []
        och = np.frombuffer(b["channel"], np.uint8).tolist() if m else []
        ofl = np.frombuffer(b["flags"], np.uint32).tolist() if m else []
        for j in range(m):
            body = _body(b, j, ooffs)
            t, c, ty = ots[j], och[j], int(types[j])
            if ty == REC_SAMPLE:
                r = Sample(t, _chan_name(names, c), ofl[j], body)
            elif ty == REC_TEXT:
                r = Text(t, _chan_name(names, c), body.decode("utf-8", "replace"))
            elif ty == REC_LATENCY and len(body) >= 16:
                lat, per = np.frombuffer(body[:16], "<i8")
                r = Latency(t, _chan_name(names, c), int(lat), int(per) & (2**64 - 1))
            elif ty == REC_DROP and len(body) >= 24:
                cnt, a, z = np.frombuffer(body[:24], "<u8").tolist()
                r = Drop(t, cnt, a, z)
            elif ty == REC_ANNOTATION:
                r = Annotation(t, body.decode("utf-8", "replace"))
            elif ty == REC_CHANNEL:
                r = Channel(t, c, body.decode("utf-8", "replace"))
            elif ty == REC_META:
                k, _, v = body.decode("utf-8", "replace").partition("=")
                r = Meta(t, k, v)
            else:
                continue             # unknown types are skipped (docs/FORMAT.md)
            yield (pos[j], j, 1), r

    def damage():
        k = len(b["damage"])
        recs = st.damage[len(st.damage) - k:] if k else []
        for d, raw in zip(recs, b["damage"]):
            yield (raw[7], raw[8], 0), d

    return heapq.merge(damage(), others(), frames(), key=lambda x: x[0])


def read_log(source, errors="raise", key=None):
    """An iterator of typed records, in file order, file after file: a Header per file,
    then Frame, Sample, Text, Latency, Drop, Annotation, Channel and Meta records.
    errors="raise": FormatError at the first damage, after the records before it;
    errors="skip": Damage records where the reader rules skipped something. key: as
    read_arrow's."""
    _check_args("frames", errors)
    key = secret_key(key)
    for name, f in _iter_files(source):
        header_done = False
        for st, b in _decode_file(name, f, key=key):
            if not header_done and st.header is not None:
                header_done = True
                yield st.header
            for _key, rec in _records(st, b):
                if isinstance(rec, Damage) and errors == "raise":
                    raise _damage_error(st, rec)
                yield rec
