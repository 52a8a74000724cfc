#!/usr/bin/env bash
# The direction of a frame (CAN flag bit 6, TX: the logger sent it; docs/FORMAT.md) through
# every exporter and back through the importers (issue 27, transmit). tests/helpers/mklog
# sets TX on a classic, a remote and a CAN FD frame. export -f asc writes Tx on exactly
# those lines (Rx on the others), BLF sets the CAN message's direction flag, MF4 the
# CAN_DataFrame / CAN_RemoteFrame Dir; `log --source file:` on each gives back TX on the
# same three frames and on no other. candump and csv have no direction field: their lines
# are the same with or without the bit (python-can's comparison of the other fields is
# t_export_formats / export_check.py, which also compares is_rx for asc and blf).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool python3
need_sf
FRAMES=$(helper log_frames)
LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 20
"$FRAMES" "$LOGF" >"$WORK/ref"
# the three TX frames of mklog, as log_frames prints id and flags
tx_of() {
    python3 -c 'import sys
print(" ".join(sorted(w[3] for w in map(str.split, open(sys.argv[1]))
                      if w[0] == "can" and int(w[4], 16) & 0x40)))' "$1"
}
want=$(tx_of "$WORK/ref")
[[ $want == "1abcdef0 321 abc" ]] || fail "mklog's TX frames: '$want'"

sf_ok export -f asc -o "$WORK/o.asc" "$LOGF"
[[ $(grep -c ' Tx ' "$WORK/o.asc") == 3 ]] || { cat "$WORK/o.asc" >&2; fail "asc: not 3 Tx lines"; }
grep -q '1ABCDEF0x       Tx   d 8' "$WORK/o.asc" || fail "asc: the classic TX frame"
grep -q '00000ABCx       Tx   r 5' "$WORK/o.asc" || fail "asc: the remote TX frame"
grep -q 'CANFD   1 Tx   321       1 0 9 12 ' "$WORK/o.asc" || fail "asc: the FD TX frame"
sf_ok export -f blf -o "$WORK/o.blf" "$LOGF"
sf_ok export -f mf4 -o "$WORK/o.mf4" "$LOGF"
for f in asc blf mf4; do
    IMG=$WORK/$f.img
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    sf_ok log --fast --source "file:$WORK/o.$f" "$IMG"
    sf_ok get "$IMG" LOG00001.SFL "$WORK/$f.sfl"
    "$FRAMES" "$WORK/$f.sfl" >"$WORK/$f.ref"
    got=$(tx_of "$WORK/$f.ref")
    [[ $got == "$want" ]] || fail "$f: imported TX frames '$got', expected '$want'"
done
# candump and csv: no direction field, the lines do not change with it
sf_ok export -f candump -o "$WORK/o.log" "$LOGF"
grep -q ') can0 1ABCDEF0#DEADBEEF00010203$' "$WORK/o.log" ||
    fail "candump: the TX frame's line changed"
