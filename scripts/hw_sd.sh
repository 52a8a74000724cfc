#!/usr/bin/env bash
# make hw-sd: the SD-over-SPI logger (examples/sd-spi, drivers/sd_spi) on QEMU's lm3s6965evb,
# on two emulated cards, checked on the host. tests/scripts/t_hw_sd.sh runs the same.
#
#   scripts/hw_sd.sh [OUTDIR]      (default build-hw; SF=path/to/streamfat, default
#                                   build/streamfat)
#
# 1. builds the core for the Cortex-M3 with the `tiny` set plus FAT mkfs (-DSF_EXFAT=OFF
#    -DSF_GPT=OFF -DSF_MESSAGES=OFF -DSF_LOG_TRIGGER=OFF -DSF_CHECK=OFF) and the firmware,
#    which runs the tiny logger (include/streamfat/tiny.h);
# 2. makes the cards, blank: OUTDIR/sd.img, 4 GiB sparse (QEMU's card model is SDHC above
#    2 GiB: block addresses, OCR CCS set; the firmware formats it FAT32) and OUTDIR/sd256.img,
#    256 MiB (SDSC: byte addresses, CMD16; FAT16), both sizes powers of two as QEMU wants;
# 3. runs the firmware (each run under `timeout`; -icount makes emulated time follow the
#    instruction count, so a run is the same whatever the host's load):
#      sdhc      sd.img, CRC off: format, log, rotate, close
#      sdsc      sd256.img, CRC on (CMD59, CRC16 on every data block): the same
#      remount   sd256.img again: mounts what the last run left, numbering goes on
#      nocard    no -drive: the driver reports the card missing, exit 2
#      initfail  fault injection from the 3rd command on (CMD55 of the first ACMD41): SF_EIO, exit 2
#      logfail   fault injection from command 150 on, in the middle of logging: the
#                logger reports SF_EIO, the firmware closes and exits 1
# 4. checks on the host, for each run that logged: fsck.fat -n clean on the partition;
#    `streamfat export` of every file of the run, in order, gives frames 0 .. N-1 of the
#    gen:can pattern (id 0x100 + k % 16, data k as 8 bytes little-endian, timestamp
#    k / rate) with no gap, DROP records only when the firmware reported drops and then
#    accounting for exactly those; the files are those the rotation predicts: all but the
#    last exactly split_bytes, the last at most that, together the bytes the logger wrote.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-hw}
sf=${SF:-$src/build/streamfat}
jobs=${JOBS:-2}
qemu_timeout=${HW_SD_TIMEOUT:-180}

for t in arm-none-eabi-gcc qemu-system-arm fsck.fat cmake make python3 timeout; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "hw_sd.sh: $t not installed (scripts/deps.sh installs it)" >&2
        exit 77
    fi
done
[ -x "$sf" ] || { echo "hw_sd.sh: no streamfat at $sf (make build, or SF=...)" >&2; exit 1; }
mkdir -p "$out"
fail() { echo "hw_sd.sh: FAIL: $*" >&2; exit 1; }
say() { echo "hw_sd.sh: $*" >&2; }

# ---- build ---------------------------------------------------------------------------------
core=$out/core-m3
if ! cmake -S "$src" -B "$core" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/arm-none-eabi.cmake" \
        -DCMAKE_C_FLAGS="-mcpu=cortex-m3 -mthumb -Os -ffreestanding -ffunction-sections -fdata-sections" \
        -DSF_EXFAT=OFF -DSF_GPT=OFF -DSF_MESSAGES=OFF -DSF_LOG_TRIGGER=OFF -DSF_CHECK=OFF \
        </dev/null >"$out/core-m3.log" 2>&1 ||
   ! cmake --build "$core" -j "$jobs" </dev/null >>"$out/core-m3.log" 2>&1; then
    cat "$out/core-m3.log" >&2
    fail "the core does not build for the Cortex-M3"
fi
if ! make -C "$src/examples/sd-spi" O="$out" CORE="$core/libstreamfat-core.a" \
        </dev/null >"$out/sd-spi.log" 2>&1; then
    cat "$out/sd-spi.log" >&2
    fail "examples/sd-spi does not build"
fi
arm-none-eabi-size "$out/sd-spi.elf" >&2

# ---- runs ----------------------------------------------------------------------------------
# run NAME IMAGE|- ARGS: the firmware's console in OUT/NAME.console, its exit status in RC,
# its run time in SECONDS_TAKEN.
run() {
    local name=$1 img=$2 args=$3 drive=() t0
    [ "$img" = - ] || drive=(-drive "if=sd,format=raw,file=$img")
    t0=$(date +%s.%N)
    RC=0
    timeout "$qemu_timeout" qemu-system-arm -M lm3s6965evb "${drive[@]}" -semihosting \
        -no-reboot -nographic -monitor none -icount shift=5,sleep=off \
        -kernel "$out/sd-spi.elf" -append "sd-spi $args" </dev/null >"$out/$name.console" 2>&1 ||
        RC=$?
    SECONDS_TAKEN=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    # the UART sends CR LF
    tr -d '\r' <"$out/$name.console" >"$out/$name.console.tmp"
    mv "$out/$name.console.tmp" "$out/$name.console"
    sed "s/^/  [$name] /" "$out/$name.console" >&2
    say "$name: exit $RC after ${SECONDS_TAKEN}s"
    [ "$RC" != 124 ] || fail "$name: QEMU did not finish within $qemu_timeout s (a hang)"
}

field() {  # console, line prefix, word after which the value stands
    awk -v p="$2" -v w="$3" 'index($0, p) == 1 { for (i = 1; i < NF; i++) if ($i == w) { print $(i + 1); exit } }' "$1"
}

# fsck.fat -n on the partition: only its data extents copied (the 4 GiB card is sparse).
fsck_partition() {  # image, offset, size
    local part=$out/part.img
    python3 - "$1" "$part" "$2" "$3" <<'PY'
import os, sys
src, dst, off, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fi = os.open(src, os.O_RDONLY)
fo = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fo, size)
pos = off
while pos < off + size:
    try:
        pos = os.lseek(fi, pos, os.SEEK_DATA)
    except OSError:
        break
    if pos >= off + size:
        break
    end = min(os.lseek(fi, pos, os.SEEK_HOLE), off + size)
    while pos < end:
        n = min(end - pos, 1 << 20)
        os.pwrite(fo, os.pread(fi, n, pos), pos - off)
        pos += n
os.close(fi); os.close(fo)
PY
    local rc=0
    timeout 120 fsck.fat -n "$part" </dev/null >"$out/fsck.out" 2>&1 || rc=$?
    sed 's/^/  [fsck.fat] /' "$out/fsck.out" >&2
    rm -f "$part"
    [ "$rc" = 0 ] || fail "fsck.fat -n exited $rc"
}

# check NAME IMAGE FIRST_FILE: a run that logged; its files are LOG<FIRST_FILE>.SFL on.
check_log_run() {
    local name=$1 img=$2 first=$3 con=$out/$1.console
    [ "$RC" = 0 ] || fail "$name: the firmware exited $RC"
    grep -qx 'sd-spi: ok' "$con" || fail "$name: no 'sd-spi: ok'"
    local offered accepted dropped failed files written split rate offset vsize
    offered=$(field "$con" "sd-spi: frames" offered)
    accepted=$(field "$con" "sd-spi: frames" accepted)
    dropped=$(field "$con" "sd-spi: frames" dropped)
    failed=$(field "$con" "sd-spi: frames" failed)
    files=$(field "$con" "sd-spi: log" files)
    written=$(field "$con" "sd-spi: log" bytes_written)
    split=$(field "$con" "sd-spi: log" split_bytes)
    rate=$(field "$con" "sd-spi: log" rate)
    offset=$(field "$con" "sd-spi: volume" offset)
    vsize=$(field "$con" "sd-spi: volume" bytes)
    [ -n "$offered" ] && [ -n "$written" ] && [ -n "$offset" ] || fail "$name: incomplete report"
    [ "$failed" = 0 ] || fail "$name: $failed appends failed"
    [ $((accepted + dropped)) = "$offered" ] || fail "$name: accepted + dropped != offered"
    fsck_partition "$img" "$offset" "$vsize"

    # The files of this run, in order, and the rotation's prediction.
    "$sf" ls -l "$img" </dev/null >"$out/$name.ls" 2>"$out/$name.ls.err" ||
        { cat "$out/$name.ls.err" >&2; fail "$name: streamfat ls failed"; }
    awk -v first="$first" '$1 == "file" && $5 ~ /^LOG[0-9][0-9][0-9][0-9][0-9]\.SFL$/ &&
        substr($5, 4, 5) + 0 >= first { print $5, $2 }' "$out/$name.ls" | sort >"$out/$name.files"
    local n total=0 i=0 f size
    n=$(wc -l <"$out/$name.files")
    [ "$n" = "$files" ] || fail "$name: $n files on the card, the logger started $files"
    local predicted=$(((written + split - 1) / split))
    [ "$n" = "$predicted" ] || fail "$name: $n files, rotation by $split bytes of $written predicts $predicted"
    [ "$n" -ge 3 ] || fail "$name: fewer than two rotations"
    while read -r f size; do
        i=$((i + 1))
        total=$((total + size))
        if [ "$i" -lt "$n" ]; then
            [ "$size" = "$split" ] || fail "$name: $f holds $size bytes, not the split size $split"
        else
            [ "$size" -le "$split" ] || fail "$name: the last file $f is larger than $split"
        fi
    done <"$out/$name.files"
    [ "$total" = "$written" ] || fail "$name: the files hold $total bytes, the logger wrote $written"

    # Every frame, in order, across the files.
    local drops=0 d
    : >"$out/$name.frames"
    while read -r f size; do
        "$sf" export "$img" "$f" </dev/null >>"$out/$name.frames" 2>"$out/$name.export.err" ||
            { cat "$out/$name.export.err" >&2; fail "$name: streamfat export $f failed"; }
        d=$(sed -n 's/.*accounting for \([0-9]*\) lost records.*/\1/p' "$out/$name.export.err")
        drops=$((drops + ${d:-0}))
    done <"$out/$name.files"
    [ "$drops" = "$dropped" ] || fail "$name: DROP records account for $drops, the firmware dropped $dropped"
    local got
    got=$(awk -v rate="$rate" -v X=0123456789ABCDEF '
        function hex(s) { return index(X, substr(s, 1, 1)) * 16 + index(X, substr(s, 2, 1)) - 17 }
        {
            if ($2 != "can0") { print "bad interface: " $0; exit }
            split($3, p, "#")
            if (length(p[2]) != 16) { print "bad data: " $0; exit }
            k = 0
            for (i = 7; i >= 0; i--) k = k * 256 + hex(substr(p[2], 2 * i + 1, 2))
            if (k < next_k) { print "frame " k " after " next_k - 1 ": " $0; exit }
            gap += k - next_k
            id = sprintf("%03X", 256 + k % 16)
            if (p[1] != id) { print "frame " k " has id " p[1] ", not " id; exit }
            ts = substr($1, 2, length($1) - 2); split(ts, t, ".")
            us = t[1] * 1000000 + t[2]
            if (us != int(k * 1000000 / rate)) { print "frame " k " at " ts; exit }
            next_k = k + 1; n++
        }
        END { print "frames", n + 0, "gap", gap + 0, "next", next_k + 0 }' "$out/$name.frames")
    [ "$got" = "frames $accepted gap $dropped next $offered" ] ||
        [ "$dropped" != 0 ] && [[ $got == "frames $accepted gap $dropped "* ]] ||
        fail "$name: exported $got; the firmware offered $offered, accepted $accepted, dropped $dropped"
    say "$name: $accepted frames back in order in $n files ($dropped dropped), fsck.fat clean"
}

check_fault() {  # name, exit status wanted, console line wanted (a regex)
    local con=$out/$1.console
    [ "$RC" = "$2" ] || fail "$1: exit $RC, want $2"
    grep -Eq "$3" "$con" || fail "$1: no line matching '$3'"
    grep -q '^sd-spi: stack used' "$con" || fail "$1: the firmware did not finish its report"
    say "$1: reported $(grep -Eo "$3" "$con" | head -n 1), exit $RC"
}

rm -f "$out/sd.img" "$out/sd256.img"
truncate -s 4G "$out/sd.img"
truncate -s 256M "$out/sd256.img"

run sdhc "$out/sd.img" ""
grep -q '^sd-spi: card v2-sdhc .* addressing block crc off' "$out/sdhc.console" ||
    fail "sdhc: the 4 GiB card is not an SDHC card with block addresses"
grep -q '^sd-spi: no file system' "$out/sdhc.console" || fail "sdhc: the blank card was not formatted"
grep -q '^sd-spi: volume .* fat32 ' "$out/sdhc.console" || fail "sdhc: not FAT32"
check_log_run sdhc "$out/sd.img" 1

run sdsc "$out/sd256.img" "crc"
grep -q '^sd-spi: card v2-sdsc .* addressing byte crc on' "$out/sdsc.console" ||
    fail "sdsc: the 256 MiB card is not an SDSC card with byte addresses and CRC on"
grep -q '^sd-spi: volume .* fat16 ' "$out/sdsc.console" || fail "sdsc: not FAT16"
check_log_run sdsc "$out/sd256.img" 1
prev=$(wc -l <"$out/sdsc.files")

run remount "$out/sd256.img" "frames=10000"
! grep -q '^sd-spi: no file system' "$out/remount.console" ||
    fail "remount: the card was formatted again"
check_log_run remount "$out/sd256.img" $((prev + 1))

run nocard - ""
check_fault nocard 2 '^sd-spi: error sd_spi_init SF_(EIO|ETIMEDOUT) .*card: CMD0'

cp --sparse=always "$out/sd256.img" "$out/fault.img"
run initfail "$out/fault.img" "fail=3"
check_fault initfail 2 '^sd-spi: error sd_spi_init SF_EIO .*card: ACMD41: error command 3 CMD55 r1 65'
run logfail "$out/fault.img" "fail=150"
check_fault logfail 1 '^sd-spi: error sf_tiny_log_service SF_EIO '
rm -f "$out/fault.img"

say "ok: SDHC (4 GiB, FAT32) and SDSC (256 MiB, FAT16, CRC on) cards logged, rotated and checked; no card and a failing card reported"
