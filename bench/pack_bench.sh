#!/usr/bin/env bash
# Compressed record blocks against LZ4 and zstd (docs/BENCHMARKS.md "Compressed blocks"):
# the same records, as `streamfat log` writes them, through bench/pack_bench (bytes per
# record) and, under callgrind, each codec's instructions per record.
#   workloads: the demo vehicle (streamfat demo), a J1939 truck mix and a CAN FD mix
#   (bench/can_mix.py, replayed through `log --source stdin`), gen:can (1 M records), raw
#   bytes (gen:raw, 64 MiB).
# Environment: SF_BUILD (default build/).
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat pack_bench >/dev/null
SF=$BUILD/streamfat PB=$BUILD/bench/pack_bench
T=$(mktemp -d /dev/shm/sf-pack.XXXXXX)
trap 'rm -rf "$T"' EXIT

"$SF" demo -o "$T/demo.img" </dev/null >/dev/null
for f in $("$SF" ls "$T/demo.img"); do "$SF" cat "$T/demo.img" "$f" >"$T/demo-$f"; done
python3 "$SRC/bench/can_mix.py" j1939 60 >"$T/j.log"
python3 "$SRC/bench/can_mix.py" fd 30 >"$T/fd.log"
for w in j fd; do
    "$SF" mkfs -q -t exfat -s 1G "$T/$w.img"
    "$SF" log --source stdin "$T/$w.img" <"$T/$w.log" 2>/dev/null
    "$SF" cat "$T/$w.img" LOG00001.SFL >"$T/$w.sfl"
done
"$SF" mkfs -q -t exfat -s 1G "$T/g.img"
"$SF" log --source gen:can --max-records 1000000 "$T/g.img" 2>/dev/null
"$SF" cat "$T/g.img" LOG00001.SFL >"$T/g.sfl"
"$SF" mkfs -q -t exfat -s 1G "$T/r.img"
"$SF" log --raw --source gen:raw --max-bytes 64M "$T/r.img" 2>/dev/null
"$SF" cat "$T/r.img" LOG00001.BIN >"$T/r.bin"

run() {   # NAME ARGS...: the table, then instructions per record per codec (callgrind)
    local name=$1
    shift
    echo "### $name"
    "$PB" "$@"
    if command -v valgrind >/dev/null; then
        valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$PB" "$@" >"$T/pb.txt" 2>/dev/null
        local recs
        recs=$(awk -F'|' 'NR == 1 { split($2, a, " "); print a[1] }' "$T/pb.txt")
        (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$T/cg.out" 2>/dev/null) >"$T/cg.txt"
        echo
        echo "| instructions per record (callgrind; run_pack_unpack - run_pack = unpacking) | |"
        echo "|---|---:|"
        for fn in run_lz4 run_zstd1 run_zstd3 run_pack run_pack_zstd run_pack_unpack; do
            # (GCC may name a clone run_pack_zstd.isra.0)
            awk -v f="$fn" -v n="$recs" '$0 ~ (":" f "(\\.isra\\.[0-9]+)? \\[") { gsub(",", "", $1); printf "| %s | %.1f |\n", f, $1 / n; found = 1; exit }
                END { if (!found) printf "| %s | ? |\n", f }' "$T/cg.txt"
        done
    fi
    echo
}
run "demo vehicle" "$T"/demo-*
run "J1939 truck mix (60 s)" "$T/j.sfl"
run "CAN FD mix, stdin replay (30 s)" "$T/fd.sfl"
run "gen:can (1 M records)" "$T/g.sfl"
echo "### raw mode (gen:raw, 64 MiB)"
"$PB" --raw "$T/r.bin"
