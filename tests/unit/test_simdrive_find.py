"""control.find resolves a loop device by its current backing file (issue 56
item 7): a stale runtime directory that still names the loop device (an
interrupted ``down``) does not answer for the drive bound to it now."""
import os

import pytest

from tkperf.errors import TargetError
from tkperf.simdrive import control


@pytest.fixture
def base(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the runtime base must be root's")
    root = tmp_path / "run"
    root.mkdir(mode=0o700)
    monkeypatch.setattr(control, "BASE", str(root))
    for name in ("a-stale", "simdrive3"):  # the stale one sorts first
        (root / name / "mnt").mkdir(parents=True, mode=0o700)
        (root / name / "device").write_text("/dev/loop7")
    return root


def _bound_to(monkeypatch, backing):
    seen = []

    def sysfs(device, name):
        seen.append((device, name))
        return backing if (device, name) == ("/dev/loop7", "loop/backing_file") else ""
    monkeypatch.setattr(control, "_sysfs", sysfs)
    return seen


def test_find_takes_the_drive_on_the_loop_not_a_stale_folder(base, monkeypatch):
    seen = _bound_to(monkeypatch, f"{base}/simdrive3/mnt/drive")
    assert control.find("/dev/loop7") == f"{base}/simdrive3"
    assert seen == [("/dev/loop7", "loop/backing_file")]
    assert control.find("a-stale") == f"{base}/a-stale"  # by name: the folder itself (down removes it)


def test_find_refuses_a_loop_bound_to_no_drive(base, monkeypatch):
    _bound_to(monkeypatch, "/srv/images/disk.img")
    with pytest.raises(TargetError, match="is not an emulated SSD"):
        control.find("/dev/loop7")  # both folders name it; neither drive is on it
    _bound_to(monkeypatch, "")  # detached
    with pytest.raises(TargetError, match="is not an emulated SSD"):
        control.find("/dev/loop7")
