"""fio's IOPS log, read into write periods and intervals.

With ``write_iops_log=PREFIX`` and ``log_avg_msec=MS`` fio 3.33 writes
``PREFIX_iops.N.log`` (N: the job's number in the job file), one line per
window in which I/O completed::

    time (ms since the job started), IOPS, direction, block size, offset[, ...]

The value is the rate of the window: fio's helper thread samples the I/O
count every ``MS`` and logs ``delta * 1000 / spent`` (ms since the previous
sample).  A window in which no I/O completed gets **no line at all**
(``__add_samples``: "No entries for interval"), so an idle gap is a stretch
of time without lines, and the first line after it covers one sample period
only.  Hence:

* a window's length is the time since the line before it when that is at
  most 1.5 sample periods (two samples averaged into one line stretch it),
  else one sample period (the first line after a gap); the job's first
  line counts from the job's start, as fio's first sample does;
* its I/Os are its rate times its length;
* summed over a job they come within a few per cent of fio's exact count
  (the helper thread's sample times are not the logged times); the caller
  scales them to fio's own ``total_ios`` of the job (:func:`scaled`), so the
  log only says *how the I/Os were spread in time*.

Write periods are the runs of windows between gaps of at least half the
idle time (:func:`write_periods`).  Intervals of a continuous job are the
windows grouped by the interval their end falls in (:func:`intervals`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import numpy as np

from tkperf.pts import log_files as logs_log_files
from tkperf.pts import parse_log

#: fio's direction number of writes in its logs.
WRITE = 1
#: A line this many sample periods after the one before it follows a gap.
STRETCH = 1.5


def log_files(prefix: str) -> List[str]:
    """The iops logs fio wrote for ``write_iops_log=prefix``, in job order."""
    return logs_log_files(prefix, "iops")


@dataclass(frozen=True, eq=False)
class Windows:
    """One job's logged windows of writes: where each ends and how long it is
    (ms since the job started) and its I/Os."""

    end_ms: np.ndarray
    span_ms: np.ndarray
    ios: np.ndarray

    def __len__(self) -> int:
        return int(self.end_ms.size)

    @property
    def start_ms(self) -> np.ndarray:
        return self.end_ms - self.span_ms

    @property
    def total(self) -> float:
        return float(self.ios.sum())

    def cumulative(self, at_ms) -> np.ndarray:
        """I/Os completed by each time of ``at_ms``, each window's spread
        evenly over its length (none in the gaps between windows)."""
        at = np.asarray(at_ms, dtype=np.float64)
        if not len(self):
            return np.zeros_like(at)
        after = np.cumsum(self.ios)
        x = np.column_stack([self.start_ms, self.end_ms]).ravel()
        y = np.column_stack([after - self.ios, after]).ravel()
        return np.interp(at, x, y, left=0.0, right=float(after[-1]))


def windows(rows: np.ndarray, sample_ms: float) -> Windows:
    """The write windows of parsed log rows (:func:`parse_log`) of a job
    logging every ``sample_ms``."""
    if sample_ms <= 0:
        raise ValueError("the log's sample period must be positive")
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    rows = rows[rows[:, 2] == WRITE]
    end = rows[:, 0]
    if end.size and np.any(np.diff(end) < 0):
        raise ValueError("the log's times go backwards")
    since = np.diff(np.r_[0.0, end])
    span = np.where(since <= STRETCH * sample_ms, since, float(sample_ms))
    if span.size:
        span[0] = since[0]  # fio's first sample counts from the job's start
    return Windows(end, span, rows[:, 1] * span / 1000.0)


def read_windows(prefix: str, sample_ms: float) -> Tuple[Windows, int]:
    """(windows, number of log files) for ``write_iops_log=prefix``; the job
    runs one thread, so one file is expected."""
    files = log_files(prefix)
    if not files:
        return windows(np.zeros((0, 3)), sample_ms), 0
    with open(files[0], encoding="ascii", errors="replace") as fh:
        return windows(parse_log(fh.read(), files[0]), sample_ms), len(files)


def scaled(w: Windows, total_ios: float) -> Tuple[Windows, float]:
    """The windows with their I/Os scaled to fio's exact ``total_ios``, and
    the factor (1.0 when nothing was logged)."""
    logged = w.total
    if logged <= 0:
        return w, 1.0
    factor = float(total_ios) / logged
    return Windows(w.end_ms, w.span_ms, w.ios * factor), factor


#: Kinds of write period: a whole one, the job's first (a lead-in of
#: continuous writes before its last ``write`` seconds), one cut short.
WHOLE, LEAD_IN, PART = 0, 1, 2


def with_tail(w: Windows, job_end_ms: float, total_ios: float) -> Windows:
    """A continuous job's windows with what fio counted but did not log put
    after the last line, up to the job's end (fio writes no line for the
    part-window its job ends in)."""
    missing = float(total_ios) - w.total
    last = float(w.end_ms[-1]) if len(w) else 0.0
    if missing <= 0 or job_end_ms <= last:
        return w
    return Windows(np.r_[w.end_ms, float(job_end_ms)], np.r_[w.span_ms, float(job_end_ms) - last],
                   np.r_[w.ios, missing])


@dataclass(frozen=True)
class Period:
    """One write period: I/O from ``start_ms`` to ``end_ms`` (estimated
    within the first and last windows); ``ios`` are those of its last
    ``counted_ms`` (the set write time; the whole period when it was cut
    short); ``gap_ms`` is the time without I/O after it (to the next period,
    or to the job's end for the last)."""

    start_ms: float
    end_ms: float
    counted_ms: float
    ios: float
    gap_ms: float
    kind: int = WHOLE

    @property
    def length_ms(self) -> float:
        return self.end_ms - self.start_ms

    @property
    def iops(self) -> float:
        return self.ios * 1000.0 / self.counted_ms if self.counted_ms > 0 else 0.0


def runs(w: Windows, min_gap_ms: float) -> List[Tuple[int, int]]:
    """(first, stop) window indices of every run of windows separated from
    the next by at least ``min_gap_ms`` without a line."""
    if not len(w):
        return []
    gaps = w.start_ms[1:] - w.end_ms[:-1]
    cuts = np.flatnonzero(gaps >= min_gap_ms) + 1
    edges = np.r_[0, cuts, len(w)]
    return [(int(a), int(z)) for a, z in zip(edges[:-1], edges[1:])]


def _active(ios: float, neighbour_rate: float, span: float) -> float:
    """How much of a window at the edge of a run had I/O: its I/Os at the
    rate of the window next to it (within the window's length)."""
    if neighbour_rate <= 0:
        return span
    return float(min(span, max(0.0, ios / neighbour_rate)))


def edges(w: Windows, a: int, z: int) -> Tuple[float, float]:
    """Where the I/O of the run of windows ``a:z`` began and ended.

    fio stamps a window with its end and spreads nothing: the first window
    of a run holds I/O only after the idle gap ended, the last only until
    the think time began.  With at least three windows, the edge windows'
    I/Os at the rate of their inner neighbours say how much of them was
    busy; otherwise the windows' own bounds are taken."""
    start, end = float(w.start_ms[a]), float(w.end_ms[z - 1])
    if z - a < 3:
        return start, end
    rate = w.ios / w.span_ms
    start = float(w.end_ms[a]) - _active(float(w.ios[a]), float(rate[a + 1]), float(w.span_ms[a]))
    end = float(w.start_ms[z - 1]) + _active(float(w.ios[z - 1]), float(rate[z - 2]), float(w.span_ms[z - 1]))
    return start, end


def write_periods(w: Windows, write_ms: float, idle_ms: float, job_end_ms: float) -> List[Period]:
    """The write periods of a job alternating ``write_ms`` of writes with
    ``idle_ms`` without I/O, which ran ``job_end_ms``.

    Periods are the runs of windows between gaps of at least half the idle
    time.  A period's IOPS are its I/Os over the set write time.  One longer
    than write + half the idle time is a lead-in: fio 3.33 starts the first
    think time after write + idle time (``thinktime_iotime`` counts from the
    start of the last think time, the first from the job's start), so the
    first period is continuous writes followed by a write period of the set
    length, of which only the last ``write_ms`` count.  One shorter than
    write - half the idle time was cut short (by the job's end) and counts
    over its own length.
    """
    out: List[Period] = []
    found = runs(w, idle_ms / 2.0)
    bounds = [edges(w, a, z) for a, z in found]
    for k, ((a, z), (start, end)) in enumerate(zip(found, bounds)):
        ios = float(w.ios[a:z].sum())
        length = end - start
        kind, counted = WHOLE, float(write_ms)
        if length > write_ms + idle_ms / 2.0:
            kind = LEAD_IN
            ios -= float(w.cumulative([end - write_ms])[0] - w.cumulative([start])[0])
        elif length < write_ms - idle_ms / 2.0:
            kind, counted = PART, max(length, 0.0)
        following = bounds[k + 1][0] if k + 1 < len(found) else float(job_end_ms)
        out.append(Period(start, end, counted, max(ios, 0.0), max(0.0, following - end), kind))
    return out


def intervals(w: Windows, interval_ms: float, total_ms: float) -> Tuple[np.ndarray, np.ndarray]:
    """(I/Os, length in ms) of each interval of ``interval_ms`` of a
    continuous job of ``total_ms`` (the last may be shorter), a window
    straddling two intervals shared by time; what was logged after the job's
    planned end (fio's last line) counts in the last interval."""
    if interval_ms <= 0 or total_ms <= 0:
        raise ValueError("the interval and the job's time must be positive")
    count = int(np.ceil(total_ms / interval_ms - 1e-9))
    edges = np.minimum(np.arange(count + 1, dtype=np.float64) * interval_ms, float(total_ms))
    lengths = np.diff(edges)
    if len(w):
        edges[-1] = max(edges[-1], float(w.end_ms[-1]))
    return np.diff(w.cumulative(edges)), lengths
