#!/usr/bin/env bash
# Acceptance: `streamfat mkfs -t exfat` over a matrix of sizes (64M, 1G, 40G and 4T sparse),
# cluster sizes (default, 4K, 128K, 1M, 32M where valid) and partition schemes (none, MBR,
# GPT) with the non-ASCII label "Día_日本". Each volume must be called clean by
# fsck.exfat -n, show its label to exfatlabel and blkid, mount in exfat-fuse and take a file,
# and be clean again after. Invalid combinations must be refused with a message. A 4 TB
# sparse image must format in about a second at most; 4096-byte sectors are checked on a
# loop device made with `losetup -b 4096` and on an image made with --sector-size 4096.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
[[ -x $SF ]] || skip "CLI not built yet: $SF"
need_tool fsck.exfat exfatlabel blkid losetup sfdisk fusermount python3

LABEL="Día_日本"
img=$WORK/m.img
mnt=$WORK/mnt
mkdir -p "$mnt"
echo "written through exfat-fuse" >"$WORK/note.txt"

# Byte offset of partition 1 of DEV (0 when there is no partition table).
part_offset() {
    local dev=$1
    sfdisk -J "$dev" 2>/dev/null </dev/null | python3 -c '
import json, sys
try:
    t = json.load(sys.stdin)["partitiontable"]
    print(t["partitions"][0]["start"] * t.get("sectorsize", 512))
except (ValueError, KeyError, IndexError):
    print(0)  # no partition table (sfdisk prints nothing or an empty table)
'
}

# check_volume IMG OFFSET [losetup options]: fsck, label, fuse write, fsck again.
check_volume() {
    local img=$1 off=$2 lo=()
    shift 2
    lo=("$@")
    ((off)) && lo+=(-o "$off")
    loop_attach "$img" "${lo[@]}"
    run_fsck_exfat "$LOOP"
    exfatlabel "$LOOP" </dev/null 2>/dev/null | matches -F "label: $LABEL" ||
        fail "exfatlabel does not show the label $LABEL"
    [[ $(blkid -p -o value -s LABEL "$LOOP") == "$LABEL" ]] || fail "blkid does not show the label"
    [[ $(blkid -p -o value -s TYPE "$LOOP") == exfat ]] || fail "blkid does not see exFAT"
    loop_detach "$LOOP"
    fuse_mount "$img" "$mnt" "${lo[@]}"
    cp "$WORK/note.txt" "$mnt/note é.txt"
    mkdir "$mnt/dir 日本"
    cp "$WORK/note.txt" "$mnt/dir 日本/n.txt"
    fuse_umount "$mnt"
    loop_attach "$img" "${lo[@]}"
    run_fsck_exfat "$LOOP"
    loop_detach "$LOOP"
}

# size cluster(0 = default) scheme expect(ok|refused)
cases=(
    "64M 0 none ok"
    "64M 4K mbr ok"
    "64M 128K gpt ok"
    "64M 1M none ok"
    "64M 32M none refused"
    "1G 0 gpt ok"
    "1G 4K none ok"
    "1G 128K mbr ok"
    "1G 1M gpt ok"
    "1G 32M none ok"
    "40G 0 mbr ok"
    "40G 4K gpt ok"
    "40G 128K none ok"
    "40G 32M gpt ok"
    "4T 0 gpt ok"
    "4T 0 none ok"
    "4T 1M none ok"
    "4T 0 mbr refused"
    "64M 3K none refused"
    "64M 64M none refused"
)
for c in "${cases[@]}"; do
    read -r size cl part expect <<<"$c"
    log "mkfs: size $size, cluster $cl, partition $part (expect $expect)"
    rm -f "$img"
    truncate -s "$size" "$img"
    args=(-q -t exfat -L "$LABEL" --partition "$part")
    [[ $cl != 0 ]] && args+=(-c "$cl")
    if [[ $expect == refused ]]; then
        rc=0
        sf mkfs "${args[@]}" "$img" >/dev/null || rc=$?
        ((rc != 0)) || fail "mkfs $size $cl $part should have been refused"
        [[ -s $SF_LAST_ERR ]] || fail "mkfs refused $size $cl $part without a message"
        continue
    fi
    # CPU time (user + system) of the mkfs, from the shell's children's totals: a loaded
    # machine stretches the wall-clock time, not this
    times >"$WORK/times0"
    sf_ok mkfs "${args[@]}" "$img"
    times >"$WORK/times1"
    ms=$(cat "$WORK/times0" "$WORK/times1" | awk 'NR == 2 || NR == 4 {
            t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
            v[NR] = t } END { printf "%d", (v[4] - v[2]) * 1000 }')
    log "formatted in $ms ms of CPU time, $(du -k "$img" | cut -f1) KiB allocated"
    if [[ $size == 4T ]] && ((ms > 3000)); then
        fail "formatting a sparse 4 TB image took $ms ms of CPU time"
    fi
    case $part in
    mbr) sfdisk -V "$img" </dev/null >/dev/null 2>&1 || fail "sfdisk -V: bad MBR" ;;
    gpt)
        if command -v sgdisk >/dev/null; then
            timeout 60 sgdisk -v "$img" </dev/null 2>&1 | matches 'No problems found' ||
                fail "sgdisk -v: bad GPT"
        fi
        ;;
    esac
    off=$(part_offset "$img")
    [[ $part == none ]] && ((off != 0)) && fail "partition table found on a superfloppy"
    [[ $part != none ]] && ((off == 0)) && fail "no partition found"
    check_volume "$img" "$off"
done

# 4096-byte sectors: a loop device with 4 KiB logical sectors, superfloppy and GPT.
for part in none gpt; do
    log "mkfs on a 4096-byte-sector loop device, partition $part"
    rm -f "$img"
    truncate -s 1G "$img"
    loop_attach "$img" -b 4096
    sf_ok mkfs -q -t exfat -L "$LABEL" --partition "$part" "$LOOP"
    off=$(part_offset "$LOOP")
    loop_detach "$LOOP"
    python3 - "$img" "$off" <<'PY' || fail "boot sector does not say 4096-byte sectors"
import sys
f = open(sys.argv[1], "rb"); f.seek(int(sys.argv[2])); b = f.read(512)
sys.exit(0 if b[3:11] == b"EXFAT   " and b[108] == 12 else 1)
PY
    check_volume "$img" "$off" -b 4096
done

# An image file formatted with --sector-size 4096.
log "mkfs --sector-size 4096 on an image file"
rm -f "$img"
truncate -s 1G "$img"
sf_ok mkfs -q -t exfat -L "$LABEL" --partition none --sector-size 4096 "$img"
check_volume "$img" 0 -b 4096
