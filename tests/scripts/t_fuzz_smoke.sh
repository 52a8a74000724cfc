#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ in make check: build them (clang, -DSF_FUZZ=ON, into
# $SF_BUILD/fuzz), replay fuzz/regress/, and fuzz each target for FUZZ_SMOKE_SECONDS
# (default 5; 30 with SF_LONG=1) from quick seeds (fuzz/seeds.sh with SEEDS_QUICK=1) and a fresh corpus. Any
# crash, hang (10 s), leak or sanitizer report fails. `make fuzz` is the long run.
#
# Speed is part of it: a target must run at least FUZZ_SMOKE_MIN_RATE (default 1500)
# executions per CPU-second (user + system time, which the load of a shared machine does not
# shrink as it does exec/s). fuzz_mount once managed about 150/s and fuzz_decode 750/s (an
# exFAT mount expanded and compared the whole 65,536-entry up-case table; the decoder was fed
# 3 bytes at a time); the goal is 2,000/s and more in long runs, which the 5 s here, seed
# loading included, approach from below.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_sf
command -v clang >/dev/null 2>&1 || skip "clang not installed"
command -v ld.lld >/dev/null 2>&1 || skip "lld not installed (fuzz_candump links with it)"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n%s\n' \
    'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
    > "$WORK/probe.c"
clang -fsanitize=fuzzer,address "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null ||
    skip "clang has no libFuzzer runtime (libclang-rt-dev)"

secs=${FUZZ_SMOKE_SECONDS:-5}
[[ ${SF_LONG:-0} == 1 ]] && secs=${FUZZ_SMOKE_SECONDS:-30}
out=$WORK/run.out
if ! FUZZ_BUILD="$SF_BUILD/fuzz" FUZZ_SECONDS=$secs FUZZ_CORPUS="$WORK/corpus" SEEDS_QUICK=1 \
        SF="$SF" bash "$SF_SRC/fuzz/run.sh" >"$out" 2>&1; then
    cat "$out" >&2
    fail "a fuzz target failed (see above)"
fi
cat "$out"
min_rate=${FUZZ_SMOKE_MIN_RATE:-1500}
# The time given is wall-clock (libFuzzer's -max_total_time): on a starved machine a target
# can spend it loading its seeds under ASan (fuzz_mf4: 4 executions in 5 s at load 12). A
# target that falls short gets one more run of three times as long, alone; a target that
# never gets past its seeds, or is slow per CPU-second, fails that one too.
check_line() {  # TARGET FILE SECONDS -> 0 ok, 1 short (message on stdout)
    local line execs cpu_rate
    line=$(grep "^$1: " "$2") || { echo "$1: no result line"; return 1; }
    execs=$(sed -n 's/^[^,]*, \([0-9]*\) executions.*/\1/p' <<<"$line")
    cpu_rate=$(sed -n 's/.*, \([0-9]*\) per CPU-second.*/\1/p' <<<"$line")
    [[ -n $execs && $execs -gt 100 ]] || { echo "$1: only '${execs:-?}' executions in ${3}s"; return 1; }
    [[ -n $cpu_rate && $cpu_rate -ge $min_rate ]] ||
        { echo "$1: ${cpu_rate:-?} executions per CPU-second, below $min_rate"; return 1; }
}
for t in fuzz_mount fuzz_decode fuzz_candump fuzz_blf fuzz_asc fuzz_mf4 fuzz_proto; do
    why=$(check_line "$t" "$out" "$secs") && continue
    log "$why: once more, alone, for $((3 * secs)) s"
    FUZZ_BUILD="$SF_BUILD/fuzz" FUZZ_SECONDS=$((3 * secs)) FUZZ_CORPUS="$WORK/corpus" SEEDS_QUICK=1 \
        SF="$SF" bash "$SF_SRC/fuzz/run.sh" "$t" >"$WORK/again.out" 2>&1 ||
        { cat "$WORK/again.out" >&2; fail "$t failed (see above)"; }
    cat "$WORK/again.out"
    why=$(check_line "$t" "$WORK/again.out" $((3 * secs))) || fail "$why"
done
log "fuzz smoke: ok"
