#!/usr/bin/env bash
# Create the Python virtual environment the oracle tests use (build/pyenv by default, or
# $1) and install tests/python-requirements.txt into it: real MF4 readers and writers
# (asammdf, python-can, cantools, numpy). Not system-wide. Idempotent: a stamp file holds
# the requirements' hash, and nothing is done when it matches.
#
# Failure to create the venv or to install (no network) is reported and not fatal: the
# tests that need the venv then skip with status 77.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$here/build/pyenv}
req=$here/tests/python-requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
py=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
    mkdir -p "$(dirname "$venv")"
    if ! "$py" -m venv "$venv" </dev/null; then
        echo "pyenv.sh: cannot create a venv with $py (Debian: python3-venv); MF4 oracle tests will skip" >&2
        rm -rf "$venv"
        exit 0
    fi
fi
echo "pyenv.sh: installing tests/python-requirements.txt into $venv"
if ! timeout 1800 "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        -r "$req" </dev/null; then
    echo "pyenv.sh: pip install failed; MF4 oracle tests will skip" >&2
    exit 0
fi
echo "$want" > "$stamp"
exit 0
