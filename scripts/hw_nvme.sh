#!/usr/bin/env bash
# examples/nvme on QEMU's virt board (AArch64) with an emulated NVMe SSD: build, run, check
# on the host (`make hw-nvme`, tests/scripts/t_hw_nvme.sh).
#
#   scripts/hw_nvme.sh [OUT]      (default build-hw; SF=path/to/streamfat, default build/)
#
# Builds the core for bare-metal AArch64 with clang (cmake/aarch64-none-elf-clang.cmake) into
# OUT/core-a64, the firmware into OUT/nvme, then runs three cases, each bounded by `timeout`:
#   main     OUT/nvme.img (1 GiB, sparse): the firmware formats it exFAT with 1 MiB clusters,
#            streams RAW_MIB (default 256) MiB of the gen:raw pattern in 1 MiB requests with
#            8 in flight and logs 200,000 gen:can frames into CAN/, rotating every 2 MiB.
#            Checked here: exit 0 and "nvme: ok"; fsck.exfat -n clean; `streamfat cat` of
#            RAW.BIN is exactly the pattern (byte i = byte i mod 8 of the u64 LE i / 8);
#            `streamfat export` of the CAN files, in name order, gives frames 0 .. N-1 in
#            order (id 0x100 + k mod 16, data k as u64 LE), none missing or twice, in at
#            least 3 files; the firmware's command report shows RAW_MIB writes of 1 MiB at
#            least and a queue depth of at least 4.
#   fault    fault=3 raw=16: the driver's hook fails the 3rd write of the raw stream with a
#            Write Fault status: the firmware must report SF_EIO ("I/O error (-5)") from the
#            stream, shut the controller down and exit 1 - not hang, not crash.
#   lost     lost=5 timeout=1000 raw=16: the hook drops the 5th write's completion: the driver
#            times out, the firmware reports SF_ETIMEDOUT, shuts down, exits 1.
#   split    mdts=7 (512 KiB) raw=32: every 1 MiB request goes out as two commands, none
#            larger; fsck clean and RAW.BIN the pattern.
#   sector4k logical_block_size=4096 raw=16: the namespace's LBA format gives 4096-byte
#            sectors; fsck clean and RAW.BIN the pattern.
#   bridge   the controller behind a pcie-root-port (bus 1, as on a Zynq UltraScale+): the
#            bridge numbered and its window opened; fsck clean and RAW.BIN the pattern.
#   nodev    no -device nvme: the firmware must say "no NVMe controller" and exit 2.
# Exit 0 when every check passes, 1 on a failure, 77 when a tool is missing.
set -euo pipefail
# grep -q that reads all its input: an early exit would kill the writer with SIGPIPE,
# which pipefail reports as a failure (tests/scripts/lib.sh has the same)
matches() { grep "$@" >/dev/null; }

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-hw}
SF=${SF:-$src/build/streamfat}
RAW_MIB=${RAW_MIB:-256}
CAN_FRAMES=200000
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}

fail() { echo "hw_nvme: FAIL: $*" >&2; exit 1; }
say() { echo "hw_nvme: $*" >&2; }

for t in clang ld.lld llvm-ar llvm-ranlib llvm-size qemu-system-aarch64 fsck.exfat cmake make \
         python3 timeout; do
    command -v "$t" >/dev/null 2>&1 || { say "$t not installed (scripts/deps.sh installs it)"; exit 77; }
done
[[ -x $SF ]] || fail "the CLI is not built: SF=$SF"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---- build ------------------------------------------------------------------------------------
core=$out/core-a64
if ! cmake -S "$src" -B "$core" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-none-elf-clang.cmake" \
        </dev/null >"$out/core-a64.log" 2>&1 ||
   ! cmake --build "$core" -j "${JOBS:-2}" </dev/null >>"$out/core-a64.log" 2>&1; then
    cat "$out/core-a64.log" >&2
    fail "the core does not build for aarch64-none-elf"
fi
if ! make -C "$src/examples/nvme" O="$out/nvme" CORE="$core/libstreamfat-core.a" \
        </dev/null >"$out/nvme-build.log" 2>&1; then
    cat "$out/nvme-build.log" >&2
    fail "examples/nvme does not build"
fi
# the size line (make prints none when nvme.elf was already up to date)
grep -A1 'text' "$out/nvme-build.log" >&2 || true

# ---- run --------------------------------------------------------------------------------------
# run NAME IMAGE|- ARGS...: the firmware with ARGS on its command line; sets RC, CONSOLE.
run() {
    local name=$1 img=$2
    shift 2
    local dev=()
    [[ $img != - ]] && dev=(-drive "file=$img,if=none,id=d,format=raw"
                            -device "nvme,drive=d,serial=sf0,mdts=${MDTS:-8}${NVME_OPTS:-}")
    [[ -n ${ROOT_PORT:-} ]] && dev=(-device pcie-root-port,id=rp0,chassis=1,slot=0 "${dev[@]}")
    CONSOLE=$out/$name.console
    RC=0
    local t0=$SECONDS
    timeout "$QEMU_TIMEOUT" qemu-system-aarch64 -M virt -cpu cortex-a53 -m 256M -nic none \
        "${dev[@]}" -semihosting -no-reboot -nographic -monitor none \
        -kernel "$out/nvme/nvme.elf" -append "$*" </dev/null >"$CONSOLE" 2>&1 || RC=$?
    tr -d '\r' <"$CONSOLE" >"$CONSOLE.txt" && mv "$CONSOLE.txt" "$CONSOLE"
    cat "$CONSOLE" >&2
    ((RC != 124)) || fail "$name: QEMU did not finish within $QEMU_TIMEOUT s"
    say "$name: QEMU exited $RC after $((SECONDS - t0)) s"
}

field() {  # field LINE-PREFIX KEY: the number after KEY on the console line
    awk -v p="$1" -v k="$2" 'index($0, p) == 1 { for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$CONSOLE"
}

# check_raw IMAGE BYTES: RAW.BIN on the image is BYTES bytes of the gen:raw pattern.
check_raw() {
    timeout 600 "$SF" cat "$1" /RAW.BIN </dev/null | timeout 600 python3 -c '
import array, sys
want, got, step = int(sys.argv[1]), 0, 1 << 20
inp = sys.stdin.buffer
while True:
    b = inp.read(step)
    if not b:
        break
    if len(b) % 8 or got % 8:
        sys.exit("RAW.BIN: a read of %d bytes at %d" % (len(b), got))
    w = array.array("Q", range(got // 8, (got + len(b)) // 8))
    if sys.byteorder != "little":
        w.byteswap()
    if w.tobytes() != b:
        e = next(i for i in range(len(b)) if b[i] != w.tobytes()[i])
        sys.exit("RAW.BIN: byte %d differs from the gen:raw pattern" % (got + e))
    got += len(b)
if got != want:
    sys.exit("RAW.BIN: %d bytes, want %d" % (got, want))
print("RAW.BIN: %d bytes, the gen:raw pattern" % got, file=sys.stderr)
' "$2"
}

# ---- main case --------------------------------------------------------------------------------
img=$out/nvme.img
rm -f "$img"
truncate -s 1G "$img"
run main "$img" "raw=$RAW_MIB can=$CAN_FRAMES"
((RC == 0)) || fail "main: the firmware exited $RC"
grep -qx 'nvme: ok' "$CONSOLE" || fail "main: no 'nvme: ok'"
grep -qx 'nvme: controller shut down' "$CONSOLE" || fail "main: the controller was not shut down"

frc=0
timeout 120 fsck.exfat -n "$img" </dev/null >"$out/main.fsck" 2>&1 || frc=$?
cat "$out/main.fsck" >&2
((frc == 0)) || fail "main: fsck.exfat -n exited $frc"

raw_bytes=$((RAW_MIB << 20))
[[ $(field 'nvme: raw' bytes) == "$raw_bytes" ]] || fail "main: the firmware did not stream $raw_bytes bytes"
check_raw "$img" "$raw_bytes" || fail "main: RAW.BIN is not the pattern"

mapfile -t files < <("$SF" ls "$img" /CAN </dev/null | awk '/\.SFL$/ { print $NF }' | sort)
((${#files[@]} >= 3)) || fail "main: ${#files[@]} CAN files, want a rotation into 3 or more"
: >"$out/main.frames"
for f in "${files[@]}"; do
    "$SF" export "$img" "/CAN/${f##*/}" </dev/null >>"$out/main.frames" ||
        fail "main: streamfat export /CAN/$f failed"
done
python3 - "$out/main.frames" "$CAN_FRAMES" <<'EOF' || fail "main: the CAN frames are not all there in order"
import sys
k = 0
with open(sys.argv[1]) as f:
    for line in f:
        t = line.split()
        ident, data = t[2].split("#")
        v = int.from_bytes(bytes.fromhex(data), "little")
        if t[1] != "can0" or v != k or int(ident, 16) != 0x100 + k % 16:
            sys.exit("frame %d: %s" % (k, line.strip()))
        k += 1
if k != int(sys.argv[2]):
    sys.exit("%d frames, want %s" % (k, sys.argv[2]))
print("CAN: %d frames in order" % k, file=sys.stderr)
EOF

mib_writes=$(awk '/^nvme: size from / { if ($4 >= 1048576) n += $6 } END { print n + 0 }' "$CONSOLE")
depth=$(awk '/^nvme: max_depth / { print $3 }' "$CONSOLE")
((mib_writes >= RAW_MIB)) || fail "main: $mib_writes commands of 1 MiB, want $RAW_MIB at least"
((${depth:-0} >= 4)) || fail "main: queue depth ${depth:-?}, want 4 at least"
say "main: fsck clean, RAW.BIN = pattern, ${#files[@]} CAN files in order, $mib_writes 1 MiB commands, depth $depth"

# ---- a write that fails -----------------------------------------------------------------------
fimg=$out/nvme-fault.img
rm -f "$fimg"
truncate -s 1G "$fimg"
run fault "$fimg" raw=16 can=1000 fault=3
rm -f "$fimg"
((RC == 1)) || fail "fault: the firmware exited $RC, want 1"
grep -Eq '^nvme: sf_stream_(submit|poll|close) failed: .*\(-5\) status 0x280$' "$CONSOLE" ||
    fail "fault: no SF_EIO (-5) with the injected status reported"
grep -q '^nvme: max_depth ' "$CONSOLE" || fail "fault: no command report after the error"
grep -qx 'nvme: controller shut down' "$CONSOLE" || fail "fault: the controller was not shut down"
[[ $(field 'nvme: commands' errors) == 1 ]] || fail "fault: want exactly one failed command"
say "fault: SF_EIO reported, controller shut down, exit 1"

# ---- a lost completion: the driver's timeout ----------------------------------------------------
limg=$out/nvme-lost.img
rm -f "$limg"
truncate -s 1G "$limg"
run lost "$limg" raw=16 can=1000 lost=5 timeout=1000
rm -f "$limg"
((RC == 1)) || fail "lost: the firmware exited $RC, want 1"
grep -Eq '^nvme: sf_stream_(submit|poll|close) failed: .*\(-110\)$' "$CONSOLE" ||
    fail "lost: no SF_ETIMEDOUT (-110) reported"
grep -qx 'nvme: controller shut down' "$CONSOLE" || fail "lost: the controller was not shut down"
say "lost: the command timed out (SF_ETIMEDOUT), controller shut down, exit 1"

# ---- MDTS below the request size: every 1 MiB request split in two -----------------------------
simg=$out/nvme-split.img
rm -f "$simg"
truncate -s 1G "$simg"
MDTS=7 run split "$simg" raw=32 can=1000
((RC == 0)) || fail "split: the firmware exited $RC"
[[ $(field 'nvme: model' max_transfer) == 524288 ]] || fail "split: MDTS 7 not read as 512 KiB"
big=$(awk '/^nvme: size from / { if ($4 > 524288) n += $6 } END { print n + 0 }' "$CONSOLE")
half=$(awk '/^nvme: size from / { if ($4 == 524288) n += $6 } END { print n + 0 }' "$CONSOLE")
((big == 0)) || fail "split: $big commands larger than MDTS allows"
((half >= 64)) || fail "split: $half commands of 512 KiB, want 64 at least (32 MiB in halves)"
frc=0
timeout 120 fsck.exfat -n "$simg" </dev/null >"$out/split.fsck" 2>&1 || frc=$?
((frc == 0)) || { cat "$out/split.fsck" >&2; fail "split: fsck.exfat -n exited $frc"; }
check_raw "$simg" $((32 << 20)) || fail "split: RAW.BIN is not the pattern"
rm -f "$simg"
say "split: $half commands of 512 KiB, none larger, fsck clean, RAW.BIN = pattern"

# ---- a namespace of 4096-byte sectors ------------------------------------------------------------
kimg=$out/nvme-4k.img
rm -f "$kimg"
truncate -s 1G "$kimg"
NVME_OPTS=,logical_block_size=4096,physical_block_size=4096 run sector4k "$kimg" raw=16 can=20000
((RC == 0)) || fail "sector4k: the firmware exited $RC"
[[ $(field 'nvme: model' sector) == 4096 ]] || fail "sector4k: the LBA format was not read as 4096 bytes"
frc=0
timeout 120 fsck.exfat -n "$kimg" </dev/null >"$out/sector4k.fsck" 2>&1 || frc=$?
((frc == 0)) || { cat "$out/sector4k.fsck" >&2; fail "sector4k: fsck.exfat -n exited $frc"; }
check_raw "$kimg" $((16 << 20)) || fail "sector4k: RAW.BIN is not the pattern"
"$SF" info "$kimg" </dev/null | matches -E '^sector size: +4096$' ||
    fail "sector4k: the volume does not have 4096-byte sectors"
rm -f "$kimg"
say "sector4k: 4096-byte LBA format found, fsck clean, RAW.BIN = pattern"

# ---- behind a PCIe root port, as on a Zynq UltraScale+ ------------------------------------------
bimg=$out/nvme-bridge.img
rm -f "$bimg"
truncate -s 1G "$bimg"
ROOT_PORT=1 NVME_OPTS=,bus=rp0 run bridge "$bimg" raw=16 can=1000
((RC == 0)) || fail "bridge: the firmware exited $RC"
[[ $(field 'nvme: controller' bus) == 1 && $(field 'nvme: controller' bridges) == 1 ]] ||
    fail "bridge: the controller was not found on bus 1 behind one bridge"
frc=0
timeout 120 fsck.exfat -n "$bimg" </dev/null >"$out/bridge.fsck" 2>&1 || frc=$?
((frc == 0)) || { cat "$out/bridge.fsck" >&2; fail "bridge: fsck.exfat -n exited $frc"; }
check_raw "$bimg" $((16 << 20)) || fail "bridge: RAW.BIN is not the pattern"
rm -f "$bimg"
say "bridge: found on bus 1 behind the root port, fsck clean, RAW.BIN = pattern"

# ---- no controller ----------------------------------------------------------------------------
run nodev - raw=16
((RC == 2)) || fail "nodev: the firmware exited $RC, want 2"
grep -qx 'nvme: no NVMe controller on the PCIe bus' "$CONSOLE" || fail "nodev: no clear report"
say "nodev: reported, exit 2"
say "PASS"
