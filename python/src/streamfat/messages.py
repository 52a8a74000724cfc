"""What spans frames, as Arrow: reassembled messages (ISO-TP, J1939 TP, NMEA 2000 fast
packets) and the decoded UDS, OBD-II and J1939 DM1 / DM2 tables (docs/PYTHON.md,
"Messages"; docs/DECODE.md for the rules).

Nothing is reassembled or decoded here: the extension streamfat._proto runs the library's
src/proto/ over the CAN columns of each chunk that the log decoder hands out (the GIL
released), and returns fixed-size C rows that become Arrow arrays through numpy structured
dtypes of the same layout. One chunk in, one batch out per table: the iter_* forms keep
memory in proportion to a chunk, whatever the log's size."""
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _proto
from .reader import (CHUNK, TS_UTC, _channel_array, _check_args, _clock, _decode_file,
                     _iter_files, _raise_first, _summary_meta, _text, _ts_type)

PROTOCOLS = ("isotp", "j1939", "fast")
TABLES = ("messages", "uds", "obd2", "dm1")
_WANT = {"messages": _proto.WANT_MESSAGES, "uds": _proto.WANT_UDS, "obd2": _proto.WANT_OBD,
         "dm1": _proto.WANT_DM1}
_MODES = {"normal": 0, "extended": 1, "ext": 1, "mixed": 2}
_MODE_NAMES = ["normal", "extended", "mixed"]
_ANY_CHANNEL = 0xFF


def _dtype(fields, itemsize):
    names, formats, offsets = zip(*fields)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": itemsize})


# the layouts of _proto.c's struct msg_row, uds_row, obd_row, dm1_row
_MSG_DT = _dtype([("first_ts", "<i8", 0), ("last_ts", "<i8", 8), ("id", "<u4", 16),
                  ("fc_id", "<u4", 20), ("pgn", "<u4", 24), ("length", "<u4", 28),
                  ("declared", "<u4", 32), ("frames", "<u4", 36), ("proto", "u1", 40),
                  ("status", "u1", 41), ("channel", "u1", 42), ("mode", "u1", 43),
                  ("addr", "u1", 44), ("sa", "u1", 45), ("da", "u1", 46), ("prio", "u1", 47),
                  ("eff", "u1", 48), ("fd", "u1", 49), ("pos", "<i4", 52)], 56)
_UDS_DT = _dtype([("first_ts", "<i8", 0), ("last_ts", "<i8", 8), ("req_ts", "<i8", 16),
                  ("id", "<u4", 24), ("fc_id", "<u4", 28), ("did", "<u2", 32),
                  ("channel", "u1", 34), ("eff", "u1", 35), ("kind", "u1", 36),
                  ("sid", "u1", 37), ("sub", "u1", 38), ("nrc", "u1", 39),
                  ("has_sub", "u1", 40), ("has_did", "u1", 41), ("dtc_list", "u1", 42),
                  ("avail_mask", "u1", 43), ("pos", "<i4", 44)], 48)
_OBD_DT = _dtype([("first_ts", "<i8", 0), ("last_ts", "<i8", 8), ("value", "<f8", 16),
                  ("id", "<u4", 24), ("channel", "u1", 28), ("eff", "u1", 29),
                  ("mode", "u1", 30), ("pid", "u1", 31), ("frame", "u1", 32),
                  ("kind", "u1", 33), ("has_pid", "u1", 34), ("pos", "<i4", 36)], 40)
_DM1_DT = np.dtype({"names": ["first_ts", "last_ts", "id", "pgn", "spn", "channel", "sa", "da",
                              "prio", "tp", "has_dtc", "fmi", "oc", "cm", "lamp", "flash", "pos"],
                    "formats": ["<i8", "<i8", "<u4", "<u4", "<u4", "u1", "u1", "u1", "u1", "u1",
                                "u1", "u1", "u1", "u1", ("u1", (4,)), ("u1", (4,)), "<i4"],
                    "offsets": [0, 8, 16, 20, 24, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 41, 48],
                    "itemsize": 56})
for _dt, _size in ((_MSG_DT, _proto.MSG_ROW), (_UDS_DT, _proto.UDS_ROW),
                   (_OBD_DT, _proto.OBD_ROW), (_DM1_DT, _proto.DM1_ROW)):
    assert _dt.itemsize == _size, "messages.py's row layout differs from _proto.c's"

_NAMES = _proto.names()
_OBD_KINDS = ["raw", "value", "supported", "dtc", "vin", "other"]
_LAMPS = ("mil", "red_stop", "amber_warning", "protect")


def _dict_table(names):
    """(lut: code -> dictionary index or -1, dictionary of the names that exist)."""
    have = [i for i, n in enumerate(names) if n is not None]
    lut = np.full(len(names), -1, np.int32)
    lut[have] = np.arange(len(have), dtype=np.int32)
    return lut, pa.array([names[i] for i in have], pa.string())


# the string columns' names by code (the decoders' tables, _proto.names())
_DICTS = {k: _dict_table(v) for k, v in {
    "proto": _NAMES["proto"], "status": _NAMES["status"], "mode": _MODE_NAMES,
    "uds_kind": ["request", "positive", "negative"], "uds_service": _NAMES["uds_service"],
    "uds_nrc": _NAMES["uds_nrc"], "obd_kind": _OBD_KINDS,
    # a row's name: the PID's (0..255), then the bitmap's and the VIN's
    "obd_name": [x[0] for x in _NAMES["obd_pid"]] + ["pids_supported", "vin"],
    "obd_unit": [x[1] for x in _NAMES["obd_pid"]],
    "lamp": _NAMES["lamp"], "flash": _NAMES["flash"], "dm": ["DM1", "DM2"]}.items()}


# ---- arguments -----------------------------------------------------------------------------

def _pair(p):
    """An ISO-TP pair: "6F1:612[:ext|:mixed]" (hex, as export --isotp-pair) or a tuple
    (id_a, id_b[, mode[, channel]]); 29-bit when either id is above 0x7FF."""
    if isinstance(p, str):
        parts = p.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"isotp pair {p!r}: want A:B[:ext|:mixed] (hex ids)")
        try:
            a, b = int(parts[0], 16), int(parts[1], 16)
        except ValueError:
            raise ValueError(f"isotp pair {p!r}: ids are hex numbers") from None
        mode = parts[2] if len(parts) == 3 else "normal"
        channel = None
    else:
        a, b, mode, channel = (tuple(p) + ("normal", None))[:4]
    if mode not in _MODES:
        raise ValueError(f"isotp pair {p!r}: mode must be normal, ext(ended) or mixed")
    if not (0 <= a < 1 << 29 and 0 <= b < 1 << 29):
        raise ValueError(f"isotp pair {p!r}: ids must be below 2^29")
    eff = int(a > 0x7FF or b > 0x7FF)
    return (a, b, eff, _MODES[mode], _ANY_CHANNEL if channel is None else int(channel))


def _reassembler(want, protocols, isotp_pairs, fast_pgns, timers):
    protocols = tuple(protocols)
    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad:
        raise ValueError(f"protocols: {bad[0]!r} is none of {', '.join(PROTOCOLS)}")
    off = 0
    if "isotp" not in protocols:
        off |= _proto.NO_ISOTP
    if "j1939" not in protocols:
        off |= _proto.NO_J1939
    pgns = [int(x) for x in fast_pgns] if "fast" in protocols else []
    t = None
    if timers:
        keys = ("n_cr", "t1", "t2", "t3", "t4", "fast")
        unknown = set(timers) - set(keys)
        if unknown:
            raise ValueError(f"timers: unknown {sorted(unknown)[0]!r} (ms: {', '.join(keys)})")
        t = tuple(int(timers.get(k, 0)) for k in keys)
    return _proto.Reassembler(want, off, [_pair(p) for p in isotp_pairs], pgns, t)


# ---- rows to Arrow ----------------------------------------------------------------------

def _ts(v, tst):
    """A time column straight from the rows' int64 ns (one copy out of the strided field)."""
    v = np.ascontiguousarray(v, np.int64)
    return pa.Array.from_buffers(tst, len(v), [None, pa.py_buffer(v)])


def _masked(v, typ, valid):
    return pa.array(v, typ, mask=~np.asarray(valid, bool))


def _names(codes, table, valid=None):
    """A dictionary<int32, string> column: the name of each code in _DICTS[table]; null
    where not valid or the code has no name. The dictionary holds only names (no null:
    pyarrow unifies such dictionaries across batches), so a column costs a lookup, not a
    string per row."""
    lut, d = _DICTS[table]
    idx = lut[np.asarray(codes, np.int64)] if len(codes) else np.zeros(0, np.int32)
    null = idx < 0
    if valid is not None:
        null |= ~np.asarray(valid, bool)
    return pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32(), mask=null), d)


def _binary(n, offsets, data):
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(data)])


def _messages_batch(st, n, rows, var):
    r = np.frombuffer(rows, _MSG_DT, count=n)
    tst = _ts_type(st)
    iso = r["proto"] == 1
    fixed = iso & (r["eff"] == 1) & (((r["id"] >> 16) & 0xFE) == 0xDA)
    cols = {
        "first_ts": _ts(r["first_ts"], tst), "last_ts": _ts(r["last_ts"], tst),
        "channel": _channel_array(r["channel"], st.names),
        "protocol": _names(r["proto"], "proto"),
        "status": _names(r["status"], "status"),
        "id": pa.array(r["id"], pa.uint32()), "eff": pa.array(r["eff"] == 1),
        "fc_id": _masked(r["fc_id"], pa.uint32(), iso & (r["fc_id"] != 0)),
        "mode": _names(np.minimum(r["mode"], 2), "mode", iso),
        "addr": _masked(r["addr"], pa.uint8(), iso & (r["mode"] != 0)),
        "sa": _masked(r["sa"], pa.uint8(), ~iso | fixed),
        "da": _masked(r["da"], pa.uint8(), ~iso | fixed),
        "prio": _masked(r["prio"], pa.uint8(), ~iso),
        "pgn": _masked(r["pgn"], pa.uint32(), ~iso),
        "fd": pa.array(r["fd"] == 1),
        "length": pa.array(r["length"], pa.uint32()),
        "declared": pa.array(r["declared"], pa.uint32()),
        "frames": pa.array(r["frames"], pa.uint32()),
        "payload": _binary(n, *var),
    }
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))


def _uds_batch(st, n, rows, var, dtc_off, dtc_code, dtc_status, ndtc):
    r = np.frombuffer(rows, _UDS_DT, count=n)
    tst = _ts_type(st)
    neg = r["kind"] == 2
    dtc_list = r["dtc_list"] == 1
    items = pa.StructArray.from_arrays(
        [pa.array(np.frombuffer(dtc_code, "<u4", count=ndtc), pa.uint32()),
         pa.array(np.frombuffer(dtc_status, "u1", count=ndtc), pa.uint8())],
        names=["dtc", "status"])
    offs = np.frombuffer(dtc_off, "<i4", count=n + 1) if n else np.zeros(1, np.int32)
    dtcs = pa.ListArray.from_arrays(pa.array(offs, pa.int32()), items,
                                    mask=pa.array(~dtc_list))
    cols = {
        "first_ts": _ts(r["first_ts"], tst), "last_ts": _ts(r["last_ts"], tst),
        "req_ts": pa.array(r["req_ts"], pa.int64(), mask=r["req_ts"] < 0).cast(tst),
        "channel": _channel_array(r["channel"], st.names),
        "id": pa.array(r["id"], pa.uint32()), "eff": pa.array(r["eff"] == 1),
        "fc_id": _masked(r["fc_id"], pa.uint32(), r["fc_id"] != 0),
        "kind": _names(r["kind"], "uds_kind"),
        "sid": pa.array(r["sid"], pa.uint8()),
        "service": _names(r["sid"], "uds_service"),
        "sub": _masked(r["sub"], pa.uint8(), r["has_sub"] == 1),
        "nrc": _masked(r["nrc"], pa.uint8(), neg),
        "nrc_name": _names(r["nrc"], "uds_nrc", neg),
        "did": _masked(r["did"], pa.uint16(), r["has_did"] == 1),
        "data": _binary(n, *var),
        "avail_mask": _masked(r["avail_mask"], pa.uint8(), dtc_list),
        "dtcs": dtcs,
    }
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))


def _obd_batch(st, n, rows, var, text):
    r = np.frombuffer(rows, _OBD_DT, count=n)
    tst = _ts_type(st)
    kind = r["kind"]
    linear = kind == 1
    name_idx = np.where(kind == 2, 256, np.where(kind == 4, 257, r["pid"])).astype(np.int32)
    texts = _binary(n, *text)
    cols = {
        "first_ts": _ts(r["first_ts"], tst), "last_ts": _ts(r["last_ts"], tst),
        "channel": _channel_array(r["channel"], st.names),
        "id": pa.array(r["id"], pa.uint32()), "eff": pa.array(r["eff"] == 1),
        "mode": pa.array(r["mode"], pa.uint8()),
        "pid": _masked(r["pid"], pa.uint8(), r["has_pid"] == 1),
        "frame": _masked(r["frame"], pa.uint8(), (r["mode"] == 2) & (kind < 3)),
        "kind": _names(kind, "obd_kind"),
        "name": _names(name_idx, "obd_name", linear | (kind == 2) | (kind == 4)),
        "value": _masked(r["value"], pa.float64(), linear),
        "unit": _names(r["pid"], "obd_unit", linear),
        # the DTC code or the VIN; null for the other rows
        "text": pc.if_else(pa.array((kind == 3) | (kind == 4)), _text(texts),
                           pa.scalar(None, pa.string())),
        "data": _binary(n, *var),
    }
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))


def _dm1_batch(st, n, rows):
    r = np.frombuffer(rows, _DM1_DT, count=n)
    tst = _ts_type(st)
    has = r["has_dtc"] == 1
    cols = {
        "first_ts": _ts(r["first_ts"], tst), "last_ts": _ts(r["last_ts"], tst),
        "channel": _channel_array(r["channel"], st.names),
        "id": pa.array(r["id"], pa.uint32()),
        "dm": _names(r["pgn"] & 1, "dm"),          # 0xFECA DM1, 0xFECB DM2
        "pgn": pa.array(r["pgn"], pa.uint32()),
        "prio": pa.array(r["prio"], pa.uint8()), "sa": pa.array(r["sa"], pa.uint8()),
        "da": pa.array(r["da"], pa.uint8()), "tp": pa.array(r["tp"] == 1),
    }
    for k, lamp in enumerate(_LAMPS):
        cols[lamp] = _names(r["lamp"][:, k] if n else [], "lamp")
        cols[lamp + "_flash"] = _names(r["flash"][:, k] if n else [], "flash")
    cols.update({
        "spn": _masked(r["spn"], pa.uint32(), has), "fmi": _masked(r["fmi"], pa.uint8(), has),
        "oc": _masked(r["oc"], pa.uint8(), has), "cm": _masked(r["cm"], pa.uint8(), has),
    })
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))


def _batches(st, taken, tables, with_pos=False):
    """{table: RecordBatch} of what take() returned; with_pos: a last column `pos` (int32:
    the frame, in the chunk fed, whose feed handed the row out; -1: finish)."""
    out = {}
    for t in tables:
        if t == "messages":
            n, rows, var = taken["messages"]
            out[t] = _messages_batch(st, n, rows, var)
        elif t == "uds":
            n, rows, var, doff, dcode, dstat, ndtc = taken["uds"]
            out[t] = _uds_batch(st, n, rows, var, doff, dcode, dstat, ndtc)
        elif t == "obd2":
            n, rows, var, text = taken["obd"]
            out[t] = _obd_batch(st, n, rows, var, text)
        else:
            n, rows = taken["dm1"]
            out[t] = _dm1_batch(st, n, rows)
        if with_pos:
            dt = {"messages": _MSG_DT, "uds": _UDS_DT, "obd2": _OBD_DT, "dm1": _DM1_DT}[t]
            key = {"obd2": "obd"}.get(t, t)
            pos = np.frombuffer(taken[key][1], dt, count=taken[key][0])["pos"]
            out[t] = out[t].append_column("pos", pa.array(pos, pa.int32()))
    return out


# ---- readers ---------------------------------------------------------------------------

def _tables_arg(tables):
    tables = (tables,) if isinstance(tables, str) else tuple(tables)
    for t in tables:
        if t not in TABLES:
            raise ValueError(f"table must be one of {', '.join(TABLES)}, not {t!r}")
    return tables


def iter_file_tables(name, f, tables, protocols=PROTOCOLS, isotp_pairs=(), fast_pgns=(),
                     errors="raise", timers=None, chunk=CHUNK, stats=None):
    """(state, {table: RecordBatch}) per chunk of one log file, then once more for the
    messages still open at the file's end (status "end"). Every file starts a new
    reassembly: a message cut by the end of a file ends there. stats: a dict that gets
    the reassembly's counters (docs/DECODE.md) added."""
    tables = _tables_arg(tables)
    _check_args("frames", errors)
    want = 0
    for t in tables:
        want |= _WANT[t]
    r = _reassembler(want, protocols, isotp_pairs, fast_pgns, timers)
    st = None
    for st, b in _decode_file(name, f, chunk):
        if errors == "raise":
            _raise_first(st, b)
        if b["ncan"]:
            r.feed(b["ncan"], b["can_ts"], b["can_id"], b["can_flags"], b["can_channel"],
                   b["can_len"], b["can_offsets"], b["can_data"])
            yield st, _batches(st, r.take(), tables)
    r.finish()
    if st is not None:
        yield st, _batches(st, r.take(), tables)
    if stats is not None:
        for k, v in r.stats().items():
            stats[k] = stats.get(k, 0) + v


def iter_messages(source, table="messages", protocols=PROTOCOLS, isotp_pairs=(),
                  fast_pgns=(), errors="raise", timers=None):
    """pyarrow.RecordBatch after RecordBatch of one table ("messages", "uds", "obd2",
    "dm1"), one per chunk of log, file after file: memory in proportion to a chunk and
    the open sessions (a fixed arena), not to the log (read_messages is the whole
    table)."""
    (table,) = _tables_arg(table)
    for name, f in _iter_files(source):
        for _st, out in iter_file_tables(name, f, (table,), protocols, isotp_pairs,
                                         fast_pgns, errors, timers):
            if out[table].num_rows:
                yield out[table]


def _read(source, table, protocols, isotp_pairs, fast_pgns, errors, timers):
    batches, files, stats = [], [], {}
    for name, f in _iter_files(source):
        st = None
        for st, out in iter_file_tables(name, f, (table,), protocols, isotp_pairs,
                                        fast_pgns, errors, timers, stats=stats):
            if out[table].num_rows:
                batches.append(out[table])
        if st is not None:
            files.append(st)
    clocks = sorted({_clock(st) for st in files}) or ["realtime"]
    clock = clocks[0] if len(clocks) == 1 else "mixed"
    tst = TS_UTC if clock == "realtime" else pa.int64()
    if not batches:
        from .reader import _FileState
        e = _FileState("")
        batches = [_batches(e, _proto.Reassembler(_WANT[table]).take(), (table,))[table]]
    out = []
    for bt in batches:
        cols = [c.cast(pa.int64()).cast(tst) if f.name.endswith("_ts") else c
                for f, c in zip(bt.schema, bt.columns)]
        out.append(pa.RecordBatch.from_arrays(cols, names=bt.schema.names))
    t = pa.Table.from_batches(out).unify_dictionaries()
    return t.replace_schema_metadata({
        b"streamfat.clock": clock.encode(),
        b"streamfat.summary": json.dumps(_summary_meta(files)).encode(),
        b"streamfat.messages": json.dumps(stats).encode()})


def read_messages(source, protocols=PROTOCOLS, isotp_pairs=(), fast_pgns=(),
                  errors="raise", timers=None):
    """A pyarrow.Table of the messages reassembled from source (any source read_arrow
    takes), one row per message: first_ts, last_ts, channel, protocol (isotp, j1939,
    fast), status (ok, timeout, bad_seq, bad_length, replaced, aborted, end), id, eff,
    fc_id, mode, addr, sa, da, prio, pgn, fd, length, declared, frames, payload.
    protocols: which to reassemble; isotp_pairs: ISO-TP pairs besides the OBD-II / UDS ids
    ("6F1:612:ext" or (0x6F1, 0x612, "extended")); fast_pgns: NMEA 2000 fast-packet PGNs;
    timers: {"n_cr": ms, "t1": ms, ...}. Schema metadata streamfat.messages holds the
    reassembly's counters (message_stats())."""
    return _read(source, "messages", protocols, isotp_pairs, fast_pgns, errors, timers)


def read_uds(source, isotp_pairs=(), errors="raise", timers=None):
    """The UDS (ISO 14229-1) messages among the whole ISO-TP messages, decoded: one row a
    message (kind, sid, service, sub, nrc, nrc_name, did, data, avail_mask, dtcs,
    req_ts: the time of the request a response answers)."""
    return _read(source, "uds", ("isotp",), isotp_pairs, (), errors, timers)


def read_obd2(source, isotp_pairs=(), errors="raise", timers=None):
    """OBD-II (SAE J1979) answers, one row per item: a PID of mode 01/02 (name, value,
    unit), a DTC of mode 03/07/0A (text "P0301"), the VIN (mode 09 PID 02), another
    answer's bytes."""
    return _read(source, "obd2", ("isotp",), isotp_pairs, (), errors, timers)


def read_dm1(source, errors="raise", timers=None):
    """J1939 DM1 / DM2 (SAE J1939-73), from single frames and TP messages: one row per
    DTC (spn, fmi, oc, cm) with the message's lamps; one row without a DTC for a message
    that has none."""
    return _read(source, "dm1", ("j1939",), (), (), errors, timers)


def message_stats(table):
    """The reassembly's counters of a read_* table of this module (docs/DECODE.md,
    "Broken messages"): {"frames": ..., "messages_ok": ..., "isotp_orphan_cf": ...}."""
    meta = table.schema.metadata or {}
    return json.loads(meta.get(b"streamfat.messages", b"{}"))
