#!/usr/bin/env bash
# streamfat report at scale (issue 30): peak RSS does not grow with the log (two logs, one
# five times the other); the page stays small (the same few hundred KiB for both, and at
# most 8 MiB for 256 busy channels, the most series a log can have); and the reduction
# keeps extremes: a 1 ms burst in a 100 s log is the maximum of every zoom level's columns,
# exactly as many frames as the burst's bucket holds.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3 /usr/bin/time

# rss NAME ARGS...: report ARGS with the peak RSS (KiB) into $WORK/NAME.rss
rss() {
    local n=$1
    shift
    /usr/bin/time -f '%M' -o "$WORK/$n.rss" "$SF" report "$@" 2>"$WORK/$n.err" ||
        { cat "$WORK/$n.err" >&2; fail "report $* failed"; }
    has_sanitizer_report "$WORK/$n.err" && fail "sanitizer report from report $*"
    cat "$WORK/$n.rss" >&2
}

log "peak RSS at 1 M and 5 M frames"
run_helper mklog "$WORK/small.SFL" 65536 1000000
run_helper mklog "$WORK/big.SFL" 65536 5000000
rss small -o "$WORK/small.html" "$WORK/small.SFL"
rss big -o "$WORK/big.html" "$WORK/big.SFL"
small=$(cat "$WORK/small.rss") big=$(cat "$WORK/big.rss")
# ASan's shadow and quarantine take their share; a log-sized structure would be 5x
((big <= small * 12 / 10 + 8192)) || fail "peak RSS grew with the log: $small KiB -> $big KiB"
s1=$(stat -c %s "$WORK/small.html") s2=$(stat -c %s "$WORK/big.html")
log "pages: $s1 and $s2 bytes"
((s2 <= s1 * 15 / 10 + 65536)) || fail "the page grew with the log: $s1 -> $s2 bytes"

log "256 busy channels: the page stays at most 8 MiB"
sf_ok log --mkfs exfat --size 64M --source gen:can,rate=200,channels=256 --duration 2 \
    "$WORK/many.img" >/dev/null
sf_ok report -o "$WORK/many.html" "$WORK/many.img"
s=$(stat -c %s "$WORK/many.html")
log "256 channels: $s bytes"
((s <= 8 * 1024 * 1024)) || fail "the page of 256 channels is $s bytes (> 8 MiB)"
grep -F '<td class="chname">gen255</td>' "$WORK/many.html" >/dev/null || fail "channel gen255 missing"

log "a 1 ms burst in 100 s survives every zoom level"
python3 - "$WORK/spike.log" <<'PY'
import sys
t0 = 1700000000.0
with open(sys.argv[1], "w") as f:
    for k in range(10000):                    # one frame every 10 ms for 100 s
        t = t0 + k * 0.01
        f.write("(%.6f) can0 123#%016X\n" % (t, k))
        if k == 5000:                         # 500 frames within 1 ms
            for j in range(500):
                f.write("(%.6f) can0 456#%016X\n" % (t + 0.000001 * (j + 1), j))
PY
sf_ok log --mkfs exfat --size 32M --source "file:$WORK/spike.log" --fast "$WORK/spike.img" >/dev/null
sf_ok report -o "$WORK/spike.html" "$WORK/spike.img"
python3 - "$WORK/spike.html" <<'PY' || fail "a zoom level hides the burst"
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="sf-data">(.*?)</script>', html, re.S).group(1))
c = d["chans"][0]
w_ms = d["w"] / 1e6
# the burst's bucket holds its 500 frames and the 10 ms frames in the same bucket
want = 500 + int(w_ms // 10) + 1
levels = c["frames"]                         # columns of [min, max, total]
assert len(levels) >= 3, len(levels)
tops = [max(v for v in lv[1::3] if v is not None) for lv in levels]
print("bucket %.1f ms, level columns %s, maxima %s" % (w_ms, [len(lv) // 3 for lv in levels], tops))
# the totals add up to every frame at every level
assert all(sum(lv[2::3]) == 10500 for lv in levels), [sum(lv[2::3]) for lv in levels]
assert all(t == tops[0] for t in tops), tops
assert 500 <= tops[0] <= want, (tops[0], want)
# and the quiet columns stay quiet: the burst is one column wide at the first level
assert sum(1 for v in levels[0][1::3] if v is not None and v > 100) <= 2
PY
log "ok"
