#!/usr/bin/env bash
# Behaviour comparison: the streamfat CLI of two commits on the same seeded workloads.
#
#   tests/compare/run.sh BASE_REF [HEAD_REF]     (HEAD_REF defaults to HEAD)
#   tests/compare/run.sh --self-test [REF]       REF against REF with one byte of exFAT's
#                                                mkfs changed: must be reported as DIFF
#   make compare BASE=main [HEAD=HEAD]
#
# Each commit is checked out in a temporary git worktree and its Release CLI built there
# (cmake, target streamfat only); both are removed at exit. Every workload then runs once
# with each CLI, in the same directory and under the same name, with
# tests/compare/trace_shim.c preloaded (a frozen wall clock, seeded getrandom, io_uring
# refused so the asynchronous device uses its pread/pwrite threads, and a trace of every
# write and flush to the image). Compared per workload:
#   output  each step's exit status, stdout and stderr (log: rates and times masked; demo,
#           which logs in real time without the shim: its distinct lines, numbers masked)
#   image   the image's SHA-256 at the end, and that of every file a step wrote outside it
#   trace   the writes and flushes, per flush epoch: the byte ranges written and the hash
#           of what they hold at the flush, then the flush (tests/compare/trace.py says why
#           not the raw order); the raw order is compared too and reported, not failed on
# The table shows PASS or DIFF per workload and the first differences follow; the exit
# status is 1 on any difference, 2 on a setup error. COMPARE_CLI_A and COMPARE_CLI_B (two
# built CLIs) skip the builds, for work on this script (the table still names the refs);
# COMPARE_KEEP=1 keeps the results directory. Not part of make check (it builds
# two trees); docs/DESIGN.md, "Behaviour comparison".
set -euo pipefail

usage() { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
self_test=0
if [[ ${1:-} == --self-test ]]; then
    self_test=1
    shift
fi
[[ ${1:-} == -h || ${1:-} == --help ]] && usage
if ((self_test)); then
    base=${1:-HEAD}
    head=$base
else
    [[ $# -ge 1 && $# -le 2 ]] || usage
    base=$1
    head=${2:-HEAD}
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
jobs=${JOBS:-2}
for t in git cmake cc python3 sha256sum; do
    command -v "$t" >/dev/null 2>&1 || { echo "compare: $t not found" >&2; exit 2; }
done
base_c=$(git -C "$repo" rev-parse --verify "$base^{commit}") || { echo "compare: no commit $base" >&2; exit 2; }
head_c=$(git -C "$repo" rev-parse --verify "$head^{commit}") || { echo "compare: no commit $head" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-compare.XXXXXX")
cleanup() {
    local d
    for d in "$tmp"/src-*; do
        [[ -d $d ]] && git -C "$repo" worktree remove --force "$d" >/dev/null 2>&1
    done
    git -C "$repo" worktree prune >/dev/null 2>&1 || true
    if [[ -n ${COMPARE_KEEP:-} ]]; then
        echo "compare: results kept in $tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# ---- builds --------------------------------------------------------------------------------
cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$tmp/trace_shim.so" "$here/trace_shim.c" -ldl -lpthread
build_side() { # LABEL COMMIT [PATCH]: build that commit's Release CLI into $tmp/cli-LABEL
    local label=$1 commit=$2 patch=${3:-} src=$tmp/src-$1 bld=$tmp/build-$1
    git -C "$repo" worktree add --detach -q "$src" "$commit"
    if [[ -n $patch ]]; then
        eval "$patch"
    fi
    echo "compare: building $label ($(git -C "$src" log -1 --format='%h %s' | cut -c1-70))" >&2
    if ! { cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DSF_TESTS=OFF &&
           nice -n 10 cmake --build "$bld" -j "$jobs" --target streamfat; } \
           </dev/null >"$tmp/build-$label.log" 2>&1; then
        tail -n 30 "$tmp/build-$label.log" >&2
        echo "compare: the build of $label failed" >&2
        exit 2
    fi
    cp "$bld/streamfat" "$tmp/cli-$label"
}
patch_b=
if ((self_test)); then
    # one byte of every exFAT image mkfs writes (the boot code's first byte, part of the boot
    # region's checksum, so the volume stays valid): images and traces must differ
    patch_b='f=$src/src/fs/exfat_mkfs.c; grep -q "b\[EXBS_BOOT_CODE\] = 0xF4;" "$f" ||
             { echo "compare: --self-test: the byte to patch is not in $f" >&2; exit 2; };
             sed -i "s/b\[EXBS_BOOT_CODE\] = 0xF4;/b[EXBS_BOOT_CODE] = 0xF5;/" "$f"'
fi
if [[ -n ${COMPARE_CLI_A:-} && -n ${COMPARE_CLI_B:-} ]]; then
    cp "$COMPARE_CLI_A" "$tmp/cli-a"      # for working on this script: two ready CLIs
    cp "$COMPARE_CLI_B" "$tmp/cli-b"
else
    build_side a "$base_c"
    build_side b "$head_c" "$patch_b"
fi

# ---- workloads -----------------------------------------------------------------------------
# Each runs in $W (the same path for both sides) with the CLI as $W/../bin/streamfat.
W=$tmp/w
BIN=$tmp/bin
SF=$BIN/streamfat
COMMANDS=(mkfs info ls cat get put rm mkdir fsck log demo export bench plan)
FORMATS=(candump asc blf csv csv-wide raw mf4)

inputs() { # seeded input files in $W/in
    mkdir -p "$W/in"
    python3 - "$W/in" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(21)
open(os.path.join(d, "one.bin"), "wb").write(r.randbytes(3 * 1024 * 1024 + 777))
open(os.path.join(d, "two.bin"), "wb").write(r.randbytes(1024 * 1024 + 5))
open(os.path.join(d, "small.txt"), "w").write("".join(f"line {i} {r.random()}\n" for i in range(200)))
EOF
}

nstep=0
# step [-m|-M] [-p] ARGS...: run the CLI with ARGS in $W; -m masks the numbers in its output
# (rates and times); -M (demo, whose frames, drops and files depend on real time) keeps
# only the distinct lines with numbers, hexadecimal-looking runs and runs of blanks masked
# and the file listing left out; -p runs it plain (no shim).
step() {
    local mask=0 plain=0 rc=0 n
    while [[ ${1:-} == -m || ${1:-} == -M || ${1:-} == -p ]]; do
        [[ $1 == -m ]] && mask=1
        [[ $1 == -M ]] && mask=2
        [[ $1 == -p ]] && plain=1
        shift
    done
    nstep=$((nstep + 1))
    n=$(printf '%02d' "$nstep")
    printf '%s\n' "streamfat $*" >"$R/$n.cmd"
    printf 'S %s\n' "$n" >>"$W/trace.bin"
    if ((plain)); then
        (cd "$W" && TZ=UTC LC_ALL=C timeout 300 "$SF" "$@") </dev/null >"$R/$n.out" 2>"$R/$n.err" || rc=$?
    else
        (cd "$W" && TZ=UTC LC_ALL=C SF_NO_URING=1 COMPARE_IMAGE="$W/$IMG" \
            COMPARE_TRACE="$W/trace.bin" COMPARE_SEED=21 LD_PRELOAD="$tmp/trace_shim.so" \
            timeout 300 "$SF" "$@") </dev/null >"$R/$n.out" 2>"$R/$n.err" || rc=$?
    fi
    echo "$rc" >"$R/$n.rc"
    if ((mask == 1)); then
        sed -i -E 's/[0-9]+([.,][0-9]+)*/#/g' "$R/$n.out" "$R/$n.err"
    elif ((mask == 2)); then
        for f in "$R/$n.out" "$R/$n.err"; do
            grep -v '^file ' "$f" | sed -E 's/[0-9A-Fa-f]+([.,][0-9A-Fa-f]+)*/#/g; s/ +/ /g' |
                sort -u >"$f.m" || true
            mv "$f.m" "$f"
        done
    fi
}

wl_help() {
    IMG=none
    step --help
    step --version
    step
    step no-such-command
    for c in "${COMMANDS[@]}"; do
        step "$c" --help
    done
}

wl_fs() { # TYPE
    IMG=img
    step mkfs -t "$1" -s 64M -L CMP img
    step info img
    step mkdir img a a/b
    step mkdir -p img c/d/e
    step put img in/one.bin a/b/
    step put img in/small.txt
    step put --force img in/two.bin a/b/one.bin
    step put img in/one.bin c/d/e/big.bin
    step ls -l img
    step ls -l -R img
    step cat img small.txt
    step get img a/b/one.bin got.bin
    step rm img small.txt
    step rm -r img c
    step rm img nothing-here
    step ls -l -R img
    step fsck img
    step info --json img
}
wl_files_exfat() { wl_fs exfat; }
wl_files_fat32() { wl_fs fat32; }

wl_mkfs_variants() { # one image each (the trace follows IMG)
    IMG=f16.img
    step mkfs -t fat16 -s 32M f16.img
    step fsck f16.img
    IMG=gpt.img
    step mkfs -t exfat -c 128K --partition gpt -s 96M gpt.img
    step info gpt.img
    step fsck gpt.img
    IMG=mbr.img
    step mkfs -t fat32 --fats 1 --partition mbr -s 64M mbr.img
    step info mbr.img
    step fsck mbr.img
    IMG=4k.img
    step mkfs -t exfat --sector-size 4096 -s 64M 4k.img
    step fsck 4k.img
}

wl_log_can() {
    IMG=log.img
    step -m log --source gen:can --max-records 200000 --split-size 1M --mkfs exfat --size 64M log.img
    step ls -l log.img
    step fsck log.img
    for f in "${FORMATS[@]}"; do
        step export -f "$f" -o "out.$f" log.img LOG00001.SFL
    done
    step export log.img LOG00002.SFL
    step export --all -f asc log.img all
}

wl_log_can_cyclic() {
    IMG=cyc.img
    step -m log --source gen:can --max-records 700000 --split-size 2M --cyclic \
        --mkfs fat16 --size 16M cyc.img
    step ls -l cyc.img
    step fsck cyc.img
}

wl_log_raw() {
    IMG=raw.img
    step -m log --raw --source gen:raw --max-bytes 24M --split-size 4M --cyclic --mkfs exfat \
        --size 16M raw.img
    step ls -l raw.img
    step fsck raw.img
    step get raw.img LOG00006.BIN got.bin
}

wl_demo() {
    IMG=demo.img
    step -M -p demo
}

WORKLOADS=(help files_exfat files_fat32 mkfs_variants log_can log_can_cyclic log_raw demo)

run_side() { # LABEL
    local label=$1 wl f
    mkdir -p "$BIN"
    cp "$tmp/cli-$label" "$SF"
    for wl in "${WORKLOADS[@]}"; do
        rm -rf "$W"
        mkdir -p "$W"
        inputs
        R=$tmp/res-$label/$wl
        mkdir -p "$R"
        nstep=0
        : >"$W/trace.bin"
        echo "compare: $label: $wl" >&2
        "wl_$wl"
        # every file the workload left (image, exports, copies), by hash; not the inputs
        (cd "$W" && find . -type f ! -path './in/*' ! -name trace.bin -print0 | sort -z |
            xargs -0 -r sha256sum) >"$R/files.sha"
        [[ $wl == demo ]] && sed -i '/demo.img/d' "$R/files.sha"   # real time: not compared
        python3 "$here/trace.py" "$W/trace.bin" "$R/trace.strict" "$R/trace.epochs"
    done
    rm -rf "$W"
}
run_side a
run_side b

# ---- comparison ----------------------------------------------------------------------------
status=0
details=$tmp/details
: >"$details"
printf '%-16s %6s  %-6s %-6s %-6s %-14s %s\n' workload steps output image trace "write order" verdict
for wl in "${WORKLOADS[@]}"; do
    A=$tmp/res-a/$wl
    B=$tmp/res-b/$wl
    out=same img=same tr=same order=same verdict=PASS
    steps=$(ls "$A"/*.cmd 2>/dev/null | wc -l)
    for c in "$A"/*.cmd; do
        n=$(basename "$c" .cmd)
        for k in rc out err; do
            if ! cmp -s "$A/$n.$k" "$B/$n.$k"; then
                out=DIFF
                {
                    echo "== $wl step $n ($(cat "$c")): $k differs"
                    diff "$A/$n.$k" "$B/$n.$k" | head -n 10 || true
                } >>"$details"
            fi
        done
    done
    if ! cmp -s "$A/files.sha" "$B/files.sha"; then
        img=DIFF
        { echo "== $wl: image or output files differ (sha256)"; diff "$A/files.sha" "$B/files.sha" | head -n 10 || true; } >>"$details"
    fi
    if ! cmp -s "$A/trace.epochs" "$B/trace.epochs"; then
        tr=DIFF
        { echo "== $wl: device writes per flush epoch differ (first lines)"; diff "$A/trace.epochs" "$B/trace.epochs" | head -n 10 || true; } >>"$details"
    fi
    cmp -s "$A/trace.strict" "$B/trace.strict" || order=differs
    nw=$(grep -c '^W ' "$A/trace.strict" || true)
    nf=$(grep -c '^F ' "$A/trace.strict" || true)
    [[ $out$img$tr == samesamesame ]] || { verdict=DIFF; status=1; }
    printf '%-16s %6s  %-6s %-6s %-6s %-14s %s  (%s writes, %s flushes)\n' "$wl" "$steps" "$out" \
        "$img" "$tr" "$order" "$verdict" "$nw" "$nf"
done
echo "base $(git -C "$repo" log -1 --format='%h' "$base_c"), head $(git -C "$repo" log -1 --format='%h' "$head_c")$( ((self_test)) && echo ' with exFAT mkfs patched')"
if [[ -s $details ]]; then
    echo
    cat "$details"
fi

if ((self_test)); then
    # The patch changes exFAT images only: those workloads must be DIFF in image and trace,
    # the FAT-only ones PASS.
    ok=1
    for wl in files_exfat log_can log_raw; do
        cmp -s "$tmp/res-a/$wl/files.sha" "$tmp/res-b/$wl/files.sha" && ok=0
        cmp -s "$tmp/res-a/$wl/trace.epochs" "$tmp/res-b/$wl/trace.epochs" && ok=0
    done
    for wl in help files_fat32 log_can_cyclic; do
        cmp -s "$tmp/res-a/$wl/files.sha" "$tmp/res-b/$wl/files.sha" || ok=0
        cmp -s "$tmp/res-a/$wl/trace.epochs" "$tmp/res-b/$wl/trace.epochs" || ok=0
    done
    if ((ok)); then
        echo "self-test: PASS (the patched byte shows in the exFAT workloads' images and traces, nowhere else)"
        exit 0
    fi
    echo "self-test: FAIL (the patched byte was not reported where expected)"
    exit 1
fi
exit "$status"
