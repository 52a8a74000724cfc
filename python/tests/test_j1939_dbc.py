"""J1939 DBC signals (streamfat.dbc, the lake; docs/LAKE.md "J1939"): a DBC message with a
J1939 id (VFrameFormat J1939PG, ProtocolType J1939) takes the frames of its PGN whatever
their source address and priority, as asammdf's extract_bus_logging does; TP messages
(BAM) decode like single frames; the source address is a column. Checked against cantools'
decode_message (the signals) and asammdf's extract_bus_logging (which frames match, and
their values) on the same log; the lake's new tables (_isotp, _uds, _obd2, _j1939_dm1,
_j1939_tp) read by DuckDB."""
import os
import re

import pyarrow.parquet as pq
import pytest

import streamfat
import streamfat.dbc as sdbc
import streamfat.lake as slake
from conftest import sf
from test_messages import dm1_bytes, frames_log, isotp_frames

cantools = pytest.importorskip("cantools")

DBC = """VERSION ""

NS_ :

BS_:

BU_: ECU

BO_ 2364540158 EEC1: 8 ECU
 SG_ Torque : 16|8@1+ (1,-125) [-125|125] "%" ECU
 SG_ EngineSpeed : 24|16@1+ (0.125,0) [0|8031.875] "rpm" ECU

BO_ 2565800190 PropA: 8 ECU
 SG_ Cmd : 0|8@1+ (1,0) [0|255] "" ECU
 SG_ Level : 15|12@0- (0.5,0) [-1024|1023.5] "" ECU

BO_ 2566852862 Big: 20 ECU
 SG_ First : 0|16@1+ (1,0) [0|65535] "" ECU
 SG_ Mid : 64|32@1+ (0.5,0) [0|2147483647.5] "" ECU
 SG_ Last : 151|16@0- (1,0) [-32768|32767] "" ECU

BA_DEF_  "ProtocolType" STRING ;
BA_DEF_ BO_  "VFrameFormat" ENUM  "StandardCAN","ExtendedCAN","reserved","J1939PG";
BA_DEF_DEF_  "ProtocolType" "";
BA_DEF_DEF_  "VFrameFormat" "J1939PG";
BA_ "ProtocolType" "J1939";
BA_ "VFrameFormat" BO_ 2364540158 3;
BA_ "VFrameFormat" BO_ 2565800190 3;
BA_ "VFrameFormat" BO_ 2566852862 3;
"""


def j1939_log(tmp_path):
    """Frames of EEC1 (PGN 0xF004) from four source addresses at priorities 3 and 6, PropA
    (PDU1 0xEF00) to two destinations, Big (PGN 0xFF10, 20 bytes) by BAM from two sources,
    a DM1, and frames of PGNs the DBC does not have."""
    frames = []
    for i in range(40):
        sa = (0x00, 0x01, 0x17, 0xFE)[i % 4]
        prio = 3 if i % 3 else 6
        data = bytes([0xFF, 0xFF, 100 + i, (i * 37) & 0xFF, i, 0xFF, 0xFF, 0xFF])
        frames.append(((prio << 26) | (0xF004 << 8) | sa, True, False, data))
        frames.append(((6 << 26) | (0xEF00 << 8) | ((0x21, 0x33)[i % 2] << 8) | sa, True,
                       False, bytes([i, (i * 11) & 0xFF, (i * 7) & 0xFF, 0, 0, 0, 0, 0])))
        frames.append((0x18FEF100 | sa, True, False, bytes(8)))
        if i % 10 == 0:
            big = bytes((k * 13 + i) & 0xFF for k in range(20))
            src = 0x17 if i % 20 else 0x03
            frames.append((0x1CECFF00 | src, True, False,
                           bytes([32, 20, 0, 3, 0xFF, 0x10, 0xFF, 0])))
            for k in range(3):
                c = big[7 * k:7 * k + 7]
                frames.append((0x1CEBFF00 | src, True, False,
                               bytes([k + 1]) + c + b"\xff" * (7 - len(c))))
    frames.append((0x18FECA00, True, False, dm1_bytes(0x44, [(190, 2, 5)]) + b"\xff\xff"))
    return frames_log(tmp_path / "LOG00001.SFL", frames), frames


@pytest.fixture
def j1939(tmp_path):
    p = tmp_path / "j1939.dbc"
    p.write_text(DBC)
    log, frames = j1939_log(tmp_path)
    return p, log, frames


def cantools_rows(db, frames):
    """What cantools decodes, matching frames by PGN (the rule under test) and big
    messages from the BAM payloads: {message: [(sa, {signal: value})]}."""
    want = {}
    by_pgn = {sdbc.j1939_pgn([m.frame_id])[0]: m for m in db.messages}
    bam = {}
    for cid, _e, _f, data in frames:
        pgn = int(sdbc.j1939_pgn([cid])[0])
        sa = cid & 0xFF
        if pgn == 0xEC00 and data[0] == 32:
            bam[sa] = (data[5] | data[6] << 8 | data[7] << 16, data[1], b"")
        elif pgn == 0xEB00 and sa in bam:
            p, size, got = bam[sa]
            got += data[1:]
            bam[sa] = (p, size, got)
            if len(got) >= size:
                m = by_pgn.get(p)
                if m is not None:
                    want.setdefault(m.name, []).append((sa, m.decode(got[:size], False)))
                del bam[sa]
        elif pgn in by_pgn and by_pgn[pgn].length == len(data):
            m = by_pgn[pgn]
            want.setdefault(m.name, []).append((sa, m.decode(data, False)))
    return want


def test_j1939_split_frames_against_cantools(j1939):
    dbc, log, frames = j1939
    msgs = sdbc.load([dbc])
    assert all(sdbc.is_j1939(m) for m in msgs.values())
    want = cantools_rows(cantools.database.load_file(str(dbc)), frames)
    decoded, raw = sdbc.split_frames(streamfat.read_arrow(log), msgs)
    tp, rest = sdbc.split_j1939_messages(streamfat.read_messages(log), msgs)
    assert set(decoded) == {"EEC1", "PropA"} and set(tp) == {"Big"}
    decoded.update(tp)
    for name, rows in want.items():
        t = decoded[name].to_pylist()
        assert len(t) == len(rows), name
        for r, (sa, vals) in zip(t, rows):
            assert r["sa"] == sa
            for k, v in vals.items():
                assert r[k] == pytest.approx(v), (name, k)
    assert len(want["EEC1"]) == 40 and len(want["PropA"]) == 40 and len(want["Big"]) == 4
    assert {r["sa"] for r in decoded["EEC1"].to_pylist()} == {0x00, 0x01, 0x17, 0xFE}
    # the frames of PGNs the DBC does not have stay raw; TP.CM / TP.DT frames too
    assert 0x18FEF100 in set(raw.column("id").to_pylist())
    assert rest.num_rows == 0


def test_j1939_against_asammdf_extract_bus_logging(j1939, tmp_path, sfbin):
    """The same log as MF4 (streamfat export -f mf4): extract_bus_logging's values per
    signal (single frames: it reassembles no TP) equal ours, as sorted lists."""
    asammdf = pytest.importorskip("asammdf")
    dbc, log, _frames = j1939
    mf4 = tmp_path / "j.mf4"
    sf("export", "-f", "mf4", "-o", mf4, log)
    out = asammdf.MDF(str(mf4)).extract_bus_logging(database_files={"CAN": [(str(dbc), 0)]})
    # one group per id, named "CAN1 ID=0x18F00417 EEC1 PGN=0xF004 SA=0x17"; each takes
    # the frames of its PGN and SA, so ids that differ in priority only hold the same
    # frames twice (asammdf 8.8): one group per message and SA is kept
    got, seen = {}, set()
    for gi, g in enumerate(out.groups):
        m = re.match(r"CAN\d+ ID=0x[0-9A-F]+ (\S+) PGN=0x[0-9A-F]+ SA=0x([0-9A-F]+)",
                     g.channel_group.comment or "")
        if not m or m.groups() in seen:
            continue
        seen.add(m.groups())
        for ch in g.channels[1:]:
            got.setdefault((m.group(1), ch.name), []).extend(
                (int(m.group(2), 16), float(v)) for v in out.get(ch.name, group=gi).samples)
    decoded, _raw = sdbc.split_frames(streamfat.read_arrow(log), sdbc.load([dbc]))
    for name, sigs in (("EEC1", ("EngineSpeed", "Torque")), ("PropA", ("Cmd", "Level"))):
        for s in sigs:
            ours = sorted((r["sa"], float(r[s])) for r in decoded[name].to_pylist())
            assert sorted(got.get((name, s), [])) == ours, s
    assert len(seen) == 8


def test_lake_j1939_and_message_tables(j1939, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    dbc, log, _frames = j1939
    # an OBD-II / UDS session beside the J1939 traffic, in a second log
    d2 = tmp_path / "obd"
    d2.mkdir()
    frames_log(d2 / "LOG00002.SFL",
               isotp_frames(0x7E0, 0x7E8, [bytes([0x22, 0xF1, 0x90])]) +
               isotp_frames(0x7E8, 0x7E0, [bytes([0x62, 0xF1, 0x90]) + b"WDB1234567890ABCD",
                                           bytes([0x41, 0x0C, 0x1A, 0xF8, 0x0D, 0x40]),
                                           bytes([0x49, 0x02, 0x01]) + b"1HGCM82633A004352"]),
               file_id=0x5678)
    lake = tmp_path / "lake"
    slake.ingest(lake, [log, d2 / "LOG00002.SFL"], [dbc], device="t1")
    parts = {os.path.relpath(os.path.join(dp, f), lake).split(os.sep)[1]
             for dp, _d, fs in os.walk(lake) for f in fs if f.endswith(".parquet")}
    assert {"message=EEC1", "message=PropA", "message=Big", "message=_j1939_dm1",
            "message=_isotp", "message=_uds", "message=_obd2", "message=_raw"} <= parts
    q = lambda sql: duckdb.sql(sql.replace("LAKE", f"read_parquet('{lake}/**/*.parquet', "
                                           "hive_partitioning = true, union_by_name = true)")
                               ).fetchall()
    assert q("SELECT count(*), count(DISTINCT sa) FROM LAKE WHERE message = 'EEC1'") == \
        [(40, 4)]
    assert q("SELECT sa, First FROM LAKE WHERE message = 'Big' ORDER BY ts") == \
        [(3, 0 | 13 << 8), (0x17, 10 | 23 << 8), (3, 20 | 33 << 8), (0x17, 30 | 43 << 8)]
    assert q("SELECT spn, fmi, oc, mil FROM LAKE WHERE message = '_j1939_dm1'") == \
        [(190, 2, 5, "on")]
    assert q("SELECT service, did FROM LAKE WHERE message = '_uds' ORDER BY ts") == \
        [("ReadDataByIdentifier", 0xF190)] * 2
    assert q("SELECT name, value, unit FROM LAKE WHERE message = '_obd2' AND kind = 'value' "
             "ORDER BY pid") == [("rpm", 1726.0, "rpm"), ("speed", 64.0, "km/h")]
    assert q("SELECT count(*) FROM LAKE WHERE message = '_isotp'") == [(4,)]
    # idempotent: a second run adds nothing
    before = q("SELECT count(*) FROM LAKE")
    slake.ingest(lake, [log, d2 / "LOG00002.SFL"], [dbc], device="t1")
    assert q("SELECT count(*) FROM LAKE") == before
    # every part reads on its own (pyarrow)
    for dp, _d, fs in os.walk(lake):
        for f in fs:
            if f.endswith(".parquet"):
                pq.read_table(os.path.join(dp, f))


def test_lake_isotp_pair_option(j1939, tmp_path, capsys):
    """The lake's --isotp-pair and --fast-pgn: a named pair's messages land in _isotp; a
    malformed pair is one line and exit status 2, before anything is written."""
    _dbc, log, _frames = j1939
    bad = tmp_path / "bad"
    assert slake.main(["--out", str(bad), "--isotp-pair", "7E0", str(log)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "A:B" in err[0] and not bad.exists()
    d = tmp_path / "pair"
    d.mkdir()
    frames_log(d / "LOG00001.SFL", isotp_frames(0x6F1, 0x612, [bytes(range(30))]))
    lake = tmp_path / "lake"
    assert slake.main(["--out", str(lake), "--isotp-pair", "6F1:612", "--fast-pgn",
                       "129029", str(d / "LOG00001.SFL")]) == 0
    parts = [os.path.join(dp, f) for dp, _d, fs in os.walk(lake) for f in fs
             if f.endswith(".parquet") and "message=_isotp" in dp]
    assert [r["payload"] for p in parts for r in pq.read_table(p).to_pylist()] == \
        [bytes(range(30))]
