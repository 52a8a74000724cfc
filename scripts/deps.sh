#!/usr/bin/env bash
# Install the Debian packages that the build and the tests use, if any is missing, and
# load the kernel modules the script tests need (loop devices, FUSE). Idempotent and
# silent when everything is there; apt is called only for missing packages.
#
# Not root and no password-less sudo: prints what is missing and goes on (the tests that
# need a missing tool then skip with status 77, which make check with CI=true refuses:
# scripts/skip_policy.py).
set -euo pipefail

packages=(
    cmake pkg-config gcc make
    dosfstools exfatprogs exfat-fuse fuse3 mtools sleuthkit fio liburing-dev
    clang libclang-rt-14-dev lld gcc-arm-none-eabi libnewlib-arm-none-eabi python3-can xxd zlib1g-dev
    valgrind python3-venv
    libdeflate-dev
    libcjson-dev
    liblz4-dev libzstd-dev
    libsodium-dev
    qemu-system-arm qemu-user gcc-powerpc-linux-gnu libc6-dev-powerpc-cross
    fdisk gdisk python3 g++ mount psmisc time xz-utils mawk faketime
    openjdk-17-jre-headless
    qemu-system-x86 linux-image-amd64 can-utils busybox-static cpio iproute2
    chromium tidy
)

# Every command a test looks for before using it (need_tool, command -v: in tests/scripts,
# tests/unit, fuzz/, examples/) and the package that has it, unless an Essential package
# does. A command missing here makes its test skip (exit 77) on a fresh machine while ctest
# still reports success; t_test_tools checks that the table is complete and installed.
# `scripts/deps.sh --tools` prints it.
declare -A tools=(
    [sfdisk]=fdisk [sgdisk]=gdisk [losetup]=mount [mount]=mount [umount]=mount
    [fuser]=psmisc [python3]=python3 [/usr/bin/python3]=python3-can [/usr/bin/time]=time
    [xz]=xz-utils [ctest]=cmake [cc]=gcc [gcc]=gcc [g++]=g++ [make]=make [cmake]=cmake
    [pkg-config]=pkg-config [xxd]=xxd [awk]=mawk [faketime]=faketime
    [java]=openjdk-17-jre-headless
    [qemu-system-x86_64]=qemu-system-x86 [cpio]=cpio [busybox]=busybox-static
    [candump]=can-utils [cangen]=can-utils [cansend]=can-utils [ip]=iproute2 [ldd]=libc-bin
    [gzip]=gzip
    [chromium]=chromium [tidy]=tidy
    [mkfs.fat]=dosfstools [fsck.fat]=dosfstools
    [mkfs.exfat]=exfatprogs [fsck.exfat]=exfatprogs [exfatlabel]=exfatprogs
    [mount.exfat-fuse]=exfat-fuse [fusermount]=fuse3
    [mcopy]=mtools [mdir]=mtools [mmd]=mtools [fls]=sleuthkit [icat]=sleuthkit
    [clang]=clang [ld.lld]=lld [fio]=fio [valgrind]=valgrind [callgrind_annotate]=valgrind
    [arm-none-eabi-gcc]=gcc-arm-none-eabi [arm-none-eabi-size]=gcc-arm-none-eabi
    [arm-none-eabi-nm]=gcc-arm-none-eabi [qemu-system-arm]=qemu-system-arm
    [qemu-ppc]=qemu-user [powerpc-linux-gnu-gcc]=gcc-powerpc-linux-gnu
    [qemu-system-aarch64]=qemu-system-arm [llvm-ar]=llvm [llvm-ranlib]=llvm [llvm-size]=llvm
)
if [ "${1:-}" = --tools ]; then
    for t in "${!tools[@]}"; do
        echo "$t ${tools[$t]}"
    done | sort
    exit 0
fi
for t in "${!tools[@]}"; do
    case " ${packages[*]} " in *" ${tools[$t]} "*) ;; *) packages+=("${tools[$t]}") ;; esac
done

installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: not a Debian system; install by hand: ${packages[*]}" >&2
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        as_root=(none)
    fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "${as_root[*]}" = none ]; then
        echo "deps.sh: missing packages (need root to install): ${missing[*]}" >&2
    else
        echo "deps.sh: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        "${as_root[@]}" apt-get update -qq </dev/null
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${missing[@]}" </dev/null
    fi
fi

# Best effort: the modules may be built in, or this may be a container without them.
if [ "${as_root[*]}" != none ]; then
    for m in loop fuse; do
        "${as_root[@]}" modprobe -q "$m" >/dev/null 2>&1 || true
    done
fi
exit 0
