#!/usr/bin/env bash
# The live CAN bus on a real kernel: one QEMU boot (TCG) of Debian's installed kernel with
# three emulated Kvaser PCI cards (SJA1000) on one virtual bus and vcan, running every case
# in tests/vm/cases against the CLI of this build (the ASan build in make check: its
# libraries go into the initramfs). Each case is reported by name (tests/vm/run.sh);
# docs/TESTING.md "The CAN test VM" and docs/RELIABILITY.md "Issue 27: live capture" list
# them. SF_VM_ONLY=CASE,CASE runs a subset.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool qemu-system-x86_64 cpio gzip busybox candump cangen cansend ip ldd python3
need_sf
compgen -G '/boot/vmlinuz-*' >/dev/null || skip "no kernel in /boot (linux-image-amd64)"

rc=0
bash "$SF_SRC/tests/vm/run.sh" "$SF" "$SF_TESTS_BIN" "$WORK" "${SF_VM_ONLY:-}" </dev/null || rc=$?
((rc != 77)) || skip "the VM cannot be built here (see above)"
((rc == 0)) || fail "a VM case failed (above)"
