"""A stored XSR test as numpy arrays, and its figures.

Definitions (also in docs/test-xsr.rst and the report's text):

* **Throughput** of an interval: the bytes written in it over fio's run time
  in it, in MB/s (decimal, 10^6 bytes per second).
* **Time**: fio's run time since the first phase started; the phases follow
  one another without a pause (fio's start, well under a second, is not
  counted).
* **Level** of a phase: the median throughput of its *level window*, the
  last quarter of its intervals (rounded up, at least one).
* **Smoothed throughput** of an interval: the median of the intervals
  around it, :data:`SMOOTH` (5) centred on it, fewer at the phase's ends
  (the first interval: itself and the two after it); never across phases.
  One or two stray intervals (a garbage-collection stall) do not move it.
* **Settle time** of a phase: with a band of ±``band`` percent (default 10)
  around the phase's level, the time from the start of the phase to the
  start of the first interval from which on the smoothed throughput of
  every interval of the phase lies within the band.  0 when it does from
  the first interval.  A phase whose smoothed throughput leaves the band
  within the level window never reached a level and *did not settle* (no
  settle time).
* A transition's settle time is the settle time of the phase it starts:
  SEQ 1024KiB W -> RND 8KiB W is the RND phase's, RND 8KiB W -> SEQ
  1024KiB W the second SEQ phase's.
* **Recovery**: the second SEQ phase's level as a percentage of the first's.

Only phases that ran to their end have figures: a phase cut short by a
stopped run has no last quarter.  Nothing here imports matplotlib.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from tkperf import api
from tkperf.pts import phase_rows, stored
from tkperf.testtypes.xsr.stream import SERIES

#: Phase kinds, in the order they run.
SEQ1, RND, SEQ2 = "seq1", "rnd", "seq2"
KINDS: Tuple[str, ...] = (SEQ1, RND, SEQ2)
#: Short names for figures and tables.
SHORT: Dict[str, str] = {SEQ1: "SEQ 1", RND: "RND", SEQ2: "SEQ 2"}
#: The workload of each phase kind.
WORKLOADS: Dict[str, str] = {SEQ1: "SEQ 1024KiB W", RND: "RND 8KiB W", SEQ2: "SEQ 1024KiB W"}
#: The level window is the last 1/LEVEL_PART of a phase's intervals.
LEVEL_PART = 4
#: Intervals of the centred rolling median the settle time is judged on.
SMOOTH = 5
DEFAULT_BAND_PCT = 10.0


def window_rows(n: int) -> int:
    """Intervals in the level window of a phase of ``n`` intervals: the last
    quarter, rounded up, at least one (none for an empty phase)."""
    return 0 if n <= 0 else max(1, math.ceil(n / LEVEL_PART))


def level(values: np.ndarray) -> Optional[float]:
    """The level of a phase's per-interval values: the median of its level window."""
    v = np.asarray(values, dtype=float)
    if not v.size:
        return None
    return float(np.median(v[v.size - window_rows(v.size):]))


def smoothed(values: np.ndarray) -> np.ndarray:
    """The centred rolling median over :data:`SMOOTH` intervals, over fewer
    at the ends (the window clipped to the values)."""
    v = np.asarray(values, dtype=float)
    if not v.size:
        return v
    h = SMOOTH // 2
    padded = np.concatenate([np.full(h, np.nan), v, np.full(h, np.nan)])
    return np.nanmedian(np.lib.stride_tricks.sliding_window_view(padded, SMOOTH), axis=1)


@dataclass(frozen=True)
class Settle:
    """When a phase settled: ``row`` is the 0-based interval (within the
    phase) from which on all stay in the band, ``time_s`` the time from the
    phase's start to that interval's start; both None when it did not."""

    row: Optional[int]
    time_s: Optional[float]
    band_pct: float

    @property
    def settled(self) -> bool:
        return self.row is not None


def settle(values: np.ndarray, seconds: np.ndarray, level_value: float, band_pct: float) -> Settle:
    """The settle time of a phase (see the module's definitions): ``values``
    per interval, ``seconds`` each interval's length, ``level_value`` the
    phase's level."""
    v = smoothed(values)
    n = int(v.size)
    if not n:
        return Settle(None, None, band_pct)
    # Percent first: 10 * 250 / 100 is exactly 25, 0.1 * 250 is not.
    inside = np.abs(v - level_value) <= band_pct * level_value / 100.0
    outside = np.flatnonzero(~inside)
    row = int(outside[-1]) + 1 if outside.size else 0
    if row > n - window_rows(n):
        return Settle(None, None, band_pct)
    return Settle(row, float(np.sum(np.asarray(seconds, dtype=float)[:row])), band_pct)


@dataclass(frozen=True)
class PhaseFigures:
    """One phase: its rows ``start``..``stop`` of the series (stop excluded)
    and, when it ran to its end (``complete``), its figures."""

    index: int
    kind: str
    label: str
    start: int
    stop: int
    begin_s: float          #: time of the phase's start since the test's
    seconds: float          #: fio's run time of the phase
    complete: bool
    first_mb_s: float
    mean_mb_s: float        #: bytes over time, the whole phase
    min_mb_s: float
    max_mb_s: float
    level_mb_s: Optional[float]
    level_iops: Optional[float]
    settle: Settle

    @property
    def rows(self) -> int:
        return self.stop - self.start

    @property
    def window(self) -> int:
        """Intervals of its level window."""
        return window_rows(self.rows)

    @property
    def short(self) -> str:
        return SHORT.get(self.kind, self.label)


@dataclass(frozen=True, eq=False)
class Analysis:
    """Per-interval arrays of one XSR test and its phases' figures."""

    interval_s: int
    band_pct: float
    end_s: np.ndarray       #: end of each interval, fio seconds since the first phase started
    fio_s: np.ndarray
    mb_s: np.ndarray
    iops: np.ndarray
    phase: np.ndarray
    phases: Tuple[PhaseFigures, ...]

    @property
    def n(self) -> int:
        return int(self.mb_s.size)

    def of(self, kind: str) -> Optional[PhaseFigures]:
        """The phase of ``kind``, if it ran."""
        return next((p for p in self.phases if p.kind == kind), None)

    def level_of(self, kind: str) -> Optional[float]:
        p = self.of(kind)
        return p.level_mb_s if p is not None else None

    def recovery_pct(self) -> Optional[float]:
        """The second SEQ level as a percentage of the first."""
        a, z = self.level_of(SEQ1), self.level_of(SEQ2)
        return z / a * 100.0 if a and z is not None else None


def interval_of(test: api.TestRun) -> int:
    text = test.params.get("interval", "60")
    return int(text) if text.isdigit() and int(text) > 0 else 60


def band_of(test: api.TestRun) -> float:
    """The settle band in percent the test was run with."""
    value = stored.number(test, "settle_band_pct", DEFAULT_BAND_PCT)
    return value if 0 < value < 100 else DEFAULT_BAND_PCT


def _figures(index: int, kind: str, label: str, rows: np.ndarray, a_fio: np.ndarray, a_bytes: np.ndarray,
             a_mb: np.ndarray, a_iops: np.ndarray, begin_s: float, complete: bool,
             band_pct: float) -> PhaseFigures:
    start, stop = int(rows[0]), int(rows[-1]) + 1
    mb, fio = a_mb[start:stop], a_fio[start:stop]
    seconds = float(fio.sum())
    mean = float(a_bytes[start:stop].sum()) / seconds / 1e6 if seconds > 0 else 0.0
    lvl = level(mb) if complete else None
    got = settle(mb, fio, lvl, band_pct) if lvl is not None else Settle(None, None, band_pct)
    return PhaseFigures(index, kind, label, start, stop, begin_s, seconds, complete, float(mb[0]), mean,
                        float(mb.min()), float(mb.max()), lvl, level(a_iops[start:stop]) if complete else None,
                        got)


def analyse(test: api.TestRun) -> Optional[Analysis]:
    """The test's arrays and figures; None before its first interval."""
    s = test.series.get(SERIES)
    if s is None or not len(s):
        return None
    fio_s, io_bytes = s.column("fio_s").astype(float), s.column("io_bytes").astype(float)
    mb_s = np.divide(io_bytes, fio_s, out=np.zeros_like(io_bytes), where=fio_s > 0) / 1e6
    iops, phase = s.column("iops").astype(float), s.column("phase").astype(np.int64)
    end_s = np.cumsum(fio_s)
    band = band_of(test)
    known = {index: (label, kind) for index, label, kind in phase_rows(test)}
    present = sorted(int(i) for i in np.unique(phase))
    out: List[PhaseFigures] = []
    for index in present:
        rows = np.flatnonzero(phase == index)
        label, kind = known.get(index, (f"phase {index}", KINDS[index - 1] if 0 < index <= len(KINDS) else ""))
        # The last phase measured ran to its end only when the test did.
        complete = index != present[-1] or test.status == "complete"
        begin = float(end_s[rows[0] - 1]) if rows[0] else 0.0
        out.append(_figures(index, kind, label, rows, fio_s, io_bytes, mb_s, iops, begin, complete, band))
    return Analysis(interval_of(test), band, end_s, fio_s, mb_s, iops, phase, tuple(out))
