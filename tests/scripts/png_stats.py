#!/usr/bin/env python3
"""png_stats.py FILE [R,G,B ...]: a screenshot is not blank (t_report).

Decodes an 8-bit RGB or RGBA PNG with the standard library alone (zlib and the five PNG
filters) and checks that it is not blank: many colours, some dark pixels (text), and, for
each R,G,B given, at least 200 pixels within 40 of that colour (a chart's series colour: the
canvases were drawn, not just the HTML text). Prints the figures; exit 1 with the reason
when a check fails."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit("%s: unsupported PNG (depth %d, colour type %d)" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            yield bytes(line[x:x + 3])
        prev = line
    return


def main():
    path, wanted = sys.argv[1], [tuple(int(v) for v in a.split(",")) for a in sys.argv[2:]]
    counts, total, dark = {}, 0, 0
    for px in pixels(path):
        total += 1
        counts[px] = counts.get(px, 0) + 1
        dark += sum(px) < 300
    print("%s: %d pixels, %d colours, %.2f%% dark" % (path, total, len(counts), 100.0 * dark / total))
    if len(counts) < 16:
        raise SystemExit("%s: blank: %d colours" % (path, len(counts)))
    if not 0.001 < dark / total < 0.6:
        raise SystemExit("%s: blank: %.4f of the pixels dark" % (path, dark / total))
    for want in wanted:
        n = sum(k for px, k in counts.items() if all(abs(px[i] - want[i]) <= 40 for i in range(3)))
        print("%s: %d pixels near %s" % (path, n, want))
        if n < 200:
            raise SystemExit("%s: the colour %s is missing (a chart was not drawn)" % (path, want))


main()
