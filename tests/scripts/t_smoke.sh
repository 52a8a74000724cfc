#!/usr/bin/env bash
# Smoke test for the edit loop (make test-quick, ctest -L quick): every subcommand of the CLI
# once, on small images, in a few seconds. Each step checks its result, not only the exit
# status: mkfs (exFAT and FAT16) then info names the type; mkdir, put, ls, cat and get give
# back the bytes put; rm removes; fsck calls the volumes clean; log records generated CAN
# frames and export decodes as many candump lines as log reports; plan answers for a rate;
# bench writes an image; bad usage exits 2. demo has its own quick test (t_demo, also
# labelled quick). The thorough tests of each command are the other t_*.sh (make check).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

mkpattern "$WORK/data.bin" 70001 smoke
for t in exfat fat16; do
    img=$WORK/$t.img
    sf_ok mkfs -q -t "$t" -s 8M "$img"
    sf_ok info "$img" >"$WORK/info"
    grep -qi "${t%16}" "$WORK/info" || fail "$t: info does not name the file system"
    sf_ok mkdir "$img" dir
    sf_ok put "$img" "$WORK/data.bin" dir/data.bin
    sf_ok ls "$img" dir >"$WORK/ls"
    grep -qx 'data.bin' "$WORK/ls" || fail "$t: ls dir does not list data.bin"
    sf_ok cat "$img" dir/data.bin | cmp -s - "$WORK/data.bin" || fail "$t: cat differs"
    sf_ok get "$img" dir/data.bin "$WORK/got.$t"
    cmp -s "$WORK/got.$t" "$WORK/data.bin" || fail "$t: get differs"
    sf_ok fsck "$img" >/dev/null
    sf_ok rm "$img" dir/data.bin
    sf_ok ls "$img" dir >"$WORK/ls"
    ! grep -q 'data.bin' "$WORK/ls" || fail "$t: rm left data.bin"
    sf_ok fsck "$img" >/dev/null
    log "$t: mkfs info mkdir put ls cat get rm fsck"
done

img=$WORK/log.img
sf_ok log -q --mkfs exfat --size 16M --source gen:can --max-records 500 "$img"
sf_ok ls "$img" >"$WORK/ls"
f=$(grep -m1 -i '\.sfl$' "$WORK/ls") || fail "log: no .SFL file on the volume"
sf_ok export "$img" "$f" >"$WORK/frames"
n=$(wc -l <"$WORK/frames")
((n == 500)) || fail "export: $n candump lines, log was asked for 500 records"
grep -qE '^\([0-9]+\.[0-9]{6}\) [a-z0-9]+ [0-9A-F]+#' "$WORK/frames" ||
    fail "export: not candump -L lines: $(head -n1 "$WORK/frames")"
sf_ok fsck "$img" >/dev/null
log "log + export: $n frames"

sf_ok plan --rate 1MB/s --capacity 64GB >"$WORK/plan"
grep -qi 'fill' "$WORK/plan" || fail "plan: no fill time in: $(head -n3 "$WORK/plan")"
truncate -s 8M "$WORK/bench.img"
sf_ok bench --bs 64K --qd 2 "$WORK/bench.img" >"$WORK/bench"
grep -qiE 'MB/s' "$WORK/bench" || fail "bench: no speed in: $(head -n3 "$WORK/bench")"
log "plan, bench"

sf_err 2 ls
sf_err 2 nosuchcommand
echo "PASS: every command once"
