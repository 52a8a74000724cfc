#!/usr/bin/env bash
# Issue 18's create workload against FatFs's published figures: instructions per create
# (sf_open + 4 KiB sf_write + sf_close) over the last 100 files of N in one directory,
# callgrind with --toggle-collect on the three calls, the RAM device's callbacks
# (ram_rd/ram_wr, bench/sparse_ram.c: copying and page lookup) taken off. Prints a markdown table.
#
#   bench/fs_create_cost.sh [N ...]      default N: 1000 10000
#
# Environment: SF_BUILD (default build/; its libstreamfat-core.a, built here),
# FCC_CACHE_KIB (metadata cache, default 32: reproduces issue 18's 512.9k), FCC_CASES (default "fat32:83 fat32:lfn
# exfat:83 exfat:lfn").
#
# FatFs column: FatFs R0.16's figures as measured for issue 18 (same RAM disk, 4 GiB
# volume, 32K clusters, 2 FATs, gcc -O2, per create at file 1,000): FAT32 8.3 134.8k,
# FAT32 long names 1,568k. For exFAT issue 18 gives only the ratio (streamfat at 0.07x
# FatFs), so the reference is streamfat's baseline figure (87.2k, 97.2k) / 0.07. No FatFs code is used.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat-core >/dev/null 2>&1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -std=c11 -D_GNU_SOURCE -I"$SRC/include" -I"$BUILD/include" \
    "$SRC/bench/fs_create_cost.c" "$SRC/bench/sparse_ram.c" "$BUILD/libstreamfat-core.a" -o "$TMP/fcc"
CACHE=${FCC_CACHE_KIB:-32}
NS=("$@")
[[ ${#NS[@]} -gt 0 ]] || NS=(1000 10000)

# FatFs reference Ir per create at file 1,000 (issue 18); exFAT: baseline / 0.07
declare -A REF=([fat32:83]=134800 [fat32:lfn]=1568000 [exfat:83]=1245700 [exfat:lfn]=1388600)

echo "| volume | names | files in the directory | Ir per create (last 100 files) | FatFs R0.16 at 1,000 | ratio to FatFs | per create / the 1,000-file figure |"
echo "|---|---|---:|---:|---:|---:|---:|"
declare -A AT
for n in "${NS[@]}"; do
    for c in ${FCC_CASES:-fat32:83 fat32:lfn exfat:83 exfat:lfn}; do
        fs=${c%%:*} names=${c##*:}
        cg=$TMP/cg.$fs.$names.$n
        timeout 3600 valgrind --tool=callgrind --callgrind-out-file="$cg" --instr-atstart=no \
            --toggle-collect=sf_open --toggle-collect=sf_write --toggle-collect=sf_close \
            "$TMP/fcc" "$fs" "$names" "$n" "$CACHE" >/dev/null 2>"$cg.log" </dev/null ||
            { cat "$cg.log" >&2; exit 1; }
        callgrind_annotate --inclusive=yes --threshold=100 "$cg" 2>/dev/null >"$cg.txt"
        tot=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$cg.txt")
        dev=$(awk '/:ram_(rd|wr) \[/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$cg.txt")
        per=$(( (tot - dev) / 100 ))
        ((n == 1000)) && AT[$c]=$per
        awk -v per="$per" -v r="${REF[$c]}" -v a="${AT[$c]:-0}" -v fs="$fs" -v nm="$names" -v n="$n" 'BEGIN {
            printf "| %s | %s | %d | %.1fk | %s%.1fk | %s | %s |\n", fs == "exfat" ? "exFAT 32K" : "FAT32 32K",
                nm == "83" ? "8.3" : "long", n, per / 1000, fs == "exfat" ? "≈ " : "", r / 1000,
                n == 1000 ? sprintf("**%.2f**", per / r) : "",
                (n != 1000 && a > 0) ? sprintf("%.1f", per / a) : "" }'
    done
done
