"""A signal that arrives just as tkperf makes a temporary file (the result
file's atomic write, a kept fio output, a capture's I/O list, a fio job
file, the probe of ``--json-summary``'s folder; all made by
``files.temp_file``) leaves no temporary file behind: the handler's raise
waits until the file's name has reached the code that removes it on the
way out (``programs.signals_held``).  Before, SIGINT between a round's
save and the next round could leave ``.NAME.xml.XXXXXXXX.tmp`` beside the
result (seen beside a CPU hog), and SIGINT as a fio job file was made left
``.tkperf-XXXXXXXX.fio`` in the output folder."""
import os
import signal
import tempfile

import pytest

from tkperf import notify
from tkperf.errors import Interrupted
from tkperf.fio import backend, keep
from tkperf.model import files
from tkperf.rwsw import capture
from tkperf.target import guard


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
    "capture iolog": lambda d: capture._Iolog(os.path.join(d, "cap.iolog")),
}


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
