#!/usr/bin/env python3
"""Reassembly and decoding side by side (docs/BENCHMARKS.md, "Reassembly from Python"), in
one run, on the mixed log of tests/helpers/proto_bench (J1939 from 8 sources with about a
tenth TP frames, an OBD-II / UDS polling session, plain frames):

    python bench/proto_python_bench.py WORKDIR [FRAMES] [REF_FRAMES]

1. C: proto_bench FRAMES --decode (reassembly and the decoders, frames in memory);
2. streamfat.read_messages over the log of the same frames (streamfat log --source stdin
   of proto_bench's candump lines), and the four tables at once (messages, uds, obd2, dm1:
   streamfat.messages.iter_file_tables), each in a child process: CPU s and peak RSS;
3. iter_messages' peak RSS on the log and on one of FRAMES / 8: flat;
4. the Python reference stacks on the first REF_FRAMES frames (parsed before the clock
   starts): can-isotp 2.0.7's receivers (listen mode) on 0x7E0 / 0x7E8, each message
   parsed by udsoncan 1.26.1, and can-j1939 2.0.12's J1939_21.notify for every 29-bit
   frame (TP reassembly, PGN / SA split, subscriber call).
Rates are frames per CPU second (user + system); the ratios compare rates.
FRAMES default 20,000,000, REF_FRAMES 200,000. SF (the CLI) and PROTO_BENCH (the helper)
default to build/streamfat and build/tests/proto_bench."""
import logging
import os
import resource
import subprocess
import sys
from collections import deque

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SF = os.environ.get("SF") or os.path.join(HERE, "build", "streamfat")
PB = os.environ.get("PROTO_BENCH") or os.path.join(HERE, "build", "tests", "proto_bench")


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def make_log(work, frames):
    dump = os.path.join(work, f"mixed{frames}.log")
    img = os.path.join(work, f"mixed{frames}.img")
    if not os.path.exists(img):
        subprocess.run([PB, str(frames), "--candump", dump], check=True)
        size = max(64, frames * 40 // (1 << 20) + 64)
        with open(dump, "rb") as f:
            subprocess.run([SF, "log", "--mkfs", "exfat", "--size", f"{size}M", "--force",
                            "--source", "stdin", "--no-direct", "-q", img], stdin=f,
                           check=True)
    return dump, img


# each measurement in a fresh interpreter; pyarrow's first compute calls (kernel set-up,
# about 0.2 CPU s) are made before the clock starts, so the rate is the reader's
CHILD = r"""
import resource, sys, streamfat
import pyarrow as pa, pyarrow.compute as pc
pc.cast(pa.array([1], pa.int64()), pa.timestamp("ns", tz="UTC")); pa.array(["a"]).take([0])
from streamfat import messages as m
from streamfat.reader import _iter_files
what, src = sys.argv[1], sys.argv[2]
r0 = resource.getrusage(resource.RUSAGE_SELF)
rows = 0
if what == "read_messages":
    rows = streamfat.read_messages(src).num_rows
elif what == "iter_messages":
    for b in streamfat.iter_messages(src):
        rows += b.num_rows
else:
    for name, f in _iter_files(src):
        for st, out in m.iter_file_tables(name, f, m.TABLES):
            rows += sum(t.num_rows for t in out.values())
r1 = resource.getrusage(resource.RUSAGE_SELF)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(rows, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, int(hwm) // 1024)
"""


def child(what, img):
    out = subprocess.run([sys.executable, "-c", CHILD, what, img], capture_output=True,
                         text=True, check=True, stdin=subprocess.DEVNULL).stdout.split()
    return int(out[0]), float(out[1]), int(out[2])


def read_frames(dump, k):
    out = []
    with open(dump) as f:
        for i, line in enumerate(f):
            if i >= k:
                break
            t, _ch, fr = line.split()
            ident, data = fr.split("#")
            out.append((float(t[1:-1]), int(ident, 16), len(ident) == 8,
                        bytearray.fromhex(data)))
    return out


def reference(frames, dump=None):
    """can-isotp + udsoncan and can-j1939 over the frames: (CPU s, messages). With dump (a
    candump -L file of the same frames), the frames come from python-can's
    CanutilsLogReader inside the timing, as ours come from the log."""
    import isotp
    from j1939.j1939_21 import J1939_21
    from udsoncan import Request, Response
    logging.disable(logging.CRITICAL)
    A, AM = isotp.Address, isotp.AddressingMode
    got = [0]

    def receiver(rx, tx):
        q = deque()
        s = isotp.TransportLayerLogic(
            rxfn=lambda t: q.popleft() if q else None, txfn=lambda m: None,
            address=A(AM.Normal_11bits, rxid=rx, txid=tx),
            params={"listen_mode": True, "max_frame_size": 1 << 20})
        return q, s

    q_resp, resp = receiver(0x7E8, 0x7E0)
    q_req, req = receiver(0x7E0, 0x7E8)

    def subs(prio, pgn, sa, da, ts, data):
        got[0] += 1

    j = J1939_21(lambda *a: None, lambda: None, subs, 16, None, None, lambda da: True)
    t0 = cpu()
    if dump:
        import can
        frames = ((m.timestamp, m.arbitration_id, m.is_extended_id, m.data)
                  for m in can.CanutilsLogReader(dump))
    for ts, cid, eff, data in frames:
        if eff:
            j.notify(cid, data, ts)
        elif cid == 0x7E8 or cid == 0x7E0:
            q, s, parse = (q_resp, resp, Response.from_payload) if cid == 0x7E8 else \
                (q_req, req, Request.from_payload)
            q.append(isotp.CanMessage(arbitration_id=cid, data=data))
            s.process()
            while s.available():
                parse(s.recv())
                got[0] += 1
    return cpu() - t0, got[0]


def main():
    work = sys.argv[1]
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000_000
    ref_n = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
    os.makedirs(work, exist_ok=True)
    c = subprocess.run([PB, str(frames), "--decode"], capture_output=True, text=True,
                       check=True).stdout
    kv = dict(w.split("=") for w in c.split()[1:])
    c_rate = float(kv["frames_per_cpu_s"])
    print(f"C reassembly + decoding (proto_bench --decode): {frames:,} frames, "
          f"{float(kv['cpu_s']):.2f} CPU s, {c_rate / 1e6:.1f} M frames per CPU s")
    dump, img = make_log(work, frames)
    rows, s, rss = child("read_messages", img)
    rm_rate = frames / s
    print(f"read_messages: {rows:,} messages, {s:.2f} CPU s, {rm_rate / 1e6:.1f} M frames "
          f"per CPU s, peak RSS {rss} MiB")
    rows4, s4, rss4 = child("tables", img)
    t_rate = frames / s4
    print(f"messages + uds + obd2 + dm1 tables: {rows4:,} rows, {s4:.2f} CPU s, "
          f"{t_rate / 1e6:.1f} M frames per CPU s, peak RSS {rss4} MiB")
    _d8, img8 = make_log(work, frames // 8)
    _r, _s, rss_small = child("iter_messages", img8)
    _r, _s, rss_big = child("iter_messages", img)
    print(f"iter_messages peak RSS: {rss_small} MiB ({frames // 8:,} frames), {rss_big} MiB "
          f"({frames:,} frames)")
    fr = read_frames(dump, ref_n)
    s_ref, n_ref = reference(fr)
    ref_rate = len(fr) / s_ref
    print(f"can-isotp + udsoncan, can-j1939 (frames parsed before): {len(fr):,} frames, "
          f"{n_ref:,} messages, {s_ref:.2f} CPU s, {ref_rate / 1e3:.1f} k frames per CPU s")
    head = os.path.join(work, "head.log")
    with open(dump) as f, open(head, "w") as o:
        for i, line in zip(range(ref_n), f):
            o.write(line)
    s_log, n_log = reference(None, head)
    log_rate = len(fr) / s_log
    print(f"the same, frames read by python-can's CanutilsLogReader: {n_log:,} messages, "
          f"{s_log:.2f} CPU s, {log_rate / 1e3:.1f} k frames per CPU s")
    for what, rate in (("stacks alone", ref_rate), ("with python-can reading the log",
                                                      log_rate)):
        print(f"ratios to the references ({what}): C {c_rate / rate:.0f}x, read_messages "
              f"{rm_rate / rate:.0f}x, all four tables {t_rate / rate:.0f}x")


if __name__ == "__main__":
    main()
