#!/usr/bin/env bash
# Logger benchmarks (streamfat log). Prints a markdown summary on stdout.
#
#   1. records/s one producer appends with zero drops: gen:can (16-byte CAN frames, 32-byte
#      records) paced at rising rates for BENCH_STEP_S seconds each until a step drops, plus
#      one unpaced run; on an image on tmpfs (the logger's own limit) and in BENCH_TMP (the
#      disk's). Every run with --measure: append latency p50/p99.9/max from the library's
#      histogram (log2 buckets: a percentile is its bucket's upper bound).
#   2. raw mode (gen:raw --raw) against fio writing the same number of bytes to a raw image
#      file of the same size in the same directory, O_DIRECT, io_uring, the same request size
#      (1 MiB) and queue depth (4); rounds interleaved; ratio = median(log) / median(fio).
#
# Environment: SF_BUILD (default build/), BENCH_TMP (default /tmp: the disk), BENCH_RAW_SIZE
# (default 2G), BENCH_ROUNDS (default 3), BENCH_STEP_S (default 3), BENCH_RATES (default
# "1000000 2000000 5000000 10000000 15000000 20000000 30000000"), BENCH_SKIP="rates raw" to
# leave sections out.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat >/dev/null
SF=$BUILD/streamfat
RAW_SIZE=${BENCH_RAW_SIZE:-2G}
ROUNDS=${BENCH_ROUNDS:-3}
STEP_S=${BENCH_STEP_S:-3}
RATES=${BENCH_RATES:-1000000 2000000 5000000 10000000 15000000 20000000 30000000}
TMP=$(mktemp -d "${BENCH_TMP:-/tmp}/sf-logbench.XXXXXX")
SHM=$(mktemp -d /dev/shm/sf-logbench.XXXXXX)
trap 'rm -rf "$TMP" "$SHM"' EXIT

j() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"j": d}))' "$1" "$2"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run_gen DIR SOURCE [--measure]: one gen:can run of BENCH_STEP_S seconds; prints
# "records/s drops p50 p99.9 max" (records accepted during the run / its duration; the
# latencies 0 without --measure), or "error".
run_gen() {
    local dir=$1 src=$2 rc=0
    shift 2
    rm -f "$dir/g.img"
    "$SF" mkfs -q -t exfat -s 16G "$dir/g.img"
    "$SF" log --json "$@" --ring 256M --split-size 1G --source "$src" --duration "$STEP_S" \
        "$dir/g.img" >"$dir/r.json" 2>/dev/null || rc=$?
    rm -f "$dir/g.img"
    if ((rc != 0 && rc != 3)); then
        echo "error"
        return 0
    fi
    j "$dir/r.json" '"%d %d %d %d %d" % (j["records_written"] / '"$STEP_S"', j["records_dropped"], j["append_p50_ns"], j["append_p999_ns"], j["append_max_ns"])'
}

echo "## Logger"
echo
echo "$(nproc) cores, $(uname -r); build $(basename "$BUILD") ($(grep -E '^CMAKE_BUILD_TYPE' "$BUILD/CMakeCache.txt" | cut -d= -f2)); $(date -u +%Y-%m-%d)."
echo
SKIP=" ${BENCH_SKIP:-} "
for where in shm disk; do
    [[ $SKIP == *" rates "* ]] && break
    dir=$SHM
    [[ $where == disk ]] && dir=$TMP
    echo "### records/s, one producer, zero drops ($where: $(df --output=source "$dir" | tail -1))"
    echo
    echo "| source | records/s appended | dropped | append p50 | p99.9 | max (ns) |"
    echo "|---|---:|---:|---:|---:|---:|"
    best=0
    best_line=
    for r in $RATES; do
        read -r rps drops p50 p999 mx < <(run_gen "$dir" "gen:can,rate=$r" --measure)
        if [[ $rps == error ]]; then
            echo "| gen:can,rate=$r | run failed | | | | |"
            break
        fi
        echo "| gen:can,rate=$r --measure | $rps | $drops | $p50 | $p999 | $mx |"
        # a step counts when nothing dropped and the producer kept up with the rate
        if ((drops == 0 && rps * 100 >= r * 97)); then
            best=$r
            best_line="$p999 / $mx"
        else
            break
        fi
    done
    read -r rps drops p50 p999 mx < <(run_gen "$dir" "gen:can" --measure)
    echo "| gen:can (unpaced) --measure | $rps | $drops | $p50 | $p999 | $mx |"
    read -r rps drops p50 p999 mx < <(run_gen "$dir" "gen:can")
    echo "| gen:can (unpaced) | $rps | $drops | - | - | - |"
    echo
    echo "Highest paced rate kept up with and zero drops ($where): **$best records/s** (append p99.9 / max: ${best_line:-n/a} ns); unpaced without timing: **$rps records/s**, $drops dropped."
    echo
done

[[ $SKIP == *" raw "* ]] && exit 0
echo "### raw mode against fio ($(df --output=source "$TMP" | tail -1), $RAW_SIZE, 1 MiB requests, queue depth 4)"
echo
bytes=$("$SF" __parse-size "$RAW_SIZE")
img_bytes=$((bytes + (bytes / 8) + (64 << 20)))
logs=()
logs2=()
fios=()
for ((i = 1; i <= ROUNDS; i++)); do
    rm -f "$TMP/raw.img" "$TMP/fio.img"
    truncate -s "$img_bytes" "$TMP/fio.img"
    fio --name=raw --filename="$TMP/fio.img" --rw=write --bs=1M --iodepth=4 --direct=1 \
        --ioengine=io_uring --size="$bytes" --end_fsync=1 --output-format=json \
        >"$TMP/fio.json" 2>/dev/null
    f=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["jobs"][0]["write"]; print("%.1f" % (d["io_bytes"] / (d["runtime"] / 1000.0) / 1e6))' "$TMP/fio.json")
    rm -f "$TMP/fio.img"
    "$SF" mkfs -q -t exfat -s "$img_bytes" "$TMP/raw.img"
    "$SF" log --json --raw --source gen:raw --max-bytes "$bytes" --qd 4 "$TMP/raw.img" >"$TMP/r.json" 2>/dev/null
    l=$(j "$TMP/r.json" '"%.1f" % (j["bytes_written"] / j["seconds"] / 1e6)')
    rm -f "$TMP/raw.img"
    "$SF" mkfs -q -t exfat -s "$img_bytes" "$TMP/raw.img"
    "$SF" log --json --raw --source gen:raw --max-bytes "$bytes" --qd 4 --sync-interval 60s \
        "$TMP/raw.img" >"$TMP/r.json" 2>/dev/null
    l2=$(j "$TMP/r.json" '"%.1f" % (j["bytes_written"] / j["seconds"] / 1e6)')
    rm -f "$TMP/raw.img"
    echo "round $i: fio $f MB/s, streamfat log --raw $l MB/s, with --sync-interval 60s $l2 MB/s" >&2
    fios+=("$f")
    logs+=("$l")
    logs2+=("$l2")
done
mf=$(printf '%s\n' "${fios[@]}" | median)
ml=$(printf '%s\n' "${logs[@]}" | median)
echo "| tool | MB/s (median of $ROUNDS) | rounds |"
echo "|---|---:|---|"
echo "| fio (raw image, O_DIRECT, io_uring) | $mf | ${fios[*]} |"
ml2=$(printf '%s\n' "${logs2[@]}" | median)
echo "| streamfat log --raw --source gen:raw (checkpoint every 1 s, the default) | $ml | ${logs[*]} |"
echo "| the same with --sync-interval 60s | $ml2 | ${logs2[*]} |"
echo
echo "Ratio log / fio: **$(python3 -c "print('%.2f' % ($ml / $mf))")** with the default checkpoints, **$(python3 -c "print('%.2f' % ($ml2 / $mf))")** with one every 60 s (the log's time includes opening the file, its checkpoints and the close; fio flushes once at the end)."
