#!/usr/bin/env bash
# mkimage.sh OUT.cpio.gz SF_BINARY CASE_DIR HELPER_DIR [KERNEL_RELEASE]
#
# Builds the initramfs of the CAN test VM from this host's files, at test time (nothing
# is downloaded, nothing is committed): busybox-static as the shell and core tools, the
# streamfat binary under test with every shared library ldd names (the ASan build's
# libasan/libubsan included: the guest runs exactly the binary ctest tests), can-utils,
# iproute2's `ip` (busybox's cannot set CAN bitrates), the test helpers the cases use
# (HELPER_DIR: the build's tests/, log_frames), the CAN modules of the installed
# kernel with their dependencies from modules.dep, tests/vm/guest (init and the case
# library) and the case scripts of CASE_DIR.
#
# Prints the kernel image path to use on stdout. Exit 77 if something needed is missing
# (tests/vm/boot.sh's caller turns that into a skip).
set -euo pipefail

out=$1 sf=$2 cases=$3 helpers=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
krel=${5:-}
if [[ -z $krel ]]; then
    # the newest installed Debian kernel that has its modules
    for k in $(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V); do
        r=${k#/boot/vmlinuz-}
        [[ -d /lib/modules/$r ]] && krel=$r
    done
fi
[[ -n $krel && -r /boot/vmlinuz-$krel ]] || { echo "mkimage: no readable kernel in /boot" >&2; exit 77; }
moddir=/lib/modules/$krel

tools=(candump cangen cansend cansequence canbusload isotpsend isotprecv ip busybox cpio gzip)
for t in "${tools[@]}"; do
    command -v "$t" >/dev/null || { echo "mkimage: $t not installed" >&2; exit 77; }
done
busybox=$(command -v busybox)
ldd "$busybox" >/dev/null 2>&1 && { echo "mkimage: busybox must be static (busybox-static)" >&2; exit 77; }

root=$(mktemp -d "${TMPDIR:-/tmp}/sf-vmroot.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,run,etc,vm/cases,mods}

# put FILE: copy a host file to the same path in the image (symlinks resolved)
put() {
    local f=$1 dst="$root$1"
    [[ -e $dst ]] && return 0
    mkdir -p "$(dirname "$dst")"
    cp -L "$f" "$dst"
}
# put_exe FILE [DEST]: the executable and every library ldd lists for it
put_exe() {
    local f=$1 dst=${2:-$1} lib
    mkdir -p "$(dirname "$root$dst")"
    cp -L "$f" "$root$dst"
    while read -r lib; do
        [[ -n $lib ]] && put "$lib"
    done < <(ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]*ld-linux/{print $1}')
}

cp -L "$busybox" "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
    [[ -e $root/bin/$a ]] || ln -s busybox "$root/bin/$a"
done
for t in candump cangen cansend cansequence canbusload isotpsend isotprecv isotpdump cangw bcmserver; do
    p=$(command -v "$t" 2>/dev/null) && put_exe "$p" "/usr/bin/$t"
done
put_exe "$(command -v ip)" /usr/sbin/ip
put_exe "$sf" /usr/bin/streamfat
for h in log_frames vm_ecu kern_isotp kern_j1939; do
    [[ -x $helpers/$h ]] || { echo "mkimage: no $helpers/$h (build the tests)" >&2; exit 1; }
    put_exe "$helpers/$h" "/usr/bin/$h"
done

# modules in load order (dependencies first), from modules.dep
declare -A seen=()
order=()
add_mod() {
    local rel=$1 dep line
    [[ -n ${seen[$rel]:-} ]] && return 0
    seen[$rel]=1
    line=$(grep -m1 "^$rel:" "$moddir/modules.dep") || { echo "mkimage: $rel not in modules.dep" >&2; exit 77; }
    for dep in ${line#*:}; do
        add_mod "$dep"
    done
    order+=("$rel")
}
for m in can can-raw can-dev sja1000 kvaser_pci vcan can-isotp can-j1939 can-bcm can-gw; do
    rel=$(grep -m1 -E "(^|/)$m\.ko(\.[a-z]+)?:" "$moddir/modules.dep" | cut -d: -f1) ||
        { echo "mkimage: module $m not found in $moddir" >&2; exit 77; }
    add_mod "$rel"
done
: > "$root/mods/order"
for rel in "${order[@]}"; do
    base=$(basename "$rel")
    case $base in
    *.ko) cp "$moddir/$rel" "$root/mods/$base" ;;
    *.ko.xz) xz -dc "$moddir/$rel" > "$root/mods/${base%.xz}"; base=${base%.xz} ;;
    *.ko.zst) zstd -qdc "$moddir/$rel" > "$root/mods/${base%.zst}"; base=${base%.zst} ;;
    *.ko.gz) gzip -dc "$moddir/$rel" > "$root/mods/${base%.gz}"; base=${base%.gz} ;;
    esac
    echo "$base" >> "$root/mods/order"
done

cp "$here/guest/init" "$root/init"
cp "$here/guest/caselib.sh" "$root/vm/caselib.sh"
cp "$cases"/*.sh "$root/vm/cases/"
# the live-bus examples of README.md and docs/LOG.md, for 80_doc_examples
python3 "$here/doc_examples.py" "$here/../../README.md" "$here/../../docs/LOG.md" \
    > "$root/vm/doc_examples.txt" || exit 1
chmod +x "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$out"
echo "/boot/vmlinuz-$krel"
