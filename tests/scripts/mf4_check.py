"""mf4_check.py: MF4 oracles for t_export_mf4 and t_import_mf4, run with the venv's python
(build/pyenv: asammdf, python-can, cantools, numpy; scripts/pyenv.sh).

  check REF FILE [--channel C] [--id F] [--from-ns N] [--to-ns N] [--expect-count N]
      asammdf opens FILE and its CAN_DataFrame / CAN_RemoteFrame / CAN_ErrorFrame members
      (BusChannel, ID with bit 31 for extended ids, IDE, DLC, DataLength, DataBytes, EDL,
      BRS, ESI, Dir) and master time (HD start + t, to the nanosecond) equal, group by group
      and in order, the frames of REF (tests/helpers/log_frames of the exported log) that the
      filters select; python-can's can.LogReader yields the same messages (timestamps within
      1 us, channel = BusChannel).
      --asammdf-only: python-can is not asked (large files).
  gen-unsorted OUT EXPECT SEED N
                                a hand-made unsorted file (record ids, a VLSD channel group,
                                DT and plain-deflate DZ blocks, records cut across blocks, a
                                DL chain under HL); its frames as candump lines in EXPECT
  gen-hostile MF4 OUTDIR         damaged copies of a streamfat export (loops, bad ids, lengths
                                past the end, absurd counts, bad DZ, bad records)
  dl-count MF4                  print the DL blocks of the first data group's chain
  gen-dbc DBC                   write the test DBC
  gen-candump OUT SEED N        a candump -L log of N frames for the DBC's messages (and
                                some the DBC does not know), two channels
  dbc CANDUMP MF4 DBC           extract_bus_logging(MF4, DBC) gives, signal by signal, the
                                physical values cantools decodes from CANDUMP's frames
  gen-pycan OUT LEVEL SEED N    an MF4 written by python-can's MF4Writer (4.10; LEVEL 2:
                                transposition + deflate, its default; 1 deflate; 0 DT)
  gen-asammdf OUT LEVEL SEED N  an MF4 written by asammdf: flat CAN_DataFrame.* channels,
                                DataBytes VLSD (SD blocks), extended ids by bit 31 only
  cmp MF4 CANDUMP [--seed S --n N]
                                the messages python-can reads from MF4 (or, with --seed, the
                                generated ones) and streamfat's candump export of MF4's
                                import are the same frames (BusChannel N = canN-1)
"""
import argparse
import datetime
import random
import sys

import numpy as np

EFF, RTR, ERR, FD, BRS, ESI = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
GROUPS = ("CAN_DataFrame", "CAN_RemoteFrame", "CAN_ErrorFrame")


def load_ref(path):
    start, names, frames = None, {}, []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "start":
                start = int(w[1])
            elif w[0] == "chan":
                names[int(w[1])] = w[2] if len(w) > 2 else ""
            elif w[0] == "can":
                data = b"" if w[6] == "-" else bytes.fromhex(w[6])
                frames.append(dict(ts=int(w[1]), ch=int(w[2]), id=int(w[3], 16),
                                   flags=int(w[4], 16), len=int(w[5]), data=data))
    return start, names, frames


def parse_filter(s):
    reject = s.startswith("!")
    s = s.lstrip("!")
    if "/" in s:
        i, m = (int(v, 16) for v in s.split("/"))
    else:
        i = int(s, 16)
        m = 0x1FFFFFFF if i > 0x7FF else 0x7FF
    return reject, i, m


def selected(a, names, f):
    if a.channel and not any(c == str(f["ch"]) or c == names.get(f["ch"]) for c in a.channel):
        return False
    if a.from_ns is not None and f["ts"] < a.from_ns:
        return False
    if a.to_ns is not None and f["ts"] >= a.to_ns:
        return False
    if a.id:
        filters = [parse_filter(s) for s in a.id]
        ok = not any(not r for r, _, _ in filters)
        for r, i, m in filters:
            if (f["id"] ^ i) & m == 0:
                if r:
                    return False
                ok = True
        return ok
    return True


def bus_channel(names, ch):
    n = names.get(ch, "")
    if n.startswith("can") and n[3:].isdigit() and int(n[3:]) < 255:
        return int(n[3:]) + 1
    return (ch + 1) & 0xFF


def len2dlc(n):
    return n if n <= 8 else [12, 16, 20, 24, 32, 48, 64].index(n) + 9 if n in (
        12, 16, 20, 24, 32, 48, 64) else None


def group_of(f):
    return 2 if f["flags"] & ERR else 1 if f["flags"] & RTR else 0


def start_ns(mdf):
    st = mdf.header.start_time
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    d = st - epoch
    return (d.days * 86400 + d.seconds) * 10**9 + d.microseconds * 1000


def fail(msgs, what):
    msgs.append(what)
    if len(msgs) <= 8:
        print(what, file=sys.stderr)


def check_asammdf(path, want):
    from asammdf import MDF
    bad = []
    mdf = MDF(path)
    if mdf.version not in ("4.11", "4.10"):
        fail(bad, "version %s" % mdf.version)
    t0 = start_ns(mdf)
    present = {ch.name for g in mdf.groups for ch in g.channels}
    for gi, gname in enumerate(GROUPS):
        exp = [f for f in want if group_of(f) == gi]
        if gname not in present:
            if exp:
                fail(bad, "%s: missing, %d frames expected" % (gname, len(exp)))
            continue
        grp = [g for g in mdf.groups if any(c.name == gname for c in g.channels)][0]
        cg = grp.channel_group
        if not cg.flags & 0x2 or cg.acq_source is None or cg.acq_source.bus_type != 2:
            fail(bad, "%s: not a CAN bus event group (flags %#x)" % (gname, cg.flags))
        get = lambda m: mdf.get("%s.%s" % (gname, m))
        ids = get("ID")
        cols = {m: get(m).samples for m in ("BusChannel", "IDE", "DLC", "DataLength", "Dir")}
        if gi != 1:
            for m in ("DataBytes", "EDL", "BRS", "ESI"):
                cols[m] = get(m).samples
        if len(ids.samples) != len(exp):
            fail(bad, "%s: %d records, %d expected" % (gname, len(ids.samples), len(exp)))
        for i, f in enumerate(exp[:len(ids.samples)]):
            ext = bool(f["flags"] & EFF)
            e = dict(ts=f["ts"], BusChannel=f["bus"], ID=f["id"] | (0x80000000 if ext else 0),
                     IDE=int(ext), Dir=int(bool(f["flags"] & 0x40)))   # bit 6 TX
            g = dict(ts=t0 + round(float(ids.timestamps[i]) * 1e9), ID=int(ids.samples[i]))
            for m, col in cols.items():
                if m != "DataBytes":
                    g[m] = int(col[i])
            if gi == 1:
                e.update(DLC=f["len"], DataLength=0)
            else:
                fd = bool(f["flags"] & FD)
                e.update(DLC=len2dlc(f["len"]) if fd else f["len"], DataLength=f["len"],
                         EDL=int(fd), BRS=int(bool(f["flags"] & BRS)),
                         ESI=int(bool(f["flags"] & ESI)), data=f["data"].ljust(64, b"\0"))
                g["data"] = bytes(cols["DataBytes"][i])
            if e != g:
                fail(bad, "asammdf %s record %d:\n  want %s\n  got  %s" % (gname, i, e, g))
    mdf.close()
    return bad


def check_pycan(path, want):
    import can
    bad = []
    msgs = list(can.LogReader(path))
    key = lambda d: (d["ts_us"], d["channel"], d["id"], d["data"], d["err"])
    exp = []
    for f in want:
        rtr, err = bool(f["flags"] & RTR), bool(f["flags"] & ERR)
        exp.append(dict(ts_us=(f["ts"] + 500) // 1000, channel=f["bus"], id=f["id"], err=err, rtr=rtr,
                        ext=bool(f["flags"] & EFF), dlc=f["len"],
                        data=b"" if rtr else f["data"],
                        fd=bool(f["flags"] & FD) if not (rtr or err) else False,
                        brs=bool(f["flags"] & BRS) if not (rtr or err) else False,
                        esi=bool(f["flags"] & ESI) if not (rtr or err) else False))
    got = []
    for m in msgs:
        got.append(dict(ts_us=round(m.timestamp * 1e6), channel=m.channel, id=m.arbitration_id,
                        err=m.is_error_frame, rtr=m.is_remote_frame, ext=m.is_extended_id,
                        dlc=m.dlc, data=bytes(m.data), fd=m.is_fd, brs=m.bitrate_switch,
                        esi=m.error_state_indicator))
    if len(got) != len(exp):
        fail(bad, "python-can: %d messages, %d expected" % (len(got), len(exp)))
    exp.sort(key=key)
    got.sort(key=key)
    for i, (e, g) in enumerate(zip(exp, got)):
        if abs(e["ts_us"] - g["ts_us"]) <= 1:
            g["ts_us"] = e["ts_us"]
        if e != g:
            fail(bad, "python-can message %d:\n  want %s\n  got  %s" % (i, e, g))
    return bad


def cmd_check(a):
    start, names, frames = load_ref(a.ref)
    want = [f for f in frames if selected(a, names, f)]
    for f in want:
        f["bus"] = bus_channel(names, f["ch"])
    bad = check_asammdf(a.file, want) + ([] if a.asammdf_only else check_pycan(a.file, want))
    if a.expect_count is not None and len(want) != a.expect_count:
        fail(bad, "the selection holds %d frames, the test expected %d" % (
            len(want), a.expect_count))
    if bad:
        print("mf4_check: %s: %d differences" % (a.file, len(bad)), file=sys.stderr)
        sys.exit(1)
    print("mf4_check: %s: %d frames match (%s)" % (
        a.file, len(want), "asammdf" if a.asammdf_only else "asammdf, python-can"))


DBC = """VERSION ""

NS_ :

BS_:

BU_: ECU


BO_ 256 Engine: 8 ECU
 SG_ EngineSpeed : 0|16@1+ (0.25,0) [0|16383.75] "rpm" Vector__XXX
 SG_ CoolantTemp : 16|8@1- (1,-40) [-168|87] "degC" Vector__XXX
 SG_ Throttle : 24|10@1+ (0.1,0) [0|102.3] "%" Vector__XXX
 SG_ Gear : 34|3@1+ (1,0) [0|7] "" Vector__XXX

BO_ 512 Brake: 8 ECU
 SG_ Pressure : 7|16@0+ (0.01,0) [0|655.35] "bar" Vector__XXX
 SG_ Torque : 23|12@0- (0.5,0) [-1024|1023.5] "Nm" Vector__XXX
 SG_ Flag : 27|1@0+ (1,0) [0|1] "" Vector__XXX

BO_ 768 Muxed: 8 ECU
 SG_ Selector M : 0|8@1+ (1,0) [0|255] "" Vector__XXX
 SG_ SigA m0 : 8|16@1- (1,0) [-32768|32767] "" Vector__XXX
 SG_ SigB m1 : 8|16@1+ (0.5,10) [10|32777.5] "" Vector__XXX
 SG_ SigC m1 : 24|8@1+ (1,0) [0|255] "" Vector__XXX

BO_ 2566853172 ExtMsg: 8 ECU
 SG_ Counter : 0|32@1+ (0.001,0) [0|4294967.295] "" Vector__XXX
 SG_ Small : 32|4@1- (1,0) [-8|7] "" Vector__XXX
 SG_ BigEnd : 47|12@0+ (2,-100) [-100|8090] "" Vector__XXX

"""

DBC_IDS = [(0x100, False), (0x200, False), (0x300, False), (0x18FF1234, True)]


def cmd_gen_dbc(a):
    with open(a.out, "w") as f:
        f.write(DBC)


def cmd_gen_candump(a):
    rnd = random.Random(a.seed)
    t = 1700000000 * 10**6 + 123456
    with open(a.out, "w") as f:
        for i in range(a.n):
            t += rnd.randrange(50, 2000)
            if rnd.random() < 0.1:
                mid, ext = rnd.choice([(0x7A0, False), (0x1234567, True)])   # unknown to the DBC
            else:
                mid, ext = rnd.choice(DBC_IDS)
            data = bytearray(rnd.randrange(256) for _ in range(8))
            if mid == 0x300:
                data[0] = rnd.choice([0, 1])
            ch = rnd.choice(["can0", "can1"])
            f.write("(%d.%06d) %s %s#%s\n" % (t // 10**6, t % 10**6, ch,
                                              ("%08X" if ext else "%03X") % mid, data.hex().upper()))


def read_candump(path):
    out = []
    for line in open(path):
        w = line.split()
        mid, data = w[2].split("#")
        if data.startswith("#") or data.startswith("R"):
            continue
        t = w[0].strip("()").split(".")
        out.append((int(t[0]) * 10**6 + int(t[1]), w[1], int(mid, 16), len(mid) == 8,
                    bytes.fromhex(data)))
    return out


def cmd_dbc(a):
    """Signal by signal, per bus (BusChannel = canN + 1), in order: the same values at the
    same times (within 1 us), multiplexed signals only where their selector says."""
    import re
    import cantools
    from asammdf import MDF
    db = cantools.database.load_file(a.dbc)
    want = {}
    for ts, ch, mid, ext, data in read_candump(a.candump):
        try:
            msg = db.get_message_by_frame_id(mid)
        except KeyError:
            continue
        if msg.is_extended_frame != ext:
            continue
        bus = int(ch[3:]) + 1
        for k, v in msg.decode(data, decode_choices=False, scaling=True).items():
            want.setdefault((bus, msg.name, k), []).append((ts, float(v)))
    mdf = MDF(a.mf4)
    out = mdf.extract_bus_logging(database_files={"CAN": [(a.dbc, 0)]})
    t0 = start_ns(out) // 1000
    got = {}
    for gi, g in enumerate(out.groups):
        m = re.match(r"CAN(\d+) - message (\S+) ", g.channel_group.comment or "")
        if not m:
            continue
        for ch in g.channels[1:]:
            sig = out.get(ch.name, group=gi)
            got.setdefault((int(m.group(1)), m.group(2), ch.name), []).extend(
                (t0 + round(float(t) * 1e6), float(v))
                for t, v in zip(sig.timestamps, sig.samples))
    bad = []
    for k, vals in sorted(want.items()):
        g = sorted(got.pop(k, []))
        if not g:
            fail(bad, "dbc: bus %d %s.%s: not extracted by asammdf" % k)
            continue
        diff = next((i for i, (x, y) in enumerate(zip(g, vals))
                     if abs(x[0] - y[0]) > 1 or abs(x[1] - y[1]) > 1e-9), None)
        if len(g) != len(vals) or diff is not None:
            fail(bad, "dbc: bus %d %s.%s: %d values, %d expected; first difference at %s" % (
                k + (len(g), len(vals), diff)))
    for k in got:
        fail(bad, "dbc: bus %d %s.%s: extracted by asammdf, not decoded by cantools" % k)
    if len(want) < 2 * 14:
        fail(bad, "dbc: only %d signals decoded by cantools" % len(want))
    if bad:
        print("mf4_check dbc: %d differences" % len(bad), file=sys.stderr)
        sys.exit(1)
    print("mf4_check dbc: %d signals on 2 buses, %d values match cantools" % (
        len(want), sum(len(v) for v in want.values())))


def cmd_dl_count(a):
    import struct
    with open(a.file, "rb") as f:
        b = f.read()
    link = lambda at, i: struct.unpack_from("<Q", b, at + 24 + 8 * i)[0]
    dg = link(64, 0)
    at = link(dg, 2)
    if b[at:at + 4] == b"##HL":
        at = link(at, 0)
    n = 0
    while at:
        assert b[at:at + 4] == b"##DL", b[at:at + 4]
        n += 1
        at = link(at, 0)
    print(n)


def test_messages(seed, n):
    """Frames of every kind on channels 1..3 (python-can's channel = BusChannel)."""
    import can
    rnd = random.Random(seed)
    t = 1700000000.0 + 0.123456
    msgs = [
        can.Message(timestamp=t, channel=1, arbitration_id=0x123, data=b"\x11\x22\x33\x44",
                    is_extended_id=False),
        can.Message(timestamp=t + 0.000100, channel=1, arbitration_id=0x1ABCDEF0,
                    data=bytes(range(8)), is_extended_id=True),
        can.Message(timestamp=t + 0.000200, channel=2, arbitration_id=0x7FF,
                    is_remote_frame=True, dlc=0, is_extended_id=False),
        can.Message(timestamp=t + 0.000300, channel=2, arbitration_id=0xABC,
                    is_remote_frame=True, dlc=5, is_extended_id=True),
        can.Message(timestamp=t + 0.000400, channel=1, arbitration_id=0x321, is_fd=True,
                    bitrate_switch=True, data=bytes(range(12)), is_extended_id=False),
        can.Message(timestamp=t + 0.000500, channel=3, arbitration_id=0x1FFFFFFF, is_fd=True,
                    error_state_indicator=True, data=bytes(range(64)), is_extended_id=True),
        can.Message(timestamp=t + 0.000600, channel=3, is_error_frame=True),
        can.Message(timestamp=t + 0.000700, channel=1, arbitration_id=0x10, is_fd=True,
                    bitrate_switch=True, error_state_indicator=True, data=b"",
                    is_extended_id=False),
        can.Message(timestamp=t + 0.000800, channel=2, arbitration_id=0x0, data=b"",
                    is_extended_id=False),
    ]
    t += 0.001
    for i in range(n):
        t += rnd.randrange(20, 3000) * 1e-6
        ext = rnd.random() < 0.3
        fd = rnd.random() < 0.2
        ln = rnd.choice([0, 8, 12, 16, 20, 24, 32, 48, 64]) if fd else rnd.randrange(9)
        msgs.append(can.Message(timestamp=round(t, 6), channel=rnd.choice([1, 2]),
                                arbitration_id=rnd.randrange(1 << 29 if ext else 1 << 11),
                                is_extended_id=ext, is_fd=fd,
                                bitrate_switch=fd and rnd.random() < 0.5,
                                data=bytes(rnd.randrange(256) for _ in range(ln))))
    return msgs


def cmd_gen_pycan(a):
    import can
    w = can.MF4Writer(a.out, compression_level=a.level)
    w._start_time = 1700000000.0       # the HD start: fixed, so the times are known
    w._mdf.header.start_time = datetime.datetime.fromtimestamp(1700000000.0,
                                                               datetime.timezone.utc)
    for m in test_messages(a.seed, a.n):
        w.on_message_received(m)
    w.stop()


def cmd_gen_asammdf(a):
    """The flat layout asammdf writes for separate signals: CAN_DataFrame.ID and so on as
    channels of one group (bus CAN), DataBytes a bytes string, which asammdf writes VLSD
    (SD blocks, each entry without numpy's trailing zeros), ids extended by bit 31 only
    (no IDE channel)."""
    from asammdf import MDF, Signal
    from asammdf.blocks.source_utils import Source
    msgs = [m for m in test_messages(a.seed, a.n) if not (m.is_remote_frame or m.is_error_frame)]
    src = Source(source_type=Source.SOURCE_BUS, bus_type=Source.BUS_TYPE_CAN, name="CAN",
                 path="CAN", comment="")
    t = np.array([m.timestamp - 1700000000.0 for m in msgs])
    col = lambda name, vals, dt: Signal(np.array(vals, dtype=dt), t,
                                        name="CAN_DataFrame." + name, source=src)
    sigs = [
        col("BusChannel", [m.channel for m in msgs], "<u1"),
        col("ID", [m.arbitration_id | (0x80000000 if m.is_extended_id else 0) for m in msgs],
            "<u4"),
        col("DLC", [len2dlc(len(m.data)) for m in msgs], "<u1"),
        col("DataLength", [len(m.data) for m in msgs], "<u1"),
        Signal(np.array([bytes(m.data) for m in msgs], dtype="S64"), t,
               name="CAN_DataFrame.DataBytes", source=src, encoding="latin-1"),
        col("EDL", [int(m.is_fd) for m in msgs], "<u1"),
        col("BRS", [int(m.bitrate_switch) for m in msgs], "<u1"),
        col("ESI", [int(m.error_state_indicator) for m in msgs], "<u1"),
    ]
    mdf = MDF(version="4.11")
    mdf.header.start_time = datetime.datetime.fromtimestamp(1700000000.0,
                                                            datetime.timezone.utc)
    mdf.append(sigs, common_timebase=True)
    mdf.save(a.out, overwrite=True, compression=a.level)


def candump_frames(path):
    """streamfat's candump export: (ts_us, channel number, flags..., data)."""
    out = []
    for line in open(path):
        w = line.split()
        ts = int(w[0].strip("()").replace(".", ""))
        ch = int(w[1][3:]) + 1
        mid, rest = w[2].split("#", 1)
        err = len(mid) == 8 and int(mid, 16) & 0x20000000
        d = dict(ts=ts, ch=ch, err=bool(err))
        if err:
            out.append(d)
            continue
        d.update(id=int(mid, 16), ext=len(mid) == 8, rtr=False, fd=False, brs=False,
                 esi=False)
        if rest.startswith("#"):
            fl = int(rest[1], 16)
            d.update(fd=True, brs=bool(fl & 1), esi=bool(fl & 2), data=bytes.fromhex(rest[2:]))
        elif rest.startswith("R"):
            d.update(rtr=True, data=b"", dlc=int(rest[1:] or "0"))
        else:
            d["data"] = bytes.fromhex(rest)
        out.append(d)
    return out


def cmd_cmp(a):
    """What python-can reads from MF4 (the reference) against streamfat's import of it."""
    import can
    want = []
    for m in (test_messages(a.seed, a.n) if a.seed is not None else can.LogReader(a.mf4)):
        if a.no_rtr_err and (m.is_remote_frame or m.is_error_frame):
            continue
        d = dict(ts=round(m.timestamp * 1e6), ch=int(m.channel), err=m.is_error_frame)
        if not m.is_error_frame:
            d.update(id=m.arbitration_id, ext=m.is_extended_id, rtr=m.is_remote_frame,
                     fd=m.is_fd, brs=m.bitrate_switch if m.is_fd else False,
                     esi=m.error_state_indicator if m.is_fd else False,
                     data=b"" if m.is_remote_frame else bytes(m.data))
            if m.is_remote_frame:
                d["dlc"] = m.dlc
        want.append(d)
    got = candump_frames(a.candump)
    bad = []
    if len(got) != len(want):
        fail(bad, "%d frames imported, %d expected" % (len(got), len(want)))
    key = lambda d: (d["ts"], d["ch"], d.get("id", -1))
    for i, (e, g) in enumerate(zip(sorted(want, key=key), sorted(got, key=key))):
        if abs(e["ts"] - g["ts"]) <= 1:
            g["ts"] = e["ts"]
        if e != g:
            fail(bad, "frame %d:\n  want %s\n  got  %s" % (i, e, g))
    if bad:
        print("mf4_check cmp %s: %d differences" % (a.mf4, len(bad)), file=sys.stderr)
        sys.exit(1)
    print("mf4_check cmp %s: %d frames match" % (a.mf4, len(want)))


def cmd_gen_hostile(a):
    """Damaged copies of a streamfat MF4 export (plain: DT blocks; compressed: HL + DZ) in
    OUTDIR, one per kind of damage; each must end the import with one line, exit 1."""
    import os
    import struct
    b = bytearray(open(a.file, "rb").read())
    q = lambda at: struct.unpack_from("<Q", b, at)[0]
    link = lambda at, i: q(at + 24 + 8 * i)
    def put(at, v):
        struct.pack_into("<Q", b, at, v)
    dg = link(64, 0)
    cg = link(dg, 1)
    cn_master = link(cg, 1)
    cn_struct = link(cn_master, 0)
    cn_member = link(cn_struct, 1)
    data = link(dg, 2)
    hl = data if b[data:data + 4] == b"##HL" else None
    dl = link(hl, 0) if hl else data
    blk0 = link(dl, 1)
    out = {}
    def mutate(name, fn):
        c = bytearray(b)
        fn(c)
        out[name] = c
    w = lambda c, at, v: struct.pack_into("<Q", c, at, v)
    mutate("loop-dg", lambda c: w(c, dg + 24, dg))
    mutate("loop-cg", lambda c: w(c, cg + 24, cg))
    mutate("loop-cn", lambda c: w(c, cn_member + 24, cn_member))
    mutate("loop-comp", lambda c: w(c, cn_member + 24, cn_struct))
    mutate("loop-dl", lambda c: w(c, dl + 24, dl))
    mutate("bad-id-dg", lambda c: w(c, 64 + 24, cn_member))
    mutate("bad-id-data", lambda c: w(c, dl + 32, cg))
    mutate("bad-id-magic", lambda c: c.__setitem__(slice(blk0, blk0 + 4), b"##XX"))
    mutate("link-past-end", lambda c: w(c, dl + 32, len(b) + 4096))
    mutate("link-huge", lambda c: w(c, cg + 32, 1 << 62))
    mutate("len-past-end", lambda c: w(c, blk0 + 8, 1 << 40))
    mutate("len-short", lambda c: w(c, blk0 + 8, 8))
    mutate("links-absurd", lambda c: w(c, dl + 16, 1 << 40))
    mutate("rec-huge", lambda c: struct.pack_into("<I", c, cg + 24 + 48 + 24, 0xFFFFFFF0))
    mutate("bits-absurd", lambda c: struct.pack_into("<I", c, cn_member + 24 + 64 + 8,
                                                     0x7FFFFFFF))
    mutate("offset-past-rec", lambda c: struct.pack_into("<I", c, cn_member + 24 + 64 + 4,
                                                         0x7FFFFFFF))
    mutate("unfinalized", lambda c: (c.__setitem__(slice(0, 8), b"UnFinMF "),
                                     struct.pack_into("<H", c, 60, 1)))
    mutate("version-3", lambda c: c.__setitem__(slice(8, 12), b"3.30"))
    mutate("time-nan", lambda c: None)
    if hl:
        mutate("dz-huge", lambda c: w(c, blk0 + 24 + 8, 1 << 40))
        mutate("dz-zlen", lambda c: w(c, blk0 + 24 + 16, 1 << 40))
        mutate("dz-garbage", lambda c: c.__setitem__(slice(blk0 + 48, blk0 + 64), bytes(16)))
        mutate("dz-ziptype", lambda c: c.__setitem__(blk0 + 24 + 2, 7))
    else:
        # the first record's time: NaN
        mutate("time-nan", lambda c: struct.pack_into("<d", c, blk0 + 24, float("nan")))
        # data length 13 in a classic frame
        mutate("len-13", lambda c: c.__setitem__(blk0 + 24 + 15, 13))
        # the data ends inside a record
        mutate("rec-cut", lambda c: w(c, blk0 + 8, q(blk0 + 8) - 5))
    if "time-nan" in out and out["time-nan"] == b:
        del out["time-nan"]
    os.makedirs(a.outdir, exist_ok=True)
    for name, c in out.items():
        with open(os.path.join(a.outdir, name + ".mf4"), "wb") as f:
            f.write(c)
    print(len(out))


def cmd_gen_unsorted(a):
    """A hand-made MF4 4.11 with what neither asammdf nor python-can writes: one unsorted
    data group (1-byte record ids) holding a CAN group (flat CAN_DataFrame.* channels, IDE
    flag, 8 fixed data bytes), a group of another signal and a VLSD channel group, its data
    stream cut at odd places into DT and DZ blocks (plain deflate, not transposed) under
    a chain of two DL blocks. The frames go to EXPECT as candump lines."""
    import struct
    import zlib
    rnd = random.Random(a.seed)
    blocks, order = {}, []
    def block(name, bid, links, data):
        blocks[name] = (bid, links, data)
        order.append(name)
    def tx(name, text):
        raw = text.encode() + b"\0"
        block(name, b"##TX", [], raw + bytes(-len(raw) % 8))
    def cn(name, nxt, txn, ctype, sync, dtype, off, bits, cn_data=0):
        block(name, b"##CN", [nxt, 0, txn, 0, 0, cn_data, 0, 0],
              struct.pack("<BBBBIIIIBBH6d", ctype, sync, dtype, 0, off, bits, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0))
    def cg(name, nxt, first, rec_id, cycles, flags, size):
        block(name, b"##CG", [nxt, first, 0, 0, 0, 0],
              struct.pack("<QQHHIII", rec_id, cycles, flags, ord("."), 0, size, 0))
    # the records
    t0 = 1700000000 * 10**9
    stream, expect, t = bytearray(), [], 0.5
    ncan = 0
    for i in range(a.n):
        t += rnd.randrange(10, 5000) * 1e-6
        k = rnd.random()
        if k < 0.6:
            ext = rnd.random() < 0.4
            mid = rnd.randrange(1 << 29 if ext else 1 << 11)
            ln = rnd.randrange(9)
            data = bytes(rnd.randrange(256) for _ in range(ln))
            bus = rnd.choice([1, 2])
            stream += struct.pack("<BdIBB8sB", 1, t, mid, int(ext), ln, data.ljust(8, b"\0"),
                                  bus)
            us = round(t * 1e6)
            expect.append("(%d.%06d) can%d %s#%s" % (1700000000 + us // 10**6, us % 10**6,
                                                      bus - 1, ("%08X" if ext else "%03X") % mid,
                                                      data.hex().upper()))
            ncan += 1
        elif k < 0.8:
            stream += struct.pack("<BdHQ", 2, t, rnd.randrange(65536), 0)
        else:
            blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(40)))
            stream += struct.pack("<BI", 3, len(blob)) + blob
    # cut the stream at odd places: DT, DZ, DT, DZ ...
    cuts = sorted(rnd.sample(range(1, len(stream)), 5))
    pieces = [stream[i:j] for i, j in zip([0] + cuts, cuts + [len(stream)])]
    names = []
    for i, pc in enumerate(pieces):
        if i % 2:
            z = zlib.compress(bytes(pc))
            block("d%d" % i, b"##DZ", [], struct.pack("<2sBBIQQ", b"DT", 0, 0, 0, len(pc),
                                                      len(z)) + z)
        else:
            block("d%d" % i, b"##DT", [], bytes(pc))
        names.append("d%d" % i)
    offs = [0]
    for pc in pieces[:-1]:
        offs.append(offs[-1] + len(pc))
    half = len(names) // 2
    block("dl1", b"##DL", ["dl2"] + names[:half],
          struct.pack("<B3xI", 0, half) + b"".join(struct.pack("<Q", o) for o in offs[:half]))
    block("dl2", b"##DL", [0] + names[half:],
          struct.pack("<B3xI", 0, len(names) - half) +
          b"".join(struct.pack("<Q", o) for o in offs[half:]))
    block("hl", b"##HL", ["dl1"], struct.pack("<HB5x", 0, 0))
    # group 1: CAN frames
    for n, t_ in (("t1", "t"), ("n_id", "CAN_DataFrame.ID"), ("n_ide", "CAN_DataFrame.IDE"),
                  ("n_len", "CAN_DataFrame.DataLength"), ("n_db", "CAN_DataFrame.DataBytes"),
                  ("n_bus", "CAN_DataFrame.BusChannel"), ("t2", "t"), ("n_temp", "Temp"),
                  ("n_blob", "Blob")):
        tx(n, t_)
    # record (after the id): t f64 @0, ID u32 @8, IDE u8 @12, DataLength u8 @13,
    # DataBytes 8 @14, BusChannel u8 @22: 23 bytes
    cn("cn_bus", 0, "n_bus", 0, 0, 0, 22, 8)
    cn("cn_db", "cn_bus", "n_db", 0, 0, 10, 14, 64)
    cn("cn_len", "cn_db", "n_len", 0, 0, 0, 13, 8)
    cn("cn_ide", "cn_len", "n_ide", 0, 0, 0, 12, 8)
    cn("cn_id", "cn_ide", "n_id", 0, 0, 0, 8, 32)
    cn("cn_t1", "cn_id", "t1", 2, 1, 4, 0, 64)
    # group 2: a temperature and a VLSD blob (in group 3)
    cn("cn_blob", 0, "n_blob", 1, 0, 10, 10, 64, cn_data="cg3")
    cn("cn_temp", "cn_blob", "n_temp", 0, 0, 0, 8, 16)
    cn("cn_t2", "cn_temp", "t2", 2, 1, 4, 0, 64)
    cg("cg3", 0, 0, 3, 0, 1, 0)
    cg("cg2", "cg3", "cn_t2", 2, 0, 0, 18)
    cg("cg1", "cg2", "cn_t1", 1, ncan, 2, 23)
    block("dg", b"##DG", [0, "cg1", "hl", 0], struct.pack("<B7x", 1))
    at, pos = {}, 64 + 104
    for name in order:
        at[name] = pos
        bid, links, data = blocks[name]
        ln = 24 + 8 * len(links) + len(data)
        pos += ln + (-ln % 8)
    out = bytearray(b"MDF     4.11    streamft" + bytes(4) + struct.pack("<H", 411) +
                    bytes(30) + struct.pack("<HH", 0, 0))
    out += struct.pack("<4sIQQ6QQhhBBBBdd", b"##HD", 0, 104, 6, at["dg"], 0, 0, 0, 0, 0,
                       t0, 0, 0, 2, 0, 0, 0, 0, 0)
    for name in order:
        bid, links, data = blocks[name]
        ln = 24 + 8 * len(links) + len(data)
        out += struct.pack("<4sIQQ", bid, 0, ln, len(links))
        out += b"".join(struct.pack("<Q", at[l] if isinstance(l, str) else l) for l in links)
        out += data + bytes(-ln % 8)
    with open(a.out, "wb") as f:
        f.write(out)
    with open(a.expect, "w") as f:
        f.write("".join(line + "\n" for line in expect))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("ref")
    c.add_argument("file")
    c.add_argument("--channel", action="append", default=[])
    c.add_argument("--id", action="append", default=[])
    c.add_argument("--from-ns", type=int)
    c.add_argument("--to-ns", type=int)
    c.add_argument("--expect-count", type=int)
    c.add_argument("--asammdf-only", action="store_true")
    c.set_defaults(fn=cmd_check)
    c = sub.add_parser("gen-pycan")
    c.add_argument("out")
    c.add_argument("level", type=int)
    c.add_argument("seed", type=int)
    c.add_argument("n", type=int)
    c.set_defaults(fn=cmd_gen_pycan)
    c = sub.add_parser("gen-asammdf")
    c.add_argument("out")
    c.add_argument("level", type=int)
    c.add_argument("seed", type=int)
    c.add_argument("n", type=int)
    c.set_defaults(fn=cmd_gen_asammdf)
    c = sub.add_parser("cmp")
    c.add_argument("mf4")
    c.add_argument("candump")
    c.add_argument("--seed", type=int)
    c.add_argument("--n", type=int, default=0)
    c.add_argument("--no-rtr-err", action="store_true")
    c.set_defaults(fn=cmd_cmp)
    c = sub.add_parser("gen-hostile")
    c.add_argument("file")
    c.add_argument("outdir")
    c.set_defaults(fn=cmd_gen_hostile)
    c = sub.add_parser("gen-unsorted")
    c.add_argument("out")
    c.add_argument("expect")
    c.add_argument("seed", type=int)
    c.add_argument("n", type=int)
    c.set_defaults(fn=cmd_gen_unsorted)
    c = sub.add_parser("dl-count")
    c.add_argument("file")
    c.set_defaults(fn=cmd_dl_count)
    c = sub.add_parser("gen-dbc")
    c.add_argument("out")
    c.set_defaults(fn=cmd_gen_dbc)
    c = sub.add_parser("gen-candump")
    c.add_argument("out")
    c.add_argument("seed", type=int)
    c.add_argument("n", type=int)
    c.set_defaults(fn=cmd_gen_candump)
    c = sub.add_parser("dbc")
    c.add_argument("candump")
    c.add_argument("mf4")
    c.add_argument("dbc")
    c.set_defaults(fn=cmd_dbc)
    a = p.parse_args()
    a.fn(a)


main()
