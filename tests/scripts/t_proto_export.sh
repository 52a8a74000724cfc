#!/usr/bin/env bash
# streamfat export -f messages (cli/formats/export_messages.c over src/proto/): a candump
# log of can-isotp 2.0.7 transfers (normal 11-bit on the OBD-II ids, normal fixed 29-bit,
# extended and mixed pairs named with --isotp-pair, CAN FD, a 5,000-byte escape), J1939
# BAMs and NMEA 2000 fast packets (--fast-pgn 129029) with plain frames between, replayed
# into a log; the export's ISO-TP messages equal what can-isotp's receivers make of the same
# frames, the others what was sent (tests/scripts/proto_export.py); broken messages come
# with their status and what arrived and a count on standard error; the options are refused
# with one line when wrong or used with another format.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import isotp' 2>/dev/null ||
    skip "no venv with can-isotp at $PY (scripts/pyenv.sh)"
PE=$SF_SRC/tests/scripts/proto_export.py
IMG=$FASTWORK/p.img

timeout 300 "$PY" "$PE" make "$WORK/in.log" </dev/null || fail "could not make the frames"
sf_ok mkfs -q -t exfat -s 32M "$IMG"
log_json "$WORK/log.json" --source "file:$WORK/in.log" --fast "$IMG" || fail "log failed"
sf_ok export -f messages --isotp-pair 6F1:612:ext --isotp-pair 18CE10F1:18CEF110:mixed \
    --fast-pgn 129029 -o "$WORK/out.jsonl" "$IMG" LOG00001.SFL
timeout 300 "$PY" "$PE" check "$WORK/in.log" "$WORK/out.jsonl" </dev/null >&2 ||
    fail "export -f messages differs (above)"

log "broken messages: written with their status and what arrived, counted on stderr"
cat >"$WORK/broken.log" <<'LOG'
(1700000000.000000) can0 7E8#2101020304050607
(1700000000.001000) can0 7E8#1014000102030405
(1700000000.002000) can0 7E8#2106070809101112
(1700000000.003000) can0 7E8#2313141516171819
(1700000000.004000) can0 7E8#1014000102030405
LOG
sf_ok mkfs -q --force -t exfat -s 32M "$IMG"   # a new volume for the FD part
log_json "$WORK/log2.json" --source "file:$WORK/broken.log" --fast "$IMG" || fail "log failed"
sf_ok export -f messages -o "$WORK/broken.jsonl" "$IMG" LOG00001.SFL
python3 - "$WORK/broken.jsonl" <<'PY' || fail "broken messages not as documented"
import json, sys
m = [json.loads(l) for l in open(sys.argv[1])]
assert [(x["status"], x["length"], x["declared"]) for x in m] == \
    [("bad_seq", 13, 20), ("end", 6, 20)], m
assert m[0]["data"] == "00010203040506070809101112"
PY
grep -q "messages: 0 whole, 2 broken; frames without a session 1" "$SF_LAST_ERR" ||
    { cat "$SF_LAST_ERR" >&2; fail "no summary line on stderr"; }

log "usage errors"
for bad in "--isotp-pair 7E0" "--isotp-pair 7E0:7E0" "--isotp-pair 7E0:7E8:odd" \
           "--fast-pgn 999999" "--fast-pgn x"; do
    # shellcheck disable=SC2086
    sf_err 2 export -f messages $bad "$IMG" LOG00001.SFL
done
sf_err 2 export -f candump --fast-pgn 129029 "$IMG" LOG00001.SFL
log "ok"
