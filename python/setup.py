"""Build of the streamfat Python package (docs/PYTHON.md).

The extension streamfat._core is compiled from this repository's C sources: the
freestanding core (every file under src/, globbed, as CMake selects it, so that files
added there need no edit here) plus the few Linux host files (under host/) named in
HOST_FILES. Built without sanitizers (plain -O2), so that it imports into any Python.
"""
import glob
import os
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)                                     # setuptools wants relative paths
# the repository (STREAMFAT_SRC: when this folder was copied elsewhere to build)
ROOT = os.path.abspath(os.environ.get("STREAMFAT_SRC") or os.path.dirname(HERE))
SRC = os.path.join(ROOT, "src")
HOST = os.path.join(ROOT, "host")

# ---- the one place that names source files --------------------------------------------
# The core: every *.c under src/ but the feature-off stand-ins (*_off.c: built only when a
# feature is configured out).
# Linux host files, relative to host/: the image/block-device device is the one needed.
HOST_FILES = ["bdev/file.c", "cipher/sodium.c"]
# ---------------------------------------------------------------------------------------


def sources():
    if not os.path.isfile(os.path.join(ROOT, "include", "streamfat", "sf.h")):
        sys.exit("streamfat: build from the repository (pip install ./python): the C "
                 "sources are in its src/ and include/")
    out = []
    for f in sorted(glob.glob(os.path.join(SRC, "**", "*.c"), recursive=True)):
        if not f.endswith("_off.c"):
            out.append(os.path.relpath(f, HERE))
    for rel in HOST_FILES:
        f = os.path.join(HOST, rel)
        if not os.path.isfile(f):
            sys.exit(f"streamfat: host source {rel} not found under host/ (python/setup.py, "
                     "HOST_FILES)")
        out.append(os.path.relpath(f, HERE))
    return out


def sodium():
    """Sealed logs (docs/FORMAT.md, "Sealed files") read with libsodium where it is
    installed (libsodium-dev); without it the package refuses sealed files in one line."""
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libsodium"],
                               capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return [], [], []
    return ([("SF_HAVE_SODIUM", "1")], [f[2:] for f in flags if f.startswith("-l")],
            [f[2:] for f in flags if f.startswith("-I")])


SODIUM_DEFS, SODIUM_LIBS, SODIUM_INC = sodium()

ext = Extension(
    "streamfat._core",
    sources=[os.path.join("src", "streamfat", "_core.c")] + sources(),
    include_dirs=[os.path.relpath(os.path.join(ROOT, "include"), HERE),
                  os.path.relpath(SRC, HERE)] + SODIUM_INC,
    define_macros=[("_GNU_SOURCE", None)] + SODIUM_DEFS,
    libraries=SODIUM_LIBS,
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wno-unused-parameter"],
)

# The DBC decoder's loops (streamfat.dbc): a module of its own, Python's C API only.
dbc_ext = Extension(
    "streamfat._dbc",
    sources=[os.path.join("src", "streamfat", "_dbc.c")],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wno-unused-parameter"],
)

# What spans frames (streamfat.messages): the library's reassembly and decoders (src/proto/,
# part of the core above too) under a module of their own, so _core stays the log reader.
proto_ext = Extension(
    "streamfat._proto",
    sources=[os.path.join("src", "streamfat", "_proto.c")] +
    [f for f in sources() if os.sep + "proto" + os.sep in f],
    include_dirs=ext.include_dirs,
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wno-unused-parameter"],
)

setup(ext_modules=[ext, dbc_ext, proto_ext])
