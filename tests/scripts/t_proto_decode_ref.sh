#!/usr/bin/env bash
# The decoders (src/proto/uds.c, obd.c, dm1.c) against implementations we did not write
# (tests/scripts/proto_decode_ref.py, seeded): python-OBD 0.7.3's decoders for every PID
# with a formula, the bitmaps, mode 03 DTCs and the VIN; udsoncan 1.26.1 for every NRC,
# positive responses, ReadDataByIdentifier and ReadDTCInformation's DTC lists; DM1 built by
# J1939-73's layout and sent by can-j1939 2.0.12 (single frames and BAM), reassembled by
# tests/helpers/proto_feed.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import obd, udsoncan, j1939' 2>/dev/null ||
    skip "no venv with obd, udsoncan and can-j1939 at $PY (scripts/pyenv.sh)"
DEC=$(helper diag_decode)
FEED=$(helper proto_feed)
timeout 600 "$PY" "$SF_SRC/tests/scripts/proto_decode_ref.py" "$DEC" "$FEED" </dev/null >&2 ||
    fail "the decoders differ from python-OBD, udsoncan or the DM1 built (above)"
log "ok"
