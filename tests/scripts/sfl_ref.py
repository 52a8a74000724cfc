#!/usr/bin/env python3
"""An independent reader of streamfat logs, written from docs/FORMAT.md alone (its block and
record layout and the reader rules of "Reading a file"); it shares no code with src/ and uses
the standard library only. t_sfl_reference compares it with `streamfat export`.

    sfl_ref.py FILE PREFIX [KEYFILE]
                              writes PREFIX.candump (candump -L lines of the CAN records,
                              docs/EXPORT.md's layout), PREFIX.raw (the SAMPLE bodies back to
                              back), PREFIX.verdict ('clean' or 'damaged: invalid 1,
                              out-of-sequence 1', FORMAT.md) and PREFIX.skipped (the records candump has no
                              form for, as export counts them)

KEYFILE: the recipient's secret key file of sealed files (docs/FORMAT.md, "Sealed files";
the key file's line as docs/LOG.md, "Sealed logs" gives it); opening them takes PyNaCl
(libsodium's sealed box and XChaCha20-Poly1305), or the `cryptography` package for
AES-256-GCM. A sealed file without its key: PREFIX.verdict says 'sealed: key id HEX'.

Exit status 0 clean, 1 damaged (or sealed without its key).
"""
import struct
import sys

MAGIC = b"SFLB"
HDR = 48
COUNT_NAMES = ["unwritten", "invalid", "foreign", "misplaced", "unauthentic", "malformed",
               "out-of-sequence", "dirty-tail", "bad-can", "short-body", "bad-time", "truncated"]
# FORMAT.md, Record types: the shortest body a reader uses of these types
MIN_BODY = {4: 16, 5: 24}
# FORMAT.md, Versioning: header features bits 32-63 are required; this reader knows bit 32
# (compressed record blocks) and bit 33 (Sealed files)
SEALED = 1 << 33
KNOWN_REQUIRED = (1 << 32) | SEALED
CIPHER_REC = 0x12


class Sealed:
    """FORMAT.md, Sealed files: the file key from the header's CIPHER record, and opening a
    record block's stored payload with it."""

    def __init__(self, secret):
        self.secret = secret        # the recipient's X25519 secret key (32 bytes) or None
        self.key = None             # the file key once opened
        self.bad = False            # sealed_key does not open (or no CIPHER record)
        self.want = None            # key_id the file names
        self.aead = None

    def from_header(self, recs):
        rec = next((r for r in recs if r[0] == CIPHER_REC and len(r[4]) >= 96), None)
        if rec is None:
            self.bad = True
            return
        body = rec[4]
        self.aead = body[0]
        self.want = body[8:16]
        if self.secret is None:
            return
        from nacl.public import PrivateKey, SealedBox
        from nacl.exceptions import CryptoError
        priv = PrivateKey(self.secret)
        if bytes(priv.public_key)[:8] != self.want:
            return
        try:
            self.key = SealedBox(priv).decrypt(bytes(body[16:96]))
        except CryptoError:
            self.bad = True

    def usable(self):
        return self.key is not None or self.bad

    def open(self, blk, h):
        """The plaintext payload of a sealed record block, or None (unauthentic)."""
        if self.bad or h["used"] < 40:
            return None
        stored = blk[HDR:HDR + h["used"]]
        nonce, ct, ad = bytes(stored[:24]), bytes(stored[24:]), bytes(blk[:44])
        try:
            if self.aead == 1:
                from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt
                return crypto_aead_xchacha20poly1305_ietf_decrypt(ct, ad, nonce, self.key)
            if self.aead == 2:
                from cryptography.hazmat.primitives.ciphers.aead import AESGCM
                return AESGCM(self.key).decrypt(nonce[:12], ct, ad)
        except Exception:               # nacl's CryptoError, cryptography's InvalidTag
            return None
        return None


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc_table()


def crc32c(data, crc=0xFFFFFFFF):
    t = CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def is_zero(b):
    return b.count(0) == len(b)


def header_fields(blk):
    """The 48-byte block header as a dict (no checks)."""
    magic, version, kind, file_id, seq, first_ts, used, count, bsize, crc = \
        struct.unpack_from("<4sHHQQQIIII", blk, 0)
    return dict(magic=magic, version=version, kind=kind, file_id=file_id, seq=seq,
                first_ts=first_ts, used=used, count=count, block_size=bsize, crc=crc)


def size_ok(b):
    return 512 <= b <= 1 << 20 and b & (b - 1) == 0


def block_check(blk, b):
    """FORMAT.md 'valid': magic, version, kind, block size, used, CRC. The header or None."""
    if len(blk) < HDR:
        return None
    h = header_fields(blk)
    if h["magic"] != MAGIC or h["version"] != 1 or h["block_size"] != b or not size_ok(b):
        return None
    if h["kind"] not in (1, 2, 3) or h["used"] > b - HDR:
        return None
    crc = crc32c(blk[HDR:HDR + h["used"]], crc32c(blk[0:44])) ^ 0xFFFFFFFF
    if crc != h["crc"]:
        return None
    return h


class NoUnpack(Exception):
    """FORMAT.md, Compressed record blocks: the stored payload does not unpack."""


def unpack(stored, first_ts, b):
    """The plain payload of a compressed record block's stored payload, or None."""
    n = len(stored)
    pos = 0

    def byte():
        nonlocal pos
        if pos >= n:
            raise NoUnpack
        pos += 1
        return stored[pos - 1]

    def varint(limit):
        v = 0
        for i in range(10):
            c = byte()
            v |= (c & 0x7F) << (7 * i)
            if not c & 0x80:
                if v >= limit:
                    raise NoUnpack
                return v
        raise NoUnpack

    try:
        if n < 8 or stored[4] != 1 or stored[5:8] != b"\0\0\0":
            raise NoUnpack
        raw_len = struct.unpack_from("<I", stored, 0)[0]
        if raw_len > min(16 * (b - HDR), 2097152):
            raise NoUnpack
        pos = 8
        out = bytearray()
        prev_ts = first_ts
        entries = []         # [channel, flags, id, len, [last, second, third last data]]
        while len(out) < raw_len:
            tag = varint(1 << 64)
            if tag == 0:
                if n - pos < 16:
                    raise NoUnpack
                length = struct.unpack_from("<H", stored, pos + 2)[0]
                size = 16 + ((length + 7) & ~7)
                if size > n - pos or size > raw_len - len(out):
                    raise NoUnpack
                out += stored[pos:pos + size]
                prev_ts = struct.unpack_from("<Q", stored, pos + 8)[0]
                pos += size
                continue
            if tag == 1:
                if len(entries) == 512:
                    raise NoUnpack
                chan = byte()
                flags = varint(1 << 32)
                can_id = varint(1 << 32)
                dlen = byte()
                if dlen > 64:
                    raise NoUnpack
                entries.append([chan, flags, can_id, dlen, [bytes(dlen)] * 3])
                e = entries[-1]
            else:
                if tag - 2 >= len(entries):
                    raise NoUnpack
                e = entries[tag - 2]
            chan, flags, can_id, dlen, prev = e
            size = 16 + ((8 + dlen + 7) & ~7)
            if size > raw_len - len(out):
                raise NoUnpack
            t = varint(1 << 64)
            z = t >> 1
            d = (z >> 1) ^ -(z & 1)
            if t & 1:
                d *= 1000
            ts = (prev_ts + d) % (1 << 64)
            p, q, r = prev
            data = bytearray(
                (p[i] + (p[i] - q[i])) % 256 if (p[i] - q[i]) % 256 == (q[i] - r[i]) % 256
                else p[i] for i in range(dlen))
            for g in range(0, dlen, 8):
                cnt = min(8, dlen - g)
                mask = byte()
                if mask >> cnt:
                    raise NoUnpack
                for i in range(cnt):
                    if mask >> i & 1:
                        data[g + i] = byte()
            rec = struct.pack("<BBHIQIB3x", 1, chan, 8 + dlen, flags, ts, can_id, dlen) + data
            out += rec + bytes(size - len(rec))
            e[4] = [bytes(data), p, q]
            prev_ts = ts
        if len(out) != raw_len or pos != n:
            raise NoUnpack
        return bytes(out)
    except NoUnpack:
        return None


def walk_records(blk, h):
    """The records of a block whose layout is right (FORMAT.md check 5), or None."""
    used = h["used"]
    pl = blk[HDR:HDR + used]
    off = 0
    if h["kind"] == 1:
        if used < 32:
            return None
        start_ts = struct.unpack_from("<Q", pl, 0)[0]
        if h["first_ts"] != start_ts:
            return None
        off = 32
    recs = []
    while off < used:
        if off % 8 or used - off < 16:
            return None
        rtype, chan, length, flags, ts = struct.unpack_from("<BBHIQ", pl, off)
        padded = (length + 7) & ~7
        if 16 + padded > used - off:
            return None
        body = pl[off + 16:off + 16 + length]
        if not is_zero(pl[off + 16 + length:off + 16 + padded]):
            return None
        recs.append((rtype, chan, flags, ts, body))
        off += 16 + padded
    if len(recs) != h["count"]:
        return None
    if h["kind"] == 2 and recs and recs[0][3] != h["first_ts"]:
        return None
    return recs


def can_valid(flags, body):
    """FORMAT.md 'A CAN record is valid when': (id, len, data) or None."""
    if len(body) < 8:
        return None
    cid, ln = struct.unpack_from("<IB", body, 0)
    if len(body) < 8 + ln:
        return None
    # flag bits 6-15 are informational (ignored), 16-31 change the meaning (bad-can)
    if flags & 0xFFFF0000:
        return None
    eff, rtr, err, fd, brs, esi = (bool(flags & (1 << i)) for i in range(6))
    if (brs or esi) and not fd:
        return None
    if fd and rtr:
        return None
    if err and (fd or rtr):
        return None
    # One id rule for every frame, error frames included (FORMAT.md, CAN record).
    if (not eff and cid > 0x7FF) or cid > 0x1FFFFFFF:
        return None
    # an error frame carries EFF exactly when its class is above 0x7FF
    if err and eff and cid <= 0x7FF:
        return None
    if ln > (64 if fd else 8):
        return None
    return cid, ln, body[8:8 + ln]


def read_log(data, sealed=None):
    """Apply the reader rules. Returns (records, counts, not_log): records of accepted
    blocks in order as (type, channel, flags, ts, body); counts by COUNT_NAMES. sealed: a
    Sealed when the header says the file is sealed (FORMAT.md, Sealed files)."""
    counts = dict.fromkeys(COUNT_NAMES, 0)
    size = len(data)
    B = start = None
    for o in range(0, size, 512):
        if size - o < HDR:
            break
        h = header_fields(data[o:o + HDR])
        b = h["block_size"]
        if h["magic"] != MAGIC or h["version"] != 1 or not size_ok(b) or o % b or o + b > size:
            continue
        if block_check(data[o:o + b], b):
            B, start = b, o
            break
    if B is None:                                 # empty or all zeros: never written
        return [], counts, not is_zero(data)
    counts["invalid"] += start // B
    file_id = None          # from the first block passing the block check at its own place
    records = []
    nblocks = (size + B - 1) // B
    for n in range(start // B, nblocks):
        blk = data[n * B:(n + 1) * B]
        if len(blk) < B:                              # check 10
            if is_zero(blk):
                break
            counts["truncated"] = 1
            blk = blk + bytes(B - len(blk))
        if is_zero(blk):                              # check 1
            if is_zero(data[n * B:]):
                break
            counts["unwritten"] += 1
            continue
        h = block_check(blk, B)                       # check 2
        if h is None:
            counts["invalid"] += 1
            continue
        head_ok = n == 0 and h["seq"] == 0
        rec_ok = n != 0 and h["seq"] != 0
        placed = not ((h["kind"] == 1 and not head_ok) or (h["kind"] != 1 and not rec_ok))
        if file_id is None and placed and h["seq"] == n:
            file_id = h["file_id"]
        if file_id is not None and h["file_id"] != file_id:   # check 3
            counts["foreign"] += 1
            continue
        if not placed:
            counts["misplaced"] += 1                  # check 4
            continue
        if sealed is not None and h["kind"] in (2, 3):
            if not sealed.usable():                   # no key: the framing only
                if h["seq"] != n:
                    counts["out-of-sequence"] += 1
                continue
            plain = sealed.open(blk, h)               # check 4a, before unpacking
            if plain is None:
                counts["unauthentic"] += 1
                continue
            tail = blk[HDR + h["used"]:]
            h = dict(h, used=len(plain))
            blk = blk[:HDR] + plain + bytes(40) + tail
        if h["kind"] == 3:                            # check 5: unpack first
            raw = unpack(blk[HDR:HDR + h["used"]], h["first_ts"], B)
            recs = None if raw is None else \
                walk_records(blk[:HDR] + raw, dict(h, kind=2, used=len(raw)))
        else:
            recs = walk_records(blk, h)               # check 5
        if recs is None:
            counts["malformed"] += 1
            continue
        if h["seq"] != n:                             # check 6: the position rule
            counts["out-of-sequence"] += 1
            continue
        if not is_zero(blk[HDR + h["used"]:]):        # check 8
            counts["dirty-tail"] += 1
        if h["kind"] == 1 and sealed is not None:
            sealed.from_header(recs)
        records.extend(recs)
    return records, counts, False


def verdict(counts, not_log):
    if not_log:
        return "damaged: not a log"
    parts = ["%s %d" % (k, counts[k]) for k in COUNT_NAMES if counts[k]]
    return "damaged: " + ", ".join(parts) if parts else "clean"


def channel_name(body):
    """FORMAT.md, Channel names: the name a CHANNEL record gives, or None when it gives none
    (empty, not UTF-8, a space or a control character)."""
    try:
        name = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not name or any(c <= " " or c == "\x7f" for c in name):
        return None
    return name


def refused_feature(data):
    """FORMAT.md, Versioning: the lowest unknown required feature bit of an intact header
    block (block 0), else None."""
    if len(data) < HDR + 32:
        return None
    B = header_fields(data[:HDR])["block_size"]
    if not size_ok(B) or len(data) < B:
        return None
    h = block_check(data[:B], B)
    if h is None or h["kind"] != 1 or h["seq"] != 0 or walk_records(data[:B], h) is None:
        return None
    unknown = struct.unpack_from("<Q", data, HDR + 24)[0] >> 32 & ~(KNOWN_REQUIRED >> 32)
    return 32 + (unknown & -unknown).bit_length() - 1 if unknown else None


def header_features(data):
    """The features of an intact header block (block 0), else 0."""
    if len(data) < HDR + 32:
        return 0
    B = header_fields(data[:HDR])["block_size"]
    if not size_ok(B) or len(data) < B:
        return 0
    h = block_check(data[:B], B)
    if h is None or h["kind"] != 1 or h["seq"] != 0 or walk_records(data[:B], h) is None:
        return 0
    return struct.unpack_from("<Q", data, HDR + 24)[0]


def decode(data, secret=None):
    """Everything export shows of a log: (candump text, raw bytes, verdict, skipped line)."""
    bit = refused_feature(data)
    if bit is not None:
        return "", b"", "damaged: not a log: requires feature bit %d, unknown to this reader" \
            % bit, ""
    sealed = Sealed(secret) if header_features(data) & SEALED else None
    records, counts, not_log = read_log(data, sealed)
    if sealed is not None and not sealed.usable():
        return "", b"", "sealed: key id %s" % (sealed.want or b"").hex(), ""
    names = {}
    fixed = set()           # channels whose name can no longer change: named or used
    lines = []
    raw = []
    skipped = {}
    lost = 0
    type_names = {1: "CAN", 2: "SAMPLE", 3: "TEXT", 4: "LATENCY", 5: "DROP", 6: "ANNOTATION"}
    for rtype, chan, flags, ts, body in records:
        if ts >= 1 << 63 and rtype in type_names or ts >= 1 << 63 and rtype in (0x10, 0x11):
            counts["bad-time"] += 1                   # FORMAT.md, Records: skipped
            continue
        if rtype == 0x10:
            name = channel_name(body)
            if chan not in fixed and name is not None:
                names[chan] = name
                fixed.add(chan)
            continue
        if rtype in (0x11, CIPHER_REC):
            continue
        if rtype == 1:
            c = can_valid(flags, body)
            if c is None:
                counts["bad-can"] += 1
                continue
            cid, ln, d = c
            fixed.add(chan)
            ifname = names.get(chan) or "can%d" % chan
            if flags & 4:
                ids = "%08X" % (0x20000000 | cid)
            elif flags & 1:
                ids = "%08X" % cid
            else:
                ids = "%03X" % cid
            if flags & 8:
                # the flags digit: BRS 1, ESI 2, and FDF 4 as candump prints it on Linux 6.1
                tail = "#%X%s" % (4 | (1 if flags & 16 else 0) | (2 if flags & 32 else 0),
                                  d.hex().upper())
            elif flags & 2:
                tail = "R" + ("%X" % (ln & 0xF) if ln else "")
            else:
                tail = d.hex().upper()
            us = (ts + 500) // 1000                   # to the nearest microsecond
            lines.append("(%d.%06d) %s %s#%s\n" % (us // 10**6, us % 10**6, ifname, ids, tail))
            continue
        if len(body) < MIN_BODY.get(rtype, 0):
            counts["short-body"] += 1
            continue
        if rtype in (2, 3, 4):
            fixed.add(chan)
        skipped[rtype] = skipped.get(rtype, 0) + 1
        if rtype == 5 and len(body) >= 8:
            lost += struct.unpack_from("<Q", body, 0)[0]
        if rtype == 2:
            raw.append(body)
    skip_line = ""
    if skipped:
        parts = []
        for t in sorted(skipped):
            parts.append("%s: %d" % (type_names.get(t, "type 0x%02X" % t), skipped[t]))
            if t == 5:
                parts[-1] += " accounting for %d lost records" % lost
        skip_line = "skipped %d non-CAN records (%s)\n" % (sum(skipped.values()),
                                                          ", ".join(parts))
    return "".join(lines), b"".join(raw), verdict(counts, not_log), skip_line


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: sfl_ref.py FILE OUTPREFIX [KEYFILE]  (writes OUTPREFIX.candump, "
                 ".raw, .verdict, .skipped)")
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    secret = None
    if len(sys.argv) == 4:
        # docs/LOG.md, Sealed logs: one line, 'streamfat-secret-key' and 64 hex digits
        with open(sys.argv[3]) as f:
            tag, hexkey = f.readline().split()
        if tag != "streamfat-secret-key" or len(hexkey) != 64:
            sys.exit("sfl_ref.py: %s: not a secret key file" % sys.argv[3])
        secret = bytes.fromhex(hexkey)
    candump, raw, v, skip_line = decode(data, secret)
    pre = sys.argv[2]
    with open(pre + ".candump", "w", encoding="utf-8") as f:
        f.write(candump)
    with open(pre + ".raw", "wb") as f:
        f.write(raw)
    with open(pre + ".verdict", "w") as f:
        f.write(v + "\n")
    with open(pre + ".skipped", "w") as f:
        f.write(skip_line)
    sys.exit(0 if v == "clean" else 1)


if __name__ == "__main__":
    main()
