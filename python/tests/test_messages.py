"""streamfat.read_messages and the decoded tables (streamfat.messages, docs/PYTHON.md
"Messages") against references we did not write and against `streamfat export`:

- the messages table equals `export -f messages`, line for line and column for column, on a
  log of can-isotp 2.0.7 transfers (every addressing mode, CAN FD), J1939 BAMs and NMEA 2000
  fast packets (tests/scripts/proto_export.py makes it), and its ISO-TP payloads equal what
  can-isotp's receivers make of the same frames (proto_export.check);
- J1939 RTS/CTS and BAM sent by can-j1939 2.0.12 come back with their PGN, SA and DA;
- udsoncan 1.26.1 parses every UDS response of read_uds, and agrees on service, NRC, DID;
  python-OBD 0.7.3's decoders give read_obd2's values; DM1s built by J1939-73's layout come
  back from read_dm1 (single frames and BAM);
- the batch form iter_messages gives the same rows and its peak RSS does not grow with the
  log (a child process, two log sizes).
Skipped without can-isotp / can-j1939 / udsoncan / obd (tests/python-requirements.txt)."""
import json
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import streamfat
from conftest import SCRIPTS, sf
import sflwrite

isotp = pytest.importorskip("isotp")
sys.path.insert(0, str(SCRIPTS))
import proto_export  # noqa: E402

START = 1_700_000_000_000_000_000


def candump_to_log(tmp_path, candump):
    img = tmp_path / "disk.img"
    sf("log", "--mkfs", "exfat", "--size", "64M", "--source", "stdin", "--no-direct", "-q",
       img, input=open(candump, "rb").read())
    return img


def frames_log(path, frames, step_ns=1_000_000, channel=0, file_id=0x1234):
    """A .SFL of (id, eff, fd, data) frames, step_ns apart (tests/sflwrite.py)."""
    recs = [sflwrite.can(channel, START + i * step_ns, cid, data,
                         flags=(1 if eff else 0) | (8 if fd else 0))
            for i, (cid, eff, fd, data) in enumerate(frames)]
    blocks, cur, size = [], [], 0
    for r in recs:
        if size + len(r) > 4096 - 48:
            blocks.append(cur)
            cur, size = [], 0
        cur.append(r)
        size += len(r)
    if cur:
        blocks.append(cur)
    path.write_bytes(sflwrite.sfl(blocks, B=4096, file_id=file_id))
    return path


def export_jsonl(img, fmt="messages", *extra):
    r = sf("export", "-f", fmt, *extra, img, "LOG00001.SFL")
    return [json.loads(line) for line in r.stdout.decode().splitlines()]


def as_export(row):
    """A read_messages row in export -f messages' JSON form."""
    eff = row["eff"]
    hexid = (lambda v: None if v is None else "%0*X" % (8 if eff else 3, v))
    return {"proto": row["protocol"], "status": row["status"], "iface": row["channel"],
            "id": hexid(row["id"]), "eff": eff, "fc_id": hexid(row["fc_id"]),
            "mode": row["mode"], "addr": row["addr"], "sa": row["sa"], "da": row["da"],
            "pgn": row["pgn"], "ts_first": row["first_ts"], "ts_last": row["last_ts"],
            "length": row["length"], "declared": row["declared"], "frames": row["frames"],
            "data": row["payload"].hex().upper()}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("mixed")
    proto_export.make(str(d / "mixed.log"))
    return d / "mixed.log", candump_to_log(d, d / "mixed.log")


def test_read_messages_equals_export(mixed):
    candump, img = mixed
    pairs = ["6F1:612:ext", "18CE10F1:18CEF110:mixed"]
    t = streamfat.read_messages(img, fast_pgns=[129029], isotp_pairs=pairs)
    assert t.num_rows >= 40
    ours = [as_export(r) for r in t.cast(t.schema.set(
        t.schema.get_field_index("first_ts"), pa.field("first_ts", pa.int64()))
        .set(t.schema.get_field_index("last_ts"), pa.field("last_ts", pa.int64())))
        .to_pylist()]
    theirs = export_jsonl(img, "messages", "--fast-pgn", "129029", "--isotp-pair", pairs[0],
                          "--isotp-pair", pairs[1])
    for m in theirs:
        del m["channel"]
    assert ours == theirs
    assert set(t.column("protocol").to_pylist()) == {"isotp", "j1939", "fast"}
    # the ISO-TP payloads are what can-isotp's receivers make of the same frames
    jl = candump.parent / "ours.jsonl"
    jl.write_text("".join(json.dumps(dict(m, channel=0)) + "\n" for m in ours))
    proto_export.check(str(candump), str(jl))


def test_batches_equal_table(mixed):
    _, img = mixed
    t = streamfat.read_messages(img, fast_pgns=[129029])
    for table in ("messages", "uds", "obd2", "dm1"):
        whole = getattr(streamfat, {"messages": "read_messages", "uds": "read_uds",
                                    "obd2": "read_obd2", "dm1": "read_dm1"}[table])
        kw = {"fast_pgns": [129029]} if table == "messages" else {}
        a = whole(img, **kw)
        b = list(streamfat.iter_messages(img, table, **kw))
        rows = [r for bt in b for r in bt.to_pylist()]
        assert rows == a.to_pylist(), table
    assert t.num_rows == sum(1 for _ in streamfat.read_messages(img, fast_pgns=[129029])
                             .column("payload"))


def test_protocols_and_pairs(mixed):
    _, img = mixed
    only = streamfat.read_messages(img, protocols=("j1939",))
    assert set(only.column("protocol").to_pylist()) == {"j1939"}
    assert streamfat.read_messages(img, protocols=()).num_rows == 0
    with pytest.raises(ValueError, match="none of"):
        streamfat.read_messages(img, protocols=("can",))
    with pytest.raises(ValueError, match="A:B"):
        streamfat.read_messages(img, isotp_pairs=["6F1"])
    # the extended pair of the log (0x6F1 / 0x612, target address in the first byte) comes
    # only when named, as export --isotp-pair
    named = streamfat.read_messages(img, isotp_pairs=["6F1:612:ext"])
    plain = streamfat.read_messages(img)
    ext = [r for r in named.to_pylist() if r["mode"] == "extended"]
    assert ext and not [r for r in plain.to_pylist() if r["mode"] == "extended"]
    assert named.num_rows > plain.num_rows


def test_broken_messages_and_stats(tmp_path):
    """A cut ISO-TP message (a missing CF) and one still open when the log ends: their
    status, what arrived, the counters (docs/DECODE.md, "Broken messages")."""
    payload = bytes(range(40))
    ff = (0x7E8, False, False, bytes([0x10, 40]) + payload[:6])
    cfs = [(0x7E8, False, False, bytes([0x20 | ((k + 1) & 15)]) + payload[6 + 7 * k:13 + 7 * k])
           for k in range(5)]
    frames = [ff, cfs[0], cfs[2], cfs[3], ff, cfs[0]]
    log = frames_log(tmp_path / "LOG00001.SFL", frames)
    t = streamfat.read_messages(log)
    got = [(r["status"], r["length"], r["declared"], r["payload"]) for r in t.to_pylist()]
    assert got == [("bad_seq", 13, 40, payload[:13]), ("end", 13, 40, payload[:13])]
    st = streamfat.message_stats(t)
    assert st["isotp_wrong_sn"] == 1 and st["isotp_orphan_cf"] == 1 and st["ended"] == 1


def test_j1939_rts_cts_and_bam(tmp_path):
    j1939_21 = pytest.importorskip("j1939.j1939_21")
    import time
    bus, got = [], []
    stacks = {}

    def make(addr):
        def send(can_id, extended, data):
            bus.append((can_id, bytes(data)))
            for other, s in stacks.items():
                if other != addr:
                    s.notify(can_id, bytearray(data), 0.0)

        def subs(prio, pgn, sa, da, ts, data):
            if addr == 0x21 or da == 0xFF:
                got.append((pgn, sa, da, bytes(data)))
        return j1939_21.J1939_21(send, lambda: None, subs, 3, None, None,
                                 lambda da, a=addr: da == a)

    stacks[0xF9], stacks[0x21] = make(0xF9), make(0x21)
    sent = []
    for i, (size, dest) in enumerate([(9, 0x21), (100, 0xFF), (1785, 0x21), (300, 0xFF)]):
        data = bytearray((k * 7 + i) & 0xFF for k in range(size))
        pf, ps = (0xFE, 0xE0 + i) if dest == 0xFF else (0xD9, dest)
        assert stacks[0xF9].send_pgn(0, pf, ps, 6, 0xF9, data, 0, None)
        sent.append(((pf << 8 | ps) if dest == 0xFF else pf << 8, 0xF9, dest, bytes(data)))
        for _ in range(1000):
            if not stacks[0xF9]._snd_buffer:
                break
            stacks[0xF9].async_job_thread(time.time() + 1000.0)
    log = frames_log(tmp_path / "LOG00001.SFL", [(c, True, False, d) for c, d in bus])
    t = streamfat.read_messages(log)
    ours = [(r["pgn"], r["sa"], r["da"], r["payload"]) for r in t.to_pylist()
            if r["status"] == "ok"]
    assert ours == sent
    assert set(t.column("protocol").to_pylist()) == {"j1939"}


# ---- decoded tables --------------------------------------------------------------------

def isotp_frames(txid, rxid, payloads):
    """can-isotp's sender and receiver: the frames of each payload, both directions."""
    A, AM = isotp.Address, isotp.AddressingMode
    out = []
    for p in payloads:
        out += [(c, e, f, d) for c, e, f, d in proto_export.transfer(
            A(AM.Normal_11bits, txid=txid, rxid=rxid), A(AM.Normal_11bits, txid=rxid, rxid=txid),
            p, False)]
    return out


def norm(name):
    return "".join(c for c in name.lower() if c.isalnum())


def test_uds_parsed_by_udsoncan(tmp_path):
    udsoncan = pytest.importorskip("udsoncan")
    from udsoncan import Response
    rng = random.Random(2814)
    msgs = [bytes([0x22, 0xF1, 0x90]), bytes([0x62, 0xF1, 0x90]) + b"WDB1234567890ABCD",
            bytes([0x7F, 0x22, 0x31]), bytes([0x7F, 0x10, 0x78]), bytes([0x50, 0x03, 0, 50, 1, 244]),
            bytes([0x59, 0x02, 0xFF]) + bytes(rng.randrange(256) for _ in range(4 * 30)),
            bytes([0x67, 0x01]) + bytes(range(16)), bytes([0x7E, 0x00]),
            bytes([0x71, 0x01, 0x02, 0x03]) + bytes(300), bytes([0x6E, 0x12, 0x34])]
    for i in range(60):
        msgs.append(bytes([0x62, rng.randrange(256), rng.randrange(256)]) +
                    bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200))))
        msgs.append(bytes([0x7F, rng.choice((0x10, 0x11, 0x22, 0x27, 0x2E, 0x31, 0x19)),
                           rng.choice((0x10, 0x11, 0x12, 0x13, 0x22, 0x31, 0x33, 0x35, 0x78))]))
    # the request on 0x7E0, the answers on 0x7E8
    log = frames_log(tmp_path / "LOG00001.SFL", isotp_frames(0x7E0, 0x7E8, msgs[:1]) +
                     isotp_frames(0x7E8, 0x7E0, msgs[1:]))
    t = streamfat.read_uds(log)
    rows = t.to_pylist()
    assert [bytes([r["sid"] | 0x40]) if r["kind"] == "positive" else None
            for r in rows][1] == b"\x62"
    assert len(rows) == len(msgs)
    responses = 0
    for m, r in zip(msgs, rows):
        if r["kind"] == "request":
            continue
        resp = Response.from_payload(m)
        assert resp.valid, (m.hex(), resp.invalid_reason)
        responses += 1
        assert resp.service.request_id() == r["sid"]
        assert resp.positive == (r["kind"] == "positive")
        if not resp.positive:
            assert resp.code == r["nrc"]
            assert r["nrc_name"] is not None
            # the same name but for case and underscores (udsoncan: RequestOutOfRange)
            assert norm(Response.Code.get_name(resp.code)) == norm(r["nrc_name"])
        if r["did"] is not None:
            assert int.from_bytes(m[1:3], "big") == r["did"]
        if r["dtcs"] is not None:
            assert len(r["dtcs"]) == (len(m) - 3) // 4
            assert [d["dtc"] for d in r["dtcs"]] == [int.from_bytes(m[3 + 4 * k:6 + 4 * k], "big")
                                                    for k in range(len(r["dtcs"]))]
    assert responses == len(msgs) - 1
    # the answer to 0x22 F190 names its request's time
    assert rows[1]["req_ts"] == rows[0]["first_ts"]


def test_obd2_against_python_obd(tmp_path):
    obd = pytest.importorskip("obd")
    rng = random.Random(2815)
    pids = [0x04, 0x05, 0x0C, 0x0D, 0x0F, 0x10, 0x11, 0x1F, 0x2F, 0x42, 0x5E, 0x46]
    answers, expect = [], []
    for i in range(200):
        pid = rng.choice(pids)
        cmd = obd.commands[1][pid]
        data = bytes(rng.randrange(256) for _ in range(cmd.bytes - 2))
        answers.append(bytes([0x41, pid]) + data)
        expect.append((pid, cmd))
    answers.append(bytes([0x43, 2, 0x01, 0x43, 0xC1, 0x23]))
    answers.append(bytes([0x49, 0x02, 0x01]) + b"1HGCM82633A004352")
    log = frames_log(tmp_path / "LOG00001.SFL", isotp_frames(0x7E8, 0x7E0, answers))
    t = streamfat.read_obd2(log)
    rows = t.to_pylist()
    vals = [r for r in rows if r["mode"] == 1]
    assert len(vals) == 200
    from obd.protocols.protocol import Message
    for r, (pid, cmd), a in zip(vals, expect, answers):
        assert r["pid"] == pid
        msg = Message([])
        msg.data = bytearray(a)
        v = cmd.decode([msg])
        mag = v.magnitude if hasattr(v, "magnitude") else v
        assert r["value"] == pytest.approx(float(mag), rel=1e-9, abs=1e-9), (pid, a.hex())
    dtc = [r["text"] for r in rows if r["kind"] == "dtc"]
    assert dtc == ["P0143", "U0123"]
    assert [r["text"] for r in rows if r["kind"] == "vin"] == ["1HGCM82633A004352"]


def dm1_bytes(lamps, dtcs):
    b = bytes([lamps, 0xFF])
    for spn, fmi, oc in dtcs:
        b += bytes([spn & 0xFF, (spn >> 8) & 0xFF, ((spn >> 16) & 7) << 5 | fmi, oc & 0x7F])
    return b


def test_dm1_single_and_bam(tmp_path):
    one = dm1_bytes(0b01000100, [(190, 2, 5)]) + b"\xff\xff"
    many = dm1_bytes(0b00010000, [(100 + k, k % 32, k) for k in range(10)])
    none = dm1_bytes(0, [(0, 0, 0)]) + b"\xff\xff"
    frames = [(0x18FECA00, True, False, one), (0x18FECA03, True, False, none)]
    size, pk = len(many), (len(many) + 6) // 7
    frames.append((0x1CECFF17, True, False, bytes([32, size, 0, pk, 0xFF, 0xCA, 0xFE, 0])))
    for k in range(pk):
        c = many[7 * k:7 * k + 7]
        frames.append((0x1CEBFF17, True, False, bytes([k + 1]) + c + b"\xff" * (7 - len(c))))
    log = frames_log(tmp_path / "LOG00001.SFL", frames)
    rows = streamfat.read_dm1(log).to_pylist()
    assert [(r["sa"], r["tp"], r["spn"], r["fmi"], r["oc"]) for r in rows] == (
        [(0, False, 190, 2, 5), (3, False, None, None, None)] +
        [(0x17, True, 100 + k, k % 32, k) for k in range(10)])
    assert rows[0]["mil"] == "on" and rows[0]["amber_warning"] == "on"
    assert rows[0]["red_stop"] == "off" and rows[0]["dm"] == "DM1"


# ---- memory of the batch form ----------------------------------------------------------

# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child's would start at
# what the forking pytest held. The peak after the small log's stream (its second: the
# first pass sets up memory every pass keeps, about 4 MiB), after the big one's, and after
# reading the big one whole.
RSS_CHILD = r"""
import sys, streamfat
from streamfat import messages
from streamfat.reader import _iter_files

def hwm():
    return int([l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1])

def it(src):                      # iter_messages' loop, with chunks of 256 KiB
    n = 0
    for name, f in _iter_files(src):
        for _st, out in messages.iter_file_tables(name, f, ("messages",), chunk=256 << 10):
            n += out["messages"].num_rows
    return n

small, big = sys.argv[1:3]
it(small)                         # a first pass sets up what every pass holds
out = [it(small), hwm(), it(big), hwm()]
out += [streamfat.read_messages(big).num_rows, hwm()]
print(*out)
"""


def test_iter_messages_rss_flat(tmp_path):
    """iter_messages over a log and over one 8 times its size (CAN FD ISO-TP answers of
    4,095 bytes, 4 KiB of payload per 70 frames, between plain frames; chunks of 256 KiB,
    so that both logs are many chunks): the peak RSS of the process grows by less than 4
    MiB, where read_messages' (the whole table, 16 MB of payload on the larger log) grows
    by more than 12 MiB: the measure sees a table."""
    payload = bytes(k * 7 & 0xFF for k in range(4095))
    lines = ["can0 7E8##0" + (bytes([0x1F, 0xFF]) + payload[:62]).hex()]
    rest, sn = payload[62:], 1
    while rest:
        chunk, rest = rest[:63], rest[63:]
        lines.append("can0 7E8##0" + (bytes([0x20 | sn]) + chunk).ljust(64, b"\xcc").hex())
        sn = (sn + 1) & 15
    lines += ["can0 %03X#%s" % (0x100 + k, bytes(8).hex()) for k in range(4)]

    def log(reps):
        body = "".join("(%d.%06d) %s\n" % (1_700_000_000 + i // 1000, i % 1000 * 1000,
                                            lines[i % len(lines)])
                       for i in range(reps * len(lines)))
        img = tmp_path / f"d{reps}.img"
        sf("log", "--mkfs", "exfat", "--size", "128M", "--source", "stdin", "--no-direct",
           "-q", img, input=body.encode())
        return img

    small, big = log(500), log(4000)
    out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(small), str(big)],
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    n_small, h_small, n_big, h_big, n_whole, h_whole = map(int, out.stdout.split())
    assert (n_small, n_big, n_whole) == (500, 4000, 4000)
    # one process, in this order: the streaming peaks, then the whole table's
    it, whole = h_big - h_small, h_whole - h_big
    assert it < 4 * 1024 and whole > 12 * 1024, (it, whole)


def test_export_messages_csv(mixed):
    """export -f messages-csv: the fields of -f messages under a header line, read by
    Python's csv module and by DuckDB's read_csv (null: an empty field)."""
    import csv
    import io
    _, img = mixed
    opts = ("--fast-pgn", "129029", "--isotp-pair", "6F1:612:ext")
    want = export_jsonl(img, "messages", *opts)
    text = sf("export", "-f", "messages-csv", *opts, img, "LOG00001.SFL").stdout.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(want[0])
    conv = {"channel": int, "addr": int, "sa": int, "da": int, "pgn": int, "ts_first": int,
            "ts_last": int, "length": int, "declared": int, "frames": int,
            "eff": lambda v: v == "1"}
    got = [{k: None if v == "" and k != "data" else conv.get(k, str)(v)
            for k, v in r.items()} for r in rows]
    assert got == want
    duckdb = pytest.importorskip("duckdb")
    p = img.parent / "m.csv"
    p.write_text(text)
    assert duckdb.sql(f"SELECT count(*), sum(length), count(sa), count(fc_id) FROM "
                      f"read_csv('{p}', header = true)").fetchall() == [
        (len(want), sum(m["length"] for m in want), sum(m["sa"] is not None for m in want),
         sum(m["fc_id"] is not None for m in want))]
    # an empty log: the header line alone
    empty = img.parent / "empty.img"
    sf("log", "--mkfs", "exfat", "--size", "16M", "--source", "stdin", "--no-direct", "-q",
       empty, input=b"(1700000000.000000) can0 123#11\n")
    assert sf("export", "-f", "messages-csv", empty, "LOG00001.SFL").stdout.decode() == \
        text.splitlines(True)[0]
