#!/usr/bin/env python3
"""Worst stack depth of a linked reference program (scripts/size.sh, `make size`).

    size_stack.py ENTRY NM_OUTPUT CI_FILE...

GCC's -fcallgraph-info=su writes one .ci file per object: a node per function defined
there (with its frame size from -fstack-usage: "N bytes (static|dynamic|dynamic,bounded)")
and an edge per direct call. This walks the graph from ENTRY over the functions the linked
program actually holds (NM_OUTPUT: `nm` of the ELF) and prints

    BYTES PATH

the largest sum of frames along a chain of direct calls below ENTRY (whose own frame is the
reference program's, not the library's), and the chain. It is a lower
bound: calls through function pointers (the block device's ops, clocks, name callbacks)
are not followed, and a recursive cycle is counted once. A frame marked "dynamic" (a
variable-length array or alloca) is counted at its static part and flagged with '!'.
Static functions of the same name in two files are told apart by the file that calls them.
"""
import re
import sys

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
FRAME = re.compile(r'\\n(\d+) bytes \(([a-z,]+)\)')


def main():
    entry, nm_path, ci_files = sys.argv[1], sys.argv[2], sys.argv[3:]
    linked = set()
    with open(nm_path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                linked.add(parts[2])

    frames = {}     # (file, name) -> (bytes, dynamic)
    by_name = {}    # name -> [(file, name)]
    calls = {}      # (file, name) -> [callee name]
    for ci in ci_files:
        with open(ci) as f:
            text = f.read()
        for m in NODE.finditer(text):
            name, label = m.group(1), m.group(2)
            fr = FRAME.search(label)
            if not fr:
                continue        # a callee declared here, defined elsewhere
            key = (ci, name)
            frames[key] = (int(fr.group(1)), "dynamic" in fr.group(2) and
                           "bounded" not in fr.group(2))
            by_name.setdefault(name, []).append(key)
        for m in EDGE.finditer(text):
            calls.setdefault((ci, m.group(1)), []).append(m.group(2))

    def resolve(caller_file, name):
        # A static function's node and edges name it "/path/file.c:name"; nm says "name".
        keys = by_name.get(name)
        if not keys or name.rsplit(":", 1)[-1] not in linked:
            return None
        for k in keys:
            if k[0] == caller_file:
                return k
        return keys[0]

    memo = {}
    on_path = set()

    def worst(key):
        if key in memo:
            return memo[key]
        if key in on_path:      # recursion: counted once
            return (0, [])
        on_path.add(key)
        best = (0, [])
        for callee in calls.get(key, []):
            k = resolve(key[0], callee)
            if k is None:
                continue
            w = worst(k)
            if w[0] > best[0]:
                best = w
        on_path.discard(key)
        size, dyn = frames[key]
        res = (size + best[0], [key[1].rsplit(":", 1)[-1] + ("!" if dyn else "")] + best[1])
        memo[key] = res
        return res

    start = by_name.get(entry)
    if not start:
        print("0 (no call graph for %s)" % entry)
        return 1
    # The library's part: the deepest chain below the reference program's own frame.
    best = (0, [])
    for callee in calls.get(start[0], []):
        k = resolve(start[0][0], callee)
        if k is not None and worst(k)[0] > best[0]:
            best = worst(k)
    print("%d %s" % (best[0], ">".join(best[1]) or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
