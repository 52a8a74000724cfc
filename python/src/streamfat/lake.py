"""streamfat-lake / python -m streamfat lake: logs to a Hive-partitioned Parquet lake.

    LAKE/device=<id>/message=<name>/date=YYYY-MM-DD/part-<file>-<b0>-<b1>.parquet

One column per DBC signal plus ts and channel; frames of no DBC message (or of the wrong
length) under message=_raw with read_arrow's frame columns; DROP records under
message=_drops. date= is the UTC date of the rows (date=unknown for a free-running clock).
Idempotent and incremental: LAKE/_streamfat_lake.json records, per log file (its file_id),
the last block ingested; a run reads each file and writes only the rows of later blocks.
Every part is written under a temporary name and renamed when complete, then the manifest
is replaced (temporary + rename) once the file's parts are in place: an interrupted run
leaves the previous lake readable, and the next run writes the same part names again (a
part's name is its file and block range), so nothing is counted twice. See docs/LAKE.md."""
import argparse
import datetime as _dt
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import dbc as _dbc
from .errors import DbcError, FormatError, LakeError, NotAVolumeError, StreamfatError
from .reader import _decode_file, _frames_batch, _iter_files, _other_batch

MANIFEST = "_streamfat_lake.json"
ROW_GROUP = 1 << 20           # rows per Parquet row group (docs/LAKE.md)
DAY_NS = 86_400 * 10**9


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
        os.makedirs(self.root, exist_ok=True)
        tmp = self.manifest_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.manifest, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.manifest_path)

    def write_part(self, device, message, date, name, table):
        d = os.path.join(self.root, f"device={_safe(device)}", f"message={_safe(message)}",
                         f"date={date}")
        os.makedirs(d, exist_ok=True)
        final = os.path.join(d, name)
        tmp = os.path.join(d, "." + name + ".tmp")
        pq.write_table(table, tmp, row_group_size=ROW_GROUP, compression="zstd")
        os.replace(tmp, final)
        return final


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

    def line(self):
        lm = sum(self.dbc.length_mismatch.values())
        s = (f"lake: {self.files} files ({self.files_new} new, {self.files_grown} grown, "
             f"{self.files_same} unchanged), {self.rows} rows in {self.parts} parts; "
             f"{self.dbc.frames} frames decoded, {self.dbc.undecoded} raw, "
             f"{lm} of the wrong length, {self.drops} drop records")
        if self.damaged:
            s += "; damaged: " + ", ".join(f"{k} {v}" for k, v in sorted(self.damaged.items()))
        return s


def ingest(out, sources, dbc_paths=(), device=None, labels=True, summary=None):
    """Add the rows of the log files of sources to the lake at out (created if missing).
    Returns a Summary."""
    messages = _dbc.load(dbc_paths) if dbc_paths else {}
    lake = Lake(out)
    sm = summary or Summary()
    for src in sources:
        for name, f in _iter_files(src, strict=True):
            _ingest_file(lake, sm, name, f, messages, device, labels)
    lake.save()
    return sm


def _ingest_file(lake, sm, name, f, messages, device, labels):
    frames, drops, state = [], [], None
    for st, b in _decode_file(name, f):           # one pass: frames and DROP records
        state = st
        if b["ncan"]:
            frames.append(_frames_batch(st, b, with_block=True))
        if b["nother"]:
            db = _other_batch(st, b, "drop", with_block=True)
            if db.num_rows:
                drops.append(db)
    if state is None or state.header is None:
        sm.files += 1
        for k, v in ((state.stats or {}).get("damage", {}) if state else {}).items():
            if v:
                sm.damaged[k] = sm.damaged.get(k, 0) + v
        return
    sm.files += 1
    for k, v in state.stats["damage"].items():
        if v:
            sm.damaged[k] = sm.damaged.get(k, 0) + v
    fid = f"{state.header.file_id:016x}"
    known = lake.manifest["files"].get(fid)
    after = known["last_block"] if known else 0
    last = after
    dev = device or state.meta.get("device") or "unknown"
    realtime = state.header.clock == "realtime"
    tag = None

    def new_rows(batches):
        nonlocal last
        if not batches:
            return None
        t = pa.Table.from_batches(batches)
        blk = t.column("block").to_numpy()
        if len(blk):
            last = max(last, int(blk.max()))
        t = t.filter(pa.array(blk > after)).drop_columns(["block"])
        return t if t.num_rows else None

    ft = new_rows(frames)
    dt = new_rows(drops)
    if last == after:
        sm.files_same += 1
        return
    tag = f"part-{fid}-{after + 1:08d}-{last:08d}.parquet"
    if ft is not None:
        ft = ft.unify_dictionaries().combine_chunks()
        decoded, raw = _dbc.split_frames(ft, messages, sm.dbc, labels) if messages \
            else ({}, ft)
        if not messages:
            sm.dbc.undecoded += raw.num_rows
        decoded["_raw"] = raw
        for msg, t in decoded.items():
            _write_by_date(lake, sm, dev, msg, t, realtime, tag)
    if dt is not None:
        sm.drops += dt.num_rows
        _write_by_date(lake, sm, dev, "_drops", dt, realtime, tag)
    lake.manifest["files"][fid] = {"last_block": last, "source": name, "device": dev,
                                   "clock": state.header.clock}
    lake.save()                       # after this file's parts: a crash redoes only them
    if known:
        sm.files_grown += 1
    else:
        sm.files_new += 1


def _write_by_date(lake, sm, dev, msg, t, realtime, tag):
    if not t.num_rows:
        return
    days, names = _dates(t.column("ts"), realtime)
    for d, label in names.items():
        sub = t.filter(pa.array(days == d)) if len(names) > 1 else t
        lake.write_part(dev, msg, label, tag, sub)
        sm.rows += sub.num_rows
        sm.parts += 1


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
    ap.add_argument("sources", nargs="+", help="image, block device, directory or .SFL file")
    a = ap.parse_args(argv)
    try:
        sm = ingest(a.out, a.sources, a.dbc, a.device, not a.no_labels)
    except (StreamfatError, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    print(sm.line())
    return 0


if __name__ == "__main__":            # pragma: no cover
    sys.exit(main())
