# Helpers for the cases of the CAN test VM (sourced by guest/init before each case; busybox
# sh, no bash). A case is a shell script in tests/vm/cases run in a fresh directory under
# /tmp; it passes by exiting 0, fails with any other status (say why with fail), skips
# with 77. Nothing here depends on wall-clock speed: every wait is for a condition, with a
# generous limit only so that a broken case ends (the init's per-case timeout is the last
# resort).

# busybox runs its own ip applet before PATH: iproute2's by its path (guest/init)
ip() { /usr/sbin/ip "$@"; }

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
info() { echo "@@INFO $CASE $*"; }

# wait_until LIMIT_S CMD...: run CMD every 50 ms until it succeeds; fail after LIMIT_S
wait_until() {
    local lim=$(( $1 * 20 )) i=0
    shift
    while ! "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -le $lim ] || fail "timed out waiting for: $*"
        usleep 50000
    done
}

# listeners IFACE: how many raw-socket receive filters the kernel holds for IFACE (a
# listener counts once per filter: candump 1 per interface, candump with an error mask 2,
# streamfat log 2: frames and error frames)
listeners() {
    cat /proc/net/can/rcvlist_all /proc/net/can/rcvlist_err 2>/dev/null |
        awk -v d="$1" '$1 == d { n++ } END { print n + 0 }'
}
# wait_listeners IFACE N: until at least N filters are registered on IFACE (start a
# generator only then, or its first frames reach nobody)
wait_listeners() {
    wait_until 60 sh -c "[ \$(awk -v d='$1' '\$1 == d { n++ } END { print n + 0 }' \
        /proc/net/can/rcvlist_all /proc/net/can/rcvlist_err) -ge $2 ]"
}

# ref_frames FILE: candump -L lines as "IFACE ID#DATA" without the time, in order
ref_frames() { awk '{ print $2, $3 }' "$1"; }

# stop_wait PID: SIGINT, then wait for it to exit; the status is left in $rc
stop_wait() {
    kill -INT "$1" 2>/dev/null
    rc=0
    wait "$1" || rc=$?
}

# cpu_ticks PID: user+system clock ticks a live process has used (/proc/PID/stat)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# now_ms: monotonic milliseconds (the uptime clock: for rates only, never for a verdict)
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# ---- streamfat log and its output ------------------------------------------------------
# log_bg ARGS...: `streamfat log ARGS` in the background onto a fresh ./d.img (exFAT, 64 MiB
# in the guest's tmpfs), statistics as JSON in log.json, messages in log.err; its pid in LP
log_bg() {
    rm -f d.img
    streamfat log --mkfs exfat --size 64M --json "$@" d.img > log.json 2> log.err &
    LP=$!
}
# log_stop: SIGINT to the logger and wait; its exit status in LRC
log_stop() {
    kill -INT "$LP" 2>/dev/null
    LRC=0
    wait "$LP" || LRC=$?
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' log.err; then
        cat log.err
        fail "sanitizer report from streamfat log"
    fi
}
# json_u64 KEY: a number from log.json
json_u64() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" log.json; }
# logged_candump OUT: the logged CAN records as candump -L lines (streamfat export)
logged_candump() {
    streamfat export d.img LOG00001.SFL > "$1" 2> export.err || { cat export.err; fail "export failed"; }
}
# logged_records OUT: every record, DROP and ANNOTATION decoded (tests/helpers/log_frames -v)
logged_records() {
    streamfat get d.img LOG00001.SFL log.sfl || fail "get failed"
    log_frames -v log.sfl > "$1" || fail "log_frames: the log does not decode cleanly"
}
# only_iface IFACE FILE: the candump -L lines of one interface
only_iface() { awk -v d="$1" '$2 == d' "$2"; }
# Times in candump -L lines: candump prints the kernel's receive time cut to the microsecond
# (a timeval), export rounds the logged nanoseconds to the nearest microsecond
# (docs/EXPORT.md, Timestamps; python-can's and asammdf's readers show them so). A logged
# time is the kernel's when export's microsecond is candump's or the next one. SAME_FRAME is
# an awk function: the same frame (interface, id, data) at such a time.
# (busybox awk reads a number with a leading 0 as octal: the microseconds lose theirs first)
SAME_FRAME='function us(t, a) { gsub(/[()]/, "", t); split(t, a, "."); sub(/^0+/, "", a[2]); return a[1] * 1000000 + a[2] }
function same_frame(r, g,   d) {
    if (substr(r, index(r, " ")) != substr(g, index(g, " "))) return 0
    d = us(substr(g, 1, index(g, " ") - 1)) - us(substr(r, 1, index(r, " ") - 1))
    return d == 0 || d == 1
}'
# same_lines A B WHAT: candump -L lines of A (candump's) and B (the log's) are the same frames
# at the same times as above, line for line, else fail showing the first difference
same_lines() {
    cmp -s "$1" "$2" && return 0
    if ! awk "$SAME_FRAME"'
        NR == FNR { ref[++n] = $0; next }
        { m++; if (m > n || !same_frame(ref[m], $0)) { print "line " m ": " ref[m] " | " $0; bad = 1; exit } }
        END { if (!bad && m != n) { print "lines: " n " against " m; bad = 1 } exit bad }' "$1" "$2"; then
        echo "--- $1 ($(wc -l < "$1") lines) vs $2 ($(wc -l < "$2") lines)"
        diff "$1" "$2" | head -20
        fail "$3"
    fi
}
# The SJA1000 receive overrun as candump -L shows it: CAN_ERR_CRTL (Debian 6.1's sja1000 adds
# CAN_ERR_CNT: 0x204), data[1] CAN_ERR_CRTL_RX_OVERFLOW (grep -E)
OVERRUN_RE=' 20000(0|2)04#..01'
# overrun_in FILE: a candump -L file holds such an error frame
overrun_in() { grep -qE "$OVERRUN_RE" "$1"; }
# marker IFACE ID: send a last frame ID#AA55AA55 from IFACE (a card the loggers do not read)
marker() { cansend "$1" "$2#AA55AA55"; }
# wait_seen FILE IFACE ID: until a candump -L FILE holds the marker frame on IFACE (frames
# of one interface arrive in order: everything sent before it has been received then)
wait_seen() {
    wait_until 120 sh -c "awk -v d='$2' -v f='$3#AA55AA55' '\$2 == d && \$3 == f { ok = 1 } END { exit !ok }' '$1'"
}
# candump_bg OUT IFACE...: candump -L with a large buffer and error frames on each IFACE
# (the reference every logged frame is compared with); pid in CP
candump_bg() {
    local out=$1 a=""
    shift
    for i in "$@"; do
        a="$a $i,0:0,#FFFFFFFF"
    done
    candump -L -d -r 8000000 $a > "$out" 2> candump.err &
    CP=$!
}
