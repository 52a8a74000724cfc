#!/usr/bin/env bash
# Acceptance: FAT volumes made by mkfs.fat (FAT16, FAT32; several cluster sizes; 512- and
# 4096-byte sectors; superfloppy and MBR) are written by streamfat, then fsck.fat -n reports
# nothing at all, and mtools and sleuthkit read every file back byte-identical with its long
# name; files mtools writes read back identically through streamfat. FAT12 is read-only:
# streamfat reads what mtools wrote and refuses to write.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool mkfs.fat fsck.fat mcopy mmd fls icat losetup sfdisk

make_corpus "$WORK/src" 1
# Sleuthkit cuts FAT long names at about 247 bytes (mtools-written ones too): it checks
# everything but the 255-character name, which mtools and streamfat check.
cp -r "$WORK/src" "$WORK/src_tsk"
rm -f "$WORK/src_tsk/dir é/$NAME255"
mkdir -p "$WORK/rev/sub/dir e"
mkpattern "$WORK/rev/r1.bin" 1 r1
mkpattern "$WORK/rev/sub/Mixed Case Name.bin" 70001 r2
mkpattern "$WORK/rev/sub/dir e/a_long_file_name_from_mtools.dat" 1048577 r3
: >"$WORK/rev/sub/empty"

# fat bits, sector size, sectors per cluster, image size, partition (none|mbr)
cases=(
    "16 512 4 64M none"
    "16 512 32 256M mbr"
    "32 512 1 128M none"
    "32 512 8 512M none"
    "32 512 64 4G mbr"
    "32 4096 1 512M none"
    "16 4096 2 256M none"
)
img=$WORK/foreign.img
for c in "${cases[@]}"; do
    read -r bits ss spc size part <<<"$c"
    log "mkfs.fat -F $bits: sector $ss, $spc sectors per cluster, $size, partition $part"
    rm -f "$img"
    truncate -s "$size" "$img"
    off=0
    if [[ $part == mbr ]]; then
        echo 'start=2048, type=c' | sfdisk -q "$img" >/dev/null
        off=$((2048 * 512))
        loop_attach "$img" -o "$off"
        mkfs.fat -F "$bits" -S "$ss" -s "$spc" -n FOREIGN "$LOOP" >/dev/null
        loop_detach "$LOOP"
    else
        mkfs.fat -F "$bits" -S "$ss" -s "$spc" -n FOREIGN "$img" >/dev/null
    fi
    fsck_fat_at "$img" "$off" "$ss"
    info_json_has "$img" 'sector' "$ss"
    info_json_has "$img" 'cluster_size' "$((ss * spc))"
    info_json_has "$img" 'label' FOREIGN

    # streamfat writes, everyone reads
    sf_put_tree "$img" "$WORK/src"
    fsck_fat_at "$img" "$off" "$ss"
    sf_verify_tree "$img" "$WORK/src"
    sf_ok ls "$img" "dir é" >"$WORK/ls.out"
    grep -qxF "$NAME255" "$WORK/ls.out" || fail "ls: the 255-character name is missing"
    mtools_verify "$img" "$WORK/src" "" "$off"
    tsk_verify "$img" "$WORK/src_tsk" "" "$((off / 512))"

    # mtools writes, streamfat reads; then streamfat removes and rewrites some of it
    mtools_put "$img" "$WORK/rev" frommtools "$off"
    fsck_fat_at "$img" "$off" "$ss"
    sf_verify_tree "$img" "$WORK/rev" "frommtools/"
    sf_ok rm "$img" "frommtools/r1.bin"
    sf_ok put -F "$img" "$WORK/rev/sub/Mixed Case Name.bin" "big5m.bin"
    fsck_fat_at "$img" "$off" "$ss"
    sf_ok cat "$img" big5m.bin >"$WORK/cat.out"
    cmp -s "$WORK/cat.out" "$WORK/rev/sub/Mixed Case Name.bin" || fail "rewritten big5m.bin differs"
done

log "FAT12 (read-only)"
rm -f "$img"
truncate -s 4M "$img"
mkfs.fat -F 12 -n SMALL "$img" >/dev/null
mtools_put "$img" "$WORK/rev" frommtools
sf_verify_tree "$img" "$WORK/rev" "frommtools/"
info_json_has "$img" 'label' SMALL
rc=0
sf put "$img" "$WORK/rev/r1.bin" x.bin >/dev/null || rc=$?
((rc != 0)) || fail "streamfat wrote to a FAT12 volume"
run_fsck_fat "$img"
