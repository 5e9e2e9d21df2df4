"""Where did a figure's level change?  Binary segmentation with a permutation test.

The method, in the spirit of E-divisive means (MongoDB's performance CI)
and asv's step detection, kept small enough for numpy alone:

1. In a segment of runs ``x[0:n]``, every split ``k`` with at least
   :data:`MIN_SEGMENT` runs on each side gets the CUSUM statistic
   ``sqrt(k (n - k) / n) * |mean(x[:k]) - mean(x[k:])|``; the best split
   is the one with the largest.
2. The split is significant when a permutation test says so: the same
   maximum over :data:`PERMUTATIONS` random orders of the segment (a
   seeded generator, so the answer is reproducible) reaches the observed
   one in fewer than a fraction :data:`ALPHA` of them (p = (1 + hits) /
   (1 + permutations)).
3. A significant split is a change point; both halves are searched again
   (binary segmentation) until no segment splits.

A figure the host path sets follows the host's load (on tkperf's emulated
SSD, the 4k reads and 65:35 mix at QD 8 and WSAT's first interval follow
the share of the run the drive was idle, correlation -0.9 over recorded
nights): a load that changes for days moves its level, and the nights are
not independent draws (lag-1 autocorrelation +0.7), so the permutation
test names the load's steps.  Given the host's idle share of each run
(``host``), :func:`detect` first takes out of the (log) values their least
squares fit on it (:func:`adjusted`) and looks for steps in what is left: a
step of the drive (whose idle share does not move: a slower drive keeps
the host's commands longer) stays, a step of the host's load goes; a
change point's levels are then the figure's at the host's mean idle share.

A single noisy night cannot be a step: a split needs :data:`MIN_SEGMENT`
runs on each side, and one outlier moves a segment's mean by only
1/length of its excess.  Each change point carries its size: the mean of
the segment it starts against the mean of the segment before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

#: Fewest runs on each side of a change point: a new level is named on its
#: third night (``tkperf check`` flags a large drop on the first).
MIN_SEGMENT = 3
#: The permutation test's level: a split is a change point when p < ALPHA.
#: On noise alone at most this share of series get a change point (the
#: first split is tested at ALPHA, and only a series split once is tested again).
ALPHA = 0.02
#: Random orders per test (p can go down to 1/200).
PERMUTATIONS = 199
#: The seed of the permutations: the same history gives the same change points.
SEED = 20261124


@dataclass(frozen=True)
class ChangePoint:
    """The level changes at run ``index`` (0-based: the first run of the new level)."""

    index: int
    before: float  # mean of the segment that ends at index - 1
    after: float   # mean of the segment that starts at index
    p_value: float

    @property
    def change_pct(self) -> Optional[float]:
        return None if self.before == 0 else (self.after - self.before) / abs(self.before) * 100.0


def _statistic(cs: np.ndarray, n: int, lo: int, hi: int) -> np.ndarray:
    """The CUSUM statistic of splits lo..hi-1 from cumulative sums ``cs`` (rows: orders)."""
    k = np.arange(lo, hi, dtype=float)
    total = cs[..., -1:]
    left = cs[..., lo - 1:hi - 1] / k
    right = (total - cs[..., lo - 1:hi - 1]) / (n - k)
    return np.sqrt(k * (n - k) / n) * np.abs(left - right)


def best_split(x: np.ndarray, min_segment: int, permutations: int,
               rng: np.random.Generator) -> Optional[Tuple[int, float]]:
    """(split, p value) of the best split of ``x``; None when too short or flat."""
    n = x.size
    if n < 2 * min_segment or np.ptp(x) == 0:
        return None
    lo, hi = min_segment, n - min_segment + 1
    stat = _statistic(np.cumsum(x), n, lo, hi)
    k = int(np.argmax(stat))
    observed = stat[k]
    shuffled = rng.permuted(np.broadcast_to(x, (permutations, n)), axis=1)
    maxima = _statistic(np.cumsum(shuffled, axis=1), n, lo, hi).max(axis=1)
    hits = int(np.count_nonzero(maxima >= observed * (1 - 1e-12)))
    return lo + k, (1 + hits) / (1 + permutations)


def adjusted(values: Sequence[float], host: Sequence[float]) -> np.ndarray:
    """``values`` as they would have been at the host's mean: their least
    squares fit on ``host`` taken out (on a log scale when every value is
    positive); ``values`` unchanged when ``host`` is of another length, not
    finite or constant."""
    x = np.asarray(values, dtype=float)
    h = np.asarray(host, dtype=float)
    if h.shape != x.shape or not np.all(np.isfinite(h)) or np.ptp(h) == 0 or not np.all(np.isfinite(x)):
        return x
    logged = bool(np.all(x > 0))
    y = np.log(x) if logged else x
    y = y - float(np.polyfit(h, y, 1)[0]) * (h - h.mean())
    return np.exp(y) if logged else y


def detect(values: Sequence[float], min_segment: int = MIN_SEGMENT, alpha: float = ALPHA,
           permutations: int = PERMUTATIONS, seed: int = SEED,
           host: Optional[Sequence[float]] = None) -> List[ChangePoint]:
    """The change points of ``values`` (in run order), earliest first; with
    ``host`` (the host's idle share of each run), of what the host does not
    explain (:func:`adjusted`), whose levels the change points then carry."""
    x = np.asarray(values, dtype=float) if host is None else adjusted(values, host)
    rng = np.random.default_rng(seed)
    found: List[Tuple[int, float]] = []
    todo = [(0, x.size)]
    while todo:
        a, b = todo.pop()
        split = best_split(x[a:b], min_segment, permutations, rng)
        if split is None or split[1] >= alpha:
            continue
        k, p = split
        found.append((a + k, p))
        todo += [(a, a + k), (a + k, b)]
    found = _settled(x, sorted(found))
    bounds = [0] + [i for i, _ in found] + [x.size]
    out = []
    for j, (i, p) in enumerate(found):
        out.append(ChangePoint(i, float(x[bounds[j]:i].mean()), float(x[i:bounds[j + 2]].mean()), p))
    return out


def _settled(x: np.ndarray, found: List[Tuple[int, float]]) -> List[Tuple[int, float]]:
    """The change points whose runs on either side belong where they are put:
    the first run of the new level nearer its mean than the old level's, and
    the last run before nearer the old.  A new level of two runs cannot be a
    segment of its own (:data:`MIN_SEGMENT`), so the split takes the normal
    run before them in: dropped, the step is named once its third run is in."""
    while True:
        bounds = [0] + [i for i, _ in found] + [x.size]
        for j, (i, _) in enumerate(found):
            before, after = x[bounds[j]:i].mean(), x[i:bounds[j + 2]].mean()
            if abs(x[i] - after) > abs(x[i] - before) or abs(x[i - 1] - before) > abs(x[i - 1] - after):
                found = found[:j] + found[j + 1:]
                break
        else:
            return found


def levels(n: int, changes: Sequence[ChangePoint], values: Sequence[float]) -> List[Tuple[int, int, float]]:
    """(first, end, mean) of each segment between change points."""
    bounds = [0] + [c.index for c in changes] + [n]
    x = np.asarray(values, dtype=float)
    return [(a, b, float(x[a:b].mean())) for a, b in zip(bounds, bounds[1:]) if b > a]
