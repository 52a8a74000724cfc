"""Sealed logs (issue 29, docs/FORMAT.md "Sealed files", docs/PYTHON.md): read_arrow,
iter_batches, read_log and the lake take the secret key (a key file's path or its 32
bytes) and give exactly what the same frames logged plain give; without the key, or with
another, SealedLogError names the key id the file wants and nothing is read; a tampered
block is damage ("unauthentic"), the rest still reads."""
import struct
import subprocess
import sys

import pytest

import streamfat
from streamfat import lake
from conftest import candump_frames, log_lines, sf


@pytest.fixture(scope="module")
def sealed(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("sealed")
    sf("keygen", d / "k")
    sf("keygen", d / "other")
    lines = [line for line, _ in candump_frames(29, 3000)]
    plain = log_lines(d / "plain.img", lines, "--chunk", "4K", device_id="car1")
    img = log_lines(d / "sealed.img", lines, "--chunk", "4K", "--encrypt-to", d / "k.pub",
                    device_id="car1")
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        (d / "s.sfl").write_bytes(f.read())
    key_id = (d / "k.pub").read_text().split()[1][:16]
    return d, plain, img, key_id


def _frames(t):
    return t.drop_columns([c for c in t.column_names if c == "block"]) \
        .replace_schema_metadata(None)


def test_read_arrow_with_the_key_equals_plain(sealed):
    d, plain, img, _kid = sealed
    want = streamfat.read_arrow(plain)
    got = streamfat.read_arrow(img, key=d / "k.key")
    assert got.num_rows == 3000
    assert _frames(got).equals(_frames(want))
    raw = bytes.fromhex((d / "k.key").read_text().split()[1])
    assert _frames(streamfat.read_arrow(d / "s.sfl", key=raw)).equals(_frames(want))
    n = sum(b.num_rows for b in streamfat.iter_batches(img, key=str(d / "k.key")))
    assert n == 3000
    recs = [r for r in streamfat.read_log(img, key=d / "k.key")
            if isinstance(r, streamfat.Frame)]
    assert len(recs) == 3000


def test_without_or_with_another_key(sealed):
    d, _plain, img, kid = sealed
    with pytest.raises(streamfat.SealedLogError) as e:
        streamfat.read_arrow(img)
    assert f"sealed to key id {kid}" in str(e.value)
    assert str(e.value).count("\n") == 0
    with pytest.raises(streamfat.SealedLogError) as e:
        streamfat.read_arrow(img, key=d / "other.key")
    assert f"sealed to key id {kid}, not to the key given" in str(e.value)
    assert isinstance(e.value, streamfat.NotALogError)
    t = streamfat.read_arrow(img, errors="skip")
    assert t.num_rows == 0
    assert streamfat.damage_summary(t)["damage"] == {"not a log": 1}
    with pytest.raises(ValueError, match="public key file"):
        streamfat.read_arrow(img, key=d / "k.pub")
    with pytest.raises(ValueError, match="32 bytes"):
        streamfat.read_arrow(img, key=b"short")


def test_tampered_block_is_damage_the_rest_reads(sealed):
    d, _plain, _img, _kid = sealed
    data = bytearray((d / "s.sfl").read_bytes())
    B = struct.unpack_from("<I", data, 40)[0]
    data[2 * B + 200] ^= 1                          # ciphertext of block 2 ...
    used = struct.unpack_from("<I", data, 2 * B + 32)[0]
    from streamfat import _core  # noqa: F401  (the CRC made right: only the AEAD can tell)
    crc = _crc32c(bytes(data[2 * B + 48:2 * B + 48 + used]), _crc32c(bytes(data[2 * B:2 * B + 44])))
    struct.pack_into("<I", data, 2 * B + 44, crc ^ 0xFFFFFFFF)
    (d / "t.sfl").write_bytes(data)
    with pytest.raises(streamfat.FormatError, match="unauthentic"):
        streamfat.read_arrow(d / "t.sfl", key=d / "k.key")
    t = streamfat.read_arrow(d / "t.sfl", key=d / "k.key", errors="skip")
    assert 0 < t.num_rows < 3000
    assert streamfat.damage_summary(t)["damage"] == {"unauthentic": 1}


def _crc32c(b, crc=0xFFFFFFFF):
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc


def test_lake_key(sealed, tmp_path):
    d, plain, img, kid = sealed
    sm = lake.ingest(tmp_path / "lake", [img], key=d / "k.key")
    assert sm.files == 1 and not sm.not_logs
    sm2 = lake.ingest(tmp_path / "lake2", [plain])
    assert sm.line() == sm2.line()
    r = subprocess.run([sys.executable, "-m", "streamfat.lake", "--out", str(tmp_path / "l3"),
                        str(img)], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"sealed to key id {kid}" in r.stderr
    r = subprocess.run([sys.executable, "-m", "streamfat.lake", "--out", str(tmp_path / "l4"),
                        "--key", str(d / "k.key"), str(img)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_compressed_and_sealed_equals_plain(sealed, tmp_path):
    """log --compress --encrypt-to: kind-3 blocks sealed after packing (features bits 32
    and 33); read_arrow(key=) gives exactly the plain log's frames, the lake too, and a
    tampered compressed block is unauthentic (the AEAD check before unpacking)."""
    d, plain, _img, kid = sealed
    lines = [line for line, _ in candump_frames(29, 3000)]
    img = log_lines(tmp_path / "cs.img", lines, "--chunk", "4K", "--compress",
                    "--encrypt-to", d / "k.pub", device_id="car1")
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        data = bytearray(f.read())
    B = struct.unpack_from("<I", data, 40)[0]
    assert struct.unpack_from("<Q", data, 48 + 24)[0] >> 32 & 3 == 3
    assert struct.unpack_from("<H", data, B + 6)[0] == 3
    want = streamfat.read_arrow(plain)
    got = streamfat.read_arrow(img, key=d / "k.key")
    assert got.num_rows == 3000
    assert _frames(got).equals(_frames(want))
    assert sum(b.num_rows for b in streamfat.iter_batches(img, key=d / "k.key")) == 3000
    with pytest.raises(streamfat.SealedLogError, match=f"sealed to key id {kid}"):
        streamfat.read_arrow(img)
    sm = lake.ingest(tmp_path / "lake", [img], key=d / "k.key")
    assert sm.line() == lake.ingest(tmp_path / "lake2", [plain]).line()
    data[B + 48 + 100] ^= 1                         # the ciphertext of compressed block 1
    used = struct.unpack_from("<I", data, B + 32)[0]
    crc = _crc32c(bytes(data[B + 48:B + 48 + used]), _crc32c(bytes(data[B:B + 44])))
    struct.pack_into("<I", data, B + 44, crc ^ 0xFFFFFFFF)
    (tmp_path / "t.sfl").write_bytes(data)
    t = streamfat.read_arrow(tmp_path / "t.sfl", key=d / "k.key", errors="skip")
    assert 0 < t.num_rows < 3000
    assert streamfat.damage_summary(t)["damage"] == {"unauthentic": 1}
