#!/usr/bin/env bash
# streamfat log --source file:X.asc: an ASC file written by python-can's ASCWriter (standard,
# extended, remote and CAN FD frames with BRS/ESI, an error frame, three channels, 3000 more
# frames) and a candump -L log written by python-can's CanutilsLogWriter are imported with
# --fast and exported again; python-can must read the same frames back from our candump and
# BLF exports, timestamps to the microsecond (ASC: the Begin Triggerblock time plus the
# event's offset, as python-can reads it). A hand-written ASC file covers what python-can
# does not write: base dec, relative (delta) timestamps, a 24-hour date, symbolic names, a
# classic frame in a CANFD line, skipped statistics and TxRq, CANFD error frames (with a BOM and
# CRLF line ends). Malformed lines end the run with exit 1 and "FILE:LINE: ASC: why"; the
# frames before them are kept.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
. "$SF_SRC/tests/scripts/importlib.sh"

import() { import_file "$@"; }

log "python-can ASC"
$PY "$FR" gen-asc "$WORK/p.asc"
import "$WORK/p.asc" --fast
jcheck "$WORK/log.json" 'j["records_offered"] == 3008 and j["bad_input"] == 0'
$PY "$FR" cmp asc "$WORK/p.asc" candump "$WORK/out.log" || fail "ASC: candump export differs"
sf_ok export --format blf -o "$WORK/out.blf" "$IMG" LOG00001.SFL
$PY "$FR" cmp asc "$WORK/p.asc" blf "$WORK/out.blf" || fail "ASC: BLF export differs"
cp "$WORK/out.log" "$WORK/p-asc.log"

log "python-can ASC whose date line python-can mangled (.123202 PM 2026 -> .123 PM 6)"
# ASCWriter writes the clock's time there and, with the microseconds' last 3 digits found in
# the year too (0.2 % of runs in 2026), cuts them from the year as well. Its Begin
# Triggerblock date, which sets the times, is intact; python-can reads the file with its
# default relative_timestamp=True (it then ignores the date line) but not with False, so
# the reference is p.asc's import: the files differ only in the date line.
$PY "$FR" gen-asc "$WORK/m.asc" 2026-12-01T19:14:02.123202
grep -qx 'date Tue Dec 01 07:14:02.123 PM 6' "$WORK/m.asc" || fail "m.asc: not python-can's mangled date"
diff <(tail -n +2 "$WORK/p.asc") <(tail -n +2 "$WORK/m.asc") >&2 || fail "m.asc differs beyond its date"
import "$WORK/m.asc" --fast
diff "$WORK/p-asc.log" "$WORK/out.log" >&2 || fail "ASC with python-can's mangled date imported wrongly"

log "streamfat's own ASC export replays to the same records"
cp "$WORK/out.log" "$WORK/first.log"
sf_ok export --format asc -o "$WORK/out.asc" "$IMG" LOG00001.SFL
import "$WORK/out.asc" --fast
diff "$WORK/first.log" "$WORK/out.log" >&2 || fail "ASC export -> import changed frames"

log "python-can candump -L"
$PY "$FR" gen-candump "$WORK/p.log"
import "$WORK/p.log" --fast
$PY "$FR" cmp candump "$WORK/p.log" candump "$WORK/out.log" || fail "candump: export differs"

log "hand-written ASC: base dec, relative timestamps, names, classic in CANFD, statistics"
cat >"$WORK/h.asc" <<'EOF'
date Tue Nov 14 22:13:20.123 2023
base dec  timestamps relative
// a comment
no internal events logged
   0.000100 1  291             Rx   d 2 17 34  Length = 0 BitCount = 0 ID = 291
   0.000100 1  Statistic: D 0 R 0 XD 0 XR 0 E 0 O 0 B 0.00%
   0.000100 2  1193046x        Tx   d 8 1 2 3 4 5 6 7 8
   0.000100 CANFD   1 Rx    801  MsgName  1 0 9 12 0 1 2 3 4 5 6 7 8 9 10 11   1000  130  3000 0 0 0 0 0
   0.000100 CANFD   2 Tx    100  0 0 8 8 1 2 3 4 5 6 7 8   0 0 0 0 0 0 0 0
   0.000100 2  ErrorFrame
   0.000100 CANFD   1 Rx  ErrorFrame
   0.000100 1  500             Rx   r 4
   0.000100 1  500             TxRq d 1 5
   0.000100 CANFD   1 TxRq  100  0 0 1 1 5   0 0 0 0 0 0 0 0
End TriggerBlock
EOF
cat >"$WORK/h.want" <<'EOF'
(1700000000.123100) can0 123#1122
(1700000000.123300) can1 00123456#0102030405060708
(1700000000.123400) can0 321##5000102030405060708090A0B
(1700000000.123500) can1 064#0102030405060708
(1700000000.123600) can1 20000080#0000000000000000
(1700000000.123700) can0 20000080#0000000000000000
(1700000000.123800) can0 1F4#R4
EOF
import "$WORK/h.asc" --fast
diff "$WORK/h.want" "$WORK/out.log" >&2 || fail "hand-written ASC imported wrongly"
log "the same with a UTF-8 byte order mark and CRLF line ends (Windows)"
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' "$WORK/h.asc"; } >"$WORK/hw.asc"
import "$WORK/hw.asc" --fast
diff "$WORK/h.want" "$WORK/out.log" >&2 || fail "ASC with BOM and CRLF imported wrongly"

# ---- malformed input ------------------------------------------------------------------
# bad_import FILE REGEX FRAMES: exit 1, one message matching REGEX, FRAMES frames kept.
bad_import() {
    local src=$1 re=$2 want=$3 rc=0 n
    rm -f "$IMG"
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    sf log --source "file:$src" --fast "$IMG" >/dev/null || rc=$?
    ((rc == 1)) || fail "$src: exit $rc, expected 1"
    grep -Eq "$re" "$SF_LAST_ERR" || fail "$src: no message matching '$re'"
    if ((want == 0)); then
        # nothing usable: the run leaves no log file (issue 26 item 4)
        sf_ok ls "$IMG" >"$WORK/ls.out"
        ! grep -q 'LOG00001.SFL' "$WORK/ls.out" || fail "$src: a log without frames was left"
        return 0
    fi
    sf_ok export --format candump -o "$WORK/out.log" "$IMG" LOG00001.SFL
    n=$(wc -l <"$WORK/out.log")
    ((n == want)) || fail "$src: $n frames kept, expected $want"
}
head -n 5 "$WORK/h.asc" >"$WORK/g.asc"
printf 'hello world\n   0.000100 1  291  Rx   d 2 17 34\n' >>"$WORK/g.asc"
log "a garbage line"
bad_import "$WORK/g.asc" 'g\.asc:6: ASC: not an ASC line$' 1
log "binary junk"
{ head -n 5 "$WORK/h.asc"; printf '\x01\xfe\xff\x00\x80 junk \x7f\x1b[0m\n'; } >"$WORK/j.asc"
bad_import "$WORK/j.asc" 'j\.asc:6: ASC: ' 1
log "a frame line with its data cut"
{ head -n 5 "$WORK/h.asc"; echo '   0.000100 2  1193046x        Tx   d 8 1 2 3'; } >"$WORK/d.asc"
bad_import "$WORK/d.asc" 'd\.asc:6: ASC: data bytes missing' 1
log "an FD length no DLC can say"
{ head -n 5 "$WORK/h.asc"; echo '   0.1 CANFD 1 Rx 801 1 0 9 10 0 1 2 3 4 5 6 7 8 9 0 0 1000'; } >"$WORK/f.asc"
bad_import "$WORK/f.asc" 'f\.asc:6: ASC: not a CAN FD data length' 1
log "a date that is not one"
printf 'date Tue Nov 44 22:13:20.123 2023\nbase hex timestamps absolute\n' >"$WORK/t.asc"
bad_import "$WORK/t.asc" 't\.asc:1: ASC: cannot read the date' 0
log "a date that is not one, then frames and no Begin Triggerblock date to replace it"
{ head -n 1 "$WORK/t.asc"; tail -n +2 "$WORK/h.asc"; } >"$WORK/t2.asc"
bad_import "$WORK/t2.asc" 't2\.asc:1: ASC: cannot read the date$' 0
log "a date that is not one, replaced by a Begin Triggerblock date before the frames"
{ head -n 1 "$WORK/t.asc"; echo 'Begin Triggerblock Tue Nov 14 22:13:20.123 2023'; tail -n +2 "$WORK/h.asc"; } >"$WORK/t3.asc"
import "$WORK/t3.asc" --fast
diff "$WORK/h.want" "$WORK/out.log" >&2 || fail "ASC with a Triggerblock date after a bad date imported wrongly"
