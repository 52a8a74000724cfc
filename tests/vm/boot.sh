#!/usr/bin/env bash
# boot.sh KERNEL INITRAMFS CONSOLE_LOG [TIMEOUT_S] [CARDS] [EXTRA_CMDLINE]
#
# Boots the CAN test VM once under qemu-system-x86_64 with TCG (KVM is not used: /dev/kvm
# exists on the project's machines but guests hang with it): CARDS (default 3) emulated
# Kvaser PCI cards (SJA1000) on one virtual CAN bus, the serial console written to
# CONSOLE_LOG. The guest (tests/vm/guest/init) powers off when its cases are done; qemu is
# killed after TIMEOUT_S (default 600) whatever happens. Exit status: qemu's, or 124 on
# the timeout.
set -euo pipefail
kernel=$1 initrd=$2 console=$3 limit=${4:-600} cards=${5:-3} extra=${6:-}

devs=()
for ((i = 0; i < cards; i++)); do
    devs+=(-device "kvaser_pci,canbus=bus0")
done
exec timeout -s KILL "$limit" qemu-system-x86_64 \
    -machine pc,accel=tcg -cpu max -smp 1 -m 1024 \
    -nodefaults -no-reboot -display none -monitor none \
    -serial "file:$console" \
    -object can-bus,id=bus0 "${devs[@]}" \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 quiet loglevel=1 panic=-1 oops=panic $extra" </dev/null
