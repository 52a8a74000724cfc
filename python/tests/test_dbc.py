"""DBC decoding over columns (streamfat.dbc) against cantools' per-frame decode_message on the
same frames, signal by signal: little/big endian, signed, 9-byte spans, floats, scale and
offset, multiplexed signals, value tables (number and label), extended ids, CAN FD; frames
of the wrong length are counted, not decoded; a DBC cantools rejects is a DbcError."""
import math
import random
from pathlib import Path

import cantools
import numpy as np
import pyarrow as pa
import pytest

import streamfat
from streamfat import dbc
from conftest import log_lines

DBC = Path(__file__).parent / "data" / "vehicle.dbc"


def vehicle_lines(seed, n):
    """candump lines of frames for vehicle.dbc (and some it does not know) and the count of
    frames of the wrong length."""
    rng = random.Random(seed)
    t, out, bad_len = 1_700_000_000_000_000, [], 0
    for _ in range(n):
        t += rng.randint(1, 500)
        k = rng.choice(["eng", "eng", "brake", "cruise", "mux", "fd", "short", "unknown",
                        "eng_short"])
        if k == "eng":
            text = "100#" + rng.randbytes(8).hex()
        elif k == "eng_short":
            text, bad_len = "100#" + rng.randbytes(6).hex(), bad_len + 1
        elif k == "brake":
            text = "200#" + rng.randbytes(8).hex()
        elif k == "cruise":
            text = "18FEF100#" + rng.randbytes(8).hex()
        elif k == "mux":
            text = "300#" + bytes([rng.choice([0, 1, 2])]).hex() + rng.randbytes(7).hex()
        elif k == "fd":
            text = "400##1" + rng.randbytes(64).hex()
        elif k == "short":
            if rng.random() < 0.3:
                text, bad_len = "500#" + rng.randbytes(8).hex(), bad_len + 1
            else:
                text = "500#" + rng.randbytes(4).hex()
        else:
            text = f"{rng.randint(0x600, 0x7FF):03X}#" + rng.randbytes(3).hex()
        out.append(f"({t // 10**6}.{t % 10**6:06d}) can{rng.randint(0, 1)} {text}")
    return out, bad_len


@pytest.fixture(scope="module")
def vehicle_table(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("dbc")
    lines, bad = vehicle_lines(11, 4000)
    img = log_lines(d / "v.img", lines)
    return streamfat.read_arrow(img), bad


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b
    return a == b


def test_against_cantools(vehicle_table):
    table, bad_len = vehicle_table
    db = cantools.database.load_file(str(DBC))
    msgs = dbc.load([DBC])
    st = dbc.DecodeStats()
    decoded, raw = dbc.split_frames(table, msgs, st)
    assert sum(st.length_mismatch.values()) == bad_len
    assert set(st.length_mismatch) <= {"Engine", "Short"}
    assert st.frames + raw.num_rows == table.num_rows
    assert set(raw.column("id").to_pylist()) >= {0x100} if bad_len else True
    checked = 0
    for m in db.messages:
        t = decoded[m.name].to_pylist()
        sel = [r for r in table.to_pylist()
               if r["id"] == m.frame_id and r["ext"] == m.is_extended_frame
               and r["dlc"] == m.length]
        assert len(t) == len(sel) > 0, m.name
        for row, fr in zip(t, sel):
            assert row["ts"] == fr["ts"]
            try:
                want = db.decode_message(m.frame_id, fr["data"], decode_choices=False)
                labels = db.decode_message(m.frame_id, fr["data"], decode_choices=True)
            except cantools.database.errors.DecodeError:
                # a multiplexer value the DBC does not define: only the multiplexer
                want = {"Sel": fr["data"][0]}
                labels = {}
            for s in m.signals:
                assert same(row[s.name], want.get(s.name)), (m.name, s.name, row, want)
                if s.choices:
                    lab = labels.get(s.name)
                    exp = str(lab) if isinstance(lab, cantools.database.namedsignalvalue.NamedSignalValue) else None
                    assert row[s.name + "_label"] == exp
            checked += 1
    assert checked > 2000


def test_types(vehicle_table):
    table, _ = vehicle_table
    decoded, _ = dbc.split_frames(table, dbc.load([DBC]))
    e = decoded["Engine"].schema
    assert e.field("RPM").type == pa.float64() and e.field("Temp").type == pa.int64()
    assert e.field("Gear_label").type == pa.dictionary(pa.int32(), pa.string())
    assert e.field("ts").type == pa.timestamp("ns", tz="UTC")
    assert decoded["Mux"].column("A").null_count > 0       # other multiplexer values


def test_vectorised_no_per_frame_calls(vehicle_table, monkeypatch):
    table, _ = vehicle_table
    msgs = dbc.load([DBC])

    def boom(*a, **k):
        raise AssertionError("per-frame cantools call")
    monkeypatch.setattr(cantools.database.can.Message, "decode", boom)
    monkeypatch.setattr(cantools.database.can.Message, "decode_simple", boom)
    monkeypatch.setattr(cantools.database.Database, "decode_message", boom)
    decoded, _ = dbc.split_frames(table, msgs)
    assert decoded["Engine"].num_rows > 0


def test_bad_dbc(tmp_path):
    p = tmp_path / "overlap.dbc"
    p.write_text(DBC.read_text().replace("SG_ Wide : 43|20@0+", "SG_ Wide : 39|25@0+"))
    with pytest.raises(streamfat.DbcError, match="overlapping"):
        dbc.load([p])
    q = tmp_path / "junk.dbc"
    q.write_text("BO_ this is not a dbc\n")
    with pytest.raises(streamfat.DbcError):
        dbc.load([q])
    with pytest.raises(streamfat.DbcError, match="no such file"):
        dbc.load([tmp_path / "missing.dbc"])


# ---- random layouts (the C decoder, streamfat._dbc) against cantools ---------------------

def _random_dbc(rng):
    """A DBC text of random messages: Intel and Motorola signals of 1..64 bits, signed and
    unsigned, integer and float scale/offset, IEEE float32/float64, a multiplexer with
    signals in three groups, in 8-byte and 64-byte (CAN FD) messages; no two signals of a
    message share a bit. Returns (text, [(frame id, length, mux selector or None)])."""
    lines = ['VERSION ""', "", "NS_ :", "", "BS_:", "", "BU_: ECU", ""]
    valtypes, msgs = [], []
    for k in range(8):
        length = 64 if k % 4 == 3 else 8
        fid = 0x10 + k
        used = set()
        sigs = []

        def place(n, be, start=None):
            for _ in range(400):
                if be:
                    lin = rng.randrange(0, 8 * length - n + 1) if start is None else start
                    bits = [(j // 8) * 8 + 7 - j % 8 for j in range(lin, lin + n)]
                    st = (lin // 8) * 8 + 7 - lin % 8
                else:
                    st = rng.randrange(0, 8 * length - n + 1) if start is None else start
                    bits = list(range(st, st + n))
                if not used & set(bits):
                    used.update(bits)
                    return st
                if start is not None:
                    return None
            return None
        mux = k % 2 == 1
        if mux:
            st = place(3, False)
            sigs.append(f" SG_ S{k}sel M : {st}|3@1+ (1,0) [0|7] \"\" ECU")
        for j in range(rng.randint(4, 9)):
            n = rng.choice([1, 2, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 40, 48, 57, 63, 64,
                            rng.randint(1, 64)])
            be = rng.random() < 0.5
            flt = rng.random() < 0.15
            if flt:
                n = rng.choice([32, 64])
            st = place(n, be)
            if st is None:
                continue
            signed = "-" if (rng.random() < 0.5 and not flt) else "+"
            kind = rng.random()
            if kind < 0.4:
                scale, offset = "1", "0"
            elif kind < 0.6:
                scale, offset = str(rng.randint(2, 9)), str(rng.randint(-50, 50))
            else:
                scale = repr(rng.choice([0.1, 0.25, 0.001, 1.5, 3.0e-5]))
                offset = repr(rng.choice([0.0, -40.0, 12.5, 1e3]))
            m = ""
            if mux and j % 3:
                m = f" m{j % 3 - 1 + (j // 3) % 2}"
            name = f"S{k}s{j}"
            sigs.append(f" SG_ {name}{m} : {st}|{n}@{0 if be else 1}{signed} "
                        f"({scale},{offset}) [0|0] \"\" ECU")
            if flt:
                valtypes.append(f"SIG_VALTYPE_ {fid} {name} : {1 if n == 32 else 2};")
        lines.append(f"BO_ {fid} M{k}: {length} ECU")
        lines += sigs
        lines.append("")
        msgs.append((fid, length, mux))
    return "\n".join(lines + valtypes) + "\n", msgs


def _frames_table(rows):
    """A frames table (read_arrow's columns) of (id, data) pairs."""
    n = len(rows)
    return pa.table({
        "ts": pa.array(np.arange(n, dtype=np.int64) * 1000, pa.int64()).cast(
            pa.timestamp("ns", tz="UTC")),
        "channel": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                                  pa.array(["can0"])),
        "id": pa.array([i for i, _ in rows], pa.uint32()),
        "ext": pa.array([False] * n), "rtr": pa.array([False] * n),
        "fd": pa.array([len(d) > 8 for _, d in rows]), "brs": pa.array([False] * n),
        "esi": pa.array([False] * n), "err": pa.array([False] * n),
        "dlc": pa.array([len(d) for _, d in rows], pa.uint8()),
        "data": pa.array([d for _, d in rows], pa.binary())})


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_layouts_against_cantools(tmp_path, seed):
    rng = random.Random(seed)
    text, layout = _random_dbc(rng)
    p = tmp_path / f"r{seed}.dbc"
    p.write_text(text)
    db = cantools.database.load_file(str(p))
    msgs = dbc.load([p])
    rows = []
    for _ in range(3000):
        fid, length, _mux = rng.choice(layout)
        data = bytearray(rng.randbytes(length))
        if rng.random() < 0.2:                  # extremes: all ones, all zeros
            data = bytearray(b"\xff" * length if rng.random() < 0.5 else bytes(length))
        if rng.random() < 0.03:                 # the wrong length: counted, not decoded
            data = data[:length - 1]
        rows.append((fid, bytes(data)))
    rows.append((0x7FF, b"\x01\x02"))           # no DBC message
    table = _frames_table(rows)
    st = dbc.DecodeStats()
    decoded, raw = dbc.split_frames(table, msgs, st)
    assert sum(st.length_mismatch.values()) == sum(
        1 for fid, d in rows if fid != 0x7FF and len(d) != msgs[(fid, False)].length), seed
    assert st.frames + raw.num_rows == len(rows)
    checked = 0
    for fid, length, _mux in layout:
        m = db.get_message_by_frame_id(fid)
        sel = [d for i, d in rows if i == fid and len(d) == length]
        got = decoded[m.name].to_pylist() if sel else []
        assert len(got) == len(sel), (seed, m.name)
        for row, d in zip(got, sel):
            try:
                want = db.decode_message(fid, d, decode_choices=False)
            except cantools.database.errors.DecodeError:
                want = None                       # a selector value of no group
            for s in m.signals:
                if want is None:
                    exp = row[s.name] if s.multiplexer_signal is None else None
                    if s.multiplexer_signal is None:
                        assert row[s.name] is not None, (seed, m.name, s.name)
                else:
                    exp = want.get(s.name)
                if isinstance(row[s.name], float) and type(exp) is int:
                    # an integer signal whose values pass int64: float64, the nearest double
                    if abs(exp) < 2**53:
                        assert row[s.name] == exp, (seed, m.name, s.name, d.hex())
                    else:
                        assert math.isclose(row[s.name], exp, rel_tol=1e-15), (seed, s.name)
                    continue
                assert same(row[s.name], exp), (seed, m.name, s.name, d.hex(), row[s.name],
                                                exp)
                if exp is not None and not isinstance(exp, float):
                    assert type(row[s.name]) is int
                checked += 1
    assert checked > 10000, checked


def test_sliced_chunked_and_empty_tables(vehicle_table):
    """A table that is a slice (offsets into shared buffers) or of several chunks decodes
    like a fresh copy of its rows; an empty one gives no messages."""
    table, _ = vehicle_table
    msgs = dbc.load([DBC])

    def rows(d):
        return {k: [{c: (None if isinstance(x, float) and math.isnan(x) else x)
                     for c, x in r.items()} for r in v.to_pylist()] for k, v in d.items()}
    sl = table.slice(1234, 1500)
    copy = pa.table({c: pa.array(sl.column(c).to_pylist(), sl.column(c).type)
                     for c in sl.column_names})
    a, ra = dbc.split_frames(sl, msgs)
    b, rb = dbc.split_frames(copy, msgs)
    assert rows(a) == rows(b) and ra.to_pylist() == rb.to_pylist()
    chunked = pa.concat_tables([table.slice(0, 1000), table.slice(1000)])
    full, _ = dbc.split_frames(table, msgs)
    c, _ = dbc.split_frames(chunked, msgs)
    assert rows(c) == rows(full)
    e, re_ = dbc.split_frames(table.slice(0, 0), msgs)
    assert e == {} and re_.num_rows == 0
