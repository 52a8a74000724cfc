#!/usr/bin/env python3
"""Synthetic CAN traffic as candump -L lines, for the compression benchmark (bench/pack_bench.sh).

    can_mix.py j1939 SECONDS   a J1939 truck-like mix on one 250 kbit/s bus: engine, gearbox,
                               brakes, body and tachograph PGNs at their usual periods, about
                               800 frames/s; signals move smoothly with sensor noise,
                               unused bytes 0xFF, some frames carry a counter and checksum
    can_mix.py fd SECONDS      two CAN FD buses: radar/camera object lists (64 bytes, half of
                               the bytes noisy), 16- and 32-byte sensor frames with counters
                               and CRC bytes, and classic frames beside them

Deterministic (a fixed seed): the same lines on every run. Times start at 1700000000 s, in
microseconds with jitter, as a SocketCAN receive time would be."""
import math
import random
import sys

T0 = 1_700_000_000_000_000  # us


def clamp(v, lo, hi):
    return max(lo, min(hi, int(v)))


def j1939(seconds, rnd):
    """(period_ms, can_id, payload(t, k)) for each message of the mix."""
    def rpm(t):
        return 1200 + 500 * math.sin(t / 7.0) + 150 * math.sin(t / 1.3)

    def speed(t):
        return 60 + 25 * math.sin(t / 23.0)

    def u16(v):
        v = clamp(v, 0, 0xFAFF)
        return [v & 0xFF, v >> 8]

    def noisy(v, amp):
        return v + rnd.uniform(-amp, amp)

    def eec1(t, k):
        tq = clamp(noisy(125 + 40 * math.sin(t / 3.0), 1.5), 0, 250)
        return [0xF3, clamp(tq + 2, 0, 250), tq] + u16(noisy(rpm(t), 3) / 0.125) + [0x00, 0xFF, tq]

    def eec2(t, k):
        return [0xF1, clamp(noisy(100 + 60 * math.sin(t / 3.0), 1), 0, 250), 0x1E, 0xFF, 0xFF,
                0xFF, 0xFF, 0xFF]

    def etc1(t, k):
        return [0xCC] + u16(noisy(speed(t) * 30, 2) / 0.125) + [0xFF, 0xFF] + \
               u16(noisy(rpm(t), 3) / 0.125) + [0xFF]

    def etc2(t, k):
        g = 125 + clamp(speed(t) / 12, 1, 12)
        return [g, 0xFF, 0xFF, g, 0xFF, 0xFF, 0xFF, 0xFF]

    def ccvs(t, k):
        return [0xF7] + u16(noisy(speed(t), 0.05) * 256) + [0x1F, 0x00, 0x00, 0x00, 0xFF]

    def tsc1(t, k):
        c = k & 0xF
        d = [0xFC] + u16(rpm(t) / 0.125) + [0xFF, 0xFF, 0xFF, 0xFF, c << 4]
        d[7] |= (sum(d) + c) & 0xF
        return d

    def ebc1(t, k):
        return [0xC0, 0x00, clamp(noisy(20 + 20 * math.sin(t / 11.0), 0.5), 0, 250), 0xFF,
                0x00, 0x00, 0xFF, 0xFF]

    def ebc2(t, k):
        v = u16(noisy(speed(t), 0.05) * 256)
        return v + [0x7D, 0x7D, 0x7D, 0x7D, 0xFF, 0xFF]

    def hrw(t, k):
        out = []
        for w in range(4):
            out += u16(noisy(speed(t) * (1 + 0.002 * w), 0.08) * 256)
        return out

    def vdc2(t, k):
        yaw = clamp(noisy(32000 + 300 * math.sin(t / 5.0), 8), 0, 64255)
        lat = clamp(noisy(125 + 3 * math.sin(t / 5.0), 0.6), 0, 250)
        return u16(yaw) + [0xFF, 0xFF] + u16(yaw) + [lat, 0x7D]

    def et1(t, k):
        return [clamp(40 + 50 + t / 60, 0, 250), 0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]

    def lfe(t, k):
        return u16(noisy(20 + 10 * math.sin(t / 3.0), 0.2) / 0.05) + [0xFF, 0xFF] + \
               u16(noisy(2000, 20)) + [0xFF, 0xFF]

    def amb(t, k):
        return [0xFF, 0xFF, 0xFF] + u16((273 + 15) / 0.03125) + [0xFF, 0xFF, 0xFF]

    def tco1(t, k):
        return [0x00, 0x00, 0x00, 0xC0, 0x00, 0x00] + u16(noisy(speed(t), 0.05) * 256)

    def dm1(t, k):
        return [0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF]

    def at1(t, k):
        return u16(noisy(300 + 50 * math.sin(t / 40), 1) / 0.05) + u16(noisy(5000, 30)) + \
               [0xFF, 0xFF, 0xFF, 0xFF]

    return [
        (10, 0x0CF00400, eec1), (50, 0x0CF00300, eec2), (10, 0x0CF00203, etc1),
        (100, 0x18F00503, etc2), (100, 0x18FEF100, ccvs), (10, 0x0C000003, tsc1),
        (100, 0x18F0010B, ebc1), (100, 0x18FEBF0B, ebc2), (20, 0x18FE6E0B, hrw),
        (10, 0x18F0090B, vdc2), (1000, 0x18FEEE00, et1), (100, 0x18FEF200, lfe),
        (1000, 0x18FEF500, amb), (50, 0x0CFE6CEE, tco1), (1000, 0x18FECA00, dm1),
        (1000, 0x18FECA03, dm1), (1000, 0x18FECA0B, dm1), (1000, 0x18FECA17, dm1),
        (50, 0x18FD7C00, at1), (100, 0x18FEF117, ccvs), (20, 0x0CF00417, eec1),
        (10, 0x18F00117, ebc1), (20, 0x18FE4A03, etc2), (50, 0x18FEDF00, eec2),
    ], True


def fd(seconds, rnd):
    def objects(t, k):
        out = []
        for o in range(8):
            dist = clamp(1000 + 800 * math.sin(t / (3 + o)) + rnd.uniform(-5, 5), 0, 65535)
            ang = clamp(128 + 60 * math.sin(t / (5 + o)) + rnd.uniform(-1, 1), 0, 255)
            out += [dist & 0xFF, dist >> 8, ang, rnd.randrange(256), o, 0x10, 0x00, 0x00]
        return out

    def sensor(n):
        def f(t, k):
            out = [k & 0xFF, 0]
            for i in range(2, n - 1):
                out.append(clamp(128 + 100 * math.sin(t / (2 + i)) + rnd.uniform(-1, 1), 0, 255)
                           if i % 3 else 0)
            out.append(sum(out) & 0xFF)
            return out
        return f

    def classic(t, k):
        return [k & 0xFF, clamp(100 + 50 * math.sin(t), 0, 255), 0, 0, 0x11, 0x22, 0, 0]

    return [
        (20, 0x200, objects), (20, 0x201, objects), (50, 0x300, objects),
        (10, 0x110, sensor(16)), (10, 0x111, sensor(16)), (10, 0x120, sensor(32)),
        (10, 0x121, sensor(32)), (5, 0x130, sensor(16)),
        (10, 0x0A0, classic), (20, 0x0A1, classic), (100, 0x0A2, classic),
    ], False


def main():
    kind, seconds = sys.argv[1], float(sys.argv[2])
    rnd = random.Random(29)
    msgs, ext = j1939(seconds, rnd) if kind == "j1939" else fd(seconds, rnd)
    events = []
    for i, (period, cid, f) in enumerate(msgs):
        phase = rnd.randrange(period * 1000)
        n = int(seconds * 1000 / period)
        for k in range(n):
            events.append((phase + k * period * 1000 + rnd.randrange(-150, 150), i, k))
    events.sort()
    out = sys.stdout
    last = -1
    for t_us, i, k in events:
        t_us = max(t_us, last + 1)
        last = t_us
        period, cid, f = msgs[i]
        data = f(t_us / 1e6, k)
        ts = T0 + t_us
        stamp = "(%d.%06d)" % (ts // 1_000_000, ts % 1_000_000)
        hexd = "".join("%02X" % b for b in data)
        if ext:
            out.write("%s can0 %08X#%s\n" % (stamp, cid, hexd))
        elif len(data) > 8:
            out.write("%s can%d %03X##1%s\n" % (stamp, i % 2, cid, hexd))
        else:
            out.write("%s can%d %03X#%s\n" % (stamp, i % 2, cid, hexd))


if __name__ == "__main__":
    main()
