#!/usr/bin/env bash
# Code size and stack of the freestanding core on a Cortex-M4, per feature set (`make size`,
# tests/scripts/t_size.sh, docs/BENCHMARKS.md "Code size").
#
#   scripts/size.sh [OUTDIR]        (default build-arm/size)
#   SIZE_SETS="runtime readonly" scripts/size.sh    only those sets
#
# For each set the core is built with arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -Os
# -ffreestanding -ffunction-sections -fdata-sections and the set's CMake options, a reference
# program (size/NAME.c: the calls such a firmware makes) is linked against it with
# --gc-sections and newlib-nano's memcpy/memset/memmove/memcmp, and the program's size minus
# that of an empty program (size/empty.c) and that of the reference program's own code is
# printed:
#
#   size NAME text=N data=N bss=N stack=N deepest=f>g>h
#
# text includes read-only data (tables) as it sits in flash. stack is the deepest chain of
# direct calls below the program's entry, summed from -fstack-usage frames
# (scripts/size_stack.py): a lower bound, since calls through function pointers (the block
# device, clocks, callbacks) are not followed and recursion is counted once.
#
# Sets and their options:
#   runtime   -DSF_MKFS=OFF -DSF_CHECK=OFF   exFAT + FAT mount, file read/write, stream, log, codec
#   readonly  -DSF_READONLY=ON               exFAT + FAT mount, lookup, readdir, read
#   mkfs      defaults                       sf_mkfs (exFAT, FAT32, FAT16, MBR/GPT)
#   check     defaults                       sf_check (only when the core has src/check/)
#   full      defaults                       every entry point of the core
#   runtime-lean  runtime's options and $lean_opts below: the same program against a core
#                 without what a plain SD-card logger does not use: GPT (SD cards are MBR by
#                 the SD specification), a reason text per failed mount check, the flight
#                 recorder
#   runtime-control  the runtime program also attaching the logger's control stage
#                 (sf_log_control: filters, prescalers, signals, start/stop): what it costs is
#                 this minus runtime
#   tiny      $tiny_opts below, -DSF_EXFAT=OFF   the smallest useful logger (issue 19,
#                 size/tiny.c, docs/PORTING.md "The tiny set"): the dedicated tiny logger
#                 of src/tiny/ (include/streamfat/tiny.h): FAT32/FAT16 mount, open, append,
#                 CAN, service with rotation, checkpoints, DROP records, close, unmount;
#                 it links none of the volume, file and stream layers (the options only
#                 keep the core build small)
#   proto     defaults, size/proto.c   the reassembly across frames alone (src/proto/: ISO-TP,
#               J1939 TP, fast packets; include/streamfat/proto.h), what a gateway or the
#               poll client's receive side carries (no budget yet; not in t_size)
#   tiny-exfat  the same program against a core without FAT: the tiny logger is FAT-only,
#               so this measures the same code (not in the default list)
# and two variants of runtime with one file system (not in the default list):
#   runtime-exfat  -DSF_FAT=OFF ...         runtime-fat  -DSF_EXFAT=OFF ...
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-arm/size}
jobs=${JOBS:-2}

for t in arm-none-eabi-gcc arm-none-eabi-size arm-none-eabi-nm cmake python3; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "size.sh: $t not installed (scripts/deps.sh installs it)" >&2
        exit 77
    fi
done

cpu_flags="-mcpu=cortex-m4 -mthumb -Os -ffreestanding"
flags="$cpu_flags -ffunction-sections -fdata-sections -fstack-usage -fcallgraph-info=su"
mkdir -p "$out"

build_core() {  # dir, cmake options...
    local dir=$out/$1
    shift
    if ! cmake -S "$src" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/arm-none-eabi.cmake" \
            -DCMAKE_C_FLAGS="$flags" "$@" >"$dir.log" 2>&1 ||
       ! cmake --build "$dir" -j "$jobs" >>"$dir.log" 2>&1; then
        cat "$dir.log" >&2
        echo "size.sh: core build '$(basename "$dir")' failed ($*)" >&2
        exit 1
    fi
}

link() {  # name, core dir (- for none), extra cflags... -> $out/NAME.elf
    link_as "$1" "$@"
}

link_as() {  # output name, program, core dir (- for none), extra cflags...
    local out_name=$1 name=$2 lib=$out/$3/libstreamfat-core.a
    [ "$3" = - ] && lib=
    shift 3
    local o=$out/prog/$name
    mkdir -p "$o"
    arm-none-eabi-gcc $flags -std=c11 -Wall -Wextra -Werror "$@" -I"$src/include" \
        -c "$src/size/start.c" -o "$o/start.o"
    arm-none-eabi-gcc $flags -std=c11 -Wall -Wextra -Werror "$@" -I"$src/include" \
        -c "$src/size/$name.c" -o "$o/$name.o"
    arm-none-eabi-gcc $cpu_flags -nostartfiles --specs=nano.specs -Wl,--gc-sections \
        -Wl,--entry=sf_size_entry -Wl,-Map="$out/$out_name.map" \
        "$o/start.o" "$o/$name.o" $lib -lc -lgcc -o "$out/$out_name.elf"
}

sizes() {  # elf -> "text data bss"
    arm-none-eabi-size "$1" | awk 'NR == 2 { print $1, $2, $3 }'
}

report() {  # name, core dir
    report_as "$1" "$1" "$2"
}

report_as() {  # name printed, program, core dir
    local name=$1 prog=$2 dir=$out/$3
    read -r t d b < <(sizes "$out/$name.elf")
    # The calls in size/NAME.c are the firmware's code, not the library's: not counted.
    read -r pt _ < <(sizes "$out/prog/$prog/$prog.o")
    t=$((t - pt + ept))
    arm-none-eabi-nm "$out/$name.elf" >"$out/$name.nm"
    mapfile -t cis < <(find "$dir" "$out/prog/$prog" -name '*.ci' | sort)
    read -r stack path < <(python3 "$src/scripts/size_stack.py" sf_size_main "$out/$name.nm" \
                           "${cis[@]}")
    echo "size $name text=$((t - et)) data=$((d - ed)) bss=$((b - eb)) stack=$stack deepest=$path"
}

default_sets="runtime runtime-lean runtime-exfat runtime-fat readonly tiny mkfs check full"
sets=${SIZE_SETS:-$default_sets runtime-control proto}
lean_opts="-DSF_GPT=OFF -DSF_MESSAGES=OFF -DSF_LOG_TRIGGER=OFF"
tiny_opts="-DSF_MKFS=OFF -DSF_CHECK=OFF -DSF_LFN=OFF $lean_opts"
# (The tiny logger uses no struct sf_file: SF_FILE_BUF_SIZE=0 only keeps the core build as
# it was for the full logger's tiny set.)
tiny_cflags="-DSF_FILE_BUF_SIZE=0"
# and leaves out the check of data writes against the cache (config.h SF_NO_XLINK_CHECK)
tiny_cflags="$tiny_cflags -DSF_NO_XLINK_CHECK"
want() { [[ " $sets " == *" $1 "* ]]; }

want runtime && build_core core-runtime -DSF_MKFS=OFF -DSF_CHECK=OFF
want readonly && build_core core-readonly -DSF_READONLY=ON
if want mkfs || want check || want full; then
    build_core core-full
fi

link empty -
read -r et ed eb < <(sizes "$out/empty.elf")
read -r ept _ < <(sizes "$out/prog/empty/empty.o")

if want runtime; then
    link runtime core-runtime
    report runtime core-runtime
fi
if want readonly; then
    link readonly core-readonly
    report readonly core-readonly
fi
if want runtime-lean; then
    # shellcheck disable=SC2086
    build_core core-lean -DSF_MKFS=OFF -DSF_CHECK=OFF $lean_opts
    link_as runtime-lean runtime core-lean
    report_as runtime-lean runtime core-lean
fi
# One file system only: the runtime program against a core without FAT or without exFAT
# (the other's mount then fails with SF_ENOTSUP through src/fs/*_off.c).
if want runtime-exfat; then
    build_core core-exfat -DSF_FAT=OFF -DSF_MKFS=OFF -DSF_CHECK=OFF
    link_as runtime-exfat runtime core-exfat
    report_as runtime-exfat runtime core-exfat
fi
if want runtime-fat; then
    build_core core-fat -DSF_EXFAT=OFF -DSF_MKFS=OFF -DSF_CHECK=OFF
    link_as runtime-fat runtime core-fat
    report_as runtime-fat runtime core-fat
fi
if want proto; then
    [ -f "$out/core-runtime/libstreamfat-core.a" ] ||
        build_core core-runtime -DSF_MKFS=OFF -DSF_CHECK=OFF
    link proto core-runtime
    report proto core-runtime
fi
if want runtime-control; then
    [ -f "$out/core-runtime/libstreamfat-core.a" ] || build_core core-runtime -DSF_MKFS=OFF -DSF_CHECK=OFF
    link_as runtime-control runtime core-runtime -DSF_SIZE_CONTROL=1
    report_as runtime-control runtime core-runtime
fi
# The smallest useful logger (issue 19, docs/PORTING.md "The tiny set"): one file system,
# the logger, 8.3 names, nothing else.
if want tiny; then
    # shellcheck disable=SC2086
    build_core core-tiny -DSF_EXFAT=OFF $tiny_opts "-DCMAKE_C_FLAGS=$flags $tiny_cflags"
    link tiny core-tiny $tiny_cflags
    report tiny core-tiny
fi
if want tiny-exfat; then
    # shellcheck disable=SC2086
    build_core core-tiny-exfat -DSF_FAT=OFF $tiny_opts "-DCMAKE_C_FLAGS=$flags $tiny_cflags"
    link_as tiny-exfat tiny core-tiny-exfat $tiny_cflags
    report_as tiny-exfat tiny core-tiny-exfat
fi
if want mkfs; then
    link mkfs core-full
    report mkfs core-full
fi
have_check=0
if want check || want full; then
    # (no grep -q in a pipe: with pipefail, nm's SIGPIPE would read as "not found")
    arm-none-eabi-nm -g --defined-only "$out/core-full/libstreamfat-core.a" >"$out/core-full.nm"
    if grep -q ' T sf_check$' "$out/core-full.nm"; then
        have_check=1
    fi
fi
if want check; then
    if [ "$have_check" = 1 ]; then
        link check core-full
        report check core-full
    else
        echo "size check n/a (the core has no sf_check yet: src/check/ is not part of it)"
    fi
fi
if want full; then
    link full core-full -DSF_SIZE_HAVE_CHECK=$have_check
    report full core-full
fi
echo "# text includes const tables; data/bss: the library's own static memory (caller buffers"
echo "# not counted). stack: deepest direct-call chain from -fstack-usage, a lower bound"
echo "# (calls through function pointers not followed, recursion counted once)."
