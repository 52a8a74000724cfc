#!/bin/bash
# Issue 15 item 5: a record's channel is a u8, so a log carries up to 256 interfaces. From
# stdin, 300 interfaces: exactly the lines of the first 256 are logged, the 257th interface
# ends the run with one line naming it and exit status 1 (interfaces 64 and up were merged
# into channel 0 with exit 0 before). 256 interfaces: all 256 distinct names come back
# from the export, each on its own frames. A candump file: replay with 257 interfaces is
# refused the same way.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3
have_export || skip "no export command"

IMG=$WORK/many.img
gen() {   # OUT N: interface i on line i
    python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    for i in range(int(sys.argv[2])):
        f.write('(1700000000.%06d) if%d %03X#00\n' % (i, i, i))" "$1" "$2"
}

log "300 interfaces on stdin: 256 logged, then one line and exit 1"
gen "$WORK/in300.log" 300
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
rc=0; sf log -q --source stdin "$IMG" <"$WORK/in300.log" || rc=$?
((rc == 1)) || fail "300 interfaces: exit status $rc, expected 1"
[[ $(wc -l <"$SF_LAST_ERR") -eq 1 ]] || { cat "$SF_LAST_ERR" >&2; fail "expected exactly one line on stderr"; }
grep -q "line 257: more than 256 interfaces ('if256')" "$SF_LAST_ERR" || fail "the message does not name line 257 and if256"
sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/got300.log"
head -n 256 "$WORK/in300.log" >"$WORK/want256.log"
cmp -s "$WORK/want256.log" "$WORK/got300.log" || { diff "$WORK/want256.log" "$WORK/got300.log" >"$WORK/d" || true; head -5 "$WORK/d" >&2; fail "300 interfaces: the export is not the first 256 lines"; }

log "256 interfaces on stdin: all 256 names round-trip"
gen "$WORK/in256.log" 256
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source stdin "$IMG" <"$WORK/in256.log"
sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/got256.log"
cmp -s "$WORK/want256.log" "$WORK/got256.log" || { diff "$WORK/want256.log" "$WORK/got256.log" >"$WORK/d" || true; head -5 "$WORK/d" >&2; fail "256 interfaces: the export differs from the input"; }
n=$(awk '{print $2}' "$WORK/got256.log" | sort -u | wc -l)
((n == 256)) || fail "256 interfaces: $n distinct names in the export"

log "file: replay with 257 interfaces: refused with one line, exit 1"
gen "$WORK/in257.log" 257
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
rc=0; sf log -q --source "file:$WORK/in257.log" --fast "$IMG" || rc=$?
((rc == 1)) || fail "file: 257 interfaces: exit status $rc, expected 1"
grep -q "more than 256 interfaces ('if256')" "$SF_LAST_ERR" || fail "file: the message does not name if256"
