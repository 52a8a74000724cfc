#!/usr/bin/env bash
# The core's unit tests on a big-endian CPU: cross-build them for 32-bit PowerPC Linux
# (cmake/powerpc-linux-gnu.cmake, static executables) and run them under qemu-user.
# Every on-disk field goes through src/util/le.h, so the results must be the same as on
# the host; a failure here is an endianness bug (or a test that writes host-order bytes).
#
# The tests chosen are those of core code only (codec, stream, FAT, names, UTF-16, up-case,
# time, partitions, RAM and fault devices, the logger, the tiny logger, the pack stage: its
# byte-vector prediction has a byte-order path); the Linux I/O devices (bdev_file,
# aiobd) and the CLI's units are left to the host.
#
# Then the bytes themselves, across byte orders (a test that only reads back what the same
# CPU wrote cannot see a field stored in host order):
#   - mklog (a log file made with rec.h) gives the same bytes on PowerPC as on the host, and
#     log_frames decodes the host's file on PowerPC and PowerPC's on the host identically;
#   - model_ops (seeded random file operations against a model, tests/helpers) runs on
#     PowerPC on an exFAT image made there (mkfs_img) and on a FAT32 image from mkfs.fat;
#     on the host, fsck finds each clean and `streamfat get` reads every file back equal
#     to the model's final tree.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

tests=(rec stream fat_table fat_name utf upcase time part bdev_ram bdev_fault log tiny_log block_pack)

for t in powerpc-linux-gnu-gcc qemu-ppc cmake; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "SKIP: $t not installed (scripts/deps.sh installs it)"
        exit 77
    fi
done

# The point is the byte order: make sure the cross compiler targets a big-endian CPU.
macros=$(powerpc-linux-gnu-gcc -dM -E - </dev/null)
if ! grep -q '__BYTE_ORDER__ __ORDER_BIG_ENDIAN__' <<<"$macros"; then
    fail "powerpc-linux-gnu-gcc does not target a big-endian CPU"
fi

bld=$WORK/ppc
if ! cmake -S "$SF_SRC" -B "$bld" -DCMAKE_TOOLCHAIN_FILE="$SF_SRC/cmake/powerpc-linux-gnu.cmake" \
        </dev/null >"$WORK/configure.log" 2>&1; then
    cat "$WORK/configure.log"
    fail "cmake configure for powerpc-linux-gnu failed"
fi
helpers=(mklog log_frames mkfs_img model_ops)
targets=("${helpers[@]}")
for t in "${tests[@]}"; do
    targets+=("test_$t")
done
if ! cmake --build "$bld" -j 2 --target "${targets[@]}" </dev/null >"$WORK/build.log" 2>&1; then
    cat "$WORK/build.log"
    fail "the unit tests do not build for powerpc-linux-gnu (errors above)"
fi

status=0
for t in "${tests[@]}"; do
    exe=$bld/tests/test_$t
    kind=$(file -b "$exe" 2>/dev/null || true)
    if ! [[ $kind =~ MSB.*PowerPC ]]; then
        fail "$exe is not a big-endian PowerPC executable: $kind"
    fi
    start=$(date +%s)
    rc=0
    # Run in the build's test directory, as ctest runs the host's unit tests.
    (cd "$bld/tests" && timeout 300 qemu-ppc "$exe" </dev/null >"$WORK/$t.out" 2>&1) || rc=$?
    summary=$(tail -n 1 "$WORK/$t.out")
    echo "unit_$t on powerpc: exit $rc, $(($(date +%s) - start)) s: $summary"
    if [ "$rc" -ne 0 ] || ! [[ $summary =~ ^[1-9][0-9]*\ checks,\ 0\ failed$ ]]; then
        grep -E 'failed|FAIL|Assertion|error' "$WORK/$t.out" | head -n 40 || true
        echo "FAIL: unit_$t fails on big-endian PowerPC"
        status=1
    fi
done
((status == 0)) || fail "unit tests fail on big-endian PowerPC"

# ---- across byte orders --------------------------------------------------------------------
need_sf
ppc() { # NAME ARGS...: a PowerPC helper under qemu-user
    local name=$1 rc=0
    shift
    timeout 300 qemu-ppc "$bld/tests/$name" "$@" </dev/null 2>"$WORK/ppc.err" || rc=$?
    [[ -s $WORK/ppc.err ]] && cat "$WORK/ppc.err" >&2
    ((rc == 0)) || fail "$name $* on PowerPC exited $rc"
}

x=$FASTWORK         # model_ops syncs often: tmpfs
ppc mklog "$x/be.sfl" >/dev/null
run_helper mklog "$x/le.sfl" >/dev/null
cmp "$x/be.sfl" "$x/le.sfl" || fail "mklog writes other bytes on PowerPC than on the host"
run_helper log_frames "$x/be.sfl" >"$x/frames.host"
ppc log_frames "$x/le.sfl" >"$x/frames.ppc"
(($(wc -l <"$x/frames.host") > 2000)) || fail "log_frames decoded too little: $(wc -l <"$x/frames.host") lines"
cmp "$x/frames.host" "$x/frames.ppc" ||
    fail "log_frames on PowerPC decodes the host's log differently than the host decodes PowerPC's"
log "log file: the same bytes from both byte orders, decoded alike ($(wc -l <"$x/frames.host") lines)"

# model_on_ppc NAME FSCK: run model_ops on PowerPC on $x/NAME.img, check it on the host.
model_on_ppc() {
    local name=$1 fsck=$2 img=$x/$1.img dump=$x/$1.dump rel n=0 frc=0
    ppc model_ops "$img" 7 600 100 "$dump"
    timeout 60 "$fsck" -n "$img" </dev/null >"$WORK/$name.fsck" 2>&1 || frc=$?
    ((frc == 0)) || { cat "$WORK/$name.fsck" >&2; fail "$name: $fsck -n finds the image PowerPC wrote damaged"; }
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        rm -f "$x/got"
        sf_ok get "$img" "$rel" "$x/got"
        cmp -s "$x/got" "$dump/$rel" || fail "$name: $rel as read on the host differs from the model"
        n=$((n + 1))
    done < <(cd "$dump" && find . -type f -print0)
    ((n > 10)) || fail "$name: only $n files in the model"
    log "$name: $fsck clean, $n files written on PowerPC read back equal on the host"
}

if command -v fsck.exfat >/dev/null 2>&1; then
    ppc mkfs_img "$x/exfat.img" 64M >/dev/null
    model_on_ppc exfat fsck.exfat
else
    log "fsck.exfat not installed: exFAT image case skipped"
fi
if command -v mkfs.fat >/dev/null 2>&1 && command -v fsck.fat >/dev/null 2>&1; then
    truncate -s 64M "$x/fat32.img"
    mkfs.fat -F 32 "$x/fat32.img" </dev/null >/dev/null
    model_on_ppc fat32 fsck.fat
else
    log "dosfstools not installed: FAT32 image case skipped"
fi
echo "PASS: ${#tests[@]} unit tests pass on big-endian PowerPC (qemu-ppc); logs and volumes cross byte orders intact"
