#!/usr/bin/env python3
"""Damage a small exFAT or FAT32 image in one precise way, for t_fsck_repair.

    fsck_damage.py IMG OP [NAME [NAME2]]

Files are looked up in the root directory by name (exFAT: the full name; FAT: the 8.3
name as stored, e.g. "A       BIN"). OPs:
  leak             mark one free cluster allocated (bitmap bit / FAT end mark)
  crosslink A B    B's first cluster becomes A's
  loop A           A's chain: its second-to-last cluster links back to its first (exFAT: A
                   leaves NoFatChain, its FAT chain is written)
  size A           A's size grows by 5 clusters past its allocation
  csum A           exFAT: A's entry set checksum is wrong; FAT: A's long-name checksum
  dirty            the volume-dirty flag / FAT[1] clean bit
  bootsum          exFAT: a boot-code byte of the main boot sector changes (checksum wrong);
                   FAT32: the backup boot sector differs
Prints what it did (for the log)."""
import struct
import sys


class Img:
    def __init__(self, path):
        self.f = open(path, 'r+b')
        b = self.rd(0, 512)
        self.exfat = b[3:11] == b'EXFAT   '
        if self.exfat:
            self.ss = 1 << b[108]
            self.cs = self.ss << b[109]
            self.fat_off, _, self.heap, self.cc, self.root = struct.unpack_from('<IIIII', b, 80)
            self.fat_off *= self.ss
            self.heap *= self.ss
            self.nfats, self.fat_len = 1, 0
        else:
            self.ss = struct.unpack_from('<H', b, 11)[0]
            self.cs = self.ss * b[13]
            rsvd, self.nfats = struct.unpack_from('<H', b, 14)[0], b[16]
            self.fat_len = struct.unpack_from('<I', b, 36)[0] * self.ss
            self.fat_off = rsvd * self.ss
            self.heap = self.fat_off + self.nfats * self.fat_len
            self.root = struct.unpack_from('<I', b, 44)[0]
            tot = struct.unpack_from('<I', b, 32)[0]
            self.cc = (tot * self.ss - self.heap) // self.cs

    def rd(self, off, n):
        self.f.seek(off)
        return self.f.read(n)

    def wr(self, off, data):
        self.f.seek(off)
        self.f.write(data)

    def coff(self, c):
        return self.heap + (c - 2) * self.cs

    def fat(self, c):
        v = struct.unpack('<I', self.rd(self.fat_off + 4 * c, 4))[0]
        return v if self.exfat else v & 0x0FFFFFFF

    def set_fat(self, c, v):
        for i in range(self.nfats):
            self.wr(self.fat_off + i * self.fat_len + 4 * c, struct.pack('<I', v))

    # ---- exFAT ----
    def bitmap_off(self):
        for off, e in self.root_entries():
            if e[0] == 0x81:
                return self.coff(struct.unpack_from('<I', e, 20)[0])
        sys.exit('no bitmap')

    def bit(self, c):
        return (self.rd(self.bitmap_off() + (c - 2) // 8, 1)[0] >> ((c - 2) % 8)) & 1

    def set_bit(self, c):
        o = self.bitmap_off() + (c - 2) // 8
        self.wr(o, bytes([self.rd(o, 1)[0] | 1 << ((c - 2) % 8)]))

    def root_entries(self):
        # The root directory's first cluster is enough for these small test volumes.
        base = self.coff(self.root)
        d = self.rd(base, self.cs)
        for i in range(self.cs // 32):
            yield base + 32 * i, d[32 * i:32 * i + 32]

    def xset(self, name):
        ents = list(self.root_entries())
        for i, (off, e) in enumerate(ents):
            if e[0] != 0x85:
                continue
            n = e[1]
            st = ents[i + 1][1]
            nl = st[3]
            chars = b''.join(ents[i + 2 + j][1][2:32] for j in range((nl + 14) // 15))
            if chars[:2 * nl].decode('utf-16-le') == name:
                return off, n
        sys.exit(f'{name}: not found')

    def xfix(self, off, n):
        s = bytearray(self.rd(off, 32 * (n + 1)))
        c = 0
        for i, b in enumerate(s):
            if i in (2, 3):
                continue
            c = (((c & 1) << 15) | (c >> 1)) + b & 0xFFFF
        s[2:4] = struct.pack('<H', c)
        self.wr(off, bytes(s))

    # ---- FAT ----
    def fentry(self, name):
        base = self.coff(self.root)
        d = self.rd(base, self.cs)
        for i in range(self.cs // 32):
            e = d[32 * i:32 * i + 32]
            if e[11] != 0x0F and e[:11] == name.encode():
                return base + 32 * i, i
        sys.exit(f'{name}: not found')

    # ---- common: (first cluster, size, entry offset to patch) ----
    def file(self, name):
        if self.exfat:
            off, n = self.xset(name)
            st = self.rd(off + 32, 32)
            return struct.unpack_from('<I', st, 20)[0], struct.unpack_from('<Q', st, 24)[0], off, n
        off, _ = self.fentry(name)
        e = self.rd(off, 32)
        first = struct.unpack_from('<H', e, 26)[0] | struct.unpack_from('<H', e, 20)[0] << 16
        return first, struct.unpack_from('<I', e, 28)[0], off, 0

    def set_file(self, name, first=None, size=None, flags=None):
        f0, s0, off, n = self.file(name)
        if self.exfat:
            st = bytearray(self.rd(off + 32, 32))
            if first is not None:
                st[20:24] = struct.pack('<I', first)
            if size is not None:
                st[24:32] = struct.pack('<Q', size)
                st[8:16] = struct.pack('<Q', size)
            if flags is not None:
                st[1] = flags
            self.wr(off + 32, bytes(st))
            self.xfix(off, n)
        else:
            e = bytearray(self.rd(off, 32))
            if first is not None:
                e[26:28] = struct.pack('<H', first & 0xFFFF)
                e[20:22] = struct.pack('<H', first >> 16)
            if size is not None:
                e[28:32] = struct.pack('<I', size)
            self.wr(off, bytes(e))

    def clusters(self, name):
        first, size, _, _ = self.file(name)
        n = (size + self.cs - 1) // self.cs
        return [first + i for i in range(n)]  # streamfat writes these files contiguously


def main():
    img, op, args = Img(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if op == 'leak':
        for c in range(img.cc + 1, 2, -1):
            if (img.exfat and not img.bit(c)) or (not img.exfat and img.fat(c) == 0):
                if img.exfat:
                    img.set_bit(c)
                else:
                    img.set_fat(c, 0x0FFFFFFF)
                print(f'cluster {c} allocated')
                return
        sys.exit('no free cluster')
    if op == 'crosslink':
        a = img.file(args[0])[0]
        img.set_file(args[1], first=a)
        print(f'{args[1]} starts at {a}, as {args[0]}')
    elif op == 'loop':
        cl = img.clusters(args[0])
        if len(cl) < 3:
            sys.exit('file too small')
        for x, y in zip(cl, cl[1:]):
            img.set_fat(x, y)
        img.set_fat(cl[-2], cl[0])
        if img.exfat:
            img.set_file(args[0], flags=0x01)
        print(f'{args[0]}: cluster {cl[-2]} links back to {cl[0]}')
    elif op == 'size':
        _, size, _, _ = img.file(args[0])
        cl = img.clusters(args[0])
        img.set_file(args[0], size=len(cl) * img.cs + 5 * img.cs)
        print(f'{args[0]}: size {size} -> {len(cl) * img.cs + 5 * img.cs}')
    elif op == 'csum':
        if img.exfat:
            off, _ = img.xset(args[0])
            e = bytearray(img.rd(off, 32))
            e[2] ^= 0x55
            img.wr(off, bytes(e))
        else:
            off, _ = img.fentry(args[0])
            lfn = bytearray(img.rd(off - 32, 32))
            if lfn[11] != 0x0F:
                sys.exit('no long name')
            lfn[13] ^= 0x55
            img.wr(off - 32, bytes(lfn))
        print(f'{args[0]}: checksum damaged')
    elif op == 'dirty':
        if img.exfat:
            b = bytearray(img.rd(0, 512))
            b[106] |= 2
            img.wr(0, bytes(b))
        else:
            img.set_fat(1, img.fat(1) & ~0x08000000)
        print('dirty')
    elif op == 'bootsum':
        if img.exfat:
            b = bytearray(img.rd(0, 512))
            b[0x1F0] ^= 0xA5
            img.wr(0, bytes(b))
        else:
            bk = struct.unpack_from('<H', img.rd(0, 512), 50)[0]
            b = bytearray(img.rd(bk * img.ss, 512))
            b[71] ^= 0x20                      # BS_VolLab: a BPB field, not boot code
            img.wr(bk * img.ss, bytes(b))
        print('boot region damaged')
    else:
        sys.exit(f'unknown op {op}')


main()
