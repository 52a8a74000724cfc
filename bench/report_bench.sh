#!/usr/bin/env bash
# streamfat report on large logs (docs/BENCHMARKS.md, "report"): for each N, mklog writes a
# log of N CAN frames (tests/helpers/mklog: 8-byte classic frames on two channels, a TEXT
# record after every 100th, 64 KiB blocks, every 7th block sealed early), read once to warm
# the page cache, then `streamfat report` is timed with /usr/bin/time: CPU seconds (user +
# sys), frames per CPU second, wall seconds, peak RSS and the page's size. A markdown table
# on stdout.
#
#   bench/report_bench.sh [N...]      (default: 10000000 100000000)
#
# Environment: SF_BUILD (default build/; configured Release if new), BENCH_DIR (default a
# temporary directory; the log takes about 38 bytes a frame: 3.7 GB for 100 M frames).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat mklog >/dev/null
SF=$BUILD/streamfat
MKLOG=$BUILD/tests/mklog
[[ -x /usr/bin/time ]] || { echo "report_bench.sh: needs /usr/bin/time" >&2; exit 1; }
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sf-report-bench.XXXXXX")}
mkdir -p "$DIR"
[[ -n ${BENCH_DIR:-} ]] || trap 'rm -rf "$DIR"' EXIT
sizes=("$@")
((${#sizes[@]})) || sizes=(10000000 100000000)

echo "| frames | log | CPU s (user + sys) | frames per CPU s | wall s | peak RSS | page |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
    rm -f "$DIR/in.SFL"
    "$MKLOG" "$DIR/in.SFL" 65536 "$n" >/dev/null
    cat "$DIR/in.SFL" >/dev/null
    /usr/bin/time -f '%U %S %M %e' -o "$DIR/time" "$SF" report -o "$DIR/r.html" "$DIR/in.SFL" \
        2>"$DIR/err" || { cat "$DIR/err" >&2; exit 1; }
    read -r u s m e <"$DIR/time"
    t=$(echo "$u + $s" | bc -l)
    printf '| %s | %s | %.2f + %.2f | %s | %.1f | %.1f MiB | %s |\n' \
        "$(numfmt --grouping "$n")" "$(numfmt --to=iec-i --suffix=B "$(stat -c %s "$DIR/in.SFL")")" \
        "$u" "$s" "$(echo "$n / $t" | bc | numfmt --grouping)" "$e" \
        "$(echo "$m / 1024" | bc -l)" "$(numfmt --to=iec-i --suffix=B "$(stat -c %s "$DIR/r.html")")"
done
