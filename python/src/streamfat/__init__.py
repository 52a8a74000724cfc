"""streamfat: read streamfat logs (.SFL) and volumes from Python (docs/PYTHON.md).

    streamfat.open_volume(path)         a FAT/exFAT image or device, read-only
    streamfat.read_log(source)          an iterator of typed records
    streamfat.read_arrow(source, kind)  a pyarrow.Table (frames, drops, ...)
    streamfat.read_messages(source)     reassembled ISO-TP, J1939 TP, fast packets
    streamfat.read_uds / read_obd2 / read_dm1   decoded diagnostics
"""
from . import _core
from .errors import (DbcError, FormatError, LakeError, NotALogError, NotAVolumeError,
                     SealedLogError, SourceIsADirectoryError, SourceNotFoundError, StreamfatError)
from .volume import Entry, Volume, VolumeFile, open_volume
from .reader import (Annotation, Channel, Damage, Drop, Frame, Header, Latency, Meta, Sample,
                     Text, damage_summary, iter_batches, list_sources, read_arrow, read_log)
from .messages import (iter_messages, message_stats, read_dm1, read_messages, read_obd2,
                       read_uds)

_core._set_errors(NotAVolumeError)

__version__ = "0.1.0"
__all__ = [
    "open_volume", "read_log", "read_arrow", "iter_batches", "damage_summary", "list_sources",
    "read_messages", "iter_messages", "read_uds", "read_obd2", "read_dm1", "message_stats",
    "Volume", "VolumeFile", "Entry", "FormatError", "NotALogError", "NotAVolumeError",
    "SourceNotFoundError", "SourceIsADirectoryError", "DbcError", "SealedLogError",
    "LakeError", "StreamfatError", "Frame", "Sample", "Text", "Latency", "Drop", "Annotation",
    "Channel", "Meta", "Header", "Damage",
]
