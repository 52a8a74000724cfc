#!/bin/bash
# A producer faster than the device: a tiny ring, gen:can unpaced. Every refused frame is
# counted (records_in == records_written + records_dropped == frames generated; the writer's
# DROP records are records_own, apart), the DROP records in the files
# add up to records_dropped and to the holes in the frame sequence, the files decode cleanly,
# the exit status is 3, and the volume is clean.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool fsck.exfat python3

IMG=$WORK/drops.img
GEN=3000000
late=()

# check_counts JSON GEN: the accounting of one run against the decoded files ($WORK/dec.json).
check_counts() {
    local j=$1 gen=$2
    jcheck "$j" "j['records_dropped'] > 0 and j['records_offered'] == $gen and j['source_dropped'] == j['records_dropped']"
    jcheck "$WORK/dec.json" "j['drop_sum'] == $(jget "$j" records_dropped) and j['drop_records'] > 0 and j['damage'] == 0"
    jcheck "$WORK/dec.json" "j['frames'] == $gen - $(jget "$j" records_dropped)"
    # records_in counts what producers offered (written or dropped), not the writer's own
    # DROP records (records_own)
    python3 - "$j" "$WORK/dec.json" "$gen" <<'PY' || late+=("$j: records_in != frames generated")
import json, sys
j, d, gen = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
if j["records_in"] != gen or j["records_written"] != d["frames"] or j["records_own"] != d["drop_records"]:
    print("records_in %d (generated %d), records_written %d (frames in the files %d), "
          "records_own %d (DROP records in the files %d)" % (j["records_in"], gen,
          j["records_written"], d["frames"], j["records_own"], d["drop_records"]),
          file=sys.stderr)
    sys.exit(1)
PY
}

log "gen:can unpaced, $GEN frames into a 16 KiB ring of 4 KiB blocks"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 256M "$IMG"
rc=0
log_json "$WORK/a.json" --source gen:can --max-records $GEN --ring 16K --chunk 4K --qd 1 "$IMG" || rc=$?
cat "$WORK/a.json" >&2
((rc == 3)) || fail "exit status $rc, expected 3 (records dropped)"
jcheck "$WORK/a.json" 'j["records_in"] == j["records_written"] + j["records_dropped"] and j["exit_status"] == 3'
run_fsck_exfat "$IMG"
decode "$IMG" --gen 1 --clean --allow-drops --generated $GEN
cat "$WORK/dec.json" >&2
check_counts "$WORK/a.json" $GEN

log "four producers at once into a small ring"
rm -f "$WORK/multi.img"; sf_ok mkfs -q -t exfat -s 256M "$WORK/multi.img"
rc=0
log_json "$WORK/b.json" --source gen:can,channels=4 --max-records 2000000 --ring 64K --chunk 4K "$WORK/multi.img" || rc=$?
((rc == 3)) || { cat "$WORK/b.json" >&2; fail "exit status $rc, expected 3"; }
decode "$WORK/multi.img" --gen 4 --clean --allow-drops --generated 2000000
check_counts "$WORK/b.json" 2000000
run_fsck_exfat "$WORK/multi.img"

if ((${#late[@]})); then
    printf '%s\n' "${late[@]}" >&2
    fail "statistics: records in / written / own do not match the files"
fi
