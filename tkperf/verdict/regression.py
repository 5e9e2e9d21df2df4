"""A result against a baseline, figure by figure: what ``tkperf check`` computes.

Pure computation over :class:`~tkperf.model.results.RunResult` objects and
the test types' headline figures; it prints nothing and never imports the
renderer or matplotlib.  Tests are matched by ``TestRun.key``, figures by
``Figure.key``.  A figure *regresses* when it moved in its worse direction
(``Figure.better``) by more than the tolerance, relative to the baseline,
**and** the noise test says the move is unlikely to be noise after Holm's
correction over the night's figures (:func:`assess`): Welch's t-test over
the window values with one baseline (:mod:`tkperf.model.noise`); with
several (the last nights), a prediction interval, on each figure's own
move once the night's shared shift is taken out when the night has enough
figures (:mod:`tkperf.model.family`).  A move beyond the tolerance that
the noise explains is ``noise``; one with no noise estimate at all only
warns; a figure without a better direction is only reported
(docs/check.rst).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, List, Optional, Sequence, Tuple, Union

from tkperf.kit import registry
from tkperf.model import caveats, family, noise
from tkperf.model.figures import Figure
from tkperf.model.results import RunResult, TestRun
from tkperf.verdict.comparable import by_key, host_path, host_warnings

#: Verdicts of one figure (warn: worse beyond the tolerance, but no noise estimate to judge it by;
#: host-limited: a figure the host path sets, on a night the host limited: left out of the verdict).
OK, REGRESSION, IMPROVED, INFO, NOISE, WARN = "ok", "regression", "improved", "info", "noise", "warn"
HOST_LIMITED = "host-limited"
#: The tests (``check --json``'s ``test``): one baseline; several; several, the night's shift removed.
WELCH = "welch-t-one-sided"
PREDICTION = "prediction-interval-t-one-sided"
NIGHT_ADJUSTED = "night-adjusted-prediction-t-one-sided"
#: Corrections for the many figures of a night: Holm's step-down (the default), or none.
HOLM, NO_CORRECTION = "holm", "none"
CORRECTIONS = (HOLM, NO_CORRECTION)


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
    p_adjusted: Optional[float] = None  # what decides: after the correction, and the night's shift

    def as_dict(self) -> dict:
        """The cell as ``check --json`` prints it."""
        return {"test": self.test, "figure": self.figure, "unit": self.unit, "better": self.better,
                "baseline": self.baseline, "result": self.result, "change_pct": self.change_pct,
                "p_value": self.p_value, "p_adjusted": self.p_adjusted, "baseline_sd": self.baseline_sd,
                "result_sd": self.result_sd, "n_baseline": self.n_baseline, "n_result": self.n_result,
                "verdict": self.verdict}


@dataclass(frozen=True)
class NightShift:
    """The night's shared move (percent, up is better) and its test, raw and adjusted."""

    shift_pct: float
    p_worse: float
    p_better: float
    adjusted_worse: float
    adjusted_better: float

    def adjusted(self, worse: bool) -> float:
        return self.adjusted_worse if worse else self.adjusted_better

    def as_dict(self) -> dict:
        return {"shift_pct": self.shift_pct, "p_worse": self.p_worse, "p_better": self.p_better,
                "p_worse_adjusted": self.adjusted_worse, "p_better_adjusted": self.adjusted_better}


@dataclass(frozen=True)
class Comparison:
    """Every compared figure of a result against its baseline."""

    tolerance_pct: float
    cells: Tuple[Cell, ...]
    alpha: float = noise.ALPHA
    warnings: Tuple[str, ...] = ()
    method: str = WELCH
    correction: str = HOLM
    night: Optional[NightShift] = None

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
    """The figures checked of a test: its headline figures, and of the
    latency test every latency it measured (:func:`measured_latencies`);
    none when its test type is not installed."""
    kind = registry.get(test.type)
    if kind is None:
        return []
    out = kind.headline(test)
    if test.type == LATENCY_TYPE:
        out += measured_latencies(test, {f.key for f in out})
    return out


#: The latency test's type name, whose every measured latency is checked.
LATENCY_TYPE = "lat"
_DIRECTION = {"read": "R", "write": "W"}


def measured_latencies(test: TestRun, known: AbstractSet[str] = frozenset()) -> List[Figure]:
    """The mean response time of every workload and direction of the test's
    window that carried I/O in every window round (its headline holds the
    4k writes only: a slower read would be checked only through IOPS
    otherwise); keys in ``known`` are left out.  ``rnd_4k_read_lat_mean_us``
    for the 4k 100/0 reads, ``rnd_4k_65_35_read_lat_mean_us`` for those of
    a mix."""
    rounds = test.window_rounds()
    out: List[Figure] = []
    for name in test.workload_names():
        parts = name.split("-")
        if len(parts) != 4 or not rounds:
            continue
        kind, bs, rd, wr = parts
        pure = rd in ("0", "100")
        for direction, short in _DIRECTION.items():
            stats = [getattr(w, direction) for r in rounds for w in r.workloads if w.name == name]
            if len(stats) != len(rounds) or not all(s.ios > 0 for s in stats):
                continue
            key = f"{kind}_{bs}" + ("" if pure else f"_{rd}_{wr}") + f"_{direction}_lat_mean_us"
            if key not in known:
                label = f"{bs}" + ("" if pure else f" {rd}/{wr}") + f" {short} lat AVE"
                out.append(Figure(key, label, sum(s.lat_mean_us for s in stats) / len(stats), "us", "lower",
                                  "{:,.1f}"))
    return out


def change_pct(baseline: float, result: float) -> Optional[float]:
    """Relative change in percent of the baseline; None when the baseline is 0 and the result not."""
    if baseline == 0:
        return 0.0 if result == 0 else None
    return (result - baseline) / abs(baseline) * 100.0


def judge(better: str, change: Optional[float], tolerance_pct: float,
          p_value: Optional[float] = None, alpha: float = noise.ALPHA) -> str:
    """The verdict of one figure that moved by ``change`` percent; ``p_value``
    (one-sided, in the direction it moved, after the correction) None when
    no test could be made: then a figure that got worse beyond the
    tolerance only warns (it has no noise estimate, so it cannot fail a
    night on its own) unless ``alpha`` is 1 (the test off: the tolerance
    alone decides)."""
    if not better or change is None:
        return INFO
    worse = -change if better == "higher" else change
    if abs(worse) <= tolerance_pct:
        return OK
    if p_value is None:
        return (REGRESSION if alpha >= 1 else WARN) if worse > 0 else IMPROVED
    if p_value >= alpha:
        return NOISE
    return REGRESSION if worse > 0 else IMPROVED


def figure_keys(result: RunResult, baseline: RunResult) -> List[str]:
    """Keys of the figures both runs hold for a test both ran, in run order."""
    out: List[str] = []
    for test, base in _pairs(result, baseline):
        base_keys = {f.key for f in figures(base)}
        out += [f.key for f in figures(test) if f.key in base_keys and f.key not in out]
    return out


def _pairs(result: RunResult, baseline: RunResult) -> List[Tuple[TestRun, TestRun]]:
    theirs = by_key(baseline)
    return [(t, theirs[t.key]) for t in result.tests if t.key in theirs]


Baselines = Union[RunResult, Sequence[RunResult]]


def _as_list(baselines: Baselines) -> List[RunResult]:
    return [baselines] if isinstance(baselines, RunResult) else list(baselines)


@dataclass(frozen=True)
class Input:
    """One figure of one test on both sides, before it is judged: the figure
    of the result and of each baseline, and their window values."""

    test: str
    fig: Figure
    data: family.Figure
    kind: str = ""  # the test's type


def inputs(result: RunResult, baselines: Baselines, metrics: Sequence[str] = ()) -> List[Input]:
    """Every headline figure the result and every baseline hold (only
    ``metrics`` when given), with its window values, in run order."""
    bases = _as_list(baselines)
    out: List[Input] = []
    for test in result.tests:
        others = [b.test(test.key) for b in bases]
        if any(o is None for o in others):
            continue
        base_figs = [{f.key: f for f in figures(o)} for o in others]  # type: ignore[arg-type]
        mine_values = noise.window_values(test, figures)
        base_values = [noise.window_values(o, figures) for o in others]  # type: ignore[arg-type]
        for fig in figures(test):
            if all(fig.key in b for b in base_figs) and (not metrics or fig.key in metrics):
                theirs = tuple(tuple(v.get(fig.key, ())) for v in base_values)
                out.append(Input(test.key, fig, family.Figure(
                    fig.better, tuple(b[fig.key].value for b in base_figs), fig.value, theirs,
                    tuple(mine_values.get(fig.key, ()))), test.type))
    return out


def compare(result: RunResult, baselines: Baselines, tolerance_pct: float,
            metrics: Sequence[str] = (), alpha: float = noise.ALPHA,
            correction: str = HOLM) -> Comparison:
    """Every headline figure the result and every baseline hold, cell by cell
    (only ``metrics`` when given); several baselines are one distribution.
    On a night the host limited (the emulated SSD's host facts:
    :func:`~tkperf.verdict.comparable.host_warnings`), the figures the host
    path sets are ``host-limited``: shown, but left out of the tests, the
    correction and the verdict."""
    bases = _as_list(baselines)
    host = host_warnings(result, bases)
    items = inputs(result, bases, metrics)
    held = {k for k, i in enumerate(items) if host and host_path(i.kind, i.fig.key)}
    judged = assess([i for k, i in enumerate(items) if k not in held], tolerance_pct, alpha, correction,
                    tuple(caveats.warnings(result, bases) + host))
    if not held:
        return judged
    cells = iter(judged.cells)
    return replace(judged, cells=tuple(_cell(i, HOST_LIMITED) if k in held else next(cells)
                                       for k, i in enumerate(items)))


def method_of(items: Sequence[Input]) -> str:
    """The test the figures get: Welch's with one baseline, else the
    prediction interval, with the night's shift removed when the night has
    enough figures that can join it."""
    if not items or len(items[0].data.nights) < 2:
        return WELCH
    joined = [i for i in items if _joins(i)]
    return NIGHT_ADJUSTED if len(joined) >= family.MIN_FAMILY else PREDICTION


#: Extreme figures: the slowest single I/O of a window (``..._largest_us``) and the
#: percentiles beyond 99.9% (``..._p99_99_us``), which a handful of I/Os set.
EXTREME = re.compile(r"_(largest|p99_99\d*)_")


def extreme(key: str) -> bool:
    """Whether the figure is an extreme of its run (:data:`EXTREME`): heavy-tailed
    night to night, so it is judged alone (:func:`_alone`): on a log scale, its
    spread at least one round's, and never through the night's shift."""
    return bool(EXTREME.search(key))


def _joins(i: Input) -> bool:
    """Whether the figure joins the night's family (the shared shift)."""
    return i.data.usable and not extreme(i.fig.key)


def _tests(items: Sequence[Input], method: str) -> Tuple[List[Optional[noise.Welch]], Optional[family.Night]]:
    """Each figure's test (None: none could be made) and the night's."""
    if method == WELCH:
        return [noise.welch(i.data.mine or (i.fig.value,), i.data.windows[0] or i.data.nights,
                            i.fig.better or "higher") for i in items], None
    tests: List[Optional[noise.Welch]] = [None] * len(items)
    night = None
    joined = [k for k, i in enumerate(items) if _joins(i)]
    if method == NIGHT_ADJUSTED:
        found = family.night_adjusted([items[k].data for k in joined])
        if found is not None:
            for k, t in zip(joined, found[0]):
                tests[k] = t
            night = found[1]
    for k, i in enumerate(items):
        if tests[k] is None:
            tests[k] = _alone(i)
    return tests, night


def _alone(i: Input) -> Optional[noise.Welch]:
    """The figure's whole move against its own nights (a prediction interval
    whose spread is at least what the windows show): no shift taken out.  An
    extreme figure (:func:`extreme`) on a log scale, its spread at least one
    round's (its window values' variance, not divided by their number): the
    largest of a window is one draw of the rounds' maxima, not their mean."""
    d = i.data
    if extreme(i.fig.key) and d.usable:
        return _extreme(d, i.fig.better)
    windows = [list(w) or [v] for w, v in zip(d.windows, d.nights)] + [list(d.mine) or [d.value]]
    floor = noise.mean([noise.variance(w) / len(w) for w in windows])
    return noise.predict(d.value, list(d.nights), i.fig.better or "higher", floor)


def _extreme(d: family.Figure, better: str) -> Optional[noise.Welch]:
    """An extreme figure's move: log values, the floor one round's spread."""
    rounds = [[math.log(v) for v in w if v > 0 and math.isfinite(v)] for w in d.windows + (d.mine,)]
    floor = noise.mean([noise.variance(w) for w in rounds if len(w) > 1] or [0.0])
    return noise.predict(math.log(d.value), [math.log(v) for v in d.nights], better, floor)


def _worse(better: str, change: Optional[float]) -> Optional[float]:
    if change is None or not better:
        return None
    return -change if better == "higher" else change


def assess(items: Sequence[Input], tolerance_pct: float, alpha: float = noise.ALPHA,
           correction: str = HOLM, warnings: Tuple[str, ...] = ()) -> Comparison:
    """Judge every figure: its test, Holm's correction over the night's
    figures (``correction``), the tolerance (docs/check.rst)."""
    method = method_of(items)
    tests, night = _tests(items, method)
    worse_p: List[Optional[float]] = [t.p_worse if t is not None and i.fig.better else None
                                      for t, i in zip(tests, items)]
    better_p: List[Optional[float]] = [t.p_better if t is not None and i.fig.better else None
                                       for t, i in zip(tests, items)]
    if night is not None:  # the night's shift is one more hypothesis of each family
        worse_p.append(night.test.p_worse)
        better_p.append(night.test.p_better)
    adj_worse = family.holm(worse_p) if correction == HOLM else list(worse_p)
    adj_better = family.holm(better_p) if correction == HOLM else list(better_p)
    night_shift = None
    if night is not None:
        night_shift = NightShift(night.shift_pct, night.test.p_worse, night.test.p_better,
                                 adj_worse[-1], adj_better[-1])  # type: ignore[arg-type]
    cells = []
    for k, i in enumerate(items):
        change = change_pct(noise.mean(list(i.data.nights)), i.fig.value)
        worse = _worse(i.fig.better, change)
        p = p_adj = None
        if worse is not None and tests[k] is not None:
            p, p_adj = (worse_p[k], adj_worse[k]) if worse > 0 else (better_p[k], adj_better[k])
            p, p_adj = _through_night(i, worse > 0, p, p_adj, night_shift)
        cells.append(_cell(i, judge(i.fig.better, change, tolerance_pct, p_adj, alpha), p, p_adj))
    return Comparison(tolerance_pct, tuple(cells), alpha, warnings, method, correction, night_shift)


def _through_night(i: Input, worse: bool, p: Optional[float], p_adj: Optional[float],
                   night_shift: Optional[NightShift]) -> Tuple[Optional[float], Optional[float]]:
    """(p, p adjusted) of a figure of the night's family once the night's
    shift is heard: when the night moved the figure's way, its test speaks
    for the figure, but only for a figure whose whole move is also beyond
    its own nights' noise (both must hold, the larger p decides): a
    significant shift of 1.7% fails no figure whose 12% move its own nights
    often show.  An extreme figure (:func:`extreme`) is never judged through
    the shift: the slowest I/O of a night is its own."""
    whole = _alone(i) if night_shift is not None and _joins(i) else None
    if night_shift is None or whole is None:
        return p, p_adj
    whole_p = whole.p_worse if worse else whole.p_better
    via = max(night_shift.adjusted(worse), whole_p)
    if p_adj is None or via < p_adj:
        return whole_p, via
    return p, p_adj


def _cell(i: Input, verdict: str, p: Optional[float] = None, p_adj: Optional[float] = None) -> Cell:
    """The figure's cell with its verdict and p values: the baseline's mean, the change, the spreads."""
    base = noise.mean(list(i.data.nights))
    many = len(i.data.nights) > 1
    sample = list(i.data.nights) if many else list(i.data.windows[0]) or [base]
    mine = list(i.data.mine) or [i.fig.value]
    return Cell(i.test, i.fig.key, i.fig.label, i.fig.unit, i.fig.better, base, i.fig.value,
                change_pct(base, i.fig.value), verdict, i.fig.text, p,
                noise.stdev(mine) if len(mine) > 1 else None,
                noise.stdev(sample) if len(sample) > 1 else None, len(mine), len(sample), p_adj)


def unjudged(comparison: Comparison) -> List[Cell]:
    """The cells no verdict can rest on: the result's or a baseline's figure,
    or their change, is not a finite number (a figure a test type computed
    as NaN, say a spread over a median of 0).  Apart from the statistics
    above on purpose: whatever they say of such a cell, ``tkperf check``
    does not exit 0 on it (exit 12, docs/check.rst)."""
    return [c for c in comparison.cells
            if not (math.isfinite(c.baseline) and math.isfinite(c.result))
            or (c.change_pct is not None and not math.isfinite(c.change_pct))]
