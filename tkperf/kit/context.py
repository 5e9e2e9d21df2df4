"""What a loop shape uses of whoever runs it and of the test instance it runs.

The engine's :class:`~tkperf.engine.runner.Runner` and the test-type
interface's :class:`~tkperf.kit.base.Plan` fit these; shapes
(:mod:`tkperf.kit.shapes`, ``composite`` and a test type's own) name
them instead of importing the runner and the interface, which stand above
the shapes (``docs/layout.rst``).
"""
from __future__ import annotations

from typing import Any, Protocol

from tkperf.fio.backend import FioBackend
from tkperf.kit.progress import Progress
from tkperf.model.results import RunResult, TestRun
from tkperf.model.steadystate import Steady
from tkperf.store import ResultWriter


class ShapeOptions(Protocol):
    """What a loop shape reads of the run's options
    (:class:`tkperf.kit.options.RunOptions`; the options module needs the registry, which needs the shapes)."""

    @property
    def max_rounds(self) -> int: ...

    @property
    def window(self) -> int: ...

    @property
    def latency_histograms(self) -> bool: ...


class RunContext(Protocol):
    """What a loop shape uses of whoever runs it: the engine's
    :class:`~tkperf.engine.runner.Runner`, which sits above the test types
    and so is described here rather than imported (``docs/layout.rst``)."""

    #: What the run is doing now (the shapes name their phases).
    phase: str

    @property
    def opts(self) -> ShapeOptions: ...

    @property
    def fio(self) -> FioBackend: ...

    @property
    def run(self) -> RunResult:
        """The run being measured (its events, its facts)."""

    @property
    def progress(self) -> Progress:
        """Where the run is, for whoever displays it."""

    @property
    def writer(self) -> ResultWriter:
        """The result file's writer (series rows appended as they come)."""

    @property
    def xml_path(self) -> str: ...

    def save(self) -> None: ...

    def health_check(self) -> None:
        """Read the drive's temperature, at most once a minute."""

    def event(self, kind: str, message: str, test: str = "", rnd: int = 0) -> None: ...


class PlanLike(Protocol):
    """What a loop shape reads of the test instance it runs
    (:class:`tkperf.kit.base.Plan`, which names its shape)."""

    # Read-only (properties): a Plan is a frozen dataclass.
    @property
    def key(self) -> str: ...

    @property
    def histograms(self) -> bool: ...

    @property
    def tracking(self) -> Any: ...

    @property
    def policy(self) -> Steady: ...

    def steady_state(self, test: TestRun, window: int) -> Any: ...
