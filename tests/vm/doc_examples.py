#!/usr/bin/env python3
"""The docs' live-bus examples, for the CAN VM's case 80_doc_examples.

Prints, one a line, every `streamfat log` command of the given Markdown files that reads a
live interface (`--source can:`): README.md's ```sh blocks and the fenced or 4-space
indented blocks of docs/LOG.md, continuation lines joined, trailing comments dropped. The
host's t_readme runs the README's other commands and skips these (no bus there); the VM has
the bus. The target (the last word: card.img, /dev/sdb1, ...) becomes d.img.

usage: doc_examples.py FILE.md...
"""
import re
import sys


def blocks(text):
    """The code blocks of a Markdown text: fenced ones, then 4-space indented ones."""
    out = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)
    prose = re.sub(r"^```[a-z]*\n.*?^```", "", text, flags=re.M | re.S)
    out += ["\n".join(l[4:] for l in m.group(0).splitlines())
            for m in re.finditer(r"(?:^    \S.*\n(?:^     .*\n)*)+", prose, re.M)]
    return out


def commands(block):
    cmd = ""
    for line in block.splitlines():
        line = line.rstrip()
        if cmd:
            cmd += " " + line.strip()
        elif line.startswith("streamfat log"):
            cmd = line
        else:
            continue
        if cmd.endswith("\\"):
            cmd = cmd[:-1].rstrip()
            continue
        yield re.sub(r"\s+#(\s.*)?$", "", cmd)
        cmd = ""


def main():
    n = 0
    for path in sys.argv[1:]:
        for b in blocks(open(path, encoding="utf-8").read()):
            for cmd in commands(b):
                if "--source can:" not in cmd:
                    continue
                words = cmd.split(" ")
                words[-1] = "d.img"
                print(" ".join(words))
                n += 1
    if not n:
        sys.exit("doc_examples: no live-bus example found in " + " ".join(sys.argv[1:]))


main()
