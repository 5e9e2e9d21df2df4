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

With ``response_times`` (fio run with ``--output-format=json+``, whose
status reports carry the cumulative latency histogram, ``lat_ns.bins``),
an interval also gets its 99.999% and maximum response time.  The
difference of two cumulative histograms is the exact histogram of the
interval's I/Os (the counts subtract, :mod:`tkperf.model.histogram`), so
its 99.999% is read from it as every tkperf percentile is, and given only
where the interval's I/O count supports it (:func:`~tkperf.model.histogram.supported`:
100,000 I/Os), else 0.  fio reports no per-interval maximum, only the
running one: where that rose in the interval, the new maximum is the
interval's, exactly; otherwise the interval's slowest I/O lies in its
highest bin, and the top of that bin's range is given
(:func:`~tkperf.model.histogram.bin_top_ns`: at most 1/64 of a power of
two above the slowest I/O, never below it, so never below the interval's
mean either, and never above the running maximum).  fio's own label of a
bin is the middle of its range, which can lie below the slowest I/O it
holds: an interval of a few similar I/Os would show a maximum below its
mean.  A per-I/O latency log
would give every maximum exactly, at one line per I/O (hours of WSAT at
tens of thousands of IOPS); the histograms cost a few hundred numbers per
report.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Optional, Tuple

from tkperf.errors import FioError
from tkperf.fio.output import cumulative_write, cumulative_write_bins
from tkperf.model import histogram

#: The percentile an interval's response times are read at (the PTS 2.0
#: optional WSAT plots' "5 9s").
FIVE_NINES = "99.999"

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
    #: 99.999% response time of the interval's I/Os, us; 0 where not kept or
    #: not supported by the interval's I/O count
    lat_p99_999_us: float = 0.0
    #: the slowest I/O of the interval, us (see the module doc); 0 where not kept
    lat_max_us: float = 0.0


@dataclass(frozen=True)
class _Mark:
    runtime_ms: float
    ios: float
    io_bytes: float
    lat_sum: float
    lat_n: float
    at: float
    bins: histogram.Bins = ()
    max_us: float = 0.0


class IntervalCutter:
    """Feed it every report of one ``--status-interval`` stream, in order.

    ``start`` is when the stream started (``time.monotonic()`` seconds,
    the clock ``feed``'s ``at`` must use too); by default, now.
    ``block_size``: the job's one block size (0: several, or unknown), by
    which its completed bytes count its completed I/Os exactly.
    """

    def __init__(self, job_name: str, interval_s: float, start: Optional[float] = None,
                 block_size: int = 0, response_times: bool = False) -> None:
        if interval_s <= 0:
            raise ValueError("the interval must be positive")
        self.job_name = job_name
        self.block_size = int(block_size)
        self.interval_s = float(interval_s)
        self.response_times = bool(response_times)
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
        if self.response_times:
            hists = [cumulative_write_bins(j) for j in jobs]
            bins, max_us = histogram.merge(*(h[0] for h in hists)), max(h[1] for h in hists)
        else:
            bins, max_us = (), 0.0
        if len(parts) == 1:
            return dict(parts[0], bins=bins, max_us=max_us)
        # The same job reported once per clone (no group_reporting): sum them.
        return dict(runtime_ms=max(p["runtime_ms"] for p in parts),
                    ios=sum(p["ios"] for p in parts), io_bytes=sum(p["io_bytes"] for p in parts),
                    lat_sum=sum(p["lat_sum"] for p in parts), lat_n=sum(p["lat_n"] for p in parts),
                    bins=bins, max_us=max_us)

    def feed(self, report: dict, at: float) -> Optional[Cut]:
        """The interval ``report`` ends, or None (not this job's, nothing new).

        Raises FioError when fio reports an error in the job.
        """
        totals = self._totals(report)
        if totals is None:
            return None
        mark = _Mark(totals["runtime_ms"], totals["ios"], totals["io_bytes"], totals["lat_sum"], totals["lat_n"], at,
                     totals["bins"], totals["max_us"])
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
        p5, worst = self._response_times(base, mark, int(d_ios)) if self.response_times else (0.0, 0.0)
        return Cut(
            index=self.count, replaces=replaces, wall_s=mark.at - base.at, fio_s=d_ms / 1000.0,
            ios=int(d_ios), io_bytes=int(d_bytes), iops=d_ios * 1000.0 / d_ms,
            bw_bytes=d_bytes * 1000.0 / d_ms,
            lat_mean_us=lat_mean,
            written_total=int(mark.io_bytes),
            lat_p99_999_us=p5, lat_max_us=worst,
        )

    @staticmethod
    def _response_times(base: _Mark, mark: _Mark, ios: int) -> Tuple[float, float]:
        """(99.999%, maximum) of the I/Os between two reports, us (module doc)."""
        bins = subtract(mark.bins, base.bins)
        if not bins:
            return 0.0, 0.0
        worst = mark.max_us if mark.max_us > base.max_us else min(
            histogram.bin_top_ns(bins[-1][0]) / 1000.0, mark.max_us or math.inf)
        bins = histogram.clamp(bins, worst)
        counted = min(ios, histogram.total(bins)) if ios > 0 else histogram.total(bins)
        p5 = histogram.percentile_us(bins, float(FIVE_NINES)) if histogram.supported(counted, FIVE_NINES) else None
        return (p5 or 0.0), worst


def subtract(later: histogram.Bins, earlier: histogram.Bins) -> histogram.Bins:
    """The histogram of the I/Os counted in ``later`` but not ``earlier``
    (two cumulative histograms of one job); a bin whose count did not grow is
    left out (fio updates its counts as I/Os complete, so none shrinks)."""
    before = dict(earlier)
    return tuple((ns, c - before.get(ns, 0)) for ns, c in later if c > before.get(ns, 0))
