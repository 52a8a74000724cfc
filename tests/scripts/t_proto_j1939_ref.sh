#!/usr/bin/env bash
# J1939 transport reassembly (src/proto/j1939.c) against can-j1939 2.0.12 (the venv of
# tests/python-requirements.txt, SF_PYENV), a stack we did not write: its sender's BAMs and
# RTS/CTS transfers (9 to 1,785 bytes), answered by its own receiver with CTS windows of 1,
# 3 and 16 packets and EndOfMsgAck, come back from tests/helpers/proto_feed as the payloads
# sent, with their PGN, source and destination (tests/scripts/j1939_ref.py says why damage
# is not compared with its receiver).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import j1939' 2>/dev/null ||
    skip "no venv with can-j1939 at $PY (scripts/pyenv.sh)"
FEED=$(helper proto_feed)
timeout 600 "$PY" "$SF_SRC/tests/scripts/j1939_ref.py" "$FEED" "$WORK" </dev/null >&2 ||
    fail "J1939 reassembly differs from can-j1939 (above)"
log "ok"
