"""Since when a regression has been red: a night judged red, and the red
nights before it since the last normal one (``tkperf check
--red-nights``, the nightly job's ``red-nights``), as the JUnit file, the
JSON and the text say it (docs/check.rst, docs/nightly.rst).

The night is red since the first of those nights.  A figure is red since
the first of the unbroken run of those nights, counted back from the
newest, in which it regressed too, each earlier night judged again against
the same baseline with the same settings (the nightly job keeps red nights
out of its baseline, so the baseline is the one they were judged against);
a night that cannot be compared with it breaks the run.  Pure computation:
the caller loads and judges the files.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

from tkperf.verdict.regression import REGRESSION, Comparison


@dataclass(frozen=True)
class Night:
    """One night by its result file: the run's name, its start, the file."""

    name: str
    night: str  # '2026-12-07 01:30' ('' when not recorded)
    result: str

    def as_dict(self) -> dict:
        return {"name": self.name, "night": self.night, "result": self.result}


@dataclass(frozen=True)
class Since:
    """Red since ``first`` for ``nights`` nights, the night judged included."""

    first: Night
    nights: int

    def as_dict(self) -> dict:
        return {**self.first.as_dict(), "nights": self.nights}

    def text(self) -> str:
        """'nightly-20261203-013000 (2026-12-03 01:30), 3 nights'."""
        when = f" ({self.first.night})" if self.first.night else ""
        return f"{self.first.name}{when}, {self.nights} night{'' if self.nights == 1 else 's'}"


@dataclass(frozen=True)
class Persisting:
    """The night's red since, and each regressed figure's (by (test, figure))."""

    night: Since
    figures: Dict[Tuple[str, str], Since]

    def of(self, test: str, figure: str) -> Optional[Since]:
        return self.figures.get((test, figure))


def persisting(tonight: Night, comparison: Comparison, earlier: Sequence[Night],
               judged: Sequence[Optional[Comparison]]) -> Optional[Persisting]:
    """Since when the night is red (None when it is not red): ``earlier``
    the red nights before it, oldest first, ``judged`` each of them judged
    again against the night's baseline (None: it could not be)."""
    if not comparison.regressions:
        return None
    night = Since(earlier[0] if earlier else tonight, len(earlier) + 1)
    figures = {}
    for cell in comparison.regressions:
        first, nights = tonight, 1
        for before, result in zip(reversed(earlier), reversed(judged)):
            if result is None or not any(c.test == cell.test and c.figure == cell.figure
                                         for c in result.cells if c.verdict == REGRESSION):
                break
            first, nights = before, nights + 1
        figures[(cell.test, cell.figure)] = Since(first, nights)
    return Persisting(night, figures)
