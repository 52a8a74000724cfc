#!/usr/bin/env bash
# streamfat export in every format, read back by the tools people use: python-can
# (/usr/bin/python3, Debian's python3-can) reads every candump, ASC, BLF (zlib and stored
# containers) and CSV export and must get exactly the records the library's decoder gives
# (tests/helpers/log_frames): ids, extended/RTR/FD/BRS/ESI/error flags, data, timestamps to
# the microsecond (tests/scripts/export_check.py). csv-wide and raw are checked the same way
# with the csv module and as bytes.
#
# Logs: the synthetic tests/helpers/mklog file (CAN 2.0 11/29-bit, RTR with and without a
# length, CAN FD with BRS/ESI up to 64 bytes, an error frame, TEXT/DROP/SAMPLE records), and
# logs written by `streamfat log` (gen:can over two channels in rotated files, latency:)
# on an exFAT image, exported through TARGET PATH and with --all.
# Filters (--channel by name and number, --id accept and reject, --from/--to relative,
# Unix and ISO) are applied to the reference independently by export_check.py, which also
# checks the selection size the test expects. ASC and BLF are also written and read in
# another time zone (both store local time). SF_LONG=1: a 4 GiB log exports with flat
# memory (max RSS).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
/usr/bin/python3 -c 'import can' 2>/dev/null || skip "python3-can is not installed"

CHECK=$SF_SRC/tests/scripts/export_check.py
FRAMES=$(helper log_frames)
check() { /usr/bin/python3 "$CHECK" "$@" >&2 || fail "export_check $*"; }

LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 2000
"$FRAMES" "$LOGF" >"$WORK/ref"
grep -c '^can ' "$WORK/ref" | matches -x 2009 || fail "log_frames: expected 2009 frames"

# ---- every format, from a host file ---------------------------------------------------
log "candump, asc, blf (zlib, stored), csv, csv-wide, raw from a host file"
for f in candump asc csv csv-wide raw; do
    sf_ok export --format "$f" -o "$WORK/out.$f" "$LOGF"
    check "$WORK/ref" "$f" "$WORK/out.$f"
done
sf_ok export -f blf -o "$WORK/z.blf" "$LOGF"
sf_ok export -f blf --blf-compress 0 -o "$WORK/s.blf" "$LOGF"
sf_ok export -f blf --blf-compress 9 -o "$WORK/z9.blf" "$LOGF"
for b in z s z9; do check "$WORK/ref" blf "$WORK/$b.blf"; done
# the containers really are what the option says (method field of the first LOBJ)
/usr/bin/python3 - "$WORK/z.blf" "$WORK/s.blf" <<'PY' || fail "BLF container methods or header totals wrong"
import struct, sys
for path, method in zip(sys.argv[1:], (2, 0)):
    b = open(path, "rb").read()
    assert b[:4] == b"LOGG" and b[144:148] == b"LOBJ", path
    size, typ = struct.unpack_from("<LL", b, 144 + 8)
    assert typ == 10 and struct.unpack_from("<H", b, 160)[0] == method, (path, typ)
    fsize, _, count = struct.unpack_from("<QQL", b, 16)
    assert fsize == len(b) and count == 2009, (path, fsize, len(b), count)
PY
cmp -s "$WORK/z.blf" "$WORK/s.blf" && fail "compressed and stored BLF are identical"
[ "$(stat -c %s "$WORK/z.blf")" -lt "$(stat -c %s "$WORK/s.blf")" ] || fail "zlib BLF not smaller"

log "blf and csv through a pipe (no seeking back), relative timestamps"
sf_ok export -f blf "$LOGF" | cat >"$WORK/pipe.blf"
check "$WORK/ref" blf "$WORK/pipe.blf"
for f in candump csv csv-wide; do
    sf_ok export --relative -f "$f" -o "$WORK/rel.$f" "$LOGF"
    check "$WORK/ref" "$f" "$WORK/rel.$f" --relative
done

log "asc and blf in another time zone"
TZ=Asia/Kolkata sf_ok export -f asc -o "$WORK/tz.asc" "$LOGF"
TZ=America/New_York sf_ok export -f blf -o "$WORK/tz.blf" "$LOGF"
TZ=Asia/Kolkata check "$WORK/ref" asc "$WORK/tz.asc"
TZ=America/New_York check "$WORK/ref" blf "$WORK/tz.blf"
grep -q '^date Wed Nov 15 03:43:15.123 am 2023$' "$WORK/tz.asc" || fail "ASC date line not in local time"

# ---- filters ---------------------------------------------------------------------------
# The mklog log starts 5 s before T0 = 1700000000.123456789; its 2000 bulk frames are at
# T0 + 1 ms + k us + 789 ns with ids 0x100 + k % 16 on can0 (k even) and vcan1 (k odd).
log "filters"
START=$(awk '$1 == "start" { print $2 }' "$WORK/ref")
sf_ok export -f csv --id 100/7F0 -o "$WORK/f1.csv" "$LOGF"
check "$WORK/ref" csv "$WORK/f1.csv" --id 100/7F0 --expect-count 2000
sf_ok export -f blf --id 100/7F0 --id '!105' -o "$WORK/f2.blf" "$LOGF"
check "$WORK/ref" blf "$WORK/f2.blf" --id 100/7F0 --id '!105' --expect-count 1875
sf_ok export -f candump --channel vcan1 -o "$WORK/f3.log" "$LOGF"
check "$WORK/ref" candump "$WORK/f3.log" --channel vcan1 --expect-count 1003
sf_ok export -f asc --channel 2 --channel can0 -o "$WORK/f4.asc" "$LOGF"
check "$WORK/ref" asc "$WORK/f4.asc" --channel 2 --channel can0 --expect-count 1006
sf_ok export -f csv --from +5.001 --to 1700000000.125 -o "$WORK/f5.csv" "$LOGF"
check "$WORK/ref" csv "$WORK/f5.csv" --from-ns $((START + 5001000000)) \
    --to-ns 1700000000125000000 --expect-count 543
sf_ok export -f candump --from +5001ms --to 2023-11-14T22:13:20.125Z -o "$WORK/f6.log" "$LOGF"
cmp "$WORK/f6.log" <(sf_ok export -f candump --from +5.001 --to 1700000000.125 "$LOGF") ||
    fail "--to as an ISO date differs from Unix seconds"
rc=0
sf export -f raw --channel 3 -o "$WORK/f7.raw" "$LOGF" || rc=$?   # no channel 3: exit 3
((rc == 3)) || fail "raw --channel 3 (no such channel) exited $rc, expected 3"
[ ! -s "$WORK/f7.raw" ] || fail "raw --channel 3 should have no samples"

# ---- logs written by streamfat log, through TARGET PATH and --all ------------------------
log "streamfat log gen:can (rotated) and latency: on exFAT, TARGET PATH and --all"
IMG=$WORK/vol.img
sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source gen:can,channels=2 --max-records 60000 --split-size 512K --chunk 4K \
    --dir runs/a "$IMG"
sf_ok log -q --source latency:1ms --max-records 150 --chunk 4K --dir runs/b "$IMG"
sf_ok ls -R "$IMG" runs >"$WORK/ls"
mapfile -t logs < <(awk '/\.SFL$/ { print "runs/" $NF }' "$WORK/ls")
((${#logs[@]} >= 4)) || { cat "$WORK/ls" >&2; fail "expected several log files, got ${#logs[@]}"; }
sf_ok export -f blf --all "$IMG" "$WORK/all" >"$WORK/all.out"
sf_ok export -f csv-wide --all "$IMG" "$WORK/wide" >/dev/null
n=0
for p in "${logs[@]}"; do
    rel=$p
    sf_ok cat "$IMG" "$p" >"$WORK/host.SFL"
    "$FRAMES" "$WORK/host.SFL" >"$WORK/ref.v"
    [ -f "$WORK/all/${rel%.*}.blf" ] || { cat "$WORK/all.out" >&2; fail "--all made no ${rel%.*}.blf"; }
    check "$WORK/ref.v" blf "$WORK/all/${rel%.*}.blf"
    check "$WORK/ref.v" csv-wide "$WORK/wide/${rel%.*}.csv"
    n=$((n + $(grep -c '^can ' "$WORK/ref.v" || true)))
done
((n == 60000)) || fail "--all outputs hold $n frames, 60000 logged"
grep -q 'latency\|ch0' <(head -1 "$WORK/wide/runs/b/LOG00001.csv") ||
    fail "csv-wide of the latency log has no column"
[ "$(wc -l <"$WORK/wide/runs/b/LOG00001.csv")" -eq 151 ] || fail "csv-wide: expected 150 rows"
p=${logs[0]}
sf_ok export -f asc "$IMG" "$p" >"$WORK/vol.asc"
sf_ok cat "$IMG" "$p" >"$WORK/host.SFL"
"$FRAMES" "$WORK/host.SFL" >"$WORK/ref.v"
check "$WORK/ref.v" asc "$WORK/vol.asc"
sf_ok export -f csv-wide "$IMG" "$p" >"$WORK/vol.wide"   # volume files seek back too

log "Vector channel numbers follow can<N> names, not the order channels appeared in"
printf '(1700000001.000001) can5 123#01\n(1700000001.000002) can2 456#0203\n(1700000001.000003) can5 12345678#R\n' >"$WORK/ch.log"
sf_ok mkfs -q -t exfat -s 32M "$WORK/ch.img"
sf_ok log -q --source "file:$WORK/ch.log" --fast --chunk 4K "$WORK/ch.img"
sf_ok cat "$WORK/ch.img" LOG00001.SFL >"$WORK/ch.SFL"
"$FRAMES" "$WORK/ch.SFL" >"$WORK/ref.ch"
grep -q '^chan 0 can5$' "$WORK/ref.ch" || fail "import did not make can5 channel 0"
for f in asc blf; do
    sf_ok export -f "$f" -o "$WORK/ch.$f" "$WORK/ch.SFL"
    check "$WORK/ref.ch" "$f" "$WORK/ch.$f" --expect-count 3
done
/usr/bin/python3 -c 'import can, sys; assert [m.channel for m in can.BLFReader(sys.argv[1])] == [5, 2, 5]' \
    "$WORK/ch.blf" || fail "BLF channels are not 6, 3, 6"

# ---- usage and errors -----------------------------------------------------------------
log "usage errors"
sf_err 2 export -f blf --relative "$LOGF"
sf_err 2 export -f asc --relative "$LOGF"
sf_err 2 export --blf-compress 10 -f blf "$LOGF"
sf_err 2 export --id xyz "$LOGF"
sf_err 2 export --from yesterday "$LOGF"
sf_err 2 export --all "$IMG"
sf_err 2 export --all -o x "$IMG" "$WORK/x"
sf_err 1 export -f csv-wide - < <(cat "$LOGF")   # a pipe: no second pass
sf_ok export -f blf - < <(cat "$LOGF") >"$WORK/pipe2.blf"   # a pipe: start from the first container
check "$WORK/ref" blf "$WORK/pipe2.blf"
sf_ok export --help >"$WORK/help"
for f in candump asc blf csv csv-wide raw; do
    grep -q "^  $f " "$WORK/help" || fail "--help does not describe $f"
done

# ---- SF_LONG: a 4 GiB log with flat memory -----------------------------------------------
# The same export of the 2,000-frame log and of a 4.2 GiB one must peak at the same resident
# size (within 16 MiB): nothing is kept per record.
maxrss() {   # maxrss FORMAT LOG: the export's max RSS in KiB
    /usr/bin/time -f '%M' -o "$WORK/rss" "$SF" export -f "$1" -o /dev/null "$2" 2>"$WORK/rss.err" ||
        { cat "$WORK/rss.err" >&2; fail "export -f $1 $2 failed"; }
    has_sanitizer_report "$WORK/rss.err" && fail "sanitizer report from export -f $1 $2"
    tail -1 "$WORK/rss"
}
if [[ ${SF_LONG:-0} == 1 ]]; then
    need_tool /usr/bin/time
    log "SF_LONG: a 4.2 GiB log, max RSS against a small one"
    BIG=$(mktemp -p "${TMPDIR:-/tmp}" sf-export-big.XXXXXX)
    on_exit "rm -f '$BIG' '$BIG.blocks'"
    SF_TIMEOUT=1000 run_helper mklog "$BIG" 65536 120000000   # 64 KiB blocks of 32-byte frames
    [ "$(stat -c %s "$BIG")" -ge $((4 * 1024 * 1024 * 1024)) ] || fail "big log under 4 GiB"
    for f in candump blf; do
        small=$(maxrss "$f" "$LOGF")
        big=$(maxrss "$f" "$BIG")
        log "$f: max RSS $small KiB (2,000 frames), $big KiB (120 M frames)"
        ((big < small + 16384)) || fail "export -f $f grows with the log: $small -> $big KiB"
    done
    rm -f "$BIG" "$BIG.blocks"
fi
log "ok"
