#!/bin/bash
# A power cut at every device write of `put -f` over an existing file (issue 15, item 1),
# through the fault device of the CLI (STREAMFAT_FAULT=cut=N,policy=P: cli/common/fault_env.c,
# sf_faultbd, the device of the power-cut harness): N = 1, 2, 3 ... until the put gets
# through. After each cut, on the image as the cut left it: the file holds the old or the
# new bytes in full and there is at most one temporary '.a.bin.sftmp'; after
# `streamfat fsck --repair` no temporary file is left, the file is unchanged, and our
# checker and fsck.fat -n / fsck.exfat -n call the volume clean. FAT16, FAT32 (32 KiB
# clusters, so the allocation takes few FAT writes) and exFAT. The unsynced writes at the
# cut are kept, dropped or torn (reordered, sectors atomic) in turn, by N. FAT volumes have
# one FAT here (the FAT copies' writes do not bear on the swap; they double the count);
# SF_LONG=1 runs two FATs and all three policies at every N.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf

content() {   # IMG: old, new or other
    local c=other
    if timeout 60 "$SF" get "$1" a.bin "$FASTWORK/got" >/dev/null 2>&1; then
        cmp -s "$FASTWORK/got" "$WORK/old" && c=old
        cmp -s "$FASTWORK/got" "$WORK/new" && c=new
    fi
    rm -f "$FASTWORK/got"
    echo $c
}

temps() { timeout 60 "$SF" ls "$1" 2>/dev/null | grep -c '\.sftmp$' || true; }

policies=(keep drop tear)
fats=1              # each FAT copy adds its writes of the allocation and the release
[[ -n ${SF_LONG:-} ]] && fats=2
# seeded_bytes N SEED: N pseudo-random bytes from SEED (an LCG; the same bytes every run)
seeded_bytes() {
    local n=$1 x=$2 i b out=
    for ((i = 0; i < n; i++)); do
        x=$(((x * 1103515245 + 12345) & 0x7fffffff))
        printf -v b '\\%03o' $(((x >> 16) & 255))
        out+=$b
    done
    printf "$out"
}
# A fixed seed by default, so that make check runs the same cuts every time (SF_SEED=$RANDOM
# explores); the fault device's seeds and both files' bytes all come from it.
seed=${SF_SEED:-1500}
log "seed $seed"
seeded_bytes 5000 "$seed" >"$WORK/old"
seeded_bytes 7000 "$((seed + 7))" >"$WORK/new"
total=0
for fs in fat16 fat32 exfat; do
    base=$FASTWORK/$fs.base
    case $fs in
    fat16) sf_ok mkfs -q -t fat16 --fats "$fats" -c 4K -s 24M "$base" ;;
    fat32) sf_ok mkfs -q -t fat32 --fats "$fats" -c 32K -s 2100M "$base" ;;
    exfat) sf_ok mkfs -q -t exfat -s 16M "$base" ;;
    esac
    sf_ok put "$base" "$WORK/old" a.bin
    img=$FASTWORK/$fs.img
    olds=0 news=0 tmps=0 cuts=0 done=0
    for ((n = 1; n <= 400 && !done; n++)); do
        if [[ -n ${SF_LONG:-} ]]; then
            pols=("${policies[@]}")
        else
            pols=("${policies[n % 3]}")
        fi
        for pol in "${pols[@]}"; do
            what="$fs cut=$n policy=$pol seed=$((seed + n))"
            cp --sparse=always "$base" "$img"
            rc=0
            STREAMFAT_FAULT=cut=$n,policy=$pol,seed=$((seed + n)) timeout 120 "$SF" put -F \
                --no-direct --bs 4K "$img" "$WORK/new" a.bin >/dev/null 2>"$WORK/err" || rc=$?
            has_sanitizer_report "$WORK/err" && { cat "$WORK/err" >&2; fail "$what: sanitizer"; }
            if ((rc == 0)); then
                [[ $(content "$img") == new ]] || fail "$fs: the uncut put did not replace the file"
                sf_ok fsck "$img" >/dev/null
                done=1
                break
            fi
            c=$(content "$img")
            [[ $c == old || $c == new ]] || fail "$what: a.bin is neither the old nor the new file"
            t=$(temps "$img")
            ((t <= 1)) || fail "$what: $t temporary files"
            rc=0
            sf fsck --repair "$img" >/dev/null 2>&1 || rc=$?
            ((rc == 0 || rc == 1)) || fail "$what: fsck --repair exit $rc"
            [[ $(temps "$img") == 0 ]] || fail "$what: a temporary file is left after repair"
            [[ $(content "$img") == "$c" ]] || fail "$what: repair changed a.bin ($c before)"
            sf_ok fsck "$img" >/dev/null
            run_fsck_indep $fs "$img"
            [[ $c == old ]] && olds=$((olds + 1)) || news=$((news + 1))
            tmps=$((tmps + t))
            cuts=$((cuts + 1))
        done
    done
    ((done)) || fail "$fs: the put never got through"
    log "$fs: the put makes $((n - 1)) device writes; $cuts cut states: old file in $olds, new in $news, a temporary file in $tmps (all removed by repair, then clean)"
    total=$((total + cuts))
done
log "$total cut states, all old-or-new, all repaired clean"
