#!/usr/bin/env bash
# streamfat export --format mf4, read by the readers people use (the venv of
# tests/python-requirements.txt, SF_PYENV: asammdf, python-can, cantools):
# - asammdf opens every export (DZ blocks at zlib levels 1 and 9, plain DT blocks) and its
#   CAN_DataFrame / CAN_RemoteFrame / CAN_ErrorFrame members and master time equal the
#   records of the library's decoder (tests/helpers/log_frames) field by field, in order,
#   to the nanosecond; python-can's can.LogReader yields the same messages
#   (tests/scripts/mf4_check.py check);
# - filters (--channel, --id, --from/--to) select what they select for the other formats;
# - DROP and ANNOTATION records become EV blocks, META the HD comment, channel names the
#   SI comment; the ID block says finalized;
# - asammdf's extract_bus_logging with a DBC (little- and big-endian, signed, scaled,
#   multiplexed, extended id) gives the physical values cantools decodes from the same
#   frames, per bus (mf4_check.py dbc);
# - into a pipe it is built in a temporary file and copied out (t_export_stdout_seek has
#   every kind of standard output); memory stays flat on a larger log (SF_LONG: 4 GiB).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import asammdf, can, cantools' 2>/dev/null ||
    skip "no venv with asammdf, python-can and cantools at $PY (scripts/pyenv.sh)"
MC=$SF_SRC/tests/scripts/mf4_check.py
check() { "$PY" "$MC" check "$@" >&2 || fail "mf4_check check $*"; }

LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 2000
"$(helper log_frames)" "$LOGF" >"$WORK/ref"
START=$(awk '$1 == "start" { print $2 }' "$WORK/ref")
FIRST=$(awk '$1 == "can" || $1 == "rec" { print $2; exit }' "$WORK/ref")   # the HD start

log "plain (DT), zlib level 1 (the default) and 9 (transposed DZ): asammdf and python-can"
sf_ok export -f mf4 -o "$WORK/z1.mf4" "$LOGF"
sf_ok export -f mf4 --mf4-compress 9 -o "$WORK/z9.mf4" "$LOGF"
sf_ok export -f mf4 --mf4-compress 0 -o "$WORK/p.mf4" "$LOGF"
for f in z1 z9 p; do check "$WORK/ref" "$WORK/$f.mf4" --expect-count 2009; done
"$PY" - "$WORK/z1.mf4" "$WORK/p.mf4" "$FIRST" <<'PY' || fail "MF4 blocks, header or events wrong"
import struct, sys
from asammdf import MDF
z, p, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
for path, dz in ((z, True), (p, False)):
    b = open(path, "rb").read()
    assert b[:8] == b"MDF     " and b[8:12] == b"4.11", b[:16]
    assert struct.unpack_from("<H", b, 60)[0] == 0, "unfinalized flags set"
    assert b[64:68] == b"##HD"
    hd_start, tz, dst, tflags = struct.unpack_from("<QhhB", b, 64 + 24 + 6 * 8)
    assert hd_start == start - start % 1000 and tz == 0 and dst == 0 and tflags == 2, \
        (hd_start, start, tz, dst, tflags)
    assert (b"##DZ" in b) == dz and (b"##HL" in b) == dz and b"##DL" in b, path
    assert (b"##DT" in b) != dz, path
    m = MDF(path)
    ev = sorted((e.name, e.event_type) for e in m.events)
    assert ev == [("DROP 5", 2), ("trigger: test", 6)], ev
    assert '<e name="source">mklog</e>' in m.header.comment, m.header.comment
    si = m.groups[0].channel_group.acq_source
    assert si.source_type == 2 and si.bus_type == 2, (si.source_type, si.bus_type)
    for want in ("BusChannel 1\">can0<", "BusChannel 2\">vcan1<", "BusChannel 3\">can2<"):
        assert want in si.comment, si.comment
    assert [g.channel_group.flags & 6 for g in m.groups] == [6, 6, 6]
PY
[ "$(stat -c %s "$WORK/z1.mf4")" -lt $(($(stat -c %s "$WORK/p.mf4") / 4)) ] ||
    fail "DZ export not 4 times smaller than the plain one"

log "filters: --channel, --id, --from/--to"
sf_ok export -f mf4 --id 100/7F0 --id '!105' -o "$WORK/f1.mf4" "$LOGF"
check "$WORK/ref" "$WORK/f1.mf4" --id 100/7F0 --id '!105' --expect-count 1875
sf_ok export -f mf4 --channel vcan1 -o "$WORK/f2.mf4" "$LOGF"
check "$WORK/ref" "$WORK/f2.mf4" --channel vcan1 --expect-count 1003
sf_ok export -f mf4 --channel 2 --channel can0 --mf4-compress 0 -o "$WORK/f3.mf4" "$LOGF"
check "$WORK/ref" "$WORK/f3.mf4" --channel 2 --channel can0 --expect-count 1006
sf_ok export -f mf4 --from +5.001 --to 1700000000.125 -o "$WORK/f4.mf4" "$LOGF"
check "$WORK/ref" "$WORK/f4.mf4" --from-ns $((START + 5001000000)) --to-ns 1700000000125000000

log "a pipe gets the whole MF4; --relative and bad levels are usage errors"
"$SF" export -f mf4 "$LOGF" 2>"$WORK/pipe.err" | cat >"$WORK/pipe.mf4"
((PIPESTATUS[0] == 0)) || { cat "$WORK/pipe.err" >&2; fail "export -f mf4 to a pipe failed"; }
check "$WORK/ref" "$WORK/pipe.mf4" --expect-count 2009
sf_ok export -f mf4 -o /dev/null "$LOGF"
sf_err 2 export -f mf4 --relative -o "$WORK/x.mf4" "$LOGF"
sf_err 2 export -f mf4 --mf4-compress 10 -o "$WORK/x.mf4" "$LOGF"
sf_ok export -f mf4 "$LOGF" >"$WORK/stdout.mf4"      # standard output on a regular file
check "$WORK/ref" "$WORK/stdout.mf4" --expect-count 2009
sf_ok export --help >"$WORK/help"              # (grep -q on a pipe: SIGPIPE past 4 KiB)
grep -q '^  mf4 ' "$WORK/help" || fail "--help does not describe mf4"

log "a log on a volume through --all, DBC decoding by asammdf against cantools"
"$PY" "$MC" gen-dbc "$WORK/t.dbc"
"$PY" "$MC" gen-candump "$WORK/c.log" 16 3000
IMG=$FASTWORK/v.img
sf_ok mkfs -q -t exfat -s 32M "$IMG"
sf_ok log --source "file:$WORK/c.log" --fast "$IMG" >/dev/null
sf_ok export -f mf4 --all "$IMG" "$WORK/all" >/dev/null
[[ -s $WORK/all/LOG00001.mf4 ]] || fail "--all did not write LOG00001.mf4"
"$PY" "$MC" dbc "$WORK/c.log" "$WORK/all/LOG00001.mf4" "$WORK/t.dbc" >&2 ||
    fail "extract_bus_logging differs from cantools"
sf_ok export -f mf4 --mf4-compress 0 -o "$WORK/dbc0.mf4" "$IMG" LOG00001.SFL
"$PY" "$MC" dbc "$WORK/c.log" "$WORK/dbc0.mf4" "$WORK/t.dbc" >&2 ||
    fail "extract_bus_logging differs from cantools (plain DT)"

# ---- memory ------------------------------------------------------------------------------
# Nothing is kept per record: a log 300 times larger (two DL blocks chained) peaks at the
# same RSS within 4 MiB, and asammdf reads all of it. SF_LONG: a 4 GiB log (120 M frames),
# within 16 MiB.
maxrss() {   # maxrss LOG LEVEL: the export's max RSS in KiB
    /usr/bin/time -f '%M' -o "$WORK/rss" "$SF" export -f mf4 --mf4-compress "$2" \
        -o "$WORK/rss.mf4" "$1" 2>"$WORK/rss.err" ||
        { cat "$WORK/rss.err" >&2; fail "export -f mf4 $1 failed"; }
    has_sanitizer_report "$WORK/rss.err" && fail "sanitizer report from export -f mf4 $1"
    tail -1 "$WORK/rss"
}
if [[ -x /usr/bin/time ]]; then
    BIG=$WORK/big.SFL
    n=600000 slack=4096
    if [[ ${SF_LONG:-0} == 1 ]]; then
        BIG=$(mktemp -p "${TMPDIR:-/tmp}" sf-mf4-big.XXXXXX)
        on_exit "rm -f '$BIG' '$BIG.blocks'"
        n=120000000 slack=16384
    fi
    SF_TIMEOUT=1000 run_helper mklog "$BIG" 65536 "$n"
    for level in 1 0; do
        small=$(maxrss "$LOGF" "$level")
        big=$(maxrss "$BIG" "$level")
        log "level $level: max RSS $small KiB (2,000 frames), $big KiB ($n frames)"
        ((big < small + slack)) || fail "export -f mf4 grows with the log: $small -> $big KiB"
    done
    if [[ ${SF_LONG:-0} != 1 ]]; then
        [[ $("$PY" "$MC" dl-count "$WORK/rss.mf4") -ge 2 ]] || fail "big export: one DL block"
        "$(helper log_frames)" "$BIG" >"$WORK/ref.big"
        check "$WORK/ref.big" "$WORK/rss.mf4" --asammdf-only --expect-count $((n + 9))
    fi
    rm -f "$BIG" "$BIG.blocks" "$WORK/rss.mf4"
fi
log "ok"
