"""A result against a baseline, figure by figure: what ``tkperf check`` computes.

Pure computation over two :class:`~tkperf.model.results.RunResult` objects
and the test types' headline figures; it prints nothing and never imports
the renderer or matplotlib.  Tests are matched by ``TestRun.key``, figures
by ``Figure.key``.  A figure *regresses* when it moved in its worse
direction (``Figure.better``) by more than the tolerance, relative to the
baseline; a figure without a better direction is only reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import testtypes
from tkperf.model.results import RunResult, TestRun
from tkperf.testtypes.base import Figure

#: Verdicts of one figure.
OK, REGRESSION, IMPROVED, INFO = "ok", "regression", "improved", "info"
#: Capacities further apart than this factor are not comparable.
MAX_CAPACITY_RATIO = 2.0
#: Parameters of a test that must match (block sizes and R/W mixes).
MATCHED_PARAMS = ("block_size", "block_sizes", "mixes")


@dataclass(frozen=True)
class Cell:
    """One figure of one test in both files, and its verdict."""

    test: str
    figure: str
    label: str
    unit: str
    better: str
    baseline: float
    result: float
    change_pct: Optional[float]  # None when the baseline is 0 and the result is not
    verdict: str
    text: str = "{:,.0f}"  # how the figure's values are shown

    def as_dict(self) -> dict:
        """The cell as ``check --json`` prints it."""
        return {"test": self.test, "figure": self.figure, "unit": self.unit, "better": self.better,
                "baseline": self.baseline, "result": self.result, "change_pct": self.change_pct,
                "verdict": self.verdict}


@dataclass(frozen=True)
class Comparison:
    """Every compared figure of a result against its baseline."""

    tolerance_pct: float
    cells: Tuple[Cell, ...]

    @property
    def regressions(self) -> List[Cell]:
        return [c for c in self.cells if c.verdict == REGRESSION]

    @property
    def improvements(self) -> List[Cell]:
        return [c for c in self.cells if c.verdict == IMPROVED]

    @property
    def verdict(self) -> str:
        """``regression`` when any figure regressed, else ``ok``."""
        return REGRESSION if self.regressions else OK


def figures(test: TestRun) -> List[Figure]:
    """The test's headline figures; none when its test type is not installed."""
    kind = testtypes.get(test.type)
    return kind.headline(test) if kind is not None else []


def change_pct(baseline: float, result: float) -> Optional[float]:
    """Relative change in percent of the baseline; None when the baseline is 0 and the result not."""
    if baseline == 0:
        return 0.0 if result == 0 else None
    return (result - baseline) / abs(baseline) * 100.0


def judge(better: str, change: Optional[float], tolerance_pct: float) -> str:
    """The verdict of one figure that moved by ``change`` percent."""
    if not better or change is None:
        return INFO
    worse = -change if better == "higher" else change
    if worse > tolerance_pct:
        return REGRESSION
    if -worse > tolerance_pct:
        return IMPROVED
    return OK


def not_comparable(result: RunResult, baseline: RunResult) -> List[str]:
    """Why the two runs cannot be compared (empty when they can)."""
    keys, base_keys = [t.key for t in result.tests], [t.key for t in baseline.tests]
    common = [k for k in keys if k in base_keys]
    if not common:
        return [f"no test in common (result: {_names(keys)}; baseline: {_names(base_keys)})"]
    reasons = []
    if set(keys) != set(base_keys):
        reasons.append(f"different tests (only in result: {_names(k for k in keys if k not in base_keys)}; "
                       f"only in baseline: {_names(k for k in base_keys if k not in keys)})")
    reasons += _param_differences(result, baseline, common)
    reasons += _device_differences(result, baseline)
    return reasons


def _names(keys) -> str:
    return ",".join(keys) or "none"


def _param_differences(result: RunResult, baseline: RunResult, common: Sequence[str]) -> List[str]:
    out = []
    for key in common:
        mine, theirs = result.test(key).params, baseline.test(key).params  # type: ignore[union-attr]
        for name in MATCHED_PARAMS:
            if mine.get(name, "") != theirs.get(name, ""):
                out.append(f"{key}: different {name.replace('_', ' ')} "
                           f"({mine.get(name, '-')} vs baseline {theirs.get(name, '-')})")
    return out


def _device_differences(result: RunResult, baseline: RunResult) -> List[str]:
    out = []
    cls, base_cls = result.options.get("device_class", ""), baseline.options.get("device_class", "")
    if cls != base_cls:
        out.append(f"different device class ({cls or '-'} vs baseline {base_cls or '-'})")
    size, base_size = result.device.size_bytes, baseline.device.size_bytes
    if max(size, base_size) > MAX_CAPACITY_RATIO * min(size, base_size):
        out.append(f"capacities more than {MAX_CAPACITY_RATIO:g}x apart "
                   f"({size / 1e9:.1f} GB vs baseline {base_size / 1e9:.1f} GB)")
    return out


def figure_keys(result: RunResult, baseline: RunResult) -> List[str]:
    """Keys of the figures both runs hold for a test both ran, in run order."""
    out: List[str] = []
    for test, base in _pairs(result, baseline):
        base_keys = {f.key for f in figures(base)}
        out += [f.key for f in figures(test) if f.key in base_keys and f.key not in out]
    return out


def _pairs(result: RunResult, baseline: RunResult) -> List[Tuple[TestRun, TestRun]]:
    return [(t, baseline.test(t.key)) for t in result.tests if baseline.test(t.key) is not None]  # type: ignore[misc]


def compare(result: RunResult, baseline: RunResult, tolerance_pct: float,
            metrics: Sequence[str] = ()) -> Comparison:
    """Every headline figure both runs hold, cell by cell (only ``metrics`` when given)."""
    cells: List[Cell] = []
    for test, base in _pairs(result, baseline):
        base_figs: Dict[str, Figure] = {f.key: f for f in figures(base)}
        for fig in figures(test):
            if fig.key in base_figs and (not metrics or fig.key in metrics):
                cells.append(_cell(test.key, fig, base_figs[fig.key], tolerance_pct))
    return Comparison(tolerance_pct, tuple(cells))


def _cell(test: str, fig: Figure, base: Figure, tolerance_pct: float) -> Cell:
    change = change_pct(base.value, fig.value)
    return Cell(test, fig.key, fig.label, fig.unit, fig.better, base.value, fig.value, change,
                judge(fig.better, change, tolerance_pct), fig.text)
