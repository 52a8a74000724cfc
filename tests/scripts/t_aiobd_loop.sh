#!/usr/bin/env bash
# The asynchronous file device on block device nodes: loop devices with 512- and 4096-byte
# logical sectors, opened with O_DIRECT, queue depth 4 and 1 MiB requests (plus a shorter
# last one), through the io_uring backend (when this machine has io_uring: then it must
# be the one chosen) and the threads fallback. The helper writes a pattern in shuffled
# request order, flushes, reads it back asynchronously; then dd (O_DIRECT, bypassing the
# page cache) and cmp check what the device holds. One buffered run without O_DIRECT too.
set -euo pipefail
. "${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/scripts/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root for losetup"
need_tool losetup
need_tool cmp

uring=$("$(helper aiobd_write)" --probe)
log "probe: $uring"

img=$WORK/disk.img
truncate -s 48M "$img"
size=$((32 * 1024 * 1024 + 12 * 1024))  # 32 full 1 MiB requests and a 12 KiB one

run=0
check() {  # check LOOP BACKEND-ARGS...: write, read back, compare with dd
    local dev=$1 out want
    shift
    run=$((run + 1))
    mkpattern "$WORK/pat" "$size" "aiobd.$run"
    out=$(timeout 300 "$(helper aiobd_write)" --depth 4 --req 1048576 "$@" "$dev" "$WORK/pat" 2>&1) ||
        fail "aiobd_write $* $dev: $out"
    has_sanitizer_report <(echo "$out") && fail "sanitizer report: $out"
    log "aiobd_write $* $dev: $out"
    case " $* " in
        *" --threads "*) want=threads ;;
        *) if [[ $uring == uring=1 ]]; then want=io_uring; else want=threads; fi ;;
    esac
    [[ $out == *"backend=$want "* ]] || fail "expected backend $want, got: $out"
    [[ $out == *"bytes=$size"* ]] || fail "wrong size: $out"
    timeout 120 dd if="$dev" of="$WORK/back" bs=4096 count=$((size / 4096)) iflag=direct \
        status=none </dev/null || fail "dd from $dev"
    cmp "$WORK/pat" "$WORK/back" || fail "$dev holds other data than was written ($*)"
}

for lbs in 512 4096; do
    loop_attach "$img" -b "$lbs"
    dev=$LOOP
    [[ $(blockdev --getss "$dev") == "$lbs" ]] || fail "$dev: logical sector size is not $lbs"
    check "$dev" --direct
    check "$dev" --direct --threads
    [[ $lbs == 512 ]] && check "$dev" --direct --sector-size 4096
    [[ $lbs == 512 ]] && check "$dev"
    loop_detach "$dev"
done

# the image itself holds the last run's data too
cmp -n "$size" "$WORK/pat" "$img" || fail "image file differs from the last pattern"
exit 0
