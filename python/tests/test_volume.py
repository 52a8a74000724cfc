"""open_volume: images (exFAT, FAT32, 4096-byte sectors, MBR and GPT partitions), ls, stat,
open, walk; bytes equal to `streamfat cat`; an image that is not a volume."""
import random

import pytest

import streamfat
from conftest import sf


@pytest.mark.parametrize("mk", [["-t", "exfat"], ["-t", "fat32"],
                                ["-t", "exfat", "--partition", "mbr"],
                                ["-t", "fat32", "--partition", "gpt"],
                                ["-t", "exfat", "--sector-size", "4096"]])
def test_tree_and_bytes(mk, tmp_path, sfbin):
    img = tmp_path / "v.img"
    sf("mkfs", *mk, "-s", "64M", img)
    sf("mkdir", img, "/logs")
    sf("mkdir", img, "/logs/a")
    payload = random.Random(1).randbytes(300_001)
    (tmp_path / "p.bin").write_bytes(payload)
    sf("put", "--no-direct", img, tmp_path / "p.bin", "/logs/a/P.BIN")
    sf("put", "--no-direct", img, tmp_path / "p.bin", "/top.bin")
    with streamfat.open_volume(img) as v:
        info = v.info()
        assert info["fs_type"] == mk[1]
        if "--partition" in mk:
            assert info["volume_offset"] > 0
        names = [e.name for e in v.ls("/")]
        assert names == sorted(["logs", "top.bin"])
        assert v.stat("/logs/a/P.BIN").size == len(payload)
        walked = [(d, sorted(ds), sorted(fs)) for d, ds, fs in v.walk()]
        assert walked == [("/", ["logs"], ["top.bin"]), ("/logs", ["a"], []),
                          ("/logs/a", [], ["P.BIN"])]
        with v.open("/logs/a/P.BIN") as f:
            assert f.read() == payload
            f.seek(1000)
            assert f.read(10) == payload[1000:1010]
        assert sf("cat", img, "/top.bin").stdout == payload
        with pytest.raises(FileNotFoundError):
            v.open("/nope")
        with pytest.raises(FileNotFoundError):
            v.ls("/nope")


def test_explicit_partition(tmp_path, sfbin):
    img = tmp_path / "m.img"
    sf("mkfs", "-t", "exfat", "--partition", "mbr", "-s", "64M", img)
    with streamfat.open_volume(img, partition=1) as v:
        assert v.info()["fs_type"] == "exfat"
    with pytest.raises(streamfat.NotAVolumeError):
        streamfat.open_volume(img, partition=2)


def test_not_a_volume(tmp_path):
    p = tmp_path / "junk.img"
    p.write_bytes(random.Random(2).randbytes(1 << 20))
    with pytest.raises(streamfat.NotAVolumeError, match="not a FAT or exFAT volume"):
        streamfat.open_volume(p)
    z = tmp_path / "zero.img"
    z.write_bytes(bytes(1 << 20))
    with pytest.raises(streamfat.NotAVolumeError):
        streamfat.open_volume(z)
    with pytest.raises(FileNotFoundError):
        streamfat.open_volume(tmp_path / "missing.img")


def test_block_device_and_partition(tmp_path, sfbin):
    """A loop device of an MBR disk image: the whole device and its partition device."""
    import os
    import shutil
    import subprocess
    import time
    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("needs root and losetup for a loop device")
    img = tmp_path / "disk.img"
    sf("mkfs", "-t", "exfat", "--partition", "mbr", "-s", "64M", img)
    (tmp_path / "x.bin").write_bytes(b"block device bytes" * 1000)
    sf("put", "--no-direct", img, tmp_path / "x.bin", "/X.BIN")
    loop = subprocess.run(["losetup", "-f", "--show", "-r", "-P", str(img)],
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL).stdout.strip()
    if not loop:
        pytest.skip("losetup could not attach a loop device")
    loops = [loop]
    try:
        with streamfat.open_volume(loop) as v:
            info = v.info()
            assert info["volume_offset"] > 0
            assert v.open("/X.BIN").read() == b"block device bytes" * 1000
        part = loop + "p1"
        for _ in range(30):
            if os.path.exists(part):
                break
            time.sleep(0.1)
        if not os.path.exists(part):
            # no partition scanning here (containers): a loop device over the partition's
            # bytes is the same thing as /dev/sdb1
            part = subprocess.run(
                ["losetup", "-f", "--show", "-r", "-o", str(info["volume_offset"]),
                 "--sizelimit", str(info["volume_size"]), str(img)], capture_output=True,
                text=True, timeout=60, stdin=subprocess.DEVNULL).stdout.strip()
            assert part, "losetup -o failed"
            loops.append(part)
        with streamfat.open_volume(part) as v:
            assert v.info()["volume_offset"] == 0
            assert [e.name for e in v.ls("/")] == ["X.BIN"]
    finally:
        for lp in loops:
            subprocess.run(["losetup", "-d", lp], timeout=60, stdin=subprocess.DEVNULL)
