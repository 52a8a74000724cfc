#!/usr/bin/env bash
# The CAN reading loop's times and stop without a kernel CAN stack (issue 27; the same loop
# meets a real kernel in t_vm_can): canpair: on socketpair(AF_UNIX, SOCK_SEQPACKET), the
# logger stopped (SIGSTOP) while four groups of 50 frames arrive 300 ms apart, then
# SIGINT and SIGCONT together. Every frame is logged (what was queued before the stop is
# read before the log closes), and the times are the kernel's receive times
# (SO_TIMESTAMPNS), not the moment the stalled logger read them: the groups stay at least
# 250 ms apart, while the frames of a group are read within a few milliseconds.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"

need_tool python3
need_sf
IMG=$FASTWORK/t.img
sf_ok mkfs -q -t exfat -s 64M "$IMG"
python3 - "$SF" "$IMG" "$WORK/t.json" <<'PY'
import fcntl, os, signal, socket, struct, subprocess, sys, termios, time
sf, img, out = sys.argv[1:4]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "--json", "--source", "canpair:%d" % b.fileno(), img],
                     pass_fds=[b.fileno()], stdout=open(out, "w"), stdin=subprocess.DEVNULL)
b.close()
def frame(g, k):
    a.send(struct.pack("<IB3x8s", 0x100 + g, 8, struct.pack("<Q", g * 50 + k)))
# the logger runs (its signal handlers too) once it has read a first frame: the bytes the
# peer has not read yet (SIOCOUTQ) fall to 0
frame(0, 0)
deadline = time.monotonic() + 60
while fcntl.ioctl(a.fileno(), termios.TIOCOUTQ, b"\0\0\0\0") != b"\0\0\0\0":
    assert time.monotonic() < deadline and p.poll() is None, "the logger never read"
    time.sleep(0.01)
os.kill(p.pid, signal.SIGSTOP)
for g in range(4):
    if g:
        time.sleep(0.3)             # the spacing the logged times must keep
    for k in range(1 if g == 0 else 0, 50):
        a.send(struct.pack("<IB3x8s", 0x100 + g, 8, struct.pack("<Q", g * 50 + k)))
os.kill(p.pid, signal.SIGINT)
os.kill(p.pid, signal.SIGCONT)
rc = p.wait(timeout=60)
a.close()
sys.exit(rc)
PY
jcheck "$WORK/t.json" 'j["records_in"] == 200 and j["records_dropped"] == 0 and j["kernel_dropped"] == 0'
sf_ok export "$IMG" LOG00001.SFL >"$WORK/t.log"
python3 - "$WORK/t.log" <<'PY' || fail "logged times do not keep the frames' spacing"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert len(rows) == 200, len(rows)
ts = [float(r[0].strip("()")) for r in rows]
grp = [int(r[2].split("#")[0], 16) - 0x100 for r in rows]
assert grp == sorted(grp), "groups out of order"
for g in range(1, 4):
    first = grp.index(g)
    gap = ts[first] - ts[first - 1]
    print("gap before group %d: %.3f s" % (g, gap))
    assert gap >= 0.25, "group %d only %.3f s after the one before" % (g, gap)
PY
