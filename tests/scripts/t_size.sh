#!/usr/bin/env bash
# Code size of the core on a Cortex-M4 must not grow past its budget (scripts/size.sh,
# docs/BENCHMARKS.md "Code size"), and the feature options must stay buildable.
#
# 1. Builds the runtime, runtime-lean and readonly sets (scripts/size.sh) and checks each against
#      the goal of issue 9 where it is met, else against the recorded limit: the size
#      measured when the limit was set plus a few percent, so that growth is noticed and
#      the limit is raised (or the code shrunk) on purpose, in the same commit.
#      Goals: runtime (and runtime-lean) text <= 24 KiB, data + bss <= 1 KiB; readonly
#      text <= 8 KiB. Building runtime-lean also builds the core with SF_GPT=OFF and
#      SF_MESSAGES=OFF for the Cortex-M4 (t_build_options runs those options on the host).
#      Neither text goal is met today (docs/BENCHMARKS.md says where the bytes go).
#      The full sets' limits are regression limits, no longer goals (issue 19); the goal is
#      the tiny set's (issue 19, docs/PORTING.md "The tiny set"): text <= 16 KiB, no
#      static data at all (data + bss = 0), stack <= 1,536 bytes, all three hard limits
#      since the dedicated tiny logger (src/tiny/) replaced the full one in it.
# 2. The stub files that replace a dropped file system (src/fs/fat_off.c, exfat_off.c) must
#      define every symbol the rest of the core takes from the files they replace; checked
#      on symbols, without building the SF_FAT=OFF / SF_EXFAT=OFF cores (make size does).
# 3. With SF_LONG=1 (make check-long): host builds of those options run tests/options/probe.c.
set -euo pipefail

src=${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

for t in arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size cmake python3; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "SKIP: $t not installed (scripts/deps.sh installs it)"
        exit 77
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# --- budgets ------------------------------------------------------------------------
# name  text-goal  text-limit (measured 2026-11-30 + ~5 %)  static-goal (data + bss)
#   runtime        24576   47200 (41916; 45152 after the first size round, 47132 before)   1024
#   runtime-lean   24576   44100 (38888; 41676)                                          1024
#   raised 2026-12-01 for issue 18 (file API fast paths, sector buffer; one-pass FAT
#   lookup): runtime 42820 -> 46992, runtime-lean 39792 -> 43952 (docs/BENCHMARKS.md,
#   "File API against FatFs" and "Creating files against FatFs")
#   raised 2026-12-01 (branch fsperf: the cross-link check of data writes, mkdir's
#   multi-sector zeroing, the read-ahead ramp, the stream's close hint): runtime 46992 ->
#   48080, runtime-lean 43952 -> 45040 (the full logger's tiny build, no longer the tiny
#   set, left the check out: SF_NO_XLINK_CHECK), readonly 17612 -> 17648 (docs/BENCHMARKS.md, "File API against FatFs")
#   raised 2026-12-02 (merge of issue 29's branches compress and seal: the writer's
#   cipher call in pack_runs too, the decoder's open-then-unpack): measured runtime 48604,
#   runtime-lean 45556 -> limits 48900, 45800
#   readonly        8192   17800 (16692; 18708; 20108; 17612 with issue 18's lookup)      1024
#   tiny           16384   16384 (the full logger: 34104 after issue 18; the dedicated
#                          tiny logger of src/tiny/: docs/BENCHMARKS.md, "Code size")   0
limit_text() {
    case $1 in
        runtime) echo 48900 ;;
        runtime-lean) echo 45800 ;;
        readonly) echo 17800 ;;
        tiny) echo 16384 ;;
    esac
}
goal_text() {
    case $1 in
        runtime | runtime-lean) echo 24576 ;;
        readonly) echo 8192 ;;
        tiny) echo 16384 ;;
    esac
}
static_goal() {
    case $1 in
        tiny) echo 0 ;;
        *) echo 1024 ;;
    esac
}
tiny_stack_goal=1536     # issue 19 (the full logger took 2808; src/tiny/: a hard limit)
tiny_stack_limit=1536
stack_limit=4608   # bytes, the (lower-bound) deepest chain; runtime measured 3524, readonly 2316;
                   # 4236 and 2468 once size_stack.py followed calls to static functions

if ! SIZE_SETS="runtime runtime-lean readonly tiny" bash "$src/scripts/size.sh" "$tmp/size" >"$tmp/size.out" \
        2>"$tmp/size.err"; then
    cat "$tmp/size.err" "$tmp/size.out"
    echo "FAIL: scripts/size.sh failed"
    exit 1
fi
cat "$tmp/size.out"

for set in runtime runtime-lean readonly tiny; do
    line=$(grep "^size $set " "$tmp/size.out" || true)
    if [ -z "$line" ]; then
        echo "FAIL: no size line for $set"
        status=1
        continue
    fi
    text=$(sed -n 's/.* text=\([0-9]*\) .*/\1/p' <<<"$line")
    data=$(sed -n 's/.* data=\([0-9]*\) .*/\1/p' <<<"$line")
    bss=$(sed -n 's/.* bss=\([0-9]*\) .*/\1/p' <<<"$line")
    stack=$(sed -n 's/.* stack=\([0-9]*\) .*/\1/p' <<<"$line")
    goal=$(goal_text "$set")
    limit=$(limit_text "$set")
    if [ "$text" -le "$goal" ]; then
        echo "ok: $set text $text <= goal $goal"
    elif [ "$text" -le "$limit" ]; then
        echo "note: $set text $text over the goal $goal, within the recorded limit $limit"
    else
        echo "FAIL: $set text $text grew past the recorded limit $limit (goal $goal):"
        echo "      see where with arm-none-eabi-nm --size-sort -S $set.elf (make size)"
        status=1
    fi
    if [ $((data + bss)) -gt "$(static_goal "$set")" ]; then
        echo "FAIL: $set has $((data + bss)) bytes of static data (goal <= $(static_goal "$set"))"
        status=1
    fi
    if [ "$set" = tiny ]; then
        if [ "$stack" -le "$tiny_stack_goal" ]; then
            echo "ok: tiny stack $stack <= goal $tiny_stack_goal"
        elif [ "$stack" -le "$tiny_stack_limit" ]; then
            echo "note: tiny stack $stack over the goal $tiny_stack_goal, within the recorded limit $tiny_stack_limit"
        else
            echo "FAIL: tiny stack $stack grew past the recorded limit $tiny_stack_limit"
            status=1
        fi
    fi
    if [ "$stack" -gt "$stack_limit" ]; then
        echo "FAIL: $set stack $stack > $stack_limit bytes"
        status=1
    fi
done

# --- the stubs cover what they replace ------------------------------------------------
lib=$tmp/size/core-runtime/libstreamfat-core.a
# member -> defined / undefined symbols, from nm -A over the archive
arm-none-eabi-nm -A "$lib" >"$tmp/nm"
flags="-mcpu=cortex-m4 -mthumb -Os -ffreestanding -std=c11 -Wall -Wextra -Werror
       -Wmissing-prototypes -I$src/include -I$src/src"
for fs in fat exfat; do
    # shellcheck disable=SC2086
    if ! arm-none-eabi-gcc $flags -DSF_NO_$(tr a-z A-Z <<<"$fs") -c "$src/src/fs/${fs}_off.c" \
            -o "$tmp/${fs}_off.o" 2>"$tmp/${fs}_off.err"; then
        cat "$tmp/${fs}_off.err"
        echo "FAIL: src/fs/${fs}_off.c does not compile against the headers"
        status=1
        continue
    fi
    # Symbols defined by the replaced files (fs/fat_*.c or fs/exfat_*.c, not *_mkfs.c,
    # which SF_MKFS governs) ...
    awk -v fs="$fs" '{ n = split($1, a, ":"); m = a[n - 1] }
        m ~ ("^" fs "_") && m !~ /_mkfs\.c\.obj$/ && $(NF - 1) ~ /^[TDRB]$/ { print $NF }' \
        "$tmp/nm" | sort -u >"$tmp/$fs.def"
    # ... that the other members use ...
    awk -v fs="$fs" '{ n = split($1, a, ":"); m = a[n - 1] }
        m !~ ("^" fs "_") && $(NF - 1) == "U" { print $NF }' "$tmp/nm" | sort -u >"$tmp/$fs.used"
    comm -12 "$tmp/$fs.def" "$tmp/$fs.used" >"$tmp/$fs.need"
    # ... must all be defined by the stub file.
    arm-none-eabi-nm --defined-only "$tmp/${fs}_off.o" | awk '{ print $NF }' | sort -u \
        >"$tmp/$fs.stub"
    missing=$(comm -23 "$tmp/$fs.need" "$tmp/$fs.stub" | tr '\n' ' ')
    if [ "$(wc -l <"$tmp/$fs.need")" -lt 5 ]; then
        echo "FAIL: found only $(wc -l <"$tmp/$fs.need") symbols the core takes from ${fs}_*.c"
        status=1
    elif [ -n "$missing" ]; then
        echo "FAIL: src/fs/${fs}_off.c lacks what the core uses from ${fs}_*.c: $missing"
        status=1
    else
        echo "ok: ${fs}_off.c covers the $(wc -l <"$tmp/$fs.need") symbols the core takes from ${fs}_*.c"
    fi
done

# --- with SF_LONG=1 (make check-long): what the option builds do ------------------------
# Host core-only builds without FAT, without exFAT, and read-only, each driving
# tests/options/probe.c: the file system that is left in works (format, write, read), the
# one left out answers SF_ENOTSUP, read-only answers SF_EROFS to every write.
if [ "${SF_LONG:-0}" = 1 ]; then
    probe_build() {  # name, macro, cmake options...
        local name=$1 macro=$2
        shift 2
        if ! cmake -S "$src" -B "$tmp/host-$name" -DSF_CORE_ONLY=ON -DSF_TESTS=OFF "$@" \
                >"$tmp/host-$name.log" 2>&1 ||
           ! cmake --build "$tmp/host-$name" -j 2 >>"$tmp/host-$name.log" 2>&1 ||
           ! cc -std=c11 -Wall -Wextra -Werror -O1 -D"$macro" -I"$src/include" \
                "$src/tests/options/probe.c" "$tmp/host-$name/libstreamfat-core.a" \
                -o "$tmp/probe-$name" >>"$tmp/host-$name.log" 2>&1; then
            cat "$tmp/host-$name.log"
            echo "FAIL: host core build '$name' ($*) or its probe"
            status=1
            return 1
        fi
    }
    probe() {  # name, args...
        local name=$1
        shift
        if "$tmp/probe-$name" "$@"; then
            echo "ok: probe $name $*"
        else
            echo "FAIL: probe $name $*"
            status=1
        fi
    }
    if probe_build nofat SF_NO_FAT -DSF_FAT=OFF &&
       probe_build noexfat SF_NO_EXFAT -DSF_EXFAT=OFF &&
       probe_build ro SF_READONLY -DSF_READONLY=ON &&
       probe_build nogpt SF_NO_GPT -DSF_GPT=OFF &&
       probe_build nomsg SF_NO_MESSAGES -DSF_MESSAGES=OFF; then
        probe nofat make-exfat "$tmp/ex.img"
        probe noexfat make-fat32 "$tmp/f32.img"
        probe nofat nomkfs-fat32 -
        probe noexfat nomkfs-exfat -
        probe ro nomkfs-exfat -
        probe nofat rw "$tmp/ex.img"
        probe nofat log "$tmp/ex.img"
        probe nofat nomount "$tmp/f32.img"
        probe noexfat rw "$tmp/f32.img"
        probe noexfat nomount "$tmp/ex.img"
        probe ro ro "$tmp/ex.img"
        probe ro ro "$tmp/f32.img"
        # without GPT: MBR volumes work, a GPT disk neither formats nor mounts
        probe nogpt make-exfat-mbr "$tmp/mbr.img"
        probe nogpt rw "$tmp/mbr.img"
        probe nogpt nomkfs-exfat-gpt -
        probe nofat make-exfat-gpt "$tmp/gpt.img"
        probe nofat rw "$tmp/gpt.img"
        probe nogpt nomount "$tmp/gpt.img"
        # without messages: the same checks fail the same way, with the generic text
        probe nomsg make-exfat "$tmp/msg.img"
        probe nomsg rw "$tmp/msg.img"
        for b in nomsg:SF_NO_MESSAGES nofat:signature; do
            if out=$("$tmp/probe-${b%%:*}" badmount "$tmp/msg.img") &&
               grep -q "^why: .*${b#*:}" <<<"$out"; then
                echo "ok: probe ${b%%:*} badmount names ${b#*:}"
            else
                echo "FAIL: probe ${b%%:*} badmount: want SF_ECORRUPT and a why naming ${b#*:}"
                status=1
            fi
        done
    fi
else
    echo "note: SF_LONG=1 also runs the option builds (tests/options/probe.c)"
fi

[ "$status" -eq 0 ] && echo "PASS: size within budget, option stubs complete"
exit "$status"
