#!/usr/bin/env bash
# streamfat benchmarks (`make bench`). Prints a markdown summary and keeps it with the raw
# CSV in bench/results/<date>/ (not committed; docs/BENCHMARKS.md holds a copy by hand).
#
#   1. sustained sequential write: fio (raw image, io_uring, O_DIRECT) against the stream
#      path (tests/helpers/bench_stream write: what `streamfat put` runs, with the data made
#      in memory) on an exFAT and a FAT32 volume in an image of the same size on the same
#      disk, same request size and queue depth, rounds interleaved A/B/A/B; plus one
#      `streamfat put` from a pipe per case. Ratio = median(stream) / median(fio).
#   2. peers: a 1 GiB file by mcopy into FAT32, by cp onto exfat-fuse (loop device), and by
#      streamfat put onto the same images.
#   3. device operations per GiB (bench_stream trace, a counting device).
#   4. instructions per MiB in the fs + stream layers (callgrind on a RAM device).
#   5. mount and first-file-create time on a sparse 4 TiB exFAT and a 2 TB (2 x 10^12 bytes:
#      FAT32 stops at 2^32 sectors) FAT32 image.
#
# Environment: SF_BUILD (default build/), BENCH_TMP (where images go; default /tmp, the
# repository's disk here), BENCH_SIZE (default 4G), BENCH_IMG (image size, default 8G),
# BENCH_ROUNDS (default 3), BENCH_FS (default "exfat fat32": the volumes of section 1),
# BENCH_SKIP="peers trace cpu mount throughput log logcpu fscost proto" to leave sections out,
# BENCH_MKFS_OPTS (extra mkfs options for section 1's volumes, e.g. "--sector-size 4096" for
# images on tmpfs, whose O_DIRECT wants page-aligned offsets). Needs root for the
# loop device (exfat-fuse peer); about 15-20 minutes on a 250 MB/s disk.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 >/dev/null
SF=$BUILD/streamfat
BS_BIN=$BUILD/tests/bench_stream
[[ -x $SF && -x $BS_BIN ]] || { echo "bench: $SF or $BS_BIN missing" >&2; exit 1; }

SIZE=${BENCH_SIZE:-4G}
IMG=${BENCH_IMG:-8G}          # size of the raw and the volume image
ROUNDS=${BENCH_ROUNDS:-3}
SKIP=" ${BENCH_SKIP:-} "
export MTOOLS_SKIP_CHECK=1 LC_ALL=C

OUT=$SRC/bench/results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
CSV=$OUT/raw.csv
MD=$OUT/summary.md
TMP=$(mktemp -d "${BENCH_TMP:-/tmp}/sf-bench.XXXXXX")
LOOP=
MNT=$TMP/mnt
cleanup() {
    set +e
    mountpoint -q "$MNT" 2>/dev/null && { fusermount -u "$MNT" || umount "$MNT"; }
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    rm -rf "$TMP"
}
trap cleanup EXIT

bytes() { "$SF" __parse-size "$1"; }
now_ns() { date +%s%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }
md() { echo "$*" | tee -a "$MD"; }
csv() { echo "$*" >>"$CSV"; }

echo "section,case,tool,round,value,unit" >"$CSV"
md "# streamfat benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
md ""
md "Host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), kernel $(uname -r); images in $(df --output=source,fstype "$TMP" | tail -1 | tr -s ' ') ($TMP). Commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')."
md ""

# ---- 1. sustained sequential write ---------------------------------------------------------
# fio flushes the device once at the end (--end_fsync=1, inside its measured run time) as the
# stream does at close: both sides report durable bytes. Without it fio's figure ends while
# its data may still sit in the device's (here: the host's) write cache, and the one flush at
# the stream's close (1.2 s per GiB on this VM's disk) was all of the gap between them.
fio_run() {   # IMG SIZE BS QD -> MiB/s
    fio --name=raw --ioengine=io_uring --direct=1 --rw=write --bs="$3" --iodepth="$4" \
        --end_fsync=1 --size="$2" --filename="$1" --output-format=terse --terse-version=3 </dev/null |
        awk -F';' '{ printf "%.1f\n", $48 / 1024 }'
}
stream_run() {   # IMG SIZE BS QD -> MiB/s
    "$BS_BIN" write "$1" "$(bytes "$2")" "$(bytes "$3")" "$4" | sed -n 's/.*mibps=\([0-9.]*\).*/\1/p'
}
put_run() {   # IMG SIZE BS QD -> MiB/s (from put -v, data from a pipe)
    local err=$TMP/put.err
    "$SF" rm "$1" put.bin >/dev/null 2>&1 || true        # room for SIZE more
    "$SF" rm "$1" bench.bin >/dev/null 2>&1 || true
    head -c "$(bytes "$2")" /dev/zero | "$SF" put -v --bs "$3" --qd "$4" "$1" - put.bin 2>"$err"
    sed -n 's/.*(\([0-9.]*\) MiB\/s).*/\1/p' "$err"
    "$SF" rm "$1" put.bin >/dev/null 2>&1 || true
}

if [[ $SKIP != *" throughput "* ]]; then
    raw=$TMP/raw.img
    vol=$TMP/vol.img
    echo "bench: writing two $IMG images once (so that neither side pays for block allocation in the host file system)" >&2
    for f in "$raw" "$vol"; do
        dd if=/dev/zero of="$f" bs=4M count=$(($(bytes "$IMG") >> 22)) oflag=direct status=none
    done
    md "## Sustained sequential write ($SIZE, O_DIRECT, queue depth 4, $ROUNDS rounds interleaved)"
    md ""
    md "| volume | request | fio raw MiB/s (median, spread) | stream MiB/s (median, spread) | ratio | put from a pipe MiB/s |"
    md "|---|---|---|---|---|---|"
    for fs in ${BENCH_FS:-exfat fat32}; do
        # shellcheck disable=SC2086
        "$SF" mkfs -q --force -t "$fs" ${BENCH_MKFS_OPTS:-} "$vol"
        size=$SIZE
        # FAT32 files end at 4 GiB - 1: write 4 GiB - 1 MiB there (both sides).
        [[ $fs == fat32 && $(bytes "$size") -ge $((4 << 30)) ]] && size=4095M
        for bs in 1M 64K; do
            a=() b=()
            for ((r = 1; r <= ROUNDS; r++)); do
                x=$(fio_run "$raw" "$size" "$bs" 4); a+=("$x"); csv "write,$fs/$bs,fio,$r,$x,MiB/s"
                y=$(stream_run "$vol" "$size" "$bs" 4); b+=("$y"); csv "write,$fs/$bs,stream,$r,$y,MiB/s"
                echo "bench: $fs $bs round $r: fio $x, stream $y MiB/s" >&2
            done
            p=$(put_run "$vol" "$size" "$bs" 4); csv "write,$fs/$bs,put,1,$p,MiB/s"
            ma=$(printf '%s\n' "${a[@]}" | median); mb=$(printf '%s\n' "${b[@]}" | median)
            ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", b / a }')
            csv "write,$fs/$bs,ratio,0,$ratio,"
            md "| $fs | $bs | $ma ($(printf '%s\n' "${a[@]}" | spread)) | $mb ($(printf '%s\n' "${b[@]}" | spread)) | **$ratio** | $p |"
        done
    done
    md ""
    rm -f "$raw"
fi

# ---- 2. peers -----------------------------------------------------------------------------
if [[ $SKIP != *" peers "* ]]; then
    md "## Peers: a 1 GiB file (in the page cache) onto a 3 GiB volume, wall time incl. sync"
    md ""
    md "| volume | tool | MiB/s |"
    md "|---|---|---|"
    head -c 1G /dev/urandom >"$TMP/src1g"
    cat "$TMP/src1g" >/dev/null
    img=$TMP/peer.img
    timeit() { local t0 t1; t0=$(now_ns); "$@"; sync; t1=$(now_ns); awk -v t="$((t1 - t0))" 'BEGIN { printf "%.1f\n", 1024 / (t / 1e9) }'; }
    rm -f "$img"; dd if=/dev/zero of="$img" bs=4M count=768 oflag=direct status=none
    mkfs.fat -F 32 "$img" >/dev/null
    r=$(timeit mcopy -i "$img" "$TMP/src1g" ::/a.bin); csv "peers,fat32,mcopy,1,$r,MiB/s"; md "| FAT32 (mkfs.fat) | mcopy | $r |"
    r=$(timeit "$SF" put "$img" "$TMP/src1g" b.bin); csv "peers,fat32,put,1,$r,MiB/s"; md "| FAT32 (mkfs.fat) | streamfat put | $r |"
    mkfs.exfat "$img" >/dev/null
    LOOP=$(losetup -f --show "$img")
    mkdir -p "$MNT"
    mount.exfat-fuse "$LOOP" "$MNT" </dev/null >/dev/null
    t0=$(now_ns); cp "$TMP/src1g" "$MNT/a.bin"; sync -f "$MNT/a.bin"; fusermount -u "$MNT"; t1=$(now_ns)
    losetup -d "$LOOP"; LOOP=
    r=$(awk -v t="$((t1 - t0))" 'BEGIN { printf "%.1f\n", 1024 / (t / 1e9) }')
    csv "peers,exfat,cp-exfat-fuse,1,$r,MiB/s"; md "| exFAT (mkfs.exfat) | cp onto exfat-fuse (loop) | $r |"
    r=$(timeit "$SF" put "$img" "$TMP/src1g" b.bin); csv "peers,exfat,put,1,$r,MiB/s"; md "| exFAT (mkfs.exfat) | streamfat put | $r |"
    md ""
    rm -f "$img" "$TMP/src1g"
fi

# ---- 3. device operations per GiB ---------------------------------------------------------
if [[ $SKIP != *" trace "* ]]; then
    md "## Device operations while streaming 1 GiB (1 MiB writes, checkpoint every 16 MiB)"
    md ""
    md '```'
    for fs in exfat fat32; do
        img=$TMP/trace.img
        rm -f "$img"
        if [[ $fs == exfat ]]; then "$SF" mkfs -q -t exfat -c 32K -s 2G "$img"
        else "$SF" mkfs -q -t fat32 -c 32K -s 4G "$img"; fi
        out=$("$BS_BIN" trace "$img" 1G 1M 16M)
        md "$out"
        md ""
        tr ' ' '\n' <<<"$out" | grep = | sed "s/^/trace,$fs,/" >>"$CSV"
        rm -f "$img"
    done
    md '```'
    md "FatFs's published pattern on FAT32 with 32 KiB clusters: 1,537 FAT writes and 768 FAT reads per GiB."
    md ""
fi

# ---- 4. instructions per MiB --------------------------------------------------------------
if [[ $SKIP != *" cpu "* ]] && command -v valgrind >/dev/null; then
    md "## Instructions per MiB written (callgrind, 64 MiB onto a RAM device, only inside sf_stream_*)"
    md ""
    md "| volume | write size | total Ir/MiB | RAM device (memcpy) Ir/MiB | fs + stream Ir/MiB |"
    md "|---|---|---|---|---|"
    for fs in exfat fat32; do
        for ws in 1M 64K 512; do
            cg=$TMP/cg.$fs.$ws
            valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect='sf_stream_*' \
                "$BS_BIN" cpu "$fs" 64M "$ws" >/dev/null 2>&1
            callgrind_annotate --inclusive=yes --threshold=100 "$cg" 2>/dev/null >"$cg.txt"
            tot=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$cg.txt")
            dev=$(awk '/ram\.c:ram_(write|read) \[/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$cg.txt")
            read -r t d f < <(awk -v t="$tot" -v d="$dev" 'BEGIN { printf "%d %d %d\n", t / 64, d / 64, (t - d) / 64 }')
            csv "cpu,$fs/$ws,total,1,$t,Ir/MiB"; csv "cpu,$fs/$ws,ramdev,1,$d,Ir/MiB"; csv "cpu,$fs/$ws,fs+stream,1,$f,Ir/MiB"
            md "| $fs | $ws | $t | $d | **$f** |"
        done
    done
    md ""
fi

# ---- 5. mount and first create on huge sparse volumes ---------------------------------------
if [[ $SKIP != *" mount "* ]]; then
    md "## Mount and first file on sparse huge volumes (ms, median of 5, whole CLI process)"
    md ""
    md "| volume | \`streamfat --version\` | \`info\` (mount) | \`put\` of 1 byte (mount, create, unmount) |"
    md "|---|---|---|---|"
    printf x >"$TMP/one"
    ms() { local t0 t1; t0=$(now_ns); "$@" >/dev/null; t1=$(now_ns); awk -v t="$((t1 - t0))" 'BEGIN { printf "%.1f\n", t / 1e6 }'; }
    for spec in "exfat 4T" "fat32 2TB"; do
        set -- $spec
        img=$TMP/huge.img
        rm -f "$img"
        "$SF" mkfs -q -t "$1" -s "$2" "$img"
        v=() i=() p=()
        for ((r = 0; r < 5; r++)); do
            v+=("$(ms "$SF" --version)")
            i+=("$(ms "$SF" info "$img")")
            p+=("$(ms "$SF" put --no-direct "$img" "$TMP/one" "f$r")")
        done
        mv=$(printf '%s\n' "${v[@]}" | median); mi=$(printf '%s\n' "${i[@]}" | median); mp=$(printf '%s\n' "${p[@]}" | median)
        csv "mount,$1/$2,version,1,$mv,ms"; csv "mount,$1/$2,info,1,$mi,ms"; csv "mount,$1/$2,put1,1,$mp,ms"
        md "| $1 $2 | $mv | $mi ($(printf '%s\n' "${i[@]}" | spread)) | $mp ($(printf '%s\n' "${p[@]}" | spread)) |"
        rm -f "$img"
    done
    md ""
fi

# ---- 6. the logger: records/s, append latency, raw mode against fio ----------------------
if [[ $SKIP != *" log "* ]]; then
    SF_BUILD=$BUILD bash "$SRC/bench/log_bench.sh" >&2 || echo "bench: log_bench failed" >&2
fi

# ---- 7. the logger in instructions (callgrind: the same on a loaded machine) -------------
if [[ $SKIP != *" logcpu "* ]] && command -v valgrind >/dev/null; then
    SF_BUILD=$BUILD bash "$SRC/bench/log_cpu.sh" >&2 || echo "bench: log_cpu failed" >&2
fi

# ---- 8. the plain file API against FatFs (callgrind: instructions and device requests) -----
if [[ $SKIP != *" fscost "* ]] && command -v valgrind >/dev/null; then
    SF_BUILD=$BUILD bash "$SRC/bench/fs_cost.sh" | tee -a "$MD" >/dev/null || echo "bench: fs_cost failed" >&2
fi

# ---- 9. reassembly from Python against the Python reference stacks (docs/BENCHMARKS.md,
#         "Reassembly from Python"): needs build/pyenv with streamfat installed -------------
PYB=${SF_PYENV:-$SRC/build/pyenv}/bin/python
if [[ $SKIP != *" proto "* ]] && [[ -x $PYB ]] && "$PYB" -c 'import streamfat._proto, isotp, j1939' 2>/dev/null; then
    { echo "## Reassembly from Python"; echo '```';
      SF=$SF PROTO_BENCH=$BUILD/tests/proto_bench nice "$PYB" "$SRC/bench/proto_python_bench.py" \
          "$TMP/proto" 20000000 200000; echo '```'; } | tee -a "$MD" >/dev/null ||
        echo "bench: proto_python_bench failed" >&2
fi

echo "bench: results in $OUT (summary.md, raw.csv)" >&2
