#!/usr/bin/env bash
# The core's unit tests on a big-endian CPU: cross-build them for 32-bit PowerPC Linux
# (cmake/powerpc-linux-gnu.cmake, static executables) and run them under qemu-user.
# Every on-disk field goes through src/util/le.h, so the results must be the same as on
# the host; a failure here is an endianness bug (or a test that writes host-order bytes).
#
# The tests chosen are those of core code only (codec, stream, FAT, names, UTF-16, up-case,
# time, partitions, RAM and fault devices, the logger); the Linux I/O devices (bdev_file,
# aiobd) and the CLI's units are left to the host.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

tests=(rec stream fat_table fat_name utf upcase time part bdev_ram bdev_fault log)

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
targets=()
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
[ "$status" -eq 0 ] && echo "PASS: ${#tests[@]} unit tests pass on big-endian PowerPC (qemu-ppc)"
exit "$status"
