#!/usr/bin/env python3
"""Damage the unsynced tail of a logcut log on an image, for t_recover_past_bad:

    recover_damage.py IMG FILE_ID BLOCKS CKPT SEED SPEC

finds the log's record blocks (4096 bytes, seq 1..BLOCKS, written contiguously by logcut on
a fresh volume) by their headers, damages some of those past the checkpoint (seq > CKPT) and
prints what recovery and the readers must then say (docs/FORMAT.md, the position rule):
"attached DAMAGED VALID LAST" followed by the seqs whose records must come back, where LAST
is the last block valid at its place, VALID the valid blocks in CKPT+1..LAST and DAMAGED the
others in that range. SPEC: "bad:S,S..." flips a payload byte of those seqs; "seed" chooses
by SEED among several bad blocks, wild seqs (re-sealed), swaps, copies and zeroed blocks.
Standard library only; the CRC comes from the independent reader sfl_ref.py."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfl_ref import block_check  # noqa: E402
from sfl_damage import reseal  # noqa: E402

B = 4096


def main():
    img, fid, nblocks, ckpt, seed, spec = (sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3]),
                                           int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    d = bytearray(open(img, "rb").read())
    at = {}
    for seq in range(0, nblocks + 1):
        pat = b"SFLB" + struct.pack("<HHQQ", 1, 2 if seq else 1, fid, seq)
        p = d.find(pat)
        if p < 0:
            sys.exit("block %d of %x not found" % (seq, fid))
        at[seq] = p
    for seq in range(1, nblocks + 1):       # contiguous, as the test needs
        if at[seq] != at[0] + seq * B:
            sys.exit("block %d not at its place on the image" % seq)
    tail = list(range(ckpt + 1, nblocks + 1))
    rng = random.Random(seed)
    what = []

    def blk(s):
        return slice(at[0] + s * B, at[0] + (s + 1) * B)

    if spec.startswith("bad:"):
        for s in map(int, spec[4:].split(",")):
            d[at[s] + 48 + 100] ^= 0x5A
            what.append("flip %d" % s)
    else:
        for _ in range(rng.randint(1, 4)):
            k = rng.choice(["flip", "flip", "wild", "swap", "copy", "zero"])
            s = rng.choice(tail)
            if k == "flip":
                d[at[0] + s * B + rng.randrange(B)] ^= rng.randint(1, 255)
            elif k == "wild":
                o = at[0] + s * B
                if block_check(bytes(d[o:o + B]), B):
                    struct.pack_into("<Q", d, o + 16, rng.choice([1 << 62, s + 7, 0]))
                    reseal(d, o)
            elif k == "swap" and len(tail) >= 2:
                s, t = rng.sample(tail, 2)
                a, b = bytes(d[blk(s)]), bytes(d[blk(t)])
                d[blk(s)], d[blk(t)] = b, a
                k = "swap %d" % t
            elif k == "copy":
                t = rng.randint(1, nblocks)
                d[blk(s)] = bytes(d[blk(t)])
                k = "copy of %d over" % t
            elif k == "zero":
                d[blk(s)] = bytes(B)
            what.append("%s %d" % (k, s))
    open(img, "r+b").write(d)
    valid = []
    for s in tail:
        h = block_check(bytes(d[blk(s)]), B)
        if h and h["file_id"] == fid and h["seq"] == s and h["kind"] == 2:
            valid.append(s)
    last = valid[-1] if valid else ckpt
    damaged = (last - ckpt) - len(valid)
    print("attached %d %d %d %s # %s" % (damaged, len(valid), last,
                                        ",".join(map(str, list(range(1, ckpt + 1)) + valid)),
                                        "; ".join(what)))


if __name__ == "__main__":
    main()
