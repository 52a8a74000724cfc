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
  dl-count MF4                  print the DL blocks of the first data group's chain
  gen-dbc DBC                   write the test DBC
  gen-candump OUT SEED N        a candump -L log of N frames for the DBC's messages (and
                                some the DBC does not know), two channels
  dbc CANDUMP MF4 DBC           extract_bus_logging(MF4, DBC) gives, signal by signal, the
                                physical values cantools decodes from CANDUMP's frames
  gen-asammdf OUT               an MF4 written by asammdf (MDF.append of bus-logging
                                structures, unsorted? no: as asammdf writes, compressed)
  gen-pycan OUT LEVEL           an MF4 written by python-can's MF4Writer (4.10; LEVEL 2:
                                transposition + deflate, its default)
  cmp MF4 CANDUMP               python-can's LogReader on MF4 and streamfat's candump export
                                of its import give the same frames (channel N-1 = canN-1 ...)
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
                     IDE=int(ext), Dir=0)
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
        exp.append(dict(ts_us=f["ts"] // 1000, channel=f["bus"], id=f["id"], err=err, rtr=rtr,
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
