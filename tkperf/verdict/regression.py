"""A result against a baseline, figure by figure: what ``tkperf check`` computes.

Pure computation over two :class:`~tkperf.model.results.RunResult` objects
and the test types' headline figures; it prints nothing and never imports
the renderer or matplotlib.  Tests are matched by ``TestRun.key``, figures
by ``Figure.key``.  A figure *regresses* when it moved in its worse
direction (``Figure.better``) by more than the tolerance, relative to the
baseline, **and** Welch's t-test over the window values of both sides
(:mod:`tkperf.model.noise`) says the move is unlikely to be noise; a move
beyond the tolerance that the windows' spread explains is ``noise``.  A
figure without a better direction is only reported.  Several baselines
(the last nights) are one baseline: their mean, and the result is tested as
one more draw from their distribution (:func:`noise.predict`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

from tkperf import testtypes
from tkperf.model import caveats, noise
from tkperf.model.figures import Figure
from tkperf.model.results import RunResult, TestRun

#: Verdicts of one figure.
OK, REGRESSION, IMPROVED, INFO, NOISE = "ok", "regression", "improved", "info", "noise"
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
    p_value: Optional[float] = None  # one-sided, in the direction it moved; None: no test made
    result_sd: Optional[float] = None  # the spread of the values tested (None: none known)
    baseline_sd: Optional[float] = None
    n_result: int = 1
    n_baseline: int = 1

    def as_dict(self) -> dict:
        """The cell as ``check --json`` prints it."""
        return {"test": self.test, "figure": self.figure, "unit": self.unit, "better": self.better,
                "baseline": self.baseline, "result": self.result, "change_pct": self.change_pct,
                "p_value": self.p_value, "baseline_sd": self.baseline_sd, "result_sd": self.result_sd,
                "n_baseline": self.n_baseline, "n_result": self.n_result, "verdict": self.verdict}


@dataclass(frozen=True)
class Comparison:
    """Every compared figure of a result against its baseline."""

    tolerance_pct: float
    cells: Tuple[Cell, ...]
    alpha: float = noise.ALPHA
    warnings: Tuple[str, ...] = ()

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


def judge(better: str, change: Optional[float], tolerance_pct: float,
          p_value: Optional[float] = None, alpha: float = noise.ALPHA) -> str:
    """The verdict of one figure that moved by ``change`` percent; ``p_value``
    (one-sided, in the direction it moved) None when no test could be made:
    then the tolerance alone decides."""
    if not better or change is None:
        return INFO
    worse = -change if better == "higher" else change
    if abs(worse) <= tolerance_pct:
        return OK
    if p_value is not None and p_value >= alpha:
        return NOISE
    return REGRESSION if worse > 0 else IMPROVED


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
    if min(size, base_size) > 0 and max(size, base_size) > MAX_CAPACITY_RATIO * min(size, base_size):
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


Baselines = Union[RunResult, Sequence[RunResult]]


def _as_list(baselines: Baselines) -> List[RunResult]:
    return [baselines] if isinstance(baselines, RunResult) else list(baselines)


def compare(result: RunResult, baselines: Baselines, tolerance_pct: float,
            metrics: Sequence[str] = (), alpha: float = noise.ALPHA) -> Comparison:
    """Every headline figure the result and every baseline hold, cell by cell
    (only ``metrics`` when given); several baselines are one distribution."""
    bases = _as_list(baselines)
    cells: List[Cell] = []
    for test in result.tests:
        others = [b.test(test.key) for b in bases]
        if any(o is None for o in others):
            continue
        base_figs = [{f.key: f for f in figures(o)} for o in others]  # type: ignore[arg-type]
        mine_values = noise.window_values(test, figures)
        base_values = [noise.window_values(o, figures) for o in others]  # type: ignore[arg-type]
        for fig in figures(test):
            if all(fig.key in b for b in base_figs) and (not metrics or fig.key in metrics):
                theirs = [v.get(fig.key, [b[fig.key].value]) for v, b in zip(base_values, base_figs)]
                cells.append(_cell(test.key, fig, [b[fig.key].value for b in base_figs],
                                   mine_values.get(fig.key, [fig.value]), theirs, tolerance_pct, alpha))
    return Comparison(tolerance_pct, tuple(cells), alpha, tuple(caveats.warnings(result, bases)))


def _cell(test: str, fig: Figure, base_values: List[float], mine: List[float],
          theirs: List[List[float]], tolerance_pct: float, alpha: float) -> Cell:
    """``mine``: the result's window values (or its figure alone); ``theirs``:
    each baseline's window values (or its figure alone)."""
    base = noise.mean(base_values)
    change = change_pct(base, fig.value)
    better = fig.better or "higher"
    if len(base_values) > 1:  # the nights' own spread, at least what the windows show
        floor = noise.mean([noise.variance(v) / len(v) for v in theirs + [mine]])
        tested = noise.predict(fig.value, base_values, better, floor)
        sample = base_values
    else:
        sample = theirs[0]
        tested = noise.welch(mine, sample, better)
    p = None
    if tested is not None and change is not None and fig.better:
        worse = -change if fig.better == "higher" else change
        p = tested.p_worse if worse > 0 else tested.p_better
    return Cell(test, fig.key, fig.label, fig.unit, fig.better, base, fig.value, change,
                judge(fig.better, change, tolerance_pct, p, alpha), fig.text, p,
                noise.stdev(mine) if len(mine) > 1 else None,
                noise.stdev(sample) if len(sample) > 1 else None, len(mine), len(sample))


def unjudged(comparison: Comparison) -> List[Cell]:
    """The cells no verdict can rest on: the result's or a baseline's figure,
    or their change, is not a finite number (a figure a test type computed
    as NaN, say a spread over a median of 0).  Apart from the statistics
    above on purpose: whatever they say of such a cell, ``tkperf check``
    does not exit 0 on it (exit 12, docs/check.rst)."""
    return [c for c in comparison.cells
            if not (math.isfinite(c.baseline) and math.isfinite(c.result))
            or (c.change_pct is not None and not math.isfinite(c.change_pct))]
