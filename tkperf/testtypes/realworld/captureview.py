"""What the views of the capture-driven tests (replay, rwsw-wsat) share:
each instance is named after its capture, and a comparison of several runs
is tkperf's generic one."""
from __future__ import annotations

from typing import ClassVar, Sequence

from tkperf.api import RunResult, TestRun, View
from tkperf.api import compare_section as generic_compare_section


def capture_title(word: str, test: TestRun) -> str:
    """``WORD of CAPTURE``: an instance's short name, its capture's name after the test's word."""
    return f"{word} of {test.params.get('capture', '')}".strip()


class CaptureView(View):
    """A capture-driven test's view; a subclass gives its :attr:`word` and its report section."""

    #: The word before the capture's name in an instance's title ('Replay').
    word: ClassVar[str] = ""

    def compare_section(self, ctx, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        return generic_compare_section(self.kind, ctx, runs, labels)

    def instance_title(self, test: TestRun) -> str:
        return capture_title(self.word, test)
