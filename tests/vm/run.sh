#!/usr/bin/env bash
# run.sh SF_BINARY HELPER_DIR WORKDIR [CASE,CASE...]
#
# The CAN test VM from end to end, for t_vm_can and by hand: builds the initramfs
# (mkimage.sh) with SF_BINARY, the helpers of HELPER_DIR (the build's tests/) and every case in tests/vm/cases, boots it once (boot.sh),
# and reports each case by name from the serial console:
#     case NAME: pass|fail|skip [detail]
# plus the cases' @@INFO lines (measurements). Exit 0 if every case that ran passed and
# none is missing, 1 if any failed or the guest did not finish (then the console is
# printed), 77 if a tool or the kernel is missing.
#
# Environment: VM_TIMEOUT (default 900 s: the whole boot, killed after it), VM_CASE_TIMEOUT
# (default 240 s per case), VM_CARDS (default 3 Kvaser PCI cards on one bus).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sf=$1 helpers=$2 work=$3 only=${4:-}

for t in qemu-system-x86_64 cpio gzip busybox candump cangen cansend ip ldd; do
    command -v "$t" >/dev/null || { echo "vm: $t not installed" >&2; exit 77; }
done
[[ -x $sf ]] || { echo "vm: no streamfat binary at $sf" >&2; exit 1; }

rc=0
kernel=$("$here/mkimage.sh" "$work/initrd.cpio.gz" "$sf" "$here/cases" "$helpers") || rc=$?
((rc == 0)) || exit "$rc"
[[ -r $kernel ]] || { echo "vm: cannot read $kernel" >&2; exit 77; }

extra="sf.case_timeout=${VM_CASE_TIMEOUT:-240}"
[[ -n $only ]] && extra+=" sf.only=$only"
[[ -n ${ASAN_OPTIONS:-} ]] && extra+=" sf.asan=$ASAN_OPTIONS"
start=$SECONDS
brc=0
"$here/boot.sh" "$kernel" "$work/initrd.cpio.gz" "$work/console" "${VM_TIMEOUT:-900}" \
    "${VM_CARDS:-3}" "$extra" || brc=$?
echo "vm: boot and cases took $((SECONDS - start)) s (qemu status $brc)"

status=0
con=$work/console
tr -d '\r' < "$con" > "$con.txt"
grep -q '^@@VM ready' "$con.txt" || { echo "vm: the guest never got ready"; status=1; }
for c in "$here"/cases/*.sh; do
    name=$(basename "$c" .sh)
    if [[ -n $only ]] && [[ ",$only," != *",$name,"* ]]; then
        continue
    fi
    line=$(grep -m1 "^@@CASE $name " "$con.txt" || true)
    grep "^@@INFO $name " "$con.txt" | sed "s/^@@INFO $name /  info $name: /" || true
    if [[ -z $line ]]; then
        echo "case $name: fail (no result: the guest stopped before it)"
        status=1
        continue
    fi
    set -- $line
    echo "case $name: ${*:3}"
    [[ $3 == fail ]] && status=1
done
grep -q '^@@VM done' "$con.txt" || { echo "vm: the guest did not finish"; status=1; }
if ((status != 0)); then
    echo "---- console ----"
    grep -v '^@@INFO' "$con.txt" | tail -200
fi
exit "$status"
