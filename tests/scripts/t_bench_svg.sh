#!/usr/bin/env bash
# streamfat bench --plot: the SVG is well-formed XML (python3 xml.etree), has both axes with
# their units, the throughput series, and marks the cache boundary (only when there is
# one, and at the reported position); a target name with XML specials stays valid. When
# headless Chromium is installed the chart is also rendered to a PNG and checked not to be
# blank (Chromium is not in scripts/deps.sh: it takes minutes to install; without it that
# sub-check is skipped with a note).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
cd "$WORK"

SF_PLAIN=$SF
if chrt -f 5 true 2>/dev/null; then          # see t_bench_sim.sh: the model is real time
    printf '#!/bin/sh\nexec chrt -f 5 "%s" "$@"\n' "$SF_PLAIN" >"$WORK/sf-rt"
    chmod +x "$WORK/sf-rt"
    SF=$WORK/sf-rt
fi

# check_svg FILE JSON WANT_BOUNDARY(0|1)
check_svg() {
    python3 - "$@" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
svg, js, want = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3] == "1"
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(svg).getroot()                      # raises on malformed XML
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
assert any(re.fullmatch(r"data written \((MB|GB)\)", t) for t in texts), texts
assert "throughput (MB/s)" in texts, texts
# tick labels on both axes: numbers, at least three each
xa = root.find(".//s:g[@id='x-axis']", ns)
ya = root.find(".//s:g[@id='y-axis']", ns)
for axis in (xa, ya):
    nums = [float(t.text) for t in axis.iter("{http://www.w3.org/2000/svg}text")]
    assert len(nums) >= 3 and nums == sorted(nums) and nums[0] == 0, nums
poly = root.find(".//s:polyline[@id='throughput']", ns)
pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
assert len(pts) >= 8, len(pts)
mark = root.find(".//s:line[@id='cache-boundary']", ns)
if want:
    assert mark is not None, "no boundary marker"
    assert any(t.startswith("cache boundary") for t in texts), texts
    # the marker sits where the report says: map bytes through the x axis
    ticks = [(float(l.get("x1")), float(t.text)) for l, t in
             zip(xa.iter("{http://www.w3.org/2000/svg}line"), xa.iter("{http://www.w3.org/2000/svg}text"))]
    (x0, v0), (x1, v1) = ticks[0], ticks[-1]
    unit = 1e9 if any("(GB)" in t for t in texts) else 1e6
    want_x = x0 + (js["cache_boundary_bytes"] / unit - v0) / (v1 - v0) * (x1 - x0)
    assert abs(float(mark.get("x1")) - want_x) < 2, (mark.get("x1"), want_x)
    # the series is above the marker's level left of it and lower right of it
    left = [y for x, y in pts if x < want_x - 10]
    right = [y for x, y in pts if x > want_x + 10]
    assert left and right and min(right) > max(left), "series does not drop at the marker"
else:
    assert mark is None, "boundary marker without a boundary"
PY
}

log "plot with a boundary"
sf_ok bench --bs 256K --qd 32 --json --plot "$WORK/b.svg" \
    'sim:96M,cache=32M,fast=200MB/s,slow=80MB/s' >"$WORK/b.json"
check_svg "$WORK/b.svg" "$WORK/b.json" 1 || fail "SVG with a boundary"

log "plot without one"
sf_ok bench --bs 256K --qd 8 --json --plot "$WORK/n.svg" 'sim:48M,fast=150MB/s' >"$WORK/n.json"
check_svg "$WORK/n.svg" "$WORK/n.json" 0 || fail "SVG without a boundary"

log "a target name with XML specials"
SF=$SF_PLAIN
img="$WORK/a&b<c>\"d.img"
truncate -s 16M "$img"
sf_ok bench --size 8M --json --plot "$WORK/x.svg" "$img" >"$WORK/x.json"
python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$WORK/x.svg" ||
    fail "SVG for a target named with & < > \" is not valid XML"
grep -qF 'a&amp;b&lt;c&gt;&quot;d.img' "$WORK/x.svg" || fail "target name not escaped"
sf_err 1 bench --size 8M --plot "$WORK/no/such/dir/x.svg" "$img" --destroy

# ---- rendering ----
if ! command -v chromium >/dev/null 2>&1; then
    log "note: chromium not installed; rendering sub-check skipped"
    exit 0
fi
log "render in headless Chromium"
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$WORK/chromium" --window-size=800,420 \
    --screenshot="$WORK/b.png" "file://$WORK/b.svg" </dev/null >"$WORK/chromium.log" 2>&1 ||
    { cat "$WORK/chromium.log" >&2; fail "chromium could not render the SVG"; }
python3 - "$WORK/b.png" <<'PY' || fail "rendered chart is blank"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, dark = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        colours.add(px)
        dark += sum(px) < 384
    prev = line
# white background with black axes and text, a blue series, a red marker
assert w >= 700 and h >= 400, (w, h)
assert len(colours) >= 8, len(colours)
assert 0.002 < dark / (w * h) < 0.5, dark / (w * h)
reds = sum(1 for c in colours if c[0] > 180 and c[1] < 80 and c[2] < 80)
assert reds >= 1, "no red boundary marker in the picture"
PY
