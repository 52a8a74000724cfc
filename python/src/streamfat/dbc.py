"""DBC signals decoded over whole columns (numpy), not one call per frame.

A DBC is read with cantools; decode_frames() takes a frames table (read_arrow's columns)
and, per message id, decodes every signal of every frame of that id at once: bit
extraction for little- and big-endian (Motorola) layouts, signed values, IEEE floats,
scale and offset, multiplexed signals (null where the multiplexer selects another group,
nested multiplexers included), value tables kept as the number plus an optional
`<signal>_label` column. Frames whose length differs from the message's are not decoded
and are counted (they stay in the raw frames)."""
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

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
        for m in db.messages:
            out.setdefault((m.frame_id, bool(m.is_extended_frame)), m)
    return out


def _bytes_matrix(data_col, length, rows=None):
    """The data of n frames (rows of data_col, or all) of `length` bytes each as an
    (n, length) uint8 matrix."""
    arr = data_col.combine_chunks() if isinstance(data_col, pa.ChunkedArray) else data_col
    n = len(arr) if rows is None else len(rows)
    if n == 0 or length == 0:
        return np.zeros((n, length), np.uint8)
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], np.int32, count=len(arr) + 1, offset=arr.offset * 4)
    raw = np.frombuffer(bufs[2], np.uint8)
    start = offs[:-1] if rows is None else offs[rows]
    return raw[start[:, None] + np.arange(length)]


def _raw_bits(mat, sig, le64=None, be64=None):
    """The raw unsigned value of a signal for every row, as uint64. le64 / be64: for
    messages of up to 8 bytes, the data as one little- / big-endian 64-bit word."""
    n, length = mat.shape
    mask = np.uint64((1 << sig.length) - 1) if sig.length < 64 else None
    if le64 is not None and sig.byte_order == "little_endian":
        v = le64 >> np.uint64(sig.start) if sig.start else le64
        return v & mask if mask is not None else v
    if be64 is not None and sig.byte_order != "little_endian":
        msb = (sig.start // 8) * 8 + (7 - sig.start % 8)
        sh = 64 - (msb + sig.length)
        v = be64 >> np.uint64(sh) if sh else be64
        return v & mask if mask is not None else v
    if sig.byte_order == "little_endian":
        lo_bit = sig.start
        lo, hi = lo_bit // 8, (lo_bit + sig.length - 1) // 8
        shift = lo_bit % 8
        acc = np.zeros(n, np.uint64)
        for b in range(lo, hi + 1):
            if b - lo < 8:
                acc |= mat[:, b].astype(np.uint64) << np.uint64(8 * (b - lo))
        if hi - lo >= 8:                          # a 9th byte: its bits on top
            acc >>= np.uint64(shift)
            acc |= mat[:, hi].astype(np.uint64) << np.uint64(64 - shift)
            shift = 0
        else:
            acc >>= np.uint64(shift)
    else:
        # Motorola: start is the MSB's bit number (byte * 8 + bit, bit 7 the byte's MSB);
        # in a linear numbering where bit 0 is the first byte's MSB the signal is
        # bits msb .. msb + length - 1.
        msb = (sig.start // 8) * 8 + (7 - sig.start % 8)
        lo, hi = msb // 8, (msb + sig.length - 1) // 8
        shift = 8 * (hi + 1) - (msb + sig.length)
        acc = np.zeros(n, np.uint64)
        if hi - lo >= 8:
            for b in range(lo + 1, hi + 1):
                acc |= mat[:, b].astype(np.uint64) << np.uint64(8 * (hi - b))
            acc >>= np.uint64(shift)
            acc |= mat[:, lo].astype(np.uint64) << np.uint64(64 - shift)
        else:
            for b in range(lo, hi + 1):
                acc |= mat[:, b].astype(np.uint64) << np.uint64(8 * (hi - b))
            acc >>= np.uint64(shift)
    if sig.length < 64:
        acc &= np.uint64((1 << sig.length) - 1)
    return acc


def _physical(raw, sig):
    if sig.is_float:
        with np.errstate(invalid="ignore"):       # NaN payloads stay NaN
            v = raw.astype(np.uint32).view(np.float32).astype(np.float64) \
                if sig.length == 32 else raw.view(np.float64)
    elif sig.is_signed:
        if sig.length < 64:                       # sign extension
            neg = ((raw >> np.uint64(sig.length - 1)) & np.uint64(1)).astype(bool)
            high = np.uint64(((1 << 64) - 1) ^ ((1 << sig.length) - 1))
            raw = np.where(neg, raw | high, raw)
        v = raw.view(np.int64)
    else:
        v = raw
    scale, offset = sig.scale, sig.offset
    integral = (not sig.is_float and float(scale) == int(scale) and float(offset) == int(offset)
                and isinstance(scale, int) and isinstance(offset, int))
    if integral:
        if scale == 1 and offset == 0:
            return v.astype(np.int64) if v.dtype != np.uint64 or sig.length < 64 else v
        return v.astype(np.int64) * np.int64(scale) + np.int64(offset)
    return v.astype(np.float64) * float(scale) + float(offset)


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


class _Columns:
    """A frames table's columns as numpy once, for many messages' row selections."""

    def __init__(self, table):
        self.table = table
        ts = table.column("ts").combine_chunks()
        self.ts_type = ts.type
        self.ts = ts.cast(pa.int64()).to_numpy()
        ch = table.column("channel").combine_chunks()
        if isinstance(ch, pa.ChunkedArray):       # pragma: no cover
            ch = ch.combine_chunks()
        self.ch_idx = ch.indices.to_numpy(zero_copy_only=False)
        self.ch_dict = ch.dictionary
        self._le = None

    def le64(self):
        """Every frame's first 8 data bytes (zero-padded) as a little-endian word."""
        if self._le is None:
            arr = self.table.column("data").combine_chunks()
            bufs = arr.buffers()
            n = len(arr)
            offs = np.frombuffer(bufs[1], np.int32, count=n + 1, offset=arr.offset * 4)
            raw = np.concatenate([np.frombuffer(bufs[2], np.uint8), np.zeros(8, np.uint8)])
            words = np.lib.stride_tricks.as_strided(raw, (len(raw) - 7, 8), (1, 1))
            self._le = np.ascontiguousarray(words[offs[:-1]]).view("<u8").reshape(n)
        return self._le

    def head(self, rows):
        return {"ts": pa.array(self.ts[rows], pa.int64()).cast(self.ts_type),
                "channel": pa.DictionaryArray.from_arrays(
                    pa.array(self.ch_idx[rows], pa.int32()), self.ch_dict)}


def decode_message(msg, frames, labels=True, rows=None, _cols=None):
    """Decode the frames of a frames table that belong to msg (rows: their indices, else
    every row; all of msg.length bytes): a pyarrow.Table of ts, channel and one column per
    signal."""
    c = _cols or _Columns(frames)
    if rows is None:
        rows = np.arange(frames.num_rows)
    n = len(rows)
    le64 = be64 = None
    if msg.length <= 8:
        le64 = c.le64()[rows]
        if msg.length < 8:                        # bytes past the frame: zero
            le64 &= np.uint64((1 << (8 * msg.length)) - 1)
        be64 = le64.byteswap()
        mat = np.zeros((n, 0), np.uint8)
    else:
        mat = _bytes_matrix(frames.column("data"), msg.length, rows)
    cols = c.head(rows)
    valid = {}                       # signal name -> row mask (multiplexing)
    values = {}
    sigs = list(msg.signals)
    # multiplexers first (a muxed signal needs its multiplexer's value and validity)
    order = sorted(sigs, key=lambda s: (not s.is_multiplexer, s.multiplexer_signal is not None))
    done = set()
    while len(done) < len(sigs):
        progressed = False
        for s in order:
            if s.name in done:
                continue
            parent = s.multiplexer_signal
            if parent and parent not in done:
                continue
            mask = np.ones(n, bool)
            if parent:
                pv = values[parent]
                mask = valid[parent] & np.isin(pv, np.array(s.multiplexer_ids or [], np.int64))
            raw = _raw_bits(mat, s, le64, be64)
            v = _physical(raw, s)
            values[s.name], valid[s.name] = v, mask
            done.add(s.name)
            progressed = True
        if not progressed:                        # a multiplexer the DBC does not define
            for s in order:
                if s.name not in done:
                    values[s.name] = np.zeros(n)
                    valid[s.name] = np.zeros(n, bool)
                    done.add(s.name)
    for s in sigs:
        m = valid[s.name]
        cols[s.name] = pa.array(values[s.name], mask=None if m.all() else ~m)
        if labels and s.choices:
            cols[s.name + "_label"] = _labels(values[s.name], s.choices, m)
    return pa.table(cols)


def split_frames(table, messages, stats=None, labels=True):
    """Per DBC message: {name: decoded table}, the frames of no message (or of a wrong
    length: counted in stats.length_mismatch) as the raw frames table."""
    import pyarrow.compute as pc
    stats = stats or DecodeStats()
    ids = table.column("id").to_numpy()
    ext = table.column("ext").to_numpy(zero_copy_only=False)
    plain = ~(table.column("rtr").to_numpy(zero_copy_only=False)
              | table.column("err").to_numpy(zero_copy_only=False))
    dlc = table.column("dlc").to_numpy()
    used = np.zeros(len(ids), bool)
    out = {}
    cols = _Columns(table)
    # one pass over the id column: group rows by (id, ext)
    key = np.where(plain, ids.astype(np.int64) | (ext.astype(np.int64) << 32), -1)
    if len(messages) <= 64:               # a pass per message beats sorting the column
        groups = ((((fid | (int(e) << 32))), None) for fid, e in messages)
    else:
        uniq, inverse = np.unique(key, return_inverse=True)
        groups = ((int(k), gi) for gi, k in enumerate(uniq) if k >= 0)
    for k, gi in groups:
        msg = messages.get((k & 0xFFFFFFFF, bool(k >> 32)))
        if msg is None:
            continue
        rows = np.nonzero(key == k)[0] if gi is None else np.nonzero(inverse == gi)[0]
        if not len(rows):
            continue
        good = rows[dlc[rows] == msg.length]
        if len(good) < len(rows):
            stats.length_mismatch[msg.name] = stats.length_mismatch.get(msg.name, 0) + \
                len(rows) - len(good)
        if not len(good):
            continue
        used[good] = True
        out[msg.name] = decode_message(msg, table, labels, good, cols)
        stats.frames += len(good)
    raw = table.filter(pa.array(~used))
    stats.undecoded += raw.num_rows
    return out, raw
