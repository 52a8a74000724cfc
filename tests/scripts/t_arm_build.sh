#!/usr/bin/env bash
# The freestanding core must build for a Cortex-M4 (arm-none-eabi-gcc -mcpu=cortex-m4
# -mthumb -Os -ffreestanding -std=c11 -Wall -Wextra -Werror) and stay freestanding:
#   - it compiles the files under src/ only (nothing from host/ leaks in);
#   - the only external symbols it may need are memcpy, memset, memmove, memcmp and the
#     compiler's own helpers from libgcc (listed below);
#   - it holds no mutable global or static state (.data/.bss symbols), as the house rules
#     require (const tables in .rodata are fine).
# Builds into a temporary directory with the same toolchain file as `make arm`.
set -euo pipefail

src=${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

for t in arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size cmake; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "SKIP: $t not installed (scripts/deps.sh installs it)"
        exit 77
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! cmake -S "$src" -B "$tmp" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/arm-none-eabi.cmake" \
        >"$tmp/configure.log" 2>&1; then
    cat "$tmp/configure.log"
    echo "FAIL: cmake configure for arm-none-eabi failed"
    exit 1
fi
if ! cmake --build "$tmp" -j 2 >"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    echo "FAIL: the core does not compile for arm-none-eabi (errors above)"
    exit 1
fi

lib=$tmp/libstreamfat-core.a
if [ ! -f "$lib" ]; then
    if grep -q "no core sources yet" "$tmp/configure.log"; then
        echo "SKIP: no core sources yet"
        exit 77
    fi
    echo "FAIL: $lib was not produced"
    exit 1
fi

arm-none-eabi-size -t "$lib"

# Symbols used by one member and defined by none: what the core needs from outside.
arm-none-eabi-nm -u "$lib" | awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u >"$tmp/undef"
arm-none-eabi-nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def"
comm -23 "$tmp/undef" "$tmp/def" >"$tmp/external"

# Allowed: the four <string.h> functions the house rules permit, and libgcc's helpers
# for what Cortex-M4 lacks in hardware (64-bit division and shifts, soft float, bit
# counting, byte swapping) plus the ARM EABI run-time helpers (__aeabi_*).
allowed='^(memcpy|memset|memmove|memcmp|__aeabi_[a-z0-9_]+|__(u?div|u?mod|udivmod|divmod)[sd]i[34]|__(clz|ctz|ffs|popcount|parity|bswap)[sd]i2|__(ash|lsh)(l|r)di3|__(add|sub|mul|div|neg|cmp|unord|eq|ne|lt|le|gt|ge)[sd]f[23]|__(fix|fixuns|float|floatun|extend|trunc)[a-z]+[sd][fi]2?|__gnu_thumb1_case_[a-z0-9]+)$'

bad=$(grep -Ev "$allowed" "$tmp/external" || true)
status=0
if [ -n "$bad" ]; then
    echo "FAIL: the freestanding core references symbols outside the allowed set"
    echo "(memcpy/memset/memmove/memcmp and libgcc helpers). Offending symbols and users:"
    for s in $bad; do
        users=$(arm-none-eabi-nm -A -u "$lib" |
                awk -v s="$s" '$NF == s { n = split($1, a, ":"); print a[n - 1] }' |
                sort -u | tr '\n' ' ')
        echo "  $s  <- $users"
    done
    status=1
fi

# The core is src/ and nothing else (CMakeLists.txt selects it by folder): every file this
# build compiled lies under src/, none under host/ or anywhere else.
if [ -f "$tmp/compile_commands.json" ]; then
    compiled=$(grep -o '"file": *"[^"]*"' "$tmp/compile_commands.json" | sed 's/.*"\([^"]*\)"$/\1/')
    stray=$(grep -v "^$src/src/" <<<"$compiled" || true)
    if [ -n "$stray" ] || [ -z "$compiled" ]; then
        echo "FAIL: the ARM core build compiled files outside src/ (or none at all):"
        echo "${stray:-(none compiled)}" | sed 's/^/  /'
        status=1
    else
        echo "compiled: $(wc -l <<<"$compiled") files, all under src/"
    fi
else
    echo "FAIL: no compile_commands.json in the ARM build (CMAKE_EXPORT_COMPILE_COMMANDS)"
    status=1
fi

# Mutable state: symbols in .data/.bss (nm types d D b B, common C, small data g G s S).
mutable=$(arm-none-eabi-nm -A --defined-only "$lib" | awk '$(NF-1) ~ /^[dDbBCgGsS]$/' || true)
if [ -n "$mutable" ]; then
    echo "FAIL: the freestanding core has mutable globals or statics (.data/.bss):"
    echo "$mutable" | sed 's/^/  /'
    status=1
fi

if [ "$status" -eq 0 ]; then
    echo "external symbols: $(tr '\n' ' ' <"$tmp/external")"
    echo "PASS: arm-none-eabi core build is freestanding"
fi
exit "$status"
