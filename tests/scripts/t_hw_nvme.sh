#!/usr/bin/env bash
# examples/nvme on QEMU's virt board (AArch64) with an emulated NVMe SSD (drivers/nvme), as
# `make hw-nvme` runs it (scripts/hw_nvme.sh: what is built, run and checked is listed
# there): 256 MiB of the gen:raw pattern streamed in 1 MiB commands with 4+ in flight and a
# rotated CAN log on exFAT with 1 MiB clusters, checked on the host (fsck.exfat -n, the
# bytes of RAW.BIN, the frames of every CAN file in order, the firmware's command report);
# an injected Write Fault reported as SF_EIO with a clean stop; a lost completion timed out;
# MDTS splitting; 4096-byte sectors; the controller behind a root port; no controller
# reported, no hang. The 256 MiB the issue asks for stay in make check: that QEMU run takes
# 2-15 s under TCG, the whole test 45-65 s with the core's AArch64 build (2026-12-01, two
# loaded cores); QEMU_TIMEOUT bounds each run to 300 s.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool clang ld.lld llvm-ar llvm-ranlib llvm-size qemu-system-aarch64 fsck.exfat cmake make
need_sf

rc=0
bash "$SF_SRC/scripts/hw_nvme.sh" "$WORK" </dev/null || rc=$?
((rc != 77)) || skip "a tool scripts/hw_nvme.sh needs is missing"
((rc == 0)) || fail "scripts/hw_nvme.sh exited $rc"
