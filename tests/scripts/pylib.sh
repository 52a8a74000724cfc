# Helpers of the Python package's tests (t_python, t_python_spark; sourced after lib.sh).

# py_package_install: $PY (the venv of SF_PYENV) gets python/ installed, by pip install of a
# copy of it (the C extension compiled from this tree's src/, host/ and include/ without
# sanitizers), unless the sources are unchanged since the last install (a hash in the venv).
# Under a lock: the two tests may start at once.
py_package_install() {
    local venv hash stamp
    venv=$(dirname "$(dirname "$PY")")
    hash=$(cd "$SF_SRC" && find python src host include -path python/build -prune -o \
               -path '*/__pycache__' -prune -o -path '*.egg-info' -prune -o -type f \
               \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.toml' \) -print |
           LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
    stamp=$venv/.streamfat-package.sha256
    exec 9>"$venv/.streamfat-package.lock"
    flock 9
    if [[ ! -f $stamp || $(cat "$stamp") != "$hash" ]] ||
       ! "$PY" -c 'import streamfat._core' 2>/dev/null; then
        log "pip install python/ into $venv"
        mkdir -p "$WORK/pkg"
        (cd "$SF_SRC/python" && tar --exclude=./build --exclude='*.egg-info' \
            --exclude=__pycache__ --exclude='*.so' -cf - .) | (cd "$WORK/pkg" && tar -xf -)
        STREAMFAT_SRC=$SF_SRC timeout 900 "$PY" -m pip install -q --disable-pip-version-check \
            --no-build-isolation --no-deps --force-reinstall "$WORK/pkg" </dev/null >&2 ||
            fail "pip install python/ failed"
        echo "$hash" >"$stamp"
    fi
    flock -u 9
}

# py_test ARGS...: pytest (of the installed package) with this build's CLI; fails the test
# on a failure.
py_test() {
    cd "$WORK"
    SF=$SF SF_PYTHON_INSTALLED=1 timeout 1200 "$PY" -m pytest -q -p no:cacheprovider \
        --basetemp="$WORK/pytest" "$@" </dev/null >&2 || fail "pytest $* failed"
}
