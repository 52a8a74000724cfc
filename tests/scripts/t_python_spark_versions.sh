#!/usr/bin/env bash
# The extras' version ranges are the versions the package works with (issue 26, item 16).
#   Always: every pin of tests/python-requirements.txt (what t_python and t_python_spark
#   test) lies in the range python/pyproject.toml allows for it (a dependency or an extra),
#   so that `make check` tests an allowed version.
#   SF_LONG=1 (make check-long): python/tests/test_spark.py runs against the oldest pyspark
#   the [spark] extra allows (its lower bound) and the newest (what `pip install
#   './python[spark]'` gets today), each in a venv of its own beside build/pyenv
#   (build/pyenv-pyspark-oldest, -newest; kept between runs, the newest refreshed).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/pylib.sh"
need_sf
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import packaging, pytest' 2>/dev/null ||
    skip "no venv with pytest at $PY (scripts/pyenv.sh)"

# ---- the pins lie in the allowed ranges ----
log "pins of tests/python-requirements.txt against python/pyproject.toml"
"$PY" - "$SF_SRC/python/pyproject.toml" "$SF_SRC/tests/python-requirements.txt" \
    >"$WORK/ranges" <<'PY' || fail "a pinned version is outside the package's range"
import sys, tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
proj = tomllib.load(open(sys.argv[1], "rb"))["project"]
specs = [Requirement(r) for r in proj["dependencies"]]
specs += [Requirement(r) for extra in proj["optional-dependencies"].values() for r in extra]
pins = {}
for line in open(sys.argv[2]):
    line = line.split("#")[0].strip()
    if line:
        r = Requirement(line)
        pins[canonicalize_name(r.name)] = next(iter(r.specifier)).version
bad = 0
for r in specs:
    v = pins.get(canonicalize_name(r.name))
    if v is None:
        print(f"{r.name}: no pin (not tested by make check)")
        bad += 1
    elif v not in r.specifier:
        print(f"{r.name}: pinned {v}, allowed {r.specifier}")
        bad += 1
    else:
        print(f"{r.name} {r.specifier}: pinned {v}")
        if r.name == "pyspark":
            print(f"SPARK_SPEC {r.specifier}")
sys.exit(1 if bad else 0)
PY
cat "$WORK/ranges" >&2
[[ ${SF_LONG:-0} == 1 ]] || exit 0

# ---- SF_LONG: test_spark.py with the oldest and the newest pyspark allowed ----
need_tool java
spec=$(sed -n 's/^SPARK_SPEC //p' "$WORK/ranges")
lower=$(sed -n 's/.*>=\([0-9.]*\).*/\1/p' <<<"$spec")
[[ -n $lower ]] || fail "the [spark] extra ($spec) has no lower bound (>=) to test"
for which in oldest newest; do
    venv=$SF_SRC/build/pyenv-pyspark-$which
    want="pyspark==$lower"
    [[ $which == newest ]] && want="pyspark$spec"
    if [[ ! -x $venv/bin/python ]]; then
        python3 -m venv "$venv" </dev/null || fail "cannot create $venv"
    fi
    log "$which: $want and the other pins into $venv"
    grep -v '^pyspark' "$SF_SRC/tests/python-requirements.txt" >"$WORK/req-$which.txt"
    echo "$want" >>"$WORK/req-$which.txt"
    timeout 1800 "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        --upgrade -r "$WORK/req-$which.txt" </dev/null >&2 ||
        skip "pip install $want failed (no network?)"
    PY=$venv/bin/python
    log "$which: pyspark $("$PY" -c 'import pyspark; print(pyspark.__version__)')"
    py_package_install
    py_test "$SF_SRC/python/tests/test_spark.py"
done
