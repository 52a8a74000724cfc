#!/usr/bin/env bash
# streamfat plan against hand-computed cases (issue 8): 120 GB at 60,000 P/E cycles and
# WAF 1.8 is 4,000 TB written; at 500 MB/s it fills in 240 s and wears out in 92.6 days.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

# check ARGS... -- PYTHON-ASSERTIONS over j (the JSON object)
check() {
    local args=() expr
    while [[ $1 != -- ]]; do args+=("$1"); shift; done
    shift
    expr=$1
    sf_ok plan --json "${args[@]}" >"$WORK/p.json"
    python3 - "$WORK/p.json" "$expr" <<'PY' || { cat "$WORK/p.json" >&2; fail "plan ${args[*]}: $expr"; }
import json, sys
j = json.load(open(sys.argv[1]))
close = lambda a, b, rel=1e-3: abs(a - b) <= rel * abs(b)
assert eval(sys.argv[2]), sys.argv[2]
PY
}

# the issue's case
check --rate 500MB/s --capacity 120GB --pe-cycles 60000 --waf 1.8 -- \
    'close(j["endurance_tb"], 4000) and close(j["fill_seconds"], 240) and close(j["lifetime_days"], 92.59259) and j["keeps_up"] is None'
# rated TBW: 600 TB at 100 MB/s = 6e6 s = 69.44 days; 1 TB (10^12) fills in 10^4 s
check --rate 100MB/s --capacity 1TB --tbw 600TB -- \
    'close(j["endurance_tb"], 600) and close(j["fill_seconds"], 10000) and close(j["lifetime_days"], 69.4444) and close(j["full_volume_writes"], 600)'
# binary units: 64 GiB at 1 MiB/s fills in 65536 s
check --rate 1MiB/s --capacity 64G --pe-cycles 3000 -- \
    'close(j["fill_seconds"], 65536) and close(j["endurance_tb"], 64*2**30*3000/1e12)'
# the QLC drive of the issue: 500 MB/s for 45 GB, then 50 MB/s; at 200 MB/s the cache is
# full after 225 s and the device falls 150 MB/s behind: a 64 MiB ring lasts 0.447 s
check --rate 200MB/s --capacity 2TB --cache 45GB --sustained 50MB/s -- \
    'j["keeps_up"] is False and close(j["cache_full_seconds"], 225) and close(j["backlog_mb_s"], 150) and close(j["ring_overflow_seconds"], 64*2**20/150e6) and j["endurance_tb"] is None'
check --rate 40MB/s --sustained 50MB/s -- 'j["keeps_up"] is True and j["fill_seconds"] is None'
# no capacity: what needs it is null; 100 TB at 1 MB/s = 10^8 s = 1157.4 days
check --rate 1MB/s --tbw 100TB -- \
    'close(j["lifetime_days"], 1157.407) and j["cluster_bytes"] is None and j["partial_format"] == [] and j["capacity_bytes"] is None'
# partial format: QLC 25 % is all SLC, 33 % is not; TLC 33 % is
check --rate 100MB/s --capacity 1TB -- \
    '[p["all_slc"] for p in j["partial_format"]] == [False, False, False, True] and close(j["partial_format"][3]["bytes"], 250e9) and close(j["partial_format"][3]["fill_seconds"], 2500)'
check --rate 100MB/s --capacity 1TB --cell tlc -- \
    '[p["all_slc"] for p in j["partial_format"]] == [False, False, True, True]'
# recommendations: ~1 ms of data per chunk (4K .. 1M), checkpoint >= 1 s; cluster by size
check --rate 500MB/s --capacity 120GB -- \
    'j["chunk_bytes"] == 512*1024 and j["checkpoint_seconds"] == 1 and j["cluster_bytes"] == 128*1024'
check --rate 100KB/s --capacity 16GB -- \
    'j["chunk_bytes"] == 4096 and j["checkpoint_seconds"] == 5 and j["cluster_bytes"] == 32*1024'

# text output carries the same figures
sf_ok plan --rate 500MB/s --capacity 120GB --pe-cycles 60000 --waf 1.8 >"$WORK/p.txt"
grep -q '4000.0 TB' "$WORK/p.txt" || fail "text: endurance"
grep -q '92.6 days' "$WORK/p.txt" || fail "text: lifetime"
grep -q '4.0 min' "$WORK/p.txt" || fail "text: fill time"

# usage errors
sf_err 2 plan
sf_err 2 plan --rate 0MB/s
sf_err 2 plan --rate 1MB/s --pe-cycles 1000
sf_err 2 plan --rate 1MB/s --capacity 1GB --tbw 1TB --pe-cycles 1000
sf_err 2 plan --rate 1MB/s --waf 0.5
sf_err 2 plan --rate 1MB/s --cache 1GB
sf_err 2 plan --rate 1MB/s --cell plc
for c in plan bench; do
    sf_ok "$c" --help >"$WORK/h.txt"
    grep -q "^  streamfat $c " "$WORK/h.txt" && grep -q '^EXAMPLES' "$WORK/h.txt" &&
        grep -q '^EXIT STATUS' "$WORK/h.txt" || fail "$c --help"
done
sf_ok --help | matches -w plan || fail "streamfat --help does not list plan"
