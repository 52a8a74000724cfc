#!/usr/bin/env bash
# Issue 26 item 3 (b): recovery after the last checkpoint re-attaches every valid block of
# the file, skipping the bad ones exactly as the readers skip them, and counts those.
# The logcut helper writes a framed log through the streaming path and stops as a killed
# writer does (the entry keeps the checkpoint's size, the blocks after it are on the medium);
# tests/scripts/recover_damage.py then damages blocks of that unsynced tail on the image.
#   - the reproducer: 34 blocks, no checkpoint after the header, block 3 corrupted (before
#     the fix: 2 blocks re-attached, 32 good ones dropped and nothing counted);
#   - seeded variants (several bad blocks, wild seqs re-sealed, swaps, copies, zeroed
#     blocks) on exFAT and FAT32;
# and each time: `fsck --json` finds exactly the valid blocks up to the last one at its
# place (recovered_blocks) and the bad ones among them (recovered_damaged), the text says
# the same, `fsck --repair` re-attaches them, a second fsck and fsck.fat/fsck.exfat are
# clean, `streamfat export` gives the frames of every valid block in order and none other,
# and its count of skipped blocks (docs/FORMAT.md's verdict, without dirty-tail: a flip
# past `used` loses nothing) is fsck's count.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool python3
export SF_TIMEOUT=120
img=$FASTWORK/r.img
DMG=$SF_SRC/tests/scripts/recover_damage.py
SEED=${SF_SEED:-1}
VARIANTS=3
[[ ${SF_LONG:-0} == 1 ]] && VARIANTS=40

indep_clean() {
    if [[ $1 == exfat ]]; then run_fsck_exfat "$img"; else run_fsck_fat "$img"; fi
}

# one FS FILE_ID BLOCKS CKPT SEED SPEC
one() {
    local fs=$1 fid=$2 nb=$3 ck=$4 seed=$5 spec=$6 rc line damaged valid last seqs what
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 64M "$img" >/dev/null
    run_helper logcut "$img" /LOG00001.SFL "$fid" "$nb" "$ck" >/dev/null
    line=$(python3 "$DMG" "$img" "$fid" "$nb" "$ck" "$seed" "$spec" </dev/null) ||
        fail "$fs: recover_damage.py: $line"
    read -r _ damaged valid last seqs what <<<"$line"
    what="$fs $nb blocks, checkpoint at $ck, ${what#\# }"
    log "$what: expect $valid valid and $damaged damaged blocks re-attached"
    rc=0; sf fsck --json "$img" >"$WORK/fsck.json" || rc=$?
    python3 - "$WORK/fsck.json" "$valid" "$damaged" <<'PY' || fail "$what: fsck --json"
import json, sys
j = json.load(open(sys.argv[1]))
got = (j["recovered_blocks"], j.get("recovered_damaged"))
want = (int(sys.argv[2]), int(sys.argv[3]))
if got != want:
    sys.exit(f"recovered_blocks, recovered_damaged {got}, expected {want}")
PY
    rc=0; sf fsck --repair "$img" >"$WORK/fsck.out" || rc=$?
    if ((valid)); then
        ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$what: fsck --repair exited $rc, expected 1"; }
        grep -q ": $valid log blocks ([0-9]* bytes) re-attached, $damaged damaged blocks among them" "$WORK/fsck.out" ||
            { cat "$WORK/fsck.out" >&2; fail "$what: the text does not say $valid re-attached, $damaged damaged"; }
    fi
    rc=0; sf fsck "$img" >"$WORK/fsck.out" || rc=$?
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$what: not clean after repair (exit $rc)"; }
    indep_clean "$fs"
    rc=0; sf export "$img" /LOG00001.SFL >"$WORK/frames.txt" 2>"$WORK/export.err" || rc=$?
    python3 - "$WORK/frames.txt" "$WORK/export.err" "$fid" "$seqs" "$damaged" "$rc" <<'PY' || { cat "$WORK/export.err" >&2; fail "$what: export after repair"; }
import re, sys
frames = [l.split()[2] for l in open(sys.argv[1]) if "#" in l]
fid = int(sys.argv[3], 16) & 0xFFFF
seqs = [int(s) for s in sys.argv[4].split(",")]
want = [f"{0x100 + r:03X}#{(fid << 48) | (s * 100 + r):016X}" for s in seqs for r in range(20)]
if frames != want:
    sys.exit(f"{len(frames)} frames, expected {len(want)} (the valid blocks, in order)")
err = open(sys.argv[2]).read()
m = re.findall(r"damaged: (.*)", err)
# the blocks the readers skip: every count but those that lose no block
keep = ("dirty-tail", "bad-can", "truncated")
total = sum(int(x.split()[-1]) for x in m[-1].split(", ")
            if x.rsplit(" ", 1)[0] not in keep) if m else 0
damaged, rc = int(sys.argv[5]), int(sys.argv[6])
if total != damaged or rc != (1 if m else 0):
    sys.exit(f"export counts {total} damaged blocks (exit {rc}), fsck {damaged}")
PY
}

for fs in exfat fat32; do
    one "$fs" aa01 34 0 0 bad:3                 # the reproducer
    one "$fs" ab02 34 10 0 bad:11,12,20,34      # the first after the checkpoint, a run, the last
    for ((i = 0; i < VARIANTS; i++)); do
        one "$fs" "c$i"0"$((i % 10))" 30 $((i % 3 * 5)) $((SEED * 1000 + i)) seed
    done
done
echo "t_recover_past_bad: ok"
