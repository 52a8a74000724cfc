#!/usr/bin/env bash
# The Python package python/ (import name streamfat; docs/PYTHON.md, docs/LAKE.md): built
# into the venv of tests/python-requirements.txt (SF_PYENV, scripts/pyenv.sh) by
# `pip install` of a copy of python/ (its C extension compiled from this tree's src/ and
# include/, without sanitizers, so that it imports into a plain Python), then
# `pytest python/tests` but the Spark tests (t_python_spark), with this build's CLI (SF)
# making the logs at run time.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/pylib.sh"
need_sf
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import pyarrow, pytest, can, cantools, duckdb, numpy' 2>/dev/null ||
    skip "no venv with pyarrow, pytest, python-can, cantools, duckdb at $PY (scripts/pyenv.sh)"
py_package_install
log "pytest python/tests (without test_spark.py)"
py_test --ignore="$SF_SRC/python/tests/test_spark.py" "$SF_SRC/python/tests"
