"""Sources that are not logs (issue 26, item 19): every entry point of the package that takes
a source, given a missing path, a directory where a file is expected, random bytes (named
.bin and named .SFL), a size that is not a whole number of 512-byte sectors and an empty
file, answers with one line that names the file and says what it is (never Python's
`[Errno 2] ...` or the C layer's "invalid argument"), and fails exactly where `streamfat
export` exits non-zero. The Spark data source's rows of the table are in test_spark.py
(test_spark_bad_source)."""
import os
import random
import subprocess
import sys

import can
import pytest

import streamfat
from conftest import sf

# input -> (what export says: its exit status; the words of the one line per entry point)
INPUTS = ["missing", "directory", "random", "random_sfl", "odd_size", "empty"]
ENTRIES = ["open_volume", "read_arrow", "read_log", "iter_batches", "lake", "can_logreader"]


def make_input(tmp_path, kind, sfl_name=False):
    """The path of a source of that kind (the file made, the directory created);
    sfl_name: named *.sfl (python-can's LogReader chooses its reader by the suffix)."""
    if sfl_name and kind in ("random", "odd_size"):
        p = make_input(tmp_path, kind)
        return p.rename(p.with_suffix(".sfl"))
    rng = random.Random(kind)
    if kind == "missing":
        return tmp_path / "missing.sfl"
    if kind == "directory":
        p = tmp_path / "adir.sfl"       # named .sfl: python-can's LogReader picks our reader
        p.mkdir()
        return p
    if kind == "random":
        p = tmp_path / "rnd.bin"
        p.write_bytes(rng.randbytes(8192))
    elif kind == "random_sfl":
        p = tmp_path / "RND.SFL"
        p.write_bytes(rng.randbytes(8192))
    elif kind == "odd_size":
        p = tmp_path / "rnd5000.bin"
        p.write_bytes(rng.randbytes(5000))
    else:
        p = tmp_path / "empty.sfl"
        p.write_bytes(b"")
    return p


# what each entry point says (a regular expression after "PATH: "), None: no error
def expected(entry, kind):
    if kind == "missing":
        return "no such file or directory$"
    if entry == "open_volume":
        return {"directory": "a directory, not an image or a device$",
                "empty": r"not a FAT or exFAT volume \(an empty file\)$",
                "odd_size": r"not a FAT or exFAT volume \(5000 bytes: not a whole number",
                }.get(kind, "not a FAT or exFAT volume$")
    if kind == "directory":
        # a directory is a source of the readers (every .SFL below it); not for python-can,
        # which reads one file
        return "a directory, not a log file$" if entry == "can_logreader" else None
    if kind == "empty":
        return None                    # a log never written: no records, no damage
    if kind == "random_sfl":
        return "not a streamfat log: no valid block in 8192 bytes$"
    size = 8192 if kind == "random" else 5000
    if entry == "can_logreader":       # named .sfl (make_input): read as a log only
        return f"not a streamfat log: no valid block in {size} bytes$"
    return f"neither a streamfat log nor a FAT/exFAT volume: no valid block in {size} bytes$"


def run_entry(entry, path, tmp_path):
    """(exit status 0/1, the error's text or '')."""
    if entry == "lake":
        r = subprocess.run([sys.executable, "-m", "streamfat", "lake", "--out",
                            str(tmp_path / "lake"), str(path)], capture_output=True,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert r.returncode in (0, 1), r.stderr
        return r.returncode, r.stderr.strip().removeprefix("python -m streamfat lake: ")
    try:
        if entry == "open_volume":
            streamfat.open_volume(path).close()
        elif entry == "read_arrow":
            streamfat.read_arrow(path)
        elif entry == "read_log":
            list(streamfat.read_log(path))
        elif entry == "iter_batches":
            list(streamfat.iter_batches(path))
        else:
            list(can.LogReader(str(path)))
    except (streamfat.StreamfatError, OSError) as e:
        return 1, str(e)
    return 0, ""


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("entry", ENTRIES)
def test_bad_source(entry, kind, tmp_path, sfbin):
    path = make_input(tmp_path, kind, sfl_name=entry == "can_logreader")
    want = expected(entry, kind)
    rc, text = run_entry(entry, path, tmp_path)
    if want is None:
        assert (rc, text) == (0, "")
    else:
        assert rc == 1
        assert len(text.splitlines()) == 1, text
        assert text.startswith(f"{path}: "), text
        assert "Errno" not in text and "invalid argument" not in text.lower(), text
        import re
        assert re.search(want, text[len(str(path)) + 2:]), text
    # the readers and the lake fail where export does (export of a directory is item 22's)
    if entry != "open_volume" and kind != "directory":
        ex = sf("export", "-f", "candump", "-o", os.devnull, path, check=False)
        assert rc == (1 if ex.returncode else 0), ex.stderr


def test_lake_ingests_the_logs_beside_a_non_log(frames_image, tmp_path):
    """A folder with a log and a random .SFL: the log's rows reach the lake, the other file
    is one line and exit status 1 (as `streamfat export` of the folder's files)."""
    img, expect = frames_image
    card = tmp_path / "card"
    card.mkdir()
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        (card / "LOG00001.SFL").write_bytes(f.read())
    (card / "LOG00002.SFL").write_bytes(random.Random(5).randbytes(8192))
    r = subprocess.run([sys.executable, "-m", "streamfat", "lake", "--out",
                        str(tmp_path / "lake"), str(card)], capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"python -m streamfat lake: {card / 'LOG00002.SFL'}: not a streamfat log: "
        "no valid block in 8192 bytes"]
    assert r.stdout.startswith("lake: 2 files (1 new") and f"{len(expect)} raw" in r.stdout
