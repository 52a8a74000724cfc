#!/usr/bin/env bash
# No script that runs under pipefail ends a pipeline in `grep -q`.
#
# grep -q exits at its first match; a writer that has more to say then dies of SIGPIPE,
# and under `set -o pipefail` the pipeline fails although the text matched. Whether the
# writer is still writing depends on timing: `nm streamfat | grep -q io_uring_queue_init`
# passed here and failed in CI (t_configure_redetect). Such pipelines use lib.sh's
# `matches`, which reads all of its input. Scanned: every shell script of the project
# (tests, scripts, bench, fuzz, examples, tests/vm, .ci) that sets pipefail.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_tool python3

cd "$SF_SRC"
mapfile -t files < <(git ls-files '*.sh' .ci/run 2>/dev/null || true)
((${#files[@]})) || mapfile -t files < <(find . -path ./build\* -prune -o \( -name '*.sh' -o -path ./.ci/run \) -print)
((${#files[@]} > 50)) || fail "found only ${#files[@]} scripts: the file list is broken"

scan() {
    python3 - "$@" <<'PY'
import re, sys
# a single | (not ||), then grep with a flag cluster holding q (-q, -qE, -Eq, -vqE ...)
pat = re.compile(r'(?<!\|)\|(?!\|)\s*grep\s+(?:-[A-Za-z]*\s+)*-[A-Za-z]*q')
bad = 0
for path in sys.argv[1:]:
    text = open(path, encoding='utf-8', errors='replace').read()
    if 'pipefail' not in text:
        continue
    for n, line in enumerate(text.split('\n'), 1):
        code = re.sub(r'(^|\s)#.*', '', line)
        if pat.search(code):
            print(f'{path}:{n}: {line.strip()}')
            bad += 1
sys.exit(1 if bad else 0)
PY
}

# the scan finds what it is for (a test that cannot fail is a defect)
# (the bad lines are built with printf, so that this file passes its own scan)
printf 'set -o pipefail\nnm x | grep -%s sym || exit 1\ny | grep -E -%s z\n' q q >"$WORK/bad.sh"
cat >"$WORK/good.sh" <<'SH'
set -o pipefail
nm x | matches sym || exit 1
grep -q sym file || true   # not a pipeline
a || grep -q b c           # || is not a pipe
SH
out=$(scan "$WORK/bad.sh") && fail "the scan passed a pipeline ending in grep -q"
[[ $(wc -l <<<"$out") == 2 ]] || fail "the scan found $(wc -l <<<"$out") of 2 lines: $out"
scan "$WORK/good.sh" >/dev/null || fail "the scan flagged a script without such a pipeline"

log "scanning ${#files[@]} scripts"
if ! out=$(scan "${files[@]}"); then
    echo "$out" >&2
    fail "a pipeline ends in grep -q under pipefail: use lib.sh's matches (reads all input)"
fi
