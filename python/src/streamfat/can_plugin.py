"""python-can reader for .SFL files, registered under the entry point group
can.io.message_reader (".sfl"), so that can.LogReader("LOG00001.SFL") works.

Timestamps are seconds as floats (python-can's unit): Unix time for the realtime clock,
else the firmware clock's seconds. channel is the CHANNEL name (can0, ...). Keyword
argument errors="raise" (default) or "skip", as in streamfat.read_log; a path that is a
directory (python-can reads one file) raises SourceIsADirectoryError."""
import os

import can
from can.io.generic import MessageReader

from .errors import SourceIsADirectoryError
from .reader import Frame, read_log


class SflReader(MessageReader):
    def __init__(self, file, errors="raise", **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and os.path.isdir(file):
            raise SourceIsADirectoryError(os.fsdecode(file))
        self.file = file
        self.errors = errors

    def __iter__(self):
        for r in read_log(self.file, errors=self.errors):
            if type(r) is not Frame:
                continue
            yield can.Message(
                timestamp=r.ts / 1e9, arbitration_id=r.id, is_extended_id=r.ext,
                is_remote_frame=r.rtr, is_error_frame=r.err, is_fd=r.fd,
                bitrate_switch=r.brs, error_state_indicator=r.esi, dlc=r.dlc,
                data=r.data, channel=r.channel, is_rx=not r.tx, check=False)

    def stop(self):
        pass
