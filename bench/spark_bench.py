#!/usr/bin/env python3
"""Spark and DuckDB numbers of the Python package (docs/BENCHMARKS.md, "Python package"):

    python bench/spark_bench.py DIR DBC LAKE

The same count and per-id aggregate over the .SFL files of DIR with Spark in local[1] and
local[2] (one session each; partitions of blocksPerPartition 512), then `streamfat lake`
into LAKE and DuckDB's count and per-message aggregate over it. Wall seconds (the driver,
the JVM and the Python workers share the machine's cores)."""
import os
import subprocess
import sys
import time

d, dbcp, lakedir = sys.argv[1], sys.argv[2], sys.argv[3]
code = """
import os, sys, time
from pyspark.sql import SparkSession, functions as F
cores = sys.argv[1]
s = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
     .config("spark.sql.shuffle.partitions", cores).getOrCreate())
s.sparkContext.setLogLevel("ERROR")
import streamfat.spark
streamfat.spark.register(s)
df = s.read.format("streamfat").option("blocksPerPartition", "512").load(sys.argv[2])
df.groupBy("id").count().collect()                      # warm-up (workers, JIT)
t = time.time()
n = df.count()
rows = df.groupBy("id").agg(F.count("*"), F.sum("dlc")).collect()
w = time.time() - t
print(f"spark local[{cores}]: {n} frames, count + per-id aggregate {w:.1f} s wall, "
      f"{n / w / 1e6:.2f} M frames/s")
s.stop()
"""
env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
res = {}
for cores in ("1", "2"):
    r = subprocess.run([sys.executable, "-c", code, cores, d], capture_output=True, text=True,
                       env=env, stdin=subprocess.DEVNULL)
    line = [x for x in r.stdout.splitlines() if x.startswith("spark")]
    print(line[0] if line else r.stderr[-2000:])
    if line:
        res[cores] = float(line[0].split("aggregate ")[1].split(" s")[0])
if len(res) == 2:
    print(f"speed-up local[2] / local[1]: {res['1'] / res['2']:.2f}x")

import duckdb
from streamfat import lake
t = time.time()
sm = lake.ingest(lakedir, [d], [dbcp])
print(f"lake: {sm.line()} in {time.time() - t:.1f} s wall")
con = duckdb.connect()
q = (f"SELECT message, count(*), max(ts) FROM read_parquet('{lakedir}/**/*.parquet', "
     "hive_partitioning = true, union_by_name = true) GROUP BY message")
con.execute(q).fetchall()
t = time.time()
rows = con.execute(q).fetchall()
print(f"duckdb over the lake: {sum(r[1] for r in rows)} rows, per-message aggregate "
      f"{time.time() - t:.2f} s wall")
