#!/usr/bin/env bash
# Issue 18: "a bigger cache never costs more instructions or device reads than a smaller
# one". bench/fs_cost.sh's check mode (FS_COST_CHECK=1) writes the table's rows and the
# 16-byte appends with a 32 KiB and a 2 MiB metadata cache under callgrind (deterministic
# instruction counts, the RAM device's own cost taken out) and fails when the bigger cache
# costs more file-system instructions or more device reads; it also fails when a row gives
# no measurement. It needs a build without sanitizers (valgrind), made here into $WORK.
# make check: the FAT32 4K row (where the read-ahead and the bulk FAT writer once made the
# 2 MiB cache dearer) and the appends, 8 MiB per row; SF_LONG=1: every row, 16 MiB.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_tool valgrind callgrind_annotate cmake

if [[ ${SF_LONG:-0} == 1 ]]; then
    rows="" total=16M appends=16000000
else
    rows="4K append" total=8M appends=1600000
fi
log "building bench/fs_cost without sanitizers"
cmake -S "$SF_SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release </dev/null >"$WORK/cmake.log" 2>&1 ||
    { tail -20 "$WORK/cmake.log"; fail "cmake configure failed"; }
out=$(SF_BUILD=$WORK/build FS_COST_CHECK=1 FS_COST_ROWS="$rows" FS_COST_TOTAL=$total \
      FS_COST_APPEND_TOTAL=$appends timeout 1200 bash "$SF_SRC/bench/fs_cost.sh" </dev/null 2>&1) &&
    rc=0 || rc=$?
echo "$out"
n=$(grep -c '^| .* | \(ok\|BIGGER\|NO MEAS\)' <<<"$out" || true)
[[ $rc == 0 ]] || fail "bench/fs_cost.sh FS_COST_CHECK=1 exited $rc: a bigger cache costs more (table above)"
# 4K: the FAT32 4K row, both APIs; append: the two append rows
want=4; [[ ${SF_LONG:-0} == 1 ]] && want=16
((n == want)) || fail "expected $want checked rows, got $n"
