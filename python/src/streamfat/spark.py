"""A PySpark data source (Spark >= 4.0's Python Data Source API) for streamfat logs.

    import streamfat.spark
    spark = streamfat.spark.local_session()      # or register(spark) with a session of yours
    df = spark.read.format("streamfat").option("dbc", "vehicle.dbc").load("/data/logs/")

Spark's Python workers must import streamfat: local_session() runs them with this Python;
register(spark) checks a session's workers and says what to set (PYSPARK_PYTHON) if not.

load(PATH): a directory (every .SFL file below it), a .SFL file, an image (every .SFL file of
its volume); several paths separated by commas. Options:
  dbc                 DBC files separated by commas: rows of decoded signals (one column per
                      signal, typed as in the lake's Parquet: bigint for integer signals of
                      integer scale and offset, double otherwise, decimal(20,0) for an
                      unsigned 64-bit one; a name two messages share becomes
                      <message>_<signal>) instead of frames
  device              the device id (default: the file's META device=, else "unknown")
  mode                PERMISSIVE (default: damaged blocks skipped, see kind=damage) or
                      FAILFAST (the first damage fails the job with streamfat.FormatError)
  kind                frames (default), drop, or damage (one row per damage the reader
                      rules skipped: the count PERMISSIVE leaves out); messages, uds, obd2,
                      dm1: streamfat.read_messages / read_uds / read_obd2 / read_dm1's
                      tables (what spans frames, docs/PYTHON.md), one partition per file
  isotpPairs, fastPgns  kind=messages, uds, obd2: ISO-TP pairs ("6F1:612:ext") and NMEA
                      2000 fast-packet PGNs, separated by commas
  blocksPerPartition  a file of more blocks is read as several partitions of block ranges
                      (default 2048; 0: one partition per file)

A schema given to the reader (spark.read.format("streamfat").schema("device string, id int,
dlc tinyint")) selects columns: only those are handed to Spark (Spark 4.0's Python Data
Source API prunes none itself, and each column costs the JVM its conversion).

Partitions: one per file, or per block range of a large file; executors need the package
installed (pip install ./python, or spark-submit --py-files with a built wheel) and the
DBC and log paths readable. Spark's timestamps have microseconds: ts is the record time in
microseconds (null for a free-running clock), ts_ns the exact nanoseconds."""
import inspect
import os
import stat
import sys

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from . import dbc as _dbc
from .errors import NotAVolumeError, SourceNotFoundError, StreamfatError
from .reader import (_decode_file, _frames_batch, _NeitherFile, _other_batch, _raise_first,
                     _sfl_files_in_dir, secret_key)
from .volume import Volume

FRAME_DDL = ("file string, device string, date string, ts timestamp, ts_ns bigint, "
             "channel string, id int, ext boolean, rtr boolean, fd boolean, brs boolean, "
             "esi boolean, err boolean, dlc tinyint, data binary, tx boolean")
DROP_DDL = ("file string, device string, date string, ts timestamp, ts_ns bigint, "
            "count bigint, first_ts_ns bigint, last_ts_ns bigint")
DAMAGE_DDL = ("file string, kind string, reason string, block bigint, offset bigint, "
              "blocks bigint")
# what spans frames (streamfat.messages): the tables' columns, the times as ts (the first
# frame's, microseconds) and *_ns (nanoseconds); 8-bit unsigned numbers as smallint
_MSG_HEAD = "file string, device string, date string, ts timestamp, ts_ns bigint, "
MESSAGE_DDL = {
    "messages": _MSG_HEAD + "last_ts_ns bigint, channel string, protocol string, "
    "status string, id int, eff boolean, fc_id int, mode string, addr smallint, sa smallint, "
    "da smallint, prio smallint, pgn int, fd boolean, length int, declared int, frames int, "
    "payload binary",
    "uds": _MSG_HEAD + "last_ts_ns bigint, req_ts_ns bigint, channel string, id int, "
    "eff boolean, fc_id int, kind string, sid smallint, service string, sub smallint, "
    "nrc smallint, nrc_name string, did int, data binary, avail_mask smallint, "
    "dtcs array<struct<dtc: int, status: smallint>>",
    "obd2": _MSG_HEAD + "last_ts_ns bigint, channel string, id int, eff boolean, "
    "mode smallint, pid smallint, frame smallint, kind string, name string, value double, "
    "unit string, text string, data binary",
    "dm1": _MSG_HEAD + "last_ts_ns bigint, channel string, id int, dm string, pgn int, "
    "prio smallint, sa smallint, da smallint, tp boolean, mil string, mil_flash string, "
    "red_stop string, red_stop_flash string, amber_warning string, "
    "amber_warning_flash string, protect string, protect_flash string, spn int, "
    "fmi smallint, oc smallint, cm smallint",
}
DAY_NS = 86_400 * 10**9


def register(spark, check_workers=True):
    """Register the "streamfat" format with a SparkSession.

    check_workers: first run one task that imports streamfat in Spark's Python worker, and
    raise SparkWorkerError (one message: which Python the workers run, what to set) when it
    cannot; otherwise every load() would fail later inside Spark with "No module named
    'streamfat'". Spark starts its workers with PYSPARK_PYTHON (or the configuration
    spark.pyspark.python), else `python3` from PATH, not the Python of the driver."""
    if check_workers:
        _check_workers(spark)
    spark.dataSource.register(StreamfatDataSource)


def local_session(master="local[*]", app_name="streamfat", **conf):
    """A local SparkSession whose workers run this Python (sys.executable, which has
    streamfat), with the "streamfat" format registered. conf: more settings
    (local_session(**{"spark.driver.memory": "2g"})). If a session is already running, Spark returns it and ignores static settings
    (spark.pyspark.python among them): register() then says whether its workers work."""
    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = (SparkSession.builder.master(master).appName(app_name)
         .config("spark.pyspark.python", sys.executable)
         .config("spark.pyspark.driver.python", sys.executable))
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    register(spark)
    return spark


class SparkWorkerError(StreamfatError, RuntimeError):
    """Spark's Python workers cannot import streamfat (register(spark))."""


def _check_workers(spark):
    try:
        sc = spark.sparkContext
    except Exception:                 # Spark Connect: no SparkContext on this side
        return

    # defined here, not at module level: cloudpickle then ships the function itself, not a
    # reference to streamfat.spark that a worker without streamfat could not even unpickle
    def probe(_rows):
        import sys as _sys
        try:
            import streamfat._core  # noqa: F401
            return [(True, _sys.executable, "")]
        except Exception as e:      # ImportError, or a build for another Python
            return [(False, _sys.executable, f"{type(e).__name__}: {e}")]

    ok, exe, why = sc.parallelize([0], 1).mapPartitions(probe).collect()[0]
    if ok:
        return
    setting = sc.getConf().get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    how = (f"spark.pyspark.python / PYSPARK_PYTHON is {setting}" if setting else
           "PYSPARK_PYTHON is not set, so Spark runs python3 from PATH")
    raise SparkWorkerError(
        f"streamfat.spark: Spark's Python workers ({exe}; {how}) cannot import streamfat "
        f"({why}); set PYSPARK_PYTHON={sys.executable} before the session starts (or "
        f".config(\"spark.pyspark.python\", sys.executable) on its builder), use "
        f"streamfat.spark.local_session(), or install the package on every worker")


class Part(InputPartition):
    def __init__(self, image, path, first, last, neither=False):
        super().__init__(None)
        self.image, self.path, self.first, self.last = image, path, first, last
        self.neither = neither        # a file that is no volume, read as a log


def _log_files(p):
    """[(image or None, path, neither)] of one load() path, with the readers' rules and
    errors (streamfat.reader._iter_files): a directory, a .SFL file (or one starting with
    a block, or empty), an image or device, else a file read as a log (neither=True: if no
    block is valid, the error says it is no volume either)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SourceNotFoundError(p) from None
    if stat.S_ISDIR(st.st_mode):
        return [(None, f, False) for f in _sfl_files_in_dir(p)]
    if stat.S_ISREG(st.st_mode):
        with open(p, "rb") as fh:
            head = fh.read(4)
        if p.lower().endswith(".sfl") or head == b"SFLB" or not st.st_size:
            return [(None, p, False)]
    try:
        with Volume(p) as v:
            return [(p, f, False) for f in v.log_files()]
    except NotAVolumeError:
        if not stat.S_ISREG(st.st_mode):
            raise
        return [(None, p, True)]


def _opt(options, key, default=None):
    for k, v in options.items():
        if k.lower() == key.lower():
            return v
    return default


# a decoded signal's Spark type from its Arrow type in the lake's Parquet (streamfat.dbc):
# int64 -> bigint, float64 -> double, uint64 (an unsigned 64-bit signal of scale 1 and offset
# 0) -> decimal(20,0), which is also what Spark reads a Parquet uint64 column as
_SPARK_TYPE = {0: "bigint", 1: "decimal(20,0)", 2: "double"}
_ARROW_TYPE = {0: pa.int64(), 1: pa.decimal128(20, 0), 2: pa.float64()}


def _signal_columns(messages):
    """[(column, message name, signal name, kind)]: kind as streamfat.dbc compiles it (0
    int64, 1 uint64, 2 float64); a column that two messages share with different kinds is
    double."""
    seen = {}
    for m in messages.values():
        for s in m.signals:
            seen.setdefault(s.name, set()).add(m.name)
    cols = []
    names = {}
    for m in sorted(messages.values(), key=lambda m: m.name):
        comp = _dbc.compile_message(m)
        for s in m.signals:
            col = s.name if len(seen[s.name]) == 1 else f"{m.name}_{s.name}"
            kind = int(comp.kinds[comp.index[s.name]])
            if col not in names:
                names[col] = len(cols)
                cols.append((col, m.name, s.name, kind))
            elif cols[names[col]][3] != kind:
                c = cols[names[col]]
                cols[names[col]] = (c[0], c[1], c[2], 2)
    return cols


class StreamfatDataSource(DataSource):
    @classmethod
    def name(cls):
        return "streamfat"

    def _messages(self):
        paths = [p for p in (_opt(self.options, "dbc") or "").split(",") if p]
        return _dbc.load(paths) if paths else {}

    def schema(self):
        kind = (_opt(self.options, "kind") or "frames").lower()
        if kind == "damage":
            return DAMAGE_DDL
        if kind == "drop":
            return DROP_DDL
        if kind in MESSAGE_DDL:
            return MESSAGE_DDL[kind]
        msgs = self._messages()
        if not msgs:
            return FRAME_DDL
        cols = ", ".join(f"`{c}` {_SPARK_TYPE[k]}" for c, _, _, k in _signal_columns(msgs))
        return ("file string, device string, date string, message string, ts timestamp, "
                "ts_ns bigint, channel string, " + cols)

    def reader(self, schema):
        return StreamfatReader(self.options, schema)


class StreamfatReader(DataSourceReader):
    def __init__(self, options, schema):
        self.options = dict(options)
        self.schema = schema
        self.mode = (_opt(options, "mode") or "PERMISSIVE").upper()
        if self.mode not in ("PERMISSIVE", "FAILFAST"):
            raise ValueError(f"mode must be PERMISSIVE or FAILFAST, not {self.mode}")
        self.kind = (_opt(options, "kind") or "frames").lower()
        self.per_part = int(_opt(options, "blocksPerPartition") or 2048)
        self.dbc = [p for p in (_opt(options, "dbc") or "").split(",") if p]
        self.device = _opt(options, "device")
        # option("key", PATH): the secret key file that opens sealed logs; checked here, read
        # again by each worker (the path travels with the plan, not the key)
        self.key_path = _opt(options, "key")
        secret_key(self.key_path)
        # the columns asked for: with spark.read.format("streamfat").schema("id int, dlc
        # tinyint") only those go to Spark (the Python Data Source API of Spark 4.0 prunes
        # no columns itself; every column handed over costs the JVM its conversion)
        self.wanted = None
        fields = getattr(schema, "fields", None)
        if fields is not None:
            self.wanted = [(f.name, _arrow_type(f.dataType)) for f in fields]

    def partitions(self):
        parts = []
        for p in (_opt(self.options, "path") or "").split(","):
            if not p:
                continue
            for image, f, neither in _log_files(p):
                parts += self._split(image, f, neither)
        return parts or [Part(None, None, 0, 0)]

    def _split(self, image, path, neither=False):
        """Block ranges [first, last] of a file (block 0, the header, goes with every one)."""
        if image:
            with Volume(image) as v:
                size = v.stat(path).size
        else:
            size = os.path.getsize(path)
        with self._open(image, path) as f:
            head = f.read(48)
        bs = int.from_bytes(head[40:44], "little") if head[:4] == b"SFLB" else 0
        # a message spans frames: the reassembly reads a file whole
        if not bs or not self.per_part or size <= bs * self.per_part or \
                self.kind in MESSAGE_DDL:
            return [Part(image, path, 0, -1, neither)]
        nblocks = (size + bs - 1) // bs
        # as many ranges as blocksPerPartition asks for, of equal size (not full ones and a
        # short rest): the partitions of a file give the cores equal work
        k = -(-(nblocks - 1) // self.per_part)
        step = -(-(nblocks - 1) // k)
        return [Part(image, path, a, min(a + step, nblocks) - 1)
                for a in range(1, nblocks, step)]

    @staticmethod
    def _open(image, path):
        if image:
            v = Volume(image)
            f = v.open(path)
            orig = f.close

            def close():
                orig()
                v.close()
            f.close = close
            return f
        return open(path, "rb", buffering=0)

    def read(self, part):
        if part.path is None:
            return
        errors = "raise" if self.mode == "FAILFAST" else "skip"
        messages = _dbc.load(self.dbc) if self.dbc and self.kind == "frames" else {}
        sigcols = _signal_columns(messages) if messages else []
        name = f"{part.image}:{part.path}" if part.image else part.path
        if self.kind in MESSAGE_DDL:
            yield from self._read_messages(name, part, errors)
            return
        with self._open(part.image, part.path) as f:
            src = f if part.last < 0 else _Range(f, part.first, part.last)
            rng = src
            if part.neither:
                src = _NeitherFile(src)
            for st, b in _decode_file(name, src, key=secret_key(self.key_path)):
                if part.last >= 0 and rng.zero_filled and b["damage"]:
                    # block 0 was damaged, the gap came as zeros: the damage at block 0
                    # runs on over blocks that are another partition's
                    _cut_gap(st, b, part.first - 1)
                    rng.zero_filled = False
                if errors == "raise":
                    _raise_first(st, b)
                if self.kind == "damage":
                    yield from self._damage_rows(st, b, part)
                    continue
                dev = self.device or st.meta.get("device") or "unknown"
                if self.kind == "drop":
                    t = _other_batch(st, b, "drop")
                    if t.num_rows:
                        yield self._project(self._drop_batch(name, dev, st, t))
                    continue
                if not b["ncan"]:
                    continue
                t = pa.Table.from_batches([_frames_batch(st, b)])
                if not messages:
                    yield self._project(self._frame_batch(name, dev, st, t))
                    continue
                decoded, _raw = _dbc.split_frames(t, messages, labels=False)
                for msg, dt in decoded.items():
                    yield self._project(self._signal_batch(name, dev, st, msg, dt, sigcols))

    def _read_messages(self, name, part, errors):
        """kind=messages, uds, obd2, dm1: the file through streamfat.messages (the
        library's reassembly and decoders), one batch per chunk of log."""
        from . import messages as _msgs
        pairs = [p for p in (_opt(self.options, "isotpPairs") or "").split(",") if p]
        pgns = [int(p) for p in (_opt(self.options, "fastPgns") or "").split(",") if p]
        with self._open(part.image, part.path) as f:
            src = _NeitherFile(f) if part.neither else f
            for st, out in _msgs.iter_file_tables(name, src, (self.kind,),
                                                  isotp_pairs=pairs, fast_pgns=pgns,
                                                  errors=errors):
                t = out[self.kind]
                if not t.num_rows:
                    continue
                dev = self.device or st.meta.get("device") or "unknown"
                cols = self._common(name, dev, st, t.column("first_ts"))
                names = ["file", "device", "date", "ts", "ts_ns"]
                for n in t.schema.names:
                    if n == "first_ts":
                        continue
                    c = t.column(n)
                    if n.endswith("_ts"):
                        n, c = n + "_ns", c.cast(pa.int64())
                    elif pa.types.is_dictionary(c.type):
                        c = c.cast(pa.string())
                    cols.append(c)
                    names.append(n)
                yield self._project(pa.RecordBatch.from_arrays([_one(c) for c in cols],
                                                               names=names), always=True)

    def _project(self, batch, always=False):
        """The batch with the columns (and types) of a schema the user gave, in its order."""
        if self.wanted is None or (not always and
                                   [n for n, _ in self.wanted] == batch.schema.names):
            return batch
        cols = []
        for n, typ in self.wanted:
            i = batch.schema.get_field_index(n)
            if i < 0:
                raise ValueError(f"streamfat: no column {n!r} (columns: "
                                 f"{', '.join(batch.schema.names)})")
            c = batch.column(i)
            cols.append(c if c.type == typ else c.cast(typ))
        return pa.RecordBatch.from_arrays(cols, names=[n for n, _ in self.wanted])

    def _damage_rows(self, st, b, part):
        k = len(b["damage"])
        for d in (st.damage[-k:] if k else []):
            yield (d.file, d.kind, d.reason, d.block, d.offset, d.blocks)

    @staticmethod
    def _common(name, dev, st, ts_col):
        ns = ts_col.cast(pa.int64())
        n = len(ns)
        realtime = st.header is not None and st.header.clock == "realtime"
        if realtime:
            nsv = ns.to_numpy(zero_copy_only=False)
            days = nsv // DAY_NS
            uniq = np.unique(days)                        # a few days: no per-row objects
            names = pa.array([str(np.datetime64(int(d), "D")) for d in uniq], pa.string())
            date = pa.DictionaryArray.from_arrays(
                pa.array(np.searchsorted(uniq, days).astype(np.int32)), names).cast(pa.string())
            ts = pa.array(nsv // 1000, pa.int64()).cast(pa.timestamp("us", tz="UTC"))
        else:
            date = pa.repeat(pa.scalar("unknown"), n)
            ts = pa.nulls(n, pa.timestamp("us", tz="UTC"))
        return [pa.repeat(pa.scalar(name), n), pa.repeat(pa.scalar(dev), n), date, ts, ns]

    def _frame_batch(self, name, dev, st, t):
        cols = self._common(name, dev, st, t.column("ts"))
        cols += [t.column("channel").cast(pa.string()), t.column("id").cast(pa.int32())]
        cols += [t.column(c) for c in ("ext", "rtr", "fd", "brs", "esi", "err")]
        cols += [t.column("dlc").cast(pa.int8()), t.column("data"), t.column("tx")]
        names = ["file", "device", "date", "ts", "ts_ns", "channel", "id", "ext", "rtr", "fd",
                 "brs", "esi", "err", "dlc", "data", "tx"]
        return pa.RecordBatch.from_arrays([_one(c) for c in cols], names=names)

    def _drop_batch(self, name, dev, st, t):
        cols = self._common(name, dev, st, t.column("ts"))
        cols += [t.column("count").cast(pa.int64()),
                 t.column("first_ts").cast(pa.int64()), t.column("last_ts").cast(pa.int64())]
        names = ["file", "device", "date", "ts", "ts_ns", "count", "first_ts_ns", "last_ts_ns"]
        return pa.RecordBatch.from_arrays([_one(c) for c in cols], names=names)

    def _signal_batch(self, name, dev, st, msg, t, sigcols):
        n = t.num_rows
        cols = self._common(name, dev, st, t.column("ts"))
        cols.insert(3, pa.repeat(pa.scalar(msg), n))
        cols += [t.column("channel").cast(pa.string())]
        names = ["file", "device", "date", "message", "ts", "ts_ns", "channel"]
        for col, m, s, kind in sigcols:
            typ = _ARROW_TYPE[kind]
            if m == msg:
                c = t.column(s)
                cols.append(c if c.type == typ else c.cast(typ, safe=False))
            else:
                cols.append(pa.nulls(n, typ))
            names.append(col)
        return pa.RecordBatch.from_arrays([_one(c) for c in cols], names=names)


def _arrow_type(dt):
    """The Arrow type Spark's Python data source worker expects for Spark type dt.

    pyspark's to_arrow_type changed signature after 4.0: 4.0 has timestamp_utc=True (a
    timestamp is timestamp[us, tz=UTC]); later versions (4.3 measured) take the time zone
    as keyword `timezone` and assert that it is given for a timestamp, because it is the
    caller's to choose. The data source worker builds its schema with timezone="UTC" (the
    JVM reads Arrow timestamps as UTC instants), so UTC is right on both."""
    from pyspark.sql.pandas.types import to_arrow_type
    if "timezone" in inspect.signature(to_arrow_type).parameters:
        return to_arrow_type(dt, timezone="UTC")
    return to_arrow_type(dt)


def _one(c):
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c


def _cut_gap(st, b, k):
    """The first damage entry of a partition whose gap came as zeros (_Range.zero_gap) starts
    at block 0 and runs k blocks too far: cut it back."""
    i = len(st.damage) - len(b["damage"])
    d = st.damage[i]
    if d.block != 0 or d.blocks <= 1:
        return
    st.damage[i] = d._replace(blocks=max(1, d.blocks - k))
    e = list(b["damage"][0])
    e[3] = e[6] = max(1, e[6] - k)
    b["damage"] = [tuple(e)] + list(b["damage"][1:])


class _Range:
    """Block 0 of a file, then its blocks first..last: what a partition decodes. Each block is
    judged at its number in the file (docs/FORMAT.md, the position rule): after block 0 the
    decoder is told that the bytes continue at block `first` (`jump`, taken by
    reader._decode_file); when it cannot take that (block 0 damaged, its block size unknown)
    the blocks in between come as zeros (`zero_gap`) and the damage entry of block 0 is cut
    back to block 0 by the reader of the partition."""

    def __init__(self, f, first, last):
        self.f = f
        head = f.read(48)
        self.bs = int.from_bytes(head[40:44], "little")
        f.seek(0)
        self.left0 = self.bs               # block 0 still to read
        self.first, self.last = first, last
        self.left = (last - first + 1) * self.bs
        self.name = getattr(f, "name", "<range>")
        self.jump = None                   # the file offset the next bytes come from
        self.zeros = 0                     # zero bytes to give before them
        self.zero_filled = False

    def zero_gap(self):
        self.zeros = (self.first - 1) * self.bs
        self.zero_filled = self.zeros > 0

    def readinto(self, b):
        mv = memoryview(b)
        if self.left0:
            n = self.f.readinto(mv[:self.left0])
            if not n:
                self.left0 = 0
                return 0
            self.left0 -= n
            if not self.left0:
                self.f.seek(self.first * self.bs)
                self.jump = self.first * self.bs
            return n
        if self.zeros:
            n = min(len(mv), self.zeros)
            mv[:n] = bytes(n)
            self.zeros -= n
            return n
        if self.left <= 0:
            return 0
        n = self.f.readinto(mv[:min(len(mv), self.left)])
        self.left -= n or 0
        return n
