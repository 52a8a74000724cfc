#!/usr/bin/env bash
# Acceptance: exFAT volumes made by `streamfat mkfs` (no partition table, MBR, GPT; small to
# 40 GiB sparse; several cluster sizes) pass fsck.exfat -n, mount in exfat-fuse, take files
# written there that `streamfat get` reads back identically, and files `streamfat put`
# writes are read by exfat-fuse and sleuthkit. The partition table is checked by
# sfdisk/sgdisk, the cluster heap's alignment (4 MiB default) from the boot sector.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat fls icat losetup fusermount sfdisk sgdisk

make_corpus "$WORK/src" 2
mkdir -p "$WORK/rev/x/日本"
mkpattern "$WORK/rev/fuse1.bin" 12345 f1
mkpattern "$WORK/rev/x/日本/fuse2 é😀.bin" 3000001 f2
: >"$WORK/rev/x/empty"

# size, cluster (0 = streamfat's choice), partition scheme
cases=(
    "64M 4K none"
    "64M 0 mbr"
    "1G 32K gpt"
    "1G 1M mbr"
    "40G 128K none"
    "40G 0 gpt"
)
img=$WORK/own.img
mnt=$WORK/mnt
for c in "${cases[@]}"; do
    read -r size cl part <<<"$c"
    t0=$SECONDS
    log "streamfat mkfs: size $size, cluster $cl, partition $part"
    rm -f "$img"
    truncate -s "$size" "$img"
    args=(-t exfat -L OWN --partition "$part")
    [[ $cl != 0 ]] && args+=(-c "$cl")
    sf_ok mkfs "${args[@]}" "$img"

    # where the volume starts (bytes) and how the independent tools reach it
    voff=0
    lo=()
    case $part in
    mbr)
        sfdisk -V "$img" </dev/null >"$WORK/pt.out" 2>&1 || { cat "$WORK/pt.out" >&2; fail "sfdisk -V: bad MBR"; }
        [[ $(blkid -p -o value -s PTTYPE "$img") == dos ]] || fail "no MBR partition table"
        ;;
    gpt)
        timeout 60 sgdisk -v "$img" </dev/null >"$WORK/pt.out" 2>&1 || true
        grep -q 'No problems found' "$WORK/pt.out" || { cat "$WORK/pt.out" >&2; fail "sgdisk -v: bad GPT"; }
        [[ $(blkid -p -o value -s PTTYPE "$img") == gpt ]] || fail "no GPT partition table"
        ;;
    esac
    if [[ $part != none ]]; then
        start=$(sfdisk -J "$img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][0]["start"])')
        voff=$((start * 512))
        lo=(-o "$voff")
    fi
    # fsck and sleuthkit on the volume itself
    loop_attach "$img" "${lo[@]}"
    run_fsck_exfat "$LOOP"
    loop_detach "$LOOP"

    # boot sector: heap alignment, cluster size
    read -r heap spc bps < <(python3 - "$img" "$voff" <<'PY'
import sys, struct
f = open(sys.argv[1], "rb"); f.seek(int(sys.argv[2])); b = f.read(512)
assert b[3:11] == b"EXFAT   ", "no exFAT boot sector at the partition start"
heap = struct.unpack_from("<I", b, 88)[0]
print(heap, b[109], b[108])
PY
    )
    heap_bytes=$((voff + (heap << bps)))
    clbytes=$((1 << (bps + spc)))
    if [[ $cl != 0 ]]; then
        ((clbytes == $(to_bytes "$cl"))) || fail "cluster size $clbytes, asked for $cl"
    fi
    if (($(to_bytes "$size") >= (1 << 30))); then
        ((heap_bytes % (4 << 20) == 0)) || fail "cluster heap at byte $heap_bytes: not 4 MiB aligned"
        ((voff % (1 << 20) == 0)) || fail "partition at byte $voff: not 1 MiB aligned"
    fi

    sf_ok info "$img" >/dev/null
    info_json_has "$img" 'cluster' "$clbytes"

    # streamfat writes; fsck, exfat-fuse and sleuthkit read
    sf_put_tree "$img" "$WORK/src"
    loop_attach "$img" "${lo[@]}"
    run_fsck_exfat "$LOOP"
    loop_detach "$LOOP"
    sf_verify_tree "$img" "$WORK/src"

    fuse_mount "$img" "$mnt" "${lo[@]}"
    verify_tree "$mnt" "$WORK/src"
    cp -r "$WORK/rev" "$mnt/fromfuse"
    fuse_umount "$mnt"

    loop_attach "$img" "${lo[@]}"
    run_fsck_exfat "$LOOP"
    loop_detach "$LOOP"
    tsk_verify "$img" "$WORK/src" "" "$((voff / 512))"
    sf_verify_tree "$img" "$WORK/rev" "fromfuse/"
    log "case $c: $((SECONDS - t0)) s"
done
