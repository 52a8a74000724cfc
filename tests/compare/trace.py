#!/usr/bin/env python3
"""Turn a binary trace of tests/compare/trace_shim.c into text, two ways.

    trace.py TRACE STRICT_OUT EPOCHS_OUT

STRICT_OUT: every record in the order the calls entered: "W offset length sha256/16" per
write, "F kind" per flush, "T length", "A mode offset length", and the "S step" markers
run.sh writes between steps.

EPOCHS_OUT: the same writes per flush epoch (the writes between two flushes), as what the
epoch leaves on the device: its written byte ranges, merged, each with the hash of the
bytes it holds at the flush (later writes over earlier ones, in trace order), then the
flush. This is the form run.sh compares: the device contract (include/streamfat/bdev.h)
orders nothing between two flushes, and the asynchronous device's threads and the
logger's batching of ring blocks into requests make the order and split of writes within
an epoch vary from run to run of the same commit; what reaches the medium at each flush
does not. Python standard library only.
"""
import hashlib
import sys


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        line = data[pos:nl].decode()
        pos = nl + 1
        parts = line.split(" ", 1)
        if parts[0] == "W":
            off, n = (int(x) for x in parts[1].split())
            yield ("W", off, data[pos:pos + n])
            pos += n
        else:
            yield (parts[0], parts[1] if len(parts) > 1 else "", None)


def h(b):
    return hashlib.sha256(b).hexdigest()[:16]


def flush_epoch(out, writes, nwrites):
    """writes: list of (offset, bytes) in trace order."""
    if not writes:
        return
    ranges = sorted((off, off + len(b)) for off, b in writes)
    merged = []
    for a, z in ranges:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], z)
        else:
            merged.append([a, z])
    for a, z in merged:
        buf = bytearray(z - a)
        for off, b in writes:
            if off < z and off + len(b) > a:
                lo, hi = max(off, a), min(off + len(b), z)
                buf[lo - a:hi - a] = b[lo - off:hi - off]
        out.write(f"  bytes {a}+{z - a} {h(bytes(buf))}\n")


def main(argv):
    trace, strict_path, epochs_path = argv[1:4]
    with open(strict_path, "w") as strict, open(epochs_path, "w") as ep:
        writes = []
        for kind, a, b in records(trace):
            if kind == "W":
                strict.write(f"W {a} {len(b)} {h(b)}\n")
                writes.append((a, b))
                continue
            strict.write(f"{kind} {a}\n")
            flush_epoch(ep, writes, len(writes))
            writes = []
            ep.write(f"{kind} {a}\n")
        flush_epoch(ep, writes, len(writes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
