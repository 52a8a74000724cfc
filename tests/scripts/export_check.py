#!/usr/bin/python3
"""export_check.py REF FORMAT FILE [options]: read an exported file with python-can (or,
for csv-wide and raw, with the csv module / as bytes) and compare it with the records the
library's decoder gives (REF: the output of tests/helpers/log_frames on the same log).

The comparison is field by field, per frame and in order: timestamp to the microsecond,
channel (where the format has one), id, extended/remote/error/FD/BRS/ESI flags (where the
format has them), length and data. The selection options apply the export's filters to
the reference independently of the CLI, so a filter bug shows up as a difference.

Timestamps: the text formats carry microseconds (compared exactly); BLF carries nanoseconds
(compared within half a microsecond: a float of a Unix time holds 0.24 us).

Known format limits (docs/EXPORT.md), expected here rather than hidden:
  asc      error frames carry no id or data; python-can's ASCReader takes a CAN FD frame
           with no data for a remote frame
  candump  python-can's reader gives error frames no channel, id or data
  csv      no channel, no CAN FD flags and no direction in python-can's layout
  candump  no direction either (CAN flag bit 6, TX: asc and blf compare it)
"""
import argparse
import base64
import csv
import re
import sys

import can

EFF, RTR, ERR, FD, BRS, ESI, TX = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40


def load_ref(path):
    start, names, frames, others = None, {}, [], []
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
            elif w[0] == "rec":
                data = b"" if w[4] == "-" else bytes.fromhex(w[4])
                others.append(dict(type=int(w[1], 16), ts=int(w[2]), ch=int(w[3]), data=data))
    return start, names, frames, others


def parse_filter(s):
    reject = s.startswith("!")
    s = s.lstrip("!")
    if "/" in s:
        i, m = s.split("/")
        i, m = int(i, 16), int(m, 16)
    else:
        i = int(s, 16)
        m = 0x1FFFFFFF if i > 0x7FF else 0x7FF
    return reject, i, m


def selected(a, names, rec, start):
    if a.channel:
        if not any(c == str(rec["ch"]) or c == names.get(rec["ch"]) for c in a.channel):
            return False
    if a.from_ns is not None and rec["ts"] < a.from_ns:
        return False
    if a.to_ns is not None and rec["ts"] >= a.to_ns:
        return False
    if "id" in rec and a.id:
        filters = [parse_filter(s) for s in a.id]
        ok = not any(not r for r, _, _ in filters)
        for r, i, m in filters:
            if (rec["id"] ^ i) & m == 0:
                if r:
                    return False
                ok = True
        if not ok:
            return False
    return True


def us(ns):
    """ns to the nearest microsecond, as the text formats give it (docs/EXPORT.md)."""
    return (ns + 500) // 1000 if ns >= 0 else -((500 - ns) // 1000)


def expected(fmt, f, names, t0):
    ts = us(f["ts"] - t0) if t0 else us(f["ts"])
    e = dict(ts_us=ts, err=bool(f["flags"] & ERR))
    if fmt == "blf":
        e["ts_ns"] = f["ts"]     # BLF keeps nanoseconds
    if fmt == "candump":
        e["channel"] = names.get(f["ch"]) or "can%d" % f["ch"]
        if e["err"]:
            e["channel"] = None  # python-can's reader gives error frames no channel
    elif fmt in ("asc", "blf"):
        # Vector channels count from 1: can<N> is N + 1, else the channel number + 1;
        # python-can subtracts the 1
        m = re.fullmatch(r"can(\d+)", names.get(f["ch"], ""))
        e["channel"] = int(m.group(1)) if m and int(m.group(1)) < 65535 else f["ch"]
    if e["err"] and fmt in ("candump", "asc"):
        return e
    if fmt in ("asc", "blf"):
        e["rx"] = not f["flags"] & TX     # ASC Tx / BLF direction flag: python-can's is_rx
    rtr = bool(f["flags"] & RTR)
    e.update(id=f["id"], ext=bool(f["flags"] & EFF), rtr=rtr, dlc=f["len"],
             data=b"" if rtr else f["data"])
    if fmt != "csv":
        e.update(fd=bool(f["flags"] & FD), brs=bool(f["flags"] & BRS),
                 esi=bool(f["flags"] & ESI))
    if e["err"]:
        for k in ("fd", "brs", "esi", "rtr"):
            e.pop(k, None)
    if fmt == "asc" and e.get("fd") and f["len"] == 0:
        e["rtr"] = True          # python-can's ASCReader: no data means remote
    return e


def got(m, e):
    g = dict(ts_us=round(m.timestamp * 1e6), err=m.is_error_frame)
    if "ts_ns" in e:
        # A float holds a 2020s Unix time to 0.24 us (one ulp): nanoseconds within half
        # a microsecond are the same timestamp.
        ns = m.timestamp * 1e9
        g["ts_ns"] = e["ts_ns"] if abs(ns - e["ts_ns"]) < 500 else round(ns)
        g["ts_us"] = e["ts_us"] if g["ts_ns"] == e["ts_ns"] else round(m.timestamp * 1e6)
    names = dict(channel="channel", id="arbitration_id", ext="is_extended_id",
                 rtr="is_remote_frame", dlc="dlc", fd="is_fd", brs="bitrate_switch",
                 esi="error_state_indicator", rx="is_rx")
    for k, attr in names.items():
        if k in e:
            g[k] = getattr(m, attr)
    if "data" in e:
        g["data"] = bytes(m.data)
    return g


def read(fmt, path):
    if fmt == "candump":
        return list(can.CanutilsLogReader(path))
    if fmt == "asc":
        return list(can.ASCReader(path, relative_timestamp=False))
    if fmt == "blf":
        return list(can.BLFReader(path))
    if fmt == "csv":
        return list(can.CSVReader(path))
    raise SystemExit("unknown format " + fmt)


def check_frames(a, start, names, frames):
    t0 = start if a.relative else 0
    want = [expected(a.format, f, names, t0) for f in frames if selected(a, names, f, start)]
    msgs = read(a.format, a.file)
    bad = 0
    for i, (e, m) in enumerate(zip(want, msgs)):
        g = got(m, e)
        if g != e:
            bad += 1
            if bad <= 5:
                print("frame %d differs:\n  want %s\n  got  %s" % (i, e, g), file=sys.stderr)
    if len(msgs) != len(want):
        print("%d frames read, %d expected" % (len(msgs), len(want)), file=sys.stderr)
        bad += 1
    if a.expect_count is not None and len(want) != a.expect_count:
        print("the selection holds %d frames, the test expected %d" % (len(want), a.expect_count),
              file=sys.stderr)
        bad += 1
    return bad, len(want)


def check_wide(a, start, names, others):
    vals = [r for r in others if r["type"] in (2, 4) and selected(a, names, r, start)]
    chans = sorted({r["ch"] for r in vals})
    with open(a.file, newline="") as f:
        rows = list(csv.reader(f))
    want_head = ["timestamp"] + [names.get(c) or "can%d" % c for c in chans]
    bad = 0
    if rows[0] != want_head:
        print("header %s, expected %s" % (rows[0], want_head), file=sys.stderr)
        bad += 1
    t0 = start if a.relative else 0
    for i, (r, row) in enumerate(zip(vals, rows[1:])):
        ts = r["ts"] - t0
        cells = [""] * len(chans)
        if r["type"] == 4:
            cells[chans.index(r["ch"])] = str(int.from_bytes(r["data"][:8], "little", signed=True))
        else:
            d = r["data"]
            d = d[:-1] if d.endswith(b"\n") else d
            d = d[:-1] if d.endswith(b"\r") else d
            text = d and all(0x20 <= b < 0x7F for b in d)
            # not text: every byte, a trailing line ending included (issue 26 item 10)
            cells[chans.index(r["ch"])] = d.decode() if text else "0x" + r["data"].hex()
        want = ["%d.%06d" % (us(ts) // 10**6, us(ts) % 10**6)] + cells
        if row != want:
            bad += 1
            if bad <= 5:
                print("row %d: %s, expected %s" % (i, row, want), file=sys.stderr)
    if len(rows) - 1 != len(vals):
        print("%d rows, %d expected" % (len(rows) - 1, len(vals)), file=sys.stderr)
        bad += 1
    return bad, len(vals)


def check_raw(a, start, names, others):
    want = b"".join(r["data"] for r in others if r["type"] == 2 and selected(a, names, r, start))
    with open(a.file, "rb") as f:
        data = f.read()
    if data != want:
        print("raw: %d bytes, expected %d (first difference at %d)" % (
            len(data), len(want), next((i for i, (x, y) in enumerate(zip(data, want)) if x != y),
                                       min(len(data), len(want)))), file=sys.stderr)
        return 1, 0
    return 0, len(want)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ref")
    p.add_argument("format")
    p.add_argument("file")
    p.add_argument("--relative", action="store_true")
    p.add_argument("--channel", action="append", default=[])
    p.add_argument("--id", action="append", default=[])
    p.add_argument("--from-ns", type=int)
    p.add_argument("--to-ns", type=int)
    p.add_argument("--expect-count", type=int)
    a = p.parse_args()
    start, names, frames, others = load_ref(a.ref)
    if a.format == "csv-wide":
        bad, n = check_wide(a, start, names, others)
    elif a.format == "raw":
        bad, n = check_raw(a, start, names, others)
    else:
        bad, n = check_frames(a, start, names, frames)
    if bad:
        print("export_check: %s %s: %d differences" % (a.format, a.file, bad), file=sys.stderr)
        sys.exit(1)
    print("export_check: %s %s: %d items match" % (a.format, a.file, n))


main()
