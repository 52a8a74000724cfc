#!/usr/bin/env bash
# The package's PySpark data source (python/tests/test_spark.py): Spark 4 for real in
# local[2] with Java 17 (scripts/deps.sh: openjdk-17-jre-headless; pyspark from
# tests/python-requirements.txt): counts, per-id counts and DBC signal sums equal to
# read_arrow and to DuckDB over the lake, block-range partitions, a Spark-written lake read
# by DuckDB and pyarrow, PERMISSIVE and FAILFAST. Installs python/ like t_python.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/pylib.sh"
need_sf
need_tool java
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import pyarrow, pytest, pyspark, duckdb, cantools' 2>/dev/null ||
    skip "no venv with pyspark, pyarrow, pytest, duckdb, cantools at $PY (scripts/pyenv.sh)"
py_package_install
log "pytest python/tests/test_spark.py"
py_test "$SF_SRC/python/tests/test_spark.py"
