"""A signal that arrives while tkperf forks a child (fio, hdparm ...) is not
lost: an exception raised inside Python's fork hooks would be swallowed and
the run would then ignore every further signal.  The handler defers to the
end of ``programs.start``, where the child is already tracked, so the
clean-up stops it."""
import os
import signal
import subprocess

import pytest

from tkperf import programs
from tkperf.errors import Interrupted
from tkperf.target import guard


def test_a_signal_during_the_fork_interrupts_right_after_it(monkeypatch):
    real_popen = subprocess.Popen
    seen = {}

    def popen_with_a_signal(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # arrives while start() is forking
        seen["starting"] = programs.starting()
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen_with_a_signal)
    with pytest.raises(Interrupted) as raised:
        with guard.signals_raise():
            programs.start(["sleep", "30"])
            pytest.fail("the signal was lost")
    assert seen["starting"] is True
    assert raised.value.signum == signal.SIGINT
    tracked = [p for p in programs._children if p.args == ["sleep", "30"]]
    assert len(tracked) == 1  # tracked before the interruption: the clean-up can stop it
    programs.stop_all(timeout=5)
    assert tracked[0].poll() is not None


def test_outside_start_the_handler_raises_at_once():
    with pytest.raises(Interrupted):
        with guard.signals_raise():
            assert not programs.starting()
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
            pytest.fail("the signal was lost")
