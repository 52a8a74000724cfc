"""Damaged logs: read_arrow(errors="skip") agrees with the independent reader
tests/scripts/sfl_ref.py (written from docs/FORMAT.md alone) frame for frame and on every
damage count, over seeded damage from tests/scripts/sfl_damage.py; errors="raise" raises
FormatError (file, block, offset) exactly when the file is damaged."""
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import streamfat
from conftest import SCRIPTS, candump_frames, log_lines

sys.path.insert(0, str(SCRIPTS))
import sfl_ref  # noqa: E402

SEEDS = range(1, 61)


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("dmg")
    out = []
    for seed in (5, 6):
        img = log_lines(d / f"{seed}.img", [l for l, _ in candump_frames(seed, 400)],
                        "--chunk", "512")
        with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
            p = d / f"base{seed}.SFL"
            p.write_bytes(f.read())
            out.append(p)
    return out


def reference(data):
    recs, counts, not_log = sfl_ref.read_log(data)
    frames, bad = [], 0
    for type_, _ch, flags, ts, body in recs:
        if type_ != 1:
            continue
        v = sfl_ref.can_valid(flags, body)
        if v is None:
            bad += 1
        else:
            frames.append((ts, v[0], b"" if flags & 2 else bytes(v[2])))
    counts["bad-can"] = bad
    return frames, counts, not_log


@pytest.mark.parametrize("seed", SEEDS)
def test_damage_matches_reference(seed, two_logs, tmp_path):
    base, other = two_logs
    bad = tmp_path / "BAD.SFL"
    r = subprocess.run([sys.executable, str(SCRIPTS / "sfl_damage.py"), str(seed), str(base),
                        str(other), str(bad)], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    what = r.stdout.strip()
    frames, counts, not_log = reference(bad.read_bytes())
    t = streamfat.read_arrow(bad, errors="skip")
    got = list(zip(t.column("ts").cast(pa.int64()).to_pylist(), t.column("id").to_pylist(),
                   t.column("data").to_pylist()))
    assert got == frames, f"seed {seed} ({what})"
    summ = streamfat.damage_summary(t)["damage"]
    for k in sfl_ref.COUNT_NAMES:
        assert summ.get(k, 0) == counts[k], f"seed {seed} ({what}): {k} {summ} {counts}"
    assert bool(summ.get("not a log")) == not_log
    damaged = not_log or any(counts.values())
    if damaged:
        with pytest.raises(streamfat.FormatError) as ei:
            streamfat.read_arrow(bad)
        e = ei.value
        assert e.file == str(bad) and e.block >= 0 and e.offset >= 0
        assert str(bad) in str(e) and f"block {e.block}" in str(e)
        assert any(isinstance(x, streamfat.Damage) for x in streamfat.read_log(bad, errors="skip"))
    else:
        assert streamfat.read_arrow(bad).num_rows == len(frames)


def test_raise_names_block_and_offset(two_logs, tmp_path):
    base, _ = two_logs
    d = bytearray(base.read_bytes())
    d[3 * 512 + 100] ^= 0xFF                    # block 3's payload: CRC mismatch
    p = tmp_path / "CRC.SFL"
    p.write_bytes(bytes(d))
    with pytest.raises(streamfat.FormatError) as ei:
        streamfat.read_arrow(p)
    e = ei.value
    assert (e.block, e.offset, e.kind) == (3, 3 * 512, "invalid")
    assert "CRC" in e.reason
    # read_log: the records before the damage come out, then the error
    recs = []
    with pytest.raises(streamfat.FormatError):
        for r in streamfat.read_log(p):
            recs.append(r)
    assert any(isinstance(r, streamfat.Frame) for r in recs)
    t = streamfat.read_arrow(p, errors="skip")
    s = streamfat.damage_summary(t)
    assert s["damage"] == {"invalid": 1}      # block 4 on: at their places (FORMAT.md)
    assert s["files"][0]["skipped"][0]["block"] == 3


def test_not_a_log(tmp_path):
    p = tmp_path / "X.SFL"
    p.write_bytes(random.Random(3).randbytes(5000))
    with pytest.raises(streamfat.FormatError, match="not a streamfat log") as e:
        streamfat.read_arrow(p)
    assert e.value.kind == "not a log"                  # the reader table's word
    t = streamfat.read_arrow(p, errors="skip")
    assert t.num_rows == 0 and streamfat.damage_summary(t)["damage"] == {"not a log": 1}
