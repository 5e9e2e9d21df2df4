"""The SNIA PTS steady-state check (20/10 over a window of 5 rounds).

A pure function: no I/O, no fio, so every test and the report use one
definition.  In the last ``window`` rounds the device is steady when

* the data excursion, max - min, is at most 20% of the window average, and
* the excursion of the least-squares line over the window,
  ``|slope| * (window - 1)``, is at most 10% of the window average.

The x values are the round numbers themselves, so the intercept is that of
the line through (round, value); this reproduces the worked example of the
TKperf talk (rounds 7-11, 13705 14639 14747 14678 13927 -> slope 48.3,
intercept 13904.5, average 14339.2, steady).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Sequence, Tuple

import numpy as np

DATA_EXCURSION = 0.20
SLOPE_EXCURSION = 0.10
#: Rounds in the measurement window unless a run says otherwise (``RunOptions.window``).
WINDOW = 5


@dataclass(frozen=True)
class SteadyState:
    """The verdict over one measurement window."""

    steady: bool
    rounds: Tuple[int, ...]
    values: Tuple[float, ...]
    slope: float
    intercept: float
    average: float
    range: float
    slope_excursion: float
    window: int

    @property
    def max_range(self) -> float:
        return abs(self.average) * DATA_EXCURSION

    @property
    def max_slope_excursion(self) -> float:
        return abs(self.average) * SLOPE_EXCURSION

    @property
    def first_round(self) -> int:
        return self.rounds[0] if self.rounds else 0

    @property
    def last_round(self) -> int:
        return self.rounds[-1] if self.rounds else 0


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> Tuple[float, float]:
    """Slope and intercept of the least-squares line through (xs, ys)."""
    n = len(xs)
    if n == 0:
        return 0.0, 0.0
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def evaluate(rounds: Sequence[int], values: Sequence[float], window: int = WINDOW) -> SteadyState:
    """Apply the 20/10 rule to the last ``window`` of (round, value) pairs.

    Fewer than ``window`` rounds are never steady; the statistics are still
    computed over what there is, so a report can show them.
    """
    if len(rounds) != len(values):
        raise ValueError("rounds and values differ in length")
    if window < 2:
        raise ValueError("the window needs at least 2 rounds")
    xs = [int(r) for r in rounds[-window:]]
    ys = [float(v) for v in values[-window:]]
    if not xs:
        return SteadyState(False, (), (), 0.0, 0.0, 0.0, 0.0, 0.0, window)
    slope, intercept = least_squares(xs, ys)
    average = sum(ys) / len(ys)
    data_range = max(ys) - min(ys)
    slope_exc = abs(slope) * (window - 1)
    steady = (
        len(xs) == window
        and average > 0
        and data_range <= DATA_EXCURSION * average
        and slope_exc <= SLOPE_EXCURSION * average
    )
    return SteadyState(
        steady=steady,
        rounds=tuple(xs),
        values=tuple(ys),
        slope=slope,
        intercept=intercept,
        average=average,
        range=data_range,
        slope_excursion=slope_exc,
        window=window,
    )


class Steady(enum.Enum):
    """A plan's steady-state policy."""

    #: No steady state is sought (a sweep, phases, a single pass).
    NONE = "none"
    #: The PTS 20/10 rule on the one tracking figure.
    ONE = "one figure"
    #: The 20/10 rule on each of several figures (the plan's ``judge``).
    SEVERAL = "several figures"


def spaced_steady(values: Sequence[float] | np.ndarray, every: int, window: int, last: int = 0) -> SteadyState:
    """The 20/10 verdict on points ``every`` intervals apart.

    Point k ends at interval ``k*every`` (whole blocks only; a block still
    filling does not count) and is the mean of the last ``last`` intervals
    of its block (0, or more than ``every``: the whole block, the
    definition of results from before the one-minute points); the rule is
    applied to the last ``window`` points.  The verdict names each point by
    the interval that ends it, and its slope is per interval, so the line
    reads against interval numbers like any other verdict.
    """
    if every < 1:
        raise ValueError("points must be at least one interval apart")
    take = every if last <= 0 else min(last, every)
    count = len(values) // every
    first = max(0, count - window)
    blocks = np.asarray(values[first * every:count * every], dtype=float).reshape(-1, every)
    points = [float(v) for v in blocks[:, every - take:].mean(axis=1)]
    verdict = evaluate(list(range(first + 1, count + 1)), points, window)
    # x = k*every turns the line y = s*k + b into y = (s/every)*x + b: same intercept.
    return replace(verdict, rounds=tuple((k + 1) * every for k in range(first, count)),
                   slope=verdict.slope / every)
