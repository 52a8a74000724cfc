#!/usr/bin/env bash
# streamfat log --source file:PATH refuses a PATH that is not a regular file (a FIFO with a
# writer that writes an ASC or candump log slowly, a FIFO with no writer, a character
# device) with one line on stderr and exit status 1, before it opens it, and without logging
# anything. The file: source reads its file twice (channel names, then the replay); it used to
# read a FIFO up in the prescan and then wait in the replay's open for a writer that never
# came, until killed (and then printed "Interrupted system call"). Every run here has a
# timeout: a hang fails the test.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool mkfifo timeout

IMG=$FASTWORK/f.img
SF_TIMEOUT=20
sf_ok mkfs -q -t exfat -s 32M "$IMG"

cat >"$WORK/a.asc" <<'ASC'
date Tue Dec 01 07:14:02.123 PM 2026
base hex  timestamps absolute
internal events logged
Begin Triggerblock Tue Dec 01 07:14:02.123 PM 2026
   0.000000 Start of measurement
   0.010000 1  123             Rx   d 2 11 22
   0.020000 1  124             Rx   d 2 11 22
End TriggerBlock
ASC
printf '(0.000000) can0 123#1122\n(0.010000) can0 124#1122\n' >"$WORK/a.log"

# refused PATH: the run ends at once with exit 1 and exactly one line naming PATH (besides
# notes such as tmpfs's "O_DIRECT ... using buffered I/O").
refused() {
    local path=$1 n
    sf_err 1 log --fast --source "file:$path" "$IMG"
    n=$(grep -vc ': note: ' "$SF_LAST_ERR" || true)
    ((n == 1)) || fail "file:$path: $n lines on stderr, expected 1"
    grep -qF "$path: not a regular file" "$SF_LAST_ERR" ||
        fail "file:$path: not the 'not a regular file' message"
}

# slow_writer FIFO FILE: FILE's lines into FIFO, one per 0.2 s, in the background.
slow_writer() {
    (while IFS= read -r l; do printf '%s\n' "$l"; sleep 0.2; done <"$2" >"$1") &
    on_exit "kill $! 2>/dev/null"
}

log "a FIFO fed an ASC log slowly"
mkfifo "$WORK/p.asc"
slow_writer "$WORK/p.asc" "$WORK/a.asc"
refused "$WORK/p.asc"

log "a FIFO fed a candump log slowly"
mkfifo "$WORK/p.log"
slow_writer "$WORK/p.log" "$WORK/a.log"
refused "$WORK/p.log"

log "a FIFO nobody writes"
mkfifo "$WORK/q.asc"
refused "$WORK/q.asc"

log "a character device"
refused /dev/null

log "nothing was logged"
sf_ok ls "$IMG" >"$WORK/ls.txt"
if grep -q 'SFL' "$WORK/ls.txt"; then
    cat "$WORK/ls.txt" >&2
    fail "a refused source left a log file"
fi

log "the same logs as regular files replay"
sf_ok log --fast --source "file:$WORK/a.asc" "$IMG"
sf_ok log --fast --source "file:$WORK/a.log" "$IMG"
sf_ok ls "$IMG" >"$WORK/ls.txt"
n=$(grep -c 'SFL' "$WORK/ls.txt" || true)
((n == 2)) || { cat "$WORK/ls.txt" >&2; fail "$n log files after two replays, expected 2"; }
