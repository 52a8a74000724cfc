#!/usr/bin/env bash
# streamfat report's inputs, options and failures (issue 30): a volume's logs (all, or the
# ones named), a host folder, single files; a volume with no logs and a file that is no log
# are one line and exit 1 with nothing written (an earlier report stays as it was); --signal
# without --dbc is wrong usage, --dbc without a Python that has the package one line and
# exit 1 (t_report_dbc decodes with it); --bitrate sets the bus
# load's rates (CAN FD's two), and a channel it does not name is marked as assumed.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3

IMG=$WORK/v.img
sf_ok log --mkfs exfat --size 64M --source gen:can,rate=2000,channels=2 --duration 1 \
    --split-time 500ms "$IMG" >/dev/null
names=$(sf_ok ls "$IMG" | awk '/SFL/ {print $NF}' | sort)
nlogs=$(wc -w <<<"$names")
((nlogs >= 2)) || fail "expected the split to make several logs, got: $names"

# data NAME: the JSON block of NAME's report, on stdout
data() {
    python3 - "$1" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="sf-data">(.*?)</script>', html, re.S)
print(json.dumps(json.loads(m.group(1))))
PY
}

log "every log of a volume, in name order, on one axis"
sf_ok report -o "$WORK/all.html" "$IMG"
grep -F "$nlogs files in 1 session ($((nlogs - 1)) rotation" "$WORK/all.html" >/dev/null ||
    fail "the summary does not count $nlogs files in one session"
first=$(head -n1 <<<"$names")
sf_ok report -o "$WORK/one.html" "$IMG" "$first"
grep -F "1 file in 1 session" "$WORK/one.html" >/dev/null || fail "LOG did not select one log"

grep -F 'Device id</th><td>not set' "$WORK/all.html" >/dev/null || fail "no device id: not said"
sf_ok log --mkfs exfat --size 32M --source gen:can,rate=1000 --duration 1 --device-id truck7 \
    "$WORK/dev.img" >/dev/null
sf_ok report -o "$WORK/dev.html" "$WORK/dev.img"
grep -F 'Device id</th><td>truck7</td>' "$WORK/dev.html" >/dev/null || fail "the device id is not shown"

log "a host folder and single files"
mkdir "$WORK/dir"
for n in $names; do sf_ok get "$IMG" "$n" "$WORK/dir/$n"; done
sf_ok report -o "$WORK/dir.html" "$WORK/dir"
grep -F "$nlogs files in 1 session" "$WORK/dir.html" >/dev/null || fail "DIR: not every log"
sf_ok report -o "$WORK/files.html" $(for n in $names; do echo "$WORK/dir/$n"; done)
grep -F "$nlogs files in 1 session" "$WORK/files.html" >/dev/null || fail "FILE...: not every log"
cmp <(data "$WORK/dir.html") <(data "$WORK/files.html") >/dev/null ||
    fail "a folder and its files named one by one give different data"

log "no logs: one line, exit 1, nothing written"
sf_ok mkfs -q -t exfat -s 32M "$WORK/empty.img"
echo precious >"$WORK/keep.html"
sf_err 1 report -o "$WORK/keep.html" "$WORK/empty.img"
[[ $(wc -l <"$SF_LAST_ERR") == 1 ]] || fail "more than one line for a volume without logs"
grep -F "no log files (*.SFL) on this volume" "$SF_LAST_ERR" >/dev/null || fail "the line does not say why"
[[ $(cat "$WORK/keep.html") == precious ]] || fail "an earlier report was replaced"
head -c 20000 /dev/urandom >"$WORK/rnd.SFL"
sf_err 1 report -o "$WORK/keep.html" "$WORK/rnd.SFL"
grep -F "no readable log" "$SF_LAST_ERR" >/dev/null || fail "a file that is no log: no clear line"
[[ $(cat "$WORK/keep.html") == precious ]] || fail "an earlier report was replaced by nothing"
mkdir "$WORK/nolog"
sf_err 1 report -o "$WORK/keep.html" "$WORK/nolog"
sf_err 1 report -o "$WORK/keep.html" "$WORK/no-such-file"

log "usage"
sf_err 2 report
sf_err 2 report --signal Speed "$IMG"
grep -F -- "--signal needs --dbc" "$SF_LAST_ERR" >/dev/null || fail "--signal alone: no clear line"
# --dbc without a Python that can run the package: one line naming what is needed, exit 1,
# nothing written
echo 'VERSION ""' >"$WORK/x.dbc"
STREAMFAT_PYTHON=$WORK/no-such-python sf_err 1 report --dbc "$WORK/x.dbc" -o "$WORK/keep.html" "$IMG"
grep -F "pip install './python[dbc]'" "$SF_LAST_ERR" >/dev/null ||
    fail "--dbc without Python: the line does not say what is needed"
[[ $(cat "$WORK/keep.html") == precious ]] || fail "--dbc failed, yet the report was written"
for bad in can0 =500k can0=fast can0=500k/ can0=1 can0=500k/2M/3M can0=1G; do
    sf_err 2 report --bitrate "$bad" -o "$WORK/x.html" "$IMG"
done
sf_err 2 report --partition 1 -o "$WORK/x.html" "$WORK/dir"
sf_ok report --help | matches 'streamfat report'

log "--bitrate: the rates used, and what is assumed"
sf_ok report --bitrate gen0=250k --bitrate gen1=1M/5M -o "$WORK/br.html" "$IMG"
data "$WORK/br.html" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ch = {c["name"]: c for c in d["chans"]}
assert ch["gen0"]["nominal"] == 250000 and not ch["gen0"]["assumed"], ch["gen0"]["nominal"]
assert ch["gen1"]["nominal"] == 1000000 and ch["gen1"]["data"] == 5000000, ch["gen1"]
' || fail "--bitrate did not set the rates"
sf_ok report --bitrate gen0=250k -o "$WORK/br1.html" "$IMG"
data "$WORK/br1.html" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ch = {c["name"]: c for c in d["chans"]}
assert not ch["gen0"]["assumed"] and ch["gen1"]["assumed"], ch
assert ch["gen1"]["nominal"] == 500000 and ch["gen1"]["data"] == 2000000, ch["gen1"]
' || fail "a channel without --bitrate is not marked as assumed at 500k/2M"
grep -F "(assumed)" "$WORK/br1.html" >/dev/null || fail "the page does not say what it assumed"
# the bus load follows the bitrate: the same frames at half the rate take twice the time
python3 - "$WORK/br.html" "$WORK/br1.html" <<'PY' || fail "the bus load does not follow --bitrate"
import json, re, sys
def busy(path):
    html = open(path, encoding="utf-8").read()
    d = json.loads(re.search(r'id="sf-data">(.*?)</script>', html, re.S).group(1))
    c = [c for c in d["chans"] if c["name"] == "gen1"][0]
    return max(v for v in c["busy"][0][1::3] if v is not None)    # [min, max, total]
a, b = busy(sys.argv[1]), busy(sys.argv[2])      # gen1 at 1M, then at 500k
assert abs(b / a - 2) < 0.01, (a, b)
PY
log "CAN FD: the arbitration phase at the nominal rate, the data phase at the data rate (BRS)"
# 100 frames of 64 bytes with BRS and 100 without: ISO 11898-1 field lengths without stuff
# bits (docs/REPORT.md): 17 + 12 bits at the nominal rate, 550 data-phase bits
python3 - "$WORK/fd.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for k in range(100):
        f.write("(%.6f) can0 123##1%s\n" % (1700000000 + k * 0.01, "AB" * 64))
        f.write("(%.6f) can1 124##0%s\n" % (1700000000.005 + k * 0.01, "CD" * 64))
PY
sf_ok log --mkfs exfat --size 32M --source "file:$WORK/fd.log" --fast "$WORK/fd.img" >/dev/null
for br in 500k/2M 1M/4M; do
    sf_ok report --bitrate "can0=$br" --bitrate "can1=$br" -o "$WORK/fd.html" "$WORK/fd.img"
    python3 - "$WORK/fd.html" "$br" <<'PY' || fail "CAN FD bus time at $br is not as computed"
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="sf-data">(.*?)</script>', html, re.S).group(1))
nom, dat = {"500k/2M": (500e3, 2e6), "1M/4M": (1e6, 4e6)}[sys.argv[2]]
want = {"can0": 100 * (29 / nom + 550 / dat) * 1e9,       # BRS: two rates
        "can1": 100 * (29 + 550) / nom * 1e9}             # no BRS: all at the nominal rate
for c in d["chans"]:
    got = sum(c["busy"][0][2::3])                         # the columns' totals, ns
    print(c["name"], sys.argv[2], got, want[c["name"]])
    assert abs(got - want[c["name"]]) <= 100, (c["name"], got, want[c["name"]])
PY
done
log "compressed and sealed logs: the frames export reads; a sealed log without its key"
# report read compressed blocks (kind 3) as malformed before it unpacked them, and sealed
# logs only as "a feature this reader does not know"
if sf_ok keygen "$WORK/k" >/dev/null 2>&1 || [[ -s $WORK/k.pub ]]; then
    sf_ok log --mkfs exfat --size 32M --source gen:can,rate=5000 --duration 1 --compress \
        "$WORK/c.img" >/dev/null
    sf_ok log --mkfs exfat --size 32M --source gen:can,rate=5000 --duration 1 --compress \
        --encrypt-to "$WORK/k.pub" "$WORK/s.img" >/dev/null
    for v in c s; do
        key=()
        [[ $v == s ]] && key=(--key "$WORK/k.key")
        n=$(sf_ok export "${key[@]}" "$WORK/$v.img" LOG00001.SFL | wc -l)
        ((n > 1000)) || fail "$v.img: export gives $n frames"
        sf_ok report "${key[@]}" -o "$WORK/$v.html" "$WORK/$v.img"
        grep -F "CAN frames</th><td>$n</td>" "$WORK/$v.html" >/dev/null ||
            fail "$v.img: the report does not show the $n frames export reads"
        grep -F '0 blocks in 0 places' "$WORK/$v.html" >/dev/null || fail "$v.img: damage reported"
    done
    sf_err 1 report -o "$WORK/nokey.html" "$WORK/s.img"
    grep -E "LOG00001.SFL: not read: sealed to key id [0-9a-f]{16}: give its secret key with --key FILE" \
        "$SF_LAST_ERR" >/dev/null || { cat "$SF_LAST_ERR" >&2; fail "a sealed log without --key: not the key id line"; }
    sf_err 1 report --key "$WORK/nothere.key" -o "$WORK/nokey.html" "$WORK/s.img"
else
    log "(no libsodium in this build: sealed logs not checked)"
fi

log "ok"
