#!/bin/bash
# Power cuts during logging (tests/helpers/powercut.c has the workload and the checks):
# every device write of the small workload is a cut point, on exFAT and FAT32, for each
# policy for unsynced writes (keep, drop, tear = sectors kept or dropped at random, torn =
# kept, dropped or torn inside a sector). After each cut the helper verifies the files as
# the cut left them, runs our checker and repair (sf_check), verifies again and runs the
# next logging session; "lost" (durable frames gone) must be 0.
#
# A sample of the cut states is dumped and given to the independent checker (fsck.exfat -n
# / fsck.fat -n) before and after `streamfat fsck --repair`: before, it may complain (leaked
# clusters, the dirty flag: counted); after, it must call the volume clean.
#
# Every case again with encryption on (PC_ENCRYPT=1, issue 29): nothing lost either.
#
# SF_LONG=1: the large workload at 3000 seeded random cut points per case as well.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
PC=$SF_TESTS_BIN/powercut
[[ -x $PC ]] || fail "helper not built: $PC"
have_exfat=0; have_fat=0
command -v fsck.exfat >/dev/null 2>&1 && have_exfat=1
command -v fsck.fat >/dev/null 2>&1 && have_fat=1
DUMPS=${SF_POWERCUT_DUMPS:-6}

summary=$WORK/summary.txt
: >"$summary"
run_case() {    # FS POLICY ARGS...
    local fs=$1 pol=$2 out=$WORK/out.txt rc=0
    shift 2
    mkdir -p "$WORK/dump"
    rm -f "$WORK"/dump/*.img
    timeout 1800 "$PC" --fs "$fs" --policy "$pol" --dump "$WORK/dump" --dump-count "$DUMPS" \
        "$@" >"$out" 2>"$WORK/err.txt" || rc=$?
    if ((rc != 0)) || has_sanitizer_report "$WORK/err.txt"; then
        head -40 "$WORK/err.txt" >&2
        fail "powercut --fs $fs --policy $pol $*: exit $rc"
    fi
    local line flagged_ext=0 n=0
    line=$(tail -1 "$out")
    [[ $line == *" lost=0 "* ]] || fail "records lost: $line"
    # The independent checker on the dumped states, before and after our repair.
    for img in "$WORK"/dump/*.img; do
        [[ -e $img ]] || continue
        n=$((n + 1))
        local chk=
        if [[ $fs == exfat ]] && ((have_exfat)); then chk=exfat
        elif [[ $fs == fat32 ]] && ((have_fat)); then chk=fat; fi
        if [[ -n $chk ]]; then
            local rc2=0
            if [[ $chk == exfat ]]; then
                timeout 120 fsck.exfat -n "$img" </dev/null >"$WORK/x.out" 2>&1 || rc2=$?
                grep -q ': clean\. directories' "$WORK/x.out" || rc2=1
            else
                timeout 120 fsck.fat -n "$img" </dev/null >"$WORK/x.out" 2>&1 || rc2=$?
                grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' \
                    "$WORK/x.out" && rc2=1
            fi
            ((rc2 == 0)) || flagged_ext=$((flagged_ext + 1))
        fi
        local frc=0
        sf fsck --repair "$img" >/dev/null || frc=$?
        ((frc == 0 || frc == 1)) || fail "streamfat fsck --repair $(basename "$img"): exit $frc"
        sf_ok fsck "$img" >/dev/null
        if [[ $chk == exfat ]]; then run_fsck_exfat "$img"
        elif [[ $chk == fat ]]; then run_fsck_fat "$img"; fi
        "$PC" --verify "$img" >/dev/null 2>"$WORK/v.txt" ||
            { cat "$WORK/v.txt" >&2; fail "$(basename "$img") does not verify after repair"; }
        rm -f "$img"
    done
    echo "$line checked_ext=$n flagged_ext=$flagged_ext" | tee -a "$summary" >&2
}

for fs in exfat fat32; do
    for pol in keep drop tear torn; do
        run_case "$fs" "$pol" --linear
    done
done
# compressed record blocks (issue 29): the same cuts, nothing lost up to the last checkpoint
for fs in exfat fat32; do
    for pol in keep torn; do
        run_case "$fs" "$pol" --linear --compress 1
    done
done
# Issue 29: the same cuts with every file sealed (PC_ENCRYPT: the helper seals to a test
# key and reads with its secret key; fsck --repair above runs without any key).
export PC_ENCRYPT=1
for fs in exfat fat32; do
    for pol in keep drop tear torn; do
        run_case "$fs" "$pol" --linear
    done
done
unset PC_ENCRYPT
# Issue 29, both stages together: compressed blocks sealed after packing, the same cuts
export PC_ENCRYPT=1
for fs in exfat fat32; do
    for pol in keep torn; do
        run_case "$fs" "$pol" --linear --compress 1
    done
done
unset PC_ENCRYPT
if [[ ${SF_LONG:-0} == 1 ]]; then
    for fs in exfat fat32; do
        for pol in keep drop tear torn; do
            run_case "$fs" "$pol" --size large --random 3000 --seed 7
        done
    done
fi
log "summary"
cat "$summary" >&2
