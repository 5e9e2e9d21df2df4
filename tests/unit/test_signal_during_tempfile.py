"""A signal that arrives just as tkperf makes a temporary file (the result
file's atomic write, a kept fio output, a capture's I/O list, a fio job
file, the probe of ``--json-summary``'s folder; all made by
``files.temp_file``) leaves no temporary file behind: the handler's raise
waits until the file's name has reached the code that removes it on the
way out (``programs.signals_held``).  Before, SIGINT between a round's
save and the next round could leave ``.NAME.xml.XXXXXXXX.tmp`` beside the
result (seen beside a CPU hog), and SIGINT as a fio job file was made left
``.tkperf-XXXXXXXX.fio`` in the output folder."""
import contextlib
import os
import signal
import tempfile

import pytest

from conftest import data_path
from tkperf import notify
from tkperf.cli import main
from tkperf.errors import EXIT_SIGINT, Interrupted
from tkperf.fio import backend, keep
from tkperf.model import files
from tkperf.rwsw import capture
from tkperf.target import guard

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "example-ssd.xml")


@pytest.fixture
def signal_once_made(monkeypatch):
    """mkstemp that sends this process SIGINT once its file exists, before it returns."""
    real = tempfile.mkstemp

    def mkstemp_then_signal(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here when nothing holds it
            pass
        return made

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_signal)


def job_file(directory):
    """The local fio back end's job file, as a round's fio is started."""
    fio = object.__new__(backend.LocalFio)  # no fio is run: only its job file is made
    fio.workdir = directory
    with fio._job_file("[job]\nrw=read\n"):
        pass


MAKERS = {
    "fio job file": job_file,
    "--json-summary's probe": lambda d: notify.check_summary_path(os.path.join(d, "summary.json")),
    "result file": lambda d: files.atomic_write(os.path.join(d, "run.xml"), b"<new/>"),
    "kept fio output": lambda d: keep._Gzip(d, "001.json.gz"),
    "capture iolog": lambda d: _iolog(d),
}


def _iolog(directory):
    """A capture's I/O list as ``capture`` and ``capture --import`` make it."""
    with capture._Iolog(os.path.join(directory, "cap.iolog")):
        pass


@pytest.mark.parametrize("what", sorted(MAKERS))
def test_a_signal_as_the_temporary_file_is_made_leaves_none(tmp_path, signal_once_made, what):
    (tmp_path / "run.xml").write_bytes(b"<old/>")
    with pytest.raises(Interrupted) as raised:
        with guard.signals_raise():
            MAKERS[what](str(tmp_path))
            pytest.fail("the signal was lost")
    assert raised.value.signum == signal.SIGINT
    assert sorted(os.listdir(tmp_path)) == ["run.xml"]  # no temporary file
    assert (tmp_path / "run.xml").read_bytes() == b"<old/>"  # the old result stays


def test_a_signal_right_after_the_iolog_is_made_leaves_none(tmp_path, monkeypatch):
    """SIGTERM during ``capture --import`` left ``.NAME.iolog.XXXXXXXX.tmp``
    (3 of 10 tries): the I/O list was made as its holder was built, and a
    signal before the ``with`` took it over left it.  Here the signal comes
    once the file is made and its maker is done with it."""
    real = capture.temp_file

    @contextlib.contextmanager
    def made_then_signal(*args, **kwargs):
        with real(*args, **kwargs) as made:
            yield made
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here
            pass

    monkeypatch.setattr(capture, "temp_file", made_then_signal)
    with pytest.raises(Interrupted):
        with guard.signals_raise():
            _iolog(str(tmp_path))
            pytest.fail("the signal was lost")
    assert os.listdir(tmp_path) == []


WRITERS = {
    "capture --import": lambda d: ["capture", "--import", data_path(os.path.join("rwsw", "blkparse-mix.txt")),
                                   "--name", "mix", "--outdir", d, "-q"],
    "import": lambda d: ["import", data_path(os.path.join("tkperf2", "ssd-2.2-apacer.xml")),
                         "-o", os.path.join(d, "new.xml")],
    "export": lambda d: ["export", EXAMPLE, "--csv", d],
    "check --junit": lambda d: ["check", EXAMPLE, "--baseline", EXAMPLE, "--junit", os.path.join(d, "j.xml")],
    "report": lambda d: ["report", EXAMPLE, "--format", "rst", "--outdir", d, "-q"],
    "compare": lambda d: ["compare", EXAMPLE, EXAMPLE.replace("example-ssd.xml", "example-ssd-2.xml"),
                          "--format", "rst", "--outdir", d],
    "history": lambda d: ["history", EXAMPLE, "--outdir", d, "--no-plots"],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_signal_as_a_command_writes_leaves_no_temporary_file(tmp_path, signal_once_made, capsys, command):
    """Every command that writes, interrupted as its first file is made:
    it ends as interrupted, with no temporary file left where it writes."""
    out = tmp_path / "out"
    out.mkdir()
    assert main(WRITERS[command](str(out))) == EXIT_SIGINT
    capsys.readouterr()
    left = [os.path.join(root, f) for root, _, names in os.walk(out) for f in names]
    assert not [f for f in left if ".tmp" in f or os.path.basename(f).startswith(".")], left
