#!/usr/bin/env bash
# streamfat log --source file:X.blf: BLF files written by python-can's BLFWriter (standard,
# extended, remote and CAN FD frames with BRS/ESI, an error frame, a global marker to skip,
# three channels, 3000 more frames), and one built byte by byte with the object types and
# header variants python-can does not write, are imported with --fast and exported again;
# python-can must read the same frames back from our candump and BLF exports: channel, id,
# flags, data, timestamps to the microsecond (tests/scripts/import_frames.py says how the
# exact time follows from python-can's start-time handling). zlib-compressed and stored
# containers, objects split across small containers, a start time in another time zone (the
# header is local time), replay at the recorded speed. Damaged files (truncated, bad zlib, a
# broken object, a bad header) end the run with exit 1 and one clear line, no sanitizer
# report.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
. "$SF_SRC/tests/scripts/importlib.sh"

# import FILE [LOG OPTIONS]: import_file, and the log exported to $WORK/out.blf as well.
import() {
    import_file "$@"
    sf_ok export --format blf -o "$WORK/out.blf" "$IMG" LOG00001.SFL
}

check() {
    local src=$1
    $PY "$FR" cmp blf "$src" candump "$WORK/out.log" || fail "$src: candump export differs"
    $PY "$FR" cmp blf "$src" blf "$WORK/out.blf" || fail "$src: BLF export differs"
}

log "python-can BLF, zlib, 4000-byte containers (objects split across containers)"
$PY "$FR" gen-blf "$WORK/z.blf" -1 4000
import "$WORK/z.blf" --fast
jcheck "$WORK/log.json" 'j["records_offered"] == 3009 and j["bad_input"] == 0'
check "$WORK/z.blf"
grep -q '^(1700000000.123000) can0 123#11223344$' "$WORK/out.log" ||
    fail "first frame not at python-can's start time (header ms + offset)"
log "streamfat's own BLF export replays to the same records"
cp "$WORK/out.log" "$WORK/first.log"
cp "$WORK/out.blf" "$WORK/own.blf"
import "$WORK/own.blf" --fast
diff "$WORK/first.log" "$WORK/out.log" >&2 || fail "BLF export -> import changed frames"

log "python-can BLF, stored (no compression), default and 1000-byte containers"
$PY "$FR" gen-blf "$WORK/u.blf" 0 131072
import "$WORK/u.blf" --fast
check "$WORK/u.blf"
$PY "$FR" gen-blf "$WORK/u1k.blf" 0 1000
import "$WORK/u1k.blf" --fast
check "$WORK/u1k.blf"

log "what python-can does not write: CAN_MESSAGE2, CAN_FD_MESSAGE_64, header v2, 10 us units"
$PY "$FR" gen-vector "$WORK/v.blf"
import "$WORK/v.blf" --fast
cat >"$WORK/v.want" <<'EOF'
(1700000000.123100) can0 555#010203
(1700000000.123200) can1 01234567#R2
(1700000000.123300) can0 18DAF110##5000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F
(1700000000.123400) can0 7E0#R4
(1700000000.123500) can0 123#AABB
(1700000000.123600) can1 100#1122334455667788
(1700000000.123700) can1 01ABCDEF##6000306090C0F1215181B1E2124272A2D30333639
(1700000000.123800) can0 20000080#0000000000000000
(1700000000.123900) can0 7FF#FFFFFFFFFFFFFFFF
EOF
diff "$WORK/v.want" "$WORK/out.log" >&2 || fail "v.blf imported wrongly"
$PY "$FR" cmp blf-vector "$WORK/v.blf" candump "$WORK/out.log" ||
    fail "python-can reads v.blf otherwise"

log "the header's start time is local time (TZ=Europe/Berlin for python-can and us)"
TZ=Europe/Berlin $PY "$FR" gen-blf "$WORK/berlin.blf" -1 131072
TZ=Europe/Berlin import "$WORK/berlin.blf" --fast
TZ=Europe/Berlin $PY "$FR" cmp blf "$WORK/berlin.blf" candump "$WORK/out.log" ||
    fail "berlin.blf: candump export differs"
TZ=Europe/Berlin $PY "$FR" cmp blf "$WORK/berlin.blf" blf "$WORK/out.blf" ||
    fail "berlin.blf: BLF export (local time) differs"
cmp -s "$WORK/z.blf" "$WORK/berlin.blf" && fail "the start time did not change with TZ"

log "the comparison notices a changed byte"
sed 's/\( can0 321##5\)03/\104/' "$WORK/out.log" >"$WORK/bad.log"
cmp -s "$WORK/out.log" "$WORK/bad.log" && fail "test bug: sed changed nothing"
TZ=Europe/Berlin $PY "$FR" cmp blf "$WORK/berlin.blf" candump "$WORK/bad.log" >/dev/null 2>&1 &&
    fail "the comparison does not notice a changed data byte"

log "replay at the recorded speed (41 frames over 0.5 s)"
$PY "$FR" gen-paced "$WORK/p.blf"
import "$WORK/p.blf"
jcheck "$WORK/log.json" '0.45 <= j["seconds"] < 5 and j["records_offered"] == 41'
$PY "$FR" cmp blf "$WORK/p.blf" candump "$WORK/out.log" || fail "paced replay differs"

# ---- damaged files ----------------------------------------------------------------------
# bad_import FILE REGEX: log exits 1 with one line on stderr matching REGEX.
bad_import() {
    local src=$1 re=$2 rc=0
    rm -f "$IMG"
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    sf log --source "file:$src" --fast "$IMG" >/dev/null || rc=$?
    ((rc == 1)) || fail "$src: exit $rc, expected 1"
    grep -Eq "$re" "$SF_LAST_ERR" || fail "$src: no message matching '$re'"
}
# offset of the Nth (from 0) top-level object of a BLF file
obj_at() {
    $PY - "$1" "$2" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
pos = struct.unpack_from("<L", d, 4)[0]
for _ in range(int(sys.argv[2])):
    size = struct.unpack_from("<L", d, pos + 8)[0]
    pos += size + size % 4
assert d[pos:pos + 4] == b"LOBJ"
print(pos)
EOF
}

log "truncated BLF: the frames before the cut are kept, then exit 1"
size=$(stat -c %s "$WORK/z.blf")
head -c $((size * 2 / 3)) "$WORK/z.blf" >"$WORK/trunc.blf"
bad_import "$WORK/trunc.blf" 'BLF: .*truncated'
sf_ok export --format candump -o "$WORK/out.log" "$IMG" LOG00001.SFL
n=$(wc -l <"$WORK/out.log")
((n > 1000 && n < 3009)) || fail "truncated BLF: $n frames logged"
$PY "$FR" cmp blf "$WORK/z.blf" candump "$WORK/out.log" "$n" || fail "truncated BLF: frames differ"

log "bad zlib data in the third container"
cp "$WORK/z.blf" "$WORK/zbad.blf"
off=$(obj_at "$WORK/z.blf" 2)
printf '\x00\x00' | dd of="$WORK/zbad.blf" bs=1 seek=$((off + 32)) conv=notrunc status=none
bad_import "$WORK/zbad.blf" "zbad.blf: BLF: log container at offset $off: bad zlib data"

log "a container cut short in the middle of its zlib stream"
off=$(obj_at "$WORK/z.blf" 1)
head -c $((off + 100)) "$WORK/z.blf" >"$WORK/zcut.blf"
bad_import "$WORK/zcut.blf" "BLF: log container at offset $off truncated"

log "a broken object inside a stored container"
cp "$WORK/u.blf" "$WORK/ubad.blf"
off=$($PY -c 'import sys; d = open(sys.argv[1], "rb").read(); p = 176
for _ in range(20): p = d.index(b"LOBJ", p + 4)
print(p)' "$WORK/u.blf")
printf 'XXXX' | dd of="$WORK/ubad.blf" bs=1 seek="$off" conv=notrunc status=none
bad_import "$WORK/ubad.blf" 'BLF: no object \(LOBJ\)'

log "a file header that is not one"
{ printf 'LOGG\x03\x00\x00\x00'; head -c 200 /dev/zero; } >"$WORK/hdr.blf"
bad_import "$WORK/hdr.blf" 'hdr.blf: BLF: file header size out of range'
printf 'LOGG' >"$WORK/short.blf"
bad_import "$WORK/short.blf" 'short.blf: BLF: file header truncated'
