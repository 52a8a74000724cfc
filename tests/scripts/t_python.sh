#!/usr/bin/env bash
# The Python package python/ (import name streamfat; docs/PYTHON.md, docs/LAKE.md): built
# into the venv of tests/python-requirements.txt (SF_PYENV, scripts/pyenv.sh) by
# `pip install` of a copy of python/ (its C extension compiled from this tree's src/ and
# include/, without sanitizers, so that it imports into a plain Python), then
# `pytest python/tests` with this build's CLI (SF) making the logs at run time.
# The install is skipped when the package's and the library's sources are unchanged since
# the last one (a hash in the venv).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
VENV=${SF_PYENV:-$SF_SRC/build/pyenv}
PY=$VENV/bin/python
[[ -x $PY ]] && "$PY" -c 'import pyarrow, pytest, can, cantools, duckdb, numpy' 2>/dev/null ||
    skip "no venv with pyarrow, pytest, python-can, cantools, duckdb at $PY (scripts/pyenv.sh)"

hash=$(cd "$SF_SRC" && find python src include -path python/build -prune -o \
           -path '*/__pycache__' -prune -o -path '*.egg-info' -prune -o -type f \
           \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.toml' \) -print |
       LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
stamp=$VENV/.streamfat-package.sha256
if [[ ! -f $stamp || $(cat "$stamp") != "$hash" ]] || ! "$PY" -c 'import streamfat._core' 2>/dev/null; then
    log "pip install python/ into $VENV"
    mkdir -p "$WORK/pkg"
    (cd "$SF_SRC/python" && tar --exclude=./build --exclude='*.egg-info' \
        --exclude=__pycache__ -cf - .) | (cd "$WORK/pkg" && tar -xf -)
    STREAMFAT_SRC=$SF_SRC timeout 900 "$PY" -m pip install -q --disable-pip-version-check \
        --no-build-isolation --no-deps --force-reinstall "$WORK/pkg" </dev/null >&2 ||
        fail "pip install python/ failed"
    echo "$hash" >"$stamp"
fi

log "pytest python/tests"
cd "$WORK"
SF=$SF SF_PYTHON_INSTALLED=1 timeout 1200 "$PY" -m pytest -q -p no:cacheprovider --basetemp="$WORK/pytest" \
    "$SF_SRC/python/tests" </dev/null >&2 || fail "pytest python/tests failed"
