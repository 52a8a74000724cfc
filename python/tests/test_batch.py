"""The batch read path (whole blocks: sf_dec_next_block, CAN frames in column runs by
sf_rec_can_cols, flags bit-packed eight frames at a time, channel dictionary indices, the
columns handed to Python without a copy) against the record-at-a-time path
(_core.Decoder(batch=False): sf_dec_next, one event per record) and against the independent
reader tests/scripts/sfl_ref.py: every column, every damage event and the counters must be
the same, on seeded logs with every record kind and every CAN flag and length (valid and
refused frames) and on the same logs with seeded damage (tests/scripts/sfl_damage.py and
random byte flips)."""
import io
import random
import struct
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

import streamfat
from streamfat import _core
from conftest import SCRIPTS
import sflwrite as w

sys.path.insert(0, str(SCRIPTS))
import sfl_ref  # noqa: E402

EFF, RTR, ERR, FD, BRS, ESI = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
FD_LENGTHS = list(range(9)) + [12, 16, 20, 24, 32, 48, 64]      # DLC 0..15
CHANNELS = (0, 1, 2, 5, 200)


def random_record(rng, ts):
    """One record: mostly CAN frames of every kind, some refused, some other types."""
    ch = rng.choice(CHANNELS)
    k = rng.random()
    if k < 0.12:
        t = rng.choice([w.SAMPLE, w.TEXT, w.LATENCY, w.DROP, w.ANNOTATION, w.META, 0x7F])
        body = {w.LATENCY: struct.pack("<qQ", rng.randint(-9, 9), 1000),
                w.DROP: struct.pack("<QQQ", 3, ts - 5, ts - 1),
                w.META: b"k=v"}.get(t, rng.randbytes(rng.randint(0, 20)))
        return w.rec(t, ch, ts, body, flags=rng.randint(0, 3))
    if k < 0.22:                                    # refused by the reader rules
        bad = rng.choice(["brs", "esi", "fdrtr", "errfd", "errrtr", "unknown", "id", "len",
                          "fdlen", "short", "tiny"])
        cid, flags, data, length = rng.randint(0, 0x7FF), 0, rng.randbytes(8), None
        if bad == "brs":
            flags = BRS
        elif bad == "esi":
            flags = ESI | EFF
        elif bad == "fdrtr":
            flags = FD | RTR
        elif bad == "errfd":
            flags = ERR | FD
        elif bad == "errrtr":
            flags = ERR | RTR
        elif bad == "unknown":
            flags = rng.choice([0x40, 0x80, 0x100, 0x80000000])
        elif bad == "id":
            cid = rng.choice([0x800, 0x1FFFFFFF])
        elif bad == "len":
            data = rng.randbytes(rng.randint(9, 15))
        elif bad == "fdlen":
            flags, data = FD, rng.randbytes(rng.randint(65, 70))
        elif bad == "short":                        # the body ends before its data
            if rng.random() < 0.5:
                data = rng.randbytes(rng.randint(0, 7))
                length = rng.randint(len(data) + 1, 8)
            else:
                flags, data = FD | rng.choice([0, BRS]), rng.randbytes(rng.choice([8, 16]))
                length = rng.choice([l for l in FD_LENGTHS if l > len(data)])
        else:
            return w.rec(w.CAN, ch, ts, rng.randbytes(rng.randint(0, 7)))
        return w.can(ch, ts, cid, data, flags, length)
    kind = rng.choice(["std", "ext", "rtr", "fd", "err"])
    if kind == "std":
        return w.can(ch, ts, rng.randint(0, 0x7FF), rng.randbytes(rng.randint(0, 8)))
    if kind == "ext":
        return w.can(ch, ts, rng.randint(0, 0x1FFFFFFF), rng.randbytes(rng.randint(0, 8)), EFF)
    if kind == "rtr":                               # a length, no data (zeros stored)
        return w.can(ch, ts, rng.randint(0, 0x7FF), bytes(rng.randint(0, 8)),
                     RTR | rng.choice([0, EFF]))
    if kind == "fd":
        n = rng.choice(FD_LENGTHS + [9, 13])        # odd FD lengths: the reader takes them
        return w.can(ch, ts, rng.randint(0, 0x1FFFFFFF), rng.randbytes(n),
                     FD | EFF | rng.choice([0, BRS]) | rng.choice([0, ESI]))
    return w.can(ch, ts, rng.choice([0x4, 0x80, 0x40, 0x800]), rng.randbytes(8), ERR | EFF)


def random_log(seed, file_id, B=1024, blocks=40):
    rng = random.Random(seed)
    ts = 1_700_000_000_000_000_000
    out = []
    for _ in range(blocks):
        recs, used = [], 0
        while True:
            ts += rng.randint(1, 5000)
            r = random_record(rng, ts)
            if 48 + used + len(r) > B:
                break
            recs.append(r)
            used += len(r)
            if rng.random() < 0.02:                 # a checkpointed, part-filled block
                break
        out.append(recs)
    hdr = [w.rec(w.CHANNEL, c, 0, f"can{c}".encode()) for c in CHANNELS[:3]]
    return w.sfl(out, B=B, file_id=file_id, header_records=hdr)


def decode(data, batch, chunk):
    """Every take() of a decode in chunks, as plain bytes, and the end state."""
    dec = _core.Decoder(batch=batch)
    takes, pos = [], 0
    while True:
        piece = data[pos:pos + chunk]
        pos += len(piece)
        ended = dec.decode(piece, not piece)
        takes.append({k: (bytes(v) if not isinstance(v, (int, list)) else v)
                      for k, v in dec.take().items()})
        if ended:
            break
    return takes, dec.header(), dec.stats()


def check_same(data, what):
    """Batch and record-at-a-time decodes agree on everything; the batch columns agree
    with the reference reader and among themselves (bitmaps, dictionary indices)."""
    for chunk in (len(data) + 1, 4096, 777):
        a = decode(data, True, chunk)
        b = decode(data, False, chunk)
        assert len(a[0]) == len(b[0]), what
        for i, (ta, tb) in enumerate(zip(a[0], b[0])):
            assert ta.keys() == tb.keys()
            for k in ta:
                assert ta[k] == tb[k], f"{what}, chunk {chunk}, take {i}: column {k} differs"
        assert a[1] == b[1] and a[2] == b[2], what
    # the columns against the reference reader, and the derived columns against the flags
    takes = a[0]
    cat = {k: b"".join(t[k] for t in takes) for k in
           ("can_ts", "can_channel", "can_id", "can_len", "can_flags")}
    n = sum(t["ncan"] for t in takes)
    data_cols = []
    for t in takes:
        offs = np.frombuffer(t["can_offsets"], np.int32)
        assert len(offs) == t["ncan"] + 1 and offs[0] == 0
        data_cols += [t["can_data"][offs[i]:offs[i + 1]] for i in range(t["ncan"])]
        fl = np.frombuffer(t["can_flags"], np.uint8)
        nb = (t["ncan"] + 7) // 8
        for j, bit in enumerate((EFF, RTR, FD, BRS, ESI, ERR)):
            want = np.packbits((fl & bit) != 0, bitorder="little").tobytes()
            assert t["can_bits"][j * nb:(j + 1) * nb] == want, f"{what}: bitmap {j}"
        runs = np.frombuffer(t["can_block_runs"], np.uint64).reshape(-1, 2)
        assert runs[:, 1].sum() == t["ncan"] and (np.diff(runs[:, 0].astype(np.int64)) > 0).all()
        ch = np.frombuffer(t["can_channel"], np.uint8)
        used = np.frombuffer(t["can_chan_used"], np.uint8)
        assert list(used) == sorted(set(ch.tolist()))
        idx = np.frombuffer(t["can_chan_idx"], np.int32)
        assert (used[idx] == ch).all(), f"{what}: channel indices"
    recs, _counts, _not_log = sfl_ref.read_log(data)
    ref = []
    for type_, ch, flags, ts, body in recs:
        if type_ == 1:
            v = sfl_ref.can_valid(flags, body)
            if v is not None and ts < 1 << 63:          # FORMAT.md: bad-can, bad-time
                # the flags column is a byte: bits 0-5 and the informational bits 6 and 7
                ref.append((ts, ch, v[0], v[1], flags & 0xFF,
                            b"" if flags & RTR else bytes(v[2])))
    got = list(zip(np.frombuffer(cat["can_ts"], np.uint64).tolist(), list(cat["can_channel"]),
                   np.frombuffer(cat["can_id"], np.uint32).tolist(), list(cat["can_len"]),
                   list(cat["can_flags"]), data_cols))
    assert len(got) == n
    assert got == ref, what
    return n


def test_every_kind_and_flag():
    data = random_log(1, 0x1111)
    n = check_same(data, "clean")
    assert n > 500
    t = streamfat.read_arrow(io.BytesIO(data), errors="skip")    # the refused frames
    # the Arrow table: the bool columns, dlc and data as the frames say
    recs = [r for r in sfl_ref.read_log(data)[0] if r[0] == 1]
    valid = [(r, sfl_ref.can_valid(r[2], r[4])) for r in recs]
    valid = [(r, v) for r, v in valid if v is not None]
    assert t.num_rows == len(valid)
    for name, bit in (("ext", EFF), ("rtr", RTR), ("fd", FD), ("brs", BRS), ("esi", ESI),
                      ("err", ERR)):
        assert t.column(name).to_pylist() == [bool(r[2] & bit) for r, _ in valid], name
    assert t.column("dlc").to_pylist() == [v[1] for _, v in valid]
    assert t.column("channel").to_pylist() == \
        ["can%d" % r[1] for r, _ in valid]     # named can0..2; the others unnamed: can<N>
    # every flag and every DLC's length was there
    fl = set(t.column("ext").to_pylist()), set(t.column("brs").to_pylist())
    assert fl == ({True, False}, {True, False})
    assert set(FD_LENGTHS) <= set(t.column("dlc").to_pylist())


@pytest.mark.parametrize("seed", range(1, 31))
def test_damaged(seed, tmp_path):
    base = tmp_path / "base.SFL"
    other = tmp_path / "other.SFL"
    base.write_bytes(random_log(100 + seed, 0x2222, B=512, blocks=30))
    other.write_bytes(random_log(200 + seed, 0x3333, B=512, blocks=30))
    bad = tmp_path / "bad.SFL"
    r = subprocess.run([sys.executable, str(SCRIPTS / "sfl_damage.py"), str(seed), str(base),
                        str(other), str(bad)], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    check_same(bad.read_bytes(), f"seed {seed}: {r.stdout.strip()}")
    # and random byte flips of our own
    rng = random.Random(seed)
    d = bytearray(base.read_bytes())
    for _ in range(rng.randint(1, 12)):
        d[rng.randrange(len(d))] ^= rng.randint(1, 255)
    check_same(bytes(d), f"seed {seed}: flips")
