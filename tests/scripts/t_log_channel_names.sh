#!/bin/bash
# Issue 15 item 4: every file of a rotated log names every channel it uses, before using
# it (docs/FORMAT.md "Channel names"). stdin learns interface names as they appear; after a
# rotation the next file must still name them (they came out as can2 before). With 512-byte
# blocks 256 names do not fit in a header block: the writer continues them in the record
# blocks right after it. file: replays (names known at the start, in every header) are
# checked the same way with 256 interfaces and 512-byte blocks (refused at open before), and
# gen:can with 40 channels (names given at open, the mechanism of can:, udp: and canpair:).
# Each file is exported on its own; the exports put together must equal the input.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3
have_export || skip "no export command"

IMG=$WORK/ch.img

# export_each OUT: every LOGnnnnn.SFL of $IMG exported alone, concatenated in order into OUT;
# prints the number of files.
export_each() {
    local out=$1 f n=0
    : >"$out"
    for f in $(sf_ok ls "$IMG" | grep -E '^LOG[0-9]+\.SFL$' | sort); do
        sf_ok export --format candump "$IMG" "$f" >>"$out"
        n=$((n + 1))
    done
    echo "$n"
}

# gen OUT NIFACE NLINES: candump lines with times in order; interface k appears first at
# line k (so some appear only in later files); names unlike any fallback (canN).
gen() {
    python3 - "$@" <<'PY'
import sys
out, nif, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(out, "w") as f:
    for i in range(n):
        k = i if i < nif else (i * 7) % nif
        if i == n - 5:
            k = nif - 1                       # the last interface again, late
        f.write("(1700000000.%06d) bus_%s_%d %03X#%02X\n" % (i, "ab"[k % 2], k, i % 0x800, i % 256))
PY
}

check_files() {   # WANT LABEL MINFILES
    local want=$1 label=$2 min=$3 n
    n=$(export_each "$WORK/got.log")
    ((n >= min)) || fail "$label: $n files, expected at least $min (rotation)"
    if ! cmp -s "$want" "$WORK/got.log"; then
        diff "$want" "$WORK/got.log" >"$WORK/diff" || true
        head -5 "$WORK/diff" >&2
        fail "$label: the files' exports differ from the input (a channel unnamed in a later file?)"
    fi
    log "$label: $n files, every line with its interface name"
}

log "stdin, 8 interfaces (two new in the last files), 512-byte blocks, 16K files"
python3 - "$WORK/in8.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(4000):
        k = i % 6 if i < 3000 else i % 8      # vcan6 and vcan7 appear only after line 3000
        f.write("(1700000000.%06d) vcan%d %03X#%02X\n" % (i, k, i % 0x800, i % 256))
PY
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source stdin --chunk 512 --split-size 16K "$IMG" <"$WORK/in8.log"
check_files "$WORK/in8.log" "stdin, 8 interfaces" 4

log "stdin, 256 interfaces: names beyond the header block, 512-byte blocks, 16K files"
gen "$WORK/in256.log" 256 5000
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source stdin --chunk 512 --split-size 16K "$IMG" <"$WORK/in256.log"
check_files "$WORK/in256.log" "stdin, 256 interfaces" 4

log "stdin, 256 interfaces, 4K blocks, 64K files"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source stdin --chunk 4K --split-size 64K "$IMG" <"$WORK/in256.log"
check_files "$WORK/in256.log" "stdin 4K blocks" 2

log "file: candump replay, 256 interfaces known at the start, 512-byte blocks, 16K files"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source "file:$WORK/in256.log" --fast --chunk 512 --split-size 16K "$IMG"
check_files "$WORK/in256.log" "file: replay" 4

log "gen:can,channels=40: names known at the start, 40 do not fit a 512-byte header block"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source gen:can,channels=40 --max-records 8000 --chunk 512 --split-size 16K "$IMG"
n=$(export_each "$WORK/gen.log")
((n >= 4)) || fail "gen:can: $n files, expected at least 4"
bad=$(awk '$2 !~ /^gen([0-9]|[1-3][0-9])$/' "$WORK/gen.log" | head -3)
[[ -z $bad ]] || fail "gen:can: frames without their channel's name: $bad"
[[ $(wc -l <"$WORK/gen.log") -eq 8000 ]] || fail "gen:can: $(wc -l <"$WORK/gen.log") frames, expected 8000"
log "gen:can: $n files, every frame named gen0..gen39"
