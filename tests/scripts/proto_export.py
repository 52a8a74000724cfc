#!/usr/bin/env python3
"""streamfat export -f messages against references (t_proto_export).

    proto_export.py make CANDUMP      write a candump -L log: can-isotp 2.0.7 transfers
                                      (normal 11-bit on the OBD-II ids, normal fixed 29-bit,
                                      extended and mixed pairs, CAN FD), J1939 BAMs and NMEA
                                      2000 fast packets (PGN 129029), plain frames between
    proto_export.py check CANDUMP JSONL
                                      the export's ISO-TP messages equal, per address and in
                                      order, what can-isotp's receivers (listen mode) make
                                      of the same frames; the J1939 and fast-packet messages
                                      equal the payloads the generator sent; every line is
                                      JSON with the documented keys
Exit 0 when all agree."""
import json
import logging
import random
import sys
from collections import deque

import isotp

logging.disable(logging.CRITICAL)
A, AM = isotp.Address, isotp.AddressingMode
START = 1700000000


def addresses():
    return [
        (A(AM.Normal_11bits, txid=0x7E0, rxid=0x7E8), A(AM.Normal_11bits, txid=0x7E8, rxid=0x7E0)),
        (A(AM.NormalFixed_29bits, target_address=0x10, source_address=0xF1),
         A(AM.NormalFixed_29bits, target_address=0xF1, source_address=0x10)),
        (A(AM.Extended_11bits, txid=0x6F1, rxid=0x612, target_address=0x12, source_address=0xF1),
         A(AM.Extended_11bits, txid=0x612, rxid=0x6F1, target_address=0xF1, source_address=0x12)),
        (A(AM.Mixed_29bits, target_address=0x10, source_address=0xF1, address_extension=0x55),
         A(AM.Mixed_29bits, target_address=0xF1, source_address=0x10, address_extension=0x55)),
    ]


def params(fd, listen=False):
    p = {"max_frame_size": 1 << 20, "rx_consecutive_frame_timeout": 60000,
         "rx_flowcontrol_timeout": 60000}
    if fd:
        p.update(can_fd=True, tx_data_length=64)
    if listen:
        p["listen_mode"] = True
    return p


def transfer(txa, rxa, payload, fd):
    bus, to_a, to_b = [], deque(), deque()
    a = isotp.TransportLayerLogic(rxfn=lambda t: to_a.popleft() if to_a else None,
                                  txfn=lambda m: (bus.append(m), to_b.append(m)),
                                  address=txa, params=params(fd))
    b = isotp.TransportLayerLogic(rxfn=lambda t: to_b.popleft() if to_b else None,
                                  txfn=lambda m: (bus.append(m), to_a.append(m)),
                                  address=rxa, params=params(fd))
    a.send(payload)
    for _ in range(100000):
        a.process()
        b.process()
        if b.available():
            b.recv()
            return [(m.arbitration_id, m.is_extended_id, m.is_fd, bytes(m.data)) for m in bus]
    raise SystemExit("proto_export: transfer did not finish")


def make(path):
    rng = random.Random(28)
    frames = []            # (id, eff, fd, data)
    for i in range(40):
        kind = rng.randrange(4)
        if kind < 2:
            txa, rxa = rng.choice(addresses())
            size = rng.choice((3, 7, 20, 62, 300, 5000))
            payload = bytes(rng.randrange(256) for _ in range(size))
            frames += transfer(txa, rxa, payload, rng.random() < 0.3)
        elif kind == 2:
            sa = rng.randrange(8)
            size = rng.randrange(9, 200)
            pk = (size + 6) // 7
            payload = bytes(rng.randrange(256) for _ in range(size))
            frames.append((0x1CECFF00 | sa, True, False,
                           bytes([32, size & 0xFF, size >> 8, pk, 0xFF, 0xCA, 0xFE, 0])))
            for k in range(pk):
                chunk = payload[7 * k:7 * k + 7]
                frames.append((0x1CEBFF00 | sa, True, False,
                               bytes([k + 1]) + chunk + b"\xff" * (7 - len(chunk))))
        else:
            sa, seq = 0x20 + rng.randrange(4), rng.randrange(8)
            size = rng.randrange(1, 224)
            payload = bytes(rng.randrange(256) for _ in range(size))
            rest, fc = payload[6:], 0
            first = payload[:6]
            frames.append((0x0DF80500 | sa, True, False,
                           bytes([seq << 5, size]) + first + b"\xff" * (6 - len(first))))
            while rest:
                fc += 1
                chunk, rest = rest[:7], rest[7:]
                frames.append((0x0DF80500 | sa, True, False,
                               bytes([seq << 5 | fc]) + chunk + b"\xff" * (7 - len(chunk))))
        frames.append((0x123, False, False, bytes([i, 1, 2, 3])))
    with open(path, "w") as fh:
        for n, (cid, eff, fd, data) in enumerate(frames):
            t = "(%d.%06d)" % (START + n // 1000, (n % 1000) * 1000)
            ident = "%08X" % cid if eff else "%03X" % cid
            sep = "##0" if fd else "#"
            fh.write("%s can0 %s%s%s\n" % (t, ident, sep, data.hex().upper()))


def read_candump(path):
    out = []
    for line in open(path):
        _, _, f = line.split()
        ident, data = f.split("#", 1)
        fd = data.startswith("#")
        if fd:
            data = data[2:]
        out.append(isotp.CanMessage(arbitration_id=int(ident, 16), data=bytes.fromhex(data),
                                    extended_id=len(ident) == 8, is_fd=fd))
    return out


def check(candump, jsonl):
    frames = read_candump(candump)
    keys = {"proto", "status", "channel", "iface", "id", "eff", "fc_id", "mode", "addr", "sa",
            "da", "pgn", "ts_first", "ts_last", "length", "declared", "frames", "data"}
    msgs = [json.loads(line) for line in open(jsonl)]
    bad = [m for m in msgs if set(m) != keys or m["status"] != "ok"]
    if bad:
        raise SystemExit("proto_export: unexpected lines: %s" % bad[:2])
    # ISO-TP: per receiving address, can-isotp's receiver over the same frames
    for txa, rxa in addresses():
        q, got = deque(), []
        st = isotp.TransportLayerLogic(rxfn=lambda t: q.popleft() if q else None,
                                       txfn=lambda m: None, address=rxa,
                                       params=params(False, listen=True))
        for m in frames:
            q.append(m)
            st.process()
            while st.available():
                got.append(bytes(st.recv()).hex().upper())
        tx_id = txa.get_tx_arbitration_id()
        ours = [m["data"] for m in msgs if m["proto"] == "isotp" and int(m["id"], 16) == tx_id]
        if ours != got:
            raise SystemExit("proto_export: ISO-TP on %X: ours %d messages, can-isotp %d"
                             % (tx_id, len(ours), len(got)))
        print("proto_export: ISO-TP on %X: %d messages equal can-isotp's" % (tx_id, len(got)))
    # J1939 BAM and fast packets: the generator's payloads, rebuilt from the frames
    j1939 = [m for m in msgs if m["proto"] == "j1939"]
    fast = [m for m in msgs if m["proto"] == "fast"]
    want_j, want_f = [], []
    for i, m in enumerate(frames):
        d = bytes(m.data)
        if (m.arbitration_id & 0xFFFF00) == 0xECFF00 and d[0] == 32:
            size, pk = d[1] | d[2] << 8, d[3]
            body = b"".join(bytes(frames[i + k].data)[1:] for k in range(1, pk + 1))
            want_j.append(body[:size].hex().upper())
        if (m.arbitration_id >> 8) & 0x3FFFF == 129029 and d[0] & 0x1F == 0:
            size, body, k = d[1], d[2:], 1
            while len(body) < size:
                body += bytes(frames[i + k].data)[1:]
                k += 1
            want_f.append(body[:size].hex().upper())
    if [m["data"] for m in j1939] != want_j or [m["data"] for m in fast] != want_f:
        raise SystemExit("proto_export: J1939 %d/%d, fast packets %d/%d"
                         % (len(j1939), len(want_j), len(fast), len(want_f)))
    if any(m["pgn"] != 0xFECA or m["da"] != 255 for m in j1939) or \
       any(m["pgn"] != 129029 for m in fast):
        raise SystemExit("proto_export: PGN or addresses wrong")
    print("proto_export: %d J1939 and %d fast-packet messages as sent" % (len(j1939), len(fast)))


if __name__ == "__main__":        # python/tests/test_messages.py imports make and check
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
