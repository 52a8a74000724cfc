"""Frames for t_import_blf.sh and t_import_asc.sh: python-can writes the logs that
`streamfat log --source file:` imports, and reads back what `streamfat export` makes.

    import_frames.py gen-blf FILE LEVEL CONTAINER   BLFWriter, compression LEVEL (0: stored),
                                                    max_container_size CONTAINER
    import_frames.py gen-asc FILE [NOW]             ASCWriter, its header "date" written for
                                                    local time NOW (ISO 8601; default
                                                    2023-11-14T22:13:20.123456), not the clock
    import_frames.py gen-candump FILE               CanutilsLogWriter
    import_frames.py gen-paced FILE                 BLF of 40 frames over 0.5 s
    import_frames.py gen-vector FILE                BLF built here byte by byte with what
                                                    python-can does not write (see vector())
    import_frames.py cmp KIND SRC OUT_KIND OUT [N]  python-can reads SRC (KIND blf|asc|candump,
                                                    blf-vector: a gen-vector file)
                                                    and OUT (candump|blf): the same frames (the
                                                    first N of SRC when N is given)

Frames are compared field by field: channel (python-can's channel c is streamfat's interface
"can<c>"), id, extended, remote, FD, BRS, ESI, error, DLC, data; timestamps to the
microsecond:
  - BLF: python-can writes the header's start time as its first message's time rounded to
    the millisecond and object times in ns relative to the unrounded time, and reads
    start + offset. The exact time streamfat must log is therefore
    start_ms + int((t - t_first) * 1e9) ns (python-can's own arithmetic); candump output
    (to the nearest microsecond) must equal (it + 500) // 1000, and python-can's own reading must be
    within 1 us of it (a float of ~1.7e9 s holds 0.24 us).
  - ASC and candump: the file's times are whole microseconds; python-can's reading rounded
    to the microsecond is exact.
  - OUT_KIND blf (streamfat's BLF export read by python-can): within 1 us of the exact time.
"""
import datetime
import sys

import can

T0 = 1700000000.123456
D = bytes((i * 7 + 3) & 0xFF for i in range(64))
BULK = 3000


def messages(fd_empty=True):
    """Standard, extended, remote (both), CAN FD (BRS, ESI, 12 and 64 bytes, empty), an error
    frame, then BULK classic frames on three channels at uneven microsecond times."""
    out = [
        can.Message(timestamp=T0, arbitration_id=0x123, data=b"\x11\x22\x33\x44", channel=0,
                    is_extended_id=False),
        can.Message(timestamp=T0 + 0.000001, arbitration_id=0x1ABCDEF0, data=D[:8], channel=0,
                    is_extended_id=True),
        can.Message(timestamp=T0 + 0.000502, arbitration_id=0x7FF, is_remote_frame=True, dlc=0,
                    channel=1, is_extended_id=False),
        can.Message(timestamp=T0 + 0.001003, arbitration_id=0xABC, is_remote_frame=True, dlc=5,
                    channel=1, is_extended_id=True),
        can.Message(timestamp=T0 + 0.002004, arbitration_id=0x321, is_fd=True,
                    bitrate_switch=True, data=D[:12], channel=0, is_extended_id=False),
        can.Message(timestamp=T0 + 0.003005, arbitration_id=0x1FFFFFFF, is_fd=True,
                    error_state_indicator=True, data=D, channel=1, is_extended_id=True),
        can.Message(timestamp=T0 + 0.004006, arbitration_id=0x10, is_fd=True,
                    bitrate_switch=True, error_state_indicator=True, data=b"", channel=0,
                    is_extended_id=False),
        can.Message(timestamp=T0 + 0.005007, is_error_frame=True, channel=0),
        can.Message(timestamp=T0 + 0.006008, arbitration_id=0x000, data=b"", channel=2,
                    is_extended_id=False),
    ]
    if not fd_empty:   # python-can's ASC reader takes an FD frame without data for a remote one
        del out[6]
    for k in range(BULK):
        out.append(can.Message(timestamp=T0 + 0.01 + k * 0.000137 + (k % 10) * 1e-6,
                               arbitration_id=0x100 + k % 16, data=k.to_bytes(8, "little"),
                               channel=k % 3, is_extended_id=False))
    return out


def paced():
    return [can.Message(timestamp=T0 + k * 0.0125, arbitration_id=0x200 + k, data=bytes([k]),
                        channel=0, is_extended_id=False) for k in range(41)]


def vector(path):
    """A BLF file as Vector's tools write more than python-can does: CAN_MESSAGE2 (86),
    CAN_FD_MESSAGE_64 (101, FD with BRS, classic remote, classic data), a classic frame in a
    CAN_FD_MESSAGE (100), object header version 2, 10 us timestamps, an inner object of
    another type (65) and a top-level one between a zlib and a stored container. Start
    2023-11-14 22:13:20.123 local time; every frame at a whole microsecond."""
    import struct
    import zlib

    def obj(typ, body, ts, ver=1, unit=2):
        if ver == 1:
            hdr = struct.pack("<LHHQ", unit, 0, 0, ts)
        else:
            hdr = struct.pack("<LBxHQQ", unit, 0, 0, ts, 0)
        size = 16 + len(hdr) + len(body)
        return (struct.pack("<4sHHLL", b"LOBJ", 16 + len(hdr), ver, size, typ) + hdr + body +
                b"\0" * (size % 4))

    def can2(ch, flags, dlc, can_id, data):
        return struct.pack("<HBBL8sLBxH", ch, flags, dlc, can_id, data, 0, 0, 0)

    def fd64(ch, dlc, can_id, flags, data):
        return struct.pack("<BBBBLLLLLLLHBBL", ch, dlc, len(data), 0, can_id, 0, flags, 0, 0,
                           0, 0, 0, 0, 0, 0) + data

    def fd(ch, dlc, can_id, fd_flags, data):
        return struct.pack("<HBBLLBBB5x64s", ch, 0, dlc, can_id, 0, 0, fd_flags, len(data),
                           data)

    ext = 0x80000000
    first = (obj(86, can2(1, 0, 3, 0x555, b"\1\2\3"), 10, unit=1) +
             obj(86, can2(2, 0x80, 2, ext | 0x1234567, b""), 200000) +
             obj(101, fd64(1, 13, ext | 0x18DAF110, 0x3000, bytes(range(32))), 300000, ver=2) +
             obj(101, fd64(1, 4, 0x7E0, 0x0010, b""), 400000, ver=2) +
             obj(65, b"not a frame" * 9, 450000) +
             obj(101, fd64(1, 2, 0x123, 0, b"\xaa\xbb"), 500000))
    second = (obj(100, fd(2, 8, 0x100, 0, bytes.fromhex("1122334455667788")), 600000) +
              obj(100, fd(2, 11, ext | 0x1ABCDEF, 0x5, bytes(i * 3 for i in range(20))),
                  700000) +
              obj(73, struct.pack("<HHLBBBxLLH2x8s", 1, 0, 0, 0, 0, 0, 0, 0, 0, b""), 800000) +
              obj(1, struct.pack("<HBBL8s", 1, 0, 8, 0x7FF, b"\xff" * 8), 90, ver=2, unit=1))

    def container(data, method):
        payload = zlib.compress(data) if method == 2 else data
        size = 32 + len(payload)
        return (struct.pack("<4sHHLLH6xL4x", b"LOBJ", 16, 1, size, 10, method, len(data)) +
                payload + b"\0" * (size % 4))

    start = (2023, 11, 2, 14, 22, 13, 20, 123)
    body = (container(first, 2) + obj(65, b"top-level, not a container", 0) +
            container(second, 0))
    head = struct.pack("<4sLBBBBBBBBQQLL8H8H", b"LOGG", 144, 5, 0, 0, 0, 2, 6, 8, 1,
                       144 + len(body), 0, 10, 0, *start, *start)
    with open(path, "wb") as f:
        f.write(head + b"\0" * (144 - len(head)) + body)


def read(kind, path):
    if kind in ("blf", "blf-vector"):
        return list(can.BLFReader(path))
    if kind == "asc":
        return list(can.ASCReader(path, relative_timestamp=False))
    if kind == "candump":
        return list(can.CanutilsLogReader(path))
    raise SystemExit("unknown kind " + kind)


def fields(m):
    if m.is_error_frame:        # candump keeps no channel or id for error frames
        return ("error frame",)
    ch = m.channel
    if isinstance(ch, int):
        ch = "can%d" % ch
    data = b"" if m.is_remote_frame else bytes(m.data)
    return (ch, hex(m.arbitration_id), m.is_extended_id, m.is_remote_frame, m.is_fd,
            m.bitrate_switch, m.error_state_indicator, m.dlc, data.hex())


def exact_ns(kind, src, ref):
    """The time streamfat must log for each frame of SRC, in ns."""
    if kind == "blf":
        start_ms = round(can.BLFReader(src).start_timestamp * 1000)
        sent = paced() if len(ref) == len(paced()) else messages()
        t_first = sent[0].timestamp
        ns = [start_ms * 10**6 + max(int((m.timestamp - t_first) * 1e9), 0) for m in sent]
        for r, n in zip(ref, ns):   # the arithmetic above is what python-can reads back
            assert abs(r.timestamp * 1e9 - n) < 1000, ("python-can reads", r.timestamp, n)
        return ns
    return [round(m.timestamp * 1e6) * 1000 for m in ref]


def cmp(kind, src, out_kind, out, n=None):
    ref = read(kind, src)
    want_ns = exact_ns(kind, src, ref)
    if n is not None:
        ref, want_ns = ref[:n], want_ns[:n]
    got = read(out_kind, out)
    bad = 0
    if len(got) != len(ref):
        print("frames: %d in %s, %d in %s" % (len(ref), src, len(got), out))
        bad += 1
    for i, (r, g, w) in enumerate(zip(ref, got, want_ns)):
        if fields(r) != fields(g):
            print("frame %d: %s != %s" % (i, fields(r), fields(g)))
            bad += 1
        if out_kind == "candump":
            ok = round(g.timestamp * 1e6) == (w + 500) // 1000
        else:
            ok = abs(g.timestamp * 1e9 - w) < 1000
        if not ok:
            print("frame %d: time %.9f, expected %d ns" % (i, g.timestamp, w))
            bad += 1
        if bad > 10:
            break
    if bad:
        raise SystemExit("%s vs %s: differences" % (src, out))
    print("%d frames agree" % len(got))


def main(argv):
    cmd = argv[1]
    if cmd == "gen-blf":
        w = can.BLFWriter(argv[2], compression_level=int(argv[3]),
                          max_container_size=int(argv[4]))
        for i, m in enumerate(messages()):
            w.on_message_received(m)
            if i == 3:      # an object that is not a frame: skipped by both readers
                w.log_event("marker", m.timestamp)
        w.stop()
    elif cmd == "gen-paced":
        w = can.BLFWriter(argv[2])
        for m in paced():
            w.on_message_received(m)
        w.stop()
    elif cmd == "gen-vector":
        vector(argv[2])
    elif cmd == "gen-asc":
        # ASCWriter writes datetime.now() into its "date" line, and mangles it for some
        # microsecond values (it strips the 4th-6th microsecond digits with str.replace, which
        # also strips them from the year): the clock must not choose the test's input.
        now = datetime.datetime.fromisoformat(argv[3] if len(argv) > 3
                                              else "2023-11-14T22:13:20.123456")

        class PinnedNow(datetime.datetime):
            @classmethod
            def now(cls, tz=None):
                return now

        can.io.asc.datetime = PinnedNow
        w = can.ASCWriter(argv[2])
        for m in messages(fd_empty=False):
            w.on_message_received(m)
        w.stop()
    elif cmd == "gen-candump":
        w = can.CanutilsLogWriter(argv[2])
        for m in messages():
            w.on_message_received(m)
        w.stop()
    elif cmd == "cmp":
        cmp(argv[2], argv[3], argv[4], argv[5], int(argv[6]) if len(argv) > 6 else None)
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
