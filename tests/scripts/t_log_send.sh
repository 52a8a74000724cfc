#!/usr/bin/env bash
# log --send without a kernel CAN stack (issue 27, transmit; the kernel's side, the echo and
# its TX flag, is t_vm_can's send_* cases): the same sender on canpair:, whose peer reads
# what the logger sends. A periodic frame, a single-shot one after a delay and a CAN FD
# single-shot come out as given (struct can_frame / canfd_frame, flags and data), the
# single-shots exactly once, and the JSON statistics count what was sent. The peer echoes
# each frame back so the log has something to keep. Then every refusal at the start:
# an interface not logged, --send with --listen-only on it, a source that is not CAN, bad
# frames and periods, more entries than an interface takes; all exit 2 with one line. And
# --config's "send" list does what the options do.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"

need_tool python3
need_sf
IMG=$FASTWORK/t.img
sf_ok mkfs -q -t exfat -s 64M "$IMG"

run_pair() {   # run_pair JSON_OUT EXTRA_ARGS...: the peer's frames as hex lines on stdout
    python3 - "$SF" "$IMG" "$@" <<'PY'
import socket, subprocess, sys, time
sf, img, out = sys.argv[1:4]
extra = sys.argv[4:]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "--json", "--source", "canpair:%d" % b.fileno()] + extra +
                     [img], pass_fds=[b.fileno()], stdout=open(out, "w"),
                     stdin=subprocess.DEVNULL)
b.close()
a.settimeout(30)
n = 0
while n < 12:                   # 10 periodic frames and the two single-shots
    d = a.recv(128)
    assert d, "the logger closed the socket"
    print(d.hex())
    a.send(d)                   # echoed, as a bus would show it
    if d[0:2] == bytes.fromhex("2301"):
        n += 1
    elif d[0:2] in (bytes.fromhex("df07"), bytes.fromhex("10f1")):
        n += 1
p.send_signal(2)
rc = p.wait(timeout=60)
sys.exit(rc)
PY
}

run_pair "$WORK/a.json" --send '123#1122@20ms@pair0' --send '7DF#0201@+50ms@pair0' \
    --send "18DAF110##3$(printf '%024d' 0)@0@pair0" >"$WORK/a.hex" || fail "the logger failed"
python3 - "$WORK/a.hex" "$WORK/a.json" <<'PY' || fail "the frames sent are not the ones asked for"
import json, sys
rows = [bytes.fromhex(l.strip()) for l in open(sys.argv[1])]
per = [r for r in rows if r[:4] == bytes.fromhex("23010000")]
assert per and all(r == bytes.fromhex("230100000200000011220000" + "00" * 4) for r in per), per
obd = [r for r in rows if r[:4] == bytes.fromhex("df070000")]
assert obd == [bytes.fromhex("df07000002000000" + "0201" + "00" * 6)], obd
fd = [r for r in rows if r[:4] == bytes.fromhex("10f1da98")]    # EFF flag, 29-bit id
assert len(fd) == 1 and len(fd[0]) == 72 and fd[0][4] == 12 and fd[0][5] == 3, fd
j = json.load(open(sys.argv[2]))
assert j["frames_sent"] >= len(rows) and j["sends_failed"] == 0, j
print("sent %d periodic, 1 + 1 single-shot" % len(per))
PY

# the same from --config
printf '{"send": ["123#1122@20ms@pair0", "7DF#0201@+50ms@pair0", "18DAF110##3%024d@@pair0"]}\n' 0 \
    >"$WORK/c.json"
run_pair "$WORK/b.json" --config "$WORK/c.json" >"$WORK/b.hex" || fail "the logger failed (--config)"
grep -q '^df07000002000000' "$WORK/b.hex" || fail "--config send: no 7DF frame"
grep -q '^10f1da980c03' "$WORK/b.hex" || fail "--config send: no FD frame"

# on a trigger: '@on:can:ID/MASK[+DELAY]@' sends the frame once per received frame that
# matches, DELAY after it, and never at the start; a frame that does not match sends nothing
python3 - "$SF" "$IMG" "$WORK/t.json" <<'PY' || fail "--send on a trigger"
import socket, struct, subprocess, sys, time
sf, img, out = sys.argv[1:4]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "--json", "--source", "canpair:%d" % b.fileno(),
                      "--send", "7E0#0322F190@on:can:7E8/7FF+50ms@pair0",
                      "--send", "123#11@on:can:18DAF110@pair0", img],
                     pass_fds=[b.fileno()], stdout=open(out, "w"), stdin=subprocess.DEVNULL)
b.close()
a.settimeout(0.4)
def frame(cid, data):
    return struct.pack("<IB3x8s", cid, len(data), data.ljust(8, b"\0"))
def got(wait):
    try:
        d = a.recv(128)
    except socket.timeout:
        return None
    return struct.unpack_from("<I", d)[0], d[8:8 + d[4]], time.monotonic() - wait
r = got(0)
assert r is None, "sent at the start: %r" % (r,)
for k in range(3):
    a.send(frame(0x7E8, b"\x10\x14\x62\xf1\x90AAA"))
    t0 = time.monotonic()
    r = got(t0)
    assert r and r[0] == 0x7E0 and r[1] == bytes.fromhex("0322f190"), r
    assert r[2] >= 0.049, "sent %.4f s after the trigger, not 50 ms" % r[2]
    a.send(frame(0x7E9, b"\x01"))           # 7E9 & 7FF != 7E8: nothing
    assert got(0) is None
a.send(frame(0x18DAF110 | 0x80000000, b"\x01"))
r = got(time.monotonic())
assert r and r[0] == 0x123 and r[1] == b"\x11", r
p.send_signal(2)
assert p.wait(timeout=60) == 0
PY
grep -q '"frames_sent": 4' "$WORK/t.json" || { cat "$WORK/t.json" >&2; fail "--send on a trigger: frames_sent"; }

# refusals at the start: exit 2, one line, nothing sent
refuse() {     # refuse WHAT ARGS...
    local what=$1
    shift
    sf_err 2 log "$@" "$IMG"
    grep -q -- "$what" "$SF_LAST_ERR" || { cat "$SF_LAST_ERR" >&2; fail "no '$what' in the message"; }
    (($(grep -c '^streamfat log:' "$SF_LAST_ERR") == 1)) ||
        { cat "$SF_LAST_ERR" >&2; fail "more than one line"; }
}
refuse "'can1' is not an interface of --source" --source can:can0 --send '123#11@10ms@can1'
refuse "can0 is --listen-only" --source can:can0 --listen-only can0 --send '123#11@10ms@can0'
refuse "--listen-only can3: not an interface" --source can:can0,can1 --listen-only can3
refuse "--send needs a can: source" --source gen:can --send '123#11@10ms@can0'
refuse "no channel" --source can:can0 --send '123#11'
refuse "the frame is not" --source can:can0 --send '123@10ms@can0'
refuse "not valid candump" --source can:can0 --send '123#1@10ms@can0'
refuse "error frames are not sent" --source can:can0 --send '20000004#0000000000000000@1s@can0'
refuse "period 'fast'" --source can:can0 --send '123#11@fast@can0'
refuse "delay" --source can:can0 --send '123#11@1s+x@can0'
refuse "below 100 us" --source can:can0 --send '123#11@1us@can0'
refuse "expected on:can:ID/MASK" --source can:can0 --send '123#11@on:latency>1ms@can0'
refuse "expected on:can:ID/MASK" --source can:can0 --send '123#11@on:can:XYZ@can0'
many=()
for i in $(seq 0 256); do many+=(--send "$(printf '%X' "$i")#00@1s@can0"); done
refuse "more than 256 frames on can0" --source can:can0 "${many[@]}"
many=("${many[@]:0:512}")     # 256: taken (the start then fails on the missing can0)
sf_err 1 log --source can:can0 "${many[@]}" "$IMG"
grep -q "^streamfat log: can:can0: " "$SF_LAST_ERR" && ! grep -q -- "--send" "$SF_LAST_ERR" ||
    fail "256 entries on one interface refused"
