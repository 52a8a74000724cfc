#!/bin/bash
# streamfat log --compress (issue 29, compressed record blocks, docs/FORMAT.md):
#   - gen:can at 1,000,000 frames/s for 5 s with --compress: zero drops, every frame decoded
#     in order (the sequence checker), fsck clean, and fewer bytes than a quarter of the plain
#     records (gen:can packs about 7x);
#   - ls -l and ls --json show the file's compression; plan --from-log takes it into its
#     card-life figures, plan --compression a number;
#   - --config {"compress": true | LEVEL} and --print-config;
#   - bad usage: an unknown level, --compress with --raw or the flight recorder (exit 2).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool fsck.exfat python3

IMG=$FASTWORK/z.img
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 1G "$IMG"

log "gen:can,rate=1000000 for 5 s with --compress"
rc=0
log_json "$WORK/a.json" --compress --source gen:can,rate=1000000 --duration 5 "$IMG" || rc=$?
cat "$WORK/a.json" >&2
((rc == 0)) || fail "log --compress exited $rc (3 = drops)"
jcheck "$WORK/a.json" 'j["records_dropped"] == 0 and j["records_in"] == j["records_written"]'
jcheck "$WORK/a.json" 'j["records_in"] >= 1000000 * 5 * 0.5'
jcheck "$WORK/a.json" 'j["bytes_written"] * 4 < j["records_in"] * 32'
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("compressed: %.2f bytes a frame written (plain: 32)" % (j["bytes_written"] / j["records_in"]))' "$WORK/a.json" >&2
N=$(jget "$WORK/a.json" records_in)
run_fsck_exfat "$IMG"
sf_ok fsck "$IMG" >/dev/null
decode "$IMG" --gen 1 --clean --expect-frames "$N"
jcheck "$WORK/dec.json" "j['drop_sum'] == 0 and j['ok']"

log "ls -l, ls --json, plan --from-log"
sf_ok ls -l "$IMG" >"$WORK/ls.txt"
cat "$WORK/ls.txt" >&2
grep -qE '^file +[0-9]+ .* [0-9]+\.[0-9]x  LOG00001\.SFL$' "$WORK/ls.txt" || fail "ls -l shows no compression"
sf_ok ls --json "$IMG" >"$WORK/ls.json"
python3 - "$WORK/ls.json" <<'PY' || fail "ls --json: no compression above 4"
import json, sys
j = json.load(open(sys.argv[1]))
assert all(e["compression"] > 4 for e in j if e["name"].endswith(".SFL")), j
PY
sf_ok cat "$IMG" LOG00001.SFL >"$WORK/z.SFL"
sf_ok plan --rate 2MB/s --tbw 20TB --from-log "$WORK/z.SFL" --json >"$WORK/plan.json"
jcheck "$WORK/plan.json" 'j["compression"] > 4 and abs(j["lifetime_days"] - 20e12 / (2e6 / j["compression"]) / 86400) < 0.01'
sf_ok plan --rate 2MB/s --tbw 20TB --compression 5 >"$WORK/plan.txt"
grep -q 'compressed 5.00x (log --compress): 0.40 MB/s reach the device; the card lasts 578.7 days instead of 115.7 days' "$WORK/plan.txt" ||
    { cat "$WORK/plan.txt" >&2; fail "plan --compression: no card-life line"; }
# a plain log measures 1x
rm -f "$WORK/p.img"; sf_ok mkfs -q -t exfat -s 64M "$WORK/p.img"
sf_ok log --source gen:can --max-records 20000 "$WORK/p.img" 2>/dev/null
sf_ok ls -l "$WORK/p.img" >"$WORK/lsp.txt"
if grep -qE 'x  LOG' "$WORK/lsp.txt"; then fail "ls -l shows a compression for a plain log"; fi
sf_ok cat "$WORK/p.img" LOG00001.SFL >"$WORK/p.SFL"
sf_ok plan --rate 2MB/s --from-log "$WORK/p.SFL" --json >"$WORK/plan2.json"
jcheck "$WORK/plan2.json" 'j["compression"] == 1'
sf_err 1 plan --rate 2MB/s --from-log "$WORK/nonexistent.SFL"
sf_err 2 plan --rate 2MB/s --compression 0.5
sf_err 2 plan --rate 2MB/s --compression 2 --from-log "$WORK/z.SFL"

log "--config and --print-config"
printf '{"compress": true, "source": "gen:can", "max-records": 5000}\n' >"$WORK/c.json"
sf_ok log --config "$WORK/c.json" --print-config "$IMG" >"$WORK/pc.json"
jcheck "$WORK/pc.json" 'j["compress"] is True'
printf '{"compress": 1, "source": "gen:can", "max-records": 5000}\n' >"$WORK/c1.json"
sf_ok log --config "$WORK/c1.json" --print-config "$IMG" >"$WORK/pc1.json"
jcheck "$WORK/pc1.json" 'j["compress"] == "1"'
rm -f "$WORK/k.img"; sf_ok mkfs -q -t exfat -s 64M "$WORK/k.img"
sf_ok log --config "$WORK/c1.json" "$WORK/k.img" 2>/dev/null
sf_ok ls -l "$WORK/k.img" | matches -E '[0-9]x  LOG00001'

log "bad usage"
sf_err 2 log --compress=2 --source gen:can --max-records 10 "$IMG"
sf_err 2 log --compress=x --source gen:can --max-records 10 "$IMG"
sf_err 2 log --compress --raw --source gen:raw --max-bytes 1M "$IMG"
sf_err 2 log --compress --source gen:can --pre 1s --trigger can:100/7FF "$IMG"
printf '{"compress": [1]}\n' >"$WORK/bad.json"
sf_err 2 log --config "$WORK/bad.json" --source gen:can "$IMG"
log "ok"
