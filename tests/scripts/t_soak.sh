#!/bin/bash
# 20 s of cyclic logging with rotation on a RAM exFAT volume (tests/helpers/soak.c):
# memory, descriptors and the CPU time per file must not grow. `make soak` runs the same
# for SOAK_SECONDS (default an hour); SF_LONG=1 here: ten minutes. (20 s under ASan: some
# 8,000 files, about 7,000 of them deleted cyclically; the 2 s windows compared hold ~800
# files each.)
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
secs=20
[[ ${SF_LONG:-0} == 1 ]] && secs=600
out=$WORK/soak.out
rc=0
timeout $((secs + 120)) "$SF_TESTS_BIN/soak" "$secs" >"$out" 2>"$WORK/err" || rc=$?
cat "$out" "$WORK/err" >&2
has_sanitizer_report "$WORK/err" && fail "sanitizer report"
((rc == 0)) || fail "soak: exit $rc"
grep -q 'deleted=[1-9]' "$out" || fail "soak: no cyclic deletion"
