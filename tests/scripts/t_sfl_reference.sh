#!/usr/bin/env bash
# The independent reader (tests/scripts/sfl_ref.py: written from docs/FORMAT.md alone, no
# code shared with src/, standard library only) against `streamfat export`, frame for frame
# (candump lines), byte for byte (raw: SAMPLE bodies), on the records candump skips, and on
# the damage verdict ('clean', or the one line 'damaged: invalid 1, out-of-sequence 2' and exit 1):
#   - logs of every mode, made with the CLI: gen:can framed, rotation (--split-size), drops
#     (a tiny ring), 512-byte and 1 MiB blocks, flight recorder (--trigger/--pre/--post),
#     latency:, udp:, stdin with FD/RTR/ERR/extended ids on 100 interfaces (more
#     than the 64 the writer once took), and a log cut by a power cut (logcut) before
#     and after `fsck --repair`;
#   - hand-made damage the issue named (a record block with kind 1 at seq > 0, a swapped
#     pair of blocks, a repeated tail, an invalid CAN record; an empty file, zeros, no valid
#     block; issue 26 item 3: a block with seq 2^62, block 0 with it, two far-apart blocks
#     swapped), each with its expected verdict;
#   - seeded damage (tests/scripts/sfl_damage.py: byte flips, swaps near and far, blocks
#     copied over any other, duplicated tails, several bad blocks, wild seqs, truncation,
#     kind/seq/count/first_ts changes with the CRC re-sealed, foreign and zeroed blocks,
#     dirty tails, garbage, invalid CAN flags), SF_SEED (default 1), 32 variants (SF_LONG=1:
#     400); in each, every block unchanged at its place must come back (the position rule,
#     sfl_damage.py --check); every fourth on a compressed log (log --compress);
#   - compressed record blocks (issue 29): gen:can with rotation, the FD mix and a J1939 mix
#     from stdin (bench/can_mix.py) at 512-byte blocks, and a packed stream damaged under a
#     good CRC (malformed 1 in both readers).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3

REF=$SF_SRC/tests/scripts/sfl_ref.py
DMG=$SF_SRC/tests/scripts/sfl_damage.py
SEED=${SF_SEED:-1}
VARIANTS=32
[[ ${SF_LONG:-0} == 1 ]] && VARIANTS=400
IMG=$WORK/v.img
compared=0

# compare FILE WHAT [EXPECTED_VERDICT]: export FILE and read it with the reference; both
# must agree. The verdict is left in $WORK/ref.verdict.
compare() {
    local f=$1 what=$2 want=${3:-} rc=0 rrc=0 v line
    timeout 300 python3 "$REF" "$f" "$WORK/ref" </dev/null || rrc=$?
    ((rrc <= 1)) || fail "$what: sfl_ref.py exited $rrc"
    v=$(cat "$WORK/ref.verdict")
    "$SF" export "$f" >"$WORK/exp.candump" 2>"$WORK/exp.err" || rc=$?
    has_sanitizer_report "$WORK/exp.err" && { cat "$WORK/exp.err" >&2; fail "$what: sanitizer report"; }
    if ! cmp -s "$WORK/exp.candump" "$WORK/ref.candump"; then
        diff "$WORK/ref.candump" "$WORK/exp.candump" | head -20 >&2 || true
        fail "$what: export's candump lines differ from the reference reader's"
    fi
    line=$(grep -o 'damaged: .*' "$WORK/exp.err" | tail -n1 || true)
    if [[ $v == clean ]]; then
        { ((rc == 0)) && [[ -z $line ]]; } || { cat "$WORK/exp.err" >&2; fail "$what: reference says clean, export exited $rc"; }
    else
        ((rc == 1)) || { cat "$WORK/exp.err" >&2; fail "$what: reference says '$v', export exited $rc"; }
        [[ $line == "$v" ]] || { cat "$WORK/exp.err" >&2; fail "$what: reference says '$v', export '$line'"; }
    fi
    [[ $(grep -c 'damaged: ' "$WORK/exp.err" || true) -le 1 ]] || fail "$what: more than one summary line"
    line=$(grep -o 'skipped .*' "$WORK/exp.err" || true)
    [[ $line == "$(cat "$WORK/ref.skipped")" ]] || { cat "$WORK/exp.err" >&2; fail "$what: skipped records: export '$line', reference '$(cat "$WORK/ref.skipped")'"; }
    rc=0
    "$SF" export -f raw "$f" >"$WORK/exp.raw" 2>/dev/null || rc=$?
    cmp -s "$WORK/exp.raw" "$WORK/ref.raw" || fail "$what: raw export differs from the reference"
    if [[ -n $want && $v != "$want" ]]; then
        fail "$what: verdict '$v', expected '$want'"
    fi
    compared=$((compared + 1))
}

# every_log IMG WHAT: compare every *.SFL on IMG (must be clean unless $2 says otherwise).
every_log() {
    local img=$1 what=$2 want=${3:-clean} p n=0 v logs
    mapfile -t logs < <(sf_ok ls -R "$img" | grep -i '\.SFL$')
    for p in "${logs[@]}"; do
        sf_ok cat "$img" "$p" >"$WORK/cur.SFL"
        compare "$WORK/cur.SFL" "$what $p"
        v=$(cat "$WORK/ref.verdict")
        [[ $want == any || $v == "$want" ]] || fail "$what $p: verdict '$v', expected '$want'"
        n=$((n + 1))
    done
    ((n >= 1)) || fail "$what: no log on the image"
    echo "$what: $n log(s) agree" >&2
}

newimg() { rm -f "$IMG"; sf_ok mkfs -q -t exfat -s "${1:-64M}" "$IMG" >/dev/null; }

# ---- logs of every mode ---------------------------------------------------------------
log "framed gen:can, 2 channels, 4 KiB blocks"
newimg
log_json "$WORK/a.json" --source gen:can,channels=2 --max-records 3000 --chunk 4K "$IMG" || fail "gen:can failed"
every_log "$IMG" framed
sf_ok cat "$IMG" "$(sf_ok ls -R "$IMG" | grep -i '\.SFL$' | head -n1)" >"$WORK/base.SFL"
log_json "$WORK/a2.json" --source gen:can --max-records 1500 --chunk 4K "$IMG" || fail "gen:can failed"
sf_ok cat "$IMG" "$(sf_ok ls -R "$IMG" | grep -i '\.SFL$' | tail -n1)" >"$WORK/other.SFL"

log "rotation: --split-size 32K"
newimg
log_json "$WORK/r.json" --source gen:can,channels=3 --max-records 6000 --chunk 1K --split-size 32K "$IMG" || fail "rotation failed"
jcheck "$WORK/r.json" 'j["files"] >= 3'
every_log "$IMG" rotation

log "drops: a ring of 8 KiB, 512-byte blocks"
newimg
rc=0
log_json "$WORK/d.json" --source gen:can --max-records 30000 --ring 8K --chunk 512 --qd 1 "$IMG" || rc=$?
((rc == 0 || rc == 3)) || fail "drops run exited $rc"
every_log "$IMG" drops
if [[ $(jget "$WORK/d.json" records_dropped) -gt 0 ]]; then
    grep -q DROP "$WORK/ref.skipped" || fail "drops: no DROP record though records were dropped"
else
    echo "drops: the machine kept up, no drop this time" >&2
fi
# small bases for the seeded damage: the reference's CRC is pure Python
for f in base512 other512; do
    log_json "$WORK/$f.json" --source gen:can,channels=2 --max-records 1500 --chunk 512 "$IMG" || fail "gen:can failed"
    sf_ok cat "$IMG" "$(sf_ok ls -R "$IMG" | grep -i '\.SFL$' | tail -n1)" >"$WORK/$f.SFL"
done

log "1 MiB blocks"
newimg
log_json "$WORK/m.json" --source gen:can --max-records 3000 --chunk 1M --ring 8M "$IMG" || fail "1 MiB run failed"
every_log "$IMG" 1MiB

log "flight recorder: latency trigger, pre 100 ms, post 100 ms"
newimg
log_json "$WORK/fr.json" --source latency:1ms --duration 1 --trigger 'latency>1ns' --pre 100ms --post 100ms "$IMG" ||
    fail "flight recorder run failed"
every_log "$IMG" flight-recorder

log "latency:1ms"
newimg
log_json "$WORK/l.json" --source latency:1ms --duration 0.5 "$IMG" || fail "latency run failed"
every_log "$IMG" latency
grep -q LATENCY "$WORK/ref.skipped" || fail "latency: no LATENCY records"

log "udp: 300 datagrams"
newimg
timeout 60 "$SF" log --json --source udp:0 --max-records 300 "$IMG" >"$WORK/u.json" 2>"$WORK/u.err" &
BG=$!
on_exit "kill $BG"
udp_wait_port "$WORK/u.err" "$BG"
timeout 60 python3 - "$UDP_PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(300):
    s.sendto((b"v%d," % i) + bytes([i & 255]) * (i % 200), ("127.0.0.1", port))
    if i % 50 == 0:
        time.sleep(0.002)
PY
rc=0
wait "$BG" || rc=$?
((rc == 0)) || { cat "$WORK/u.err" >&2; fail "udp run exited $rc"; }
every_log "$IMG" udp
[[ -s $WORK/ref.raw ]] || fail "udp: no SAMPLE bytes"

# More interfaces than the 64 the writer once took (issue 15, item 5).
NIF=100
log "stdin: FD, RTR, ERR, extended ids on $NIF interfaces"
newimg
python3 - "$NIF" >"$WORK/in.log" <<'PY'
import sys
n = int(sys.argv[1])
t = 1700000000.0
for i in range(1500):
    ifc = "can%d" % (i % n) if i % 7 else "vcan%d" % (i % n)
    ts = "(%.6f)" % (t + i * 0.001)
    k = i % 6
    if k == 0:
        fr = "%03X#%s" % (i & 0x7FF, bytes(range(i % 9)).hex().upper())
    elif k == 1:
        fr = "%08X#%s" % (0x1ABC000 + i, "DEADBEEF")
    elif k == 2:
        fr = "%03X#R%s" % (i & 0x7FF, "" if i % 4 else "3")
    elif k == 3:
        fr = "%03X##%X%s" % (i & 0x7FF, i % 4, bytes(range(12)).hex().upper())
    elif k == 4:
        fr = "20000080#0000080000000000"
    else:
        fr = "%08X##1%s" % (0x1000 + i, bytes(range(64)).hex().upper())
    print(ts, ifc, fr)
PY
log_json "$WORK/s.json" --source stdin "$IMG" <"$WORK/in.log" || fail "stdin run failed"
every_log "$IMG" stdin
nif=$(awk '{print $2}' "$WORK/ref.candump" | sort -u | wc -l)
((nif >= NIF)) || fail "stdin: $nif interfaces in the export, $NIF logged"
grep -q '##' "$WORK/ref.candump" && grep -q '#R' "$WORK/ref.candump" && grep -q ' 20000080#' "$WORK/ref.candump" ||
    fail "stdin: FD, RTR or error frames missing"

log "a power cut (logcut: 30 blocks, checkpoint after 10), before and after fsck --repair"
newimg
run_helper logcut "$IMG" /LOG00001.SFL aa01 30 10 >/dev/null
every_log "$IMG" "power cut"
rc=0; sf fsck --repair "$IMG" >/dev/null 2>&1 || rc=$?
((rc == 1)) || fail "fsck --repair exited $rc"
every_log "$IMG" "after repair"
grep -c . "$WORK/ref.candump" | matches -x 600 || fail "after repair: $(grep -c . "$WORK/ref.candump") frames, 600 expected"

# ---- the damage the issue named ---------------------------------------------------------
B=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 40)[0])' "$WORK/base.SFL")
python3 - "$WORK/base.SFL" "$WORK" "$B" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["SF_SRC"] + "/tests/scripts")
from sfl_damage import reseal
d0 = open(sys.argv[1], "rb").read()
w, B = sys.argv[2], int(sys.argv[3])
d = bytearray(d0); struct.pack_into("<H", d, 2 * B + 6, 1); reseal(d, 2 * B)
open(w + "/kind1.SFL", "wb").write(d)
d = bytearray(d0); d[3 * B:4 * B], d[4 * B:5 * B] = d0[4 * B:5 * B], d0[3 * B:4 * B]
open(w + "/swap.SFL", "wb").write(d)
last = max(i for i in range(len(d0) // B) if any(d0[i * B:(i + 1) * B]))
open(w + "/duptail.SFL", "wb").write(d0[:(last + 1) * B] + d0[(last - 1) * B:(last + 1) * B])
open(w + "/empty.SFL", "wb").write(b"")
d = bytearray(d0); struct.pack_into("<I", d, 2 * B + 48 + 4, 0x10000); reseal(d, 2 * B)
open(w + "/badcan.SFL", "wb").write(d)
d = bytearray(d0); struct.pack_into("<I", d, 2 * B + 48 + 4, 0x40); reseal(d, 2 * B)
open(w + "/infoflag.SFL", "wb").write(d)
d = bytearray(d0); struct.pack_into("<Q", d, 2 * B + 16, 1 << 62); reseal(d, 2 * B)
open(w + "/wild.SFL", "wb").write(d)
d = bytearray(d0); struct.pack_into("<Q", d, 16, 1 << 62); reseal(d, 0)
open(w + "/wild0.SFL", "wb").write(d)
d = bytearray(d0); d[2 * B:3 * B], d[9 * B:10 * B] = d0[9 * B:10 * B], d0[2 * B:3 * B]
open(w + "/farswap.SFL", "wb").write(d)
PY
compare "$WORK/kind1.SFL" "kind 1 at seq 2" "damaged: misplaced 1"
compare "$WORK/swap.SFL" "blocks 3 and 4 swapped" "damaged: out-of-sequence 2"
# The position rule (issue 26 item 3): one block never hides the blocks after it.
compare "$WORK/wild.SFL" "block 2 with seq 2^62" "damaged: out-of-sequence 1"
compare "$WORK/farswap.SFL" "blocks 2 and 9 swapped" "damaged: out-of-sequence 2"
compare "$WORK/wild0.SFL" "block 0 with seq 2^62" "damaged: misplaced 1"
for f in wild farswap wild0; do
    python3 "$DMG" --check "$WORK/base.SFL" "$WORK/$f.SFL" </dev/null || fail "$f: a block unchanged at its place was lost"
done
compare "$WORK/duptail.SFL" "a repeated tail" "damaged: out-of-sequence 2"
compare "$WORK/badcan.SFL" "a CAN record with flag bit 16" "damaged: bad-can 1"
compare "$WORK/infoflag.SFL" "a CAN record with informational flag bit 6" "clean"
compare "$WORK/empty.SFL" "an empty file" clean
head -c 5000 /dev/zero >"$WORK/zeros.SFL"
compare "$WORK/zeros.SFL" "a file of zeros" clean
head -c 5000 "$WORK/base.SFL" | tail -c 4000 >"$WORK/nolog.SFL"
compare "$WORK/nolog.SFL" "no valid block" "damaged: not a log"
# No frame twice or out of order: every gen:can frame's data counts up per file.
for f in swap farswap duptail; do
    "$SF" export "$WORK/$f.SFL" 2>/dev/null | sort | uniq -d | matches . && fail "$f: duplicate frames"
done
"$SF" export "$WORK/base.SFL" 2>/dev/null >"$WORK/all.log"
"$SF" export "$WORK/swap.SFL" 2>/dev/null >"$WORK/swap.log" || true
python3 - "$WORK/all.log" "$WORK/swap.log" <<'PY' || fail "swap: frames out of order"
import sys
pos = {l: i for i, l in enumerate(open(sys.argv[1]))}
idx = [pos[l] for l in open(sys.argv[2])]
sys.exit(0 if idx == sorted(idx) else 1)
PY

# ---- compressed record blocks (issue 29): log --compress ------------------------------------
log "compressed: gen:can, 2 channels, 4 KiB blocks, rotation; the FD mix from stdin"
newimg
log_json "$WORK/c.json" --compress --source gen:can,channels=2 --max-records 20000 --chunk 4K --split-size 64K "$IMG" || fail "gen:can --compress failed"
jcheck "$WORK/c.json" 'j["files"] >= 2'
every_log "$IMG" compressed
sf_ok cat "$IMG" "$(sf_ok ls -R "$IMG" | grep -i '\.SFL$' | head -n1)" >"$WORK/cbase.SFL"
python3 - "$WORK/cbase.SFL" <<'PY' || fail "compressed: no kind-3 block or no feature bit 32"
import struct, sys
d = open(sys.argv[1], "rb").read()
kinds = {struct.unpack_from("<H", d, o + 6)[0] for o in range(0, len(d), 4096)}
feat = struct.unpack_from("<Q", d, 48 + 24)[0]
sys.exit(0 if 3 in kinds and feat == 1 << 32 else 1)
PY
newimg
timeout 60 python3 "$SF_SRC/bench/can_mix.py" fd 2 >"$WORK/fd.log" </dev/null
sf_ok log --compress --source stdin "$IMG" <"$WORK/fd.log" 2>/dev/null
every_log "$IMG" compressed-fd
newimg
timeout 60 python3 "$SF_SRC/bench/can_mix.py" j1939 2 >"$WORK/j.log" </dev/null
sf_ok log --compress --chunk 512 --source stdin "$IMG" <"$WORK/j.log" 2>/dev/null
every_log "$IMG" compressed-j1939-512
log "compressed: a packed stream damaged under a good CRC is malformed in both readers"
python3 - "$WORK/cbase.SFL" "$WORK/cbad.SFL" <<'PY'
import struct, sys
sys.path.insert(0, __import__("os").environ["SF_SRC"] + "/tests/scripts")
from sfl_damage import reseal
d = bytearray(open(sys.argv[1], "rb").read())
o = 4096                                   # block 1: compressed
assert struct.unpack_from("<H", d, o + 6)[0] == 3
d[o + 48 + 8] = 0x7F                       # its first tag: an entry that does not exist
reseal(d, o)
open(sys.argv[2], "wb").write(d)
PY
compare "$WORK/cbad.SFL" "compressed, bad stream" "damaged: malformed 1"

# ---- seeded damage ----------------------------------------------------------------------
log "seeded damage: seed $SEED, $VARIANTS variants of a 4 KiB and a 512-byte log"
declare -A verdicts=()
for ((i = 0; i < VARIANTS; i++)); do
    s=$((SEED * 100000 + i))
    base=$WORK/base.SFL other=$WORK/other.SFL
    ((i % 2)) && base=$WORK/base512.SFL other=$WORK/other512.SFL
    ((i % 4 == 2)) && base=$WORK/cbase.SFL            # compressed blocks (issue 29)
    what=$(python3 "$DMG" "$s" "$base" "$other" "$WORK/dmg.SFL" </dev/null) ||
        fail "sfl_damage.py seed $s failed"
    compare "$WORK/dmg.SFL" "seed $s ($what)"
    python3 "$DMG" --check "$base" "$WORK/dmg.SFL" </dev/null ||
        fail "seed $s ($what): a block unchanged at its place did not come back"
    v=$(cat "$WORK/ref.verdict")
    for k in $(sed 's/^damaged: //; s/, /\n/g' <<<"$v" | awk '{print $1}'); do
        verdicts[$k]=1
    done
done
echo "verdict kinds seen: ${!verdicts[*]}" >&2
echo "$compared decodes agree between export and the independent reader" >&2
