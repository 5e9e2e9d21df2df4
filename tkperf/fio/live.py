"""What fio is doing right now: the running workload's current IOPS, MB/s
and mean response time, from fio's ``--status-interval`` reports.

A report holds every job's running totals; the difference of two reports
is the last interval.  The job whose I/Os grew the most in it is the
one running (a round's workloads run one after another, ``stonewall``);
jobs that run beside it (``stonewall=0``: a replay step's streams, fio's
``groups`` of the meter) are its workload too, summed, so the figures are
the step's, as fio's own numbers of the interval add up.
Every figure is held to fio's own numbers of the same interval by a test
per back-end path (tests/e2e/test_live_families.py: rounds and sweep
points, a replay step's concurrent jobs, HIR's idle settings, streams).
The back end (:mod:`tkperf.fio.backend`) feeds a :class:`LiveMeter` with
each report of a fio invocation and hands what it measures to the one
sink :func:`set_sink` named (the run's progress); without a sink it asks
fio for no status reports at all.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf.durations import latency

#: Seconds between fio's status reports while a round runs (the least).
INTERVAL_S = 1
#: A status report lists every job of the round; reading one costs about
#: 0.03 ms of CPU per job, seven times that with json+ bins
#: (benchmarks/live.py).  The interval grows with the round so that this
#: stays well under 1% of one core: the 56 IOPS workloads report every
#: second, every 2 s with --latency-histograms.
JOBS_PER_SECOND = 300
JSONPLUS_WEIGHT = 7


def interval_for(jobs: int, histograms: bool) -> int:
    """Seconds between status reports of a round of ``jobs`` workloads."""
    weight = jobs * (JSONPLUS_WEIGHT if histograms else 1)
    return max(INTERVAL_S, -(-weight // JOBS_PER_SECOND))


@dataclass(frozen=True)
class LiveFigures:
    """The running workload over fio's last status interval."""

    what: str               #: the fio invocation (``iops round 3``)
    workload: str           #: the running job's name (``rnd-4k-65-35``)
    iops: float
    bw_bytes: float         #: bytes per second, reads and writes
    lat_mean_us: float      #: mean response time (fio's total latency) of the interval's I/Os
    at: float               #: when, on ``time.monotonic``'s clock

    def text(self) -> str:
        """'rnd-4k-65-35: 45,210 IOPS, 185.2 MB/s, mean latency 702.4 µs' ('us'
        where stderr cannot show 'µ'; '14.0 ms' from 1 ms on)."""
        return (f"{self.workload}: {self.iops:,.0f} IOPS, {self.bw_bytes / 1e6:,.1f} MB/s, "
                f"mean latency {latency(self.lat_mean_us)}")

    def as_dict(self) -> dict:
        return {"what": self.what, "workload": self.workload, "iops": self.iops,
                "bw_bytes": self.bw_bytes, "lat_mean_us": self.lat_mean_us}


Sink = Callable[[LiveFigures], None]
_sink: Optional[Sink] = None


def set_sink(sink: Optional[Sink]) -> None:
    """Where live figures go (None: nowhere, and fio prints no status reports)."""
    global _sink
    _sink = sink


def wanted() -> bool:
    return _sink is not None


def publish(figures: Optional[LiveFigures]) -> None:
    sink = _sink
    if figures is not None and sink is not None:
        try:
            sink(figures)
        except Exception:  # noqa: BLE001 - showing must never stop a measurement
            pass


_Totals = Tuple[float, float, float, float]  # run time ms, I/Os, bytes, sum of latencies us


def _direction(side: object) -> Tuple[float, float, float]:
    """(I/Os completed, bytes, sum of response times in us) of one direction.

    fio's ``total_ios`` counts I/Os as issued; the completions are the
    response times it sampled (``lat_ns``'s ``N``), and the mean is weighted
    by them (:func:`tkperf.fio.output.cumulative_write`, which the stored
    intervals use, says the same)."""
    if not isinstance(side, dict):
        return 0.0, 0.0, 0.0
    nbytes = float(side["io_bytes"]) if "io_bytes" in side else float(side.get("io_kbytes", 0) or 0) * 1024
    lat = side.get("lat_ns")
    if isinstance(lat, dict):
        done = float(lat.get("N", side.get("total_ios", 0)) or 0)
        mean_us = float(lat.get("mean", 0.0) or 0.0) / 1000.0
    else:
        done = float(side.get("total_ios", 0) or 0)
        mean_us = float((side.get("lat") or {}).get("mean", 0.0) or 0.0)
    return done, nbytes, mean_us * done


def _totals(job: dict) -> _Totals:
    """A job's running totals: the time it has run I/O (its directions' run
    times; ``job_runtime`` only where a report has none of them), its I/Os,
    bytes and latency sum.  Not ``job_runtime`` beside them: a job of a
    round that has not started yet (it waits at its ``stonewall``) counts
    ``job_runtime`` up all the same, and its run time would then go
    backwards as it starts, hiding its first interval."""
    sides = [job.get(d) for d in ("read", "write", "trim")]
    timed = [float(side.get("runtime", 0) or 0) for side in sides if isinstance(side, dict) and "runtime" in side]
    runtime = max(timed) if timed else float(job.get("job_runtime", 0) or 0)
    parts = [_direction(side) for side in sides]
    return (runtime, sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def groups(jobs: Sequence[Tuple[str, Sequence[Tuple[str, str]]]]) -> Dict[str, int]:
    """Which jobs run at once: (name, extra fio lines) in the job file's
    order -> each name's group; a job with ``stonewall=0`` runs beside the
    one before it, any other starts a group of its own."""
    out: Dict[str, int] = {}
    group = -1
    for name, extra in jobs:
        if not any(k == "stonewall" and v == "0" for k, v in extra) or group < 0:
            group += 1
        out[name] = group
    return out


def _together(names: List[str]) -> str:
    """The name of jobs running at once: the first, and how many beside it."""
    if len(names) == 1:
        return names[0]
    others = len(names) - 1
    return f"{names[0]} and {others} other job{'s' if others > 1 else ''} at once"


class LiveMeter:
    """Feed it the status reports of one fio invocation, in order;
    ``groups``: the jobs that run at once (:func:`groups`; none given: each
    job on its own)."""

    def __init__(self, what: str, clock: Callable[[], float] = time.monotonic,
                 groups: Optional[Mapping[str, int]] = None) -> None:
        self.what = what
        self.clock = clock
        self.groups: Mapping[str, int] = dict(groups or {})
        self._last: Dict[str, _Totals] = {}

    def feed(self, report: object) -> Optional[LiveFigures]:
        """The running workload's figures over the interval ``report`` ends
        (None: nothing ran in it, or not a report)."""
        now = _report_totals(report)
        if now is None:
            return None
        before = self._last
        self._last = {**before, **now}
        best = _grown_most(now, before)
        if best is None:
            return None
        return self._figures(now, before, best)

    def _figures(self, now: Mapping[str, _Totals], before: Mapping[str, _Totals], best: str) -> LiveFigures:
        """The interval's figures of ``best`` (the job whose I/Os grew most)
        and of the jobs of its group that ran in it, summed."""
        group = self.groups.get(best)
        names = [n for n in now if n == best or (group is not None and self.groups.get(n) == group)]
        d_ms = d_ios = d_bytes = d_lat = 0.0
        running = []
        for name in names:
            t, b = now[name], before.get(name, _NONE)
            if t[0] <= b[0] and name != best:
                continue  # not running in this interval (ended before it, or not started)
            running.append(name)
            d_ms = max(d_ms, t[0] - b[0])  # they run at the same time: the interval is the longest's
            d_ios, d_bytes, d_lat = d_ios + t[1] - b[1], d_bytes + t[2] - b[2], d_lat + t[3] - b[3]
        return LiveFigures(what=self.what, workload=_together(running), iops=d_ios * 1000.0 / d_ms,
                           bw_bytes=d_bytes * 1000.0 / d_ms,
                           lat_mean_us=d_lat / d_ios if d_ios > 0 else 0.0, at=self.clock())


_NONE: _Totals = (0.0, 0.0, 0.0, 0.0)


def _report_totals(report: object) -> Optional[Dict[str, _Totals]]:
    """Every job's running totals in a status report, by name (clones of a
    job without group_reporting summed); None: not a report.  Untrusted:
    a job whose figures do not read as finite numbers is left out (the
    round's checks refuse it)."""
    if not isinstance(report, dict) or not isinstance(report.get("jobs"), list):
        return None
    now: Dict[str, _Totals] = {}
    for job in report["jobs"]:
        if not isinstance(job, dict) or not isinstance(job.get("jobname"), str):
            continue
        try:
            t = _totals(job)
        except (TypeError, ValueError, AttributeError):
            continue
        if not all(math.isfinite(x) for x in t):
            continue
        was = now.get(job["jobname"])
        now[job["jobname"]] = t if was is None else (max(was[0], t[0]), was[1] + t[1], was[2] + t[2], was[3] + t[3])
    return now


def _grown_most(now: Mapping[str, _Totals], before: Mapping[str, _Totals]) -> Optional[str]:
    """The job whose I/Os grew most since ``before`` (the one running; its
    run time grew too), None when none did."""
    best: Optional[Tuple[float, str]] = None
    for name, t in now.items():
        was = before.get(name, _NONE)
        d_ios = t[1] - was[1]
        if d_ios > 0 and t[0] > was[0] and (best is None or d_ios > best[0]):
            best = (d_ios, name)
    return None if best is None else best[1]
