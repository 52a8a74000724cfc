#!/usr/bin/env bash
# streamfat log --source file:X.mf4 (ASAM MDF 4), checked against the readers and writers
# people use (the venv of tests/python-requirements.txt, SF_PYENV):
# - files written by python-can's MF4Writer (MDF 4.10; transposition + deflate, its
#   default; deflate; plain DT): standard, extended, remote, CAN FD with BRS/ESI, error
#   frames, three channels; what python-can's LogReader reads from the same file equals
#   the import, frame by frame (timestamps within 1 us; BusChannel N is can<N-1>);
# - files written by asammdf (flat CAN_DataFrame.* channels, DataBytes VLSD in SD blocks,
#   plain and compressed, extended ids by bit 31 only) replay to the frames written;
# - a hand-made unsorted file (record ids, a VLSD channel group, DT and plain-deflate DZ
#   blocks cut through records, two DL blocks under an HL) replays exactly;
# - streamfat's own MF4 export replays to the frames it was made from (round trip), with
#   its channel names (vcan1, ecu_bus: the SI comment; other files keep can<N-1>);
# - damaged files (loops, bad block ids, lengths past the end, absurd counts, bad DZ,
#   bad records, unfinalized, truncated) end the run with exit 1 and one line naming the
#   offset, no sanitizer report.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import asammdf, can' 2>/dev/null ||
    skip "no venv with asammdf and python-can at $PY (scripts/pyenv.sh)"
MC=$SF_SRC/tests/scripts/mf4_check.py
IMG=$FASTWORK/imp.img
export TZ=UTC

# import FILE [LOG OPTIONS]: FILE replayed into a fresh image, exported to $WORK/out.log.
import() {
    local src=$1
    shift
    rm -f "$IMG"
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    sf_ok log --source "file:$src" --fast "$@" "$IMG" >/dev/null
    sf_ok export --format candump -o "$WORK/out.log" "$IMG" LOG00001.SFL
}

log "python-can's MF4Writer: transposition + deflate (its default), deflate, plain"
for level in 2 1 0; do
    "$PY" "$MC" gen-pycan "$WORK/pc$level.mf4" "$level" 7 2000
    import "$WORK/pc$level.mf4"
    "$PY" "$MC" cmp "$WORK/pc$level.mf4" "$WORK/out.log" >&2 ||
        fail "python-can MF4 (level $level) imported wrongly"
    # and the frames python-can was given, independently of its reader
    "$PY" "$MC" cmp "$WORK/pc$level.mf4" "$WORK/out.log" --seed 7 --n 2000 >&2 ||
        fail "python-can MF4 (level $level): not the frames written"
done
grep -q '^(1700000000.123456) can0 123#11223344$' "$WORK/out.log" ||
    fail "first frame not at the HD start + t"
grep -q '^(1700000000.124056) can2 20000080#0000000000000000$' "$WORK/out.log" ||
    fail "error frame not imported as a bus error"
grep -q '^(1700000000.123756) can1 00000ABC#R5$' "$WORK/out.log" ||
    fail "extended remote frame with a length not imported"

log "asammdf: flat channels, DataBytes VLSD (SD blocks), plain and compressed"
for level in 0 2; do
    "$PY" "$MC" gen-asammdf "$WORK/am$level.mf4" "$level" 9 1500
    import "$WORK/am$level.mf4"
    "$PY" "$MC" cmp "$WORK/am$level.mf4" "$WORK/out.log" --seed 9 --n 1500 --no-rtr-err >&2 ||
        fail "asammdf MF4 (level $level) imported wrongly"
done

log "unsorted data group, VLSD channel group, DT and DZ (deflate) cut through records"
"$PY" "$MC" gen-unsorted "$WORK/u.mf4" "$WORK/u.want" 3 3000
import "$WORK/u.mf4"
diff "$WORK/u.want" "$WORK/out.log" >&2 || fail "unsorted MF4 imported wrongly"

log "round trip: streamfat's own MF4 export (DZ and DT) replays to the same frames"
import "$WORK/pc2.mf4"
cp "$WORK/out.log" "$WORK/first.log"
for level in 1 0; do
    sf_ok export -f mf4 --mf4-compress "$level" -o "$WORK/own$level.mf4" "$IMG" LOG00001.SFL
done
for level in 1 0; do
    import "$WORK/own$level.mf4"
    diff "$WORK/first.log" "$WORK/out.log" >&2 || fail "MF4 export (level $level) -> import changed frames"
done
LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 2000
sf_ok export -f mf4 -o "$WORK/mk.mf4" "$LOGF" 2>/dev/null
sf_ok export -f candump "$LOGF" 2>/dev/null >"$WORK/mk.want"
import "$WORK/mk.mf4"
diff "$WORK/mk.want" "$WORK/out.log" >&2 || fail "mklog -> MF4 -> import changed frames"

log "round trip keeps the channel names (the SI comment's <e name=\"BusChannel N\">)"
printf '%s\n' '(1700000000.000100) vcan1 123#11' '(1700000000.000200) ecu_bus 1ABCDEF0#2233' \
    '(1700000000.000300) vcan1 7FF#R' '(1700000000.000400) ecu_bus 456##1AABB' \
    '(1700000000.000500) vcan1 124#' >"$WORK/names.log"
import "$WORK/names.log"
cp "$WORK/out.log" "$WORK/names.want"
grep -q ' ecu_bus 456##5AABB$' "$WORK/names.want" || fail "candump names not logged"
for level in 1 0; do
    sf_ok export -f mf4 --mf4-compress "$level" -o "$WORK/names$level.mf4" "$IMG" LOG00001.SFL
    import "$WORK/names$level.mf4"
    diff "$WORK/names.want" "$WORK/out.log" >&2 ||
        fail "MF4 export (level $level) -> import lost the channel names"
done

log "damaged files: one line naming the offset, exit 1, no sanitizer report"
"$PY" "$MC" gen-hostile "$WORK/own1.mf4" "$WORK/bad" >/dev/null
"$PY" "$MC" gen-hostile "$WORK/own0.mf4" "$WORK/badp" >/dev/null
size=$(stat -c %s "$WORK/own0.mf4")
for n in 10 63 100 $((size / 2)) $((size - 8)); do
    head -c "$n" "$WORK/own0.mf4" >"$WORK/bad/cut$n.mf4"
done
nbad=0
for f in "$WORK"/bad/*.mf4 "$WORK"/badp/*.mf4; do
    rm -f "$IMG"
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    rc=0
    sf log --source "file:$f" --fast "$IMG" >/dev/null 2>&1 || rc=$?
    ((rc == 1)) || fail "$(basename "$f"): exit $rc, expected 1"
    [[ $(grep -c 'MF4: offset [0-9]*: ' "$SF_LAST_ERR") -eq 1 ]] ||
        fail "$(basename "$f"): no one-line error naming the offset"
    nbad=$((nbad + 1))
done
((nbad >= 40)) || fail "only $nbad damaged files"
log "$nbad damaged files refused"
log "ok"
