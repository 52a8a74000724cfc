#!/usr/bin/env bash
# Acceptance: `streamfat mkfs -t fat32|fat16|auto` (sizes from 16 MiB to sparse 30 GiB,
# default and given cluster sizes, 1 or 2 FATs, no table / MBR / GPT, 512- and 4096-byte
# sectors): fsck.fat -n reports nothing at all, blkid names the type and label, cluster 2
# lies on the allocation unit of the device, files added by mtools read back identically
# through streamfat (and files streamfat adds read back through mtools), cluster sizes that
# would break the type's cluster-count range are refused with a reason.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool fsck.fat mcopy mmd blkid losetup sfdisk

mkdir -p "$WORK/src/sub dir"
mkpattern "$WORK/src/one.bin" 1 m1
mkpattern "$WORK/src/sub dir/A Long Name From mtools.dat" 300001 m2
mkpattern "$WORK/src/sub dir/x.txt" 4097 m3
mkpattern "$WORK/own.bin" 1000003 m4

# type, size, cluster (0 = default), partition, sector size, fats (0 = default), alignment
# of cluster 2 expected (bytes from the device start)
cases=(
    "fat16 16M 0 none 512 0 256K"
    "fat16 64M 0 mbr 512 0 1M"
    "fat16 1G 0 none 512 1 4M"
    "fat16 2G 32K gpt 512 0 4M"
    "fat16 256M 0 none 4096 0 4M"
    "fat32 40M 0 none 512 0 512K"
    "fat32 512M 4K mbr 512 0 4M"
    "fat32 8G 0 none 512 0 4M"
    "fat32 30G 0 gpt 512 1 4M"
    "fat32 2G 0 none 4096 0 4M"
    "auto 1G 0 mbr 512 0 4M"
    "auto 8G 0 mbr 512 0 4M"
)
img=$WORK/m.img
for c in "${cases[@]}"; do
    read -r type size cl part ss fats align <<<"$c"
    log "mkfs -t $type, $size, cluster $cl, partition $part, sector $ss, fats $fats"
    rm -f "$img"
    args=(-q -t "$type" -s "$size" -L "Mk $type" --partition "$part" --sector-size "$ss")
    [[ $cl != 0 ]] && args+=(-c "$cl")
    [[ $fats != 0 ]] && args+=(--fats "$fats")
    sf_ok mkfs "${args[@]}" "$img"

    want=$type
    [[ $type == auto ]] && { (($(to_bytes "$size") <= 2 << 30)) && want=fat16 || want=fat32; }
    sf_ok info --json "$img" >"$WORK/info.json"
    python3 - "$WORK/info.json" "$want" "$(to_bytes "$align")" "$(to_bytes "$cl")" "$fats" <<'PY' || { cat "$WORK/info.json" >&2; fail "info disagrees"; }
import json, sys
i = json.load(open(sys.argv[1]))
want, align, cl = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
assert i["fs"].lower() == want, i["fs"]
assert (i["volume_offset"] + i["heap_offset"]) % align == 0, "cluster 2 not aligned"
assert cl == 0 or i["cluster_size"] == cl
n = i["cluster_count"]
assert (65525 <= n) if want == "fat32" else (4085 <= n <= 65524), n
PY
    off=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["volume_offset"])' "$WORK/info.json")
    fsck_fat_at "$img" "$off" "$ss"
    if ((off)); then
        loop_attach "$img" -o "$off" ${ss:+-b "$ss"}
    else
        loop_attach "$img" -b "$ss"
    fi
    l=$LOOP
    t=$(blkid -p -o value -s TYPE "$l" || true)
    v=$(blkid -p -o value -s VERSION "$l" || true)
    lbl=$(blkid -p -o value -s LABEL "$l" || true)
    loop_detach "$l"
    [[ $t == vfat ]] || fail "blkid: type '$t'"
    [[ ${v,,} == "$want" ]] || fail "blkid: version '$v', expected $want"
    [[ $lbl == "MK ${type^^}" ]] || fail "blkid: label '$lbl'"

    mtools_put "$img" "$WORK/src" frommtools "$off"
    fsck_fat_at "$img" "$off" "$ss"
    sf_verify_tree "$img" "$WORK/src" "frommtools/"
    sf_ok put "$img" "$WORK/own.bin" "frommtools/sub dir/written by streamfat.bin"
    fsck_fat_at "$img" "$off" "$ss"
    cp "$WORK/own.bin" "$WORK/src/sub dir/written by streamfat.bin"
    mtools_verify "$img" "$WORK/src" frommtools "$off"
    rm "$WORK/src/sub dir/written by streamfat.bin"
done

log "refusals"
rm -f "$img"
sf_err 1 mkfs -t fat32 -s 64M -c 4K "$img"
grep -q "65,525" "$SF_LAST_ERR" || fail "no reason given for a FAT32 cluster too large"
sf_err 1 mkfs -t fat16 -s 1G -c 1K "$img"
grep -qi "fat16" "$SF_LAST_ERR" || fail "no reason given for a FAT16 cluster too small"
sf_err 1 mkfs -t fat16 -s 8G "$img"
sf_err 2 mkfs -t fat32 --fats 3 -s 64M "$img"
[[ ! -e $img ]] || fail "a refused mkfs left an image behind"
