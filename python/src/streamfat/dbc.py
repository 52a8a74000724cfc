"""DBC signals decoded over whole columns (numpy), not one call per frame.

A DBC is read with cantools; decode_frames() takes a frames table (read_arrow's columns)
and, per message id, decodes every signal of every frame of that id at once: bit
extraction for little- and big-endian (Motorola) layouts, signed values, IEEE floats,
scale and offset, multiplexed signals (null where the multiplexer selects another group,
nested multiplexers included), value tables kept as the number plus an optional
`<signal>_label` column. Frames whose length differs from the message's are not decoded
and are counted (they stay in the raw frames). The grouping of frames by message and the
bit extraction run in C (streamfat._dbc, whole columns per message and signal) from a
signal table compiled once per message."""
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)

from . import _dbc as _ext
from .errors import DbcError


def load(paths):
    """Messages of one or more DBC files: {(frame_id, is_extended): cantools Message}.
    DbcError for a file cantools rejects (or that is missing)."""
    try:
        import cantools
    except ImportError as e:                      # pragma: no cover
        raise DbcError("cantools is needed for DBC files (pip install cantools)") from e
    out = {}
    for p in [paths] if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__") \
            else paths:
        try:
            db = cantools.database.load_file(str(p), database_format="dbc")
        except FileNotFoundError as e:
            raise DbcError(f"{p}: no such file") from e
        except Exception as e:                    # cantools raises many kinds
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise DbcError(f"{p}: cantools cannot read it: {msg}") from e
        # J1939 (docs/LAKE.md "J1939"): a message of VFrameFormat J1939PG (cantools'
        # protocol "j1939"), or every message of a DBC whose ProtocolType is J1939 when all
        # of them have 29-bit ids (asammdf's extract_bus_logging's rule)
        attrs = getattr(getattr(db, "dbc", None), "attributes", None) or {}
        ptype = attrs.get("ProtocolType")
        ptype = str(getattr(ptype, "value", ptype) or "").lower()
        all_j1939 = ptype == "j1939" and all(m.is_extended_frame for m in db.messages)
        for m in db.messages:
            j = bool(m.is_extended_frame) and (all_j1939 or
                                               getattr(m, "protocol", None) == "j1939")
            try:
                m._streamfat_j1939 = j
            except AttributeError:                # pragma: no cover
                pass
            out.setdefault((m.frame_id, bool(m.is_extended_frame)), m)
    return out


def is_j1939(msg):
    """Does msg match frames by PGN (load() marks J1939 messages)?"""
    return getattr(msg, "_streamfat_j1939", False)


def j1939_pgn(ids):
    """The PGN of 29-bit ids (numpy), SAE J1939-21: EDP, DP, PF and, for PDU2 (PF >= 240),
    PS; a PDU1 PGN has PS = 0 (PS is the destination address)."""
    ids = np.asarray(ids, np.uint32)
    pf = (ids >> 16) & 0xFF
    return np.where(pf >= 240, (ids >> 8) & 0x3FFFF, (ids >> 8) & 0x3FF00).astype(np.uint32)


def _j1939_map(messages):
    """{pgn: (frame_id, ext)} of the J1939 messages (the first of a PGN wins, as in
    asammdf)."""
    out = {}
    for key, m in messages.items():
        if is_j1939(m):
            out.setdefault(int(j1939_pgn([key[0]])[0]), key)
    return out


# columns of a compiled signal table (int64[nsig, _NCOLS]; the order of _dbc.c's enum)
(_START, _LEN, _BE, _SIGNED, _FLOAT, _KIND, _PARENT, _MUX0, _MUX1, _ISCALE,
 _IOFF) = range(11)
_NCOLS = 11
_K_INT, _K_UINT, _K_DOUBLE = 0, 1, 2
_DTYPES = {_K_INT: np.int64, _K_UINT: np.uint64, _K_DOUBLE: np.float64}
_ARROW = {_K_INT: pa.int64(), _K_UINT: pa.uint64(), _K_DOUBLE: pa.float64()}
_I64 = (-(1 << 63), (1 << 63) - 1)


class Compiled:
    """A message's signal table for _dbc.decode, made once per message: per signal its
    start bit, length, byte order, signedness, float width, the output type (int64 for
    integer signals of integer scale and offset whose values fit, uint64 for an unsigned
    64-bit one of scale 1 and offset 0, else float64), its multiplexer (an index into the
    table, which lists a multiplexer before the signals it selects) and the multiplexer
    values that select it."""

    def __init__(self, msg):
        sigs = list(msg.signals)
        names = {s.name for s in sigs}
        order, done = [], set()
        # multiplexers first (a muxed signal needs its multiplexer's value and validity);
        # a signal whose multiplexer the DBC does not define is never valid
        self.orphans = set()
        while len(done) < len(sigs):
            progressed = False
            for s in sigs:
                if s.name in done:
                    continue
                parent = s.multiplexer_signal
                if parent and parent in names and parent not in done:
                    continue
                if parent and parent not in names:
                    self.orphans.add(s.name)
                order.append(s)
                done.add(s.name)
                progressed = True
            if not progressed:                    # a multiplexer cycle: none valid
                for s in sigs:
                    if s.name not in done:
                        self.orphans.add(s.name)
                        order.append(s)
                        done.add(s.name)
        index = {s.name: i for i, s in enumerate(order)}
        ti = np.zeros((len(order), _NCOLS), np.int64)
        tf = np.zeros((len(order), 2), np.float64)
        mux = []
        for i, s in enumerate(order):
            if s.is_float and s.length not in (32, 64):
                raise DbcError(f"{msg.name}.{s.name}: a float signal of {s.length} bits")
            if not 1 <= s.length <= 64:
                raise DbcError(f"{msg.name}.{s.name}: a signal of {s.length} bits")
            scale, offset = s.scale, s.offset
            kind, iscale, ioff = _K_DOUBLE, 1, 0
            if not s.is_float and isinstance(scale, int) and isinstance(offset, int):
                lo, hi = (-(1 << (s.length - 1)), (1 << (s.length - 1)) - 1) \
                    if s.is_signed else (0, (1 << s.length) - 1)
                ends = (lo * scale + offset, hi * scale + offset)
                if scale == 1 and offset == 0 and not s.is_signed and s.length == 64:
                    kind = _K_UINT
                elif all(_I64[0] <= e <= _I64[1] for e in ends):
                    kind, iscale, ioff = _K_INT, scale, offset
                # else: physical values past int64: float64 (the nearest double)
            parent = s.multiplexer_signal
            p = index[parent] if parent in index and s.name not in self.orphans else -1
            ids = list(s.multiplexer_ids or []) if p >= 0 else []
            ti[i] = (s.start, s.length, s.byte_order != "little_endian", bool(s.is_signed),
                     s.length if s.is_float else 0, kind, p, len(mux), len(mux) + len(ids),
                     iscale, ioff)
            tf[i] = (float(scale), float(offset))
            mux += ids
        self.order = order
        self.index = index
        self.ti, self.tf = ti, tf
        self.mux = np.array(mux, np.int64)
        self.kinds = ti[:, _KIND].copy()
        self.muxed = ti[:, _PARENT] >= 0


def compile_message(msg):
    c = getattr(msg, "_streamfat_compiled", None)
    if c is None:
        c = Compiled(msg)
        try:
            msg._streamfat_compiled = c
        except AttributeError:                    # pragma: no cover
            pass
    return c


def _labels(values, choices, valid):
    keys = np.array(sorted(int(k) for k in choices), np.int64)
    names = [str(choices[k]) for k in sorted(choices, key=int)]
    iv = values.astype(np.int64) if values.dtype != np.float64 else None
    if iv is None:
        ok = np.zeros(len(values), bool)
        pos = np.zeros(len(values), np.int64)
    else:
        pos = np.clip(np.searchsorted(keys, iv), 0, len(keys) - 1)
        ok = keys[pos] == iv
    idx = pa.array(np.where(ok, pos, 0).astype(np.int32), mask=~(ok & valid))
    return pa.DictionaryArray.from_arrays(idx, pa.array(names, pa.string()))


@dataclass
class DecodeStats:
    frames: int = 0                  # frames decoded
    length_mismatch: dict = field(default_factory=dict)   # message name -> frames
    undecoded: int = 0               # frames of no DBC message (raw)


def _data_buffers(table):
    """The data column's offsets (int32), first offset index and bytes, as numpy."""
    data = table.column("data").combine_chunks()
    if isinstance(data, pa.ChunkedArray):         # pragma: no cover
        data = data.combine_chunks()
    if data.type != pa.binary():
        data = data.cast(pa.binary())
    bufs = data.buffers()
    offsets = np.frombuffer(bufs[1], np.int32) if bufs[1] is not None \
        else np.zeros(1, np.int32)
    values = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size \
        else np.zeros(1, np.uint8)
    return data, offsets, data.offset, values


def _bitmap(col):
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        arr = arr.fill_null(False)
    b = arr.buffers()[1]
    return (b if b is not None else pa.py_buffer(b"\0")), arr.offset


def _numpy(col, dtype):
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return np.ascontiguousarray(arr.to_numpy(zero_copy_only=False), dtype=dtype)


def _empty(shape, dtype):
    """An uninitialised numpy array in Arrow's memory pool rather than numpy's: numpy asks
    for transparent huge pages on large arrays (madvise), whose first touch stalls in
    page compaction on a busy machine (measured here: a cold split_frames 0.43-0.55 CPU s
    against 0.17-0.22 s), while the pool reuses its memory from batch to batch."""
    count = shape[0] * shape[1] if isinstance(shape, tuple) else shape
    buf = pa.allocate_buffer(max(count * np.dtype(dtype).itemsize, 8))
    return np.frombuffer(buf, dtype, count=count).reshape(shape)


def _decode(msg, labels, n, words, data, rows, ts, chan, ts_type, ch_dict):
    """One message's decoded table from group()'s outputs for its rows."""
    comp = compile_message(msg)
    nsig = len(comp.order)
    out = _empty((nsig, n), np.uint64)
    valid = _empty((nsig, n), np.uint8)
    _d, offsets, first, values = data
    if n and nsig:
        _ext.decode(words, offsets, first, values, rows, msg.length, comp.ti, comp.tf,
                    comp.mux, out, valid)
    cols = {"ts": pa.Array.from_buffers(ts_type, n, [None, pa.py_buffer(ts)]),
            "channel": pa.DictionaryArray.from_arrays(
                pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(chan)]), ch_dict,
                safe=False)}
    for s in msg.signals:
        i = comp.index[s.name]
        kind = int(comp.kinds[i])
        v = out[i].view(_DTYPES[kind])
        if s.name in comp.orphans:
            m = np.zeros(n, bool)
        elif comp.muxed[i]:
            m = valid[i].view(bool)
        else:
            m = None
        # zero-copy from the output rows; a validity bitmap only for multiplexed signals
        bitmap, nulls = None, 0
        if m is not None:
            nulls = n - int(np.count_nonzero(m))
            if nulls:
                bitmap = pa.py_buffer(np.packbits(m, bitorder="little"))
        cols[s.name] = pa.Array.from_buffers(_ARROW[kind], n, [bitmap, pa.py_buffer(v)],
                                             null_count=nulls)
        if labels and s.choices:
            cols[s.name + "_label"] = _labels(v, s.choices,
                                              np.ones(n, bool) if m is None else m)
    return pa.table(cols)


def decode_message(msg, frames, labels=True, rows=None):
    """Decode the frames of a frames table that are msg's (rows: only those row indices):
    a pyarrow.Table of ts, channel and one column per signal (frames of another id or
    length are left out)."""
    if rows is not None:
        frames = frames.take(pa.array(np.asarray(rows, np.int64)))
    out, _raw = split_frames(frames, {(msg.frame_id, bool(msg.is_extended_frame)): msg},
                             labels=labels)
    if msg.name in out:
        return out[msg.name]
    return _decode(msg, labels, 0, np.zeros(0, np.uint64), _data_buffers(frames.slice(0, 0)),
                   np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32),
                   frames.schema.field("ts").type, pa.array([], pa.string()))


def split_frames(table, messages, stats=None, labels=True):
    """Per DBC message: {name: decoded table}, the frames of no message (or of a wrong
    length: counted in stats.length_mismatch) as the raw frames table. One pass in C groups
    the frames by (id, ext) (a count per message, then a scatter of the row numbers, ts,
    channel and the first 8 data bytes into each message's contiguous range); then each
    message's signals are decoded from its range, a whole column per signal."""
    stats = stats or DecodeStats()
    msgs = list(messages.items())
    keys = np.array([fid | (int(e) << 32) for (fid, e), _m in msgs], np.uint64)
    lengths = np.array([m.length for _k, m in msgs], np.int64)
    n = table.num_rows
    ids = _numpy(table.column("id"), np.uint32)
    orig_ids = ids
    jmap = _j1939_map(messages)
    if jmap and n:
        # a J1939 message takes the 29-bit frames of its PGN, whatever their priority and
        # source address (an exact id of another message first): the C grouping sees them
        # under the message's own id
        ext = _numpy(table.column("ext"), bool)
        exact = np.isin(ids.astype(np.uint64) | (ext.astype(np.uint64) << 32), keys)
        pgn = j1939_pgn(ids)
        jp = np.array(sorted(jmap), np.uint32)
        pos = np.clip(np.searchsorted(jp, pgn), 0, len(jp) - 1)
        hit = ext & ~exact & (jp[pos] == pgn)
        if hit.any():
            target = np.array([jmap[int(p)][0] for p in jp], np.uint32)
            ids = ids.copy()
            ids[hit] = target[pos[hit]]
    dlc = _numpy(table.column("dlc"), np.uint8)
    tsa = table.column("ts").combine_chunks()
    ts_type = tsa.type
    ts = _numpy(tsa.cast(pa.int64()), np.int64)
    ch = table.column("channel").combine_chunks()
    if isinstance(ch, pa.ChunkedArray):           # pragma: no cover
        ch = ch.combine_chunks()
    chan = _numpy(ch.indices, np.int32)
    data = _data_buffers(table)
    order = _empty(n, np.int64)
    starts = np.empty(len(msgs) + 2, np.int64)
    mismatch = np.empty(len(msgs), np.int64)
    ts_out = _empty(n, np.int64)
    chan_out = _empty(n, np.int32)
    words = _empty(n, np.uint64)
    ext_b, ext_o = _bitmap(table.column("ext"))
    rtr_b, rtr_o = _bitmap(table.column("rtr"))
    err_b, err_o = _bitmap(table.column("err"))
    _ext.group(keys, lengths, ids, ext_b, ext_o, rtr_b, rtr_o, err_b, err_o, dlc, ts, chan,
               data[1], data[2], data[3], order, starts, mismatch, ts_out, chan_out, words)
    out = {}
    for k, (_key, msg) in enumerate(msgs):
        if mismatch[k]:
            stats.length_mismatch[msg.name] = stats.length_mismatch.get(msg.name, 0) + \
                int(mismatch[k])
        a, b = int(starts[k]), int(starts[k + 1])
        if a == b:
            continue
        out[msg.name] = _decode(msg, labels, b - a, words[a:b], data, order[a:b],
                                ts_out[a:b], chan_out[a:b], ts_type, ch.dictionary)
        if is_j1939(msg):
            out[msg.name] = _with_sa(out[msg.name], orig_ids[order[a:b]] & 0xFF)
        stats.frames += b - a
    rest = order[int(starts[len(msgs)]):]
    raw = table if len(rest) == n else table.slice(0, 0) if not len(rest) else \
        table.take(pa.array(rest))
    stats.undecoded += raw.num_rows
    return out, raw


def _with_sa(t, sa):
    """A J1939 message's table gets the source address of each row (after channel)."""
    return t.add_column(2, "sa", pa.array(np.asarray(sa, np.uint8), pa.uint8()))


def split_j1939_messages(table, messages, stats=None, labels=True):
    """J1939 transport-protocol messages (streamfat.read_messages rows of protocol j1939,
    or the lake's, with `ts` or `first_ts`, `channel`, `pgn`, `sa`, `status`, `length`,
    `payload`) decoded like single frames by the J1939 DBC messages of their PGN: returns
    ({message name: table of ts, channel, sa and the signals}, the rows no message decoded:
    another PGN, another length, or a broken message)."""
    stats = stats or DecodeStats()
    jmap = _j1939_map(messages)
    n = table.num_rows
    if not jmap or not n:
        return {}, table
    tcol = "ts" if "ts" in table.column_names else "first_ts"
    tsa = table.column(tcol).combine_chunks()
    ts = _numpy(tsa.cast(pa.int64()), np.int64)
    ch = table.column("channel").combine_chunks()
    if not pa.types.is_dictionary(ch.type):
        ch = ch.dictionary_encode()
    chan = _numpy(ch.indices, np.int32)
    pgn = _numpy(table.column("pgn").fill_null(0xFFFFFFFF), np.uint32)
    length = _numpy(table.column("length"), np.int64)
    sa = _numpy(table.column("sa").fill_null(0), np.uint8)
    ok = _numpy(pa.compute.equal(table.column("status"), "ok"), bool)
    data = _data_buffers(table.rename_columns(["data" if c == "payload" else c
                                               for c in table.column_names]))
    _d, offsets, first, values = data
    taken = np.zeros(n, bool)
    out = {}
    for p, key in jmap.items():
        msg = messages[key]
        rows = np.nonzero(ok & (pgn == p) & (length == msg.length))[0].astype(np.int64)
        if not len(rows):
            continue
        words = np.zeros(len(rows), np.uint64)
        if msg.length <= 8:           # the short path reads little-endian words
            for k in range(msg.length):
                words |= values[offsets[first + rows] + k].astype(np.uint64) << np.uint64(8 * k)
        t = _decode(msg, labels, len(rows), words, data, rows, ts[rows], chan[rows],
                    tsa.type, ch.dictionary)
        out[msg.name] = _with_sa(t, sa[rows])
        taken[rows] = True
        stats.frames += len(rows)
    rest = table.filter(pa.array(~taken)) if taken.any() else table
    return out, rest
