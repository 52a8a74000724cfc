#!/usr/bin/env bash
# Acceptance: exFAT volumes made by mkfs.exfat (exfatprogs) are written by streamfat and
# read back by exfat-fuse and sleuthkit; files written by exfat-fuse are read by streamfat.
# 512-byte sectors as plain image files; 4096-byte sectors formatted through a loop device
# with 4 KiB logical blocks (streamfat must take the sector size from the boot sector).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool mkfs.exfat fsck.exfat fls icat losetup fusermount

make_corpus "$WORK/src" 1
# What exfat-fuse writes for the reverse direction: smaller, but with the same kinds of names.
mkdir -p "$WORK/rev/sub/dir 日本"
mkpattern "$WORK/rev/r1.bin" 1 r1
mkpattern "$WORK/rev/sub/r2 é.bin" 70001 r2
mkpattern "$WORK/rev/sub/dir 日本/r3 😀.bin" 1048577 r3
: >"$WORK/rev/sub/empty"

# sector size, cluster size, image size
cases=(
    "512 4K 256M"
    "512 32K 2G"
    "512 128K 256M"
    "512 1M 2G"
    "4096 4K 256M"
    "4096 128K 2G"
)
img=$WORK/foreign.img
mnt=$WORK/mnt
for c in "${cases[@]}"; do
    read -r ss cl size <<<"$c"
    log "mkfs.exfat: sector $ss, cluster $cl, size $size"
    rm -f "$img"
    truncate -s "$size" "$img"
    if [[ $ss == 512 ]]; then
        mkfs.exfat -c "$cl" -L FOREIGN "$img" >/dev/null
        losetup_opts=()
    else
        loop_attach "$img" -b 4096
        mkfs.exfat -c "$cl" -L FOREIGN "$LOOP" >/dev/null
        loop_detach "$LOOP"
        losetup_opts=(-b 4096)
    fi
    run_fsck_exfat "$img"

    sf_ok info "$img" >/dev/null
    info_json_has "$img" 'sector' "$ss"
    info_json_has "$img" 'cluster' "$(to_bytes "$cl")"

    # streamfat writes, everyone reads
    sf_put_tree "$img" "$WORK/src"
    run_fsck_exfat "$img"
    sf_verify_tree "$img" "$WORK/src"
    # plain ls: one name per line
    sf_ok ls "$img" >"$WORK/ls.out"
    for n in empty one big5m.bin café.txt "smile 😀.log" 日本 "dir é"; do
        grep -qxF "$n" "$WORK/ls.out" || { cat "$WORK/ls.out" >&2; fail "ls: $n missing"; }
    done
    sf_ok ls "$img" "dir é" >"$WORK/ls.out"
    grep -qxF "$NAME255" "$WORK/ls.out" || fail "ls: the 255-character name is missing"

    fuse_mount "$img" "$mnt" "${losetup_opts[@]}"
    verify_tree "$mnt" "$WORK/src"
    # reverse: exfat-fuse writes
    cp -r "$WORK/rev" "$mnt/fromfuse"
    fuse_umount "$mnt"
    run_fsck_exfat "$img"
    tsk_verify "$img" "$WORK/src"
    tsk_verify "$img" "$WORK/rev" "fromfuse/"
    sf_verify_tree "$img" "$WORK/rev" "fromfuse/"
    sf_ok cat "$img" "fromfuse/r1.bin" >"$WORK/cat.out"
    cmp -s "$WORK/cat.out" "$WORK/rev/r1.bin" || fail "cat fromfuse/r1.bin differs"
done
