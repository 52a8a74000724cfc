#!/bin/bash
# A log start that fails leaves nothing behind (issue 15, item 3). On a full volume (FAT16,
# FAT32, exFAT) `streamfat log` run three times fails three times with a message, and no
# LOGnnnnn.SFL is left (before: one empty file per try, so a service restarting on a full
# volume filled the directory); the volume stays clean. A power cut at each of the first
# device writes of such a start (STREAMFAT_FAULT=cut=N) leaves at most one empty log file,
# which `fsck --repair` removes. `fsck` reports empty *.SFL files (no header block) and
# `--repair` removes them; a log file with data stays.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf

logs() { timeout 60 "$SF" ls -R "$1" 2>/dev/null | grep -ci '\.sfl$' || true; }

for fs in fat16 fat32 exfat; do
    img=$FASTWORK/$fs.img
    case $fs in
    fat32) sf_ok mkfs -q -t fat32 -c 512 -s 40M "$img" ;;
    *) sf_ok mkfs -q -t $fs -s 32M "$img" ;;
    esac
    # fill it: big blocks first, then 4 KiB ones (put keeps whole --bs blocks)
    sf put --keep-partial "$img" /dev/zero fill1.bin >/dev/null 2>&1 || true
    sf put --keep-partial --bs 4K "$img" /dev/zero fill2.bin >/dev/null 2>&1 || true
    sf_ok fsck "$img" >/dev/null
    cp --sparse=always "$img" "$FASTWORK/full.img"
    for try in 1 2 3; do
        sf_err 1 log --source gen:can,rate=1000 --duration 1 "$img"
    done
    n=$(logs "$img")
    ((n == 0)) || fail "$fs: $n log files left by three failed starts"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep $fs "$img"
    log "$fs: three failed starts on a full volume, no file left, clean"

    # a power cut in a start that fails
    for n in $(seq 1 10); do
        cp --sparse=always "$FASTWORK/full.img" "$img"
        STREAMFAT_FAULT=cut=$n timeout 120 "$SF" log --source gen:can,rate=1000 --duration 1 \
            "$img" >/dev/null 2>"$WORK/err" || true
        has_sanitizer_report "$WORK/err" && { cat "$WORK/err" >&2; fail "$fs cut=$n: sanitizer"; }
        k=$(logs "$img")
        ((k <= 1)) || fail "$fs cut=$n: $k log files after the cut"
        rc=0
        sf fsck --repair "$img" >/dev/null 2>&1 || rc=$?
        ((rc == 0 || rc == 1)) || fail "$fs cut=$n: fsck --repair exit $rc"
        ((k = $(logs "$img"), k == 0)) || fail "$fs cut=$n: an empty log file left after repair"
        sf_ok fsck "$img" >/dev/null
        run_fsck_indep $fs "$img"
    done

    # fsck removes empty log files, keeps real ones
    case $fs in
    fat32) sf_ok mkfs -q --force -t fat32 -c 512 -s 40M "$img" ;;
    *) sf_ok mkfs -q --force -t $fs -s 32M "$img" ;;
    esac
    sf_ok log --source gen:can,rate=1000 --duration 1 "$img" >/dev/null
    sf_ok mkdir "$img" sub
    sf_ok put "$img" /dev/null LOG00009.SFL
    sf_ok put "$img" /dev/null sub/run.sfl
    rc=0
    sf fsck "$img" >"$WORK/fsck.out" || rc=$?
    ((rc == 1)) || fail "$fs: fsck on empty log files: exit $rc"
    [[ $(grep -c 'empty log file' "$WORK/fsck.out") == 2 ]] || fail "$fs: empty log files not reported"
    rc=0
    sf fsck --repair "$img" >/dev/null || rc=$?
    ((rc == 1)) || fail "$fs: fsck --repair: exit $rc"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep $fs "$img"
    [[ $(logs "$img") == 1 ]] || fail "$fs: repair did not keep exactly the real log"
    sf_ok export "$img" LOG00001.SFL >/dev/null
    log "$fs: fsck --repair removed 2 empty log files, kept LOG00001.SFL"
done
