#!/usr/bin/env bash
# Build the fuzz targets and run each for a while (make fuzz; t_fuzz_smoke in make check).
#
#   fuzz/run.sh [TARGET...]    default: fuzz_mount fuzz_decode fuzz_unpack fuzz_candump fuzz_blf fuzz_asc
#                              fuzz_mf4 fuzz_proto
#                              fuzz_mf4
#
# Environment:
#   FUZZ_BUILD    build directory (default build-fuzz; clang, -DSF_FUZZ=ON)
#   FUZZ_SECONDS  seconds per target (default 600)
#   FUZZ_CORPUS   corpus directory, one subdirectory per target, kept between runs
#                 (default $FUZZ_BUILD/corpus); new inputs the fuzzer finds go there
#   FUZZ_JOBS     build parallelism (default 2)
#   SF            the streamfat CLI that makes the seeds (fuzz/seeds.sh); default: build/
#
# Each target first replays fuzz/regress/<name>/ (inputs that once found a bug), then fuzzes
# from its corpus plus fresh seeds, with -timeout=10 (a hang is a failure) and leak
# detection. Any crash, hang, leak or sanitizer report fails the run; its input is left in
# $FUZZ_BUILD/artifacts/. Prints one line per target: executions, exec/s (wall clock) and
# executions per CPU-second (user + system time of the target), corpus files and bytes,
# coverage.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$src/build-fuzz}
seconds=${FUZZ_SECONDS:-600}
corpus=${FUZZ_CORPUS:-$build/corpus}
jobs=${FUZZ_JOBS:-2}
targets=("$@")
((${#targets[@]})) || targets=(fuzz_mount fuzz_decode fuzz_unpack fuzz_candump fuzz_blf fuzz_asc
                                fuzz_mf4 fuzz_proto)

declare -A seed_dir=([fuzz_mount]=mount [fuzz_decode]=decode [fuzz_unpack]=unpack [fuzz_candump]=candump
                     [fuzz_blf]=blf [fuzz_asc]=asc [fuzz_mf4]=mf4 [fuzz_proto]=proto)
declare -A max_len=([fuzz_mount]=1048576 [fuzz_decode]=65537 [fuzz_unpack]=16384 [fuzz_candump]=4096
                    [fuzz_blf]=65536 [fuzz_asc]=16384 [fuzz_mf4]=65536 [fuzz_proto]=16384)

if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" -DSF_FUZZ=ON \
        -DSF_TESTS=OFF >/dev/null
else
    cmake "$build" >/dev/null       # picks up targets added since it was configured
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null

seeds=$build/seeds
rm -rf "$seeds"
SF=${SF:-$src/build/streamfat} bash "$src/fuzz/seeds.sh" "$seeds"

mkdir -p "$build/artifacts"
# A small quarantine: the library allocates nothing, and the default 256 MiB of freed
# input copies only costs memory and page faults on a shared machine.
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:quarantine_size_mb=16}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${targets[@]}"; do
    name=${seed_dir[$t]}
    mkdir -p "$corpus/$name"
    logf=$build/$t.log
    if [[ -d $src/fuzz/regress/$name ]] && ls "$src/fuzz/regress/$name"/* >/dev/null 2>&1; then
        # 3 s, not 10: an input once found slow (fuzz/regress/mount/fat-count-free-1gib took
        # 7 s) must fail here if it becomes slow again; each takes milliseconds now
        if ! "$build/$t" -timeout=3 "$src/fuzz/regress/$name"/* >"$logf" 2>&1; then
            echo "$t: a regression input fails again (fuzz/regress/$name):" >&2
            tail -40 "$logf" >&2
            status=1
            continue
        fi
    fi
    # CPU seconds (user + system) as well as wall time: on a shared machine exec/s says
    # more about the load than about the target
    rc=0
    cpu=$( { TIMEFORMAT='%3U %3S'
             time { (cd "$build/artifacts" &&
                     "$build/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
                         -max_len="${max_len[$t]}" -print_final_stats=1 \
                         "$corpus/$name" "$seeds/$name") >"$logf" 2>&1; }; } 2>&1 ) || rc=$?
    if ((rc != 0)); then
        echo "$t: FAILED (log $logf, input in $build/artifacts):" >&2
        grep -E "ERROR|SUMMARY|==[0-9]+==|#[0-9]+ 0x" "$logf" | head -40 >&2 || tail -40 "$logf" >&2
        status=1
        continue
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logf")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logf")
    cov=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$logf" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    files=$(find "$corpus/$name" -type f | wc -l)
    bytes=$(du -sb "$corpus/$name" | cut -f1)
    cpu_rate=$(awk -v e="$execs" -v c="$cpu" 'BEGIN { split(c, t, " "); s = t[1] + t[2];
                                                   printf "%d", (s > 0 ? e / s : 0) }')
    echo "$t: ${seconds}s, $execs executions ($rate/s, $cpu_rate per CPU-second)," \
         "corpus $files files $bytes bytes, coverage $cov edges, no crash, hang, leak or" \
         "sanitizer report"
done
exit $status
