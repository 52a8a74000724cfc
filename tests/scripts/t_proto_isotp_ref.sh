#!/usr/bin/env bash
# ISO-TP reassembly (src/proto/isotp.c) against can-isotp 2.0.7, a stack we did not write
# (the venv of tests/python-requirements.txt, SF_PYENV): its sender's frames in every
# addressing mode (normal 11/29-bit, normal fixed, extended and mixed on 11 and 29 bits),
# classic and CAN FD, padded or not, block sizes with STmin, up to past the 4,095-byte
# escape, come back whole from tests/helpers/proto_feed; seeded damage (drops, repeats,
# swaps, cut starts, interleaved addresses, new first frames) gives the same whole messages
# and the same verdicts as its receivers; the N_Cr cases follow the standard's rule (its
# timers read the wall clock, not the frames' times). tests/scripts/isotp_ref.py says how.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import isotp' 2>/dev/null ||
    skip "no venv with can-isotp at $PY (scripts/pyenv.sh)"
FEED=$(helper proto_feed)
timeout 900 "$PY" "$SF_SRC/tests/scripts/isotp_ref.py" "$FEED" "$WORK" 150 </dev/null >&2 ||
    fail "ISO-TP reassembly differs from can-isotp (above)"
log "ok"
