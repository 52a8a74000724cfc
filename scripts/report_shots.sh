#!/usr/bin/env bash
# The screenshots of docs/REPORT.md: three reports made from scratch (the demo volume, a
# latency: log, a replayed drive decoded with a DBC) and rendered by headless Chromium at
# half scale into docs/report/*.png (tens of KiB each). Needs build/streamfat (make),
# chromium, and for the DBC one the venv of scripts/pyenv.sh with the package installed
# (STREAMFAT_PYTHON, default build/pyenv/bin/python; without it that shot is left out).
#
#   bash scripts/report_shots.sh [OUTDIR]      (default docs/report)
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SF=${SF:-$SRC/build/streamfat}
OUT=${1:-$SRC/docs/report}
PY=${STREAMFAT_PYTHON:-$SRC/build/pyenv/bin/python}
W=$(mktemp -d "${TMPDIR:-/tmp}/sf-shots.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

shot() {          # NAME HEIGHT: $W/NAME.html -> $OUT/NAME.png
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$W/chromium" --force-device-scale-factor=0.5 \
        --window-size=1100,"$2" --screenshot="$OUT/$1.png" "file://$W/$1.html" \
        </dev/null >/dev/null 2>&1
    echo "$OUT/$1.png: $(stat -c %s "$OUT/$1.png") bytes"
}

cd "$W"                           # the pages' titles name the images without a path
"$SF" demo -o demo.img >/dev/null
"$SF" report -o demo.html demo.img
shot demo 2000

"$SF" log --mkfs exfat --size 32M --source latency:1ms --duration 2 "$W/lat.img" >/dev/null 2>&1
"$SF" report -o latency.html lat.img
shot latency 2000

if "$PY" -c 'import streamfat.signals, cantools' 2>/dev/null; then
    # 60 s of a drive at 100 Hz: engine speed with one spike, vehicle speed, a constant
    python3 - "$W/drive.log" <<'PY'
import math, sys
t0 = 1700000000.0
with open(sys.argv[1], "w") as f:
    for k in range(6000):
        t = t0 + k * 0.01
        rpm = 16000.0 if k == 3000 else 2500 + 1500 * math.sin(k / 400)
        raw = int(rpm / 0.25)
        f.write("(%.6f) can0 100#%02X%02X%02X0000000000\n" % (t, raw & 255, raw >> 8, 120))
        v = int(100 * (60 + 40 * math.sin(k / 900)))
        f.write("(%.6f) can0 200#%02X%02X000000000000\n" % (t + 0.001, v & 255, v >> 8))
PY
    cat >"$W/car.dbc" <<'EOF'
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
    "$SF" log --mkfs exfat --size 32M --source file:drive.log --fast drive.img >/dev/null 2>&1
    STREAMFAT_PYTHON=$PY "$SF" report --dbc car.dbc --bitrate can0=500k \
        -o signals.html drive.img
    shot signals 2200
else
    echo "report_shots.sh: no Python with streamfat and cantools at $PY: signals.png left out" >&2
fi
