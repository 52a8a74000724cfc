#!/usr/bin/env python3
"""Seeded random damage of FAT16/FAT32 directory sectors against `streamfat fsck --repair`,
for t_fsck_random_fat (issue 15, item 2).

    fsck_random.py --sf STREAMFAT --fs fat16|fat32 --seeds FIRST:COUNT --work DIR

A base volume per file system is made once (streamfat mkfs, a tree copied in by mtools:
subdirectories two deep, short, lower-case and long names, files of 0 B .. 12 KiB of
known content). Each seed then damages 1-3 directory sectors (root and subdirectories) in
one of two modes:
  bytes    random bytes over the whole sector;
  entries  plausible entries with wrong first bytes, attributes (volume label, reserved
           bits, long-name), first clusters (0, 1, past the volume, another file's), sizes,
           names (forbidden characters, dots) and long-name parts.
Copy A goes through `fsck.fat -a`; copy B through `streamfat fsck --repair`. Verdicts (a
seed passes with none): the repair exits 0 or 1; `fsck.fat -n` on B clean (exit 0, no remark
beyond the summary); a second `streamfat fsck` on B exits 0; every file A still holds under
its original path with its original bytes B holds too; B's boot label is the original one
or "NO NAME" (a label never comes from a damaged entry).
The files on A and B are read by a reader of its own below (8.3 + long names, FAT chains),
not by streamfat. Prints one line per failing seed and a summary; exits 1 on any failure.
Standard library only."""
import argparse
import mmap
import os
import random
import shutil
import struct
import subprocess
import sys
import time

LABEL = b'RNDLABEL   '


def run(cmd, timeout=60):
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        return 124, 'timeout'


# ---- a small FAT reader ---------------------------------------------------------------------

class Fat:
    def __init__(self, img):
        self.img = img
        b = img[:512]
        self.ss = struct.unpack_from('<H', b, 11)[0]
        self.spc = b[13]
        self.cs = self.ss * self.spc
        rsvd = struct.unpack_from('<H', b, 14)[0]
        self.nfats = b[16]
        re = struct.unpack_from('<H', b, 17)[0]
        tot = struct.unpack_from('<H', b, 19)[0] or struct.unpack_from('<I', b, 32)[0]
        fsz = struct.unpack_from('<H', b, 22)[0]
        self.fat32 = fsz == 0
        if self.fat32:
            fsz = struct.unpack_from('<I', b, 36)[0]
            self.root_clus = struct.unpack_from('<I', b, 44)[0]
            self.label_off = 71
        else:
            self.root_clus = 0
            self.label_off = 43
        self.fat_off = rsvd * self.ss
        self.root_off = self.fat_off + self.nfats * fsz * self.ss
        self.root_n = re
        self.heap = self.root_off + (re * 32 + self.ss - 1) // self.ss * self.ss
        self.cc = (tot * self.ss - self.heap) // self.cs

    def label(self):
        return bytes(self.img[self.label_off:self.label_off + 11])

    def fat(self, c):
        if self.fat32:
            return struct.unpack_from('<I', self.img, self.fat_off + 4 * c)[0] & 0x0FFFFFFF
        return struct.unpack_from('<H', self.img, self.fat_off + 2 * c)[0]

    def eoc(self, v):
        return v >= (0x0FFFFFF8 if self.fat32 else 0xFFF8)

    def chain(self, first, limit=None):
        out, c = [], first
        seen = set()
        while 2 <= c < self.cc + 2 and c not in seen:
            seen.add(c)
            out.append(c)
            if limit is not None and len(out) >= limit:
                break
            c = self.fat(c)
        return out

    def coff(self, c):
        return self.heap + (c - 2) * self.cs

    def dir_sectors(self, first):
        """Byte offsets of the sectors of a directory (first 0: the FAT16 root)."""
        if first == 0 and not self.fat32:
            return [self.root_off + i * self.ss for i in range(self.root_n * 32 // self.ss)]
        return [self.coff(c) + i * self.ss for c in self.chain(first) for i in range(self.spc)]

    def entries(self, first):
        """(name, entry bytes) of each file or directory, long names resolved."""
        out, lfn, lsum = [], {}, None
        for off in self.dir_sectors(first):
            for i in range(0, self.ss, 32):
                e = bytes(self.img[off + i:off + i + 32])
                # 0x00 is a free entry, not the end: fsck.fat and Linux read on past it.
                if e[0] in (0, 0xE5):
                    lfn, lsum = {}, None
                    continue
                if e[11] == 0x0F:
                    if e[0] & 0x40:
                        lfn, lsum = {}, e[13]
                    if e[13] == lsum:
                        lfn[e[0] & 0x1F] = e[1:11] + e[14:26] + e[28:32]
                    continue
                if e[11] & 0x08 or e[:2] in (b'. ', b'..'):
                    lfn, lsum = {}, None
                    continue
                s = 0
                for ch in e[:11]:
                    s = (((s & 1) << 7) + (s >> 1) + ch) & 0xFF
                name = None
                if lfn and s == lsum and sorted(lfn) == list(range(1, len(lfn) + 1)):
                    raw = b''.join(lfn[j] for j in sorted(lfn))
                    name = raw.decode('utf-16-le', 'replace').split('\0')[0]
                if not name:
                    base = e[:8].rstrip(b' ')
                    ext = e[8:11].rstrip(b' ')
                    if base[:1] == b'\x05':
                        base = b'\xe5' + base[1:]
                    if e[12] & 0x08:
                        base = base.lower()
                    if e[12] & 0x10:
                        ext = ext.lower()
                    name = base.decode('latin-1') + ('.' + ext.decode('latin-1') if ext else '')
                lfn, lsum = {}, None
                out.append((name, e))
        return out

    def tree(self):
        """{path: bytes} of every file; directories walked once each."""
        files, seen = {}, set()

        def walk(first, prefix, depth):
            if depth > 8 or first in seen:
                return
            seen.add(first)
            for name, e in self.entries(first):
                fc = struct.unpack_from('<H', e, 26)[0]
                if self.fat32:
                    fc |= struct.unpack_from('<H', e, 20)[0] << 16
                if e[11] & 0x10:
                    if 2 <= fc < self.cc + 2:
                        walk(fc, prefix + name + '/', depth + 1)
                    continue
                size = struct.unpack_from('<I', e, 28)[0]
                n = (size + self.cs - 1) // self.cs
                data = b''.join(bytes(self.img[self.coff(c):self.coff(c) + self.cs])
                                for c in self.chain(fc, n)) if n else b''
                files[prefix + name] = data[:size]

        walk(self.root_clus, '/', 0)
        return files

    def all_dirs(self):
        """First cluster of every directory (0: the FAT16 root)."""
        out = [self.root_clus]
        i = 0
        while i < len(out):
            for _, e in self.entries(out[i]):
                fc = struct.unpack_from('<H', e, 26)[0]
                if self.fat32:
                    fc |= struct.unpack_from('<H', e, 20)[0] << 16
                if e[11] & 0x10 and fc not in out:
                    out.append(fc)
            i += 1
        return out

    def first_clusters(self):
        out = []
        for d in self.all_dirs():
            for _, e in self.entries(d):
                fc = struct.unpack_from('<H', e, 26)[0]
                if self.fat32:
                    fc |= struct.unpack_from('<H', e, 20)[0] << 16
                if fc:
                    out.append(fc)
        return out


# ---- the base volume ------------------------------------------------------------------------

def make_tree(root, rng):
    names = ['DATA.BIN', 'readme.txt', 'A long file name number %d.txt', 'Mixed Case.Dat',
             'x%d', 'LOG%04d.SFL', 'notes with spaces %d', 'UPPER%d.TXT', 'ab+c,%d.txt',
             'résumé %d.txt', 'MAKEFILE', 'lower%d.c', 'very_long_name_over_thirteen_chars_%d.bin']
    made = {}

    def fill(d, depth, n):
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            nm = rng.choice(names)
            nm = nm % rng.randrange(100) if '%' in nm else nm
            p = os.path.join(d, nm)
            if os.path.exists(p):
                continue
            size = rng.choice([0, rng.randrange(1, 600), rng.randrange(600, 5000),
                               rng.randrange(5000, 12000)])
            if size == 0 and nm.upper().endswith('.SFL'):
                size = 1    # an empty *.SFL is a failed log start, which repair removes
            data = rng.randbytes(size)
            with open(p, 'wb') as f:
                f.write(data)
            made[os.path.relpath(p, root)] = data
        if depth < 2:
            for j in range(rng.randrange(1, 4) if depth else 4):
                sub = rng.choice(['SUB%d' % j, 'Sub dir %d' % j, 'deeper_directory_%d' % j])
                fill(os.path.join(d, sub), depth + 1, rng.randrange(3, 28))

    fill(root, 0, 12)
    return made


def make_base(args, work):
    rng = random.Random(1515 + (args.fs == 'fat32'))
    tree = os.path.join(work, 'tree')
    shutil.rmtree(tree, ignore_errors=True)
    made = make_tree(tree, rng)
    img = os.path.join(work, 'base.img')
    if os.path.exists(img):
        os.unlink(img)
    if args.fs == 'fat16':
        mk = ['-t', 'fat16', '-c', '2K', '-s', '12M']
    else:
        mk = ['-t', 'fat32', '-c', '512', '-s', '34M']
    rc, out = run([args.sf, 'mkfs', '-q', '-L', LABEL.decode().strip()] + mk + [img])
    if rc:
        sys.exit('mkfs: ' + out)
    env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
    for top in sorted(os.listdir(tree)):
        p = subprocess.run(['mcopy', '-s', '-i', img, os.path.join(tree, top), '::/'],
                           stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
        if p.returncode:
            sys.exit('mcopy: ' + p.stderr.decode())
    rc, out = run(['fsck.fat', '-n', img])
    if rc:
        sys.exit('base volume not clean (fsck.fat):\n' + out)
    rc, out = run([args.sf, 'fsck', img])
    if rc:
        sys.exit('base volume not clean (streamfat):\n' + out)
    with open(img, 'rb') as f:
        base = bytearray(f.read())
    fat = Fat(base)
    files = fat.tree()
    want = {'/' + k: v for k, v in made.items()}
    if files != want:
        sys.exit('reader: base tree differs (%d files read, %d written)' % (len(files), len(want)))
    used = len(base.rstrip(b'\0'))
    used = (used + 4095) // 4096 * 4096
    return base, used, fat, want


# ---- damage ---------------------------------------------------------------------------------

ATTRS = [0x08, 0x0F, 0x10, 0x18, 0x20, 0x28, 0x3F, 0x40, 0x5B, 0x80, 0xDA, 0xFC, 0x16, 0x01,
         0x02, 0x04, 0x30, 0x11]
FIRST = [b'\0', b'\xe5', b'.', b'\x05', b' ', b'a', b'?', b'\x7f', b'\x01', b'A', b'Z', b'\xe5']
BADCH = b'"*+,./:;<=>?[\\]|abc \x01\x7f\xe5'


def damage_entries(rng, sec, fat, firsts):
    s = bytearray(sec)
    for i in range(0, len(s), 32):
        if rng.random() < 0.4:
            continue
        e = bytearray(s[i:i + 32])
        for _ in range(rng.randrange(1, 4)):
            what = rng.randrange(7)
            if what == 0:
                e[0:1] = rng.choice(FIRST)
            elif what == 1:
                e[11] = rng.choice(ATTRS) if rng.random() < 0.7 else rng.randrange(256)
            elif what == 2:
                top = 0x0FFFFFF8 if fat.fat32 else 0xFFF8
                fc = rng.choice([0, 1, rng.randrange(2, fat.cc + 2), fat.cc + 2,
                                 rng.randrange(fat.cc + 2, top), rng.choice(firsts),
                                 top - 1, fat.root_clus])
                struct.pack_into('<H', e, 26, fc & 0xFFFF)
                if fat.fat32:
                    struct.pack_into('<H', e, 20, fc >> 16)
            elif what == 3:
                struct.pack_into('<I', e, 28, rng.choice(
                    [0, 1, rng.randrange(1, 20000), fat.cs * rng.randrange(1, 9), 0xFFFFFFFF,
                     rng.randrange(1 << 32)]))
            elif what == 4:
                for _ in range(rng.randrange(1, 4)):
                    e[rng.randrange(11)] = rng.choice(BADCH)
            elif what == 5:
                e[0:11] = rng.choice([b'.          ', b'..         ', b'.. X       ',
                                      b'.A         '])
            else:
                e[11] = 0x0F
                e[0] = rng.choice([0x41, 0x01, 0x02, 0x43, 0x55, 0x40, 0x00 + rng.randrange(1, 21)])
                e[13] = rng.randrange(256) if rng.random() < 0.5 else e[13]
        s[i:i + 32] = e
    # Sometimes one slot takes a copy of another (duplicate names, shared chains).
    if rng.random() < 0.3:
        a, b = rng.randrange(len(s) // 32), rng.randrange(len(s) // 32)
        s[32 * a:32 * a + 32] = s[32 * b:32 * b + 32]
    return s


def pick_sectors(rng, fat):
    cand = []
    for d in fat.all_dirs():
        secs = fat.dir_sectors(d)
        if d == 0 and not fat.fat32:
            used = (len(fat.entries(0)) * 2 * 32 + fat.ss - 1) // fat.ss + 1
            secs = secs[:used]
        cand.append(secs)
    out = []
    for _ in range(rng.randrange(1, 4)):
        secs = rng.choice(cand)
        # The first sector (dot entries) more often: it is where most damage hurts.
        out.append(secs[0] if rng.random() < 0.35 else rng.choice(secs))
    return sorted(set(out))


# ---- one seed -------------------------------------------------------------------------------

def write_img(path, data, size):
    with open(path, 'wb') as f:
        f.write(data)
        f.truncate(size)


def load(path):
    """The image mapped, not read: most of it is a hole."""
    with open(path, 'rb') as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def fsck_fat_clean(out, rc):
    if rc:
        return False
    for ln in out.splitlines():
        if ln.startswith('fsck.fat ') and '(' in ln:
            continue
        if ' files, ' in ln and ' clusters' in ln:
            continue
        return False
    return True


def one_seed(args, seed, base, used, fat, orig, work):
    rng = random.Random(seed * 2 + (args.fs == 'fat32'))
    mode = 'bytes' if seed % 2 == 0 else 'entries'
    img = bytearray(base[:used])
    firsts = fat.first_clusters()
    secs = pick_sectors(rng, fat)
    for off in secs:
        if mode == 'bytes':
            img[off:off + fat.ss] = rng.randbytes(fat.ss)
        else:
            img[off:off + fat.ss] = damage_entries(rng, base[off:off + fat.ss], fat, firsts)
    size = len(base)
    a, b = os.path.join(work, 'a.img'), os.path.join(work, 'b.img')
    write_img(a, img, size)
    write_img(b, img, size)
    bad = []
    rc, out_a = run(['fsck.fat', '-a', a], timeout=60)
    if rc not in (0, 1):
        # fsck.fat gave up: it keeps nothing we could compare with.
        kept = {}
    else:
        try:
            got = Fat(load(a)).tree()
        except Exception:   # a volume fsck.fat left unreadable for this reader
            got = {}
        kept = {p: v for p, v in orig.items() if got.get(p) == v}
    rc, out_r = run([args.sf, 'fsck', '--repair', b], timeout=120)
    if rc not in (0, 1):
        bad.append('repair exit %d' % rc)
    rc, out_n = run(['fsck.fat', '-n', b], timeout=60)
    if not fsck_fat_clean(out_n, rc):
        bad.append('fsck.fat -n: ' + ' | '.join(ln for ln in out_n.splitlines()[1:6]))
    rc, out_2 = run([args.sf, 'fsck', b], timeout=120)
    if rc != 0:
        bad.append('second fsck exit %d: %s' % (rc, ' | '.join(out_2.splitlines()[:4])))
    for out in (out_r, out_2):
        if 'runtime error:' in out or 'Sanitizer' in out:
            bad.append('sanitizer report: ' + ' | '.join(
                ln for ln in out.splitlines() if 'runtime error' in ln or 'ERROR' in ln)[:300])
    imgb = load(b)
    fb = Fat(imgb)
    if fb.label() not in (LABEL, b'NO NAME    '):
        bad.append('boot label %r' % fb.label())
    try:
        got = fb.tree()
    except Exception as ex:
        got = {}
        bad.append('reader failed on B: %r' % ex)
    lost = [p for p in kept if got.get(p) != kept[p]]
    if lost:
        bad.append('%d of %d files fsck.fat -a keeps lost: %s' % (len(lost), len(kept),
                                                                    ', '.join(lost[:4])))
    if bad and args.keep:
        write_img(os.path.join(args.keep, '%s-%d.img' % (args.fs, seed)), img, size)
        with open(os.path.join(args.keep, '%s-%d.txt' % (args.fs, seed)), 'w') as f:
            f.write('sectors %s\n--- repair\n%s\n--- fsck.fat -n\n%s\n--- fsck.fat -a\n%s\n'
                    % ([(o - fat.heap) / fat.ss for o in secs], out_r, out_n, out_a))
    return mode, bad, len(kept), len(orig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sf', required=True)
    ap.add_argument('--fs', choices=['fat16', 'fat32'], required=True)
    ap.add_argument('--seeds', required=True, help='FIRST:COUNT')
    ap.add_argument('--work', required=True)
    ap.add_argument('--keep', help='directory for failing damaged images')
    args = ap.parse_args()
    first, count = (int(x) for x in args.seeds.split(':'))
    t0 = time.time()
    base, used, fat, orig = make_base(args, args.work)
    stats = {'bytes': [0, 0], 'entries': [0, 0]}
    kept_total = 0
    for seed in range(first, first + count):
        mode, bad, kept, n = one_seed(args, seed, base, used, fat, orig, args.work)
        stats[mode][0] += 1
        kept_total += kept
        if bad:
            stats[mode][1] += 1
            print('FAIL %s seed %d (%s): %s' % (args.fs, seed, mode, '; '.join(bad)), flush=True)
    nf = sum(v[1] for v in stats.values())
    print('%s: %d seeds in %.0f s, %d files; failed: bytes %d/%d, entries %d/%d; files fsck.fat '
          '-a kept per seed: %.1f' % (args.fs, count, time.time() - t0, len(orig),
                                      stats['bytes'][1], stats['bytes'][0],
                                      stats['entries'][1], stats['entries'][0],
                                      kept_total / max(count, 1)), flush=True)
    sys.exit(1 if nf else 0)


main()
