#!/usr/bin/env bash
# streamfat report --dbc (issue 30): DBC signals plotted against time, decoded by the Python
# package (python -m streamfat signals: the library's block decoder, cantools' model, the C
# bit extraction of streamfat._dbc), one panel each on the shared time axis with its unit.
# Checked: the signals named (--signal) or, by default, the varying ones of the busiest
# messages (a constant one left out); units in the page; a one-frame spike is the maximum at
# every zoom level; the page renders in headless Chromium without a console message, not
# blank, with the panels' titles made by the script; a --signal the DBC lacks is wrong
# usage (exit 2), nothing written.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/pylib.sh"
need_sf
need_tool chromium python3
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import pyarrow, cantools, numpy' 2>/dev/null ||
    skip "no venv with pyarrow, cantools, numpy at $PY (scripts/pyenv.sh)"
py_package_install
export STREAMFAT_PYTHON=$PY

cat >"$WORK/car.dbc" <<'EOF'
VERSION ""

NS_ :

BS_:

BU_: ECU

BO_ 256 Engine: 8 ECU
 SG_ RPM : 0|16@1+ (0.25,0) [0|16383.75] "rpm" ECU
 SG_ Temp : 16|8@1- (1,-40) [-168|87] "degC" ECU

BO_ 512 Vehicle: 8 ECU
 SG_ Speed : 0|16@1+ (0.01,0) [0|655.35] "km/h" ECU
EOF
# 60 s at 100 Hz: RPM ramps from 800 to 6000 with one frame of 16000 at 30 s, Temp stays
# at 80 degC, Speed rises; id 0x300 is no message of the DBC
python3 - "$WORK/drive.log" <<'PY'
import sys
t0 = 1700000000.0
with open(sys.argv[1], "w") as f:
    for k in range(6000):
        t = t0 + k * 0.01
        rpm = 16000.0 if k == 3000 else 800 + 5200 * k / 6000
        raw = int(rpm / 0.25)
        f.write("(%.6f) can0 100#%02X%02X%02X0000000000\n" % (t, raw & 255, raw >> 8, 120))
        v = int(k * 2)                       # 0.01 km/h: up to 119.98 km/h
        f.write("(%.6f) can0 200#%02X%02X000000000000\n" % (t + 0.001, v & 255, v >> 8))
        f.write("(%.6f) can0 300#00\n" % (t + 0.002))
PY
sf_ok log --mkfs exfat --size 32M --source "file:$WORK/drive.log" --fast "$WORK/d.img" >/dev/null

# sig FILE: the signals of a report, "message.name unit count max-of-every-level ..."
sig() {
    python3 - "$1" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="sf-data">(.*?)</script>', html, re.S).group(1))
for s in d["signals"]:
    tops = [max(v for v in lv if v is not None) for lv in s["hi"]]
    print(s["message"] + "." + s["name"], s["unit"] or "-", *tops)
PY
}

log "the busiest messages' varying signals by default"
sf_ok report --dbc "$WORK/car.dbc" -o "$WORK/all.html" "$WORK/d.img"
sig "$WORK/all.html" >"$WORK/all.sig"
cat "$WORK/all.sig" >&2
awk '{print $1}' "$WORK/all.sig" | sort | tr '\n' ' ' | matches '^Engine.RPM Vehicle.Speed $' ||
    fail "default signals: expected RPM and Speed (Temp is constant)"
grep '^Engine.RPM rpm ' "$WORK/all.sig" >/dev/null || fail "RPM's unit is not rpm"
grep '^Vehicle.Speed km/h ' "$WORK/all.sig" >/dev/null || fail "Speed's unit is not km/h"
# the spike is the maximum of every level (the reduction keeps extremes)
awk '$1 == "Engine.RPM" { for (i = 3; i <= NF; i++) if ($i != 16000) exit 1 }' "$WORK/all.sig" ||
    fail "a zoom level hides RPM's one-frame spike of 16000"
awk '$1 == "Vehicle.Speed" { for (i = 3; i <= NF; i++) if ($i != 119.98) exit 1 }' "$WORK/all.sig" ||
    fail "Speed's maximum is not 119.98 at every level"
grep -F '<td class="signame">RPM</td>' "$WORK/all.html" >/dev/null || fail "no RPM row in the signals table"

log "--signal names them (a constant one too)"
sf_ok report --dbc "$WORK/car.dbc" --signal Temp --signal Vehicle.Speed -o "$WORK/two.html" "$WORK/d.img"
sig "$WORK/two.html" >"$WORK/two.sig"
[[ $(awk '{print $1, $2, $3}' "$WORK/two.sig" | sort | tr '\n' ';') == "Engine.Temp degC 80;Vehicle.Speed km/h 119.98;" ]] ||
    fail "--signal Temp --signal Vehicle.Speed gave: $(cat "$WORK/two.sig")"

log "a --signal the DBC lacks: exit 2, nothing written"
echo precious >"$WORK/keep.html"
sf_err 2 report --dbc "$WORK/car.dbc" --signal NoSuch -o "$WORK/keep.html" "$WORK/d.img"
grep -F "NoSuch" "$SF_LAST_ERR" >/dev/null || fail "the refusal does not name the signal"
[[ $(cat "$WORK/keep.html") == precious ]] || fail "a failed --dbc replaced the report"

log "rendered"
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 --user-data-dir="$WORK/chromium-dom" --dump-dom \
    "file://$WORK/all.html" </dev/null >"$WORK/all.dom" 2>"$WORK/dom.log" ||
    { cat "$WORK/dom.log" >&2; fail "chromium failed"; }
if grep ':CONSOLE' "$WORK/dom.log" >&2; then fail "the page logged to the console (above)"; fi
for t in "Engine.RPM (rpm)" "Vehicle.Speed (km/h)" "Signals"; do
    grep -F -- "$t" "$WORK/all.dom" >/dev/null || fail "'$t' not in the rendered page"
done
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 --user-data-dir="$WORK/chromium-png" \
    --window-size=1000,2600 --screenshot="$WORK/all.png" "file://$WORK/all.html" \
    </dev/null >/dev/null 2>"$WORK/png.log" || { cat "$WORK/png.log" >&2; fail "chromium failed"; }
if grep ':CONSOLE' "$WORK/png.log" >&2; then fail "the page logged to the console (above)"; fi
python3 "$SF_SRC/tests/scripts/png_stats.py" "$WORK/all.png" 78,121,167 >&2 ||
    fail "the screenshot is blank or has no chart"
if command -v tidy >/dev/null 2>&1; then
    timeout 60 tidy -e -q "$WORK/all.html" </dev/null >&2 || fail "tidy -e: errors or warnings"
fi
log "ok"
