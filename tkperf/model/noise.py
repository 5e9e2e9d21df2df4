"""Is a change noise?  Welch's t-test over the values a figure's window holds.

A headline figure is one number, but a round-based test measured it once
per round of its measurement window: the figure of each window round
alone is that round's value, and their spread is the noise the window
shows.  :func:`window_values` recovers those values through the test
type's own ``headline`` (a copy of the test whose window is one round), so
no test type has to know about it.  :func:`welch` tells whether two such
samples differ by more than their spread explains.  Pure ``math``: no
SciPy.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from tkperf.model.results import Round, TestRun

#: The level of the test: a change is noise unless p is below it.
ALPHA = 0.05


@dataclass(frozen=True)
class Welch:
    """Welch's t-test of ``result`` against ``baseline`` (one-sided p in the worse direction)."""

    t: float
    df: float
    p_worse: float   # P(a change at least this worse | no real change)
    p_better: float  # the same in the better direction


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def variance(values: Sequence[float]) -> float:
    """The sample variance (n - 1); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / (len(values) - 1)


def stdev(values: Sequence[float]) -> float:
    return math.sqrt(variance(values))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


def welch(result: Sequence[float], baseline: Sequence[float], better: str) -> Optional[Welch]:
    """Welch's t-test; None when it cannot be made (no spread known on either side).

    A side of one value borrows the other side's variance (its one value
    is then read as one draw from a distribution as wide as the other's).
    """
    n1, n2 = len(result), len(baseline)
    if n1 == 0 or n2 == 0 or (n1 < 2 and n2 < 2):
        return None
    v1, v2 = variance(result), variance(baseline)
    if n1 < 2:
        v1 = v2
    if n2 < 2:
        v2 = v1
    diff = mean(result) - mean(baseline)
    se2 = v1 / n1 + v2 / n2
    if se2 <= 0.0:
        t = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        df = float(max(n1 + n2 - 2, 1))
    else:
        t = diff / math.sqrt(se2)
        parts = [(v / n) ** 2 / (n - 1) for v, n in ((v1, n1), (v2, n2)) if n > 1]
        df = se2 ** 2 / sum(parts) if sum(parts) > 0 else float(max(n1 + n2 - 2, 1))
    worse_t = -t if better == "higher" else t
    return Welch(t, df, t_sf(worse_t, df), t_sf(-worse_t, df))


def predict(value: float, nights: Sequence[float], better: str, floor: float = 0.0) -> Optional[Welch]:
    """Is ``value`` one more draw from the distribution of ``nights`` (the
    baselines' figures, two or more)?  The t of a prediction interval:
    ``(value - mean) / (s * sqrt(1 + 1/N))`` with N - 1 degrees of
    freedom, where the variance ``s`` squared is at least ``floor`` (a
    run's figure is at least as noisy as its window says)."""
    n = len(nights)
    if n < 2:
        return None
    v = max(variance(nights), floor)
    diff = value - mean(nights)
    se = math.sqrt(v * (1.0 + 1.0 / n))
    t = (0.0 if diff == 0 else math.copysign(math.inf, diff)) if se == 0 else diff / se
    worse_t = -t if better == "higher" else t
    return Welch(t, float(n - 1), t_sf(worse_t, n - 1), t_sf(-worse_t, n - 1))


# --- the values of a window -------------------------------------------------------------------

def _one_round(test: TestRun, r: Round) -> TestRun:
    """A copy of ``test`` whose measurement window is the round ``r`` alone."""
    if test.steady is not None and test.steady.rounds:
        return dataclasses.replace(test, steady=dataclasses.replace(test.steady, rounds=(r.index,)))
    return dataclasses.replace(test, rounds=[r], steady=None)


def _stream_values(test: TestRun, figures: Callable[[TestRun], list]) -> Dict[str, List[float]]:
    """A stream's window: the tracking figure of each interval of its
    steady-state window (else its last intervals), for the figures that are
    their mean (WSAT's last intervals)."""
    wanted = set(test.steady.rounds) if test.steady is not None and test.steady.rounds else None
    pairs = test.tracking_values()
    values = [v for i, v in pairs if i in wanted] if wanted is not None else \
        [v for _, v in pairs[-(test.steady.window if test.steady is not None else 5):]]
    if len(values) < 2:
        return {}
    m = mean(values)
    return {f.key: values for f in figures(test) if abs(f.value - m) <= 1e-6 * max(abs(m), 1.0)}


def window_values(test: TestRun, figures: Callable[[TestRun], list]) -> Dict[str, List[float]]:
    """Figure key -> the figure of each window round alone, for the figures
    these values describe: those that lie within the values' range (a mean
    or an extreme of them).  A stream's figures that are the mean of its
    window's intervals get those intervals.  Empty for a window of fewer
    than two values; ``figures`` is the test type's headline."""
    if not test.rounds and test.series:
        return _stream_values(test, figures)
    rounds = test.window_rounds() if test.rounds else []
    if len(rounds) < 2:
        return {}
    whole = {f.key: f.value for f in figures(test)}
    per: Dict[str, List[float]] = {k: [] for k in whole}
    for r in rounds:
        try:
            got = {f.key: f.value for f in figures(_one_round(test, r))}
        except (ValueError, ZeroDivisionError, IndexError, KeyError):  # a figure that needs more rounds
            return {}
        for k in per:
            per[k].append(got.get(k, math.nan))
    out = {}
    for k, values in per.items():
        if any(math.isnan(v) for v in values):
            continue
        lo, hi = min(values), max(values)
        slack = 1e-9 * max(abs(lo), abs(hi), 1.0)
        if lo - slack <= whole[k] <= hi + slack:
            out[k] = values
    return out
