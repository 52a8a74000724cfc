#!/usr/bin/env bash
# examples/baremetal under emulation: the core built for a Cortex-M4 (cmake/arm-none-eabi.cmake),
# the example firmware linked against it, run on QEMU's mps2-an386. The firmware formats a
# 4 MiB RAM disk, logs simulated CAN frames from an interrupt for 2 s of emulated time while
# its main loop calls sf_log_service, closes, lists the files, decodes them again itself
# (sf_read + sf_dec) and writes the image out through semihosting. Here, on the host:
#   - the firmware exits 0 and prints its report (frames offered, accepted, dropped; files),
#     and its own read-back found every accepted frame, in order, and the drops accounted;
#   - fsck.exfat -n (or fsck.fat -n) finds the image clean;
#   - streamfat ls lists exactly the files the firmware listed, with the same sizes;
#   - streamfat export decodes every file cleanly; the frames (sequence number and
#     millisecond in their data) are exactly the accepted ones, in order, none twice; the
#     DROP records account for exactly the dropped ones; timestamps strictly increase
#     across the files and fall in the millisecond the frame names.
# Cases: exFAT; FAT16 (mkfs's choice at 4 MiB); exFAT on 4096-byte sectors; power cuts:
# the disk copied by the SysTick handler 600, 1,234 and 1,901 ms into the run (exFAT) and at
# 1,234 ms (FAT16), maybe mid-sector, is the image; it must pass fsck but for leaked
# clusters and hold at least every record the last completed checkpoint covered, none from
# after the cut; exFAT with a main loop that stalls so the ring overflows (drops > 0
# required). -icount makes the emulated time follow the instruction count, so each case
# runs the same whatever the host's load.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm fsck.exfat cmake make
need_sf

# ---- build: the core for the Cortex-M4, then the firmware ----------------------------------
core=$WORK/core
if ! cmake -S "$SF_SRC" -B "$core" -DCMAKE_TOOLCHAIN_FILE="$SF_SRC/cmake/arm-none-eabi.cmake" \
        </dev/null >"$WORK/configure.log" 2>&1 ||
   ! cmake --build "$core" -j 2 </dev/null >"$WORK/core.log" 2>&1; then
    cat "$WORK/configure.log" "$WORK/core.log" 2>/dev/null
    fail "the core does not build for arm-none-eabi"
fi
fw=$WORK/fw
mkdir -p "$fw"
if ! make -C "$SF_SRC/examples/baremetal" O="$fw" CORE="$core/libstreamfat-core.a" \
        </dev/null >"$WORK/fw.log" 2>&1; then
    cat "$WORK/fw.log"
    fail "examples/baremetal does not build"
fi
grep -A1 'text' "$WORK/fw.log" >&2

# ---- one run ---------------------------------------------------------------------------------
# run_case NAME FSCK ARGS...: run the firmware with ARGS after the image name, check it all.
# Sets DROPPED to the firmware's drop count.
run_case() {
    local name=$1 fsck=$2
    shift 2
    local img=$WORK/$name.img out=$WORK/$name.console rc=0
    log "case $name: firmware args: $*"
    timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -icount shift=5,sleep=off \
        -kernel "$fw/baremetal.elf" -append "$img $*" </dev/null >"$out" 2>&1 || rc=$?
    cat "$out" >&2
    ((rc != 124)) || fail "$name: the firmware did not finish within 120 s"
    ((rc == 0)) || fail "$name: the firmware exited $rc"
    grep -qx 'baremetal: ok' "$out" || fail "$name: no 'baremetal: ok' from the firmware"
    [[ -s $img ]] || fail "$name: no image written"

    local offered accepted dropped failed
    read -r offered accepted dropped failed < <(awk '/^baremetal: frames offered/ {
        print $4, $6, $8, $10 }' "$out")
    [[ -n ${failed:-} ]] || fail "$name: no frame counts in the firmware's report"
    ((failed == 0)) || fail "$name: $failed appends failed on the target"
    ((accepted + dropped == offered)) || fail "$name: accepted + dropped != offered"
    ((accepted > 8000 * 2 / 3)) || fail "$name: only $accepted frames accepted"
    DROPPED=$dropped
    local decoded
    decoded=$(awk '/^baremetal: decoded on target frames/ { print $6, $10, $12, $14 }' "$out")
    [[ $decoded == "$accepted $dropped 0 0" ]] ||
        fail "$name: the target's own read-back (frames, dropped, damage, out of order) is '$decoded'"
    local stack
    stack=$(awk '/^baremetal: stack used/ { print $4 }' "$out")
    [[ -n $stack ]] && ((stack < 16384)) ||
        fail "$name: stack use '${stack}' not reported or beyond the 16 KiB the linker script keeps"

    # The independent checker. After a power cut the findings allowed are those of the leak
    # the crash order permits (docs/DESIGN.md, "Crash consistency"): the open file's cluster
    # chain already past the size of its last checkpoint, clusters allocated ahead that no
    # file owns yet, the dirty flag. Every line of fsck's output must be one of those (or
    # its banner and summary); anything else fails.
    local frc=0
    timeout 60 "$fsck" -n "$img" </dev/null >"$WORK/$name.fsck" 2>&1 || frc=$?
    cat "$WORK/$name.fsck" >&2
    if ((frc != 0)); then
        grep -q '^baremetal: cut ' "$out" || fail "$name: $fsck -n exited $frc"
        local leak='more clusters are allocated|cluster chain length is >|^ *Truncating file to|^Reclaimed [0-9]+ unused clusters|Dirty bit is set|removing dirty bit'
        local banner='^exfatprogs version|^fsck\.fat [0-9]|^/[A-Z0-9.]+$|: corrupted\. directories|: files corrupted [0-9]+, files fixed 0|^Leaving filesystem unchanged|: [0-9]+ files, [0-9]+/[0-9]+ clusters$|^$'
        grep -Eq "$leak" "$WORK/$name.fsck" || fail "$name: $fsck -n exited $frc"
        ! grep -Ev "$leak|$banner" "$WORK/$name.fsck" | matches . ||
            fail "$name: $fsck -n finds more than the leak a cut may leave: $(grep -Ev "$leak|$banner" "$WORK/$name.fsck" | head -n 3)"
        log "case $name: $fsck -n reports only the leak a cut may leave (a chain past its file's size, unowned clusters, the dirty flag)"
    fi

    # A power cut: the image is the disk at the cut, not at the end. Every frame in it must
    # have been offered before the cut, and at least those the last completed checkpoint
    # covered must be there (the open file's size is its last checkpoint's).
    local cut_durable=-1
    if grep -q '^baremetal: cut ' "$out"; then
        read -r cut_durable offered < <(awk '/^baremetal: cut / { print $4, $6 }' "$out")
        ((cut_durable > 1000)) || fail "$name: only $cut_durable records durable at the cut"
    fi

    # The files: the firmware's listing equals the host's (the final volume only).
    awk '/^baremetal: file / { sub("^/", "", $3); print $3, $4 }' "$out" >"$WORK/$name.fw_ls"
    sf_ok ls -l "$img" | awk '$1 == "file" { print $5, $2 }' >"$WORK/$name.host_ls"
    if ((cut_durable < 0)); then
        diff -u "$WORK/$name.fw_ls" "$WORK/$name.host_ls" >&2 ||
            fail "$name: the host lists other files than the firmware did"
    fi
    local files
    files=$(awk '{ print $1 }' "$WORK/$name.host_ls" | sort)
    (($(wc -l <"$WORK/$name.host_ls") >= 2)) || fail "$name: expected a rotation (2+ files)"

    # Decode every file, in order; keep the DROP accounting from export's stderr.
    local f drops=0 n
    : >"$WORK/$name.frames"
    for f in $files; do
        sf_ok export "$img" "$f" >>"$WORK/$name.frames"
        n=$(sed -n 's/.*accounting for \([0-9]*\) lost records.*/\1/p' "$SF_LAST_ERR")
        drops=$((drops + ${n:-0}))
    done
    ((drops == dropped)) || fail "$name: DROP records account for $drops frames, firmware dropped $dropped"

    # Every frame: iface can0, data = seq (u32 LE) + ms (u32 LE); seq strictly increasing
    # and below offered; timestamp strictly increasing, in the named millisecond.
    local check
    check=$(awk -v offered="$offered" -v X=0123456789ABCDEF '
        function hex(s) {       # two upper-case hex digits (POSIX awk has no strtonum)
            return index(X, substr(s, 1, 1)) * 16 + index(X, substr(s, 2, 1)) - 17
        }
        function le32(h, o,   v, i) {
            v = 0
            for (i = 3; i >= 0; i--)
                v = v * 256 + hex(substr(h, o + 2 * i, 2))
            return v
        }
        {
            if ($2 != "can0") { print "bad interface: " $0; exit }
            split($3, p, "#")
            if (length(p[2]) != 16) { print "bad data: " $0; exit }
            seq = le32(p[2], 1); ms = le32(p[2], 9)
            ts = substr($1, 2, length($1) - 2)
            split(ts, t, ".")
            us = t[1] * 1000000 + t[2]
            if (NR > 1 && seq <= last_seq) { print "sequence not increasing: " $0; exit }
            if (seq >= offered) { print "sequence beyond offered: " $0; exit }
            if (NR > 1 && us <= last_us) { print "timestamp not increasing: " $0; exit }
            if (int(us / 1000) != ms) { print "timestamp not in its millisecond: " $0; exit }
            last_seq = seq; last_us = us; n++
        }
        END { print "frames", n + 0 }' "$WORK/$name.frames")
    if ((cut_durable >= 0)); then
        [[ $check =~ ^frames\ ([0-9]+)$ ]] || fail "$name: exported frames: $check"
        ((BASH_REMATCH[1] >= cut_durable)) ||
            fail "$name: $check after the cut, but $cut_durable were durable before it"
        log "case $name: $check survive the cut ($cut_durable were durable, $offered offered)"
        return 0
    fi
    [[ $check == "frames $accepted" ]] ||
        fail "$name: exported frames do not match the firmware's: $check (accepted $accepted)"
    log "case $name: $accepted frames back in order, $dropped dropped and accounted for, $fsck clean"
}

run_case exfat fsck.exfat exfat
((DROPPED == 0)) || fail "exfat: $DROPPED frames dropped with a main loop that never stalls"
if command -v fsck.fat >/dev/null 2>&1; then
    run_case fat16 fsck.fat fat16
    ((DROPPED == 0)) || fail "fat16: $DROPPED frames dropped with a main loop that never stalls"
else
    log "fsck.fat not installed: FAT16 case skipped"
fi
run_case sector4k fsck.exfat exfat 4k
((DROPPED == 0)) || fail "sector4k: $DROPPED frames dropped with a main loop that never stalls"
sf_ok info "$WORK/sector4k.img" | matches -E '^sector size: +4096$' ||
    fail "sector4k: the image does not have 4096-byte sectors"
for ms in 600 1234 1901; do
    run_case "cut$ms" fsck.exfat exfat "cut=$ms"
done
if command -v fsck.fat >/dev/null 2>&1; then
    run_case fat16cut1234 fsck.fat fat16 cut=1234
fi
run_case busy fsck.exfat exfat busy
((DROPPED > 0)) || fail "busy: the stalled main loop should have made the ring overflow"
echo "PASS: examples/baremetal on mps2-an386: exFAT (512 and 4096-byte sectors) and FAT16 images check clean, every frame back"
