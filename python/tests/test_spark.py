"""The PySpark data source (streamfat.spark, Spark 4's Python Data Source API) in local[2]
with Java 17: frame counts, per-id counts and DBC signal sums equal to read_arrow and to
DuckDB over the lake; block-range partitions lose and repeat nothing; a lake written by
Spark with partitionBy("device", "message", "date") is read back by DuckDB and pyarrow;
PERMISSIVE skips and counts damage, FAILFAST fails. One Spark session for the module."""
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest

import streamfat
from streamfat import dbc, lake
from conftest import log_lines
from test_dbc import DBC, vehicle_lines
from test_lake import duck

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def spark():
    if not shutil.which("java"):
        pytest.fail("no java: scripts/deps.sh installs openjdk-17-jre-headless")
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local[2]").appName("streamfat-test")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "1g").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    import streamfat.spark
    streamfat.spark.register(s)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def logs(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("spark")
    card = d / "card"
    card.mkdir()
    for i, seed in enumerate((31, 32), 1):
        lines, _ = vehicle_lines(seed, 1500)
        img = log_lines(d / f"{i}.img", lines, "--chunk", "4K", device_id=f"car{i}")
        with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
            (card / f"LOG0000{i}.SFL").write_bytes(f.read())
    return d, card


def test_counts_ids_and_partitions(spark, logs):
    _d, card = logs
    t = streamfat.read_arrow(card)
    df = spark.read.format("streamfat").option("blocksPerPartition", "8").load(str(card))
    assert df.rdd.getNumPartitions() > 2
    rows = df.groupBy("device", "id").count().collect()       # one job
    assert sum(r["count"] for r in rows) == t.num_rows
    per_id = {}
    for r in rows:
        per_id[r["id"]] = per_id.get(r["id"], 0) + r["count"]
    ids, counts = np.unique(t.column("id").to_numpy(), return_counts=True)
    assert per_id == dict(zip(ids.tolist(), counts.tolist()))
    assert {r["device"] for r in rows} == {"car1", "car2"}
    one = spark.read.format("streamfat").option("blocksPerPartition", "0").load(str(card))
    assert one.rdd.getNumPartitions() == 2
    # a schema given to the reader selects (and types) the columns handed to Spark
    few = (spark.read.format("streamfat").schema("id bigint, device string")
           .option("blocksPerPartition", "8").load(str(card)))
    assert [(f.name, f.dataType.simpleString()) for f in few.schema.fields] == \
        [("id", "bigint"), ("device", "string")]
    got = {}
    for r in few.groupBy("id").count().collect():
        got[r["id"]] = r["count"]
    assert got == per_id


def test_tx_column(spark, tmp_path):
    """Issue 27: a frame the logger sent (CAN flag bit 6) has tx true, as read_arrow's
    column says; the others false."""
    from sflwrite import can, sfl
    t0 = 1_700_000_000_000_000_000
    card = tmp_path / "card"
    card.mkdir()
    (card / "LOG00001.SFL").write_bytes(sfl([[
        can(0, t0 + 1, 0x7DF, b"\x02\x01\x0c", flags=0x40),
        can(0, t0 + 2, 0x7E8, b"\x04\x41\x0c\x1a\xf8"),
        can(0, t0 + 3, 0x18DA10F1, b"\x30\x00\x00", flags=0x01 | 0x40)]]))
    want = streamfat.read_arrow(card).column("tx").to_pylist()
    assert want == [True, False, True]
    df = spark.read.format("streamfat").load(str(card))
    assert df.schema["tx"].dataType.simpleString() == "boolean"
    assert [r["tx"] for r in df.orderBy("ts_ns").select("tx").collect()] == want


def test_dbc_signals_spark_duckdb_arrow(spark, logs, tmp_path):
    _d, card = logs
    t = streamfat.read_arrow(card)
    decoded, _raw = dbc.split_frames(t, dbc.load([DBC]))
    df = (spark.read.format("streamfat").option("dbc", str(DBC))
          .option("blocksPerPartition", "8").load(str(card)))
    from pyspark.sql import functions as F
    rows = df.groupBy("message").agg(F.count("*").alias("n"), F.sum("RPM").alias("rpm"),
                                     F.sum("Torque").alias("torque")).collect()
    per_msg = {r["message"]: r["n"] for r in rows}
    assert per_msg == {k: v.num_rows for k, v in decoded.items()}
    sums = {"sum(RPM)": sum(r["rpm"] or 0 for r in rows),
            "sum(Torque)": sum(r["torque"] or 0 for r in rows)}
    assert sums["sum(RPM)"] == pytest.approx(float(np.nansum(decoded["Engine"].column("RPM").to_numpy())))
    assert sums["sum(Torque)"] == pytest.approx(float(np.sum(decoded["Brake"].column("Torque").to_numpy())))
    out = tmp_path / "L"
    lake.ingest(out, [card], [DBC])
    (rpm,), = duck(out, "SELECT sum(RPM) FROM lake WHERE message = 'Engine'")
    assert rpm == pytest.approx(sums["sum(RPM)"])
    duck_msg = dict(duck(out, "SELECT message, count(*) FROM lake WHERE message NOT LIKE '\\_%' "
                              "ESCAPE '\\' GROUP BY message"))
    assert duck_msg == per_msg
    # a lake written by Spark, read back by DuckDB and pyarrow
    sl = tmp_path / "spark_lake"
    df.drop("file").write.partitionBy("device", "message", "date").parquet(str(sl))
    got = dict(duck(sl, "SELECT message, count(*) FROM lake GROUP BY message"))
    assert got == per_msg
    (rpm2,), = duck(sl, "SELECT sum(RPM) FROM lake WHERE message = 'Engine'")
    assert rpm2 == pytest.approx(sums["sum(RPM)"])
    tab = ds.dataset(sl, format="parquet", partitioning="hive").to_table()
    assert tab.num_rows == sum(per_msg.values())


def test_permissive_failfast(spark, logs, tmp_path):
    _d, card = logs
    bad = tmp_path / "bad"
    bad.mkdir()
    data = bytearray((card / "LOG00001.SFL").read_bytes())
    data[3 * 4096 + 200] ^= 0xFF                                  # block 3: CRC
    (bad / "LOG00001.SFL").write_bytes(bytes(data))
    want = streamfat.read_arrow(bad, errors="skip").num_rows
    df = spark.read.format("streamfat").option("blocksPerPartition", "4").load(str(bad))
    assert df.count() == want
    dmg = spark.read.format("streamfat").option("kind", "damage").option(
        "blocksPerPartition", "4").load(str(bad)).collect()
    assert sorted((r["kind"], r["block"]) for r in dmg) == [("invalid", 3)]   # no gap: the position rule
    ff = spark.read.format("streamfat").option("mode", "FAILFAST").load(str(bad))
    with pytest.raises(Exception, match="block 3"):
        ff.count()


def test_sealed_key_option(spark, tmp_path, sfbin):
    """Issue 29: option("key", PATH) opens sealed logs, block-range partitions included;
    without it the file is refused (FAILFAST) naming the key id it wants."""
    from conftest import sf
    sf("keygen", tmp_path / "k")
    lines, _ = vehicle_lines(33, 1500)
    img = log_lines(tmp_path / "s.img", lines, "--chunk", "4K", "--encrypt-to",
                    tmp_path / "k.pub")
    card = tmp_path / "card"
    card.mkdir()
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        (card / "LOG00001.SFL").write_bytes(f.read())
    want = streamfat.read_arrow(card, key=tmp_path / "k.key").num_rows
    assert want == 1500
    df = (spark.read.format("streamfat").option("key", str(tmp_path / "k.key"))
          .option("blocksPerPartition", "4").load(str(card)))
    assert df.rdd.getNumPartitions() > 1
    assert df.count() == want
    ff = spark.read.format("streamfat").option("mode", "FAILFAST").load(str(card))
    with pytest.raises(Exception, match="sealed to key id"):
        ff.count()


def test_compressed_blocks(spark, tmp_path, sfbin):
    """Issue 29: compressed record blocks (kind 3) read in block-range partitions, each
    block alone, the same frames as read_arrow gives."""
    lines, _ = vehicle_lines(34, 3000)
    img = log_lines(tmp_path / "c.img", lines, "--chunk", "4K", "--compress")
    card = tmp_path / "card"
    card.mkdir()
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        (card / "LOG00001.SFL").write_bytes(f.read())
    want = streamfat.read_arrow(card)
    assert want.num_rows == 3000
    df = (spark.read.format("streamfat").option("blocksPerPartition", "1")
          .option("mode", "FAILFAST").load(str(card)))
    assert df.rdd.getNumPartitions() > 1
    got = sorted((r.ts_ns, r.id, bytes(r.data)) for r in df.select("ts_ns", "id", "data").collect())
    import pyarrow as pa
    ts = want.column("ts").cast(pa.int64()).to_pylist()
    assert got == sorted(zip(ts, want.column("id").to_pylist(), want.column("data").to_pylist()))


def test_signal_types_match_the_lake(spark, logs, tmp_path):
    """Decoded signals have their natural types (bigint for integer signals of integer
    scale and offset, double otherwise, decimal(20,0) for an unsigned 64-bit one), the
    types the streamfat lake's Parquet has: a lake written by Spark and the streamfat lake
    agree column by column, and so do their values."""
    _d, card = logs
    df = spark.read.format("streamfat").option("dbc", str(DBC)).load(str(card))
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["RPM"] == "double" and types["Pressure"] == "double"
    assert types["Temp"] == "bigint" and types["Gear"] == "bigint"
    assert types["Torque"] == "bigint" and types["Big"] == "bigint"
    assert types["Mid"] == "decimal(20,0)" and types["F32"] == "double"
    sl = tmp_path / "spark_lake"
    df.drop("file").write.partitionBy("device", "message", "date").parquet(str(sl))
    out = tmp_path / "L"
    lake.ingest(out, [card], [DBC], labels=False)
    import pyarrow as pa
    checked = 0
    for m, dev in [(m, dev) for m in dbc.load([DBC]).values() for dev in ("car1", "car2")]:
        part = f"device={dev}/message={m.name}"
        mine = ds.dataset(sorted((out / part).rglob("*.parquet")), format="parquet") \
            .to_table().sort_by("ts")
        theirs = ds.dataset(sorted((sl / part).rglob("*.parquet")), format="parquet") \
            .to_table().sort_by("ts_ns")
        assert mine.num_rows == theirs.num_rows > 0, m.name
        for s in m.signals:
            a, b = mine.column(s.name), theirs.column(s.name)
            if a.type == pa.uint64():
                assert b.type == pa.decimal128(20, 0), s.name
                a = a.cast(b.type)
            assert a.type == b.type, (m.name, s.name, a.type, b.type)
            assert a.to_pylist() == b.to_pylist() or all(
                x == y or (x != x and y != y) for x, y in zip(a.to_pylist(), b.to_pylist()))
            checked += 1
    assert checked >= 15


# ---- sources that are not logs (issue 26, item 19) ----------------------------------------

@pytest.mark.parametrize("kind", ["missing", "directory", "random", "random_sfl", "odd_size",
                                  "empty"])
def test_spark_bad_source(spark, tmp_path, kind):
    """load() of test_sources.py's table: the error carries the readers' one line (a
    directory is a source: every .SFL below it; an empty file is a log never written)."""
    from test_sources import expected, make_input
    path = make_input(tmp_path, kind)
    want = expected("read_arrow", kind)
    df = spark.read.format("streamfat").option("mode", "FAILFAST")
    if want is None:
        assert df.load(str(path)).count() == 0
        return
    with pytest.raises(Exception) as e:
        df.load(str(path)).count()
    import re
    first = next((ln for ln in str(e.value).splitlines() if f"{path}: " in ln), "")
    assert re.search(re.escape(f"{path}: ") + want.rstrip("$"), first), str(e.value)[-2000:]


# ---- the workers' Python (issue 26, item 17) ----------------------------------------------

def _spark_script(tmp_path, body, env_python=None):
    """Run body in a fresh Python (a new Spark driver: one SparkContext per process) with
    PYSPARK_PYTHON unset, PATH's python3 one without streamfat; (exit status, stderr)."""
    import subprocess
    import textwrap
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    bare = getattr(sys, "_base_executable", None) or "/usr/bin/python3"
    (bindir / "python3").symlink_to(bare)         # the system's Python: no streamfat
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH")}
    env["PATH"] = f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}"
    src = tmp_path / "job.py"
    src.write_text(textwrap.dedent(body))
    r = subprocess.run([sys.executable, str(src)], capture_output=True, text=True, env=env,
                       timeout=600, stdin=subprocess.DEVNULL, cwd=tmp_path)
    return r.returncode, r.stdout, r.stderr


def test_register_detects_workers_without_streamfat(tmp_path):
    rc, out, err = _spark_script(tmp_path, """
        import subprocess, sys
        assert subprocess.run(["python3", "-c", "import streamfat"],
                              capture_output=True).returncode != 0
        from pyspark.sql import SparkSession
        s = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .getOrCreate())
        import streamfat.spark
        try:
            streamfat.spark.register(s)
        except streamfat.spark.SparkWorkerError as e:
            print(e)
            sys.exit(3)
        sys.exit(0)
        """)
    assert rc == 3, err[-3000:]
    line = out.strip()
    assert len(line.splitlines()) == 1, out
    assert "cannot import streamfat" in line and "PYSPARK_PYTHON is not set" in line
    assert f"PYSPARK_PYTHON={sys.executable}" in line and "local_session()" in line


def test_lake_md_spark_example(tmp_path, logs):
    """docs/LAKE.md's Spark example as written (paths mapped: the DBC, the logs, the
    output), in a fresh Python without PYSPARK_PYTHON whose PATH's python3 has no
    streamfat: streamfat.spark.local_session() is all a newcomer needs."""
    import re
    _d, card = logs
    text = (Path(__file__).resolve().parents[2] / "docs" / "LAKE.md").read_text()
    block = re.search(r"\n\n((?:    .*\n|\n)+)", text.split("\n## Spark\n", 1)[1]).group(1)
    code = "\n".join(ln[4:] for ln in block.splitlines()
                     if ln.strip() and not ln.strip().startswith("pip install"))
    assert "local_session()" in code, code
    out = tmp_path / "lake"
    code = (code.replace('"vehicle.dbc"', repr(str(DBC)))
            .replace('"/data/logs/"', repr(str(card))).replace('"/data/lake"', repr(str(out))))
    rc, _out, err = _spark_script(tmp_path, code)
    assert rc == 0, err[-3000:]
    decoded, _raw = dbc.split_frames(streamfat.read_arrow(card), dbc.load([DBC]))
    got = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    assert got.num_rows == sum(t.num_rows for t in decoded.values())


def test_message_tables(spark, tmp_path):
    """kind=messages, uds, obd2, dm1: the rows of read_messages / read_uds / read_obd2 /
    read_dm1 (what spans frames) in Spark, with times in ns; and the lake's new tables
    (_isotp, _uds, _obd2, _j1939_dm1) read back by Spark's Parquet reader like the
    others."""
    from test_messages import dm1_bytes, frames_log, isotp_frames
    card = tmp_path / "card"
    card.mkdir()
    frames = (isotp_frames(0x7E0, 0x7E8, [bytes([0x22, 0xF1, 0x90])]) +
              isotp_frames(0x7E8, 0x7E0, [bytes([0x62, 0xF1, 0x90]) + b"WDB1234567890ABCD",
                                          bytes([0x59, 0x02, 0xFF]) + bytes(range(40)),
                                          bytes([0x41, 0x0C, 0x1A, 0xF8, 0x0D, 0x40])]) +
              [(0x18FECA00, True, False, dm1_bytes(0x44, [(190, 2, 5)]) + b"\xff\xff")])
    frames_log(card / "LOG00001.SFL", frames)
    for kind, read in (("messages", streamfat.read_messages), ("uds", streamfat.read_uds),
                       ("obd2", streamfat.read_obd2), ("dm1", streamfat.read_dm1)):
        want = read(card).to_pylist()
        got = spark.read.format("streamfat").option("kind", kind).load(str(card)).collect()
        assert len(got) == len(want) > 0, kind
        for g, w in zip(got, want):
            assert g["ts_ns"] == w["first_ts"].value, kind
            for k, v in w.items():
                if k in ("first_ts", "last_ts", "req_ts"):
                    if k != "first_ts":
                        assert g[k + "_ns"] == (None if v is None else v.value), (kind, k)
                elif k == "dtcs" and v is not None:
                    assert [tuple(x) for x in g[k]] == [(d["dtc"], d["status"]) for d in v]
                else:
                    assert (bytes(g[k]) if isinstance(g[k], bytearray) else g[k]) == v, \
                        (kind, k)
    out = tmp_path / "lake"
    lake.ingest(out, [card], device="c1")
    # the lake's times are Parquet TIMESTAMP(NANOS), which Spark reads as bigint with
    # spark.sql.legacy.parquet.nanosAsLong (docs/LAKE.md), for every table of the lake
    spark.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
    try:
        for part, n in (("_isotp", 4), ("_uds", 3), ("_obd2", 2), ("_j1939_dm1", 1)):
            df = spark.read.parquet(str(out / "device=c1" / f"message={part}"))
            rows = df.collect()
            assert len(rows) == n, part
            read = streamfat.read_dm1 if part == "_j1939_dm1" else streamfat.read_messages
            assert {r["ts"] for r in rows} <= {m["first_ts"].value
                                                for m in read(card).to_pylist()}
    finally:
        spark.conf.unset("spark.sql.legacy.parquet.nanosAsLong")
