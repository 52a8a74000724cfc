#!/usr/bin/env python3
"""Generate src/util/upcase_table.c: streamfat's built-in exFAT up-case table.

Mapping: every BMP code unit c outside the surrogates D800-DFFF maps to chr(c).upper()
when that is one BMP character other than c (Unicode's 1:1 upper-case mappings), else to
itself. Surrogates map to themselves.

Output:
  - sf_upcase_table[]: the table in exFAT's compressed on-disk form (spec 7.2.5.1): a run of
    identity mappings is stored as 0xFFFF followed by the run length. A run is compressed
    when that saves space (3 units or more) and always when it contains U+FFFF, whose
    identity mapping could not be stored literally.
  - sf_upcase_table_units, sf_upcase_table_checksum (exFAT TableChecksum over the LE bytes).
  - the lookup for sf_upcase_builtin(): (lo, hi, delta, step) rows, sorted by lo; c in
    [lo, hi] with (c - lo) % step == 0 maps to c + delta (mod 2^16). Packed for
    flash-limited targets: rows of one code unit (most of them, and most with a delta of
    their own) as sorted pairs sf_upcase_one_from[] -> sf_upcase_one_to[]; the longer rows
    in 4 bytes each, sf_upcase_lo[] (lo, searched) and sf_upcase_row[] (hi - lo in bits 0-7,
    step 2 in bit 8, index into sf_upcase_delta[] in bits 9-15), their few distinct deltas
    stored once (sf_upcase_delta[]).

Deterministic: the output depends only on the Unicode database of the Python that runs it
(recorded in the file's header). Usage: scripts/gen_upcase.py > src/util/upcase_table.c
"""
import sys
import unicodedata


def mapping():
    m = list(range(65536))
    for c in range(65536):
        if 0xD800 <= c <= 0xDFFF:
            continue
        u = chr(c).upper()
        if len(u) == 1 and ord(u) <= 0xFFFF and ord(u) != c:
            m[c] = ord(u)
    return m


def compress(m):
    out = []
    c = 0
    while c < 65536:
        if m[c] != c:
            out.append(m[c])
            c += 1
            continue
        e = c
        while e < 65536 and m[e] == e:
            e += 1
        run = e - c
        if run >= 3 or e == 65536:
            while run > 0:                    # a count is one u16; split longer runs
                n = min(run, 0xFFFF)
                out += [0xFFFF, n]
                run -= n
        else:
            out += list(range(c, e))
        c = e
    return out


def expand(t):
    m = []
    i = 0
    while i < len(t):
        if t[i] == 0xFFFF:
            m += [len(m) + k for k in range(t[i + 1])]
            i += 2
        else:
            m.append(t[i])
            i += 1
    return m


def checksum(t):
    s = 0
    for u in t:
        for b in (u & 0xFF, u >> 8):
            s = (((s & 1) and 0x80000000) + (s >> 1) + b) & 0xFFFFFFFF
    return s


def ranges(m):
    pairs = [(c, m[c]) for c in range(65536) if m[c] != c]
    rows = []
    for c, u in pairs:
        d = (u - c) & 0xFFFF
        if rows:
            lo, hi, rd, step = rows[-1]
            if rd == d and (step == 0 and c - hi in (1, 2) or step and c - hi == step):
                rows[-1] = [lo, c, rd, c - hi]
                continue
        rows.append([c, c, d, 0])
    for r in rows:
        if r[3] == 0:
            r[3] = 1
    return rows


def lookup(rows, c):
    lo_i, hi_i = 0, len(rows)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if rows[mid][0] <= c:
            lo_i = mid + 1
        else:
            hi_i = mid
    if lo_i == 0:
        return c
    lo, hi, d, step = rows[lo_i - 1]
    if c <= hi and (c - lo) % step == 0:
        return (c + d) & 0xFFFF
    return c


def pack(rows):
    """(one_from, one_to, lo list, packed row list, delta list) for the rows; asserts that
    they fit."""
    ones = [r for r in rows if r[0] == r[1]]
    longer = [r for r in rows if r[0] != r[1]]
    one_from = [r[0] for r in ones]
    one_to = [(r[0] + r[2]) & 0xFFFF for r in ones]
    deltas = sorted(set(r[2] for r in longer))
    assert len(deltas) <= 128, "more distinct deltas than 7 bits index"
    los, packed = [], []
    for lo, hi, d, step in longer:
        assert hi - lo <= 255 and step in (1, 2), (lo, hi, step)
        los.append(lo)
        packed.append((hi - lo) | (step - 1) << 8 | deltas.index(d) << 9)
    return one_from, one_to, los, packed, deltas


def upto(keys, c):
    """How many of the sorted keys are <= c (the binary search of src/util/upcase.c)."""
    lo_i, hi_i = 0, len(keys)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if keys[mid] <= c:
            lo_i = mid + 1
        else:
            hi_i = mid
    return lo_i


def lookup_packed(one_from, one_to, los, packed, deltas, c):
    """What src/util/upcase.c computes from the packed form."""
    i = upto(one_from, c)
    if i and one_from[i - 1] == c:
        return one_to[i - 1]
    lo_i = upto(los, c)
    if lo_i == 0:
        return c
    off, row = c - los[lo_i - 1], packed[lo_i - 1]
    if off <= (row & 0xFF) and not (off & (row >> 8 & 1)):
        return (c + deltas[row >> 9]) & 0xFFFF
    return c


def u16_array(w, name, values):
    """A const uint16_t array definition, ten values per line."""
    w("const uint16_t %s[%d] = {\n" % (name, len(values)))
    for i in range(0, len(values), 10):
        w("    " + ", ".join("0x%04X" % v for v in values[i:i + 10]) + ",\n")
    w("};\n")


def main():
    m = mapping()
    t = compress(m)
    assert expand(t) == m
    rows = ranges(m)
    assert all(lookup(rows, c) == m[c] for c in range(65536))
    one_from, one_to, los, packed, deltas = pack(rows)
    assert all(lookup_packed(one_from, one_to, los, packed, deltas, c) == m[c]
               for c in range(65536))
    w = sys.stdout.write
    w("/* Generated by scripts/gen_upcase.py - do not edit.\n")
    w(" * Python %s, Unicode database %s.\n" % (sys.version.split()[0], unicodedata.unidata_version))
    w(" * The built-in exFAT up-case table: compressed on-disk form, its checksum, and a range\n")
    w(" * table for sf_upcase_builtin() (see upcase.h). */\n")
    w('#include "util/upcase.h"\n\n')
    w("const uint32_t sf_upcase_table_units = %d;\n" % len(t))
    w("const uint32_t sf_upcase_table_checksum = 0x%08Xu;\n\n" % checksum(t))
    u16_array(w, "sf_upcase_table", t)
    w("\n")
    w("/* Rows of one code unit: from, sorted ... */\n")
    u16_array(w, "sf_upcase_one_from", one_from)
    w("/* ... and to. */\n")
    u16_array(w, "sf_upcase_one_to", one_to)
    w("const uint32_t sf_upcase_one_count = %d;\n\n" % len(one_from))
    w("/* Longer rows (lo, hi, delta mod 2^16, step) packed: the first code unit of each ... */\n")
    u16_array(w, "sf_upcase_lo", los)
    w("/* ... hi - lo | (step - 1) << 8 | delta index << 9 ... */\n")
    u16_array(w, "sf_upcase_row", packed)
    w("/* ... and the distinct deltas (mod 2^16). */\n")
    u16_array(w, "sf_upcase_delta", deltas)
    w("const uint32_t sf_upcase_range_count = %d;\n" % len(los))


if __name__ == "__main__":
    main()
