#!/usr/bin/env python3
"""Seeded random damage of exFAT directory sectors, for t_fsck_random_exfat.

    fsck_random_exfat.py check BASE SRCDIR
        BASE (an exFAT image) holds exactly the tree SRCDIR (read by the reader below).
    fsck_random_exfat.py run BASE WORKDIR FIRST COUNT
        For each seed FIRST .. FIRST+COUNT-1: damage 1-3 directory sectors of a copy of BASE
        (odd seeds: random bytes over whole sectors; even seeds: plausible entries with wrong
        types, in-use bits, attributes, first clusters, sizes, name lengths, secondary
        counts, checksums recomputed or not), then
          copy A: fsck.exfat -y; the files it keeps = the files of BASE that A still holds
                  under the same path with the same bytes;
          copy B: streamfat fsck --repair ($SF); then fsck.exfat -n must call it clean, a
                  second `streamfat fsck` must exit 0, every file kept on A must be on B
                  with the same bytes, and B's volume label entry (if any) is well formed.
        A run whose only fsck.exfat complaint is a well-formed vendor entry (a benign
        primary with its set, or a benign secondary in a file's set, checksum right) that
        fsck.exfat 1.2 does not know is listed, not failed: B with those entries stripped
        must then be clean. Prints one line per failed or listed seed and a summary; exit
        status 1 when a seed failed.

The allocation bitmap and up-case table entries of the root directory are left intact (the
damage puts their 32 bytes back): without them fsck.exfat stops at once, and neither checker
rebuilds them. Files are read with the small independent reader below (not streamfat's
code): entry sets whose checksum and structure are right, FAT chains or contiguous runs."""
import os
import random
import re
import shutil
import struct
import subprocess
import sys

SAN = re.compile(rb'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|'
                 rb'SUMMARY: UndefinedBehaviorSanitizer')


def u16(b, o):
    return struct.unpack_from('<H', b, o)[0]


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]


def set_sum(ents):
    s = 0
    for i, x in enumerate(ents):
        if i in (2, 3):
            continue
        s = ((s >> 1) | ((s & 1) << 15)) + x & 0xFFFF
    return s


class Vol:
    """A read-only view of an exFAT image (bytes), lenient: damaged parts raise Bad."""

    class Bad(Exception):
        pass

    def __init__(self, data):
        self.d = data
        b = data[:512]
        if b[3:11] != b'EXFAT   ':
            raise Vol.Bad('not exFAT')
        self.ss = 1 << b[108]
        self.cs = self.ss << b[109]
        self.fat = u32(b, 80) * self.ss
        self.heap = u32(b, 88) * self.ss
        self.cc = u32(b, 92)
        self.root = u32(b, 96)
        self.up = None

    def heap_ok(self, c):
        return 2 <= c < self.cc + 2

    def coff(self, c):
        return self.heap + (c - 2) * self.cs

    def fat_next(self, c):
        return u32(self.d, self.fat + 4 * c)

    def clusters(self, first, contig, n):
        """n clusters of a file (n None: a FAT chain to its end)."""
        out = []
        c = first
        seen = set()
        while n is None or len(out) < n:
            if not self.heap_ok(c) or c in seen:
                raise Vol.Bad('chain leaves the heap or loops')
            out.append(c)
            seen.add(c)
            if contig:
                c += 1
                continue
            nx = self.fat_next(c)
            if nx == 0xFFFFFFFF:
                if n is not None and len(out) < n:
                    raise Vol.Bad('chain too short')
                break
            c = nx
        return out

    def entries(self, clus):
        """(offset, 32 bytes) of each entry of a directory in clusters clus."""
        out = []
        for c in clus:
            base = self.coff(c)
            for i in range(self.cs // 32):
                out.append((base + 32 * i, self.d[base + 32 * i:base + 32 * i + 32]))
        return out

    def upcase(self):
        if self.up is not None:
            return self.up
        self.up = list(range(65536))
        for off, e in self.entries(self.clusters(self.root, 0, None)):
            if e[0] == 0x82:
                first, ln = u32(e, 20), u64(e, 24)
                raw = b''.join(self.d[self.coff(c):self.coff(c) + self.cs]
                               for c in self.clusters(first, 0, -(-ln // self.cs)))[:ln]
                tab = struct.unpack('<%dH' % (ln // 2), raw[:ln // 2 * 2])
                i = j = 0
                while i < len(tab) and j < 65536:
                    if tab[i] == 0xFFFF and i + 1 < len(tab):
                        j += tab[i + 1]
                        i += 2
                    else:
                        self.up[j] = tab[i]
                        j += 1
                        i += 1
                break
        return self.up

    def name_hash(self, name):
        up = self.upcase()
        h = 0
        for ch in name:
            c = up[ch] if ch < 65536 else ch
            for x in (c & 0xFF, c >> 8):
                h = ((h >> 1) | ((h & 1) << 15)) + x & 0xFFFF
        return h

    def read_sets(self, ents):
        """Yield (idx, name, stream entry) of each well-formed file set of a directory."""
        i = 0
        while i < len(ents):
            t = ents[i][1][0]
            if t == 0x00:
                return
            if t != 0x85:
                i += 1
                continue
            n = ents[i][1][1]
            if n < 2 or i + n >= len(ents):
                i += 1
                continue
            raw = b''.join(e for _, e in ents[i:i + n + 1])
            st = ents[i + 1][1]
            if set_sum(raw) != u16(raw, 2) or st[0] != 0xC0:
                i += 1
                continue
            nl = st[3]
            ne = -(-nl // 15)
            if nl == 0 or ne + 1 > n or any(ents[i + 2 + j][1][0] != 0xC1 for j in range(ne)):
                i += 1
                continue
            chars = b''.join(ents[i + 2 + j][1][2:32] for j in range(ne))[:2 * nl]
            yield i, list(struct.unpack('<%dH' % nl, chars)), st, ents[i][1]
            i += n + 1

    def tree(self):
        """{path: bytes or None (directory)} and [(dir path, clusters)]; damaged files are
        left out (with their subtrees)."""
        files, dirs = {}, []
        todo = [('', self.clusters(self.root, 0, None))]
        while todo:
            path, clus = todo.pop()
            dirs.append((path, clus))
            ents = self.entries(clus)
            for _, name, st, fe in self.read_sets(ents):
                try:
                    nm = bytes(struct.pack('<%dH' % len(name), *name)).decode('utf-16-le')
                except UnicodeDecodeError:
                    continue
                p = path + '/' + nm
                isdir = u16(fe, 4) & 0x10
                contig = st[1] & 2
                first, dl, vdl = u32(st, 20), u64(st, 24), u64(st, 8)
                try:
                    if dl == 0:
                        cl = []
                    elif dl > self.cc * self.cs:
                        raise Vol.Bad('size')
                    else:
                        cl = self.clusters(first, contig, -(-dl // self.cs))
                except Vol.Bad:
                    continue
                if isdir:
                    if cl and dl % self.cs == 0:
                        files[p] = None
                        todo.append((p, cl))
                    continue
                data = b''.join(self.d[self.coff(c):self.coff(c) + self.cs] for c in cl)
                files[p] = data[:min(vdl, dl)] + bytes(max(0, dl - vdl))
        return files, dirs

    def label(self):
        """The first in-use label entry of the root (32 bytes) or None."""
        for _, e in self.entries(self.clusters(self.root, 0, None)):
            if e[0] == 0x00:
                return None
            if e[0] == 0x83:
                return e
        return None


def label_ok(e):
    n = e[1]
    if n > 11 or any(e[24:32]):
        return False
    chars = struct.unpack('<11H', e[2:24])
    if any(c < 0x20 or chr(c) in '"*/:<>?\\|' for c in chars[:n]):
        return False
    return True


# ---- damage ----

TYPES = [0x85, 0xC0, 0xC1, 0x83, 0x81, 0x82, 0x03, 0x05, 0x40, 0x41, 0xA0, 0xA1, 0xA2, 0xE0, 0xE1,
         0x86, 0x8A, 0x9F, 0xC2, 0xC7, 0xDF, 0xA5, 0xE5, 0x00]


def damage(rng, img, mode):
    """Damage 1-3 directory sectors of img (a bytearray); returns a description."""
    v = Vol(bytes(img))
    _, dirs = v.tree()
    ss = v.ss
    keep = {}                       # offset -> bytes of the bitmap / up-case entries
    root_ents = v.entries(v.clusters(v.root, 0, None))
    for off, e in root_ents:
        if e[0] in (0x81, 0x82):
            keep[off] = e
    sectors = []                    # (lba offset, directory entries list, index of first)
    for _, clus in dirs:
        ents = v.entries(clus)
        per = ss // 32
        for s in range(0, len(ents), per):
            used = any(e[0] & 0x80 for _, e in ents[s:s + per])
            sectors.append((ents[s][0], ents, s, used))
    used = [x for x in sectors if x[3]]
    picks = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        pool = used if used and rng.random() < 0.85 else sectors
        picks.append(rng.choice(pool))
    firsts = []
    for _, clus in dirs:
        for _, _, st, _ in v.read_sets(v.entries(clus)):
            firsts.append(u32(st, 20))
    desc = []
    for off, ents, s, _ in picks:
        per = ss // 32
        if mode == 'bytes':
            kind = rng.random()
            if kind < 0.5:
                img[off:off + ss] = rng.randbytes(ss)
                desc.append('random sector @%#x' % off)
            else:
                # random entries whose type bytes are in use and plausible
                for i in range(per):
                    e = bytearray(rng.randbytes(32))
                    e[0] = rng.choice(TYPES + [0x85, 0xC0, 0xC1] * 3) | 0x80
                    img[off + 32 * i:off + 32 * i + 32] = e
                desc.append('random in-use entries @%#x' % off)
        else:
            n = 0
            for i in range(s, min(s + per, len(ents))):
                eo = ents[i][0]
                e = bytearray(img[eo:eo + 32])
                if e[0] in (0x81, 0x82) or rng.random() > 0.4:
                    continue
                n += 1
                desc.append(mutate(rng, v, e, firsts) + '@%#x' % eo)
                img[eo:eo + 32] = e
            if not n:
                i = rng.randrange(s, min(s + per, len(ents)))
                eo = ents[i][0]
                e = bytearray(img[eo:eo + 32])
                if e[0] not in (0x81, 0x82):
                    desc.append(mutate(rng, v, e, firsts) + '@%#x' % eo)
                    img[eo:eo + 32] = e
            if rng.random() < 0.6:
                resum(img, ents, s, per)
                desc.append('checksums recomputed')
    for off, e in keep.items():
        img[off:off + 32] = e
    return '; '.join(desc)


def mutate(rng, v, e, firsts):
    t = e[0]
    r = rng.random()
    if r < 0.25:
        e[0] = rng.choice(TYPES)
        return 'type %#x->%#x' % (t, e[0])
    if r < 0.35:
        e[0] ^= 0x80
        return 'in-use flip %#x' % t
    if t == 0x85:
        k = rng.randrange(4)
        if k == 0:
            e[1] = rng.choice((0, 1, 2, 3, 4, 17, 18, 255, max(0, e[1] - 1), e[1] + 1 & 0xFF))
            return 'secondary count %d' % e[1]
        if k == 1:
            a = u16(e, 4) ^ 0x10 if rng.random() < 0.5 else rng.randrange(65536)
            e[4:6] = struct.pack('<H', a)
            return 'attributes %#x' % a
        if k == 2:
            e[2:4] = rng.randbytes(2)
            return 'checksum'
        e[8:20] = rng.randbytes(12)
        return 'times'
    if t == 0xC0:
        k = rng.randrange(6)
        cs = v.cs
        if k == 0:
            c = rng.choice((0, 1, 2, rng.randrange(2, v.cc + 2), rng.choice(firsts or [2]),
                            v.cc + 2, 0xFFFFFFFF, rng.randrange(1 << 32)))
            e[20:24] = struct.pack('<I', c)
            return 'first cluster %d' % c
        if k in (1, 2):
            dl = u64(e, 24)
            x = rng.choice((0, 1, dl - 1 if dl else 0, dl + 1, dl // 2, dl + cs, dl + 7 * cs,
                            1 << 63, rng.randrange(1 << 64), (v.cc + 5) * cs, cs))
            if k == 1 or rng.random() < 0.5:
                e[24:32] = struct.pack('<Q', x)
            if k == 2 or rng.random() < 0.5:
                e[8:16] = struct.pack('<Q', rng.choice((x, dl, 0)))
            return 'sizes'
        if k == 3:
            e[3] = rng.choice((0, 1, max(0, e[3] - 1), e[3] + 1 & 0xFF, e[3] + 15 & 0xFF,
                               rng.randrange(256)))
            return 'name length %d' % e[3]
        if k == 4:
            e[1] = rng.choice((0, 1, 2, 3, rng.randrange(256)))
            return 'stream flags %#x' % e[1]
        e[4:6] = rng.randbytes(2)
        return 'name hash'
    if t == 0xC1:
        j = rng.randrange(15)
        ch = rng.choice((0, ord('/'), ord(':'), 0x41, 0x2E, rng.randrange(65536)))
        e[2 + 2 * j:4 + 2 * j] = struct.pack('<H', ch)
        return 'name char %#x' % ch
    if t == 0x83:
        k = rng.randrange(3)
        if k == 0:
            e[1] = rng.randrange(256)
        elif k == 1:
            e[2:24] = rng.randbytes(22)
        else:
            e[24:32] = rng.randbytes(8)
        return 'label'
    e[1:32] = rng.randbytes(31)
    return 'bytes of %#x' % t


def resum(img, ents, s, per):
    """Recompute the checksum of every file set that has an entry in entries s .. s+per."""
    for i in range(max(0, s - 18), min(s + per, len(ents))):
        off = ents[i][0]
        if img[off] != 0x85:
            continue
        n = img[off + 1]
        if n < 1 or i + n >= len(ents) or i + n < s:
            continue
        raw = b''.join(bytes(img[o:o + 32]) for o, _ in ents[i:i + n + 1])
        img[off + 2:off + 4] = struct.pack('<H', set_sum(raw))


# ---- running the checkers ----

def run(cmd, timeout=120):
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return 124, b'timeout'


def fsck_clean(path):
    rc, out = run(['fsck.exfat', '-n', path])
    ok = rc == 0 and b': clean. directories' in out and not re.search(rb'^ERROR|\(y/N\)', out,
                                                                      re.M)
    return ok, out


def strip_vendor(img):
    """Remove well-formed vendor entries (benign primaries with their sets, benign
    secondaries of file sets) from img (bytearray); returns how many."""
    v = Vol(bytes(img))
    _, dirs = v.tree()
    n = 0
    for _, clus in dirs:
        ents = v.entries(clus)
        i = 0
        while i < len(ents):
            off, e = ents[i]
            t = img[off]
            if t == 0:
                break
            if 0xA0 <= t <= 0xBF:
                k = img[off + 1]
                raw = b''.join(bytes(img[o:o + 32]) for o, _ in ents[i:i + k + 1])
                if (i + k >= len(ents) or set_sum(raw) != u16(raw, 2) or
                        any(img[o] < 0xE0 for o, _ in ents[i + 1:i + k + 1])):
                    i += 1
                    continue
                for j in range(i, i + k + 1):
                    img[ents[j][0]] &= 0x7F
                n += 1
                i += k + 1
                continue
            if t == 0x85:
                k = img[off + 1]
                raw = b''.join(bytes(img[o:o + 32]) for o, _ in ents[i:i + k + 1])
                if 2 <= k <= 18 and i + k < len(ents) and set_sum(raw) == u16(raw, 2):
                    keep = [j for j in range(i + 1, i + k + 1) if img[ents[j][0]] < 0xE0]
                    if len(keep) < k:
                        for j in range(i + 1, i + k + 1):
                            if img[ents[j][0]] >= 0xE0:
                                img[ents[j][0]] &= 0x7F
                        # the benign secondaries follow the names: the set ends before them
                        img[off + 1] = len(keep)
                        raw = b''.join(bytes(img[o:o + 32]) for o, _ in ents[i:i + len(keep) + 1])
                        img[off + 2:off + 4] = struct.pack('<H', set_sum(raw))
                        n += 1
                    i += k + 1
                    continue
            i += 1
    return n


def one_seed(sf, base, work, seed, orig, olabel):
    rng = random.Random(seed)
    mode = 'bytes' if seed % 2 else 'entries'
    img = bytearray(base)
    what = damage(rng, img, mode)
    a, b = os.path.join(work, 'a.img'), os.path.join(work, 'b.img')
    with open(a, 'wb') as f:
        f.write(img)
    shutil.copyfile(a, b)
    bad = []
    run(['fsck.exfat', '-y', a])
    try:
        fa, _ = Vol(open(a, 'rb').read()).tree()
    except Exception:                      # noqa: BLE001 - a volume fsck.exfat gave up on
        fa = {}
    kept = [p for p, d in orig.items() if d is not None and fa.get(p) == d]
    rc, out = run([sf, 'fsck', '--repair', b])
    if SAN.search(out):
        return mode, 'fail', what, ['sanitizer report from fsck --repair'], out
    if rc not in (0, 1):
        bad.append('fsck --repair exited %d' % rc)
    rc2, out2 = run([sf, 'fsck', b])
    if SAN.search(out2):
        return mode, 'fail', what, ['sanitizer report from fsck'], out + out2
    if rc2 != 0:
        bad.append('second streamfat fsck exited %d' % rc2)
    clean, fout = fsck_clean(b)
    vendor = False
    if not clean:
        c = bytearray(open(b, 'rb').read())
        if strip_vendor(c):
            cp = os.path.join(work, 'c.img')
            with open(cp, 'wb') as f:
                f.write(c)
            vendor, _ = fsck_clean(cp)
        if not vendor:
            bad.append('fsck.exfat -n not clean')
    try:
        vb = Vol(open(b, 'rb').read())
        fb, _ = vb.tree()
        lab = vb.label()
    except Exception as x:                 # noqa: BLE001
        fb, lab = {}, None
        bad.append('B unreadable: %s' % x)
    lost = [p for p in kept if fb.get(p) != orig[p]]
    if lost:
        bad.append('%d files fsck.exfat -y kept are lost or differ: %s' % (len(lost), lost[:4]))
    if lab is not None and not label_ok(lab):
        bad.append('label taken from a damaged entry')
    info = b''
    if bad:
        info = out + b'\n--- second fsck:\n' + out2 + b'\n--- fsck.exfat -n:\n' + fout
        return mode, 'fail', what, bad, info
    if vendor:
        return mode, 'vendor', what, [], fout
    return mode, 'pass', what, [], b''


def main():
    if sys.argv[1] == 'check':
        base, src = sys.argv[2], sys.argv[3]
        files, _ = Vol(open(base, 'rb').read()).tree()
        want = {}
        for dp, dn, fn in os.walk(src):
            rel = dp[len(src):]
            for d in dn:
                want[rel + '/' + d] = None
            for f in fn:
                want[rel + '/' + f] = open(os.path.join(dp, f), 'rb').read()
        if files != want:
            print('reader and source differ:', sorted(set(files) ^ set(want)),
                  [p for p in files if p in want and files[p] != want[p]])
            sys.exit(1)
        print('reader: %d entries, identical to %s' % (len(files), src))
        return
    base_path, work, first, count = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    sf = os.environ['SF']
    base = open(base_path, 'rb').read()
    v = Vol(base)
    orig, _ = v.tree()
    olabel = v.label()
    stats = {}
    failed = 0
    verbose = os.environ.get('SF_RANDOM_VERBOSE')
    for seed in range(first, first + count):
        mode, verdict, what, bad, info = one_seed(sf, base, work, seed, orig, olabel)
        st = stats.setdefault(mode, {'pass': 0, 'vendor': 0, 'fail': 0})
        st[verdict] += 1
        if verdict == 'fail':
            failed += 1
            print('FAIL seed %d (%s: %s): %s' % (seed, mode, what, '; '.join(bad)))
            if verbose:
                sys.stdout.write(info.decode('utf-8', 'replace')[-3000:] + '\n')
        elif verdict == 'vendor':
            print('listed seed %d (%s): only a well-formed vendor entry that fsck.exfat does '
                  'not know' % (seed, mode))
    for mode, st in sorted(stats.items()):
        n = sum(st.values())
        print('%s: %d seeds, %d clean, %d vendor-only (listed), %d failed' %
              (mode, n, st['pass'], st['vendor'], st['fail']))
    print('%d passed, %d failed' % (count - failed, failed))
    sys.exit(1 if failed else 0)


main()
