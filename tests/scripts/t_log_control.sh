#!/usr/bin/env bash
# streamfat log's control options, run by the core's control stage (src/log/control.c), with
# gen:can (frame k: id 0x100 + (k mod 16), data k as 8 little-endian bytes):
# - --prescale 100/7FF:10 keeps exactly ceil(frames of 0x100 / 10) of them, every other id
#   whole; --prescale 102/7FF:change/FF00000000000000 keeps every 0x102 frame,
#   change/00000000000000FF only the first; counted as records_prescaled;
# - --signal k=101:0:32:le:u --start 'k >= 1000' --stop 'k >= 5000' logs exactly k = 1009 ..
#   5008, the rest counted as records_paused;
# - --filter with @CHANNEL on two channels (rejects first, today's meaning), by number and
#   by the source's channel name;
# - a signal trigger fires once per hold-off (replayed candump times, --fast);
# - invalid specs: one line naming the problem (and the usual "Try" line), exit 2.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
IMG=$WORK/a.img
N=20000

# frames FILE: the candump export of LOG00001.SFL as "ID K" lines (K from the data)
frames() {
    sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/cd"
    python3 - "$WORK/cd" >"$1" <<'PY'
import sys
for line in open(sys.argv[1]):
    ch, rest = line.split()[1:3]
    cid, data = rest.split("#")
    print(ch, int(cid, 16), int.from_bytes(bytes.fromhex(data), "little"))
PY
}
fresh() { rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"; }

log "--prescale 100/7FF:10"
fresh
log_json "$WORK/p.json" --source gen:can --max-records $N --prescale 100/7FF:10 "$IMG" ||
    fail "prescale run failed"
frames "$WORK/p.f"
python3 - "$WORK/p.f" $N <<'PY' || fail "prescale 100/7FF:10 kept the wrong frames"
import sys
n = int(sys.argv[2])
got = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[1])]
k100 = [k for k in range(n) if k % 16 == 0]
want = [(0x100 + k % 16, k) for k in range(n) if k % 16 or k100.index(k) % 10 == 0]
assert got == want, (len(got), len(want))
assert sum(1 for i, k in got if i == 0x100) == (len(k100) + 9) // 10
PY
jcheck "$WORK/p.json" "j['records_prescaled'] == $(( (N + 15) / 16 - ((N + 15) / 16 + 9) / 10 )) and j['records_paused'] == 0 and j['records_written'] == $N - j['records_prescaled']"

log "--prescale 102/7FF:change/BYTEMASK"
for mask in FF00000000000000 00000000000000FF; do
    fresh
    log_json "$WORK/c.json" --source gen:can --max-records 5000 \
        --prescale "102/7FF:change/$mask" "$IMG" || fail "change/$mask run failed"
    frames "$WORK/c.f"
    n102=$(awk '$2 == 258' "$WORK/c.f" | wc -l)
    other=$(awk '$2 != 258' "$WORK/c.f" | wc -l)
    want=$([[ $mask == FF* ]] && echo $(( (5000 + 13) / 16 )) || echo 1)
    ((n102 == want)) || fail "change/$mask kept $n102 frames of 0x102, expected $want"
    ((other == 5000 - (5000 + 13) / 16)) || fail "change/$mask: other ids not whole ($other)"
done

log "--signal k=101:0:32:le:u --start 'k >= 1000' --stop 'k >= 5000'"
fresh
log_json "$WORK/s.json" --source gen:can --max-records 8000 --signal k=101:0:32:le:u \
    --start 'k >= 1000' --stop 'k >= 5000' "$IMG" || fail "start/stop run failed"
frames "$WORK/s.f"
python3 - "$WORK/s.f" <<'PY' || fail "start/stop logged the wrong frames"
import sys
got = [int(l.split()[2]) for l in open(sys.argv[1])]
assert got == list(range(1009, 5009)), (got[:3], got[-3:], len(got))
PY
jcheck "$WORK/s.json" "j['records_paused'] == 4000 and j['records_written'] == 4000 and j['records_offered'] == 4000"

log "--filter @CHANNEL on two channels"
fresh
log_json "$WORK/f.json" --source gen:can,channels=2 --max-records 4000 \
    --filter '!100@0' --filter '101@1' --filter '!10F' "$IMG" || fail "filter run failed"
frames "$WORK/f.f"
python3 - "$WORK/f.f" <<'PY' || fail "per-channel filters kept the wrong frames"
import sys, collections
c = collections.Counter((ch, i) for ch, i, k in (l.split() for l in open(sys.argv[1])))
ids0 = {i for (ch, i) in c if ch == "gen0"}
ids1 = {i for (ch, i) in c if ch == "gen1"}
assert ids0 == {str(0x100 + i) for i in range(1, 15)}, sorted(ids0)
assert ids1 == {str(0x101)}, ids1
PY
jcheck "$WORK/f.json" "j['records_filtered'] == 4000 - j['records_written']"

log "--filter @NAME: the channel the source names so (gen0, gen1), the same frames"
fresh
log_json "$WORK/fn.json" --source gen:can,channels=2 --max-records 4000 \
    --filter '!100@gen0' --filter '101@gen1' --filter '!10F' "$IMG" || fail "filter by name failed"
frames "$WORK/fn.f"
cmp -s <(sort "$WORK/f.f") <(sort "$WORK/fn.f") || fail "--filter @NAME kept other frames than @NUMBER"
jcheck "$WORK/fn.json" "j['records_filtered'] > 0"

log "signal trigger with a hold-off (record times)"
python3 - "$WORK/trig.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for k in range(10000):       # 1 ms apart
        f.write("(1700000000.%06d) can0 101#%s\n" % (k * 1000 % 1000000 if False else 0, "")
                if False else "(%d.%06d) can0 101#%s\n" % (1700000000 + k // 1000,
                                                          (k % 1000) * 1000,
                                                          k.to_bytes(8, "little").hex()))
PY
fresh
log_json "$WORK/t.json" --source file:"$WORK/trig.log" --fast --signal k=101:0:32 \
    --trigger 'signal:k >= 3000' --trigger-holdoff 2s --pre 100ms --post 100ms "$IMG" ||
    fail "trigger run failed"
# the condition holds from k = 3000 on; once per 2 s of record time: 3000, 5000, 7000, 9000
jcheck "$WORK/t.json" "j['triggers'] == 4"

log "invalid specs: exit 2, one line naming the problem"
bad() {  # WHAT ARGS...
    local what=$1 rc=0
    shift
    sf log --source gen:can "$@" "$IMG" >/dev/null || rc=$?
    ((rc == 2)) || fail "$* exited $rc, expected 2"
    grep -q "$what" <(head -1 "$SF_LAST_ERR") || fail "$*: first line does not say '$what'"
}
bad "past 64 data bytes" --signal x=100:510:8
bad "length not 1 to 64" --signal x=100:0:0
bad "unknown signal 'y'" --signal k=101:0:32 --start 'y >= 1'
bad "bad operator" --signal k=101:0:32 --start 'k => 1'
bad "bad operator" --signal k=101:0:32 --stop 'k ! 1'
bad "invalid --prescale" --prescale 100/7FF:0
bad "invalid --prescale" --prescale 100/7FF:change/F
bad "invalid filter" --filter '100@300'
bad "no channel of that name" --filter '100@can7'
bad "needs the flight recorder" --signal k=101:0:32 --trigger 'signal:k > 1'

log "--config FILE.json: the same start/stop run from a file; the command line wins"
cat >"$WORK/c.json" <<JSON
{"source": "gen:can", "max-records": 8000, "signal": ["k=101:0:32:le:u"],
 "start": "k >= 1000", "stop": "k >= 5000", "prescale": ["100/7FF:10"],
 "target": "$IMG", "json": true}
JSON
fresh
# --prescale on the command line replaces the file's list (0x103 instead of 0x100)
sf log --config "$WORK/c.json" --prescale 103/7FF:1000000 >"$WORK/cfg.json" ||
    fail "--config run failed"
frames "$WORK/cfg.f"
python3 - "$WORK/cfg.f" <<'PY' || fail "--config run logged the wrong frames"
import sys
got = [(int(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[1])]
ks = [k for i, k in got]
# 0x100 whole (the file's prescaler replaced), 0x103 only its first frame after the start
want = [k for k in range(1009, 5009) if k % 16 != 3 or k == 1011]
assert ks == want, (len(ks), len(want))
PY
sf_ok log --config "$WORK/c.json" --prescale 103/7FF:1000000 --print-config >"$WORK/pc.json"
jcheck "$WORK/pc.json" "j['prescale'] == ['103/7FF:1000000'] and j['start'] == 'k >= 1000' and j['target'] == '$IMG' and j['json'] is True"
badcfg() {  # WHAT JSON
    local rc=0
    printf '%s\n' "$2" >"$WORK/bad.json"
    sf log --config "$WORK/bad.json" "$IMG" >/dev/null || rc=$?
    ((rc == 2)) || fail "--config $2: exited $rc, expected 2"
    grep -q "$1" <(head -1 "$SF_LAST_ERR") || fail "--config $2: first line does not say '$1'"
}
badcfg "unknown key 'sourc'" '{"sourc": "gen:can"}'
badcfg "key 'json' must be true or false" '{"source": "gen:can", "json": "yes"}'
badcfg "key 'source' takes one value" '{"source": ["gen:can"]}'
badcfg "key 'signal' must be a list of strings" '{"source": "gen:can", "signal": [{}]}'
badcfg "JSON syntax error on line 2" $'{"source": "gen:can",\n "json": tru}'
badcfg "key 'source' given twice" '{"source": "gen:can", "json": true, "source": "gen:latency"}'
# the schema in docs/ names exactly the keys the command takes
python3 - "$SF_SRC/docs/log-config.schema.json" "$SF_SRC/cli/commands/cmd_log.c" <<'PY' ||
import json, re, sys
def no_repeats(pairs):
    names = [k for k, _ in pairs]
    assert len(names) == len(set(names)), "a key twice: %s" % sorted(k for k in names if names.count(k) > 1)
    return dict(pairs)
keys = set(json.load(open(sys.argv[1]), object_pairs_hook=no_repeats)["properties"])
opts = set(re.findall(r'\{ "([a-z0-9-]+)", (?:required|no)_argument', open(sys.argv[2]).read()))
opts -= {"config", "print-config", "help"}
opts |= {"partition", "target"}
assert keys == opts, (keys ^ opts)
PY
    fail "docs/log-config.schema.json and the log options differ"
