"""read_arrow and read_log over logs the CLI wrote: exact schema, every field of every frame
against the candump lines given to `streamfat log`, record order, batching."""
import struct

import numpy as np
import pyarrow as pa
import pytest

import streamfat
from conftest import candump_frames, log_lines, sf

FRAME_TYPES = [("ts", pa.timestamp("ns", tz="UTC")),
               ("channel", pa.dictionary(pa.int32(), pa.string())), ("id", pa.uint32()),
               ("ext", pa.bool_()), ("rtr", pa.bool_()), ("fd", pa.bool_()),
               ("brs", pa.bool_()), ("esi", pa.bool_()), ("err", pa.bool_()),
               ("dlc", pa.uint8()), ("data", pa.binary()), ("tx", pa.bool_())]


def test_schema_exact(frames_image):
    img, _ = frames_image
    t = streamfat.read_arrow(img)
    assert [(f.name, f.type) for f in t.schema] == FRAME_TYPES
    assert t.schema.metadata[b"streamfat.clock"] == b"realtime"


def test_frames_equal_input(frames_image):
    img, expect = frames_image
    t = streamfat.read_arrow(img)
    assert t.num_rows == len(expect)
    got = t.to_pydict()
    for i, e in enumerate(expect):
        for k, v in e.items():
            g = got[k][i]
            if k == "ts":
                g = g.value
            assert g == v, (i, k, g, v)


def test_read_log_order_and_types(frames_image):
    img, expect = frames_image
    recs = list(streamfat.read_log(img))
    assert isinstance(recs[0], streamfat.Header) and recs[0].clock == "realtime"
    frames = [r for r in recs if isinstance(r, streamfat.Frame)]
    assert [f._asdict() for f in frames] == [dict(e, tx=False) for e in expect]
    # each channel is named (CHANNEL record) before its first frame
    named = set()
    for r in recs:
        if isinstance(r, streamfat.Channel):
            named.add(r.name)
        elif isinstance(r, streamfat.Frame):
            assert r.channel in named
    meta = {r.key: r.value for r in recs if isinstance(r, streamfat.Meta)}
    assert meta["device"] == "bench-1" and meta["source"] == "stdin"


def test_sources_file_stream_volumefile_dir(frames_image, tmp_path):
    img, expect = frames_image
    n = len(expect)
    with streamfat.open_volume(img) as v:
        data = v.open("/LOG00001.SFL").read()
        with v.open("LOG00001.SFL") as f:
            assert streamfat.read_arrow(f).num_rows == n
    (tmp_path / "d" / "sub").mkdir(parents=True)
    p = tmp_path / "d" / "sub" / "LOG00001.SFL"
    p.write_bytes(data)
    assert streamfat.read_arrow(p).num_rows == n
    assert streamfat.read_arrow(tmp_path / "d").num_rows == n
    with open(p, "rb") as fh:
        assert streamfat.read_arrow(fh).num_rows == n
    assert streamfat.read_arrow([p, p]).num_rows == 2 * n
    assert streamfat.list_sources(img) == [f"{img}:/LOG00001.SFL"]


def test_gen_can_many_files_batches(tmp_path, sfbin):
    """gen:can (frame k of a channel: id 0x100 + k % 16, data = k) over several files and
    several 4 MiB batches per file: counts and the pattern, with numpy over the columns."""
    img = tmp_path / "gen.img"
    r = sf("log", "--mkfs", "exfat", "--size", "256M", "--source", "gen:can,channels=2",
           "--max-records", "400000", "--split-size", "8M", "--no-direct", "--json", "-q",
           img)
    import json
    js = json.loads(r.stdout)
    assert js["records_dropped"] == 0
    with streamfat.open_volume(img) as v:
        assert len(v.log_files()) >= 2
    batches = list(streamfat.iter_batches(img))
    assert len(batches) >= 3
    t = streamfat.read_arrow(img)
    assert t.num_rows == js["records_written"]
    for ch in t.column("channel").unique().to_pylist():
        sub = t.filter(pa.compute.equal(t.column("channel").cast(pa.string()), ch))
        k = np.frombuffer(b"".join(sub.column("data").to_pylist()), "<u8")
        assert (k == np.arange(len(k))).all()
        ids = sub.column("id").to_numpy()
        assert (ids == 0x100 + k % 16).all()


def test_bad_arguments(frames_image):
    img, _ = frames_image
    with pytest.raises(ValueError):
        streamfat.read_arrow(img, kind="nope")
    with pytest.raises(ValueError):
        streamfat.read_arrow(img, errors="ignore")
