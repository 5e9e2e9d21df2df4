"""What a view's sections are given: the contexts, as protocols.

A :class:`~tkperf.kit.base.View` draws a report section with a
:class:`ReportContext` and a comparison section with a
:class:`CompareContext`.  They are protocols here, in the kit, because the
kit sits below the report that builds them (``tkperf.report.context``
holds the report's implementation of both), so a view is typed without
reaching up a layer.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Protocol, Sequence, Tuple, TypeVar

from tkperf.model.results import RunResult, TestRun
from tkperf.render.blocks import Block, Chart, Grid, Table

T = TypeVar("T")


class ReportContext(Protocol):
    """The run a report section belongs to."""

    @property
    def run(self) -> RunResult:
        """The run the report is of."""

    @property
    def window(self) -> int:
        """The run's steady-state window (rounds), as stored in its options."""

    def chart(self, test: TestRun, what: str, spec: object, caption: str) -> Chart:
        """A chart of one test instance, named ``<key>-<what>.png``."""


class CompareContext(Protocol):
    """The runs a comparison section sets side by side, and their labels."""

    @property
    def runs(self) -> Tuple[RunResult, ...]:
        """The runs compared, first the one the others are measured against."""

    @property
    def labels(self) -> Tuple[str, ...]:
        """The runs' labels, in the same order."""

    def first_of_each(self, type_name: str, read: Callable[[TestRun], Optional[T]]) -> List[Tuple[str, T]]:
        """(label, what ``read`` makes of it) of each run's first ``type_name`` test."""

    def column_labels(self) -> List[str]:
        """Table column headings for the runs."""

    def runs_table(self, first: str, rows: Sequence[Sequence[str]], title: str) -> Table:
        """A table with one column per run after a first column of row titles."""

    def numbers_table(self, first: str, rows: Sequence[Tuple[str, Sequence[Optional[float]], Sequence[str]]],
                      title: str) -> Table:
        """A table of figures, each later run's difference from the first beside it."""

    def by_runs(self, rows: Sequence[Tuple[str, float]], value: Callable[[int, int], Optional[float]],
                unit: str, row_title: str) -> Grid:
        """A grid with one row per (label, numeric key) and one column per run."""

    def grid_table(self, grid: Grid, title: str) -> Table:
        """A grid by runs as a table."""

    def paired(self, title: str, filename: str, ylabel: str, first: Tuple[Grid, str, str],
               second: Tuple[Grid, str, str], caption: str) -> List[Block]:
        """Two grids of one measure as tables and one chart of two bar panels."""
