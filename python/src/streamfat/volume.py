"""Read-only access to FAT/exFAT volumes (images, block devices, partitions)."""
import datetime as _dt
import io
import os
import posixpath
import stat
from typing import NamedTuple

from . import _core
from .errors import NotAVolumeError, SourceNotFoundError

ATTR_DIR = 0x10


class Entry(NamedTuple):
    """A directory entry: name, size in bytes, is_dir, attributes, mtime (UTC)."""
    name: str
    path: str
    size: int
    is_dir: bool
    attr: int
    mtime: _dt.datetime


def _entry(parent, t):
    name, size, _alloc, attr, is_dir, mtime_ms, _ctime = t
    return Entry(name, posixpath.join(parent, name), size, is_dir, attr,
                 _dt.datetime.fromtimestamp(mtime_ms / 1000, _dt.timezone.utc))


class VolumeFile(io.RawIOBase):
    """A file of a volume, opened read-only: a binary, seekable raw stream."""

    def __init__(self, volume, path):
        super().__init__()
        self._f = volume._v.open(path)
        self._volume = volume
        self.path = path
        self.name = f"{volume.path}:{path}"
        self.size = self._f.size

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        return self._f.readinto(b)

    def seek(self, offset, whence=io.SEEK_SET):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.seek(0, io.SEEK_CUR)

    def close(self):
        if not self.closed:
            self._f.close()
        super().close()


def _check_image(path):
    """One clear line for what cannot be an image or a device, before the C layer turns it
    into an errno ("invalid argument"): a missing path, a directory, an empty file, a file
    that is not a whole number of 512-byte sectors."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SourceNotFoundError(path) from None
    if stat.S_ISDIR(st.st_mode):
        raise NotAVolumeError(f"{os.fsdecode(path)}: a directory, not an image or a device")
    if stat.S_ISREG(st.st_mode) and st.st_size % 512:
        raise NotAVolumeError(f"{os.fsdecode(path)}: not a FAT or exFAT volume ({st.st_size} "
                              "bytes: not a whole number of 512-byte sectors)")
    if stat.S_ISREG(st.st_mode) and not st.st_size:
        raise NotAVolumeError(f"{os.fsdecode(path)}: not a FAT or exFAT volume (an empty "
                              "file)")


class Volume:
    """A mounted volume (read-only). `partition` 0: the volume itself or the first FAT/
    exFAT partition of an MBR/GPT disk; N: the Nth partition."""

    def __init__(self, path, partition=0):
        self.path = os.fspath(path)
        _check_image(self.path)
        self._v = _core.Volume(self.path, partition)

    def info(self):
        return self._v.info()

    def ls(self, path="/"):
        """The entries of a directory, sorted by name."""
        return sorted((_entry(path, t) for t in self._v.listdir(path)), key=lambda e: e.name)

    def stat(self, path):
        parent = posixpath.dirname(path.rstrip("/")) or "/"
        return _entry(parent, self._v.stat(path))

    def open(self, path):
        return VolumeFile(self, path)

    def walk(self, top="/"):
        """Like os.walk: (dirpath, dirnames, filenames), top down."""
        entries = self.ls(top)
        dirs = [e.name for e in entries if e.is_dir]
        files = [e.name for e in entries if not e.is_dir]
        yield top, dirs, files
        for d in dirs:
            yield from self.walk(posixpath.join(top, d))

    def log_files(self, top="/"):
        """Paths of every .SFL file (any case) under top, sorted."""
        out = []
        for dirpath, _dirs, files in self.walk(top):
            out += [posixpath.join(dirpath, f) for f in files if f.lower().endswith(".sfl")]
        return sorted(out)

    def close(self):
        self._v.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_volume(path_or_device, partition=0):
    """Mount an image file or a block device (or a partition of it) read-only."""
    return Volume(path_or_device, partition)
