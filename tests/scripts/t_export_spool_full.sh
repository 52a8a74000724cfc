#!/usr/bin/env bash
# Review of issue 26 item 5: MF4 into standard output that cannot seek (a pipe) is built in a
# temporary file in $TMPDIR. When that file cannot grow (TMPDIR full; here a file size limit,
# ulimit -f, which needs no root), export exits 1, writes nothing to the pipe and its one
# line names the temporary MF4 in TMPDIR: it said "standard output: write failed", and
# standard output (the pipe) was fine.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

sf_ok log --mkfs exfat --size 64M --source gen:can,rate=20000 --duration 0.5 v.img >/dev/null
sf_ok export -f mf4 --mf4-compress 0 -o ref.mf4 v.img LOG00001.SFL
(($(stat -c %s ref.mf4) > 64 * 1024)) || fail "the MF4 is too small for the test's limit"
mkdir tmpd
set +o pipefail
# the limit applies to files only: the pipe into cat is not limited, out (cat's) is opened
# before the limit
( trap '' XFSZ; ulimit -f 32
  TMPDIR=$WORK/tmpd exec timeout 120 "$SF" export -f mf4 --mf4-compress 0 v.img LOG00001.SFL 2>err ) | cat >out
rc=${PIPESTATUS[0]}
set -o pipefail
cat err >&2
has_sanitizer_report err && fail "sanitizer report"
((rc == 1)) || fail "TMPDIR full: exit $rc, expected 1"
[[ ! -s out ]] || fail "TMPDIR full: something was written to the pipe"
(($(wc -l <err) == 1)) || fail "TMPDIR full: not one line"
grep -q "the temporary MF4 in $WORK/tmpd: write failed: " err ||
    fail "TMPDIR full: the message does not name the temporary MF4 in TMPDIR"
grep -q "standard output" err && fail "TMPDIR full: blamed standard output"
[[ -z $(ls -A tmpd) ]] || fail "temporary MF4 left in TMPDIR"
log ok
