#!/usr/bin/env bash
# MF4 export against python-can, side by side on the same frames (docs/BENCHMARKS.md, "MF4"):
#
#   1. mklog writes a log of N CAN frames (tests/helpers/mklog: 8-byte classic frames on two
#      channels and a few of every other kind), and streamfat exports it to candump -L once
#      (the input python-can gets);
#   2. `streamfat export -f mf4` of the log: --mf4-compress 0 (DT), 1 (the default), 6;
#   3. python-can's `can.logconvert` turning the candump .log into .mf4 (its MF4Writer on
#      asammdf: transposition + deflate, its default), from the venv of
#      tests/python-requirements.txt (scripts/pyenv.sh).
# Each is timed with /usr/bin/time: user + sys CPU seconds, frames per CPU second, wall
# seconds and peak RSS; the ratio of frames per CPU second to python-can's is printed last.
# Prints a markdown table on stdout.
#
#   bench/mf4_bench.sh [N]         N frames (default BENCH_MF4_FRAMES or 10000000)
#
# Environment: SF_BUILD (default build/; configured Release if new), BENCH_DIR (default a
# temporary directory; the log, the .log and the outputs take about 200 bytes a frame),
# BENCH_SKIP_PYCAN=1 (streamfat only).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat mklog >/dev/null
SF=$BUILD/streamfat
MKLOG=$BUILD/tests/mklog
N=${1:-${BENCH_MF4_FRAMES:-10000000}}
PY=$SRC/build/pyenv/bin/python
[[ -x /usr/bin/time ]] || { echo "mf4_bench.sh: needs /usr/bin/time" >&2; exit 1; }
if [[ ${BENCH_SKIP_PYCAN:-0} != 1 ]]; then
    bash "$SRC/scripts/pyenv.sh"
    [[ -x $PY ]] || { echo "mf4_bench.sh: no venv at $PY" >&2; exit 1; }
fi
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sf-mf4-bench.XXXXXX")}
mkdir -p "$DIR"
[[ -n ${BENCH_DIR:-} ]] || trap 'rm -rf "$DIR"' EXIT

"$MKLOG" "$DIR/in.SFL" 65536 "$N" >/dev/null
"$SF" export -f candump -o "$DIR/in.log" "$DIR/in.SFL" 2>/dev/null
frames=$(wc -l <"$DIR/in.log")
cat "$DIR/in.SFL" "$DIR/in.log" >/dev/null

# run NAME OUTPUT CMD...: one timed run, one table row.
declare -A cpu
run() {
    local name=$1 out=$2 t u s m e
    shift 2
    rm -f "$out"
    /usr/bin/time -f '%U %S %M %e' -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" ||
        { cat "$DIR/err" >&2; echo "mf4_bench.sh: $name failed" >&2; exit 1; }
    read -r u s m e <"$DIR/time"
    t=$(echo "$u + $s" | bc -l)
    [[ $(echo "$t < 0.01" | bc) = 1 ]] && t=0.01   # below the clock's resolution
    cpu[$name]=$t
    printf '| %s | %s | %.2f + %.2f | %s | %.1f | %.1f MiB |\n' "$name" \
        "$(stat -c %s "$out" | numfmt --grouping) B" "$u" "$s" \
        "$(echo "$frames / $t" | bc | numfmt --grouping)" "$e" "$(echo "$m / 1024" | bc -l)"
}

echo "MF4 export of $frames frames ($(stat -c %s "$DIR/in.SFL" | numfmt --grouping)-byte log," \
     "$(stat -c %s "$DIR/in.log" | numfmt --grouping)-byte candump .log), $(date -u +%F)"
echo
echo "| run | output | CPU s (user + sys) | frames per CPU s | wall s | max RSS |"
echo "|---|---:|---:|---:|---:|---:|"
run "streamfat --mf4-compress 0" "$DIR/o0.mf4" "$SF" export -f mf4 --mf4-compress 0 -o "$DIR/o0.mf4" "$DIR/in.SFL"
run "streamfat --mf4-compress 1" "$DIR/o1.mf4" "$SF" export -f mf4 -o "$DIR/o1.mf4" "$DIR/in.SFL"
run "streamfat --mf4-compress 6" "$DIR/o6.mf4" "$SF" export -f mf4 --mf4-compress 6 -o "$DIR/o6.mf4" "$DIR/in.SFL"
if [[ ${BENCH_SKIP_PYCAN:-0} != 1 ]]; then
    run "python-can logconvert" "$DIR/pc.mf4" "$PY" -m can.logconvert "$DIR/in.log" "$DIR/pc.mf4"
    echo
    for l in 0 1; do
        printf 'streamfat --mf4-compress %s: %.0fx the frames per CPU second of python-can\n' \
            "$l" "$(echo "${cpu[python-can logconvert]} / ${cpu[streamfat --mf4-compress $l]}" | bc -l)"
    done
fi
printf 'level 1 takes %.2fx the CPU time of the plain export\n' \
    "$(echo "${cpu[streamfat --mf4-compress 1]} / ${cpu[streamfat --mf4-compress 0]}" | bc -l)"
