#!/usr/bin/env bash
# Other compilers and configurations must build warning-free too (-Werror everywhere):
#   1. clang, host, everything (library, CLI, tests, helpers) at -O2;
#   2. gcc, host, core only (SF_CORE_ONLY=ON) at -Os with -ffreestanding, as a
#      microcontroller build would compile it but with the host's 64-bit ABI;
#   3. gcc, host, core only without GPT, mount messages and the flight recorder (SF_GPT=OFF,
#      SF_MESSAGES=OFF, SF_LOG_TRIGGER=OFF: scripts/size.sh's runtime-lean), driving
#      tests/options/probe.c: an MBR volume formats, mounts and takes writes, GPT formatting
#      is refused (SF_ENOTSUP), a logger works but a flight recorder is refused
#      (SF_ENOTSUP), and a damaged boot sector still fails the mount with SF_ECORRUPT, with
#      the generic text. (t_size with SF_LONG=1 also checks that a GPT disk does not mount.)
#   4. gcc, host, core only as scripts/size.sh's `tiny` set plus mkfs: FAT only, 8.3 names
#      only (SF_EXFAT=OFF SF_LFN=OFF and 3.'s options), driving tests/options/probe.c: FAT32
#      formats, mounts and takes writes, a logger works, a name that is not 8.3 is refused
#      with SF_ENOTSUP, ASCII names are found whatever their case, exFAT does not mount.
# Each builds into its own temporary directory.
set -euo pipefail

src=${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

build() {  # name, cmake args...
    local name=$1
    shift
    if ! cmake -S "$src" -B "$tmp/$name" "$@" >"$tmp/$name.log" 2>&1 ||
       ! cmake --build "$tmp/$name" -j 2 >>"$tmp/$name.log" 2>&1; then
        cat "$tmp/$name.log"
        echo "FAIL: build '$name' ($*)"
        status=1
        return
    fi
    echo "ok: $name"
}

if command -v clang >/dev/null 2>&1; then
    build clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release
else
    echo "note: clang not installed, clang build not tried (scripts/deps.sh installs it)"
fi
build core-freestanding -DSF_CORE_ONLY=ON -DSF_TESTS=OFF -DCMAKE_BUILD_TYPE=MinSizeRel \
    -DCMAKE_C_FLAGS=-ffreestanding
build core-lean -DSF_CORE_ONLY=ON -DSF_TESTS=OFF -DSF_GPT=OFF -DSF_MESSAGES=OFF \
    -DSF_LOG_TRIGGER=OFF
if [ -f "$tmp/core-lean/libstreamfat-core.a" ]; then
    probe=$tmp/probe-lean
    if ! cc -std=c11 -Wall -Wextra -Werror -O1 -DSF_NO_GPT -DSF_NO_MESSAGES \
            -DSF_NO_LOG_TRIGGER -I"$src/include" \
            "$src/tests/options/probe.c" "$tmp/core-lean/libstreamfat-core.a" -o "$probe"; then
        echo "FAIL: tests/options/probe.c against the lean core"
        status=1
    else
        for args in "make-exfat-mbr $tmp/lean.img" "rw $tmp/lean.img" "nomkfs-exfat-gpt -" \
                    "nomkfs-fat32-gpt -" "make-fat32 $tmp/plain.img" \
                    "notrigger $tmp/plain.img"; do
            # shellcheck disable=SC2086
            if "$probe" $args; then
                echo "ok: lean probe $args"
            else
                echo "FAIL: lean probe $args"
                status=1
            fi
        done
        if out=$("$probe" badmount "$tmp/plain.img") && grep -q "SF_NO_MESSAGES" <<<"$out"; then
            echo "ok: lean probe badmount: SF_ECORRUPT, $out"
        else
            echo "FAIL: lean probe badmount: want SF_ECORRUPT and the generic text, got: $out"
            status=1
        fi
    fi
fi

build core-tiny -DSF_CORE_ONLY=ON -DSF_TESTS=OFF -DSF_EXFAT=OFF -DSF_LFN=OFF -DSF_GPT=OFF \
    -DSF_MESSAGES=OFF -DSF_LOG_TRIGGER=OFF -DSF_CHECK=OFF
if [ -f "$tmp/core-tiny/libstreamfat-core.a" ]; then
    probe=$tmp/probe-tiny
    if ! cc -std=c11 -Wall -Wextra -Werror -O1 -DSF_NO_EXFAT -DSF_NO_LFN -DSF_NO_GPT \
            -DSF_NO_MESSAGES -DSF_NO_LOG_TRIGGER -DSF_NO_CHECK -I"$src/include" \
            "$src/tests/options/probe.c" "$tmp/core-tiny/libstreamfat-core.a" -o "$probe"; then
        echo "FAIL: tests/options/probe.c against the tiny core"
        status=1
    else
        for args in "make-fat32-mbr $tmp/tiny.img" "rw $tmp/tiny.img" "notrigger $tmp/tiny.img" \
                    "nolfn $tmp/tiny.img" "nomkfs-exfat -" "nomount $tmp/lean.img"; do
            # shellcheck disable=SC2086
            if "$probe" $args; then
                echo "ok: tiny probe $args"
            else
                echo "FAIL: tiny probe $args"
                status=1
            fi
        done
    fi
fi

exit "$status"
