#!/usr/bin/env bash
# Issue 26 item 22: records_offered (what the source handed to the log, less what the
# control stage kept out of the ring) equals records_in (what reached the ring: written +
# dropped) in every source that names channels as it goes. stdin named each new interface
# with a CHANNEL record through the ring: records_in counted it, records_offered did not
# (1 short per interface). Checked with a control stage (filter, prescaler) and without,
# on stdin and file: (names known before the start), and on gen:can.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
cd "$WORK"

python3 - >in.log <<'PY'
import random
r = random.Random(26)
t = 1.0
for i in range(20000):
    t += 0.00001
    print("(%.6f) can%d %03X#%s" % (t, r.randrange(3), r.randrange(0x800), "11" * r.randrange(9)))
PY
run() {     # NAME, log arguments...
    local name=$1
    shift
    rm -f o.img
    sf_ok mkfs -q -t exfat -s 64M o.img
    sf_ok log --json "$@" o.img <in.log >"$name.json"
    python3 - "$name.json" "$name" <<'PY' || fail "$name: records_offered differs from records_in"
import json, sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], {k: j[k] for k in ("records_in", "records_offered", "records_filtered",
                                      "records_prescaled", "records_dropped")}, file=sys.stderr)
assert j["records_offered"] == j["records_in"], (j["records_offered"], j["records_in"])
PY
}
run stdin --source stdin
run stdin-control --source stdin --filter 100/700 --prescale 101:3
run file-control --source file:in.log --fast --filter 100/700 --prescale 101:3
run gen-control --source gen:can,channels=3 --max-records 20000 --filter 100/700 --prescale 101:3
