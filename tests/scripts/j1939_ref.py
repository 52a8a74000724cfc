#!/usr/bin/env python3
"""J1939 transport reassembly (src/proto/j1939.c, through tests/helpers/proto_feed) against
can-j1939 2.0.12's transport layer (j1939.j1939_21), a stack we did not write
(t_proto_j1939_ref).

    j1939_ref.py PROTO_FEED WORKDIR

Two of its J1939_21 instances on one simulated bus: the sender at 0xF9 sends BAMs (to the
global address) and RTS/CTS transfers to 0x21, whose receiver answers with CTS windows of
1, 3 and 16 packets (its max_cmdt_packets) and EndOfMsgAck. Its sender's clock is driven
past each deadline (its timers read time.time(); the frames carry our own times, 1 ms
apart). Every frame on the bus, both directions, goes to our reassembly: the messages must
be the payloads sent, which are also what its receiver delivered, with the PGN, source and
destination. Its receiver ignores TP.DT sequence numbers (a repeated or missing packet
shifts the data without an error), so damaged streams are checked against our model
(unit_proto_random) and not against it."""
import logging
import subprocess
import sys
import time

from j1939.j1939_21 import J1939_21

logging.disable(logging.CRITICAL)
FEED, WORK = sys.argv[1], sys.argv[2]


def run(window, sizes, dest):
    bus, got = [], []
    stacks = {}

    def make(addr):
        def send(can_id, extended, data):
            bus.append((can_id, bytes(data)))
            for other, st in stacks.items():
                if other != addr:
                    st.notify(can_id, bytearray(data), 0.0)

        def subs(prio, pgn, sa, da, ts, data):
            if addr == 0x21 or da == 0xFF:
                got.append((pgn, sa, da, bytes(data)))
        return J1939_21(send, lambda: None, subs, window, None, None,
                        lambda da, a=addr: da == a)

    stacks[0xF9] = make(0xF9)
    stacks[0x21] = make(0x21)
    sender = stacks[0xF9]
    sent = []
    for i, size in enumerate(sizes):
        data = bytearray((k * 13 + size + i) & 0xFF for k in range(size))
        pf, ps = (0xFE, 0xE0 + i % 16) if dest == 0xFF else (0xD9, dest)
        if not sender.send_pgn(0, pf, ps, 6, 0xF9, bytearray(data), 0, None):
            raise SystemExit("j1939_ref: send_pgn refused")
        pgn = (pf << 8 | ps) if dest == 0xFF else pf << 8
        sent.append((pgn, 0xF9, dest, bytes(data)))
        for _ in range(1000):
            if not sender._snd_buffer:
                break
            sender.async_job_thread(time.time() + 1000.0)
        else:
            raise SystemExit("j1939_ref: transfer did not finish")
    return bus, sent, got


def ours(bus):
    path = "%s/j1939.txt" % WORK
    with open(path, "w") as fh:
        for i, (cid, data) in enumerate(bus):
            fh.write("%d %x 1 %s\n" % (i * 1000000, cid, data.hex()))
    with open(path) as fh:
        out = subprocess.run([FEED], stdin=fh, capture_output=True, text=True, timeout=120)
    if out.returncode:
        raise SystemExit("j1939_ref: proto_feed failed: " + out.stderr)
    msgs = []
    for line in out.stdout.splitlines():
        w = line.split()
        if w[0] == "msg":
            msgs.append((w[1], w[2], int(w[8], 16), int(w[9], 16), int(w[10], 16),
                         bytes.fromhex(w[7]) if w[7] != "-" else b""))
    return msgs


failures = 0
SIZES = [9, 10, 14, 15, 20, 100, 255, 1000, 1785]
for window in (1, 3, 16):
    for dest in (0xFF, 0x21):
        bus, sent, got = run(window, SIZES, dest)
        mine = ours(bus)
        what = "%s window %d" % ("BAM" if dest == 0xFF else "RTS/CTS", window)
        if [m[3] for m in got] != [s[3] for s in sent]:
            raise SystemExit("j1939_ref: %s: can-j1939 disagrees with itself" % what)
        if mine != [("j1939", "ok") + s for s in sent]:
            failures += 1
            print("j1939_ref: %s: ours %s, sent %s" % (what, [m[:5] + (len(m[5]),) for m in mine],
                                                     [s[:3] + (len(s[3]),) for s in sent]),
                  file=sys.stderr)
        else:
            print("j1939_ref: %s: %d messages as sent, %d frames" % (what, len(sent), len(bus)))
sys.exit(1 if failures else 0)
