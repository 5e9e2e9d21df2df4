"""Files others can plant where tkperf (as root) writes: a symbolic link,
a hard link or someone else's file at the device lock, the run's log, the
plots directory or a report file is refused or replaced, never written
through; the file it points to stays as it was."""
import os

import pytest

from conftest import needs_fio
from test_store import sample_run
from tkperf.cli import main
from tkperf.errors import EXIT_OUTPUT, OutputError
from tkperf.model.results import DeviceInfo
from tkperf.report.report import build_report
from tkperf.target.guard import DeviceLock

SECRET = b"victim: must stay unchanged\n"
NOBODY = 65534


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim"
    path.write_bytes(SECRET)
    return path


def _file_dev(tmp_path) -> DeviceInfo:
    img = tmp_path / "t.img"
    img.write_bytes(b"")
    return DeviceInfo(path=str(img), resolved=str(img), kind="file", size_bytes=1 << 20)


def _plant(kind, path, victim):
    if kind == "symlink":
        os.symlink(victim, path)
    elif kind == "hardlink":
        os.link(victim, path)
    elif kind == "other-user":
        path.write_bytes(b"")
        os.chown(path, NOBODY, NOBODY)
    elif kind == "dangling":
        os.symlink(str(victim) + ".new", path)


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "other-user", "dangling"])
def test_a_planted_lock_file_is_refused(kind, tmp_path, victim):
    locks = tmp_path / "lock"
    locks.mkdir()
    lock = DeviceLock(_file_dev(tmp_path), str(locks))
    _plant(kind, tmp_path / "lock" / os.path.basename(lock.path), victim)
    with pytest.raises(OutputError, match="lock file .* (symbolic link|hard links|another user)"):
        lock.acquire()
    assert lock.fd is None
    assert victim.read_bytes() == SECRET
    assert not os.path.exists(str(victim) + ".new")


def test_our_own_lock_file_is_taken_again(tmp_path):
    dev = _file_dev(tmp_path)
    with DeviceLock(dev, str(tmp_path)) as lock:
        pass
    with DeviceLock(dev, str(tmp_path)):
        assert open(lock.path).read() == f"{os.getpid()}\n"


@pytest.mark.parametrize("kind", ["symlink", "other-user"])
def test_a_planted_plots_directory_is_refused(kind, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.png").write_bytes(SECRET)
    out = tmp_path / "out"
    out.mkdir()
    plots = out / "sample-plots"
    if kind == "symlink":
        os.symlink(elsewhere, plots)
    else:
        plots.mkdir()
        os.chown(plots, NOBODY, NOBODY)
    with pytest.raises(OutputError, match="plot directory"):
        build_report(sample_run(), str(out), ("rst",))
    assert os.listdir(elsewhere) == ["keep.png"] and (elsewhere / "keep.png").read_bytes() == SECRET


def test_planted_report_files_are_replaced_not_written_through(tmp_path, victim):
    out = tmp_path / "out"
    out.mkdir()
    for ext in ("rst", "html", "pdf"):
        os.symlink(victim, out / f"sample.{ext}")
    result = build_report(sample_run(), str(out), ("rst", "html", "pdf"))
    assert victim.read_bytes() == SECRET
    for ext in ("rst", "html", "pdf"):
        assert not os.path.islink(out / f"sample.{ext}")
    assert len(result.paths) == 4


@needs_fio
def test_a_planted_log_file_refuses_the_run_before_the_device_is_written(loopdev, tmp_path, victim, capsys):
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "t.log")
    mark = b"untouched device" * 64
    with open(loopdev, "r+b") as fh:
        fh.write(mark)
    rc = main(["ssd", "run", loopdev, "--name", "t", "--outdir", str(out), "--tests", "lat", "--quick",
               "--yes", "-q", "--no-report"])
    err = capsys.readouterr().err
    assert rc == EXIT_OUTPUT and "log file" in err and "symbolic link" in err
    assert victim.read_bytes() == SECRET
    assert not (out / "t.xml").exists()
    with open(loopdev, "rb") as fh:
        assert fh.read(len(mark)) == mark


@needs_fio
def test_a_run_appends_to_its_own_log(loopdev, tmp_path):
    out = tmp_path / "out"
    argv = ["ssd", "run", loopdev, "--name", "t", "--outdir", str(out), "--tests", "lat", "--quick",
            "--lat-bs", "4k", "--lat-mix", "0/100", "--runtime", "1", "--max-rounds", "1",
            "--wipc-loops", "0", "--yes", "-q", "--no-report", "--purge", "none"]
    assert main(argv) == 0
    first = (out / "t.log").read_text()
    assert "tkperf" in first and "run: " in first
    assert main(argv + ["--overwrite"]) == 0
    assert (out / "t.log").read_text().startswith(first)
