"""Compressed record blocks (`streamfat log --compress`, docs/FORMAT.md "Compressed record
blocks"): the package and the lake read them unchanged from the user's side: the same
candump lines logged plain and compressed give the same tables, batch by batch and whole,
and the same lake."""
import pyarrow.parquet as pq
import pytest

import streamfat
from streamfat import lake

from conftest import candump_frames, log_lines, sf


@pytest.fixture(scope="module")
def pair(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("packed")
    lines = [l for l, _ in candump_frames(29, 6000)]
    plain = log_lines(d / "plain.img", lines, "--chunk", "4K", device_id="van3")
    packed = log_lines(d / "packed.img", lines, "--chunk", "4K", "--compress", device_id="van3")
    return plain, packed


def test_packed_really(pair):
    _, packed = pair
    out = sf("ls", "--json", packed).stdout.decode()
    assert '"compression": ' in out


def test_same_table(pair):
    plain, packed = pair
    a, b = streamfat.read_arrow(plain), streamfat.read_arrow(packed)
    assert a.num_rows == 6000
    assert a.equals(b)
    for kind in ("channel", "meta", "drop"):
        assert streamfat.read_arrow(plain, kind=kind).num_rows == \
            streamfat.read_arrow(packed, kind=kind).num_rows


def test_same_batches(pair):
    plain, packed = pair
    rows_a = sum(t.num_rows for t in streamfat.iter_batches(plain))
    rows_b = sum(t.num_rows for t in streamfat.iter_batches(packed))
    assert rows_a == rows_b == 6000


def test_same_lake(pair, tmp_path):
    plain, packed = pair
    sa = lake.ingest(tmp_path / "A", [plain], [])
    sb = lake.ingest(tmp_path / "B", [packed], [])
    assert sa.rows == sb.rows == 6000
    ta = pq.read_table(sorted((tmp_path / "A").rglob("*.parquet"))[0])
    tb = pq.read_table(sorted((tmp_path / "B").rglob("*.parquet"))[0])
    assert ta.equals(tb)
