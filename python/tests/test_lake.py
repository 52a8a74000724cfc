"""The lake (python -m streamfat lake / streamfat-lake): Hive layout, DuckDB over it equal to
read_arrow + the DBC, idempotent and incremental by file and block, interrupted runs, bad
lake directories and DBCs as one line."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import streamfat
from streamfat import dbc, lake
import sflwrite as w
from conftest import log_lines, sf
from test_dbc import DBC, vehicle_lines


def duck(lakedir, sql):
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lake AS SELECT * FROM read_parquet('{lakedir}/**/*.parquet', "
                "hive_partitioning = true, union_by_name = true)")
    return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def vimg(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("lake")
    lines, _ = vehicle_lines(21, 3000)
    return log_lines(d / "v.img", lines, device_id="truck7")


def expected(source):
    t = streamfat.read_arrow(source)
    decoded, raw = dbc.split_frames(t, dbc.load([DBC]))
    return t, decoded, raw


def test_layout_and_duckdb(vimg, tmp_path):
    out = tmp_path / "L"
    sm = lake.ingest(out, [vimg], [DBC])
    t, decoded, raw = expected(vimg)
    parts = sorted(p.relative_to(out).parts[:3] for p in out.rglob("*.parquet"))
    assert ("device=truck7", "message=Engine", "date=2023-11-14") in parts
    assert ("device=truck7", "message=_raw", "date=2023-11-14") in parts
    assert all(p[0] == "device=truck7" for p in parts)
    assert sm.rows == t.num_rows
    per_msg = dict(duck(out, "SELECT message, count(*) FROM lake GROUP BY message"))
    assert per_msg == {**{k: v.num_rows for k, v in decoded.items()}, "_raw": raw.num_rows}
    # per-id counts of the undecoded frames, signal sums
    raw_ids = dict(duck(out, "SELECT id, count(*) FROM lake WHERE message = '_raw' GROUP BY id"))
    ids, counts = np.unique(raw.column("id").to_numpy(), return_counts=True)
    assert raw_ids == dict(zip(ids.tolist(), counts.tolist()))
    (rpm,), = duck(out, "SELECT sum(RPM) FROM lake WHERE message = 'Engine'")
    assert rpm == pytest.approx(float(np.sum(decoded["Engine"].column("RPM").to_numpy())))
    (a,), = duck(out, "SELECT sum(A) FROM lake WHERE message = 'Mux'")
    assert a == pa.compute.sum(decoded["Mux"].column("A")).as_py()
    # pyarrow reads it back too, with the partition columns
    tab = ds.dataset(out, format="parquet", partitioning="hive").to_table(
        filter=ds.field("message") == "Engine")
    assert tab.num_rows == decoded["Engine"].num_rows
    assert tab.column("ts").type == pa.timestamp("ns", tz="UTC")


def test_idempotent_and_incremental(vimg, tmp_path, sfbin):
    img = tmp_path / "grow.img"
    shutil.copy(vimg, img)
    out = tmp_path / "L"
    lake.ingest(out, [img], [DBC])
    before = sorted(map(str, out.rglob("*.parquet")))
    sm = lake.ingest(out, [img], [DBC])
    assert sm.rows == 0 and sm.files_same == 1
    assert sorted(map(str, out.rglob("*.parquet"))) == before
    # a new log file on the same card: only its rows are added
    lines, _ = vehicle_lines(22, 500)
    sf("log", "--source", "stdin", "--no-direct", "-q", "--device-id", "truck7", img,
       input=("\n".join(lines) + "\n").encode())
    sm = lake.ingest(out, [img], [DBC])
    assert sm.files_new == 1 and sm.files_same == 1 and sm.rows == 500
    (n,), = duck(out, "SELECT count(*) FROM lake")
    assert n == streamfat.read_arrow(img).num_rows


def test_grown_file_adds_only_new_blocks(tmp_path, sfbin):
    lines, _ = vehicle_lines(23, 2000)
    img = log_lines(tmp_path / "g.img", lines, "--chunk", "4K")
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        full = f.read()
    B = 4096
    nblocks = len(full.rstrip(b"\0")) // B + 1
    d = tmp_path / "card"
    d.mkdir()
    p = d / "LOG00001.SFL"
    p.write_bytes(full[:(nblocks // 2) * B])       # the log still being written
    out = tmp_path / "L"
    s1 = lake.ingest(out, [d], [DBC])
    p.write_bytes(full)                             # it has grown
    s2 = lake.ingest(out, [d], [DBC])
    assert s2.files_grown == 1 and 0 < s2.rows < 2000 and s1.rows + s2.rows == 2000
    (n,), = duck(out, "SELECT count(*) FROM lake")
    assert n == 2000
    # no frame twice: the timestamps are unique in the input
    (u,), = duck(out, "SELECT count(DISTINCT ts) FROM lake")
    assert u == 2000


def test_interrupted_run_leaves_lake_readable(vimg, tmp_path, monkeypatch):
    out = tmp_path / "L"
    lines, _ = vehicle_lines(24, 300)
    extra = tmp_path / "extra"
    extra.mkdir()
    small = log_lines(tmp_path / "s.img", lines)
    with streamfat.open_volume(small) as v, v.open("/LOG00001.SFL") as f:
        (extra / "LOG00009.SFL").write_bytes(f.read())
    lake.ingest(out, [extra], [DBC])
    (n0,), = duck(out, "SELECT count(*) FROM lake")
    real = lake.Lake.write_part
    calls = []

    def flaky(self, *a):
        calls.append(a)
        if len(calls) == 3:
            # as if killed while writing: a temporary part is left behind
            d = Path(self.root) / "device=truck7" / "message=Engine" / "date=2023-11-14"
            d.mkdir(parents=True, exist_ok=True)
            (d / ".part-dead.parquet.tmp").write_bytes(b"PAR1 half")
            raise KeyboardInterrupt
        return real(self, *a)
    monkeypatch.setattr(lake.Lake, "write_part", flaky)
    with pytest.raises(KeyboardInterrupt):
        lake.ingest(out, [extra, vimg], [DBC])
    (n1,), = duck(out, "SELECT count(*) FROM lake")
    assert n1 >= n0                                  # readable, nothing half-written read
    monkeypatch.setattr(lake.Lake, "write_part", real)
    lake.ingest(out, [extra, vimg], [DBC])
    (n2,), = duck(out, "SELECT count(*) FROM lake")
    assert n2 == 300 + streamfat.read_arrow(vimg).num_rows


def test_drops_free_clock_device_option(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    hdr = [w.rec(w.CHANNEL, 0, 0, b"can0")]
    b1 = [w.can(0, 1000, 0x100, bytes(8)), w.rec(w.DROP, 0, 1100, bytes(24)),
          w.can(0, 1200, 0x7AB, b"\x01")]
    (d / "A.SFL").write_bytes(w.sfl([b1], clock=1, header_records=hdr))
    out = tmp_path / "L"
    lake.ingest(out, [d], [DBC], device="bench/3")
    parts = sorted(p.relative_to(out).parts[:3] for p in out.rglob("*.parquet"))
    assert parts == [("device=bench_3", "message=Engine", "date=unknown"),
                     ("device=bench_3", "message=_drops", "date=unknown"),
                     ("device=bench_3", "message=_raw", "date=unknown")]


def test_not_a_lake_and_bad_input_cli(vimg, tmp_path):
    notlake = tmp_path / "home"
    notlake.mkdir()
    (notlake / "thesis.txt").write_text("precious")
    with pytest.raises(streamfat.LakeError, match="not a streamfat lake"):
        lake.ingest(notlake, [vimg], [DBC])
    assert os.listdir(notlake) == ["thesis.txt"]

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "streamfat", "lake", *map(str, args)],
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
    r = cli("--dbc", DBC, "--out", notlake, vimg)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "not a streamfat lake" in r.stderr
    bad = tmp_path / "bad.dbc"
    bad.write_text("BO_ 1 x: 8 Y\n SG_ a : 0|8@1+ (1,0) [0|1] \"\" Y\n SG_ b : 4|8@1+ (1,0) [0|1] \"\" Y\n")
    r = cli("--dbc", bad, "--out", tmp_path / "L2", vimg)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "L2").exists()
    junk = tmp_path / "junk.img"
    junk.write_bytes(os.urandom(1 << 16))
    r = cli("--out", tmp_path / "L3", junk)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    damaged = tmp_path / "L4"
    damaged.mkdir()
    (damaged / lake.MANIFEST).write_text("{broken")
    r = cli("--dbc", DBC, "--out", damaged, vimg)
    assert r.returncode == 1 and "damaged" in r.stderr
    r = cli("--dbc", DBC, "--out", tmp_path / "L5", vimg)
    assert r.returncode == 0 and r.stdout.startswith("lake: 1 files (1 new")
    assert "of the wrong length" in r.stdout
    script = Path(sys.executable).parent / "streamfat-lake"
    if os.environ.get("SF_PYTHON_INSTALLED"):
        assert script.exists()
        r = subprocess.run([script, "--dbc", DBC, "--out", tmp_path / "L5", vimg],
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert r.returncode == 0 and "(0 new, 0 grown, 1 unchanged)" in r.stdout


# ---- memory: the lake streams a file in batches ------------------------------------------

GEN_DBC = "".join(
    f"BO_ {0x100 + k} G{k}: 8 ECU\n"
    f" SG_ G{k}a : 0|16@1+ (0.5,0) [0|0] \"\" ECU\n"
    f" SG_ G{k}b : 16|16@1- (1,0) [0|0] \"\" ECU\n"
    f" SG_ G{k}c : 39|8@0+ (1,0) [0|0] \"\" ECU\n"
    f" SG_ G{k}d : 40|24@1+ (1,0) [0|0] \"\" ECU\n\n" for k in range(16))


def gen_image(path, frames):
    """An image with one log of exactly `frames` gen:can frames (2 M a second: 0x100..0x10F,
    8 bytes). A count, not a duration: on a loaded machine the sanitized generator falls
    behind its rate, and a duration then gave too few frames for the test's bounds."""
    sf("log", "--mkfs", "exfat", "--size", "512M", "--source",
       "gen:can,rate=1000000,channels=2", "--max-records", str(frames), "--split-size",
       "512M", "-q", path, timeout=600)
    return path


def test_streams_in_batches(tmp_path, sfbin, monkeypatch):
    """A file's frames reach the DBC decoder and the Parquet writers in batches (never
    the whole file at once), row groups are cut at ROW_GROUP rows, and the lake holds
    exactly read_arrow's rows."""
    img = gen_image(tmp_path / "g.img", 800_000)
    want = streamfat.read_arrow(img)
    (tmp_path / "g.dbc").write_text('VERSION ""\n\nBU_: ECU\n\n' + GEN_DBC)
    sizes = []
    real = dbc.split_frames

    def spy(t, *a, **k):
        sizes.append(t.num_rows)
        return real(t, *a, **k)
    monkeypatch.setattr(lake._dbc, "split_frames", spy)
    monkeypatch.setattr(lake, "DECODE_ROWS", 20_000)
    monkeypatch.setattr(lake, "ROW_GROUP", 3000)
    out = tmp_path / "L"
    sm = lake.ingest(out, [img], [tmp_path / "g.dbc"])
    n = want.num_rows
    assert n > 600_000 and sm.rows == n
    # the reader's batches (4 MiB of log: about 130,000 of these frames) gathered to
    # DECODE_ROWS: never more than one batch beyond it
    assert len(sizes) >= 4 and sum(sizes) == n and max(sizes) < 20_000 + 140_000, sizes
    (total,), = duck(out, "SELECT count(*) FROM lake")
    assert total == n
    got = duck(out, "SELECT message, count(*), sum(G3d) FROM lake GROUP BY message")
    assert len(got) == 16
    import pyarrow.parquet as pq
    for p in out.rglob("*.parquet"):
        md = pq.ParquetFile(p).metadata
        assert md.num_row_groups >= md.num_rows // 3000
        assert all(md.row_group(i).num_rows <= 3000 for i in range(md.num_row_groups))


def _lake_rss(img, dbcp, out):
    # rows wait for their row groups up to PENDING_BYTES: 16 MiB here, so that both files
    # pass it (their memory is then the same plateau)
    code = ("import resource, sys; from streamfat import lake; "
            "lake.PENDING_BYTES = 16 << 20; "
            "lake.ingest(sys.argv[1], [sys.argv[2]], [sys.argv[3]]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")
    r = subprocess.run([sys.executable, "-c", code, str(out), str(img), str(dbcp)],
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def test_peak_rss_flat_in_frames(tmp_path, sfbin):
    """Peak RSS of `lake` over a file of about 1 M frames and one of about 4 M: within 64
    MiB (the whole-file lake grew by about 150 MiB per million frames)."""
    dbcp = tmp_path / "g.dbc"
    dbcp.write_text('VERSION ""\n\nBU_: ECU\n\n' + GEN_DBC)
    small = gen_image(tmp_path / "s.img", 1_000_000)
    rss1 = _lake_rss(small, dbcp, tmp_path / "L1")
    small.unlink()
    big = gen_image(tmp_path / "b.img", 4_000_000)
    rss4 = _lake_rss(big, dbcp, tmp_path / "L4")
    (n1,), = duck(tmp_path / "L1", "SELECT count(*) FROM lake")
    (n4,), = duck(tmp_path / "L4", "SELECT count(*) FROM lake")
    print(f"peak RSS {rss1} MiB for {n1} frames, {rss4} MiB for {n4}")
    assert n4 > 3 * n1 > 2_000_000
    assert rss4 - rss1 < 64, (rss1, n1, rss4, n4)


def test_interrupted_then_grown_counts_once(tmp_path, sfbin, monkeypatch):
    """A run killed after some of a file's parts were renamed (the manifest not yet
    saved), then the file grows: the next run's parts replace those, no row twice."""
    lines, _ = vehicle_lines(25, 2000)
    img = log_lines(tmp_path / "g.img", lines, "--chunk", "4K")
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        full = f.read()
    B = 4096
    nblocks = len(full.rstrip(b"\0")) // B + 1
    d = tmp_path / "card"
    d.mkdir()
    p = d / "LOG00001.SFL"
    p.write_bytes(full[:(nblocks // 2) * B])
    out = tmp_path / "L"
    real = lake.Lake.write_part
    calls = []

    def flaky(self, *a):
        calls.append(a)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, *a)
    monkeypatch.setattr(lake.Lake, "write_part", flaky)
    with pytest.raises(KeyboardInterrupt):
        lake.ingest(out, [d], [DBC])
    monkeypatch.setattr(lake.Lake, "write_part", real)
    assert len(list(out.rglob("*.parquet"))) == 2         # renamed before the kill
    p.write_bytes(full)                                     # the file has grown
    sm = lake.ingest(out, [d], [DBC])
    assert sm.files_new == 1 and sm.rows == 2000
    (n,), = duck(out, "SELECT count(*) FROM lake")
    (u,), = duck(out, "SELECT count(DISTINCT ts) FROM lake")
    assert n == u == 2000
