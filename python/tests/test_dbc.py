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
