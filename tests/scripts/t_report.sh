#!/usr/bin/env bash
# streamfat report (issue 30), checked as a person would: reports of the demo volume, a
# latency: log and a damaged log are rendered in headless Chromium, which must log no
# console message at all (a JavaScript error is one); the screenshots are not blank and show
# the charts' colours (png_stats.py: the canvases were drawn); the DOM after the script ran
# (--dump-dom) carries the channel names, the busiest id, the DROP count, the latency
# figures and the damage; zoom, pan, hover, reset and sorting work with the mouse (the
# page's #sf-selftest: synthetic events, verdicts in the DOM); the HTML names no URL the browser would fetch (no "http" outside
# an xmlns attribute, no src= or href= at all) and `tidy -e` finds neither an error nor a
# warning. The harness is shown to catch a page with a JavaScript error.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool chromium tidy python3

# render NAME [HEIGHT]: NAME.html -> NAME.png (a screenshot 1000 pixels wide), NAME.dom (the
# DOM after the script ran); fails on any console message (Chromium logs uncaught errors and
# console.* as CONSOLE).
render() {
    local n=$1 h=${2:-1600} mode
    for mode in screenshot dom; do
        local args=(--screenshot="$WORK/$n.png" --window-size=1000,"$h")
        [[ $mode == dom ]] && args=(--dump-dom)
        timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --enable-logging=stderr --v=0 --user-data-dir="$WORK/chromium-$n-$mode" \
            "${args[@]}" "file://$WORK/$n.html" </dev/null >"$WORK/$n.$mode.out" \
            2>"$WORK/$n.$mode.log" || { cat "$WORK/$n.$mode.log" >&2; fail "$n: chromium failed"; }
        if grep ':CONSOLE' "$WORK/$n.$mode.log" >&2; then
            fail "$n: the page logged to the console (above): a JavaScript error"
        fi
    done
    mv "$WORK/$n.dom.out" "$WORK/$n.dom"
    [[ -s $WORK/$n.png ]] || fail "$n: no screenshot"
    matches '<canvas' "$WORK/$n.dom" || fail "$n: the script drew no chart (no canvas in the DOM)"
}

# static NAME: the HTML file on its own: nothing to fetch, valid for tidy.
static() {
    local f=$WORK/$1.html
    if grep -o '.\{0,20\}http.\{0,40\}' "$f" | grep -v 'xmlns' >&2; then
        fail "$1: 'http' outside xmlns (above)"
    fi
    if grep -oiE '(src|href|@import|url\()[^>]{0,40}' "$f" >&2; then
        fail "$1: a reference the browser would follow (above)"
    fi
    timeout 60 tidy -e -q "$f" </dev/null >&2 2>"$WORK/$1.tidy" || {
        cat "$WORK/$1.tidy" >&2
        fail "$1: tidy -e found errors or warnings"
    }
}

# selftest NAME: the page's own mouse test (#sf-selftest in report.js: synthetic wheel,
# drag, hover, double-click and a click on a column head) passes, with no console message.
selftest() {
    local n=$1 v
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --enable-logging=stderr --v=0 --user-data-dir="$WORK/chromium-$n-self" \
        --window-size=1000,1600 --dump-dom "file://$WORK/$n.html#sf-selftest" </dev/null \
        >"$WORK/$n.self" 2>"$WORK/$n.self.log" || { cat "$WORK/$n.self.log" >&2; fail "$n: chromium failed"; }
    if grep ':CONSOLE' "$WORK/$n.self.log" >&2; then
        fail "$n: the self-test logged to the console (above)"
    fi
    sed -n '/<pre id="sf-selftest">/,/<\/pre>/p' "$WORK/$n.self" >&2
    for v in '<pre id="sf-selftest">zoom ok$' '^pan ok$' '^hover ok: .*frames/s' '^reset ok$' \
             '^sort ok</pre>$'; do
        grep -E -- "$v" "$WORK/$n.self" >/dev/null || fail "$n: self-test: no '$v'"
    done
}

# has NAME TEXT...: the rendered DOM holds each TEXT.
has() {
    local n=$1 t
    shift
    for t in "$@"; do
        grep -F -- "$t" "$WORK/$n.dom" >/dev/null || fail "$n: '$t' not in the rendered page"
    done
}

log "the harness catches a JavaScript error"
printf '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>x</title></head><body><canvas></canvas><script>undefinedFunction();</script></body></html>\n' >"$WORK/broken.html"
if (render broken) 2>/dev/null; then
    fail "render did not notice the JavaScript error of broken.html"
fi

log "the demo volume"
sf_ok demo -o "$WORK/demo.img" >/dev/null
sf_ok report -o "$WORK/demo.html" "$WORK/demo.img"
lost=0
for f in $(sf_ok ls "$WORK/demo.img" | awk '/SFL/ {print $NF}'); do
    sf_ok export -o /dev/null "$WORK/demo.img" "$f"
    n=$(sed -n 's/.*accounting for \([0-9]*\) lost.*/\1/p' "$SF_LAST_ERR")
    lost=$((lost + ${n:-0}))
done
((lost > 0)) || fail "the demo lost nothing: its DROP accounting is what this checks"
busiest=$(for f in $(sf_ok ls "$WORK/demo.img" | awk '/SFL/ {print $NF}'); do
              sf_ok export "$WORK/demo.img" "$f"; done |
          awk '{split($3, a, "#"); print a[1]}' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
static demo
render demo
python3 "$SF_SRC/tests/scripts/png_stats.py" "$WORK/demo.png" 78,121,167 >&2 ||
    fail "demo: the screenshot is blank or has no chart"
selftest demo
nfiles=$(sf_ok ls "$WORK/demo.img" | grep -c 'SFL')
rot=$((nfiles - 1))
[[ $rot == 1 ]] && rot="1 rotation" || rot="$rot rotations"
[[ $nfiles == 1 ]] && fw="1 file" || fw="$nfiles files"
has demo "can0" "$lost records lost" ">$busiest<" "$fw in 1 session ($rot)" \
    "frames/s" "Busiest ids"

log "a latency: log"
sf_ok log --mkfs exfat --size 32M --source latency:1ms --duration 1 "$WORK/lat.img" >/dev/null
sf_ok report -o "$WORK/lat.html" "$WORK/lat.img"
maxl=$(sf_ok export -f csv-wide "$WORK/lat.img" LOG00001.SFL |
       awk -F, 'NR > 1 && $2 > m {m = $2} END {printf "%.3f", m / 1000}')
static lat
render lat 2400
python3 "$SF_SRC/tests/scripts/png_stats.py" "$WORK/lat.png" 225,87,89 >&2 ||
    fail "lat: the screenshot is blank or has no latency chart"
has lat "Latency: latency" "Worst latency events" "<td>$maxl</td>" "p99.9" "Histogram"

log "a damaged log"
run_helper mklog "$WORK/dmg.SFL" 4096 20000
# two blocks with bad CRCs: the report names them and shows the rest
printf '\xff\xff\xff\xff' | dd of="$WORK/dmg.SFL" bs=1 seek=$((4096 * 5 + 100)) conv=notrunc status=none
printf '\xff\xff\xff\xff' | dd of="$WORK/dmg.SFL" bs=1 seek=$((4096 * 30 + 100)) conv=notrunc status=none
sf_err 1 report -o "$WORK/dmg.html" "$WORK/dmg.SFL"
matches 'damaged: invalid 2 (the report shows the rest)' "$SF_LAST_ERR" ||
    fail "the damage is not summed up on stderr"
static dmg
render dmg
python3 "$SF_SRC/tests/scripts/png_stats.py" "$WORK/dmg.png" 78,121,167 >&2 ||
    fail "dmg: the screenshot is blank"
has dmg "2 blocks in 2 places" "block 5: CRC mismatch" "block 30: CRC mismatch" "can0" \
    "vcan1" "invalid 2"
log "ok"
