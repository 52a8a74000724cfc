#!/usr/bin/env python3
"""Seeded damage for t_sfl_reference: sfl_damage.py SEED BASE OTHER OUT writes BASE with one
to three kinds of damage (chosen by SEED) to OUT and prints what it did. OTHER is another log
(its blocks are foreign to BASE). Some kinds re-seal the block's CRC, as a buggy or hostile
writer would, so that the checks past the CRC (docs/FORMAT.md, "Reading a file") are reached.
Kinds that hit several places (several bad blocks, a wild seq, far-apart swaps, copies over
any block) test the position rule: one block never hides the blocks after it.

    sfl_damage.py --check BASE DAMAGED    every block of BASE that DAMAGED still holds
                                          unchanged at its place must come back: its records
                                          are among the reference reader's, in order (exit
                                          1 and the first block lost otherwise)

Standard library only."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfl_ref import crc32c  # noqa: E402  (test code; shares nothing with src/)


def reseal(d, off):
    used = struct.unpack_from("<I", d, off + 32)[0]
    b = struct.unpack_from("<I", d, off + 40)[0]
    used = min(used, b - 48)
    crc = crc32c(bytes(d[off + 48:off + 48 + used]), crc32c(bytes(d[off:off + 44])))
    struct.pack_into("<I", d, off + 44, crc ^ 0xFFFFFFFF)


def nonzero_blocks(d, B):
    return [i for i in range(len(d) // B) if any(d[i * B:(i + 1) * B])]


def damage(rng, d, other, B):
    nz = nonzero_blocks(d, B)
    nb = len(d) // B
    last = nz[-1] if nz else 0
    pick = lambda lo=1: rng.randint(min(lo, last), max(last, min(lo, last)))  # noqa: E731
    kind = rng.choice(["flip", "flip", "swap", "dup_block", "dup_tail", "truncate", "kind",
                       "foreign", "zero", "dirty_tail", "seq", "count", "first_ts",
                       "header", "zero_tail", "garbage_tail", "can_flags",
                       "wild_seq", "wild_seq", "far_swap", "far_swap", "dup_any", "dup_any",
                       "bad_blocks", "bad_blocks"])
    if kind == "wild_seq" and last >= 1:
        i = pick(0)
        new = rng.choice([1 << 62, (1 << 64) - 1, last + 1 + rng.randint(0, 5),
                          rng.getrandbits(64)])
        struct.pack_into("<Q", d, i * B + 16, new)
        reseal(d, i * B)
        return d, "block %d: wild seq %d, resealed" % (i, new)
    if kind == "far_swap" and last >= 2:
        i, j = sorted(rng.sample(range(0 if rng.random() < 0.2 else 1, last + 1), 2))
        a, b = bytes(d[i * B:(i + 1) * B]), bytes(d[j * B:(j + 1) * B])
        d[i * B:(i + 1) * B], d[j * B:(j + 1) * B] = b, a
        return d, "blocks %d and %d swapped" % (i, j)
    if kind == "dup_any" and last >= 2:
        out = []
        for _ in range(rng.randint(1, 3)):
            i, j = rng.sample(range(last + 1), 2)      # either direction, block 0 included
            d[j * B:(j + 1) * B] = d[i * B:(i + 1) * B]
            out.append("block %d copied over %d" % (i, j))
        return d, ", ".join(out)
    if kind == "bad_blocks" and last >= 1:
        bad = sorted(rng.sample(range(last + 1), rng.randint(1, min(6, last + 1))))
        for i in bad:
            p = i * B + rng.randrange(B)
            d[p] ^= rng.randint(1, 255)
        return d, "bytes flipped in blocks %s" % bad
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(len(d))
            d[p] ^= rng.randint(1, 255)
        return d, kind
    if kind == "swap" and last >= 2:
        i = rng.randint(1, last - 1)
        a, b = bytes(d[i * B:(i + 1) * B]), bytes(d[(i + 1) * B:(i + 2) * B])
        d[i * B:(i + 1) * B], d[(i + 1) * B:(i + 2) * B] = b, a
        return d, "swap %d,%d" % (i, i + 1)
    if kind == "dup_block" and last >= 2:
        i = rng.randint(0, last - 1)
        j = rng.randint(i + 1, last)
        d[j * B:(j + 1) * B] = d[i * B:(i + 1) * B]
        return d, "block %d copied over %d" % (i, j)
    if kind == "dup_tail" and last >= 1:
        k = rng.randint(1, min(3, last))
        d = d[:(last + 1) * B] + d[(last + 1 - k) * B:(last + 1) * B]
        return d, "last %d blocks repeated" % k
    if kind == "truncate":
        cut = rng.randint(1, len(d) - 1)
        if rng.random() < 0.5 and last >= 1:        # inside a block, past its used bytes
            i = rng.randint(1, last)
            used = struct.unpack_from("<I", d, i * B + 32)[0]
            if 48 + used < B:
                cut = i * B + rng.randint(48 + used, B - 1)
        return d[:cut], "truncated at %d" % cut
    if kind == "kind" and last >= 1:
        i = pick()
        struct.pack_into("<H", d, i * B + 6, 1)
        reseal(d, i * B)
        return d, "block %d: kind 1, resealed" % i
    if kind == "foreign" and len(other) >= 2 * B:
        i = pick()
        j = rng.randint(1, len(other) // B - 1)
        d[i * B:(i + 1) * B] = other[j * B:(j + 1) * B]
        return d, "block %d: foreign block %d" % (i, j)
    if kind == "zero" and last >= 1:
        i = pick()
        d[i * B:(i + 1) * B] = bytes(B)
        return d, "block %d zeroed" % i
    if kind == "dirty_tail":
        i = pick(0)
        used = struct.unpack_from("<I", d, i * B + 32)[0]
        if 48 + used < B:
            d[i * B + rng.randint(48 + used, B - 1)] = rng.randint(1, 255)
            return d, "block %d: byte after used" % i
    if kind == "seq" and last >= 1:
        i = pick()
        seq = struct.unpack_from("<Q", d, i * B + 16)[0]
        new = max(0, seq + rng.choice([-3, -1, 1, 2, 5]))
        struct.pack_into("<Q", d, i * B + 16, new)
        reseal(d, i * B)
        return d, "block %d: seq %d -> %d, resealed" % (i, seq, new)
    if kind == "count":
        i = pick(0)
        c = struct.unpack_from("<I", d, i * B + 36)[0]
        struct.pack_into("<I", d, i * B + 36, c + rng.choice([-1, 1]) & 0xFFFFFFFF)
        reseal(d, i * B)
        return d, "block %d: count changed, resealed" % i
    if kind == "first_ts":
        i = pick(0)
        struct.pack_into("<Q", d, i * B + 24,
                         struct.unpack_from("<Q", d, i * B + 24)[0] ^ rng.randint(1, 1 << 20))
        reseal(d, i * B)
        return d, "block %d: first_ts changed, resealed" % i
    if kind == "header":
        d[rng.randrange(48)] ^= rng.randint(1, 255)
        return d, "block 0 header byte flipped"
    if kind == "zero_tail" and last >= 1:
        k = rng.randint(1, min(3, last))
        d[(nb - k) * B:] = bytes(len(d) - (nb - k) * B)
        return d, "last %d blocks zeroed" % k
    if kind == "garbage_tail":
        n = rng.randint(1, 2 * B)
        return d + bytes(rng.randrange(256) for _ in range(n)), "%d random bytes appended" % n
    if kind == "can_flags" and last >= 1:
        i = pick()
        used = struct.unpack_from("<I", d, i * B + 32)[0]
        if struct.unpack_from("<H", d, i * B + 6)[0] == 2 and used >= 16 and d[i * B + 48] == 1:
            # informational bit 6 (kept), meaning-changing bit 16 (bad-can), BRS alone,
            # ERR+RTR, FD+RTR (FORMAT.md, Record types)
            bad = rng.choice([0x40, 0x10000, 0x10, 0x06, 0x0A])
            struct.pack_into("<I", d, i * B + 48 + 4, bad)
            reseal(d, i * B)
            return d, "block %d: first CAN record flags 0x%x, resealed" % (i, bad)
    p = rng.randrange(len(d))
    d[p] ^= 0x40
    return d, "flip (fallback)"


def check(base, damaged):
    """Every block of base unchanged at its place in damaged comes back (the position rule)."""
    from sfl_ref import read_log, block_check, walk_records
    B = struct.unpack_from("<I", base, 40)[0]
    got, _, _ = read_log(damaged)
    k = 0
    for n in range(len(base) // B):
        blk = base[n * B:(n + 1) * B]
        if damaged[n * B:(n + 1) * B] != blk or is_zero_block(blk):
            continue
        h = block_check(blk, B)
        recs = walk_records(blk, h) if h else None
        if recs is None:
            continue                                  # not a valid block of the base
        for r in recs:
            while k < len(got) and got[k] != r:
                k += 1
            if k == len(got):
                print("block %d (unchanged at its place) lost" % n)
                return 1
            k += 1
    return 0


def is_zero_block(b):
    return b.count(0) == len(b)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()))
    seed, base, other, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    rng = random.Random(seed)
    d = bytearray(open(base, "rb").read())
    o = open(other, "rb").read()
    B = struct.unpack_from("<I", d, 40)[0]
    what = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not d:
            break
        d, w = damage(rng, d, o, B)
        what.append(w)
    open(out, "wb").write(bytes(d))
    print("; ".join(what))


if __name__ == "__main__":
    main()
