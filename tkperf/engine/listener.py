"""What a run tells whoever started it, and what it hands back.

The engine never prints: :func:`tkperf.engine.run.run` and ``resume`` call
a :class:`Listener` (the command line's prints; a program's may collect)
while the run goes, and return a :class:`RunOutcome` at its end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol, Sequence, Tuple

from tkperf.engine.multi import Outcome
from tkperf.engine.opening import DryRun
from tkperf.errors import EXIT_OK
from tkperf.kit.progress import RemoteRun
from tkperf.model.results import DeviceInfo, RunResult

if TYPE_CHECKING:  # the documents are built at a run's end, not loaded to parse its command line
    from tkperf.render.documents import ReportResult


@dataclass(frozen=True)
class RunOutcome:
    """How a request ended: its exit code; the run and its result file (one
    target); ``already_complete`` when a resume found nothing to do; the
    dry run's content, one per target (``--dry-run``)."""

    exit_code: int = EXIT_OK
    run: Optional[RunResult] = None
    xml_path: str = ""
    already_complete: bool = False
    dry_runs: Tuple[DryRun, ...] = ()


@dataclass(frozen=True)
class SeveralEnded:
    """A run of several targets at its end: each target's outcome, the
    comparison's documents and a note on it, the exit code (the worst)."""

    outcomes: Tuple[Outcome, ...]
    reports: Tuple[str, ...]
    note: str
    worst: int


class ParallelView(Protocol):
    """The runs of several targets shown together while they go."""

    def start(self, runs: Sequence[RemoteRun]) -> None: ...

    def note(self, text: str) -> None: ...

    def message(self, run: RemoteRun, text: str) -> None: ...

    def output(self, run: RemoteRun, line: str, stream: str) -> None: ...

    def refresh(self) -> None: ...

    def stop(self) -> None: ...


class Listener(Protocol):
    """Whoever started the run: it shows, asks and reports; the engine decides."""

    def warning(self, text: str) -> None:
        """Something the run did without, or went past (never changes the exit code)."""

    def confirm(self, dev: DeviceInfo, assume_yes: bool) -> None:
        """Ask before ``dev`` is written (unless ``assume_yes``); NotConfirmedError for a no."""

    def show_progress(self, quiet: bool, debug: bool) -> None:
        """The run's progress begins (on the ``tkperf.progress`` logger)."""

    def stop_progress(self) -> None:
        """The progress ends: what follows is the run's end."""

    def report_written(self, result: ReportResult) -> None:
        """A report or comparison was built: its documents and warnings."""

    def run_ended(self, run: RunResult, xml_path: str) -> None:
        """A run of one target ended (complete or not) and its result is saved."""

    def combined(self, quiet: bool) -> ParallelView:
        """The view of a run of several targets."""

    def several_ended(self, ended: SeveralEnded) -> None:
        """A run of several targets ended (before its ``--json-summary``)."""
