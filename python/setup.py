"""Build of the streamfat Python package (docs/PYTHON.md).

The extension streamfat._core is compiled from this repository's C sources: the
freestanding core (the folders of CORE_DIRS under src/, globbed, so that files added
there need no edit here) plus the few Linux host files named in HOST_FILES. Built without
sanitizers (plain -O2), so that it imports into any Python.

When the Linux device files move (out of src/bdev into a host folder), HOST_FILES and
HOST_IN_CORE_DIRS are the two lists to change: nothing else here names a source file.
"""
import glob
import os
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)                                     # setuptools wants relative paths
# the repository (STREAMFAT_SRC: when this folder was copied elsewhere to build)
ROOT = os.path.abspath(os.environ.get("STREAMFAT_SRC") or os.path.dirname(HERE))
SRC = os.path.join(ROOT, "src")

# ---- the one place that names source files --------------------------------------------
# Core folders, every *.c in them (recursively) but the feature-off stand-ins (*_off.c:
# built only when a feature is configured out) and the host files below.
CORE_DIRS = ["util", "bdev", "fs", "check", "stream", "log"]
# Linux host files, relative to src/: the image/block-device device is the one needed.
HOST_FILES = ["bdev/file.c"]
# Host files that still live in a core folder and must not be built as core.
HOST_IN_CORE_DIRS = ["bdev/file.c", "bdev/uring.c", "bdev/aio_pool_posix.c",
                     "bdev/sim_posix.c"]
# ---------------------------------------------------------------------------------------


def sources():
    if not os.path.isfile(os.path.join(ROOT, "include", "streamfat", "sf.h")):
        sys.exit("streamfat: build from the repository (pip install ./python): the C "
                 "sources are in its src/ and include/")
    out = []
    for d in CORE_DIRS:
        for f in sorted(glob.glob(os.path.join(SRC, d, "**", "*.c"), recursive=True)):
            rel = os.path.relpath(f, SRC).replace(os.sep, "/")
            if (rel.endswith("_off.c") or rel in HOST_IN_CORE_DIRS
                    or rel.endswith("_posix.c") or rel.endswith("_linux.c")):
                continue
            out.append(os.path.relpath(f, HERE))
    for rel in HOST_FILES:
        f = os.path.join(SRC, rel)
        if not os.path.isfile(f):
            sys.exit(f"streamfat: host source {rel} not found under src/ (python/setup.py, "
                     "HOST_FILES)")
        out.append(os.path.relpath(f, HERE))
    return out


ext = Extension(
    "streamfat._core",
    sources=[os.path.join("src", "streamfat", "_core.c")] + sources(),
    include_dirs=[os.path.relpath(os.path.join(ROOT, "include"), HERE),
                  os.path.relpath(SRC, HERE)],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wno-unused-parameter"],
)

setup(ext_modules=[ext])
