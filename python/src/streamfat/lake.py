"""streamfat-lake / python -m streamfat lake: logs to a Hive-partitioned Parquet lake.

    LAKE/device=<id>/message=<name>/date=YYYY-MM-DD/part-<file>-<b0>-<b1>.parquet

One column per DBC signal plus ts and channel; frames of no DBC message (or of the wrong
length) under message=_raw with read_arrow's frame columns; DROP records under
message=_drops. date= is the UTC date of the rows (date=unknown for a free-running clock).
Idempotent and incremental: LAKE/_streamfat_lake.json records, per log file (its file_id),
the last block ingested; a run reads each file and writes only the rows of later blocks.
A file is streamed: its batches (4 MiB of log each, gathered to DECODE_ROWS frames) are
decoded and go to a ParquetWriter per partition as they come (rows wait for a row group of
ROW_GROUP rows, all waiting rows together at most PENDING_BYTES), so peak memory does not
grow with the number of frames. Every part is written under a temporary name and renamed
when the file is done, then the manifest is replaced (temporary + rename) once the file's
parts are in place: an interrupted run leaves the previous lake readable, and the next run
writes the same part names again (a part's name is its file and block range; a part of an
interrupted run whose file has grown since is replaced), so nothing is counted twice. See
docs/LAKE.md."""
import argparse
import datetime as _dt
import json
import os
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq

from . import dbc as _dbc
from .errors import (DbcError, FormatError, LakeError, NotAVolumeError, SourceNotFoundError,
                     StreamfatError)
from . import messages as _msgs
from .reader import _damage_error, _decode_file, _frames_batch, _iter_files, _other_batch
from .reader import secret_key

MANIFEST = "_streamfat_lake.json"
ROW_GROUP = 1 << 20           # rows per Parquet row group, at most (docs/LAKE.md)
PENDING_BYTES = 64 << 20      # rows waiting for their row group, at most (docs/LAKE.md)
DECODE_ROWS = 1 << 18         # frames decoded at once (the reader's batches gathered)
DAY_NS = 86_400 * 10**9
# what spans frames (streamfat.messages, docs/LAKE.md): the partition of each table; the
# messages table goes by protocol
MESSAGE_PARTS = {"isotp": "_isotp", "j1939": "_j1939_tp", "fast": "_nmea2000_fast",
                 "uds": "_uds", "obd2": "_obd2", "dm1": "_j1939_dm1"}


def _safe(name):
    """A partition value safe in a path (Hive escapes; we replace)."""
    out = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in str(name))
    return out or "_"


class Lake:
    def __init__(self, root, create=True):
        self.root = os.fspath(root)
        self.manifest_path = os.path.join(self.root, MANIFEST)
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise LakeError(f"{self.root}: not a directory")
        if os.path.isdir(self.root):
            if os.path.exists(self.manifest_path):
                try:
                    with open(self.manifest_path) as f:
                        self.manifest = json.load(f)
                    if self.manifest.get("format") != "streamfat-lake" or \
                            not isinstance(self.manifest.get("files"), dict):
                        raise ValueError("not a streamfat lake manifest")
                except (ValueError, OSError) as e:
                    raise LakeError(f"{self.root}: {MANIFEST} is damaged: {e}") from e
            elif any(not n.startswith(".") for n in os.listdir(self.root)):
                raise LakeError(f"{self.root}: not a streamfat lake (no {MANIFEST}) and "
                                "not empty")
            else:
                self.manifest = None
        elif not create:
            raise LakeError(f"{self.root}: no such lake")
        else:
            self.manifest = None
        if self.manifest is None:
            self.manifest = {"format": "streamfat-lake", "version": 1, "files": {}}

    def save(self):
        """Replace the manifest as the CLI replaces its output files (cli/common/outfile.c,
        docs/EXPORT.md "Output files"): a temporary file beside it, fsync, os.replace only
        when complete; on any error it is removed and the manifest stays as it was."""
        os.makedirs(self.root, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.", dir=self.root)
        umask = os.umask(0)
        os.umask(umask)
        try:
            os.fchmod(fd, 0o666 & ~umask)         # the mode a plain create would give
            with os.fdopen(fd, "w") as f:
                json.dump(self.manifest, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.manifest_path)
        except BaseException:
            _unlink_quietly(tmp)
            raise

    def part_dir(self, device, message, date):
        d = os.path.join(self.root, f"device={_safe(device)}", f"message={_safe(message)}",
                         f"date={date}")
        os.makedirs(d, exist_ok=True)
        return d

    def write_part(self, device, message, date, name, tmp, stale=None):
        """Put a complete temporary part in place under its name. stale: the name's prefix
        (file id and first block) of parts an interrupted run may have left with another
        last block (the file has grown since): removed, their rows are in this part."""
        d = self.part_dir(device, message, date)
        if stale:
            for old in os.listdir(d):
                if old.startswith(stale) and old.endswith(".parquet") and old != name:
                    os.unlink(os.path.join(d, old))
        final = os.path.join(d, name)
        _fsync_path(tmp)              # the part is durable before its name (and the manifest)
        os.replace(tmp, final)
        return final


def _fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _dates(ts_col, realtime):
    """Per row, the UTC date string (or "unknown")."""
    n = len(ts_col)
    if not realtime:
        return np.zeros(n, np.int64) - 1, {-1: "unknown"}
    ns = ts_col.cast(pa.int64()).to_numpy(zero_copy_only=False)
    days = ns // DAY_NS
    names = {int(d): (_dt.date(1970, 1, 1) + _dt.timedelta(days=int(d))).isoformat()
             for d in np.unique(days)}
    return days, names


class Summary:
    def __init__(self):
        self.files = self.files_new = self.files_grown = self.files_same = 0
        self.rows = 0
        self.parts = 0
        self.dbc = _dbc.DecodeStats()
        self.damaged = {}
        self.drops = 0
        self.messages = 0             # reassembled messages written (MESSAGE_PARTS)
        self.not_logs = []            # NotALogError per file without one valid block

    def line(self):
        lm = sum(self.dbc.length_mismatch.values())
        s = (f"lake: {self.files} files ({self.files_new} new, {self.files_grown} grown, "
             f"{self.files_same} unchanged), {self.rows} rows in {self.parts} parts; "
             f"{self.dbc.frames} frames decoded, {self.dbc.undecoded} raw, "
             f"{lm} of the wrong length, {self.drops} drop records")
        if self.damaged:
            s += "; damaged: " + ", ".join(f"{k} {v}" for k, v in sorted(self.damaged.items()))
        return s


def ingest(out, sources, dbc_paths=(), device=None, labels=True, summary=None,
           isotp_pairs=(), fast_pgns=(), key=None):
    """Add the rows of the log files of sources to the lake at out (created if missing).
    isotp_pairs, fast_pgns: as streamfat.read_messages (the OBD-II / UDS ids and J1939 TP
    are always reassembled). key: the secret key of sealed logs (read_arrow's key=).
    Returns a Summary."""
    key = secret_key(key)
    for src in sources:               # a typo is one line before anything is written
        if isinstance(src, (str, bytes, os.PathLike)) and not os.path.lexists(src):
            raise SourceNotFoundError(os.fsdecode(src))
    messages = _dbc.load(dbc_paths) if dbc_paths else {}
    proto = (tuple(isotp_pairs), tuple(fast_pgns))
    _msgs._reassembler(0, _msgs.PROTOCOLS, *proto, None)   # a bad pair: before any write
    lake = Lake(out)
    if not os.path.exists(lake.manifest_path):
        lake.save()                   # a new lake: a run killed in its first file leaves a lake
    sm = summary or Summary()
    for src in sources:
        for name, f in _iter_files(src):
            _ingest_file(lake, sm, name, f, messages, device, labels, proto, key)
    lake.save()
    return sm


def _ingest_file(lake, sm, name, f, messages, device, labels, proto, key=None):
    """Stream one file into the lake: its batches (4 MiB of log each, gathered to
    DECODE_ROWS frames) are decoded and handed to per-partition Parquet writers as they
    come, so that memory stays flat in the size of the file. The same batches go to the
    library's reassembly (streamfat._proto): its messages and decoded tables are kept by
    the block of the frame that completed them, like frames by theirs."""
    state = None
    want = 0
    for t in _msgs.TABLES:
        want |= _msgs._WANT[t]
    reasm = _msgs._reassembler(want, _msgs.PROTOCOLS, proto[0], proto[1], None)
    parts = None
    frames, nframes = [], 0
    after = last = 0
    known = None

    def flush_frames():
        nonlocal frames, nframes
        if not frames:
            return
        t = pa.Table.from_batches(frames) if len(frames) > 1 else \
            pa.Table.from_batches(frames[:1])
        frames, nframes = [], 0
        t = t.unify_dictionaries().combine_chunks()
        decoded, raw = _dbc.split_frames(t, messages, sm.dbc, labels) if messages \
            else ({}, t)
        if not messages:
            sm.dbc.undecoded += raw.num_rows
        decoded["_raw"] = raw
        for msg, dt in decoded.items():
            parts.add_by_date(msg, dt)

    try:
        for st, b in _decode_file(name, f, key=key):   # one pass: frames and DROP records
            state = st
            if st.header is None:                 # no header block: counted only (below)
                continue
            if parts is None:
                fid = f"{st.header.file_id:016x}"
                known = lake.manifest["files"].get(fid)
                after = last = known["last_block"] if known else 0
                dev = device or st.meta.get("device") or "unknown"
                parts = _Parts(lake, sm, dev, fid, after, st.header.clock == "realtime")
            if b["ncan"]:
                _add_messages(parts, sm, reasm, st, b, after, messages, labels)
                fb = _frames_batch(st, b, with_block=True)
                fb, last = _new_rows(fb, after, last)
                if fb is not None:
                    frames.append(fb)
                    nframes += fb.num_rows
                    if nframes >= DECODE_ROWS:
                        flush_frames()
            if b["nother"]:
                db = _other_batch(st, b, "drop", with_block=True)
                db, last = _new_rows(db, after, last)
                if db is not None:
                    sm.drops += db.num_rows
                    parts.add_by_date("_drops", pa.Table.from_batches([db]))
        if parts is not None:
            flush_frames()
    except BaseException:
        if parts is not None:
            parts.abort()
        raise
    sm.files += 1
    for k, v in ((state.stats or {}).get("damage", {}) if state else {}).items():
        if v:
            sm.damaged[k] = sm.damaged.get(k, 0) + v
    for d in (state.damage if state else []):
        if d.kind == "not a log":     # no valid block: an error (exit 1), as for export
            sm.not_logs.append(_damage_error(state, d))
    if parts is None:                 # no header block: no file id, no clock
        return
    if last == after:
        parts.abort()
        sm.files_same += 1
        return
    parts.finish(f"part-{parts.fid}-{after + 1:08d}-{last:08d}.parquet")
    lake.manifest["files"][parts.fid] = {"last_block": last, "source": name,
                                         "device": parts.dev,
                                         "clock": state.header.clock}
    lake.save()                       # after this file's parts: a crash redoes only them
    if known:
        sm.files_grown += 1
    else:
        sm.files_new += 1


def _add_messages(parts, sm, reasm, st, b, after, dbc_messages, labels):
    """Feed a batch's frames to the reassembly; the rows it hands out (messages, UDS,
    OBD-II, DM1) of blocks after `after` go to their partitions (MESSAGE_PARTS), with `ts`
    the first frame's time. A message still open when the file ends is not written: it
    comes whole when the file grows (read_messages shows it, status "end")."""
    reasm.feed(b["ncan"], b["can_ts"], b["can_id"], b["can_flags"], b["can_channel"],
               b["can_len"], b["can_offsets"], b["can_data"])
    out = _msgs._batches(st, reasm.take(), _msgs.TABLES, with_pos=True)
    runs = np.frombuffer(b["can_block_runs"], np.uint64).reshape(-1, 2)
    blocks = np.repeat(runs[:, 0], runs[:, 1].astype(np.int64))
    for table, batch in out.items():
        if not batch.num_rows:
            continue
        pos = batch.column("pos").to_numpy()
        keep = blocks[pos] > after
        t = pa.Table.from_batches([batch]).drop_columns(["pos"])
        if not keep.all():
            t = t.filter(pa.array(keep))
        t = t.rename_columns(["ts" if c == "first_ts" else c for c in t.column_names])
        if table != "messages":
            parts.add_by_date(MESSAGE_PARTS[table], t)
            continue
        sm.messages += t.num_rows
        for proto in _msgs.PROTOCOLS:
            sub = t.filter(pa.compute.equal(t.column("protocol"), proto))
            if proto == "j1939" and dbc_messages and sub.num_rows:
                decoded, sub = _dbc.split_j1939_messages(sub, dbc_messages, sm.dbc, labels)
                for msg, dt in decoded.items():
                    parts.add_by_date(msg, dt)
            parts.add_by_date(MESSAGE_PARTS[proto], sub)


def _new_rows(batch, after, last):
    """The rows of blocks after `after` (without the block column) or None; the last
    block seen."""
    blk = batch.column("block").to_numpy()
    if len(blk):
        last = max(last, int(blk.max()))
    keep = blk > after
    batch = batch.drop_columns(["block"]) if hasattr(batch, "drop_columns") else \
        pa.RecordBatch.from_arrays(batch.columns[:-1], names=batch.schema.names[:-1])
    if keep.all():
        return (batch if batch.num_rows else None), last
    batch = batch.filter(pa.array(keep))
    return (batch if batch.num_rows else None), last


class _Parts:
    """The parts one file's run writes: per (message, date) a ParquetWriter on a hidden
    temporary file; rows wait per partition until a row group of ROW_GROUP rows is full, or
    until all the waiting rows pass PENDING_BYTES (then every partition writes what it has
    as a row group). finish() closes the writers and renames the temporaries to the part
    name (Lake.write_part); abort() removes them."""

    def __init__(self, lake, sm, dev, fid, after, realtime):
        self.lake, self.sm, self.dev, self.fid = lake, sm, dev, fid
        self.after, self.realtime = after, realtime
        self.pending = {}             # (message, date) -> [tables], rows
        self.pending_bytes = 0
        self.writers = {}             # (message, date) -> (ParquetWriter, temporary path)

    def add_by_date(self, msg, t):
        if not t.num_rows:
            return
        days, names = _dates(t.column("ts"), self.realtime)
        for d, label in names.items():
            sub = t.filter(pa.array(days == d)) if len(names) > 1 else t
            self.add(msg, label, sub)

    def add(self, msg, date, t):
        key = (msg, date)
        lst, rows = self.pending.get(key, ([], 0))
        lst.append(t)
        rows += t.num_rows
        self.pending[key] = (lst, rows)
        self.pending_bytes += t.nbytes
        self.sm.rows += t.num_rows
        if rows >= ROW_GROUP:
            self._write(key)
        if self.pending_bytes > PENDING_BYTES:
            for k in list(self.pending):
                self._write(k)

    def _write(self, key):
        lst, _rows = self.pending.pop(key)
        t = pa.concat_tables(lst, promote_options="permissive") if len(lst) > 1 else lst[0]
        self.pending_bytes -= sum(x.nbytes for x in lst)
        t = t.unify_dictionaries().combine_chunks()
        w = self.writers.get(key)
        if w is None:
            d = self.lake.part_dir(self.dev, key[0], key[1])
            tmp = os.path.join(d, f".part-{self.fid}-{self.after + 1:08d}.parquet.tmp")
            w = (pq.ParquetWriter(tmp, t.schema, compression="zstd"), tmp)
            self.writers[key] = w
        elif not t.schema.equals(w[0].schema, check_metadata=False):
            t = t.cast(w[0].schema)
        w[0].write_table(t, row_group_size=ROW_GROUP)

    def finish(self, name):
        for k in list(self.pending):
            self._write(k)
        for w, _tmp in self.writers.values():
            w.close()
        try:
            for (msg, date), (_w, tmp) in sorted(self.writers.items()):
                self.lake.write_part(self.dev, msg, date, name, tmp,
                                     f"part-{self.fid}-{self.after + 1:08d}-")
                self.sm.parts += 1
        except BaseException:         # e.g. a full disk: no temporary part stays behind
            for _w, tmp in self.writers.values():
                _unlink_quietly(tmp)
            raise
        finally:
            self.writers = {}

    def abort(self):
        for w, tmp in self.writers.values():
            try:
                w.close()
            except OSError:           # a full disk fails the close too: remove it anyway
                pass
            finally:
                _unlink_quietly(tmp)
        self.writers = {}
        self.pending = {}


def main(argv=None, prog="streamfat-lake"):
    ap = argparse.ArgumentParser(
        prog=prog, description="Decode streamfat logs (with DBC files) into a Hive-"
        "partitioned Parquet lake: LAKE/device=ID/message=NAME/date=YYYY-MM-DD/*.parquet")
    ap.add_argument("--dbc", action="append", default=[], help="a DBC file (repeatable)")
    ap.add_argument("--device", help="device id (default: the log's META device=, else "
                    "'unknown')")
    ap.add_argument("--out", required=True, help="the lake directory")
    ap.add_argument("--no-labels", action="store_true", help="no <signal>_label columns "
                    "for value tables")
    ap.add_argument("--isotp-pair", action="append", default=[], metavar="A:B[:ext|:mixed]",
                    help="an ISO-TP id pair to reassemble besides the OBD-II / UDS ids "
                    "(hex; repeatable; as streamfat export)")
    ap.add_argument("--fast-pgn", action="append", default=[], type=int, metavar="PGN",
                    help="an NMEA 2000 PGN sent as fast packets (repeatable)")
    ap.add_argument("--key", help="the secret key file (NAME.key of streamfat keygen) that "
                    "opens sealed logs")
    ap.add_argument("sources", nargs="+", help="image, block device, directory or .SFL file")
    a = ap.parse_args(argv)
    try:
        key = secret_key(a.key)       # a key file that is not one: exit 1, as export --key
    except (OSError, ValueError) as e:
        print(f"{prog}: {_one_line(e)}", file=sys.stderr)
        return 1
    try:
        sm = ingest(a.out, a.sources, a.dbc, a.device, not a.no_labels,
                    isotp_pairs=a.isotp_pair, fast_pgns=a.fast_pgn, key=key)
    except (StreamfatError, OSError) as e:
        print(f"{prog}: {_one_line(e)}", file=sys.stderr)
        return 1
    except ValueError as e:           # a malformed --isotp-pair
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    print(sm.line())
    for e in sm.not_logs:             # the rest is in the lake; these files are not logs
        print(f"{prog}: {e}", file=sys.stderr)
    return 1 if sm.not_logs else 0


def _one_line(e):
    """An error's one line: `PATH: why` for an OSError of Python's (not `[Errno 2] ...`)."""
    if isinstance(e, OSError) and not isinstance(e, StreamfatError) and e.strerror:
        what = os.fsdecode(e.filename) if e.filename is not None else None
        why = e.strerror[:1].lower() + e.strerror[1:]
        return f"{what}: {why}" if what else why
    return str(e)


if __name__ == "__main__":            # pragma: no cover
    sys.exit(main())
