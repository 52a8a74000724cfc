"""streamfat log --device-id NAME: a META record device=NAME in every file's header block
(rotated files too); bad names refused with one line."""
import pytest

import streamfat
import sflwrite  # noqa: F401  (the header-block check below reads the bytes itself)
from conftest import sf


def test_every_file_header(tmp_path, sfbin):
    img = tmp_path / "d.img"
    sf("log", "--mkfs", "exfat", "--size", "128M", "--source", "gen:can",
       "--max-records", "150000", "--split-size", "1M", "--device-id", "van-42",
       "--no-direct", "-q", img)
    with streamfat.open_volume(img) as v:
        files = v.log_files()
        assert len(files) >= 3
        for path in files:
            with v.open(path) as f:
                recs = list(streamfat.read_log(f))
            hdr = recs[0]
            assert isinstance(hdr, streamfat.Header)
            metas = [r for r in recs if isinstance(r, streamfat.Meta)]
            assert ("device", "van-42") in [(m.key, m.value) for m in metas]
            # in the header block: its timestamp is the file's start time
            dev = [m for m in metas if m.key == "device"][0]
            assert dev.ts == hdr.start_ts


@pytest.mark.parametrize("bad", ["", "a/b", "x" * 65, "k=v"])
def test_bad_device_id(bad, tmp_path, sfbin):
    r = sf("log", "--source", "gen:can", "--max-records", "10", "--device-id", bad,
           tmp_path / "x.img", check=False)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "invalid --device-id" in err and len(err.strip().splitlines()) <= 2
