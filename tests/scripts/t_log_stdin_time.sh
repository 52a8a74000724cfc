#!/bin/bash
# Issue 15 item 6: stdin keeps the time a candump line gives and refuses what does not fit,
# counted as bad input and reported with its line number:
# - "(0.000000)" stays 0 (it was replaced by the host's clock);
# - a time past 2^64 - 1 ns, "(18446744074.000000)", is refused (it wrapped to 0.29 s);
# - issue 26 item 7: so is a time at or past 2^63 ns, "(18446744073.709551)" and
#   "(9223372036.854776)" (Python read them as negative times); "(9223372036.854775)",
#   the last microsecond below 2^63 ns, is kept, and every reader shows it as it is;
# - a line earlier than the previous line of the same interface is refused (docs/FORMAT.md:
#   a channel's records are in non-decreasing time order); another interface may be earlier.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3
have_export || skip "no export command"

IMG=$WORK/time.img
cat >"$WORK/in.log" <<'LINES'
(0.000000) can0 100#00
(18446744074.000000) can0 101#01
(5.000000) can0 102#02
(4.999999) can0 103#03
(4.500000) can1 104#04
(5.000000) can0 105#05
(99999999999999999999.0) can1 106#06
(18446744073.709551) can1 107#07
(9223372036.854776) can1 108#08
(9223372036.854775) can1 109#09
LINES
cat >"$WORK/want.log" <<'LINES'
(0000000000.000000) can0 100#00
(0000000005.000000) can0 102#02
(0000000004.500000) can1 104#04
(0000000005.000000) can0 105#05
(9223372036.854775) can1 109#09
LINES
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/run.json" --source stdin "$IMG" <"$WORK/in.log" 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "stdin run failed"; }
cat "$WORK/err" >&2
# 5 frames and the CHANNEL records naming can0 and can1 (records_offered == records_in)
jcheck "$WORK/run.json" 'j["bad_input"] == 5 and j["records_offered"] == 7 and j["records_in"] == 7'
grep -q "stdin line 2: timestamp out of range" "$WORK/err" || fail "line 2 not reported as out of range"
grep -q "stdin line 4: timestamp earlier than the previous line's" "$WORK/err" || fail "line 4 not reported as out of order"
grep -q "stdin line 7: timestamp out of range" "$WORK/err" || fail "line 7 not reported as out of range"
grep -q "stdin line 8: timestamp out of range (at or after 2^63 ns" "$WORK/err" || fail "line 8 (2^64 - 1 ns) not refused"
grep -q "stdin line 9: timestamp out of range (at or after 2^63 ns" "$WORK/err" || fail "line 9 (2^63 ns) not refused"
sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/got.log"
sort "$WORK/want.log" >"$WORK/want.sorted"
sort "$WORK/got.log" >"$WORK/got.sorted"
cmp -s "$WORK/want.sorted" "$WORK/got.sorted" ||
    { diff "$WORK/want.sorted" "$WORK/got.sorted" >&2 || true; fail "the logged frames are not the lines that fit, with their times"; }
