#!/usr/bin/env python3
"""Spark and DuckDB numbers of the Python package (docs/BENCHMARKS.md, "Python package"):

    python bench/spark_bench.py DIR DBC LAKE [BLOCKS_PER_PARTITION]

The same count and per-id aggregate over the .SFL files of DIR with Spark in local[1] and
local[2] (one session each; partitions of blocksPerPartition 512, or the fourth argument),
as one job (the count is
the sum of the per-id counts), over every column and over the two the query reads (a
schema given to the reader: `.schema("id int, dlc tinyint")`); then `streamfat lake` into
LAKE and DuckDB's count and per-message aggregate over it. Wall seconds (the driver, the
JVM and the Python workers share the machine's cores) and CPU seconds of the whole process
tree (driver, JVM, Python workers) during the query."""
import os
import subprocess
import sys
import time

d, dbcp, lakedir = sys.argv[1], sys.argv[2], sys.argv[3]
bpp = sys.argv[4] if len(sys.argv) > 4 else "512"
code = """
import os, sys, time
from pyspark.sql import SparkSession, functions as F
cores, path, schema, bpp = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
HZ = os.sysconf("SC_CLK_TCK")


def tree_cpu():
    # CPU seconds of this process and every descendant (the JVM, the Python workers)
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(int(f[1]), []).append((int(p), f))
    tot, stack = 0, [os.getpid()]
    while stack:
        for pid, f in kids.get(stack.pop(), []):
            tot += sum(int(x) for x in f[11:15])
            stack.append(pid)
    r = os.times()
    return tot / HZ + r.user + r.system


s = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false")
     .config("spark.sql.shuffle.partitions", cores).getOrCreate())
s.sparkContext.setLogLevel("ERROR")
import streamfat.spark
streamfat.spark.register(s)
rd = s.read.format("streamfat")
if schema != "all":
    rd = rd.schema(schema)
df = rd.option("blocksPerPartition", bpp).load(path)
df.groupBy("id").count().collect()                      # warm-up (workers, JIT)
c, t = tree_cpu(), time.time()
rows = df.groupBy("id").agg(F.count("*").alias("n"), F.sum("dlc")).collect()
n = sum(r["n"] for r in rows)
w, c = time.time() - t, tree_cpu() - c
np_ = df.rdd.getNumPartitions()
print(f"spark local[{cores}] ({schema} columns, {np_} partitions): {n} frames, "
      "count + per-id aggregate "
      f"{w:.1f} s wall, {c:.1f} CPU s, {n / w / 1e6:.2f} M frames/s")
s.stop()
"""
env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
for schema in ("all", "id int, dlc tinyint"):
    res = {}
    for cores in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", code, cores, d, schema, bpp],
                           capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        line = [x for x in r.stdout.splitlines() if x.startswith("spark")]
        print(line[0] if line else r.stderr[-2000:])
        if line:
            res[cores] = float(line[0].split("aggregate ")[1].split(" s")[0])
    if len(res) == 2:
        print(f"speed-up local[2] / local[1] ({schema} columns): {res['1'] / res['2']:.2f}x")

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
