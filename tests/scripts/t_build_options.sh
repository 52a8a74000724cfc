#!/usr/bin/env bash
# Other compilers and configurations must build warning-free too (-Werror everywhere):
#   1. clang, host, everything (library, CLI, tests, helpers) at -O2;
#   2. gcc, host, core only (SF_CORE_ONLY=ON) at -Os with -ffreestanding, as a
#      microcontroller build would compile it but with the host's 64-bit ABI.
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

exit "$status"
