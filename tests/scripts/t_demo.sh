#!/bin/bash
# `streamfat demo` in an empty directory: exits 0 having logged, overrun the ring on
# purpose, decoded and checked everything; fsck.exfat -n finds demo.img clean, and the
# independent decoder agrees with the demo's own accounting.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat

cd "$WORK"
sf_ok demo >"$WORK/demo.out"
cat "$WORK/demo.out" >&2
grep -q '^demo: OK$' "$WORK/demo.out" || fail "no 'demo: OK'"
grep -qE 'records dropped +[1-9]' "$WORK/demo.out" || fail "the demo shows no drops"
[[ -f demo.img ]] || fail "no demo.img"
run_fsck_exfat demo.img
exe=$(helper decode_check)
"$exe" demo.img --clean >"$WORK/dec.json" || fail "decode_check demo.img failed"
python3 - "$WORK/dec.json" "$WORK/demo.out" <<'PY' || fail "decode_check disagrees with the demo"
import json, re, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
written = int(re.search(r"records written +(\d+)", out).group(1))
dropped = int(re.search(r"records dropped +(\d+)", out).group(1))
assert written in (j["frames"], j["frames"] + j["drop_records"]) and j["drop_sum"] == dropped and j["files"] >= 3, (j, written, dropped)
PY
# issue 26 item 22: the burst's frames in the files and those dropped add up to the burst
# (the closing frame sent after it is not "from the burst")
python3 - "$WORK/demo.out" <<'PY' || fail "the demo's burst numbers do not add up"
import re, sys
out = open(sys.argv[1]).read()
m = re.search(r"burst: (\d+) diagnostic frames .*?: (\d+) dropped", out)
k = re.search(r"\((\d+) from the burst\)", out)
assert m and k, "burst lines missing"
burst, dropped, kept = int(m.group(1)), int(m.group(2)), int(k.group(1))
assert dropped + kept == burst, (burst, dropped, kept)
PY
