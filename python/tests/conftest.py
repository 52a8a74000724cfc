"""Shared fixtures: the streamfat CLI (SF, else the repository's build/streamfat) makes the
logs at run time (never committed data)."""
import os
import random
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SF = os.environ.get("SF") or str(REPO / "build" / "streamfat")
SCRIPTS = REPO / "tests" / "scripts"


def sf(*args, input=None, check=True, timeout=300):
    """Run the CLI; stdin from `input` (bytes) or /dev/null."""
    r = subprocess.run([SF, *map(str, args)], input=input,
                       stdin=None if input is not None else subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"streamfat {' '.join(map(str, args))}: exit {r.returncode}\n"
                             f"{r.stderr.decode(errors='replace')}")
    return r


@pytest.fixture(scope="session")
def sfbin():
    if not os.access(SF, os.X_OK):
        pytest.fail(f"no streamfat CLI at {SF} (build it: make)")
    return SF


def candump_frames(seed, n, channels=("can0", "can1", "vcan2")):
    """Seeded frames of every kind as (candump -L line, expected Frame fields)."""
    rng = random.Random(seed)
    t = 1_700_000_000_000_000
    out = []
    for _ in range(n):
        t += rng.randint(1, 2000)
        ch = rng.choice(channels)
        kind = rng.choice(["std", "std", "ext", "rtr", "fd", "err", "empty"])
        ext = rtr = fd = brs = esi = err = False
        if kind == "ext":
            cid, ext = rng.randint(0x800, 0x1FFFFFFF), True
            data = rng.randbytes(rng.randint(0, 8))
            text = f"{cid:08X}#{data.hex().upper()}"
        elif kind == "rtr":
            cid, rtr, data = rng.randint(0, 0x7FF), True, b""
            text = f"{cid:03X}#R"
        elif kind == "fd":
            cid, fd = rng.randint(0, 0x7FF), True
            brs, esi = rng.random() < 0.5, rng.random() < 0.5
            data = rng.randbytes(rng.choice([0, 3, 8, 12, 16, 20, 24, 32, 48, 64]))
            text = f"{cid:03X}##{brs | esi << 1:X}{data.hex().upper()}"
        elif kind == "err":
            cid, err, data = rng.choice([0x4, 0x80, 0x40]), True, rng.randbytes(8)
            text = f"{0x20000000 | cid:08X}#{data.hex().upper()}"
        else:
            cid = rng.randint(0, 0x7FF)
            data = b"" if kind == "empty" else rng.randbytes(rng.randint(1, 8))
            text = f"{cid:03X}#{data.hex().upper()}"
        line = f"({t // 1_000_000}.{t % 1_000_000:06d}) {ch} {text}"
        out.append((line, dict(ts=t * 1000, channel=ch, id=cid, ext=ext, rtr=rtr, fd=fd,
                               brs=brs, esi=esi, err=err, dlc=len(data), data=data)))
    return out


def log_lines(img, lines, *extra, device_id=None):
    """streamfat log --source stdin of candump lines onto a new exFAT image."""
    args = ["log", "--mkfs", "exfat", "--size", "64M", "--source", "stdin", "--no-direct",
            "-q", *extra]
    if device_id:
        args += ["--device-id", device_id]
    sf(*args, img, input=("\n".join(lines) + "\n").encode())
    return img


@pytest.fixture
def frames_image(tmp_path, sfbin):
    """An image with one log of 3000 seeded frames of every kind; (path, expected)."""
    fr = candump_frames(17, 3000)
    img = log_lines(tmp_path / "disk.img", [l for l, _ in fr], device_id="bench-1")
    return img, [e for _, e in fr]
