#!/usr/bin/env bash
# The logger's ring under ThreadSanitizer: the library and the logger unit test built with
# -fsanitize=thread in a temporary directory, then test_log run (four producer threads
# appending while a writer thread services; every record present once, in per-producer
# order). Any data race report fails the test.
set -euo pipefail

src=${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! cmake -S "$src" -B "$tmp/b" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
        -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >"$tmp/build.log" 2>&1 ||
   ! cmake --build "$tmp/b" -j 2 --target test_log >>"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    echo "FAIL: ThreadSanitizer build of test_log"
    exit 1
fi
bin=$(find "$tmp/b" -name test_log -type f -perm -u+x | head -n 1)
[[ -n $bin ]] || { echo "FAIL: test_log not built"; exit 1; }
# ASLR with high entropy breaks older TSan runtimes ("unexpected memory mapping"): run
# without randomisation when setarch can do that.
run=("$bin")
command -v setarch >/dev/null 2>&1 && run=(setarch "$(uname -m)" -R "$bin")
if ! TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "${run[@]}" >"$tmp/run.log" 2>&1; then
    tail -n 60 "$tmp/run.log"
    echo "FAIL: test_log under ThreadSanitizer"
    exit 1
fi
if grep -q "WARNING: ThreadSanitizer" "$tmp/run.log"; then
    grep -A 30 "WARNING: ThreadSanitizer" "$tmp/run.log" | head -n 60
    echo "FAIL: ThreadSanitizer report"
    exit 1
fi
tail -n 3 "$tmp/run.log"
echo "PASS t_log_tsan"
