#!/usr/bin/env bash
# One definition of the logger's statistics (issue 15, item 13; docs/LOG.md "Statistics",
# include/streamfat/log.h): records in = records written + records dropped, the writer's own
# DROP records apart as records own, with the same names in `streamfat log`'s summary line,
# its --json and `streamfat demo`. Checked on runs that drop (a tiny ring, an unpaced
# source), against the frames and DROP records the files hold.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3
cd "$WORK"
N=300000

# ---- --json ----
sf_ok mkfs -q -t exfat -s 64M a.img
rc=0
log_json a.json --source gen:can --max-records $N --ring 16K --chunk 4K --qd 1 a.img || rc=$?
cat a.json >&2
((rc == 3)) || fail "log --json: exit $rc, expected 3 (records dropped)"
jcheck a.json "j['records_dropped'] > 0 and j['records_in'] == $N"
jcheck a.json 'j["records_in"] == j["records_written"] + j["records_dropped"]'
decode a.img --gen 1 --clean --allow-drops --generated $N
jcheck "$WORK/dec.json" "j['frames'] == $(jget a.json records_written) and j['drop_records'] == $(jget a.json records_own) and j['drop_sum'] == $(jget a.json records_dropped)"
log "--json: in $(jget a.json records_in) = written $(jget a.json records_written) + dropped $(jget a.json records_dropped), own $(jget a.json records_own)"

# ---- the summary line: the same names, the same identity ----
sf_ok mkfs -q -t exfat -s 64M b.img
rc=0
sf log --source gen:can --max-records $N --ring 16K --chunk 4K --qd 1 b.img || rc=$?
((rc == 3)) || fail "log: exit $rc, expected 3"
line=$(grep 'records in' "$SF_LAST_ERR" | head -n1)
[[ -n $line ]] || fail "log: no 'records in' in the summary"
python3 - "$line" "$N" <<'PY' || fail "log summary: the counters do not add up: $line"
import re, sys
line, n = sys.argv[1], int(sys.argv[2])
m = re.search(r"records in (\d+) = records written (\d+) \+ records dropped (\d+);"
              r" records own (\d+)", line)
if not m:
    sys.exit("no 'records in N = records written N + records dropped N; records own N'")
i, w, d, o = map(int, m.groups())
sys.exit(0 if i == n and i == w + d and d > 0 and o > 0 else 1)
PY
decode b.img --gen 1 --clean --allow-drops --generated $N
log "summary: $line"

# ---- the demo: the same names and identity ----
rc=0
sf demo >demo.out || rc=$?
((rc == 0)) || { cat demo.out >&2; fail "demo exited $rc"; }
python3 - demo.out <<'PY' || { cat demo.out >&2; fail "demo statistics do not add up"; }
import re, sys
t = open(sys.argv[1]).read()
v = {}
for k in ("records in", "records written", "records dropped", "records own"):
    m = re.search(r"^  %s +(\d+)" % k, t, re.M)
    if not m:
        sys.exit("demo: no '%s'" % k)
    v[k] = int(m.group(1))
ok = v["records in"] == v["records written"] + v["records dropped"] and v["records dropped"] > 0
if re.search(r"\brefused\b", t):
    sys.exit("demo: 'refused' next to 'records dropped' (two names for one thing)")
sys.exit(0 if ok else "demo: %r" % v)
PY
log "demo: $(grep -E '^  records (in|written|dropped|own)' demo.out | tr -s ' ' | tr '\n' ';')"
