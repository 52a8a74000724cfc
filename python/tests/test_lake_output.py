"""The lake's output files follow the CLI's output rule (docs/EXPORT.md "Output files",
issue 26 item 1): the manifest is replaced through a unique temporary file beside it,
fsynced, and only when complete (a failed write leaves it byte-identical and no temporary
file behind); each Parquet part is durable (fsynced) before it gets its name, so a manifest
never names a part a power cut could leave empty."""
import errno
import hashlib
import os

import pytest

from streamfat import lake
from conftest import log_lines
from test_dbc import vehicle_lines


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_in(root):
    """The lake's files with their digests (the partition directories a failed run may
    have made stay: they are empty and harmless)."""
    return sorted((str(p.relative_to(root)), digest(p)) for p in root.rglob("*")
                  if p.is_file())


@pytest.fixture(scope="module")
def two_images(tmp_path_factory, sfbin):
    d = tmp_path_factory.mktemp("lakeout")
    a, _ = vehicle_lines(31, 800)
    b, _ = vehicle_lines(32, 800)
    return log_lines(d / "a.img", a, device_id="va"), log_lines(d / "b.img", b, device_id="vb")


def test_manifest_kept_when_its_write_fails(two_images, tmp_path, monkeypatch):
    out = tmp_path / "L"
    lake.ingest(str(out), [str(two_images[0])])
    man = out / lake.MANIFEST
    before, files = digest(man), files_in(out)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(lake.os, "fsync", full)
    with pytest.raises(OSError):
        lake.ingest(str(out), [str(two_images[1])])
    monkeypatch.undo()
    assert digest(man) == before
    # nothing half-written stays: no temporary manifest or part, no part renamed in
    assert files_in(out) == files
    lake.ingest(str(out), [str(two_images[1])])             # and a later run works
    assert digest(man) != before


def test_part_fsynced_before_its_name(two_images, tmp_path, monkeypatch):
    synced, order = set(), []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        synced.add(os.path.realpath(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    def replace(src, dst):
        order.append((str(dst), os.path.realpath(src) in synced))
        return real_replace(src, dst)
    monkeypatch.setattr(lake.os, "fsync", fsync)
    monkeypatch.setattr(lake.os, "replace", replace)
    out = tmp_path / "L"
    lake.ingest(str(out), [str(two_images[0])])
    parts = [ok for dst, ok in order if dst.endswith(".parquet")]
    assert parts and all(parts), order
    assert all(ok for _, ok in order), order                 # the manifest too


def test_manifest_mode_as_open_would_make_it(two_images, tmp_path):
    out = tmp_path / "L"
    old = os.umask(0o022)
    try:
        lake.ingest(str(out), [str(two_images[0])])
    finally:
        os.umask(old)
    assert (os.stat(out / lake.MANIFEST).st_mode & 0o777) == 0o644
