#!/bin/bash
# Process crash: `streamfat log --source gen:can` killed with SIGKILL at a (seeded) random
# moment, three times per volume (each session numbers its files after the last one's),
# on exFAT and FAT32. After each kill: `streamfat fsck --repair` repairs (exit 0 or 1),
# `streamfat fsck` then says clean, the independent checker (fsck.exfat -n / fsck.fat -n)
# says clean, and every log file exports (`streamfat export`) with its frames in order:
# per session the serials k of gen:can run 0, 1, 2 ... without a gap or a repeat across the
# session's files (everything the killed writer had written, the blocks past the last
# checkpoint re-attached by the repair, is there; nothing is invented or duplicated).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool python3
RANDOM=4242     # seeded: the kill moments repeat from run to run

check_frames() {    # IMG FIRST_FILE_NUMBER: export files from that number on, one session
    local img=$1 first=$2 out=$WORK/frames.txt
    : >"$out"
    local names
    names=$(sf ls "$img" | grep -E '^LOG[0-9]{5}\.SFL$' | sort) || true
    local n=0 name
    for name in $names; do
        local num=$((10#${name:3:5}))
        ((num >= first)) || continue
        sf_ok export -o "$WORK/one.log" "$img" "$name"
        cat "$WORK/one.log" >>"$out"
        n=$((n + 1))
    done
    ((n > 0)) || fail "$img: no log file from number $first"
    python3 - "$out" <<'PY' || fail "$img: frames out of order (session from file $first)"
import sys
k_expect = 0
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) < 3 or '#' not in parts[2]:
        continue
    cid, data = parts[2].split('#', 1)
    k = int.from_bytes(bytes.fromhex(data), 'little')
    if k != k_expect or int(cid, 16) != 0x100 + k % 16:
        print(f"frame {k} (id {cid}) where {k_expect} was due", file=sys.stderr)
        sys.exit(1)
    k_expect += 1
if k_expect == 0:
    print("no frames", file=sys.stderr)
    sys.exit(1)
print(f"{k_expect} frames in order", file=sys.stderr)
PY
}

for fs in exfat fat32; do
    img=$WORK/$fs.img
    sf_ok mkfs -t "$fs" -s 64M "$img" >/dev/null
    first=1
    for round in 1 2 3; do
        delay_ms=$((700 + RANDOM % 1500))
        "$SF" log --source gen:can,rate=20000 --split-size 1M --sync-interval 100ms -q \
            --no-direct "$img" 2>"$WORK/log.err" &
        pid=$!
        sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
        kill -KILL "$pid" 2>/dev/null || fail "$fs round $round: the logger ended before the kill"
        wait "$pid" 2>/dev/null || true
        has_sanitizer_report "$WORK/log.err" && { cat "$WORK/log.err" >&2; fail "sanitizer"; }
        log "$fs round $round: killed after ${delay_ms} ms"
        rc=0
        sf fsck --repair "$img" >"$WORK/fsck.out" || rc=$?
        cat "$WORK/fsck.out" >&2
        ((rc == 0 || rc == 1)) || fail "$fs round $round: fsck --repair exit $rc"
        sf_ok fsck "$img" >/dev/null
        if [[ $fs == exfat ]]; then
            command -v fsck.exfat >/dev/null && run_fsck_exfat "$img"
        else
            command -v fsck.fat >/dev/null && run_fsck_fat "$img"
        fi
        check_frames "$img" "$first"
        # The next session numbers its files after the highest one there.
        last=$(sf ls "$img" | grep -E '^LOG[0-9]{5}\.SFL$' | sort | tail -1)
        first=$((10#${last:3:5} + 1))
    done
done
