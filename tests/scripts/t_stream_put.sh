#!/usr/bin/env bash
# `streamfat put` on the streaming write path (O_DIRECT, asynchronous device, --bs/--qd).
#
# Pattern files of 0, 1, 511, 1 MiB + 7, 3 MiB + 4 KiB, 20 MiB + 5 and 300 MiB bytes go onto
# exFAT (streamfat mkfs with 512- and 4096-byte sectors, mkfs.exfat) and FAT32/FAT16
# (streamfat mkfs, mkfs.fat with 512- and 4096-byte sectors) images with the default
# options, --bs 64K --qd 1, --bs 64K --qd 8, --no-direct, --no-uring / SF_NO_URING=1 (the
# threads backend must then be the one used) and from standard input. Every file is read
# back by `streamfat cat` and by an independent reader (exfat-fuse on a loop device,
# mtools), and fsck.exfat -n / fsck.fat -n must call each volume clean. Then: a loop device
# as the target (512 and 4096-byte logical sectors), a fragmented volume (interleaved small
# files, every other one deleted), a volume filling up mid-put (exit 1, "no space", the
# partial file removed, or kept at whole --bs blocks with --keep-partial), Ctrl-C in the
# middle, FAT32's 4 GiB limit (a 4 GiB source refused before anything is written), and
# invalid --bs / --qd values.
#
# Heavy cases run only with SF_LONG=1: a 4 GiB - 1 file on FAT32, and 300 MiB with every
# option set on every volume (without it, 300 MiB goes through the default options only,
# on two volumes: exFAT by streamfat mkfs and FAT32 by mkfs.fat).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat fsck.fat mkfs.fat mkfs.exfat mcopy python3 losetup cmp
export MTOOLS_SKIP_CHECK=1
LONG=${SF_LONG:-0}

# ---- sources ----------------------------------------------------------------------------
src=$WORK/src
mkdir -p "$src"
: >"$src/empty"
printf x >"$src/one"
mkpattern "$src/s511" 511 put.1
mkpattern "$src/m1p7" $((1048576 + 7)) put.2
mkpattern "$src/m3k4" $((3 * 1048576 + 4096)) put.3
mkpattern "$src/m20p5" $((20 * 1048576 + 5)) put.4
mkpattern "$src/big300" 300M put.5
SMALL=(empty one s511 m1p7 m3k4 m20p5)

fsck_fat_clean() {
    local img=$1 out=$WORK/.fsck.out rc=0
    timeout 300 fsck.fat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)) || grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' "$out"; then
        cat "$out" >&2
        fail "fsck.fat -n $img: exit $rc or remarks"
    fi
}

# check_clean IMG KIND: the independent checker for the kind (exfat or fat) is content.
check_clean() {
    if [[ $2 == exfat ]]; then run_fsck_exfat "$1"; else fsck_fat_clean "$1"; fi
}

# backend_is WANT: the last `put -v` named that backend (io_uring when this machine has it).
URING=$("$(helper aiobd_write)" --probe)
backend_is() {
    local want=$1
    [[ $want == io_uring && $URING != uring=1 ]] && want=threads
    grep -q "; $want, " "$SF_LAST_ERR" || { cat "$SF_LAST_ERR" >&2; fail "expected the $want backend"; }
}

# put_set IMG TAG OPTIONS...: every small file (and big300 where asked) as TAG.NAME.
declare -a PUT_NAMES=()
put_set() {
    local img=$1 tag=$2 f
    shift 2
    local files=("${SMALL[@]}")
    [[ $tag == d && $BIG300 == 1 || $LONG == 1 ]] && files+=(big300)
    for f in "${files[@]}"; do
        sf_ok put -v "$@" "$img" "$src/$f" "$tag.$f"
        PUT_NAMES+=("$tag.$f")
    done
}

# verify_all IMG KIND [LOSETUP-OPTIONS]: every put file read back by streamfat cat, then
# by exfat-fuse or mtools, then the checker.
verify_all() {
    local img=$1 kind=$2 n f
    shift 2
    for n in "${PUT_NAMES[@]}"; do
        f=${n#*.}
        sf_ok cat "$img" "$n" >"$WORK/back"
        cmp -s "$WORK/back" "$src/$f" || fail "streamfat cat $n differs from $f"
    done
    if [[ $kind == exfat ]]; then
        fuse_mount "$img" "$WORK/mnt" "$@"
        for n in "${PUT_NAMES[@]}"; do
            cmp -s "$WORK/mnt/$n" "$src/${n#*.}" || fail "exfat-fuse: $n differs from ${n#*.}"
        done
        fuse_umount "$WORK/mnt"
        log "exfat-fuse: ${#PUT_NAMES[@]} files identical"
    else
        for n in "${PUT_NAMES[@]}"; do
            rm -f "$WORK/back"
            mcopy -n -i "$img" "::/$n" "$WORK/back" </dev/null || fail "mcopy ::/$n failed"
            cmp -s "$WORK/back" "$src/${n#*.}" || fail "mtools: $n differs from ${n#*.}"
        done
        log "mtools: ${#PUT_NAMES[@]} files identical"
    fi
    rm -f "$WORK/back"
    check_clean "$img" "$kind"
}

# ---- every option set on every kind of volume --------------------------------------------
# volume_run LABEL KIND SECTOR LOSETUP-OPTIONS -- MKFS COMMAND (IMG appended)
# BIG300=1 (set for one exFAT and one FAT32 volume) puts big300 with the default options.
BIG300=0
volume_run() {
    local label=$1 kind=$2 lo=$3 img=$WORK/vol.img
    shift 4
    log "$label"
    rm -f "$img"
    if [[ $1 == sf ]]; then
        sf_ok mkfs -q "${@:2}" "$img"
    else
        truncate -s 1G "$img"
        "$@" "$img" >/dev/null
    fi
    PUT_NAMES=()
    put_set "$img" d
    backend_is io_uring
    grep -q "O_DIRECT" "$SF_LAST_ERR" || fail "default put did not use O_DIRECT"
    put_set "$img" q1 --bs 64K --qd 1
    put_set "$img" q8 --bs 64K --qd 8
    put_set "$img" nd --no-direct
    grep -q "buffered" "$SF_LAST_ERR" || fail "--no-direct still used O_DIRECT"
    put_set "$img" nu --no-uring
    backend_is threads
    SF_NO_URING=1 sf_ok put -v "$img" "$src/m20p5" env.m20p5
    backend_is threads
    PUT_NAMES+=(env.m20p5)
    sf "put" "$img" - stdin.m20p5 <"$src/m20p5" || fail "put from standard input failed"
    PUT_NAMES+=(stdin.m20p5)
    # -f replaces, with a shorter file
    sf_ok put -F "$img" "$src/m1p7" d.m3k4
    sf_ok cat "$img" d.m3k4 | cmp -s - "$src/m1p7" || fail "put -F did not replace d.m3k4"
    sf_ok put -F "$img" "$src/m3k4" d.m3k4
    local lopt=()
    [[ -n $lo ]] && lopt=($lo)
    verify_all "$img" "$kind" "${lopt[@]}"
    rm -f "$img"
}

BIG300=1
volume_run "exFAT (streamfat mkfs), 512-byte sectors" exfat "" -- sf -t exfat -s 1G
BIG300=0
volume_run "exFAT (streamfat mkfs), 4096-byte sectors" exfat "-b 4096" -- sf -t exfat -s 1G --sector-size 4096
volume_run "exFAT (mkfs.exfat)" exfat "" -- mkfs.exfat
volume_run "FAT32 (streamfat mkfs)" fat "" -- sf -t fat32 -s 1G
BIG300=1
volume_run "FAT32 (mkfs.fat)" fat "" -- mkfs.fat -F 32
BIG300=0
volume_run "FAT32 (mkfs.fat, 4096-byte sectors)" fat "" -- mkfs.fat -F 32 -S 4096
volume_run "FAT16 (mkfs.fat)" fat "" -- mkfs.fat -F 16

# ---- a loop device as the target ----------------------------------------------------------
for lbs in 512 4096; do
    log "put onto a loop device with $lbs-byte sectors"
    img=$WORK/loop.img
    rm -f "$img"
    sf_ok mkfs -q -t exfat -s 256M --sector-size "$lbs" "$img"
    loop_attach "$img" -b "$lbs"
    dev=$LOOP
    sf_ok put -v "$dev" "$src/m20p5" a.bin
    backend_is io_uring
    grep -q "O_DIRECT" "$SF_LAST_ERR" || fail "put onto $dev did not use O_DIRECT"
    sf_ok put -v --no-uring --bs 64K --qd 8 "$dev" "$src/m3k4" b.bin
    backend_is threads
    sf_ok put "$dev" "$src/s511" c.bin
    loop_detach "$dev"
    PUT_NAMES=(a.m20p5 b.m3k4 c.s511)
    sf_ok cat "$img" a.bin | cmp -s - "$src/m20p5" || fail "loop $lbs: a.bin differs"
    sf_ok cat "$img" b.bin | cmp -s - "$src/m3k4" || fail "loop $lbs: b.bin differs"
    sf_ok cat "$img" c.bin | cmp -s - "$src/s511" || fail "loop $lbs: c.bin differs"
    run_fsck_exfat "$img"
    rm -f "$img"
done

# ---- fragmented volumes --------------------------------------------------------------------
# 100 files of 200 KiB + 1, every other one deleted: 50 holes of 51 clusters (4 KiB) before
# the free tail, more runs per allocation step than the stream keeps ahead at once. (The
# FAT32 image is 512 MiB: with fewer than 65,525 clusters mtools would take it for FAT16.)
mkpattern "$WORK/frag.small" $((200 * 1024 + 1)) frag
fragment() {
    local img=$1 i names=()
    for ((i = 0; i < 100; i++)); do
        sf_ok put --bs 64K "$img" "$WORK/frag.small" "f$i"
        ((i % 2)) && names+=("f$i")
    done
    sf_ok rm "$img" "${names[@]}"
}
for kind in exfat fat; do
    log "fragmented $kind volume"
    img=$WORK/frag.img
    rm -f "$img"
    if [[ $kind == exfat ]]; then
        sf_ok mkfs -q -t exfat -c 4K -s 256M "$img"
    else
        truncate -s 512M "$img"
        mkfs.fat -F 32 -s 8 "$img" >/dev/null
    fi
    fragment "$img"
    sf_ok put -v "$img" "$src/m20p5" frag.m20p5
    sf_ok put -v --bs 64K --qd 8 --no-uring "$img" "$src/m3k4" frag2.m3k4
    PUT_NAMES=(frag.m20p5 frag2.m3k4)
    verify_all "$img" "$kind"
    for ((i = 0; i < 100; i += 2)); do
        sf_ok cat "$img" "f$i" | cmp -s - "$WORK/frag.small" || fail "f$i damaged"
    done
    rm -f "$img"
done

# ---- the volume fills up mid-put ----------------------------------------------------------
mkpattern "$WORK/over" 100M over
for kind in exfat fat; do
    log "$kind volume filling up mid-put"
    img=$WORK/full.img
    rm -f "$img"
    if [[ $kind == exfat ]]; then
        sf_ok mkfs -q -t exfat -s 64M "$img"
    else
        sf_ok mkfs -q -t fat32 -s 64M "$img"
    fi
    sf_ok put "$img" "$src/one" keep.one
    sf_err 1 put "$img" "$WORK/over" over.bin
    grep -q "no space" "$SF_LAST_ERR" || fail "no 'no space' message"
    grep -q "partial file removed" "$SF_LAST_ERR" || fail "no word about the partial file"
    sf_ok ls "$img" >"$WORK/ls"
    ! grep -q over.bin "$WORK/ls" || fail "partial file left behind"
    check_clean "$img" "$kind"
    sf_err 1 put --keep-partial "$img" "$WORK/over" over.bin
    grep -q "no space" "$SF_LAST_ERR" || fail "no 'no space' message"
    sf_ok cat "$img" over.bin >"$WORK/part"
    size=$(stat -c %s "$WORK/part")
    ((size > 0 && size % 1048576 == 0)) || fail "kept partial file has $size bytes"
    cmp -s "$WORK/part" <(head -c "$size" "$WORK/over") || fail "kept partial file differs"
    sf_ok cat "$img" keep.one | cmp -s - "$src/one" || fail "keep.one damaged"
    check_clean "$img" "$kind"
    log "$kind: kept $size bytes"
    # the space is usable again afterwards
    sf_ok rm "$img" over.bin
    sf_ok put "$img" "$src/m20p5" after.bin
    sf_ok cat "$img" after.bin | cmp -s - "$src/m20p5" || fail "after.bin differs"
    check_clean "$img" "$kind"
    rm -f "$img" "$WORK/part"
done

# ---- Ctrl-C in the middle -------------------------------------------------------------------
log "interrupted put from a pipe"
img=$WORK/intr.img
sf_ok mkfs -q -t exfat -s 128M "$img"
mkfifo "$WORK/fifo"
"$SF" put "$img" - intr.bin <"$WORK/fifo" 2>"$WORK/intr.err" &
pid=$!
exec 3>"$WORK/fifo"
head -c 5M "$src/m20p5" >&3
sleep 1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
exec 3>&-
cat "$WORK/intr.err" >&2
has_sanitizer_report "$WORK/intr.err" && fail "sanitizer report from the interrupted put"
((rc == 130)) || fail "interrupted put exited $rc, expected 130 (SIGINT)"
grep -q interrupted "$WORK/intr.err" || fail "no 'interrupted' message"
sf_ok ls "$img" >"$WORK/ls"
! grep -q intr.bin "$WORK/ls" || fail "interrupted put left its file"
run_fsck_exfat "$img"
rm -f "$img"

# ---- FAT32's 4 GiB limit ------------------------------------------------------------------
log "FAT32: 4 GiB refused"
img=$WORK/f4g.img
sf_ok mkfs -q -t fat32 -s 5G "$img"
truncate -s 4G "$WORK/four"
sf_err 1 put "$img" "$WORK/four" four.bin
grep -q "file too large" "$SF_LAST_ERR" || fail "no 'file too large' message"
sf_ok ls "$img" >"$WORK/ls"
[[ ! -s $WORK/ls ]] || fail "something was created: $(cat "$WORK/ls")"
fsck_fat_clean "$img"
rm -f "$WORK/four"
if [[ $LONG == 1 ]]; then
    log "FAT32: 4 GiB - 1 written (SF_LONG)"
    truncate -s $((4 * 1024 * 1024 * 1024 - 1)) "$WORK/four1"
    sf_ok put -v "$img" "$WORK/four1" four1.bin
    sf_ok ls -l "$img" >"$WORK/ls"
    grep -q " 4294967295 " "$WORK/ls" || { cat "$WORK/ls" >&2; fail "size is not 4 GiB - 1"; }
    sf_ok cat "$img" four1.bin | cmp -s - "$WORK/four1" || fail "four1.bin differs"
    fsck_fat_clean "$img"
    rm -f "$WORK/four1"
fi
rm -f "$img"

# ---- usage ----------------------------------------------------------------------------------
img=$WORK/u.img
sf_ok mkfs -q -t exfat -s 32M "$img"
for bad in "--bs 1000" "--bs 0" "--bs 128M" "--bs 6K" "--bs x" "--qd 0" "--qd 65" "--qd -1"; do
    # shellcheck disable=SC2086
    sf_err 2 put $bad "$img" "$src/one"
done
sf_ok put --bs 4K --qd 64 "$img" "$src/m1p7" ok.bin
sf_ok cat "$img" ok.bin | cmp -s - "$src/m1p7" || fail "--bs 4K --qd 64 differs"
run_fsck_exfat "$img"
exit 0
