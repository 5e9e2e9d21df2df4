"""``tkperf capture --analysis during``: the parts of a recording handed to
the analysis thread, which runs on idle CPU while it keeps up and at the
normal priority while it has fallen behind (tkperf.rwsw.liveparts)."""
from __future__ import annotations

import os
import threading

import pytest

from tkperf.rwsw import liveparts

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling policies")


class _Stream:
    """Records the analysis thread's policy as each part is read; the first part waits to be let go."""

    def __init__(self) -> None:
        self.policies = []
        self.sizes = []
        self.go, self.entered = threading.Event(), threading.Event()

    def part(self, fh, tail=None, last=False):
        if not self.policies:
            self.entered.set()
            self.go.wait(30)
        self.policies.append(os.sched_getscheduler(0))
        self.sizes.append(os.fstat(fh.fileno()).st_size)


def _drain(parts, data: bytes) -> None:
    os.write(parts.fileno(), data)


def test_the_analysis_leaves_idle_cpu_while_it_is_behind_and_goes_back_when_caught_up(tmp_path, monkeypatch):
    monkeypatch.setattr(liveparts, "PART_BYTES", 1)
    stream = _Stream()
    with liveparts.Parts(str(tmp_path), "t", lambda: stream) as parts:
        _drain(parts, b"a")
        _drain(parts, b"b")  # the first part handed on: the thread waits in it
        assert stream.entered.wait(30)
        for k in range(11):  # 11 more full parts wait behind it
            _drain(parts, b"c" * (k + 2))
        stream.go.set()
        for _ in range(3000):  # the 12 handed on read before the recording ends (close)
            if len(stream.policies) == 12:
                break
            threading.Event().wait(0.01)
        assert parts.close() is stream
    idle, normal = os.SCHED_IDLE, os.SCHED_OTHER
    assert len(stream.policies) == 13 and stream.sizes[:3] == [1, 1, 2]  # every part, in the order drained
    assert stream.policies[0] == idle  # keeping up: idle CPU only
    # 11 waiting, then 10, 9, 8 (BEHIND): behind, the normal priority; 7 and fewer: caught up, idle CPU again
    assert stream.policies[1:12] == [normal] * 4 + [idle] * 7
    assert stream.policies[-1] == normal  # the recording over: what is left at the capture's own priority
    assert parts.caught_up >= 2 and parts.read == 13
    assert os.sched_getscheduler(0) == normal  # the caller's own thread never changed


def test_a_part_left_unread_is_closed_and_an_analysis_failure_is_raised(tmp_path, monkeypatch):
    monkeypatch.setattr(liveparts, "PART_BYTES", 1)

    class Broken:
        def part(self, fh, tail=None, last=False):
            raise ValueError("damaged page")

    with liveparts.Parts(str(tmp_path), "t", Broken) as parts:
        _drain(parts, b"a")
        _drain(parts, b"b")
        with pytest.raises(ValueError, match="damaged page"):
            parts.close()
    assert os.listdir(tmp_path) == []  # unnamed parts: nothing left, nothing named to plant a link at
