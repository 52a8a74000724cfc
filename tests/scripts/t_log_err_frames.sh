#!/bin/bash
# Issue 15 item 7: one id rule for every CAN frame, error frames included (docs/FORMAT.md):
# an id (an error frame's error class) above 0x7FF carries EFF. The writer side: error
# frames from stdin candump lines and from the SocketCAN reading loop (canpair:, a
# socketpair) with classes 0x80 (no EFF) and 0x800, 0x1FFFFFFF (EFF), read back through
# export --format csv (its `extended` column is the stored EFF flag) and candump (the line
# as it came: CAN_ERR_FLAG | class, 8 digits). Before, classes above 0x7FF were stored
# without EFF, which the reader now refuses exactly as a data frame 0x800 without EFF
# (unit_rec test_err_frame_ids checks the reader).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool python3
have_export || skip "no export command"

IMG=$WORK/err.img
cat >"$WORK/in.log" <<'LINES'
(0000000001.000000) can0 20000080#0000000000000000
(0000000002.000000) can0 20000800#0102030405060708
(0000000003.000000) can0 3FFFFFFF#00
(0000000004.000000) can0 7FF#11
LINES
printf '%s\n' 0x80,0,1 0x800,1,1 0x1fffffff,1,1 0x7ff,0,0 >"$WORK/want.csv"

check() {   # LABEL CANDUMP_WANT
    sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/got.log"
    cmp -s "$2" "$WORK/got.log" || { diff "$2" "$WORK/got.log" >&2 || true; fail "$1: candump export differs"; }
    sf_ok export --format csv "$IMG" LOG00001.SFL >"$WORK/got.csv"
    # arbitration_id, extended, error
    awk -F, 'NR > 1 { print tolower($2) "," $3 "," $5 }' "$WORK/got.csv" >"$WORK/got.cols"
    cmp -s "$WORK/want.csv" "$WORK/got.cols" ||
        { diff "$WORK/want.csv" "$WORK/got.cols" >&2 || true; fail "$1: EFF not stored as the rule says"; }
}

log "stdin: error classes 0x80, 0x800, 0x1FFFFFFF"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
sf_ok log -q --source stdin "$IMG" <"$WORK/in.log"
check stdin "$WORK/in.log"

log "canpair: the same frames as SocketCAN datagrams"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
timeout 120 python3 - "$SF" "$IMG" <<'PY' || fail "canpair run failed"
import socket, struct, subprocess, sys
sf, img = sys.argv[1:3]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "-q", "--source", "canpair:%d" % b.fileno(), img],
                     pass_fds=[b.fileno()])
b.close()
ERR = 0x20000000
for cid, d in ((ERR | 0x80, bytes(8)), (ERR | 0x800, bytes(range(1, 9))),
               (ERR | 0x1FFFFFFF, b"\0"), (0x7FF, b"\x11")):
    a.send(struct.pack("<IB3x8s", cid, len(d), d))
a.close()
sys.exit(p.wait(timeout=60))
PY
# canpair stamps frames with the time of reception: compare the frames only
sf_ok export --format candump "$IMG" LOG00001.SFL | awk '{print $3}' >"$WORK/pair.got"
awk '{print $3}' "$WORK/in.log" | cmp -s - "$WORK/pair.got" || fail "canpair: frames differ"
sf_ok export --format csv "$IMG" LOG00001.SFL | awk -F, 'NR > 1 { print tolower($2) "," $3 "," $5 }' >"$WORK/got.cols"
cmp -s "$WORK/want.csv" "$WORK/got.cols" || { diff "$WORK/want.csv" "$WORK/got.cols" >&2 || true; fail "canpair: EFF not stored as the rule says"; }
