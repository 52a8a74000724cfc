"""The record types the CLI does not write (SAMPLE, TEXT, LATENCY, DROP, ANNOTATION) and a
free-running clock, from logs written by the test's own writer (sflwrite.py,
docs/FORMAT.md)."""
import struct

import pyarrow as pa
import pytest

import streamfat
import sflwrite as w


def make(tmp_path, clock=0, name="K.SFL"):
    hdr = [w.rec(w.CHANNEL, 0, 0, b"can0"), w.rec(w.CHANNEL, 3, 0, b"imu"),
           w.rec(w.META, 0, 0, b"device=car-9")]
    b1 = [w.can(0, 1000, 0x123, b"\x01\x02"),
          w.rec(w.SAMPLE, 3, 1100, b"\xaa\xbb\xcc", flags=7),
          w.rec(w.TEXT, 3, 1200, "héllo".encode()),
          w.rec(w.LATENCY, 3, 1300, struct.pack("<qQ", -5, 1_000_000)),
          w.rec(w.DROP, 0, 1400, struct.pack("<QQQ", 42, 900, 950)),
          w.rec(w.ANNOTATION, 0, 1500, b"trigger at 1.5 s"),
          w.rec(0x7F, 0, 1550, b"unknown type: skipped"),
          w.can(0, 1600, 0x1ABCDE, b"", flags=0x01)]
    p = tmp_path / name
    p.write_bytes(w.sfl([b1], clock=clock, header_records=hdr, start_ts=500))
    return p


def test_every_kind_realtime(tmp_path):
    p = make(tmp_path)
    tf = streamfat.read_arrow(p)
    assert tf.column("id").to_pylist() == [0x123, 0x1ABCDE]
    assert tf.column("ext").to_pylist() == [False, True]
    assert tf.column("channel").to_pylist() == ["can0", "can0"]
    s = streamfat.read_arrow(p, kind="sample").to_pylist()
    assert [(r["channel"], r["flags"], r["data"]) for r in s] == [("imu", 7, b"\xaa\xbb\xcc")]
    assert streamfat.read_arrow(p, kind="text").column("text").to_pylist() == ["héllo"]
    lat = streamfat.read_arrow(p, kind="latency").to_pylist()
    assert [(r["channel"], r["latency_ns"], r["period_ns"]) for r in lat] == [("imu", -5, 1_000_000)]
    d = streamfat.read_arrow(p, kind="drop")
    assert d.schema.field("first_ts").type == pa.timestamp("ns", tz="UTC")
    assert [(r["count"], r["first_ts"].value, r["last_ts"].value) for r in d.to_pylist()] == [(42, 900, 950)]
    assert streamfat.read_arrow(p, kind="annotation").column("text").to_pylist() == ["trigger at 1.5 s"]
    m = streamfat.read_arrow(p, kind="meta").to_pylist()
    assert [(r["key"], r["value"]) for r in m] == [("device", "car-9")]
    ch = streamfat.read_arrow(p, kind="channel").to_pylist()
    assert [(r["channel"], r["name"]) for r in ch] == [(0, "can0"), (3, "imu")]
    kinds = [type(r).__name__ for r in streamfat.read_log(p)]
    assert kinds == ["Header", "Channel", "Channel", "Meta", "Frame", "Sample", "Text",
                     "Latency", "Drop", "Annotation", "Frame"]


def test_free_running_clock(tmp_path):
    p = make(tmp_path, clock=2)
    t = streamfat.read_arrow(p)
    assert t.schema.field("ts").type == pa.int64()
    assert t.schema.metadata[b"streamfat.clock"] == b"hardware"
    assert t.column("ts").to_pylist() == [1000, 1600]
    assert streamfat.read_arrow(p, kind="drop").schema.field("first_ts").type == pa.int64()
    # a realtime file and a free-running one together: int64, the clock "mixed"
    q = make(tmp_path, clock=0, name="R.SFL")
    t2 = streamfat.read_arrow([p, q])
    assert t2.schema.field("ts").type == pa.int64()
    assert t2.schema.metadata[b"streamfat.clock"] == b"mixed"
    assert t2.num_rows == 4


def test_empty_tables(tmp_path):
    p = tmp_path / "E.SFL"
    p.write_bytes(w.sfl([], header_records=[w.rec(w.META, 0, 0, b"a=b")]))
    t = streamfat.read_arrow(p)
    assert t.num_rows == 0 and t.schema.field("ts").type == pa.timestamp("ns", tz="UTC")
    assert [f.name for f in t.schema][:3] == ["ts", "channel", "id"]
    z = tmp_path / "Z.SFL"
    z.write_bytes(bytes(4096))               # allocated, never written: not damage
    assert streamfat.read_arrow(z).num_rows == 0
