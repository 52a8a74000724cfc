#!/bin/bash
# Rotation by size and by time, cyclic deletion on a small volume, the flight recorder
# (SIGUSR1 and a CAN id rule, pre and post windows), SIGINT / SIGTERM in the middle of a
# run, FAT32: each followed by the decoder's check and fsck -n. Every run's --json output is
# parsed with python3.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool fsck.exfat python3 awk

# run_bg OUT ARGS...: `$SF log --json ARGS` in the background; PID in $BG.
run_bg() {
    local out=$1
    shift
    "$SF" log --json "$@" >"$out" 2>"$out.err" &     # no timeout(1): it would take the signals
    BG=$!
    on_exit "kill -9 $BG"
    ( sleep 120; kill -9 "$BG" ) >/dev/null 2>&1 &
    on_exit "kill $!"
}
# wait_for WHAT CMD...: run CMD every 0.1 s until it succeeds; fail when the background run
# ($BG) ended first or after 30 s. The waits below are for what the checks need (the log
# running, a file rotated or a trigger taken), not for a time that a loaded machine overruns.
wait_for() {
    local what=$1 i
    shift
    for ((i = 0; i < 300; i++)); do
        "$@" && return 0
        kill -0 "$BG" 2>/dev/null || fail "the run ended before: $what"
        sleep 0.1
    done
    fail "not within 30 s: $what"
}
# logging: the background run has started its writer and producer threads (after its signal
# handlers, the mount and the log's first file).
logging() { (($(ls "/proc/$BG/task" 2>/dev/null | wc -l) >= 3)); }
# has_data NAME: the image (read while the run writes it) lists NAME with a size above 0 (a
# flight recorder's next file exists, empty, before its trigger; its size is set when it is
# closed after the post window or at a checkpoint).
has_data() {
    timeout 30 "$SF" ls -l "$IMG" 2>/dev/null | awk -v f="$1" '$1 == "file" && $NF == f && $2 > 0 { ok = 1 } END { exit !ok }'
}
# has_bytes N: the files on the image (their sizes as of the last checkpoint) hold N bytes.
has_bytes() {
    timeout 30 "$SF" ls -l "$IMG" 2>/dev/null | awk -v n="$1" '$1 == "file" { s += $2 } END { exit !(s >= n) }'
}
# signal SIG: send it to the background run, which must still be running.
signal() { kill -"$1" "$BG" 2>/dev/null || fail "SIG$1: the run had already ended"; }
wait_bg() {
    local rc=0
    wait "$BG" || rc=$?
    [[ -s $1.err ]] && cat "$1.err" >&2
    has_sanitizer_report "$1.err" && fail "sanitizer report from streamfat log"
    return "$rc"
}

log "split by size: 100,000 frames/s for 2 s into 256 KiB files"
IMG=$WORK/size.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 128M "$IMG"
log_json "$WORK/size.json" --source gen:can,rate=100000 --duration 2 --split-size 256K --chunk 4K "$IMG" ||
    fail "split-size run failed"
jcheck "$WORK/size.json" 'j["files"] >= 20 and j["records_dropped"] == 0'
decode "$IMG" --gen 1 --clean --expect-frames "$(jget "$WORK/size.json" records_in)"
jcheck "$WORK/dec.json" "j['files'] == $(jget "$WORK/size.json" files) and j['file_bytes'] <= j['files'] * 262144"
jcheck "$WORK/dec.json" 'all(n == "LOG%05d.SFL" % (i + 1) for i, n in enumerate(j["names"]))'
run_fsck_exfat "$IMG"

log "a second run on the same volume numbers its files after the highest one"
log_json "$WORK/size2.json" --source gen:can,rate=1000 --duration 0.5 "$IMG" || fail "second run failed"
F1=$(jget "$WORK/size.json" files)
sf_ok ls "$IMG" >"$WORK/ls.txt"
grep -q "LOG$(printf %05d $((F1 + 1))).SFL" "$WORK/ls.txt" || { cat "$WORK/ls.txt" >&2; fail "numbering did not continue"; }
run_fsck_exfat "$IMG"

log "split by time: every 500 ms for 2.2 s, in a directory, --name pattern"
# On tmpfs where there is one: a split by time is on the writer's clock, and a checkpoint
# that the shared disk stalls for a second (seen under load) delays the rotation behind it,
# leaving 2 or 3 files where 4 to 6 are due.
IMG=$FASTWORK/time.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/time.json" --source gen:can,rate=20000 --duration 2.2 --split-time 500ms --dir logs/can --name 'T%Y_%n.SFL' "$IMG" ||
    fail "split-time run failed"
jcheck "$WORK/time.json" '4 <= j["files"] <= 6'
decode "$IMG" --dir logs/can --gen 1 --clean --expect-frames "$(jget "$WORK/time.json" records_in)"
jcheck "$WORK/dec.json" 'all(n.startswith("T2") and n.endswith(".SFL") for n in j["names"])'
run_fsck_exfat "$IMG"

log "cyclic: 24 MB of frames on a 16 MiB volume"
IMG=$WORK/cyclic.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 16M "$IMG"
# A fixed number of records (750,000 of 32 bytes: 24 MB, about 2.5 s), not a duration that a
# slow start would eat into.
log_json "$WORK/cyc.json" --source gen:can,rate=300000 --max-records 750000 --split-size 1M --cyclic "$IMG" ||
    fail "cyclic run failed"
cat "$WORK/cyc.json" >&2
jcheck "$WORK/cyc.json" 'j["records_in"] == 750000 and j["files_deleted"] >= 5 and j["records_dropped"] == 0 and j["bytes_written"] > 16 * 2**20'
decode "$IMG" --gen 1 --clean --start-any
jcheck "$WORK/dec.json" "j['files'] == $(jget "$WORK/cyc.json" files) - $(jget "$WORK/cyc.json" files_deleted)"
run_fsck_exfat "$IMG"

log "flight recorder: --pre 500ms --post 300ms, two SIGUSR1"
IMG=$WORK/fr.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
# The windows are times of the records (10,000 a second, paced): the sleeps are the pre
# windows filling, each counted from a condition (the log running, the previous trigger's
# file closed on the image); the run ends by SIGINT once the second file is closed
# (--duration 60 only bounds it), so no signal can come too late.
run_bg "$WORK/fr.json" --source gen:can,rate=10000 --pre 500ms --post 300ms --duration 60 "$IMG"
wait_for "the log running" logging
sleep 0.8                                   # the pre window filled
signal USR1
wait_for "the first trigger's file closed" has_data LOG00001.SFL
sleep 0.8                                   # a new pre window filled
signal USR1
wait_for "the second trigger's file closed" has_data LOG00002.SFL
signal INT
wait_bg "$WORK/fr.json" || fail "flight recorder run failed"
cat "$WORK/fr.json" >&2
jcheck "$WORK/fr.json" 'j["triggers"] == 2 and j["files"] == 2 and j["records_dropped"] == 0'
decode "$IMG" --gen 1 --clean --windows
cat "$WORK/dec.json" >&2
# each file: about 0.5 s before and 0.3 s after its trigger at 10,000 frames/s
jcheck "$WORK/dec.json" 'j["files"] == 2 and 2 * 5000 <= j["frames"] <= 2 * 11000 and j["annotations"] >= 2'
run_fsck_exfat "$IMG"

log "flight recorder: a CAN id rule, live candump lines on stdin"
IMG=$WORK/rule.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
python3 - <<'PY' | "$SF" log --json --source stdin --chunk 4K --pre 500ms --post 300ms --trigger can:7DF/7FF "$IMG" >"$WORK/rule.json" 2>"$WORK/rule.err" || { cat "$WORK/rule.err" >&2; fail "rule run failed"; }
import sys, time
t0 = time.monotonic()
for i in range(3000):                     # 3 s at 1 kHz; one 0x7DF at 1.5 s
    while time.monotonic() < t0 + i / 1000.0:
        time.sleep(0.0002)
    cid = "7DF" if i == 1500 else "%03X" % (0x200 + i % 4)
    t = time.time()
    sys.stdout.write("(%.6f) can0 %s#%02X%02X\n" % (t, cid, i & 255, i >> 8))
    sys.stdout.flush()
PY
has_sanitizer_report "$WORK/rule.err" && fail "sanitizer report"
cat "$WORK/rule.json" >&2
jcheck "$WORK/rule.json" 'j["triggers"] == 1 and j["files"] == 1 and j["records_offered"] == 3001 and j["rules_fired"] == 1'
decode "$IMG" --clean --candump "$WORK/rule.out"
grep -q ' 7DF#' "$WORK/rule.out" || fail "the trigger frame is not in the trigger file"
N=$(wc -l <"$WORK/rule.out")
((N >= 600 && N <= 1200)) || fail "trigger file holds $N frames, expected about 800"
python3 - "$WORK/rule.out" <<'PY' || fail "trigger file is not one gap-free window around the trigger"
import sys
seq = [int(l.split()[2].split("#")[1][2:4] + l.split()[2].split("#")[1][0:2], 16) for l in open(sys.argv[1])]
assert seq == list(range(seq[0], seq[0] + len(seq))), "gap"
assert seq[0] <= 1500 - 400 and seq[-1] >= 1500 + 200, (seq[0], seq[-1])
PY
run_fsck_exfat "$IMG"

log "file: replay keeps the original timestamps (--fast, and at the recorded speed)"
python3 - "$WORK/replay.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(3000):
        f.write("(%010d.%06d) can0 %03X#%02X%02X\n" % (1600000000 + i // 1000, (i % 1000) * 1000, 0x300 + i % 8, i & 255, i >> 8))
PY
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/replay.json" --source "file:$WORK/replay.log" --fast "$IMG" || fail "replay failed"
decode "$IMG" --clean --candump "$WORK/replay.out"
cmp "$WORK/replay.log" "$WORK/replay.out" || { diff "$WORK/replay.log" "$WORK/replay.out" | head >&2; fail "replayed frames or timestamps differ"; }
head -n 500 "$WORK/replay.log" >"$WORK/replay500.log"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/replay2.json" --source "file:$WORK/replay500.log" "$IMG" || fail "paced replay failed"
jcheck "$WORK/replay2.json" '0.45 <= j["seconds"] < 5 and j["records_offered"] == 500'
decode "$IMG" --clean --candump "$WORK/replay2.out"
cmp "$WORK/replay500.log" "$WORK/replay2.out" || fail "paced replay differs"

for sig in INT TERM; do
    log "SIG$sig in the middle of a run: drain, checkpoint, close, unmount"
    IMG=$WORK/sig.img
    rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 128M "$IMG"
    run_bg "$WORK/sig.json" --source gen:can,rate=200000 --duration 60 --split-size 4M "$IMG"
    # 4,000,000 bytes checkpointed: more than 120,000 records of 32 bytes
    wait_for "4 MB logged" has_bytes 4000000
    signal "$sig"
    t0=$SECONDS
    wait_bg "$WORK/sig.json" || fail "SIG$sig: exit status $?"
    ((SECONDS - t0 < 10)) || fail "SIG$sig: took $((SECONDS - t0)) s to stop"
    jcheck "$WORK/sig.json" 'j["records_dropped"] == 0 and j["records_in"] > 100000 and j["seconds"] < 10'
    decode "$IMG" --gen 1 --clean --expect-frames "$(jget "$WORK/sig.json" records_in)"
    run_fsck_exfat "$IMG"
done

log "FAT32: rotation by size, fsck.fat -n"
if command -v fsck.fat >/dev/null && "$SF" mkfs -q -t fat32 -s 128M "$WORK/fat.img" 2>/dev/null; then
    log_json "$WORK/fat.json" --source gen:can,rate=100000 --duration 1.5 --split-size 1M "$WORK/fat.img" ||
        fail "FAT32 run failed"
    jcheck "$WORK/fat.json" 'j["files"] >= 4 and j["records_dropped"] == 0'
    decode "$WORK/fat.img" --gen 1 --clean --expect-frames "$(jget "$WORK/fat.json" records_in)"
    out=$(timeout 120 fsck.fat -n "$WORK/fat.img" </dev/null 2>&1) || { echo "$out" >&2; fail "fsck.fat -n failed"; }
    ! grep -qiE 'differ|lost|invalid|wrong|free cluster' <<<"$out" || { echo "$out" >&2; fail "fsck.fat -n reports problems"; }
    log "mkfs --mkfs fat32 through log itself"
    log_json "$WORK/fat2.json" --mkfs fat32 --force --source gen:can,rate=1000 --max-records 500 "$WORK/fat.img" ||
        fail "--mkfs fat32 run failed"
    decode "$WORK/fat.img" --gen 1 --clean --expect-frames 500
    jcheck "$WORK/dec.json" 'j["files"] == 1'
else
    log "FAT32 not available (streamfat mkfs -t fat32 failed): skipped that part"
fi
