"""Random DBC signals (Intel and Motorola, signed and unsigned, 1..64 bits, in 8- and 64-byte
frames) decoded by cantools from a generated DBC and by the logger's control stage
(tests/helpers/ctl_signal): the raw values must agree.

    ctl_signals.py HELPER SEED COUNT
"""
import random
import subprocess
import sys

import cantools


def main():
    helper, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    specs = []
    for i in range(count):
        size = 8 if rnd.random() < 0.7 else 64
        length = rnd.choice([1, 2, 7, 8, 9, 12, 16, 31, 32, 33, 48, 63, 64]
                            + [rnd.randint(1, 64)])
        mot = rnd.random() < 0.5
        signed = rnd.random() < 0.5
        span = size * 8
        if mot:
            # DBC's Motorola start is the MSB; in big-endian bit order it sits at lin
            lin = rnd.randint(0, span - length)
            start = (lin // 8) * 8 + 7 - lin % 8
        else:
            start = rnd.randint(0, span - length)
        data = bytes(rnd.getrandbits(8) for _ in range(size))
        specs.append((start, length, mot, signed, size, data))
    lines = ["VERSION \"\"", "NS_ :", "BS_:", "BU_: N"]
    for i, (start, length, mot, signed, size, data) in enumerate(specs):
        lines.append("BO_ %d M%d: %d N" % (i + 1, i, size))
        lines.append(" SG_ s : %d|%d@%d%s (1,0) [0|0] \"\" N"
                     % (start, length, 0 if mot else 1, "-" if signed else "+"))
    db = cantools.database.load_string("\n".join(lines) + "\n", database_format="dbc",
                                       strict=False)
    inp = "".join("%d %d %d %d %s\n" % (s, l, m, g, d.hex())
                  for (s, l, m, g, _, d) in specs)
    out = subprocess.run([helper], input=inp, capture_output=True, text=True, check=True,
                         timeout=60).stdout.split("\n")
    bad = 0
    for i, (start, length, mot, signed, size, data) in enumerate(specs):
        want = db.get_message_by_frame_id(i + 1).decode(data, scaling=False)["s"]
        got = out[i]
        if got != str(int(want)):
            bad += 1
            if bad <= 10:
                print("signal %d: start %d length %d %s %s, data %s: core %s, cantools %s"
                      % (i, start, length, "be" if mot else "le", "s" if signed else "u",
                         data.hex(), got, want), file=sys.stderr)
    print("%d signals (seed %d): %d differ" % (count, seed, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
