"""Every reader says the same thing (issue 26, items 6-10): `streamfat export`, read_arrow
and the independent reader tests/scripts/sfl_ref.py on hand-made records, each case a rule
of docs/FORMAT.md (Records, Record types, Channel names, Versioning)."""
import re
import struct
import sys

import pytest

import streamfat
from conftest import SCRIPTS, sf
from sflwrite import CHANNEL, DROP, LATENCY, SAMPLE, can, rec, sfl

sys.path.insert(0, str(SCRIPTS))
import sfl_ref  # noqa: E402

T0 = 1_700_000_000_000_000_000


def readers(tmp_path, data, name="t.sfl", export_args=()):
    """(export, sfl_ref, read_arrow) of one file: each a dict with the candump lines
    ("lines": (interface, rest) pairs), the verdict (damage counts) and export's exit."""
    p = tmp_path / name
    p.write_bytes(data)
    r = sf("export", *export_args, p, check=False)
    err = r.stderr.decode()
    m = re.findall(r"damaged: (.*)", err)
    exp = {"rc": r.returncode, "err": err, "verdict": m[-1] if m else "clean",
           "lines": [ln.split(" ", 2)[1:] for ln in r.stdout.decode().splitlines()]}
    cd, _raw, v, _skip = sfl_ref.decode(data)
    ref = {"verdict": v[len("damaged: "):] if v.startswith("damaged: ") else v,
           "lines": [ln.split(" ", 2)[1:] for ln in cd.splitlines()]}
    t = streamfat.read_arrow(str(p), errors="skip")
    dmg = streamfat.damage_summary(t)["damage"]
    arrow = {"table": t, "damage": dmg,
             "channels": [str(c) for c in t.column("channel").to_pylist()]}
    return exp, ref, arrow


def verdict_counts(v):
    return {} if v == "clean" else {k: int(n) for k, n in
                                     (x.rsplit(" ", 1) for x in v.split(", "))}


def agree(exp, ref, arrow):
    """The three readers give the same frames, names and damage."""
    assert exp["lines"] == ref["lines"], (exp["lines"], ref["lines"])
    assert exp["verdict"] == ref["verdict"], (exp["err"], ref["verdict"])
    assert verdict_counts(ref["verdict"]) == arrow["damage"]
    assert [i for i, _ in exp["lines"]] == arrow["channels"]


# ---- item 6: whole channel names --------------------------------------------------------

def test_item6_long_names_whole(tmp_path):
    B = 1024
    a, b = "x" * 40 + "a", "x" * 40 + "b"          # the same first 31 bytes
    big = "n" * (B - 96)                             # the longest name FORMAT.md allows
    hdr = [rec(CHANNEL, 0, T0, a.encode()), rec(CHANNEL, 1, T0, b.encode())]
    data = sfl([[can(0, T0 + 1, 0x10, b"\x01"), can(1, T0 + 2, 0x11, b"\x02")],
                [rec(CHANNEL, 2, T0 + 3, big.encode())], [can(2, T0 + 4, 0x12, b"\x03")]],
               B=B, header_records=hdr)
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert [i for i, _ in exp["lines"]] == [a, b, big]
    # --channel takes a whole name, and tells the two apart
    r = sf("export", "--channel", b, tmp_path / "t.sfl")
    assert r.stdout.decode().split(" ")[1] == b and len(r.stdout.splitlines()) == 1
    # MF4: the bus channel comment names them whole
    sf("export", "-f", "mf4", "-o", tmp_path / "t.mf4", tmp_path / "t.sfl")
    mf4 = (tmp_path / "t.mf4").read_bytes()
    assert a.encode() in mf4 and b.encode() in mf4 and big.encode() in mf4


# ---- item 8: one naming rule ------------------------------------------------------------

def test_item8_naming_rule(tmp_path):
    hdr = [rec(CHANNEL, 1, T0, b"first"), rec(CHANNEL, 4, T0, b""),
           rec(CHANNEL, 5, T0, b"a b"), rec(CHANNEL, 6, T0, b"bad\xff"),
           rec(CHANNEL, 7, T0, "caf\u00e9#(1),x".encode())]
    data = sfl([[can(0, T0 + 1, 0x10), rec(CHANNEL, 0, T0 + 2, b"late"),   # use, then name
                 can(0, T0 + 3, 0x10),
                 can(1, T0 + 4, 0x11), rec(CHANNEL, 1, T0 + 5, b"second"),  # a rename
                 can(1, T0 + 6, 0x11),
                 can(3, T0 + 7, 0x13),                                      # never named
                 can(4, T0 + 8, 0x14), can(5, T0 + 9, 0x15), can(6, T0 + 10, 0x16),
                 rec(CHANNEL, 6, T0 + 11, b"good"), can(6, T0 + 12, 0x16),  # after use
                 can(7, T0 + 13, 0x17)]], header_records=hdr)
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert [i for i, _ in exp["lines"]] == [
        "can0", "can0", "first", "first", "can3", "can4", "can5", "can6", "can6",
        "caf\u00e9#(1),x"]
    # --channel takes the names readers give: can0 is the channel used before its naming
    r = sf("export", "--channel", "can0", "--channel", "first", tmp_path / "t.sfl")
    assert [ln.split(" ")[1] for ln in r.stdout.decode().splitlines()] == \
        ["can0", "can0", "first", "first"]
    # read_log names them the same way
    names = [f.channel for f in streamfat.read_log(str(tmp_path / "t.sfl"))
             if isinstance(f, streamfat.Frame)]
    assert names == [i for i, _ in exp["lines"]]


# ---- item 9: bodies of unexpected size, flag bits, header features -----------------------

def test_item9_short_bodies(tmp_path):
    data = sfl([[can(0, T0 + 1, 0x10, b"\x01"),
                 rec(DROP, 0, T0 + 2, struct.pack("<QQ", 7, T0)),           # 16 of 24
                 rec(LATENCY, 0, T0 + 3, struct.pack("<q", 5)),              # 8 of 16
                 rec(DROP, 0, T0 + 4, struct.pack("<QQQQ", 2, T0, T0, 99)),  # longer: used
                 rec(LATENCY, 0, T0 + 5, struct.pack("<qQQ", 5, 10, 99)),
                 can(0, T0 + 6, 0x11, b"\x02")]])
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert exp["verdict"] == "short-body 2" and exp["rc"] == 1
    assert "accounting for 2 lost records" in exp["err"]
    p = str(tmp_path / "t.sfl")
    drops = streamfat.read_arrow(p, "drop", errors="skip")
    assert drops.column("count").to_pylist() == [2]
    lat = streamfat.read_arrow(p, "latency", errors="skip")
    assert lat.column("latency_ns").to_pylist() == [5]
    with pytest.raises(streamfat.FormatError, match="short-body"):
        streamfat.read_arrow(p, "drop")


def test_item9_can_bodies(tmp_path):
    def raw_can(ch, ts, cid, n, data, flags=0, reserved=b"\0\0\0"):
        return rec(1, ch, ts, struct.pack("<IB", cid, n) + reserved + data, flags)
    data = sfl([[raw_can(0, T0 + 1, 0x10, 2, b"\x01\x02", reserved=b"\xff\xee\xdd"),
                 raw_can(0, T0 + 2, 0x11, 3, b"\x55\x66\x77", flags=2),      # RTR with data
                 raw_can(0, T0 + 3, 0x12, 9, bytes(range(9)), flags=8),      # FD length 9
                 raw_can(0, T0 + 4, 0x13, 13, bytes(range(13)), flags=8),
                 raw_can(0, T0 + 5, 0x14, 1, b"\x01\xAA\xBB", flags=0),      # longer body
                 raw_can(0, T0 + 6, 0x15, 4, b"\x01"),                       # shorter: bad
                 ]])
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert [r for _, r in exp["lines"]] == [
        "010#0102", "011#R3", "012##4" + bytes(range(9)).hex().upper(),
        "013##4" + bytes(range(13)).hex().upper(), "014#01"]
    t = arrow["table"]
    assert t.column("dlc").to_pylist() == [2, 3, 9, 13, 1]
    assert t.column("data").to_pylist()[1] == b""
    assert exp["verdict"] == "bad-can 1"


@pytest.mark.parametrize("bit,kept", [(6, True), (7, True), (15, True), (16, False),
                                      (31, False)])
def test_item9_flag_bits(tmp_path, bit, kept):
    data = sfl([[can(0, T0 + 1, 0x10, b"\x01", flags=1 << bit),
                 can(0, T0 + 2, 0x7FF, b"\x02", flags=(1 << bit) | 1)]])
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert len(exp["lines"]) == (2 if kept else 0)
    assert exp["verdict"] == ("clean" if kept else "bad-can 2")


# bit 32 (compressed record blocks, issue 29) is known: a file with it reads as usual
@pytest.mark.parametrize("features,refused", [(0, None), (1, None), (1 << 31, None),
                                              (1 << 32, None), (1 << 41, 41),
                                              (1 << 63 | 1 << 40 | 1, 40)])
def test_features(tmp_path, features, refused):
    data = sfl([[can(0, T0 + 1, 0x10, b"\x01")]], features=features)
    p = tmp_path / "t.sfl"
    p.write_bytes(data)
    r = sf("export", p, check=False)
    _cd, _raw, v, _ = sfl_ref.decode(data)
    if refused is None:
        assert r.returncode == 0 and r.stdout and v == "clean"
        assert streamfat.read_arrow(str(p)).num_rows == 1
        return
    line = f"damaged: not a log: requires feature bit {refused}, unknown to this reader"
    assert r.returncode == 1 and not r.stdout
    assert r.stderr.decode().strip() == f"streamfat export: {p}: {line}"
    assert v == line
    with pytest.raises(streamfat.FormatError, match=f"feature bit {refused}"):
        streamfat.read_arrow(str(p))
    t = streamfat.read_arrow(str(p), errors="skip")
    assert t.num_rows == 0 and streamfat.damage_summary(t)["damage"] == {"not a log": 1}


# ---- item 10: csv-wide keeps binary samples whole ---------------------------------------

def test_item10_csv_wide_binary(tmp_path):
    data = sfl([[rec(SAMPLE, 0, T0 + 1, b"\x01\x0a"), rec(SAMPLE, 0, T0 + 2, b"\x01\x0d\x0a"),
                 rec(SAMPLE, 0, T0 + 3, b"21.5\n"), rec(SAMPLE, 0, T0 + 4, b"\n")]],
               header_records=[rec(CHANNEL, 0, T0, b"u,dp")])
    p = tmp_path / "t.sfl"
    p.write_bytes(data)
    out = sf("export", "-f", "csv-wide", p).stdout.decode().splitlines()
    assert out[0] == 'timestamp,"u,dp"'
    assert [ln.split(",", 1)[1] for ln in out[1:]] == ["0x010a", "0x010d0a", "21.5", "0x0a"]


# ---- item 7: times at or past 2^63 ns ----------------------------------------------------

def test_item7_times_past_2_63(tmp_path):
    top = (1 << 63) - 1000                           # the last microsecond below 2^63 ns
    data = sfl([[can(0, top, 0x10, b"\x01"), rec(SAMPLE, 0, top + 500, b"x"),
                 can(0, 1 << 63, 0x11, b"\x02"), can(0, (1 << 64) - 1, 0x12, b"\x03"),
                 rec(LATENCY, 0, 1 << 63, struct.pack("<qQ", 1, 2))]],
               header_records=[rec(CHANNEL, 0, T0, b"can1")])
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert exp["verdict"] == "bad-time 3"
    assert exp["lines"] == [["can1", "010#01"]]
    ts = arrow["table"].column("ts").cast("int64").to_pylist()
    assert ts == [top]                               # never a negative time
    r = sf("export", tmp_path / "t.sfl", check=False).stdout.decode()
    assert r.startswith("(9223372036.854775) can1 010#01")
    frames = [f for f in streamfat.read_log(str(tmp_path / "t.sfl"), errors="skip")
              if isinstance(f, streamfat.Frame)]
    assert [f.ts for f in frames] == [top]


# ---- item 13: float-second times come back as python-can gives them ----------------------

def test_item13_pycan_mf4_times(tmp_path):
    can_ = pytest.importorskip("can")
    pytest.importorskip("asammdf")
    src = tmp_path / "pc.mf4"
    times = [1_700_000_000 + k / 1000 for k in range(1, 401)]
    with can_.MF4Writer(str(src)) as w:
        for k, t in enumerate(times):
            w.on_message_received(can_.Message(timestamp=t, arbitration_id=0x100 + k % 8,
                                               is_extended_id=False, data=bytes([k % 256]),
                                               channel=0))
    want = ["%.6f" % m.timestamp for m in can_.MF4Reader(str(src))]
    assert len(want) == len(times)
    img = tmp_path / "i.img"
    sf("log", "--mkfs", "exfat", "--size", "64M", "--source", f"file:{src}", "--fast", "-q",
       img)
    got = [ln[1:ln.index(")")] for ln in
           sf("export", "-f", "candump", img, "LOG00001.SFL").stdout.decode().splitlines()]
    assert got == want
    csv = sf("export", "-f", "csv", img, "LOG00001.SFL").stdout.decode().splitlines()[1:]
    assert [ln.split(",")[0] for ln in csv] == want


# ---- item 12: the canid_t flag bits in text ids -------------------------------------------

def test_item12_candump_flag_bits(tmp_path):
    img = tmp_path / "c.img"
    lines = ["(1700000000.000001) can0 40000123#11", "(1700000000.000002) can0 80000123#11",
             "(1700000000.000003) can0 C0000123#R", "(1700000000.000004) can0 00000123#22",
             "(1700000000.000005) can0 20000080#0000000000000000"]
    r = sf("log", "--mkfs", "exfat", "--size", "64M", "--source", "stdin", "--no-direct",
           img, input=("\n".join(lines) + "\n").encode(), check=False)
    err = r.stderr.decode()
    for n in (1, 2, 3):
        assert f"stdin line {n}: id with bit 30 or 31 set" in err, err
    out = sf("export", img, "LOG00001.SFL").stdout.decode().splitlines()
    assert [ln.split(" ", 2)[2] for ln in out] == ["00000123#22", "20000080#0000000000000000"]


def test_item12_error_frame_eff(tmp_path):
    """An error frame with EFF and a class <= 0x7FF is invalid (candump could not keep its
    EFF); with a class above 0x7FF it needs EFF."""
    data = sfl([[can(0, T0 + 1, 0x80, bytes(8), flags=4 | 1),      # ERR|EFF, small class
                 can(0, T0 + 2, 0x80, bytes(8), flags=4),          # ERR
                 can(0, T0 + 3, 0x800, bytes(8), flags=4 | 1)]])   # ERR|EFF, large class
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert exp["verdict"] == "bad-can 1"
    assert [r for _, r in exp["lines"]] == ["20000080#0000000000000000",
                                            "20000800#0000000000000000"]
    assert arrow["table"].column("ext").to_pylist() == [False, True]


# ---- item 11: "no wall clock" ----------------------------------------------------------

def test_item11_no_wall_clock(tmp_path):
    """start_ts 0 (the tiny logger without a realtime clock): readers show the start as
    unknown; export's --relative counts from the first record."""
    data = sfl([[can(0, 5_000_000_000, 0x10, b"\x01"), can(0, 6_500_000_000, 0x11)]],
               start_ts=0, clock=1)
    p = tmp_path / "t.sfl"
    p.write_bytes(data)
    hdr = next(iter(streamfat.read_log(str(p))))
    assert isinstance(hdr, streamfat.Header) and hdr.start_ts is None
    out = sf("export", "--relative", p).stdout.decode().splitlines()
    assert [ln.split(")")[0] for ln in out] == ["(0.000000", "(1.500000"]


# ---- issue 27, transmit: CAN flag bit 6 (TX) ---------------------------------------------

def test_tx_bit_every_reader(tmp_path):
    """A frame the logger sent (bit 6) is kept by every reader as a frame; read_arrow's `tx`
    column and read_log's Frame.tx say so, python-can's plugin gives is_rx False, and
    export's candump lines are the same as without the bit (no direction field)."""
    import can as pycan
    data = sfl([[can(0, T0 + 1, 0x7DF, b"\x02\x01\x00", flags=0x40),
                 can(0, T0 + 2, 0x7E8, b"\x04\x41\x00\xbe"),
                 can(0, T0 + 3, 0x1ABCDEF0, bytes(5), flags=0x01 | 0x02 | 0x40)]])
    exp, ref, arrow = readers(tmp_path, data)
    agree(exp, ref, arrow)
    assert [r for _, r in exp["lines"]] == ["7DF#020100", "7E8#044100BE", "1ABCDEF0#R5"]
    t = arrow["table"]
    assert t.column_names[-1] == "tx"
    assert t.column("tx").to_pylist() == [True, False, True]
    frames = [r for r in streamfat.read_log(str(tmp_path / "t.sfl"))
              if type(r).__name__ == "Frame"]
    assert [f.tx for f in frames] == [True, False, True]
    msgs = list(pycan.LogReader(str(tmp_path / "t.sfl")))
    assert [m.is_rx for m in msgs] == [False, True, False]
