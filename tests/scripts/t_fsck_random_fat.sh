#!/usr/bin/env bash
# Acceptance (issue 15, item 2): seeded random damage of FAT16 and FAT32 directory sectors
# (root and subdirectories; random bytes over whole sectors, and plausible entries with
# wrong types, attributes, first clusters, sizes and names). For every seed: after
# `streamfat fsck --repair`, fsck.fat -n is clean, a second `streamfat fsck` is clean, the
# boot label was not taken from a damaged entry, and every file that fsck.fat -a keeps on a
# copy of the same damaged image (same path, same bytes) is still there. The harness is
# tests/scripts/fsck_random.py (it prints the seed and the failing verdicts).
# make check: 100 seeds per file system (half per damage mode; about 0.2 s a seed under
# ASan; the code before the fix failed 277 and 287 of 300); SF_LONG=1: 2,000 each.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.fat mcopy python3
if [[ ${SF_LONG:-0} == 1 ]]; then n16=2000 n32=2000; else n16=100 n32=100; fi
: "${SF_FSCK_SEEDS16:=$n16}" "${SF_FSCK_SEEDS32:=$n32}"
rc=0
for fs in fat16 fat32; do
    n=SF_FSCK_SEEDS${fs#fat}
    mkdir -p "$FASTWORK/$fs"
    log "$fs: seeds 0..$((${!n} - 1))"
    python3 "$SF_SRC/tests/scripts/fsck_random.py" --sf "$SF" --fs "$fs" --seeds "0:${!n}" \
        --work "$FASTWORK/$fs" ${SF_FSCK_KEEP:+--keep "$SF_FSCK_KEEP"} >&2 || rc=1
    rm -rf "$FASTWORK/$fs"
done
((rc == 0)) || fail "repaired volumes fail (seeds above)"
