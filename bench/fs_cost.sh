#!/usr/bin/env bash
# The plain file API (sf_open / sf_write / sf_close) and the stream against FatFs (issue 18):
# file-system instructions per MiB (callgrind, toggle-collect on the API calls, the RAM
# device's cost - the inclusive cost of its callbacks ram_rd / ram_wr - taken out) and device
# requests per MiB, 64 MiB into one new file on a 4 GiB volume (bench/fs_cost.c).
#
# The FatFs column holds published reference figures, not a measurement made here: FatFs
# R0.16, figures from issue 18's measurement (same device model, volume, cluster and write
# sizes; gcc 12.2 -O2 -g, x86-64). No FatFs code is built or kept in this repository.
#
#   bash bench/fs_cost.sh            prints the markdown table (also bench/results/fs_cost.md)
# Environment: SF_BUILD (default build/, Release), FS_COST_CACHE (cfg.buf bytes, default 32K: the figures of issue 18),
# FS_COST_ROWS="..." to run only rows whose label contains one of the words.
#
#   FS_COST_CHECK=1 bash bench/fs_cost.sh    the cache check instead of the table: every row
#       (both APIs) and the appends with a 32 KiB and a 2 MiB cache; exits 1 when the bigger
#       cache costs more file-system instructions or more device reads than the smaller one
#       (callgrind is deterministic: no tolerance). FS_COST_TOTAL (default 64M) bytes per row,
#       FS_COST_APPEND_TOTAL (default 16000000) for the 16-byte appends.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target fs_cost >/dev/null
BIN=$BUILD/bench/fs_cost
command -v valgrind >/dev/null || { echo "fs_cost: valgrind missing" >&2; exit 77; }
CACHE=${FS_COST_CACHE:-32K}
TMP=$(mktemp -d /tmp/sf-fscost.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
OUT=$SRC/bench/results
mkdir -p "$OUT"
MD=$OUT/fs_cost.md
[[ ${FS_COST_CHECK:-} == 1 ]] || : >"$MD"
md() { echo "$*" | tee -a "$MD"; }

# run FS CLUSTER API WSIZE TOTAL -> "IR_FS DEV_READS DEV_WRITES CALLS" (IR_FS: all of it)
run() {
    local cg=$TMP/cg.out toggles
    if [[ $3 == stream ]]; then
        toggles=(--toggle-collect=sf_stream_open --toggle-collect=sf_stream_write --toggle-collect=sf_stream_close)
    else
        toggles=(--toggle-collect=sf_open --toggle-collect=sf_write --toggle-collect=sf_close)
    fi
    local line
    line=$(timeout 1800 nice -n 10 valgrind --tool=callgrind --callgrind-out-file="$cg" "${toggles[@]}" \
        "$BIN" "$1" "$2" "$3" "$4" "$5" "${RUN_CACHE:-$CACHE}" 2>/dev/null </dev/null)
    callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$cg" 2>/dev/null >"$cg.txt"
    local tot dev
    tot=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$cg.txt")
    dev=$(awk '/:ram_(rd|wr) \[/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$cg.txt")
    local r w c
    r=$(sed -n 's/.*reads=\([0-9]*\) .*/\1/p' <<<"$line")
    w=$(sed -n 's/.* writes=\([0-9]*\) .*/\1/p' <<<"$line")
    c=$(sed -n 's/.*calls=\([0-9]*\) .*/\1/p' <<<"$line")
    echo "$((tot - dev)) $r $w $c"
}

want() { [[ -z ${FS_COST_ROWS:-} ]] && return 0; local x; for x in $FS_COST_ROWS; do [[ $1 == *"$x"* ]] && return 0; done; return 1; }
k() { awk -v x="$1" 'BEGIN { printf "%.1fk", x / 1000 }'; }
per() { awk -v x="$1" -v d="$2" 'BEGIN { v = x / d; printf (v < 10 ? "%.1f" : "%.0f"), v }'; }

if [[ ${FS_COST_CHECK:-} == 1 ]]; then
    # label fs cluster wsize (the table's rows, then the appends)
    total=${FS_COST_TOTAL:-64M} bad=0
    crows=("exFAT 32K, 1 MiB|exfat|32K|1M|$total" "exFAT 32K, 64 KiB|exfat|32K|64K|$total"
        "exFAT 32K, 512 B|exfat|32K|512|$total" "exFAT 1M, 64 KiB|exfat|1M|64K|$total"
        "FAT32 4K, 1 MiB|fat32|4K|1M|$total" "FAT32 32K, 64 KiB|fat32|32K|64K|$total"
        "FAT32 32K, 1 MiB|fat32|32K|1M|$total"
        "append exfat|exfat|32K|16|${FS_COST_APPEND_TOTAL:-16000000}"
        "append fat32|fat32|32K|16|${FS_COST_APPEND_TOTAL:-16000000}")
    echo "| row ($total) | API | Ir, 32 KiB cache | Ir, 2 MiB cache | device reads 32 KiB / 2 MiB | |"
    echo "|---|---|---:|---:|---|---|"
    for row in "${crows[@]}"; do
        IFS='|' read -r label fs cs ws tot <<<"$row"
        want "$label" || continue
        apis=(file stream)
        [[ $label == append* ]] && apis=(file)
        for api in "${apis[@]}"; do
            read -r ir1 r1 _ _ < <(RUN_CACHE=32K run "$fs" "$cs" "$api" "$ws" "$tot")
            read -r ir2 r2 _ _ < <(RUN_CACHE=2M run "$fs" "$cs" "$api" "$ws" "$tot")
            verdict=ok
            if ! [[ $ir1 =~ ^[0-9]+$ && $ir2 =~ ^[0-9]+$ && $r1 =~ ^[0-9]+$ && $r2 =~ ^[0-9]+$ ]] ||
                ((ir1 == 0 || ir2 == 0)); then
                verdict="NO MEASUREMENT (fs_cost or callgrind failed)"; bad=1
            elif ((ir2 > ir1 || r2 > r1)); then verdict="BIGGER CACHE COSTS MORE"; bad=1; fi
            echo "| $label | $api | $ir1 | $ir2 | $r1 / $r2 | $verdict |"
        done
    done
    exit $bad
fi

md "## File API against FatFs (bench/fs_cost.sh, $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?'), cache $CACHE)"
md ""
md "64 MiB into one new file on a 4 GiB volume (FAT32: two FATs), file-system instructions per MiB (callgrind, device callbacks excluded) and [device writes / reads per MiB]. FatFs column: FatFs R0.16, figures from issue 18's measurement (published reference, not run here; [writes])."
md ""
md "| volume, write size | FatFs Ir/MiB [w] | \`sf_write\` Ir/MiB [w/r] | ratio | \`sf_stream\` Ir/MiB [w/r] | ratio |"
md "|---|---:|---:|---:|---:|---:|"
# label fs cluster wsize fatfs_ir fatfs_w
rows=(
    "exFAT 32K, 1 MiB|exfat|32K|1M|10700|32"
    "exFAT 32K, 64 KiB|exfat|32K|64K|11700|32"
    "exFAT 32K, 512 B|exfat|32K|512|270900|2048"
    "exFAT 1M, 64 KiB|exfat|1M|64K|2400|16"
    "FAT32 4K, 1 MiB|fat32|4K|1M|87400|268"
    "FAT32 32K, 64 KiB|fat32|32K|64K|12100|33.6"
    "FAT32 32K, 1 MiB|fat32|32K|1M|11000|33.6"
)
for row in "${rows[@]}"; do
    IFS='|' read -r label fs cs ws fir fw <<<"$row"
    want "$label" || continue
    read -r ir r w _ < <(run "$fs" "$cs" file "$ws" 64M)
    read -r sir sr sw _ < <(run "$fs" "$cs" stream "$ws" 64M)
    f=$(per "$ir" 64); s=$(per "$sir" 64)
    md "| $label | $(k "$fir") [$fw] | $(k "$f") [$(per "$w" 64)/$(per "$r" 64)] | $(awk -v a="$f" -v b="$fir" 'BEGIN { printf "%.2f", a / b }') | $(k "$s") [$(per "$sw" 64)/$(per "$sr" 64)] | $(awk -v a="$s" -v b="$fir" 'BEGIN { printf "%.2f", a / b }') |"
done
md ""
md "16-byte appends: 1,000,000 \`sf_write\` calls of 16 bytes into one new file, 32K clusters (FatFs R0.16, figures from issue 18's measurement: 107-112 Ir per call, 31 device writes and 0 reads per 1,000 calls)."
md ""
md "| volume | Ir per call | ratio (to 110) | device writes / reads per 1,000 calls |"
md "|---|---:|---:|---|"
for fs in exfat fat32; do
    want "append $fs" || continue
    read -r ir r w c < <(run "$fs" 32K file 16 16000000)
    md "| $fs | $(per "$ir" "$c") | $(awk -v a="$ir" -v c="$c" 'BEGIN { printf "%.2f", a / c / 110 }') | $(per "$((w * 1000))" "$c") / $(per "$((r * 1000))" "$c") |"
done
md ""
echo "fs_cost: table in $MD" >&2
