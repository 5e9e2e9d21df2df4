"""A night's figures as one family: the night's shared shift, each figure's own move, Holm's correction.

``tkperf check`` against several baselines (the last nights) tests every
headline figure of the night.  The figures of one night are measured on
one machine in one run: a slower night (a busier host, a warmer drive)
moves them together, and that shared move is most of the night-to-night
spread.  This module separates the two, in relative terms (logarithms,
every figure oriented so that up is better):

* the night's *shift* is the median, over the figures, of each figure's
  deviation from its baseline mean; the baselines' own shifts (each night
  against the means) are its distribution, and the shift is tested as one
  more draw from them (a prediction interval with N - 1 degrees of
  freedom);
* each figure's *own move* is its deviation less the night's shift.  Its
  spread is what the baselines' own moves show, half the figure's own and
  half its kind's (a shrinkage estimate, as in Smyth's moderated t: one
  figure's N - 1 degrees of freedom are too few), with 2 (N - 1) degrees
  of freedom, and never less than its window values show (the
  round-to-round noise of a figure averaged over its window).  Its kind's
  is at the figure's own scale: its window variance times the median,
  over the night's figures with window values, of their night-to-night
  variance over their window variance (as limma-trend lets the prior
  follow a covariate, Law et al., Genome Biology 15, 2014).  The figures'
  spreads differ by orders of magnitude (on a loaded host a sequential
  write 0.1% night to night, the write latency at QD 1 30-75%): shrunk
  towards their plain mean, the sequential write 16% slower had an
  own-move p of 0.03, noise after the correction.  A figure without window values (one
  value a night, as WSAT's first interval) is one round's measurement,
  noisier than the window means: its spread is half its own and half one
  round's spread of the windowed figures (their window values' variance,
  not divided by the window's length), and never less than its own; with
  no windowed figure in the night, its own alone (N - 1 degrees of
  freedom).  A figure that alone fell by 30 % on
  an ordinary night stands out against a spread of a few percent.

:func:`holm` then adjusts each family's p values (Holm 1979), so that the
chance that a night with no change is red is at most the level, however
many figures it has.  Pure ``math``; no SciPy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from tkperf.model.noise import Welch, mean, t_sf, variance

#: Fewest figures whose median can stand for the night's shift.
MIN_FAMILY = 3


@dataclass(frozen=True)
class Figure:
    """One figure's values: ``nights`` the baselines' figures, ``value`` the
    result's; ``windows`` each baseline's window values, ``mine`` the
    result's (empty: none known)."""

    better: str
    nights: Tuple[float, ...]
    value: float
    windows: Tuple[Tuple[float, ...], ...] = ()
    mine: Tuple[float, ...] = ()

    @property
    def usable(self) -> bool:
        """Whether it can join the night: a direction, positive finite values."""
        values = self.nights + (self.value,)
        return bool(self.better) and all(math.isfinite(v) and v > 0 for v in values)


@dataclass(frozen=True)
class Night:
    """The night's shared shift (``shift_pct``, in the better-is-up sense) and its test."""

    shift_pct: float
    test: Welch


def _oriented(fig: Figure, v: float) -> float:
    return math.log(v) if fig.better == "higher" else -math.log(v)


def _window_variance(fig: Figure, per_round: bool = False) -> float:
    """The variance of the figure's (log) window mean: its window values'
    spread / their number (``per_round``: the spread of one round alone)."""
    found = []
    for w in fig.windows + (fig.mine,):
        logs = [math.log(v) for v in w if v > 0 and math.isfinite(v)]
        if len(logs) > 1:
            found.append(variance(logs) / (1 if per_round else len(logs)))
    return mean(found) if found else 0.0


def _median(values: Sequence[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


def _test(t: float, df: float) -> Welch:
    """A test whose positive ``t`` means better: p in the worse and the better direction."""
    return Welch(t, df, t_sf(-t, df), t_sf(t, df))


def _t(diff: float, var: float, n: int) -> float:
    se = math.sqrt(var * (1.0 + 1.0 / n))
    if se < 1e-12:  # no spread beyond rounding (logs): only a move beyond rounding is one
        return 0.0 if abs(diff) < 1e-12 else math.copysign(math.inf, diff)
    return diff / se


def night_adjusted(figs: Sequence[Figure]) -> Optional[Tuple[List[Welch], Night]]:
    """Each figure's own-move test and the night's shift test; None when the
    night cannot be told apart (fewer than :data:`MIN_FAMILY` usable
    figures, or fewer than two baseline nights).  ``figs`` must all be
    usable and have the same number of nights."""
    n = len(figs[0].nights) if figs else 0
    if len(figs) < MIN_FAMILY or n < 2 or any(len(f.nights) != n or not f.usable for f in figs):
        return None
    logs = [[_oriented(f, v) for v in f.nights] for f in figs]
    centre = [mean(row) for row in logs]
    past = [[row[j] - c for row, c in zip(logs, centre)] for j in range(n)]  # nights x figures
    shifts = [_median(dev) for dev in past]
    now = [_oriented(f, f.value) - c for f, c in zip(figs, centre)]
    shift = _median(now)
    own_var = [sum((past[j][i] - shifts[j]) ** 2 for j in range(n)) / (n - 1) for i in range(len(figs))]
    spreads = _spreads(figs, own_var, n)
    tests = [_test(_t(now[i] - shift, var, n), df) for i, (var, df) in enumerate(spreads)]
    night = _test(_t(shift - mean(shifts), variance(shifts), n), float(n - 1))
    return tests, Night((math.exp(shift) - 1.0) * 100.0, night)


def _ratio(ratios: Sequence[float]) -> float:
    """The night's figures' typical ratio of night-to-night to window variance:
    their median (robust to a figure the host swings, or one that never
    moved); 1 when none is known."""
    return _median(ratios) if ratios else 1.0


def _spreads(figs: Sequence[Figure], own_var: Sequence[float], n: int) -> List[Tuple[float, float]]:
    """Each figure's own-move (variance, degrees of freedom): shrunk towards
    the mean of the windowed figures' own variances and never below its
    window's; a figure with one value a night towards one round's spread
    (module docs)."""
    window_var = [_window_variance(f) for f in figs]
    windowed = [i for i, w in enumerate(window_var) if w > 0]
    ratio = _ratio([own_var[i] / window_var[i] for i in windowed])
    one_round = mean([_window_variance(figs[i], per_round=True) for i in windowed]) if windowed else 0.0
    out = []
    for i in range(len(figs)):
        if window_var[i] > 0:  # its window shows its own noise: shrink towards its kind's, at its scale
            out.append((max(window_var[i], (own_var[i] + ratio * window_var[i]) / 2.0), 2.0 * (n - 1)))
        elif one_round > 0:  # one value a night (WSAT's first interval): one round's spread is its kind's
            out.append((max(own_var[i], (own_var[i] + one_round) / 2.0), 2.0 * (n - 1)))
        else:
            out.append((own_var[i], float(n - 1)))
    return out


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm's step-down adjusted p values (None stays None: no test): the
    i-th smallest of m is multiplied by m - i + 1, made non-decreasing and
    capped at 1.  A hypothesis is rejected at level a when its adjusted p
    is below a; the chance of any false rejection is at most a, whatever
    the tests' dependence (Holm, Scand. J. Statist. 6, 1979)."""
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(order)
    out: List[Optional[float]] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
