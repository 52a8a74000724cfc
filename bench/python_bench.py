#!/usr/bin/env python3
"""The Python package's numbers (docs/BENCHMARKS.md, "Python package"), in one run:

    python bench/python_bench.py DIR [PYCAN_FRAMES]

DIR holds LOGnnnnn.SFL files and, for the first one, LOG00001.blf and LOG00001.log
(streamfat export -f blf / -f candump of it). Prints CPU seconds (user + system) and frames
per CPU second of: streamfat.iter_batches over the first .SFL and over every .SFL; read_arrow
of the first and of every .SFL (one table); python-can's BLFReader and CanutilsLogReader over
the frames of LOG00001 (the first PYCAN_FRAMES of them, default all: python-can is slow, so
its rate comes from that sample and the ratios compare rates, frames per CPU second);
DBC decoding (a generated DBC of 20 messages and 200 signals) by
streamfat.dbc over whole columns (split_frames of LOG00001's table, three calls: the best
and the first; and batch by batch of iter_batches over every file, as the lake does) and by cantools' decode_message frame by frame (the first
200,000 frames); and peak RSS of each streamfat step (a child process each)."""
import glob
import os
import resource
import subprocess
import sys
import time


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(code):
    """Run code in a fresh interpreter; its stdout and peak RSS (MiB)."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, check=True)
    return r.stdout.strip()


DBC_MSG = """BO_ {id} M{k}: 8 ECU
 SG_ M{k}_a : 0|8@1+ (1,0) [0|255] "" ECU
 SG_ M{k}_b : 8|8@1- (0.5,-3) [0|0] "" ECU
 SG_ M{k}_c : 16|12@1+ (0.1,0) [0|0] "" ECU
 SG_ M{k}_d : 28|4@1+ (1,0) [0|15] "" ECU
 SG_ M{k}_e : 39|8@0+ (1,0) [0|255] "" ECU
 SG_ M{k}_f : 47|4@0- (1,0) [0|0] "" ECU
 SG_ M{k}_g : 43|4@0+ (2,1) [0|0] "" ECU
 SG_ M{k}_h : 48|6@1+ (1,0) [0|63] "" ECU
 SG_ M{k}_i : 54|5@1- (1,0) [0|0] "" ECU
 SG_ M{k}_j : 59|5@1+ (0.25,0) [0|0] "" ECU
"""


def make_dbc(path):
    with open(path, "w") as f:
        f.write('VERSION ""\n\nNS_ :\n\nBS_:\n\nBU_: ECU\n\n')
        for k in range(20):
            f.write(DBC_MSG.format(id=0x100 + k, k=k) + "\n")


def main():
    d = sys.argv[1]
    pycan_n = int(sys.argv[2]) if len(sys.argv) > 2 else None
    sfls = sorted(glob.glob(os.path.join(d, "*.SFL")))
    first = sfls[0]
    base = first[:-4]

    # each step in a fresh interpreter (its own peak RSS), after a warm-up read of one chunk
    step = """
import resource, streamfat
def usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime
next(iter(streamfat.iter_batches({first!r})))
u0, s0 = usage()
{body}
u1, s1 = usage()
print(n, u1 - u0, s1 - s0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"""
    rates = {}
    for what, files, body in (
            ("iter_batches", sfls[:1], "n = sum(b.num_rows for b in streamfat.iter_batches({files!r}))"),
            ("iter_batches", sfls, "n = sum(b.num_rows for b in streamfat.iter_batches({files!r}))"),
            ("read_arrow", sfls[:1], "n = streamfat.read_arrow({files!r}).num_rows"),
            ("read_arrow", sfls, "n = streamfat.read_arrow({files!r}).num_rows")):
        out = child(step.format(first=first, body=body.format(files=files))).split()
        n, u, sy, rss = int(out[0]), float(out[1]), float(out[2]), float(out[3])
        c = u + sy
        rates[what] = n / c
        print(f"{what}, {len(files)} files: {n} frames, {c:.2f} CPU s (user {u:.2f}, system "
              f"{sy:.2f}), {n / c / 1e6:.2f} M frames/CPU s, peak RSS {rss:.0f} MiB")
    out = child("import resource, numpy, pyarrow, streamfat; "
                "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    print(f"(peak RSS of importing numpy, pyarrow and streamfat alone: {float(out):.0f} MiB)")

    import can
    for what, cls, path in (("python-can BLFReader", can.BLFReader, base + ".blf"),
                            ("python-can CanutilsLogReader", can.CanutilsLogReader,
                             base + ".log")):
        t = cpu()
        k = 0
        for _m in cls(path):
            k += 1
            if pycan_n and k >= pycan_n:
                break
        c2 = cpu() - t
        print(f"{what}: {k} frames, {c2:.2f} CPU s, {k / c2 / 1e6:.3f} M frames/CPU s; "
              f"read_arrow is {rates['read_arrow'] / (k / c2):.0f}x, iter_batches "
              f"{rates['iter_batches'] / (k / c2):.0f}x (rates of the {len(sfls)}-file runs)")

    import cantools
    import numpy as np
    import pyarrow as pa
    import streamfat
    from streamfat import dbc
    dbcp = os.path.join(d, "bench20.dbc")
    make_dbc(dbcp)
    tab = streamfat.read_arrow(first)
    msgs = dbc.load([dbcp])
    c3s = []
    for _ in range(3):                # the first call pays for fresh memory pages
        t = cpu()
        decoded, raw = dbc.split_frames(tab, msgs, labels=False)
        c3s.append(cpu() - t)
        nd = sum(v.num_rows for v in decoded.values())
        del decoded, raw
    c3 = min(c3s)
    print(f"DBC over columns (20 messages, 200 signals): {nd} frames decoded of {tab.num_rows}, "
          f"{c3:.2f} CPU s (best of 3; the calls: "
          f"{', '.join(f'{x:.2f}' for x in c3s)}), {tab.num_rows / c3 / 1e6:.2f} M frames/CPU s "
          f"(first call {tab.num_rows / c3s[0] / 1e6:.2f} M)")
    # as the lake decodes: batch after batch of iter_batches over every file (the memory of
    # one batch reused by the next)
    batches = list(streamfat.iter_batches(sfls))
    nb = sum(b.num_rows for b in batches)
    t = cpu()
    for b in batches:
        dbc.split_frames(pa.Table.from_batches([b]), msgs, labels=False)
    c5 = cpu() - t
    print(f"DBC over columns, batch by batch ({len(batches)} batches of iter_batches): "
          f"{nb} frames, {c5:.2f} CPU s, {nb / c5 / 1e6:.2f} M frames/CPU s")
    del batches
    db = cantools.database.load_file(dbcp)
    sub = tab.slice(0, 200_000)
    ids = sub.column("id").to_numpy()
    data = sub.column("data").to_pylist()
    t = cpu()
    for i, x in zip(ids.tolist(), data):
        db.decode_message(i, x)
    c4 = cpu() - t
    print(f"cantools decode_message: {len(data)} frames, {c4:.2f} CPU s, "
          f"{len(data) / c4 / 1e6:.3f} M frames/CPU s; columns are "
          f"{(tab.num_rows / c3) / (len(data) / c4):.0f}x (best call), "
          f"{(nb / c5) / (len(data) / c4):.0f}x (batch by batch), "
          f"{(tab.num_rows / c3s[0]) / (len(data) / c4):.0f}x (first call)")


if __name__ == "__main__":
    main()
