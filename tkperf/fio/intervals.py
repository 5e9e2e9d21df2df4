"""Cut fio's cumulative ``--status-interval`` reports into intervals.

fio prints the running totals of a job every interval; the difference of
two reports is one interval.  Its last report (when the job ends or is
stopped) usually comes a fraction of an interval after the one before; such
a short tail would stand as a noisy point, so it is merged into the interval
before it, which is then measured again from the cut before it and replaces
that interval's row.

An interval's I/Os are the I/Os *completed* in it (fio's ``total_ios``
counts them as issued; :func:`tkperf.fio.output.cumulative_write`), and
its mean response time is weighted by those completions.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Optional

from tkperf.errors import FioError
from tkperf.fio.output import cumulative_write

#: Key a back end may add to a report it hands over late (fio's client
#: prints a stream's reports when the job ends): when fio made it, on
#: ``time.monotonic``'s clock.
REPORT_AT = "tkperf_at"


def report_time(report: dict) -> float:
    """When ``report`` was made: now, unless the back end says otherwise."""
    at = report.get(REPORT_AT)
    return float(at) if isinstance(at, (int, float)) else time.monotonic()


@dataclass(frozen=True)
class Cut:
    """One interval (rates per second over fio's own run time)."""

    index: int              #: 1-based interval number
    replaces: bool          #: True: merges a short tail into interval ``index``, replacing its row
    wall_s: float           #: wall-clock seconds between the reports
    fio_s: float            #: fio's run time in the interval
    ios: int
    io_bytes: int
    iops: float
    bw_bytes: float
    lat_mean_us: float      #: mean response time (fio's total latency) of the interval's I/Os, us
    written_total: int      #: bytes written since the stream started


@dataclass(frozen=True)
class _Mark:
    runtime_ms: float
    ios: float
    io_bytes: float
    lat_sum: float
    lat_n: float
    at: float


class IntervalCutter:
    """Feed it every report of one ``--status-interval`` stream, in order.

    ``start`` is when the stream started (``time.monotonic()`` seconds,
    the clock ``feed``'s ``at`` must use too); by default, now.
    ``block_size``: the job's one block size (0: several, or unknown), by
    which its completed bytes count its completed I/Os exactly.
    """

    def __init__(self, job_name: str, interval_s: float, start: Optional[float] = None,
                 block_size: int = 0) -> None:
        if interval_s <= 0:
            raise ValueError("the interval must be positive")
        self.job_name = job_name
        self.block_size = int(block_size)
        self.interval_s = float(interval_s)
        # Only the last two cuts matter (a merge goes back one): the memory
        # stays the same however long the stream.
        self._last = _Mark(0.0, 0.0, 0.0, 0.0, 0.0, time.monotonic() if start is None else float(start))
        self._before: Optional[_Mark] = None  # the cut before _last (None at the start)
        self.count = 0  #: intervals cut so far

    def _totals(self, report: dict) -> Optional[dict]:
        jobs = [j for j in report.get("jobs", ()) if isinstance(j, dict) and j.get("jobname") == self.job_name]
        if not jobs:
            return None
        for j in jobs:
            err = int(j.get("error", 0) or 0)
            if err:
                raise FioError(f"fio reported I/O error {err} ({os.strerror(err)}) in {self.job_name}")
        parts = [cumulative_write(j, self.block_size) for j in jobs]
        if len(parts) == 1:
            return parts[0]
        # The same job reported once per clone (no group_reporting): sum them.
        return dict(runtime_ms=max(p["runtime_ms"] for p in parts),
                    ios=sum(p["ios"] for p in parts), io_bytes=sum(p["io_bytes"] for p in parts),
                    lat_sum=sum(p["lat_sum"] for p in parts), lat_n=sum(p["lat_n"] for p in parts))

    def feed(self, report: dict, at: float) -> Optional[Cut]:
        """The interval ``report`` ends, or None (not this job's, nothing new).

        Raises FioError when fio reports an error in the job.
        """
        totals = self._totals(report)
        if totals is None:
            return None
        mark = _Mark(totals["runtime_ms"], totals["ios"], totals["io_bytes"], totals["lat_sum"], totals["lat_n"], at)
        last = self._last
        if mark.runtime_ms <= last.runtime_ms:
            return None  # no new run time: nothing to measure
        before = self._before
        replaces = before is not None and mark.runtime_ms - last.runtime_ms < self.interval_s * 500.0
        if replaces and before is not None:
            base = before
        else:
            base = last
            self._before = last
            self.count += 1
        d_ms = mark.runtime_ms - base.runtime_ms
        d_ios = mark.ios - base.ios
        d_bytes = mark.io_bytes - base.io_bytes
        d_n = mark.lat_n - base.lat_n  # the response times sampled: one per completion
        lat_mean = max(0.0, (mark.lat_sum - base.lat_sum) / d_n) if d_n > 0 else 0.0
        self._last = mark
        return Cut(
            index=self.count, replaces=replaces, wall_s=mark.at - base.at, fio_s=d_ms / 1000.0,
            ios=int(d_ios), io_bytes=int(d_bytes), iops=d_ios * 1000.0 / d_ms,
            bw_bytes=d_bytes * 1000.0 / d_ms,
            lat_mean_us=lat_mean,
            written_total=int(mark.io_bytes),
        )
