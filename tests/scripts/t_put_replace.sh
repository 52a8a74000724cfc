#!/bin/bash
# `put -f` over an existing file keeps the old file on every failure (issue 15, item 1):
# the new copy goes to '.NAME.sftmp' and takes the old one's place only when whole
# (docs/DESIGN.md, "Replacing a file"). FAT16, FAT32 and exFAT:
# - no room for both copies: refused before writing (the image is byte for byte unchanged),
#   one line saying so; from standard input (size unknown) the copy fails with ENOSPC and
#   the old file stays; a copy that fits replaces it;
# - EIO from the device (STREAMFAT_FAULT=fail_at=N, N = 1, 2, 3 ... until it gets through):
#   the old or the new file whole, and after `fsck --repair` no temporary file, our checker
#   and fsck.fat -n / fsck.exfat -n clean;
# - an unreadable source (/proc/self/mem reads fail with EIO): old file intact, nothing left;
# - SIGKILL mid-copy: old file intact, at most one temporary file, removed by
#   `fsck --repair`, then clean.
# Power cuts at every write of a replace: t_put_replace_cut.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf

# content IMG OLD NEW: "old", "new" or "other" (a.bin missing or different).
content() {
    if ! timeout 60 "$SF" get "$1" a.bin "$WORK/got" >/dev/null 2>&1; then
        echo other
    elif cmp -s "$WORK/got" "$2"; then
        echo old
    elif cmp -s "$WORK/got" "$3"; then
        echo new
    else
        echo other
    fi
    rm -f "$WORK/got"
}

temps() { timeout 60 "$SF" ls "$1" 2>/dev/null | grep -c '\.sftmp$' || true; }

# repaired FS IMG WHAT: fsck --repair removes what an interruption left; then clean.
repaired() {
    local rc=0
    sf fsck --repair "$2" >/dev/null || rc=$?
    ((rc == 0 || rc == 1)) || fail "$3: fsck --repair exit $rc"
    [[ $(temps "$2") == 0 ]] || fail "$3: a temporary file is left after fsck --repair"
    sf_ok fsck "$2" >/dev/null
    run_fsck_indep "$1" "$2"
}

mkvol() {   # FS IMG SIZE_MIB
    case $1 in
    fat32) sf_ok mkfs -q --force -t fat32 -c 512 -s "${3}M" "$2" ;;
    *) sf_ok mkfs -q --force -t "$1" -s "${3}M" "$2" ;;
    esac
}

head -c 100000 /dev/urandom >"$WORK/old_s"
head -c 300000 /dev/urandom >"$WORK/new_s"

for fs in fat16 fat32 exfat; do
    # ---- no room for both copies ----
    S=32
    [[ $fs == fat32 ]] && S=40
    img=$FASTWORK/$fs.img
    mkvol $fs "$img" $S
    head -c $((S * 3 / 8))M /dev/urandom >"$WORK/old"
    head -c $((S * 3 / 8))M /dev/urandom >"$WORK/pad"
    head -c $((S * 3 / 10))M /dev/urandom >"$WORK/new"
    sf_ok put "$img" "$WORK/old" a.bin
    sf_ok put "$img" "$WORK/pad" pad.bin
    cp --sparse=always "$img" "$FASTWORK/before.img"
    sf_err 1 put -F "$img" "$WORK/new" a.bin
    grep -q 'not enough free space for the new copy beside the old one' "$SF_LAST_ERR" ||
        fail "$fs: the refusal does not say why"
    [[ $(grep -vc ': note: ' "$SF_LAST_ERR") == 1 ]] || fail "$fs: the refusal is not one line"
    cmp -s "$img" "$FASTWORK/before.img" || fail "$fs: refused, but the image changed"
    [[ $(content "$img" "$WORK/old" "$WORK/new") == old ]] || fail "$fs: ENOSPC: old file lost"
    # standard input: the size is not known before, the copy runs out of space
    rc=0
    sf put -F "$img" - a.bin <"$WORK/new" >/dev/null || rc=$?
    ((rc == 1)) || fail "$fs: put -F from stdin on a full volume: exit $rc"
    [[ $(content "$img" "$WORK/old" "$WORK/new") == old ]] || fail "$fs: stdin ENOSPC: old file lost"
    [[ $(temps "$img") == 0 ]] || fail "$fs: stdin ENOSPC: temporary file left"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep $fs "$img"
    # a copy that fits beside the old one replaces it
    head -c 1M /dev/urandom >"$WORK/small"
    sf_ok put -F "$img" "$WORK/small" a.bin
    [[ $(content "$img" "$WORK/old" "$WORK/small") == new ]] || fail "$fs: replace that fits"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep $fs "$img"
    log "$fs: ENOSPC refused before writing, old file intact"

    # ---- EIO from the device at each write ----
    mkvol $fs "$img" $S
    sf_ok put "$img" "$WORK/old_s" a.bin
    rm -f "$FASTWORK/before.img"
    cp --sparse=always "$img" "$FASTWORK/base.img"
    olds=0 news=0 runs=0
    for n in 1 2 3 4 5 6 8 12 16 24 32 48 64 128 256 512 1024 2048 4096; do
        cp --sparse=always "$FASTWORK/base.img" "$img"
        rc=0
        STREAMFAT_FAULT=fail_at=$n timeout 300 "$SF" put -F --bs 4K "$img" "$WORK/new_s" a.bin \
            >/dev/null 2>"$WORK/err" || rc=$?
        has_sanitizer_report "$WORK/err" && { cat "$WORK/err" >&2; fail "$fs fail_at=$n: sanitizer"; }
        ((rc == 0)) && break
        ((rc == 1)) && [[ -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "$fs fail_at=$n: exit $rc"; }
        c=$(content "$img" "$WORK/old_s" "$WORK/new_s")
        [[ $c == old || $c == new ]] || fail "$fs fail_at=$n: a.bin is neither the old nor the new file"
        [[ $c == old ]] && olds=$((olds + 1)) || news=$((news + 1))
        (($(temps "$img") <= 1)) || fail "$fs fail_at=$n: more than one temporary file"
        repaired $fs "$img" "$fs fail_at=$n"
        c2=$(content "$img" "$WORK/old_s" "$WORK/new_s")
        [[ $c2 == "$c" ]] || fail "$fs fail_at=$n: repair changed a.bin from $c to $c2"
        runs=$((runs + 1))
    done
    ((rc == 0)) || fail "$fs: put -F still failing at fail_at=$n"
    [[ $(content "$img" "$WORK/old_s" "$WORK/new_s") == new ]] || fail "$fs: unfaulted replace"
    log "$fs: EIO: $runs faulted runs, old file kept in $olds, new one complete in $news"

    # ---- unreadable source ----
    cp --sparse=always "$FASTWORK/base.img" "$img"
    sf_err 1 put -F "$img" /proc/self/mem a.bin
    [[ $(content "$img" "$WORK/old_s" "$WORK/new_s") == old ]] || fail "$fs: unreadable source: old file lost"
    [[ $(temps "$img") == 0 ]] || fail "$fs: unreadable source: temporary file left"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep $fs "$img"

    # ---- SIGKILL mid-copy ----
    cp --sparse=always "$FASTWORK/base.img" "$img"
    rm -f "$WORK/fifo"
    mkfifo "$WORK/fifo"
    "$SF" put -F --bs 4K "$img" - a.bin <"$WORK/fifo" >/dev/null 2>"$WORK/err" &
    pid=$!
    exec 3>"$WORK/fifo"
    head -c 200000 "$WORK/new_s" >&3
    sleep 1
    kill -9 $pid
    wait $pid 2>/dev/null || true
    exec 3>&-
    [[ $(content "$img" "$WORK/old_s" "$WORK/new_s") == old ]] || fail "$fs: SIGKILL: old file lost"
    t=$(temps "$img")
    ((t <= 1)) || fail "$fs: SIGKILL: $t temporary files"
    repaired $fs "$img" "$fs SIGKILL"
    [[ $(content "$img" "$WORK/old_s" "$WORK/new_s") == old ]] || fail "$fs: SIGKILL: old file lost by repair"
    log "$fs: unreadable source and SIGKILL: old file intact ($t temporary file after the kill, removed by repair)"
done
