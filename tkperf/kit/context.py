"""What a loop shape uses of whoever runs it and of the test instance it runs.

The engine's :class:`~tkperf.engine.runner.Runner` and the test-type
interface's :class:`~tkperf.kit.base.Plan` fit these; shapes
(:mod:`tkperf.kit.shapes`, ``composite`` and a test type's own) name
them instead of importing the runner and the interface, which stand above
the shapes (``docs/layout.rst``).
"""
from __future__ import annotations

from typing import Any, Protocol

from tkperf.model.results import TestRun
from tkperf.model.steadystate import Steady


class RunContext(Protocol):
    """What a loop shape uses of whoever runs it: the engine's
    :class:`~tkperf.engine.runner.Runner`, which sits above the test types
    and so is described here rather than imported (``docs/layout.rst``)."""

    phase: str
    opts: Any
    fio: Any
    #: The result file's writer (:class:`tkperf.store.ResultWriter`) and path.
    writer: Any
    xml_path: str

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
