"""The package's exceptions."""


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


class NotAVolumeError(StreamfatError, OSError):
    """The image or device holds no FAT/exFAT volume streamfat can mount."""


class DbcError(StreamfatError, ValueError):
    """A DBC file that cantools cannot read."""


class LakeError(StreamfatError):
    """A directory that is not a streamfat lake, or a lake that cannot be written."""
