"""What a test type's section is given: the run (or the runs) it belongs to
and the helpers every section uses to name charts and lay out tables.

``report_section(ctx, tests)`` receives a :class:`ReportContext`,
``compare_section(ctx, runs, labels)`` a :class:`CompareContext`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from tkperf.model.results import RunResult, TestRun
from tkperf.model.shown import file_stem
from tkperf.render import blocks as b
from tkperf.report.steady import run_window
from tkperf.report.words import NA, fmt

T = TypeVar("T")

# Beyond this many runs, table columns are headed R1, R2 ... and a key names
# the runs: eight full names in one A4 table would break in mid-word.
FULL_NAME_COLUMNS = 4


#: The heading of the column of a run's difference from the first run.
DIFFERENCE = "% vs first"


def difference(value: Optional[float], first: Optional[float]) -> str:
    """``value``'s difference from ``first`` in %, signed; n/a where either
    was not measured or the first is zero."""
    if value is None or first is None or math.isnan(value) or math.isnan(first) or first == 0:
        return NA
    return f"{(value - first) / abs(first) * 100:+.1f}%"


def chart_name(stem: str) -> str:
    """A chart's file name: ``stem`` made safe and short (a test key from a
    file may be long: :func:`tkperf.model.shown.file_stem`), ``.png`` added."""
    return file_stem(re.sub(r"[^A-Za-z0-9._-]+", "-", stem)) + ".png"


def grid_table(grid: b.Grid, title: str, corner: str = "") -> b.Table:
    """A grid of one test as a table: row titles first, then a column per grid column."""
    headers = [corner or f"{grid.row_title} \\ {grid.col_title}"] + list(grid.cols)
    rows = [[r] + [fmt(v, grid.unit) for v in vals] for r, vals in zip(grid.rows, grid.values)]
    first = 14 if len(grid.cols) > 4 else 18
    return b.table(headers, rows, title=title, widths=[first] + [12] * len(grid.cols), stub_columns=1)


@dataclass(frozen=True)
class ReportContext:
    """The run a report section belongs to."""

    run: RunResult

    @property
    def window(self) -> int:
        """The run's steady-state window (rounds), as stored in its options."""
        return run_window(self.run)

    def chart(self, test: TestRun, what: str, spec: object, caption: str) -> b.Chart:
        """A chart of one test instance, named ``<key>-<what>.png``."""
        return b.Chart(chart_name(f"{test.key}-{what}"), spec, caption)


@dataclass(frozen=True)
class CompareContext:
    """The runs a comparison section sets side by side, and their labels."""

    runs: Tuple[RunResult, ...]
    labels: Tuple[str, ...]

    def first_of_each(self, type_name: str, read: Callable[[TestRun], Optional[T]]) -> List[Tuple[str, T]]:
        """(label, what ``read`` makes of it) of each run's first ``type_name``
        test that ``read`` can make something of; runs without one are left out."""
        out = []
        for run, label in zip(self.runs, self.labels):
            got = next((x for x in map(read, run.tests_of(type_name)) if x is not None), None)
            if got is not None:
                out.append((label, got))
        return out

    def column_labels(self) -> List[str]:
        """Table column headings for the runs: their labels, or R1..R8 for many runs."""
        if len(self.labels) <= FULL_NAME_COLUMNS:
            return list(self.labels)
        return [f"R{i + 1}" for i in range(len(self.labels))]

    def runs_table(self, first: str, rows: Sequence[Sequence[str]], title: str) -> b.Table:
        """A table with one column per run after a first column of row titles;
        a row that is empty for every run (n/a or blank: every run left it
        out) is not shown."""
        n = len(self.labels)
        shown = [r for r in rows if any(c not in (NA, "") for c in r[1:])]
        width = 30 if n <= FULL_NAME_COLUMNS else 18
        rest = max(8, (100 - width) // max(n, 1))
        return b.table([first] + self.column_labels(), shown, title=title,
                       widths=[width] + [rest] * n, stub_columns=1)

    def numbers_table(self, first: str, rows: Sequence[Tuple[str, Sequence[Optional[float]], Sequence[str]]],
                      title: str) -> b.Table:
        """A :meth:`runs_table` of figures: each row is (title, the runs'
        values, their texts).  Up to :data:`FULL_NAME_COLUMNS` runs, right
        after each later run's column a column '% vs first' with its
        difference from the first run in %; with more runs an A4 page has
        no room for them (``tkperf compare`` prints them on the terminal)."""
        n = len(self.labels)
        if n > FULL_NAME_COLUMNS:
            return self.runs_table(first, [[name] + list(texts) for name, _, texts in rows], title)
        cols = self.column_labels()
        headers = [first, cols[0]]
        for c in cols[1:]:
            headers += [c, DIFFERENCE]
        body = []
        for name, values, texts in rows:
            if all(t in (NA, "") for t in texts):
                continue
            row = [name, texts[0]]
            for v, t in zip(values[1:], texts[1:]):
                row += [t, difference(v, values[0]).rstrip("%")]
            body.append(row)
        # The figure's title is the long text (its definition in brackets): its column
        # takes what the numbers leave, so a title wraps over two lines, not four.
        first_width = max(28, 52 - 8 * (n - 1))
        rest = 100 - first_width - 8 * (n - 1)
        return b.table(headers, body, title=f"{title} ('{DIFFERENCE}': the difference from {cols[0]})",
                       widths=[first_width, rest // n] + [rest // n, 8] * (n - 1), stub_columns=1)

    def by_runs(self, rows: Sequence[Tuple[str, float]], value: Callable[[int, int], Optional[float]],
                unit: str, row_title: str) -> b.Grid:
        """A grid with one row per (label, numeric key) and one column per run;
        ``value(row, run)`` is None where a run did not measure it."""
        values = tuple(tuple(value(i, j) for j in range(len(self.labels))) for i in range(len(rows)))
        return b.Grid(rows=tuple(r[0] for r in rows), row_keys=tuple(r[1] for r in rows),
                      cols=tuple(self.labels), values=values, unit=unit, row_title=row_title,
                      col_title="Run")

    def grid_table(self, grid: b.Grid, title: str) -> b.Table:
        """A grid by runs as a table, its unit in the first heading, each
        later run's difference from the first after the runs."""
        rows = [(r, vals, [fmt(v, grid.unit) for v in vals]) for r, vals in zip(grid.rows, grid.values)]
        return self.numbers_table(f"{grid.row_title} ({grid.unit})", rows, title)

    def paired(self, title: str, filename: str, ylabel: str, first: Tuple[b.Grid, str, str],
               second: Tuple[b.Grid, str, str], caption: str) -> list:
        """Two grids of one measure (W and R, AVE and MAX): a section with both
        tables and one chart of two bar panels; nothing when no run measured it."""
        if not first[0].rows:
            return []
        out: list = [b.Heading(title)]
        out += [self.grid_table(grid, f"{name}, {unit}") for grid, name, unit in (first, second)]
        out.append(b.Chart(filename, b.BarsChart(tuple(b.Panel(grid, name, ylabel)
                                                      for grid, name, _ in (first, second))), caption))
        return out
