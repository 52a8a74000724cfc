"""The package's exceptions."""
import errno as _errno


class StreamfatError(Exception):
    """Base class of the package's errors."""


class FormatError(StreamfatError, ValueError):
    """A log file breaks docs/FORMAT.md (errors="raise"): names the file, the block and
    the byte offset of the first damage, with its kind (the reader table's words:
    invalid, out-of-sequence, bad-can, ...) and the decoder's reason."""

    def __init__(self, file, block, offset, kind, reason="", count=1):
        self.file, self.block, self.offset = file, block, offset
        self.kind, self.reason, self.count = kind, reason, count
        why = f"{kind}" + (f" ({reason})" if reason else "")
        if count > 1:
            why += f", {count} blocks"
        super().__init__(f"{file}: block {block} (offset {offset}): {why}")


class NotALogError(FormatError):
    """A non-empty file without one valid block: what `streamfat export` calls "not a
    streamfat log" (exit status 1). A FormatError of kind "not a log" at block 0, with a
    message of one line that names the file and its size."""

    def __init__(self, file, size, volume_too=False, reason=None):
        super().__init__(file, 0, 0, "not a log", reason or "no valid block")
        self.size = size
        what = "neither a streamfat log nor a FAT/exFAT volume" if volume_too else \
            "not a streamfat log"
        # a file refused for a required feature bit says so, as export does (docs/FORMAT.md,
        # Versioning); otherwise it had no valid block
        why = reason if reason and reason != "no valid block" else \
            f"no valid block in {size} bytes"
        self.args = (f"{file}: {what}: {why}",)

    def __str__(self):
        return self.args[0]


class SealedLogError(NotALogError):
    """A sealed log (docs/FORMAT.md, "Sealed files") read without its secret key, or with
    another: nothing of it is read; the message names the key id it wants (read_arrow's
    key=)."""

    def __init__(self, file, size, reason):
        super().__init__(file, size, False, reason)
        self.args = (f"{file}: {reason}",)


class SourceNotFoundError(StreamfatError, FileNotFoundError):
    """A source path that does not exist: a FileNotFoundError whose text is one line,
    `PATH: no such file or directory` (not Python's `[Errno 2] ...`)."""

    def __init__(self, path):
        super().__init__(_errno.ENOENT, "no such file or directory", path)

    def __str__(self):
        return f"{self.filename}: no such file or directory"


class NotAVolumeError(StreamfatError, OSError):
    """The image or device holds no FAT/exFAT volume streamfat can mount."""


class DbcError(StreamfatError, ValueError):
    """A DBC file that cantools cannot read."""


class LakeError(StreamfatError):
    """A directory that is not a streamfat lake, or a lake that cannot be written."""


class SourceIsADirectoryError(StreamfatError, IsADirectoryError):
    """A directory given where one log file is expected (python-can's LogReader reads one
    file): `PATH: a directory, not a log file`."""

    def __init__(self, path):
        super().__init__(_errno.EISDIR, "a directory, not a log file", path)

    def __str__(self):
        return f"{self.filename}: a directory, not a log file"
