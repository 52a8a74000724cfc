"""A minimal .SFL writer for the tests, from docs/FORMAT.md (block and record layout): the
record kinds and clocks the CLI does not make (SAMPLE, TEXT, LATENCY, DROP, ANNOTATION, a
free-running clock) and exact damage. Test code; shares nothing with src/."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "scripts"))
from sfl_ref import crc32c  # noqa: E402

CAN, SAMPLE, TEXT, LATENCY, DROP, ANNOTATION, CHANNEL, META = 1, 2, 3, 4, 5, 6, 0x10, 0x11


def rec(type_, ch, ts, body=b"", flags=0):
    pad = (-len(body)) % 8
    return struct.pack("<BBHIQ", type_, ch, len(body), flags, ts) + body + bytes(pad)


def can(ch, ts, cid, data=b"", flags=0, length=None):
    n = len(data) if length is None else length
    return rec(CAN, ch, ts, struct.pack("<IB3x", cid, n) + data, flags)


def block(kind, file_id, seq, first_ts, payload, count, B):
    used = len(payload)
    assert 48 + used <= B
    hdr = struct.pack("<4sHHQQQIII", b"SFLB", 1, kind, file_id, seq, first_ts, used, count, B)
    crc = crc32c(payload, crc32c(hdr)) ^ 0xFFFFFFFF
    return hdr + struct.pack("<I", crc) + payload + bytes(B - 48 - used)


def first_ts_of(recs):
    return struct.unpack_from("<Q", recs[0], 8)[0]


def sfl(blocks_of_records, B=512, clock=0, start_ts=1_700_000_000_000_000_000, file_id=0x1234,
        header_records=(), file_index=1, session_id=77, features=0):
    """A log: block 0 with header_records, then one record block per list of records."""
    hp = struct.pack("<QIIQQ", start_ts, clock, file_index, session_id, features) + \
        b"".join(header_records)
    out = [block(1, file_id, 0, start_ts, hp, len(header_records), B)]
    for i, recs in enumerate(blocks_of_records, 1):
        out.append(block(2, file_id, i, first_ts_of(recs), b"".join(recs), len(recs), B))
    return b"".join(out)
