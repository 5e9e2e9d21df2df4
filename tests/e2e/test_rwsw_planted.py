"""Files a capture reads or writes where another user may plant a link (issue
38): the file named by ``capture --import``, a capture (``--workload``,
``show``), the iolog beside it (``--replay exact``), the blkparse text of an
imported binary trace, and ``--outdir``.  tkperf runs as root and this
machine's kernel may not stop it (``fs.protected_symlinks`` 0): a symbolic
link owned by another user is refused in one line with the documented exit
code (7 for what is read, 8 for where it writes), and the file behind it is
neither read nor written.  The shared directory is made as ``/tmp`` is
(mode 1777), the links are given to uid 65534 with ``os.lchown``."""
from __future__ import annotations

import gzip
import os
import shutil
import threading

import pytest

import rwsw_captures
from conftest import data_path
from planted import needs_root, plant, shared_dir
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_RESULT_FILE, ResultFileError
from tkperf.rwsw import iolog, model, summary

MIX = data_path(os.path.join("rwsw", "blkparse-mix.txt"))
BINARY = data_path(os.path.join("rwsw", "blktrace-mix.bin.gz"))
SECRET = b"victim: must stay unchanged\n"

pytestmark = needs_root


@pytest.fixture
def shared(tmp_path):
    return shared_dir(tmp_path)


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tkperf: error:"), err
    return err[0]


def _kernel_follows() -> bool:
    with open("/proc/sys/fs/protected_symlinks", encoding="ascii") as fh:
        return fh.read().strip() == "0"


def test_an_import_through_another_users_link_is_refused(tmp_path, shared, capsys):
    private = tmp_path / "private.txt"
    shutil.copy(MIX, private)
    link = shared / "trace.txt"
    plant(link, private)
    if _kernel_follows():  # the kernel would let root read through it: tkperf is what refuses
        assert link.read_bytes() == private.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    assert main(["capture", "--import", str(link), "--name", "x", "--outdir", str(out)]) == EXIT_RESULT_FILE
    line = _one_error(capsys)
    assert "symbolic link of another user (uid 65534)" in line and str(link) in line
    assert os.listdir(out) == []


def test_a_link_of_roots_own_is_followed(tmp_path, shared, capsys):
    private = tmp_path / "private.txt"
    shutil.copy(MIX, private)
    link = shared / "trace.txt"
    plant(link, private, uid=0)
    assert main(["capture", "--import", str(link), "--name", "x", "--outdir", str(tmp_path), "-q"]) == EXIT_OK
    assert sum(s.ios for s in model.load(str(tmp_path / "x.xml")).streams) == 400


def test_a_directory_link_of_another_user_on_the_path_is_refused(tmp_path, shared, capsys):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(MIX, real / "trace.txt")
    plant(shared / "dir", real)
    assert main(["capture", "--import", str(shared / "dir" / "trace.txt"), "--name", "x",
                 "--outdir", str(tmp_path)]) == EXIT_RESULT_FILE
    assert f"{shared / 'dir'} is a symbolic link of another user" in _one_error(capsys)


def test_a_planted_fifo_is_refused_without_waiting(tmp_path, shared, capsys):
    fifo = shared / "trace.txt"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(
        main(["capture", "--import", str(fifo), "--name", "x", "--outdir", str(tmp_path)])), daemon=True)
    t.start()
    t.join(20)
    if not done:  # a blocked open: unblock it so the test ends, and fail
        with open(fifo, "wb"):
            pass
        t.join(5)
        pytest.fail("the import waited on a FIFO")
    assert done == [EXIT_RESULT_FILE] and "not a regular file" in _one_error(capsys)


def test_outdir_through_another_users_link_is_refused(tmp_path, shared, capsys):
    victim = tmp_path / "victim-dir"
    victim.mkdir()
    plant(shared / "out", victim)
    assert main(["capture", "--import", MIX, "--name", "x", "--outdir", str(shared / "out")]) == EXIT_OUTPUT
    assert "--outdir" in _one_error(capsys)
    assert os.listdir(victim) == []


def test_planted_outputs_are_never_written_through(tmp_path, shared, capsys):
    victim = tmp_path / "victim"
    victim.write_bytes(SECRET)
    for name in ("x.xml", "x.iolog"):
        link = shared / name
        plant(link, victim)
        assert main(["capture", "--import", MIX, "--name", "x", "--outdir", str(shared)]) == EXIT_OUTPUT
        assert "exists" in _one_error(capsys)
        link.unlink()
    # the names the old import gave its temporary files: nothing there is opened now
    for name in ("x.iolog.tmp", ".x.blkparse.tmp"):
        plant(shared / name, victim)
    assert main(["capture", "--import", MIX, "--name", "x", "--outdir", str(shared), "-q"]) == EXIT_OK
    assert victim.read_bytes() == SECRET
    assert sorted(os.listdir(shared)) == [".x.blkparse.tmp", "x.iolog", "x.iolog.tmp", "x.xml"]


@pytest.mark.skipif(shutil.which("blkparse") is None, reason="needs blkparse (Debian blktrace)")
def test_blkparse_writes_no_named_file_a_link_could_take(tmp_path, shared):
    """blkparse is given descriptors, not names: a link planted where the
    import once had blkparse write its text is left alone."""
    binary = shared / "mix.blktrace"
    with gzip.open(BINARY) as src, open(binary, "wb") as dst:
        shutil.copyfileobj(src, dst)
    victim = tmp_path / "victim"
    victim.write_bytes(SECRET)
    plant(shared / ".b.blkparse.tmp", victim)
    assert main(["capture", "--import", str(binary), "--name", "b", "--outdir", str(shared), "-q"]) == EXIT_OK
    assert victim.read_bytes() == SECRET
    assert sum(s.ios for s in model.load(str(shared / "b.xml")).streams) == 400


def test_a_capture_through_another_users_link_is_refused(loopdev, tmp_path, shared, capsys):
    real = rwsw_captures.write(str(tmp_path))
    link = shared / "cap.xml"
    plant(link, real)
    with pytest.raises(ResultFileError, match="symbolic link of another user"):
        model.load(str(link))
    assert not summary.is_capture_file(str(link))  # show and report do not read it as a capture
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--workload", str(link), "--dry-run"])
    assert rc == EXIT_RESULT_FILE and "symbolic link of another user" in _one_error(capsys)


def test_an_iolog_planted_beside_a_capture_is_refused(loopdev, tmp_path, shared, capsys):
    """The capture is the user's; the iolog its XML names sits beside it in a
    shared directory, where another user swapped in a link."""
    made = tmp_path / "made"
    made.mkdir()
    path = rwsw_captures.write_with_iolog(str(made), n=50)
    shutil.copy(path, shared / "cap.xml")
    other = tmp_path / "other.iolog"
    shutil.copy(made / "cap.iolog", other)
    plant(shared / "cap.iolog", other)
    with pytest.raises(ResultFileError, match="symbolic link of another user"):
        iolog.scan(str(shared / "cap.iolog"))
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--replay", "exact", "--workload",
               str(shared / "cap.xml"), "--dry-run"])
    assert rc == EXIT_RESULT_FILE
    line = _one_error(capsys)
    assert "cap.iolog" in line and "symbolic link of another user" in line
    # the same link made by root is the user's own: the dry run goes ahead
    (shared / "cap.iolog").unlink()
    plant(shared / "cap.iolog", other, uid=0)
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--replay", "exact", "--workload",
               str(shared / "cap.xml"), "--dry-run"])
    assert rc == EXIT_OK
