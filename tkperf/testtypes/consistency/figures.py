"""The consistency figures, as pure functions of per-interval arrays.

Definitions (also in docs/test-consistency.rst and the report's text):

* **Write cliff**: the rolling median of the IOPS over :func:`cliff_window`
  intervals (centred, full windows only) is compared with the midpoint
  between the *initial level* (median of the first window) and the *final
  level* (median of the last quarter of the run, at least one window).  A
  cliff is reported only when the final level is at least
  :data:`CLIFF_DROP` (25%) below the initial one; it happened at the end of
  the first interval whose rolling median is below the midpoint.  Else:
  "no write cliff within the run".
* **Steady part**: the second half of the run, or, when the cliff came
  later, from one rolling window after the cliff to the end.
* **IOPS spread**: (99th percentile - 1st percentile) of the steady part's
  per-interval IOPS, as a share of their median (percentiles interpolated
  linearly, as numpy does by default).
* **5 s blocks**: consecutive intervals grouped into 5 s (5 intervals of
  1 s, or each 5 s interval), never across a phase boundary; a phase's
  trailing part-block is dropped when the phase has a whole block.  Their
  average response time is weighted by I/O count, their maximum is the
  largest interval maximum.  **AvgMaxRT_5sInt** (IBM 2012) is the plain
  mean of the blocks' maxima.
* **Max/avg latency ratio** (SanDisk): the largest response time of the
  measurement over its mean response time (weighted by I/O count).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

#: The final level must be this share below the initial one to call it a cliff.
CLIFF_DROP = 0.25
#: Rolling-median window in intervals: about 2% of the run, odd, within these bounds.
MIN_WINDOW, MAX_WINDOW = 5, 61
#: Seconds per block of the per-interval latency figures (IBM 2012).
BLOCK_S = 5
#: Percentiles of the IOPS spread.
LOW_PCT, HIGH_PCT = 1.0, 99.0


def cliff_window(n: int) -> int:
    """Rolling-median window for a run of ``n`` intervals: n/50, odd, 5..61."""
    w = max(MIN_WINDOW, min(MAX_WINDOW, n // 50))
    return w if w % 2 else w + 1


def rolling_median(values: np.ndarray, window: int) -> np.ndarray:
    """Centred rolling median; element i is the median of values[i-h .. i+h]
    (h = window // 2) for h <= i < n-h, nan elsewhere."""
    v = np.asarray(values, dtype=np.float64)
    out = np.full(v.size, np.nan)
    if v.size < window:
        return out
    h = window // 2
    out[h:v.size - h] = np.median(np.lib.stride_tricks.sliding_window_view(v, window), axis=1)
    return out


@dataclass(frozen=True)
class Cliff:
    """Where the IOPS fell, if they did: ``index`` (0-based interval) and
    ``time_s`` (its end, seconds since the stimulus started); -1 and nan when
    there was no cliff.  ``reason`` says why not in words."""

    index: int
    time_s: float
    initial: float
    final: float
    midpoint: float
    window: int
    reason: str = ""

    @property
    def found(self) -> bool:
        return self.index >= 0


def write_cliff(iops: np.ndarray, end_s: np.ndarray) -> Cliff:
    """The write cliff of one stream of per-interval IOPS (see the module doc)."""
    y = np.asarray(iops, dtype=np.float64)
    n = int(y.size)
    w = cliff_window(n)
    if n < 2 * w:
        return Cliff(-1, float("nan"), float("nan"), float("nan"), float("nan"), w,
                     f"too short to tell ({n} intervals; needs {2 * w})")
    initial = float(np.median(y[:w]))
    final = float(np.median(y[n - max(w, n // 4):]))
    midpoint = (initial + final) / 2.0
    if not final <= (1.0 - CLIFF_DROP) * initial:
        return Cliff(-1, float("nan"), initial, final, midpoint, w,
                     f"no write cliff within the run (final level {_share(final, initial)} of the initial)")
    below = np.nonzero(rolling_median(y, w) < midpoint)[0]
    if not below.size:  # the median never crossed: a fall only at the very end
        return Cliff(-1, float("nan"), initial, final, midpoint, w,
                     "no write cliff within the run (the fall is shorter than the rolling window)")
    i = int(below[0])
    return Cliff(i, float(end_s[i]), initial, final, midpoint, w)


def _share(value: float, of: float) -> str:
    return f"{value / of:.0%}" if of > 0 else "n/a"


def steady_start(n: int, cliff: Cliff) -> int:
    """First interval (0-based) of the steady part of ``n`` intervals."""
    start = n // 2
    if cliff.found:
        start = max(start, cliff.index + cliff.window)
    return min(start, max(n - 1, 0))


@dataclass(frozen=True)
class Spread:
    """The steady part's IOPS: median, 1st and 99th percentile, and the
    spread (p99 - p1) as a percentage of the median."""

    median: float
    low: float
    high: float
    pct: float
    count: int


def spread(values: np.ndarray) -> Optional[Spread]:
    v = np.asarray(values, dtype=np.float64)
    if not v.size:
        return None
    low, median, high = (float(x) for x in np.percentile(v, [LOW_PCT, 50.0, HIGH_PCT]))
    # one interval has no spread (p1 = p99 of one value is not a steady 0%)
    pct = (high - low) / median * 100.0 if median > 0 and v.size > 1 else float("nan")
    return Spread(median, low, high, pct, int(v.size))


def block_rows(phase: np.ndarray, per_block: int) -> Tuple[np.ndarray, np.ndarray]:
    """(first row, row count) of every 5 s block: ``per_block`` consecutive
    intervals of one phase; a phase's trailing part-block is dropped unless it
    is the phase's only block."""
    ph = np.asarray(phase)
    starts, counts = [], []
    edges = np.flatnonzero(np.diff(ph)) + 1
    for a, z in zip(np.r_[0, edges], np.r_[edges, ph.size]):
        length = int(z - a)
        whole = length // per_block
        for k in range(whole):
            starts.append(int(a) + k * per_block)
            counts.append(per_block)
        if not whole and length:
            starts.append(int(a))
            counts.append(length)
    return np.asarray(starts, dtype=np.int64), np.asarray(counts, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Blocks:
    """Per 5 s block: its end (s), mean response time (us, by I/O count;
    0 without I/O), maximum response time (us; nan where an interval's is
    unknown, None without the fio logs) and the phase it belongs to."""

    end_s: np.ndarray
    lat_mean_us: np.ndarray
    lat_max_us: Optional[np.ndarray]
    phase: np.ndarray

    def __len__(self) -> int:
        return int(self.end_s.size)

    def where(self, mask: np.ndarray) -> Blocks:
        return Blocks(self.end_s[mask], self.lat_mean_us[mask],
                      None if self.lat_max_us is None else self.lat_max_us[mask], self.phase[mask])


def blocks(end_s: np.ndarray, ios: np.ndarray, lat_mean_us: np.ndarray, lat_max_us: Optional[np.ndarray],
           phase: np.ndarray, per_block: int) -> Blocks:
    """The 5 s blocks of per-interval figures (``per_block`` intervals each)."""
    starts, counts = block_rows(phase, per_block)
    if not starts.size:
        empty = np.zeros(0)
        return Blocks(empty, empty, None if lat_max_us is None else empty, empty)
    stops = starts + counts
    # Blocks are contiguous within a phase, but a dropped part-block may sit
    # between phases: sums by cumulative differences, maxima by pairs of
    # (start, stop) indices of which every second reduction is kept.
    cum_w = np.r_[0.0, np.cumsum(np.asarray(lat_mean_us, dtype=np.float64) * ios)]
    cum_n = np.r_[0.0, np.cumsum(np.asarray(ios, dtype=np.float64))]
    weighted = cum_w[stops] - cum_w[starts]
    count = cum_n[stops] - cum_n[starts]
    mean = np.divide(weighted, count, out=np.zeros_like(weighted), where=count > 0)
    maxima = None
    if lat_max_us is not None:
        mx = np.r_[np.asarray(lat_max_us, dtype=np.float64), 0.0]
        maxima = np.maximum.reduceat(mx, np.column_stack([starts, stops]).ravel())[::2]
    return Blocks(np.asarray(end_s, dtype=np.float64)[stops - 1], mean, maxima, np.asarray(phase)[starts])


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> Optional[float]:
    total = float(np.sum(weights))
    if total <= 0:
        return None
    return float(np.sum(np.asarray(values, dtype=np.float64) * weights) / total)
