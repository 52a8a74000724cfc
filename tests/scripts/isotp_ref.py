#!/usr/bin/env python3
"""ISO-TP reassembly (src/proto/isotp.c, through tests/helpers/proto_feed) against can-isotp
2.0.7, a stack we did not write (t_proto_isotp_ref).

    isotp_ref.py PROTO_FEED WORKDIR

1. Its sender makes the frames: every addressing mode (normal 11- and 29-bit, normal fixed,
   extended and mixed on 11 and 29 bits), classic CAN and CAN FD, with and without padding,
   block sizes with STmin (so flow control comes in between), lengths from 1 byte to past
   the 4,095-byte escape; its receiver answers with flow control. We reassemble the logged
   frames (both directions): the payloads must be what was sent, nothing broken.
2. Seeded damage (frames dropped, repeated, swapped, a cut start, sessions of several
   addresses interleaved, a first frame before the last message finished): the same frames
   go to one can-isotp receiver per address (listen mode) and to ours. The payloads received
   whole must be the same, in order, and the verdicts agree: its WrongSequenceNumberError
   count is our wrong_sn + dup_cf, UnexpectedConsecutiveFrameError our orphan_cf,
   ReceptionInterrupted* our replaced.
3. Timeouts: its timers read time.perf_counter_ns, not the frames' times, so these cases
   are checked against the standard's rule instead (ISO 15765-2 N_Cr, 1000 ms): a CF 1000 ms
   after the previous frame is in time, one 1001 ms after it ends the message as a timeout
   with the bytes before it, and the CFs after it are orphans.
Exit 0 when all agree, 1 with the differences on stderr."""
import random
import subprocess
import sys
from collections import deque

import logging

import isotp

logging.disable(logging.CRITICAL)   # its warnings for every damaged frame

FEED, WORK = sys.argv[1], sys.argv[2]
AM = isotp.AddressingMode
failures = []


def fail(msg):
    failures.append(msg)
    print("isotp_ref: " + msg, file=sys.stderr)


# (name, sender address, receiver address, proto_feed arguments)
def addresses():
    A = isotp.Address
    return [
        ("normal11-obd", A(AM.Normal_11bits, txid=0x7E0, rxid=0x7E8),
         A(AM.Normal_11bits, txid=0x7E8, rxid=0x7E0), []),
        ("normal11-pair", A(AM.Normal_11bits, txid=0x123, rxid=0x456),
         A(AM.Normal_11bits, txid=0x456, rxid=0x123), ["--pair", "123,456,0,0"]),
        ("normal29-pair", A(AM.Normal_29bits, txid=0x1234567, rxid=0x1234568),
         A(AM.Normal_29bits, txid=0x1234568, rxid=0x1234567), ["--pair", "1234567,1234568,1,0"]),
        ("normalfixed29", A(AM.NormalFixed_29bits, target_address=0x10, source_address=0xF1),
         A(AM.NormalFixed_29bits, target_address=0xF1, source_address=0x10), []),
        ("extended11", A(AM.Extended_11bits, txid=0x6F1, rxid=0x612, target_address=0x12,
                         source_address=0xF1),
         A(AM.Extended_11bits, txid=0x612, rxid=0x6F1, target_address=0xF1,
           source_address=0x12), ["--pair", "6f1,612,0,1"]),
        ("extended29", A(AM.Extended_29bits, txid=0x18FFAA01, rxid=0x18FFAA02,
                         target_address=0x33, source_address=0x44),
         A(AM.Extended_29bits, txid=0x18FFAA02, rxid=0x18FFAA01, target_address=0x44,
           source_address=0x33), ["--pair", "18ffaa01,18ffaa02,1,1"]),
        ("mixed11", A(AM.Mixed_11bits, txid=0x700, rxid=0x701, address_extension=0x99),
         A(AM.Mixed_11bits, txid=0x701, rxid=0x700, address_extension=0x99),
         ["--pair", "700,701,0,2"]),
        ("mixed29", A(AM.Mixed_29bits, target_address=0x10, source_address=0xF1,
                      address_extension=0x55),
         A(AM.Mixed_29bits, target_address=0xF1, source_address=0x10,
           address_extension=0x55), ["--pair", "18ce10f1,18cef110,1,2"]),
    ]


def params(fd, pad, bs=0, stmin=0, listen=False):
    p = {"max_frame_size": 1 << 20, "blocksize": bs, "stmin": stmin,
         "rx_consecutive_frame_timeout": 60000, "rx_flowcontrol_timeout": 60000}
    if fd:
        p.update(can_fd=True, tx_data_length=64)
    if pad is not None:
        p["tx_padding"] = pad
    if listen:
        p["listen_mode"] = True
    return p


def transfer(tx_addr, rx_addr, payload, fd, pad, bs, stmin):
    """The frames on the bus, both directions, while the sender sends payload."""
    bus, to_a, to_b = [], deque(), deque()

    def tx_a(m):
        bus.append(m)
        to_b.append(m)

    def tx_b(m):
        bus.append(m)
        to_a.append(m)

    a = isotp.TransportLayerLogic(rxfn=lambda t: to_a.popleft() if to_a else None,
                                  txfn=tx_a, address=tx_addr,
                                  params=params(fd, pad, bs, stmin))
    b = isotp.TransportLayerLogic(rxfn=lambda t: to_b.popleft() if to_b else None,
                                  txfn=tx_b, address=rx_addr,
                                  params=params(fd, pad, bs, stmin))
    a.send(payload)
    for _ in range(200000):
        a.process()
        b.process()
        if b.available():
            got = b.recv()
            if bytes(got) != payload:
                raise SystemExit("isotp_ref: can-isotp's own receiver disagrees with its sender")
            return bus
    raise SystemExit("isotp_ref: can-isotp transfer did not finish")


def flags(m):
    return (0x01 if m.is_extended_id else 0) | (0x08 if m.is_fd else 0) | \
        (0x10 if m.is_fd and m.bitrate_switch else 0)


def ours(frames, args, times=None):
    """proto_feed over frames: (OK payloads in order, every message, stats)."""
    lines = []
    for i, m in enumerate(frames):
        ts = times[i] if times else i * 1000000
        lines.append("%d %x %x %s" % (ts, m.arbitration_id, flags(m),
                                      bytes(m.data).hex() or "-"))
    path = "%s/frames.txt" % WORK
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(path) as fh:
        out = subprocess.run([FEED] + args, stdin=fh, capture_output=True, text=True,
                             timeout=120)
    if out.returncode:
        raise SystemExit("isotp_ref: proto_feed failed: " + out.stderr)
    msgs, stats = [], {}
    for line in out.stdout.splitlines():
        w = line.split()
        if w[0] == "msg":
            msgs.append((w[2], int(w[5]), bytes.fromhex(w[7]) if w[7] != "-" else b""))
        elif w[0] == "stats":
            stats = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
    return [p for s, n, p in msgs if s == "ok"], msgs, stats


def theirs(frames, receivers):
    """can-isotp receivers (listen mode) over the same frames: OK payloads, error names."""
    errors, got = [], []
    stacks = []
    for rx_addr in receivers:
        q = deque()
        st = isotp.TransportLayerLogic(rxfn=lambda t, q=q: q.popleft() if q else None,
                                       txfn=lambda m: None, address=rx_addr,
                                       error_handler=lambda e: errors.append(type(e).__name__),
                                       params=params(False, None, listen=True))
        stacks.append((st, q))
    for m in frames:
        for st, q in stacks:
            q.append(m)
            st.process()
            while st.available():
                got.append(bytes(st.recv()))
    return got, errors


SIZES = [1, 5, 6, 7, 8, 20, 61, 62, 63, 64, 100, 1000, 4095, 4096, 5000]


def part1():
    n = 0
    for name, txa, rxa, args in addresses():
        frames, sent, what = [], [], []
        for fd in (False, True):
            for pad in (None, 0xCC):
                for bs, stmin in ((0, 0), (4, 1)):
                    for size in SIZES:
                        if stmin and size not in (20, 100):
                            continue      # real sleeps between frames: keep it short
                        payload = bytes((i * 7 + size) & 0xFF for i in range(size))
                        frames += transfer(txa, rxa, payload, fd, pad, bs, stmin)
                        sent.append(payload)
                        what.append("fd=%s pad=%s bs=%d size=%d" % (fd, pad, bs, size))
        # one log per addressing: the transfers one after the other, 1 ms apart
        ok, msgs, st = ours(frames, args)
        n += len(sent)
        if ok != sent or len(msgs) != len(sent):
            for i, p in enumerate(sent):
                if p not in ok:
                    fail("%s %s: not reassembled" % (name, what[i]))
            fail("%s: %d messages, %d whole, %d sent" % (name, len(msgs), len(ok), len(sent)))
        elif st["bad_pci"] or st["orphan_cf"] or st["broken"]:
            fail("%s: damage counted: %s" % (name, st))
    print("isotp_ref: %d transfers from can-isotp's sender reassembled" % n)


def part2(seeds):
    addrs = addresses()
    rng_sizes = [3, 7, 30, 62, 100, 300, 4200]
    n_ok = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        picked = rng.sample(addrs, rng.randint(1, 3))
        streams, args, receivers = [], [], []
        for name, txa, rxa, a in picked:
            frames = []
            for _ in range(rng.randint(1, 3)):
                size = rng.choice(rng_sizes)
                payload = bytes(rng.randrange(256) for _ in range(size))
                bus = transfer(txa, rxa, payload, False, rng.choice((None, 0)), 0, 0)
                # the sender's frames only: a listening receiver ignores the FCs anyway
                frames += [m for m in bus if txa.is_for_me(m) is False and
                           m.arbitration_id == bus[0].arbitration_id]
            # damage
            for _ in range(rng.randint(0, 3)):
                if len(frames) < 2:
                    break
                k = rng.randrange(1, len(frames))
                how = rng.choice(("drop", "repeat", "swap", "ff"))
                if how == "drop":
                    del frames[k]
                elif how == "repeat":
                    frames.insert(k, frames[k])
                elif how == "swap" and k + 1 < len(frames):
                    frames[k], frames[k + 1] = frames[k + 1], frames[k]
                elif how == "ff":
                    frames.insert(k, frames[0])
            if rng.random() < 0.3:
                frames = frames[rng.randrange(len(frames)):]
            streams.append(frames)
            args += a
            receivers.append(rxa)
        merged = []
        while any(streams):
            s = rng.choice([s for s in streams if s])
            merged.append(s.pop(0))
        ok, msgs, st = ours(merged, args)
        got, errors = theirs(merged, receivers)
        # can-isotp hands out per receiver; compare per payload order within each address
        if sorted(ok) != sorted(got):
            fail("seed %d: whole payloads differ: ours %d, can-isotp %d"
                 % (seed, len(ok), len(got)))
        wrong = errors.count("WrongSequenceNumberError")
        orphan = errors.count("UnexpectedConsecutiveFrameError")
        inter = errors.count("ReceptionInterruptedWithFirstFrameError") + \
            errors.count("ReceptionInterruptedWithSingleFrameError")
        mine = (st["wrong_sn"] + st["dup_cf"], st["orphan_cf"], st["replaced"])
        if mine != (wrong, orphan, inter):
            fail("seed %d: verdicts differ: ours wrong_sn+dup_cf=%d orphan_cf=%d replaced=%d, "
                 "can-isotp %d %d %d (%s)" % (seed, st["wrong_sn"] + st["dup_cf"],
                                             st["orphan_cf"], st["replaced"], wrong, orphan,
                                             inter, sorted(set(errors))))
        n_ok += len(ok)
    print("isotp_ref: %d damaged streams, %d whole messages" % (seeds, n_ok))


def part3():
    name, txa, rxa, args = addresses()[0]
    payload = bytes(range(50))         # FF + 7 CFs
    bus = [m for m in transfer(txa, rxa, payload, False, None, 0, 0)
           if m.arbitration_id == 0x7E8]
    for gap_ms, late in ((1000, False), (1001, True)):
        for k in range(1, len(bus)):
            times = [i * 1000000 + (gap_ms * 1000000 if i >= k else 0) for i in range(len(bus))]
            ok, msgs, st = ours(bus, args, times)
            if not late:
                if ok != [payload]:
                    fail("N_Cr: a CF %d ms late (frame %d) lost the message" % (gap_ms, k))
                continue
            want = (("timeout", 6 + 7 * (k - 1)),)
            if tuple((s, ln) for s, ln, _ in msgs) != want or st["orphan_cf"] != len(bus) - k:
                fail("N_Cr: frame %d %d ms late: got %s orphans %d"
                     % (k, gap_ms, msgs, st["orphan_cf"]))
    print("isotp_ref: N_Cr cases checked against the standard's rule")


part1()
part2(int(sys.argv[3]) if len(sys.argv) > 3 else 150)
part3()
sys.exit(1 if failures else 0)
