"""A re-run never loses a result: the same command twice (same name and
output directory) is refused before anything touches the device, unless
``--overwrite`` says to replace the earlier result; ``tkperf resume`` is named."""
import os
import shutil

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_USAGE

pytestmark = needs_fio

SMALL = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "1", "--wipc-loops", "0", "--no-report", "-q", "--yes", "--purge", "none"]
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "example-ssd.xml")
MARK = b"tkperf-rerun-marker" * 100


def _mark(dev: str) -> None:
    fd = os.open(dev, os.O_WRONLY)
    try:
        os.pwrite(fd, MARK, 0)
        os.fsync(fd)
    finally:
        os.close(fd)


def _marked(dev: str) -> bool:
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.pread(fd, len(MARK), 0) == MARK
    finally:
        os.close(fd)


def test_the_same_run_twice_is_refused_and_overwrite_replaces(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["ssd", "run", loopdev, "--name", "t", "--outdir", str(out), *SMALL]
    assert main(argv) == EXIT_OK
    xml = out / "t.xml"
    first = xml.read_bytes()
    capsys.readouterr()
    _mark(loopdev)
    assert main(argv) == EXIT_OUTPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tkperf: error: ")
    assert f"tkperf resume {xml}" in err and "--overwrite" in err
    assert xml.read_bytes() == first
    assert _marked(loopdev), "the refused run wrote to the device"
    assert main(argv + ["--overwrite"]) == EXIT_OK
    assert xml.read_bytes() != first
    assert store.load(str(xml)).status == "complete"


@pytest.mark.parametrize("status", ["interrupted", "running"])
def test_a_partial_result_is_not_replaced_either(status, loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    run = store.load(EXAMPLE)
    run.name, run.status = "t", status
    store.save(run, str(out / "t.xml"))
    before = (out / "t.xml").read_bytes()
    _mark(loopdev)
    assert main(["ssd", "run", loopdev, "--name", "t", "--outdir", str(out), *SMALL]) == EXIT_OUTPUT
    assert "tkperf resume" in capsys.readouterr().err
    assert (out / "t.xml").read_bytes() == before
    assert _marked(loopdev)
    assert sorted(os.listdir(out)) == ["t.xml"]  # no log, no report, nothing else


def test_resume_and_overwrite_together_are_a_usage_error(loopdev, tmp_path, capsys):
    argv = ["ssd", "run", loopdev, "--name", "t", "--outdir", str(tmp_path), *SMALL, "--resume", "--overwrite"]
    assert main(argv) == EXIT_USAGE
    assert "give one" in capsys.readouterr().err


def test_several_targets_refuse_before_any_starts(tmp_path, capsys):
    # Two file targets; the second's result exists: neither run starts.
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        with open(f, "wb") as fh:
            fh.truncate(64 << 20)
            fh.write(MARK)
    out = tmp_path / "out"
    (out / "b.img").mkdir(parents=True)
    shutil.copy(EXAMPLE, out / "b.img" / "b.img.xml")
    before = (out / "b.img" / "b.img.xml").read_bytes()
    argv = ["ssd", "run", str(a), str(b), "--size", "64m", "--outdir", str(out), *SMALL]
    assert main(argv) == EXIT_OUTPUT
    err = capsys.readouterr().err
    assert "b.img.xml holds the result of an earlier run" in err and "--overwrite" in err
    assert (out / "b.img" / "b.img.xml").read_bytes() == before
    assert not (out / "a.img").exists()
    for f in (a, b):
        assert f.read_bytes()[:len(MARK)] == MARK
