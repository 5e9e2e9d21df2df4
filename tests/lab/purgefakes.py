"""A stand-in for ``programs.run`` in the purge tests: it records every
argument list and answers with recorded output of the real tools on real
drives (tests/data/purge/README.rst says whose), and "drives" that are
sparse files of the test's own, so that even a stray read never touches a
disk.  tests/conftest.py makes them the fixtures ``tools`` and
``fake_disk``."""
from __future__ import annotations

import os
import subprocess
from typing import Callable, List, Sequence, Union

from conftest import data_path
from tkperf import programs
from tkperf.errors import ToolError
from tkperf.model.results import DeviceInfo

Answer = Union[str, int, BaseException, Callable[[List[str]], object]]


def recorded(name: str) -> str:
    with open(data_path(os.path.join("purge", name)), encoding="utf-8") as fh:
        return fh.read()


class FakeTools:
    """``programs.run`` as the tools would behave: ``on(words, *answers)``
    answers calls whose argument list contains all ``words`` (after the
    program path), one answer per call, the last one repeated.  An answer
    is stdout (str), an exit code with ``stderr`` (int), an exception to
    raise, or a function of the argv."""

    def __init__(self) -> None:
        self.calls: List[List[str]] = []
        self.rules: List[tuple] = []
        self.stderr = ""

    def on(self, words: Sequence[str], *answers: Answer, stderr: str = "") -> FakeTools:
        self.rules.append((list(words), list(answers), stderr))
        return self

    def run(self, argv, timeout=None, check=True, what=""):
        argv = list(argv)
        self.calls.append(argv)
        rule = next((r for r in self.rules if all(w in argv[1:] or w == os.path.basename(argv[0]) for w in r[0])),
                    None)
        if rule is None:
            raise AssertionError(f"unexpected command: {argv}")
        _words, answers, stderr = rule
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(argv)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, int):
            if check and answer != 0:
                raise ToolError(f"{what or os.path.basename(argv[0])} failed: {stderr.strip().splitlines()[-1]}")
            return subprocess.CompletedProcess(argv, answer, "", stderr)
        return subprocess.CompletedProcess(argv, 0, answer or "", "")

    def lines(self) -> List[str]:
        """The calls without program paths, as text, for readable asserts."""
        return [" ".join([os.path.basename(a[0])] + a[1:]) for a in self.calls]


def install_fake(monkeypatch) -> FakeTools:
    fake = FakeTools()
    monkeypatch.setattr(programs, "run", fake.run)
    return fake


def disk_maker(tmp_path) -> Callable[..., DeviceInfo]:
    """Stand-in paths for drives: sparse 64 MiB files of this test's own."""
    def make(transport: str, vendor: str = "", size: int = 64 << 20) -> DeviceInfo:
        path = tmp_path / f"fake-{transport}"
        with open(path, "wb") as fh:
            fh.truncate(size)
        return DeviceInfo(path=str(path), resolved=str(path), kind="block", size_bytes=size,
                          transport=transport, vendor=vendor)
    return make
