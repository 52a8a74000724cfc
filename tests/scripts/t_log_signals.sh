#!/usr/bin/env bash
# The control stage's signal extraction (src/log/control.c, sf_ctl_signal_raw) against
# cantools decoding the same bits from a generated DBC: 2000 random signals, Intel and
# Motorola, signed and unsigned, 1..64 bits, in 8- and 64-byte frames (seeded; the seed is
# printed). Needs the venv of tests/python-requirements.txt (SF_PYENV, scripts/pyenv.sh).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import cantools' 2>/dev/null ||
    skip "no venv with cantools at $PY (scripts/pyenv.sh)"
SEED=${SF_SEED:-20261201}
timeout 300 "$PY" "$SF_SRC/tests/scripts/ctl_signals.py" "$(helper ctl_signal)" "$SEED" 2000 \
    </dev/null || fail "signals differ from cantools (seed $SEED)"
