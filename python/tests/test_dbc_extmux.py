"""Extended multiplexing (SG_MUL_VAL_, value ranges, a multiplexer that is itself
multiplexed) through streamfat.dbc and the lake, against cantools' own decode_message on
every frame: a signal has a value exactly where cantools decodes one, and the same value."""
import os
import random

import pyarrow.parquet as pq
import pytest

import streamfat
import streamfat.dbc as sdbc
import streamfat.lake as slake
from test_messages import frames_log

cantools = pytest.importorskip("cantools")

DBC = """VERSION ""

NS_ :

BS_:

BU_: ECU

BO_ 300 ExtMux: 8 ECU
 SG_ Mux1 M : 0|8@1+ (1,0) [0|255] "" ECU
 SG_ Mux2 m1M : 8|8@1+ (1,0) [0|255] "" ECU
 SG_ SigA m0 : 16|16@1+ (1,0) [0|65535] "" ECU
 SG_ SigB m2 : 16|16@1+ (0.5,-10) [-10|32757.5] "" ECU
 SG_ SigC m3 : 32|8@1- (1,0) [-128|127] "" ECU
 SG_ SigD m100 : 47|16@0+ (1,0) [0|65535] "" ECU
 SG_ Plain : 56|8@1+ (1,0) [0|255] "" ECU

BO_ 2147484161 ExtMuxX: 8 ECU
 SG_ Sel M : 0|4@1+ (1,0) [0|15] "" ECU
 SG_ Lo m0 : 8|8@1+ (1,0) [0|255] "" ECU
 SG_ Hi m8 : 8|16@0- (0.25,0) [-8192|8191.75] "" ECU

SG_MUL_VAL_ 300 Mux2 Mux1 1-1, 3-5;
SG_MUL_VAL_ 300 SigA Mux1 0-0, 7-9;
SG_MUL_VAL_ 300 SigB Mux2 2-2, 10-20;
SG_MUL_VAL_ 300 SigC Mux2 3-9, 200-255;
SG_MUL_VAL_ 300 SigD Mux1 100-200;
SG_MUL_VAL_ 2147484161 Lo Sel 0-7;
SG_MUL_VAL_ 2147484161 Hi Sel 8-15;
"""


def frames(seed=2816, n=3000):
    """Frames whose multiplexer values hit the ranges, their edges and outside them."""
    rng = random.Random(seed)
    edges = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 20, 21, 99, 100, 200, 201, 255]
    out = []
    for _ in range(n):
        d = bytearray(rng.randrange(256) for _ in range(8))
        d[0] = rng.choice(edges) if rng.random() < 0.8 else rng.randrange(256)
        d[1] = rng.choice(edges) if rng.random() < 0.8 else rng.randrange(256)
        if rng.random() < 0.5:
            out.append((300, False, False, bytes(d)))
        else:
            out.append((0x201, True, False, bytes(d)))
    return out


@pytest.fixture
def extmux(tmp_path):
    dbc = tmp_path / "extmux.dbc"
    dbc.write_text(DBC)
    fr = frames()
    return dbc, frames_log(tmp_path / "LOG00001.SFL", fr), fr


def expected(dbc, fr):
    db = cantools.database.load_file(str(dbc))
    # the model really is the extended one: ranges became lists of selector values
    m = db.get_message_by_name("ExtMux")
    assert m.get_signal_by_name("SigB").multiplexer_ids == [2] + list(range(10, 21))
    assert m.get_signal_by_name("Mux2").multiplexer_signal == "Mux1"
    want = {}
    for cid, ext, _fd, data in fr:
        msg = db.get_message_by_frame_id(cid, force_extended_id=ext)
        try:
            w = msg.decode(data, decode_choices=False)
        except cantools.database.errors.DecodeError:
            w = None                  # a selector value of no group: cantools gives nothing
        want.setdefault(msg.name, []).append(w)
    return db, want


def check(db, want, tables):
    for name, rows in want.items():
        got = tables[name]
        msg = db.get_message_by_name(name)
        sigs = [s.name for s in msg.signals]
        assert len(got) == len(rows), name
        present = undefined = 0
        for g, w in zip(got, rows):
            if w is None:
                # the model's rule: a signal has a value when its multiplexer has one that
                # selects it (cantools' SG_MUL_VAL_ ranges, expanded)
                undefined += 1
                for s in msg.signals:
                    p = s.multiplexer_signal
                    if p is None:
                        assert g[s.name] is not None
                    elif g[p] is None or int(g[p]) not in s.multiplexer_ids:
                        assert g[s.name] is None, (name, s.name, g)
                    else:
                        assert g[s.name] is not None, (name, s.name, g)
                continue
            for s in sigs:
                if s in w:
                    present += 1
                    assert g[s] == pytest.approx(w[s]), (name, s, w)
                else:
                    assert g[s] is None, (name, s, w, g)
        assert present > len(rows) and undefined < 0.7 * len(rows)


def test_extended_multiplexing_split_frames(extmux):
    dbc, log, fr = extmux
    db, want = expected(dbc, fr)
    decoded, raw = sdbc.split_frames(streamfat.read_arrow(log), sdbc.load([dbc]))
    assert raw.num_rows == 0
    check(db, want, {k: v.to_pylist() for k, v in decoded.items()})
    # every selector range is exercised, in and out
    sigb = decoded["ExtMux"].column("SigB").to_pylist()
    assert any(v is None for v in sigb) and any(v is not None for v in sigb)


def test_extended_multiplexing_lake(extmux, tmp_path):
    dbc, log, fr = extmux
    db, want = expected(dbc, fr)
    lake = tmp_path / "lake"
    slake.ingest(lake, [log], [dbc], device="x")
    tables = {}
    for dp, _d, fs in os.walk(lake):
        for f in fs:
            if f.endswith(".parquet") and "message=ExtMux" in dp:
                name = dp.split("message=")[1].split(os.sep)[0]
                tables.setdefault(name, []).extend(pq.read_table(os.path.join(dp, f))
                                                   .to_pylist())
    for rows in tables.values():
        rows.sort(key=lambda r: r["ts"])
    check(db, want, tables)
