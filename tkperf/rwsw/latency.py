"""Response times of a capture in bounded memory: a fixed log-binned histogram.

A capture of a day holds hundreds of millions of I/Os; their response
times (issue to completion at the block layer) are not kept one by one.
Each is counted in a histogram of :data:`BINS` bins, :data:`SUB` to an
octave (a factor of two) of nanoseconds, from 1 ns to 2**40 ns (about 18
minutes; a longer time counts in the last bin).  The mean and the largest
are exact (a sum and a maximum kept beside the bins); the 99th percentile
is the geometric middle of the bin that holds it (nearest rank), within
1.1% of the exact figure (half a bin: 2**(1/64) - 1), never above the
largest.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

SUB = 32
OCTAVES = 40
BINS = SUB * OCTAVES


def bins_of(ns: np.ndarray) -> np.ndarray:
    """The bin of each time (nanoseconds, at least 1)."""
    x = np.log2(np.maximum(ns, 1.0)) * SUB
    return np.minimum(x.astype(np.int64), BINS - 1)


class Histogram:
    """Response times counted: bins, count, sum and largest (nanoseconds)."""

    __slots__ = ("counts", "n", "total", "largest")

    def __init__(self) -> None:
        self.counts = np.zeros(BINS, dtype=np.int64)
        self.n = 0
        self.total = 0.0
        self.largest = 0.0

    def add(self, ns: np.ndarray) -> None:
        """Count the times ``ns`` (nanoseconds, finite, at least 0)."""
        if ns.size == 0:
            return
        self.counts += np.bincount(bins_of(ns), minlength=BINS)
        self.n += int(ns.size)
        self.total += float(ns.sum())
        self.largest = max(self.largest, float(ns.max()))

    def merge(self, other: Histogram) -> None:
        self.counts += other.counts
        self.n += other.n
        self.total += other.total
        self.largest = max(self.largest, other.largest)

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile (0 < p <= 100) in nanoseconds, nearest rank; 0 when empty."""
        if self.n == 0:
            return 0.0
        rank = max(1, math.ceil(p / 100.0 * self.n))
        b = int(np.searchsorted(np.cumsum(self.counts), rank))
        return min(2.0 ** ((b + 0.5) / SUB), self.largest)

    def figures_us(self) -> Optional[Tuple[int, float, float, float]]:
        """(I/Os, mean, 99th percentile, largest) in microseconds, or None when no time was counted."""
        if self.n == 0:
            return None
        return self.n, self.total / self.n / 1e3, self.percentile(99.0) / 1e3, self.largest / 1e3
