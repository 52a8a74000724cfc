#!/usr/bin/env bash
# log --poll without a kernel CAN stack (issue 27, polling; the kernel's side, a can-isotp
# responder, is t_vm_can's poll_* cases): the poll client on canpair:, whose peer is a
# model ECU written here from ISO 15765-2 (not from src/proto): it answers 01 0C, 22 F40C
# with single frames and 22 F190 (a VIN) with a first frame, then consecutive frames as the
# logger's flow control allows (block size, STmin). Checked: every request is a padded
# single frame on the asked id, the flow controls carry --poll-bs/--poll-stmin, each poll's
# counters (answers, multi-frame, timeouts for an ECU that is not there) in --json, and
# the log holds every frame the ECU sent. Then 29-bit addressing, --config's "poll" list,
# and the refusals at the start (exit 2, one line).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"

need_tool python3
need_sf
IMG=$FASTWORK/t.img
sf_ok mkfs -q -t exfat -s 64M "$IMG"

# run_ecu JSON_OUT SENT_OUT EXTRA_ARGS...: the ECU peer; writes what it sent (hex frames)
run_ecu() {
    python3 - "$SF" "$IMG" "$@" <<'PY'
import socket, struct, subprocess, sys, time
sf, img, out, sent_out = sys.argv[1:5]
extra = sys.argv[5:]
EFF = 0x80000000
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "--json", "--source", "canpair:%d" % b.fileno()] + extra +
                     [img], pass_fds=[b.fileno()], stdout=open(out, "w"),
                     stdin=subprocess.DEVNULL)
b.close()
sent = open(sent_out, "w")
VIN = b"WVWZZZ1JZXW000001"

def frame(cid, data):
    return struct.pack("<IB3x8s", cid, 8, data.ljust(8, b"\xaa"))

def send(cid, data):
    f = frame(cid, data)
    a.send(f)
    sent.write("%08x %s\n" % (cid, data.ljust(8, b"\xaa").hex()))

def answer_id(cid):
    if cid & EFF:
        i = cid & 0x1FFFFFFF
        ta = (i >> 8) & 0xFF
        if ta == 0x33:                          # functional 18DB33F1: ECU 0x10 answers
            ta = 0x10
        return EFF | 0x18DAF100 | ta, EFF | 0x18DA00F1 | ta << 8
    if cid in (0x7DF, 0x7E0):
        return 0x7E8, 0x7E0
    return None, None

pending = None          # [resp id, fc id, payload, offset, sn]
queue = []              # requests that came while an answer was under way
deadline = time.monotonic() + 1.2
a.settimeout(0.05)
requests = 0
while time.monotonic() < deadline:
    try:
        d = a.recv(128)
    except socket.timeout:
        continue
    assert d, "the logger closed the socket"
    cid, dlc = struct.unpack_from("<IB", d)
    data = d[8:8 + dlc]
    a.send(d)                                   # the bus shows every frame to everyone
    pci = data[0] >> 4
    resp, fcid = answer_id(cid)
    if pci == 0 and resp is not None:
        assert dlc == 8 and data[1 + data[0]:] == b"\xcc" * (7 - data[0]), data.hex()
        requests += 1
        queue.append((resp, fcid, data[1:1 + data[0]]))
    elif pci == 3 and pending and cid == pending[1]:
        assert data[0] == 0x30, data.hex()
        bs, stmin = data[1], data[2]
        print("FC %02x %02x" % (bs, stmin), file=sys.stderr)
        resp, _, msg, off, sn = pending
        n = 0
        while off < len(msg) and (bs == 0 or n < bs):
            send(resp, bytes([0x20 | sn]) + msg[off:off + 7])
            off += 7
            sn = (sn + 1) & 15
            n += 1
        pending = None if off >= len(msg) else [resp, pending[1], msg, off, sn]
    while queue and not pending:    # one answer at a time, as an ECU's ISO-TP layer
        resp, fcid, req = queue.pop(0)
        if req == b"\x22\xf1\x90" or req == b"\x09\x02":
            msg = bytes([req[0] + 0x40]) + req[1:] + (b"\x01" if req[0] == 9 else b"") + VIN
            send(resp, bytes([0x10 | len(msg) >> 8, len(msg) & 0xFF]) + msg[:6])
            pending = [resp, fcid, msg, 6, 1]
        elif req[0] in (0x01, 0x22):
            msg = bytes([req[0] + 0x40]) + req[1:] + b"\x1a\xf8"
            send(resp, bytes([len(msg)]) + msg)
p.send_signal(2)
rc = p.wait(timeout=60)
print("ECU: %d requests" % requests, file=sys.stderr)
sys.exit(rc)
PY
}

# 11-bit: a PID, a single-frame DID, the VIN in blocks of 1 (BS 1, STmin 2 ms), and a
# poll nobody answers
run_ecu "$WORK/a.json" "$WORK/a.sent" --poll 'obd:0C@100ms@pair0' \
    --poll 'uds:7E0/7E8:22F40C,F190@100ms@pair0' --poll 'uds:7E1/7E9:F190@200ms@pair0' \
    --poll-bs 1 --poll-stmin 2ms --poll-timeout 150ms 2>"$WORK/a.err" || { cat "$WORK/a.err" >&2; fail "the logger failed"; }
grep -q "^FC 01 02$" "$WORK/a.err" || { cat "$WORK/a.err" >&2; fail "no flow control BS 1 STmin 2"; }
python3 - "$WORK/a.json" <<'PY' || fail "the poll counters are wrong"
import json, sys
j = json.load(open(sys.argv[1]))
p = {x["poll"]: x for x in j["polls"]}
obd, uds, none = (p["obd:0C@100ms@pair0"], p["uds:7E0/7E8:22F40C,F190@100ms@pair0"],
                  p["uds:7E1/7E9:F190@200ms@pair0"])
print(obd, uds, none, sep="\n")
assert obd["requests"] >= 5 and obd["answers"] >= obd["requests"] - 2, obd
assert uds["requests"] >= 10 and uds["answers"] >= uds["requests"] - 2, uds
assert uds["multi_frame"] >= 4 and uds["flow_controls"] >= 2 * uds["multi_frame"], uds
assert uds["broken"] == 0 and uds["negative"] == 0, uds
assert none["requests"] >= 4 and none["timeouts"] >= none["requests"] - 1, none
assert none["answers"] == 0, none
PY
# the log holds every frame the ECU sent (as received frames)
sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/a.log"
python3 - "$WORK/a.sent" "$WORK/a.log" <<'PY' || fail "an answer frame is missing from the log"
import sys
sent = [l.split() for l in open(sys.argv[1])]
logged = {}
for l in open(sys.argv[2]):
    f = l.split()[2]
    i, d = f.split("#")
    logged[(int(i, 16), d.lower())] = logged.get((int(i, 16), d.lower()), 0) + 1
from collections import Counter
want = Counter((int(c, 16) & 0x1FFFFFFF, d) for c, d in sent)
for k, n in want.items():
    assert logged.get(k, 0) >= n, (hex(k[0]), k[1], n, logged.get(k, 0))
print("%d ECU frames, all logged" % len(sent))
PY

# 29-bit, from --config: 18DB33F1 functional, 18DA10F1 physical
printf '{"poll": ["obd:18DB33F1:0902@150ms@pair0", "uds:18DA10F1/18DAF110:F190@150ms@pair0"], "poll-bs": 0}\n' \
    >"$WORK/c.json"
run_ecu "$WORK/b.json" "$WORK/b.sent" --config "$WORK/c.json" 2>"$WORK/b.err" ||
    { cat "$WORK/b.err" >&2; fail "the logger failed (29-bit)"; }
python3 - "$WORK/b.json" <<'PY' || fail "the 29-bit poll counters are wrong"
import json, sys
j = json.load(open(sys.argv[1]))
for x in j["polls"]:
    print(x)
    assert x["requests"] >= 4 and x["multi_frame"] >= x["requests"] - 1, x
    assert x["broken"] == 0 and x["negative"] == 0, x
PY
grep -q "^FC 00 00$" "$WORK/b.err" || fail "no flow control BS 0 STmin 0"
"$SF" log --config "$WORK/c.json" --print-config --source can:pair0 "$IMG" >"$WORK/p.json"
grep -q '"obd:18DB33F1:0902@150ms@pair0"' "$WORK/p.json" || { cat "$WORK/p.json" >&2; fail "--print-config lost the polls"; }

# refusals at the start: exit 2, one line
refuse() {     # refuse WHAT ARGS...
    local what=$1
    shift
    sf_err 2 log "$@" "$IMG"
    grep -q -- "$what" "$SF_LAST_ERR" || { cat "$SF_LAST_ERR" >&2; fail "no '$what' in the message"; }
    (($(grep -c '^streamfat log:' "$SF_LAST_ERR") == 1)) ||
        { cat "$SF_LAST_ERR" >&2; fail "more than one line"; }
}
refuse "'can1' is not an interface of --source" --source can:can0 --poll 'obd:0C@1s@can1'
refuse "can0 is --listen-only" --source can:can0 --listen-only can0 --poll 'obd:0C@1s@can0'
refuse "--poll needs a can: source" --source gen:can --poll 'obd:0C@1s@can0'
refuse "obd: or uds: expected" --source can:can0 --poll 'kwp:0C@1s@can0'
refuse "not obd:PIDS@PERIOD@IFACE" --source can:can0 --poll 'obd:0C@1s'
refuse "a PID is 2 hex digits" --source can:can0 --poll 'obd:0CX@1s@can0'
refuse "a DID is 4 hex digits" --source can:can0 --poll 'uds:7E0/7E8:23F190@1s@can0'
refuse "the functional id is 7DF or 18DB33F1" --source can:can0 --poll 'obd:7E0:0C@1s@can0'
refuse "two different ids of one kind" --source can:can0 --poll 'uds:7E0/18DAF110:F190@1s@can0'
refuse "10 ms or more" --source can:can0 --poll 'obd:0C@1ms@can0'
refuse "more than 16 items" --source can:can0 --poll "obd:$(seq -s, 10 26)@1s@can0"
many=()
for i in $(seq 0 64); do many+=(--poll "uds:$(printf '%03X/%03X' $i $((i + 0x100))):F190@1s@can0"); done
refuse "more than 64 polls" --source can:can0 "${many[@]}"
refuse "--poll-bs must be" --source can:can0 --poll-bs 256
refuse "--poll-stmin must be" --source can:can0 --poll-stmin 200ms
refuse "--poll-timeout must be" --source can:can0 --poll-timeout 0
echo "t_log_poll: ok"
