#!/usr/bin/env bash
# make hw-sd inside make check (issue 19): the SD-over-SPI driver (drivers/sd_spi) and the
# logger firmware (examples/sd-spi) on QEMU's lm3s6965evb, run by scripts/hw_sd.sh into a
# work directory with the CLI under test as the host's checker:
#   - a blank 4 GiB card (SDHC: block addresses) formatted FAT32 and a blank 256 MiB card
#     (SDSC: byte addresses, CMD16; CRC on) formatted FAT16; a third run mounts the 256 MiB
#     card the second left; each logs gen:can frames from the SysTick interrupt with
#     rotation by size;
#   - on the host: fsck.fat -n clean on the partition, streamfat export of every file gives
#     frames 0..N-1 in order with no gap (DROP records only for drops the firmware
#     reported), the files the rotation predicts (all but the last exactly split_bytes,
#     together the bytes the logger wrote, 3 or more);
#   - no card (no -drive): sd_spi_init reports SF_ETIMEDOUT at CMD0, exit 2; fault
#     injection from the 3rd command (init: SF_EIO at ACMD41) and from command 150 (the
#     logger: SF_EIO from sf_log_service, then a close that fails cleanly, exit 1); every
#     QEMU run under timeout, so a hang fails.
# About a minute (QEMU under TCG with -icount: about 13 s a logging run on this machine).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm fsck.fat cmake make python3
need_sf

rc=0
SF="$SF" JOBS=2 bash "$SF_SRC/scripts/hw_sd.sh" "$WORK/hw" </dev/null >"$WORK/hw_sd.out" 2>&1 || rc=$?
cat "$WORK/hw_sd.out" >&2
((rc != 77)) || skip "scripts/hw_sd.sh: a tool is missing"
((rc == 0)) || fail "scripts/hw_sd.sh exited $rc"
grep -q '^hw_sd.sh: ok: ' "$WORK/hw_sd.out" || fail "scripts/hw_sd.sh did not finish its checks"
for c in sdhc sdsc remount; do
    grep -q "^hw_sd.sh: $c: [0-9]* frames back in order" "$WORK/hw_sd.out" ||
        fail "case $c was not checked"
done
for c in nocard initfail logfail; do
    grep -q "^hw_sd.sh: $c: reported sd-spi: error " "$WORK/hw_sd.out" || fail "fault case $c was not checked"
done
echo "PASS: SD over SPI on lm3s6965evb: SDHC/FAT32 and SDSC/FAT16 cards logged and checked, faults reported"
