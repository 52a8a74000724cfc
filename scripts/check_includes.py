#!/usr/bin/env python3
"""The include rules of the core (docs/DESIGN.md, "The map"), checked over #include lines.

    python3 scripts/check_includes.py [ROOT]

ROOT is the repository (default: the one this script is in). Every .c and .h under src/ and
every public header of include/streamfat/ except the host-only ones is a core file; each has
a layer, from its folder (src/<layer>/) or, for a public header, from PUBLIC_LAYER below.
The hardware drivers (drivers/**, layer "driver") run beside the core on bare metal and are
held to the same rules, but may include any core layer's public headers (not src/) and
each other. Each #include line
of a core or driver file must satisfy:

  libc      an <angle> include is one of ALLOWED_LIBC (the freestanding headers the core
            needs, and string.h for mem*): no POSIX, Linux or other libc header
  host      it does not reach host/ or a host-only public header (HOST_HEADERS)
  cli       it does not reach cli/
  driver    it does not reach drivers/ (but from a driver)
  outside   it does not reach anything else outside src/ and include/ (tests/, examples/ ...)
  layer     the layer it reaches is one the file's layer may include (MAY_INCLUDE): only
            downwards, util <- bdev <- fs <- stream <- log, check beside fs (it may
            include fs and below and the record codec; no layer includes check), the
            record codec (rec) on util only, the tiny logger (tiny) on util, bdev and rec
  resolve   a "quoted" include names a file that exists (next to the file, in include/ or
            in src/, the compiler's search order here)

Beside the core, two more kinds of files are checked (check_beside):

  host/**       Linux code: any <angle> header (POSIX, Linux, liburing), every public header
                (the host-only ones too) and host/ itself; never src/ (rule private: the
                core's internals), cli/, drivers/ or anything else (rules cli, driver,
                outside)
  examples/**   firmware: any <angle> header (its toolchain's or its own C library), its own
                folder, examples/common/ (the pieces the examples share: semihosting, the
                report's line builder), the public headers but the host-only ones (rule
                host) and drivers/; never src/ (private), host/ (host), cli/ (cli), another
                example's folder (example) or anything else (outside)

and for both, a "quoted" include must name a file (rule resolve; searched next to the file,
in include/, drivers/*/ and examples/*/ for an example, and src/, so that a private header
is reported as such).

A violation prints FILE:LINE: rule RULE: what and why, and the exit status is 1. An intended
exception is listed in EXCEPTIONS with its reason; one that no longer matches anything is an
error too (rule "stale-exception"), so the list cannot rot. Python standard library only.
"""
import os
import re
import sys

# The freestanding C headers the core may use (string.h: memcpy, memset, memmove, memcmp).
ALLOWED_LIBC = {"stddef.h", "stdint.h", "stdarg.h", "stdbool.h", "limits.h", "string.h"}

# Public headers of the Linux devices in host/: the core never includes them.
HOST_HEADERS = {"filebd.h", "aiobd.h", "simbd.h",
                "cipher_sodium.h"}   # the cipher stage's libsodium port (host/cipher/)

# The layer of each core public header (include/streamfat/). A new public header must be
# added here (or to HOST_HEADERS), else the check fails on it.
PUBLIC_LAYER = {
    "config.h": "util",     # feature options
    "sf.h": "util",         # error codes, sf_ssize_t, version (and the umbrella: EXCEPTIONS)
    "bdev.h": "bdev",       # the device contract, RAM and fault devices
    "vol.h": "fs",          # volumes, files, directories, mkfs
    "check.h": "check",     # sf_check, recovery
    "stream.h": "stream",   # the streaming writer
    "rec.h": "rec",         # the record format's codec (src/log/rec.c)
    "decode.h": "rec",      # its decoder (src/log/decode.c)
    "cipher.h": "rec",      # sealed blocks, the codec's cipher stage (src/log/block_cipher.c)
    "block_pack.h": "rec",  # compressed blocks, the codec's pack stage (src/log/block_pack.c)
    "log.h": "log",         # the logger
    "log_struct.h": "log",  # its struct, included at the end of log.h
    "tx_schedule.h": "log", # the transmit schedule (src/log/tx_schedule.c)
    "poll.h": "log",        # the poll client (src/log/poll.c) on the reassembly
    "tiny.h": "tiny",       # the tiny logger (src/tiny/)
    "proto.h": "proto",     # reassembly across frames (src/proto/)
    "diag.h": "proto",      # UDS, OBD-II, DM1 decoders on top of it (src/proto/)
}

# Files under src/ whose layer is not their folder's: the record codec lives in src/log/
# but stands on util alone (the checker reads records and SF_LOG=OFF keeps it).
FILE_LAYER = {
    "src/log/rec.c": "rec",
    "src/log/rec_layout.h": "rec",
    "src/log/decode.c": "rec",
    "src/log/block_cipher.c": "rec",
    "src/log/block_pack.c": "rec",  # the unpacker goes with the decoder (SF_LOG off too)
}

# Which layers a file of each layer may include (its own among them).
MAY_INCLUDE = {
    "util": {"util"},
    "rec": {"util", "rec"},
    "bdev": {"util", "bdev"},
    "fs": {"util", "bdev", "fs"},
    "check": {"util", "bdev", "fs", "rec", "check"},
    "stream": {"util", "bdev", "fs", "stream"},
    "log": {"util", "bdev", "fs", "stream", "rec", "log", "proto"},   # proto: the poll client
    "driver": {"util", "bdev", "fs", "check", "stream", "rec", "log", "driver", "tiny",
               "proto"},
    # the tiny logger: its own FAT code beside fs, on the device and the record codec only
    "tiny": {"util", "bdev", "rec", "tiny"},
    # reassembly across frames (ISO-TP, J1939 TP, fast packets): frames in, messages out,
    # on the record codec's CAN flags and util only, so every reader and a firmware use it
    "proto": {"util", "rec", "proto"},
}

# Intended exceptions: (file, the include as written, reason).
EXCEPTIONS = [
    ("include/streamfat/sf.h", "bdev.h",
     "sf.h is the umbrella an application includes: its own declarations (errors, "
     "sf_ssize_t, version) are util level, and it ends by including the device and volume "
     "API for the application; no core file relies on that (each includes what it uses)"),
    ("include/streamfat/sf.h", "vol.h", "the umbrella, as above"),
    ("include/streamfat/log_struct.h", "stdatomic.h",
     "a freestanding C11 header (no OS, no libc code): the ring's producer fields are "
     "_Atomic so an interrupt can log while the main loop writes, without locks"),
    ("include/streamfat/tiny.h", "stdatomic.h",
     "the same for the tiny logger's ring (struct sf_tiny_log's shared words)"),
]

# The folder of what the firmware examples share; every example may include from it.
COMMON = "examples/common/"

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def core_files(root):
    """(path relative to root, layer or None) of every core file."""
    out = []
    src = os.path.join(root, "src")
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(rel(root, os.path.join(d, f)))
    drv = os.path.join(root, "drivers")
    for d, dirs, files in os.walk(drv):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(rel(root, os.path.join(d, f)))
    inc = os.path.join(root, "include", "streamfat")
    for f in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        if f.endswith(".h") and f not in HOST_HEADERS:
            out.append("include/streamfat/" + f)
    return out


def layer_of(path):
    """The layer of a file inside src/ or include/streamfat/, or None if it has none."""
    if path in FILE_LAYER:
        return FILE_LAYER[path]
    parts = path.split("/")
    if parts[0] == "drivers":
        return "driver"
    if parts[0] == "src":
        return parts[1] if len(parts) > 2 and parts[1] in MAY_INCLUDE else None
    if parts[:2] == ["include", "streamfat"] and len(parts) == 3:
        return PUBLIC_LAYER.get(parts[2])
    return None


def resolve(root, path, kind, name):
    """The file an include reaches, relative to root, or None."""
    if kind == '"':
        bases = [os.path.dirname(os.path.join(root, path)), os.path.join(root, "include"),
                 os.path.join(root, "src")]
    elif name.startswith("streamfat/"):
        bases = [os.path.join(root, "include")]
    else:
        return None
    for b in bases:
        p = os.path.normpath(os.path.join(b, name))
        if os.path.isfile(p):
            return rel(root, p)
    return None


def beside_files(root):
    """(path relative to root) of every .c and .h under host/ and examples/."""
    out = []
    for top in ("host", "examples"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    out.append(rel(root, os.path.join(d, f)))
    return out


def subdirs(root, top):
    d = os.path.join(root, top)
    return [os.path.join(d, x) for x in sorted(os.listdir(d))
            if os.path.isdir(os.path.join(d, x))] if os.path.isdir(d) else []


def includes(root, path, used, count):
    """The #include lines of PATH that no EXCEPTION covers, as (where, kind, name, shown):
    kind "<" or '"'. Exceptions met go into USED; count[0] counts every include."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    for lineno, line in enumerate(lines, 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        count[0] += 1
        kind, name = m.group(1), m.group(2).strip()
        exc = [i for i, e in enumerate(EXCEPTIONS) if e[0] == path and e[1] == name]
        if exc:
            used.update(exc)
            continue
        yield (f"{path}:{lineno}", kind, name, f"<{name}>" if kind == "<" else f'"{name}"')


def check_beside(root, used):
    """The rules of host/ and examples/ files (module docstring): errors, files, includes."""
    errors = []
    nfiles, count = 0, [0]
    for path in beside_files(root):
        nfiles += 1
        parts = path.split("/")
        kind = parts[0]                         # "host" or "examples"
        own = "/".join(parts[:2]) + "/"         # examples/<name>/
        for where, ik, name, shown in includes(root, path, used, count):
            if ik == "<" and not name.startswith("streamfat/"):
                continue                        # POSIX / the target's C library
            bases = [os.path.join(root, "include")]
            if ik == '"':
                bases.insert(0, os.path.dirname(os.path.join(root, path)))
                if kind == "examples":
                    bases += subdirs(root, "drivers") + subdirs(root, "examples")
                bases.append(os.path.join(root, "src"))
            target = None
            for b in bases:
                p = os.path.normpath(os.path.join(b, name))
                if os.path.isfile(p):
                    target = rel(root, p)
                    break
            if target is None:
                errors.append(f"{where}: rule resolve: {shown} names no file")
                continue
            top = target.split("/")[0]
            tname = target.split("/")[-1]
            public = target.startswith("include/streamfat/") and target.count("/") == 2
            if top == "src":
                errors.append(f"{where}: rule private: {shown} is {target}, a private core "
                              f"header; {kind}/ uses the core's public headers only")
            elif top == "cli":
                errors.append(f"{where}: rule cli: {shown} is {target}, a CLI header; "
                              f"{kind}/ never includes the CLI")
            elif kind == "host":
                if top == "drivers":
                    errors.append(f"{where}: rule driver: {shown} is {target}, a bare-metal "
                                  f"driver header; host/ never includes drivers")
                elif not (public or top == "host"):
                    errors.append(f"{where}: rule outside: {shown} is {target}, outside "
                                  f"host/ and the public headers")
            elif top == "host" or (public and tname in HOST_HEADERS):
                errors.append(f"{where}: rule host: {shown} is {target}, a host (Linux) "
                              f"header; firmware never includes host code")
            elif top == "examples" and not target.startswith((own, COMMON)):
                errors.append(f"{where}: rule example: {shown} is {target}, another "
                              f"example's file; an example includes its own folder, "
                              f"{COMMON}, the public headers and drivers")
            elif not (public or top in ("drivers", "examples")):
                errors.append(f"{where}: rule outside: {shown} is {target}, outside its "
                              f"folder, the public headers and drivers/")
    return errors, nfiles, count[0]


def check(root):
    errors = []
    used = set()
    nfiles, count = 0, [0]
    for path in core_files(root):
        nfiles += 1
        layer = layer_of(path)
        if layer is None:
            errors.append(f"{path}:1: rule layer: no layer for this file (a src/ folder not "
                          f"in MAY_INCLUDE, or a public header not in PUBLIC_LAYER)")
            continue
        for where, kind, name, shown in includes(root, path, used, count):
            if kind == "<" and not name.startswith("streamfat/"):
                if name not in ALLOWED_LIBC:
                    errors.append(f"{where}: rule libc: {shown} is not one of the core's "
                                  f"headers ({', '.join(sorted(ALLOWED_LIBC))})")
                continue
            target = resolve(root, path, kind, name)
            if target is None:
                errors.append(f"{where}: rule resolve: {shown} names no file next to it, in "
                              f"include/ or in src/")
                continue
            top = target.split("/")[0]
            tname = target.split("/")[-1]
            if top == "host" or (target.startswith("include/streamfat/")
                                 and tname in HOST_HEADERS):
                errors.append(f"{where}: rule host: {shown} is {target}, a host (Linux) "
                              f"header; the core never includes host code")
            elif top == "cli":
                errors.append(f"{where}: rule cli: {shown} is {target}, a CLI header; the "
                              f"core never includes the CLI")
            elif top == "drivers" and layer != "driver":
                errors.append(f"{where}: rule driver: {shown} is {target}, a driver header; "
                              f"the core never includes drivers")
            elif top not in ("src", "include", "drivers"):
                errors.append(f"{where}: rule outside: {shown} is {target}, outside src/ and "
                              f"include/")
            elif layer == "driver" and top == "src":
                errors.append(f"{where}: rule layer: {shown} is {target}, a private core "
                              f"header; a driver includes the public headers only")
            else:
                tl = layer_of(target)
                if tl is None:
                    errors.append(f"{where}: rule layer: {shown} is {target}, which has no "
                                  f"layer")
                elif tl not in MAY_INCLUDE[layer]:
                    errors.append(f"{where}: rule layer: {shown} is {target} (layer {tl}); "
                                  f"a {layer} file may include only "
                                  f"{', '.join(sorted(MAY_INCLUDE[layer]))}")
    e2, n2, i2 = check_beside(root, used)
    errors += e2
    nfiles += n2
    nincludes = count[0] + i2
    for i, e in enumerate(EXCEPTIONS):
        if i not in used:
            errors.append(f"{e[0]}:1: rule stale-exception: the exception for {e[1]!r} "
                          f"matches no include; remove it from EXCEPTIONS")
    return errors, nfiles, nincludes, len(used)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.path.isdir(os.path.join(root, "src")):
        print(f"check_includes: {root} has no src/", file=sys.stderr)
        return 2
    errors, nfiles, nincludes, nexc = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_includes: {len(errors)} violation(s) of the include rules "
              f"(docs/DESIGN.md, 'The map')")
        return 1
    print(f"check_includes: {nfiles} core, driver, host and example files, {nincludes} "
          f"includes, all within the rules "
          f"({nexc} documented exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
