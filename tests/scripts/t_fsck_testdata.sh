#!/usr/bin/env bash
# Acceptance (issue 6, fsck): on every image of ../shared/testdata (exFAT from exfatprogs and
# exfat-rawtools, FAT12/16/32 from dosfstools; see its README):
#   - `streamfat fsck` agrees with the independent checker (fsck.exfat -n / fsck.fat -n) or
#     finds strictly more: where the independent one reports a problem, ours exits 1 or 2;
#   - `streamfat fsck --repair` on a copy exits 0 or 1, after which our fsck and the
#     independent checker both call the copy clean;
#   - no crash, hang or sanitizer report (sf() checks).
# The exceptions, each justified by the image:
#   exit 2 (not repairable):
#     bad_bitmap_size      the bitmap is smaller than the cluster count: fsck.exfat cannot
#                          read it either, and rebuilding a bitmap is not done
#     fat12_first_cluster  FAT12 is checked only, never repaired
#     huge                 the image holds 100 MiB of a volume whose BPB claims 80 GiB
#   independent checker not clean after our repair:
#     bad_dentries2        vendor extension / allocation entries (0xE0, 0xE1) after the name
#                          entries are valid (exFAT spec 7.8, 7.9) and kept; fsck.exfat 1.2.0
#                          calls them "failed to get name dentry"
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool xxd fsck.exfat fsck.fat
td=$SF_TESTDATA
[[ -d $td ]] || fail "no test data at $td"
export SF_TIMEOUT=120
img=$FASTWORK/img
rep=$FASTWORK/rep

not_repairable=" bad_bitmap_size fat12_first_cluster huge "
ref_quirk=""   # images the independent checker flags and we call clean: none
indep_differs=" bad_dentries2 $ref_quirk "

# indep KIND IMG: the independent checker's exit status (0 clean).
indep() {
    local rc=0
    if [[ $1 == exfat ]]; then
        timeout 60 fsck.exfat -n "$2" </dev/null >"$WORK/indep.out" 2>&1 || rc=$?
        # exit 0 must come with the clean verdict
        ((rc == 0)) && ! grep -q ': clean\. ' "$WORK/indep.out" && rc=99
    else
        timeout 60 fsck.fat -n "$2" </dev/null >"$WORK/indep.out" 2>&1 || rc=$?
    fi
    echo "$rc"
}
ours() {
    local rc=0
    sf fsck "$@" >"$WORK/ours.out" || rc=$?
    echo "$rc"
}

# check KIND NAME: the rules above on $img.
check() {
    local kind=$1 name=$2 short=$2 ref our rr after again
    short=${short%__exfat.img}
    short=${short%__error.img}
    short=${short#check-}
    short=${short%.fsck}
    ref=$(indep "$kind" "$img")
    our=$(ours "$img")
    ((our <= 2)) || fail "$name: fsck exited $our"
    if ((ref != 0 && our == 0)) && [[ $ref_quirk != *" $name "* ]]; then
        cat "$WORK/indep.out" >&2
        fail "$name: the independent checker finds problems (exit $ref), streamfat fsck none"
    fi
    cp --sparse=always "$img" "$rep"
    rr=$(ours --repair "$rep")
    if ((rr == 2)); then
        [[ $not_repairable == *" $short "* ]] || { cat "$WORK/ours.out" >&2; fail "$name: not repairable"; }
        echo "$name: independent $ref, ours $our, repair 2 (expected: see the top of this file)"
        return
    fi
    ((rr <= 1)) || fail "$name: fsck --repair exited $rr"
    again=$(ours "$rep")
    ((again == 0)) || { cat "$WORK/ours.out" >&2; fail "$name: not clean after our repair"; }
    after=$(indep "$kind" "$rep")
    if ((after != 0)); then
        [[ $indep_differs == *" $short "* || $indep_differs == *" $name "* ]] ||
            { cat "$WORK/indep.out" >&2; fail "$name: the independent checker is not satisfied after repair"; }
    fi
    echo "$name: independent $ref, ours $our, repair $rr, independent after $after"
}

for f in "$td"/exfatprogs-corrupt/*.tar.xz "$td"/exfat-rawtools/*.tar.xz; do
    rm -rf "$FASTWORK/x"
    mkdir "$FASTWORK/x"
    tar -C "$FASTWORK/x" -xf "$f"
    mv "$FASTWORK"/x/*.img "$img"
    check exfat "$(basename "$f" .tar.xz)"
done
for f in "$td"/dosfstools/check-*.fsck "$td"/dosfstools/*.xxd; do
    rm -f "$img"
    xxd -r "$f" "$img"
    size=$(stat -c %s "$img")
    ((size % 512 == 0)) || truncate -s $(((size + 511) / 512 * 512)) "$img"
    check fat "$(basename "$f")"
done
