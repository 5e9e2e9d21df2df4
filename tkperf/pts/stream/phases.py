"""The loop shape of the consistency test and of the recovery tests built on
it (XSR, CBW): continuous fio jobs, one per phase, cut into intervals as
they run, with fio's maximum-latency log beside them.

Each phase is one fio job run as one ``--status-interval`` stream through
the back end (:meth:`tkperf.fio.backend.FioBackend.stream`), cut into
intervals by :class:`tkperf.fio.intervals.IntervalCutter` and appended to
the ``intervals`` series as they come, so an interrupted run keeps every
completed interval.  The ``rnd4k`` workload is one phase; ``jedec`` is its
preconditioning, then the write and 40/60 phases, one fio process each,
started one right after the other (the gap is fio's start, well under a
second; nothing idles on purpose).

Both directions count: an interval's I/Os, bytes, IOPS and mean response
time are of reads and writes together (the 40/60 phases), its reads are
kept apart in ``read_ios``.  The per-interval *maximum* response time
comes from fio's own latency log (``write_lat_log`` with ``log_avg_msec`` a
tenth of the interval and ``log_max_value=1``; fio 3.33 logs one value kind
per log), written
into a temporary directory next to the result file, read when the phase's
fio ends (:mod:`tkperf.pts.stream.latlog`) and kept as the
``lat_max`` series, row for row with ``intervals``.  The mean stays the
stream's: one job can write only one latency log, and the stream's mean is
exact over every I/O of the interval.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Optional, Sequence, Tuple

import numpy as np

from tkperf.durations import duration, micro_unit
from tkperf.fio.intervals import Cut, IntervalCutter, report_time
from tkperf.fio.jobs import FioJob
from tkperf.fio.logs import log_directory
from tkperf.fio.output import cumulative_write
from tkperf.kit.progress import progress_of
from tkperf.kit.shapes import FIO_GAP_S, Estimate, Shape
from tkperf.model.results import TestRun
from tkperf.model.series import Series
from tkperf.pts.stream import latlog

if TYPE_CHECKING:  # pragma: no cover
    from tkperf.kit.context import PlanLike, RunContext

progress = logging.getLogger("tkperf.progress")

SERIES = "intervals"
COLUMNS: Tuple[str, ...] = ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us", "read_ios", "phase")
MAX_SERIES = "lat_max"
MAX_COLUMNS: Tuple[str, ...] = ("read_lat_max_us", "write_lat_max_us")
#: Seconds between fdatasyncs of the appended rows.
SYNC_S = 60.0
#: Where the dry run says the latency logs go.
LOG_PLACEHOLDER = "TMPDIR"


@dataclass(frozen=True)
class Phase:
    """One continuous job: ``kind`` is ``stimulus`` (rnd4k), ``precondition``,
    ``write`` or ``mixed`` (jedec)."""

    job: FioJob
    label: str
    kind: str


def log_msec(interval_s: int) -> int:
    """fio's log window: a tenth of the interval (:data:`latlog.DIVISIONS`)."""
    return int(interval_s) * 1000 // latlog.DIVISIONS


def with_log(job: FioJob, prefix: str, interval_s: int) -> FioJob:
    """``job`` writing fio's maximum response time per log window to ``prefix``."""
    return replace(job, extra=job.extra + (("write_lat_log", prefix), ("log_avg_msec", str(log_msec(interval_s))),
                                           ("log_max_value", "1")))


def both_directions(report: dict, job_name: str, block_size: int = 0) -> Tuple[dict, float]:
    """A ``--status-interval`` report in which the job's ``write`` side holds
    reads and writes together (what the interval cutter measures), and the
    job's cumulative read count.  Each side is read by fio's own parser
    (:func:`tkperf.fio.output.cumulative_write`), so every fio quirk is
    handled once."""
    jobs = []
    reads = 0.0
    for job in report.get("jobs", ()):
        if not isinstance(job, dict) or job.get("jobname") != job_name:
            jobs.append(job)
            continue
        rd, wr = job.get("read", {}) or {}, job.get("write", {}) or {}
        w = cumulative_write(job, block_size)
        r = cumulative_write({**job, "write": rd}, block_size)
        ios = w["ios"] + r["ios"]  # completed, each side (cumulative_write)
        reads += r["ios"]
        n = w["lat_n"] + r["lat_n"]
        side = {"total_ios": ios, "io_bytes": w["io_bytes"] + r["io_bytes"],
                "lat_ns": {"mean": (w["lat_sum"] + r["lat_sum"]) * 1000.0 / n if n else 0.0, "N": n},
                "runtime": max(int(rd.get("runtime", 0) or 0), int(wr.get("runtime", 0) or 0))}
        jobs.append({**job, "write": side})
    return {**report, "jobs": jobs}, reads


class PhaseCutter:
    """The interval cutter of one phase over both directions, with each
    interval's read count."""

    def __init__(self, job_name: str, interval_s: float, start: Optional[float] = None,
                 block_size: int = 0) -> None:
        self.cutter = IntervalCutter(job_name, interval_s, start, block_size)
        self._reads = (0.0, 0.0)  # cumulative reads at the cut before the last, and at the last

    def feed(self, report: dict, at: float) -> Optional[Tuple[Cut, float]]:
        """(the interval ``report`` ends, its reads), or None."""
        view, reads = both_directions(report, self.cutter.job_name, self.cutter.block_size)
        cut = self.cutter.feed(view, at)
        if cut is None:
            return None
        before, last = self._reads
        self._reads = (before, reads) if cut.replaces else (last, reads)
        return cut, self._reads[1] - self._reads[0]




@dataclass(frozen=True)
class ConsistencyStream(Shape):
    """Phases of one continuous job each, cut into ``interval_s`` intervals;
    with ``latency_log`` each job also writes fio's maximum-latency log."""

    unit: ClassVar[str] = "interval"
    keeps_steady_on_resume: ClassVar[bool] = False

    phases: Tuple[Phase, ...]
    interval_s: int
    latency_log: bool = True

    @property
    def seconds(self) -> float:
        return float(sum(p.job.runtime for p in self.phases))

    def jobs(self, logdir: str = "") -> Tuple[FioJob, ...]:
        if not self.latency_log:
            return tuple(p.job for p in self.phases)
        return tuple(with_log(p.job, os.path.join(logdir, p.job.name), self.interval_s) for p in self.phases)

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        series = Series(SERIES, COLUMNS)
        test.series = {SERIES: series}  # a stream starts afresh, never half-way
        for key in [k for k in test.data if k.startswith("phase.")]:
            del test.data[key]
        for index, phase in enumerate(self.phases, 1):
            test.data[f"phase.{index}"] = phase.label
            test.data[f"phase.{index}.kind"] = phase.kind
        ctx.save()
        maxima: Optional[Series] = Series(MAX_SERIES, MAX_COLUMNS) if self.latency_log else None
        logdir = log_directory(ctx.xml_path, ".tkperf-latlog-", "latency logs") if self.latency_log else ""
        try:
            progress_of(ctx).stream_started(self.seconds)
            for index, (phase, job) in enumerate(zip(self.phases, self.jobs(logdir)), 1):
                self.run_phase(ctx, plan, index, phase, job, series)
                if maxima is not None:
                    # None once a phase's log is missing: the rows after it would not line up.
                    maxima = self._add_maxima(ctx, plan, phase, job, series, maxima, logdir)
                    if maxima is not None and len(maxima):
                        test.series[MAX_SERIES] = maxima
                ctx.save()
        finally:
            if logdir:
                shutil.rmtree(logdir, ignore_errors=True)
        test.stop_reason = "time limit" if len(self.phases) == 1 else "all phases run"

    def run_phase(self, ctx: RunContext, plan: PlanLike, index: int, phase: Phase, job: FioJob,
                   series: Series) -> None:
        series_id = f"{plan.key}.{SERIES}"
        offset = len(series)
        cutter = PhaseCutter(job.name, self.interval_s, block_size=job.one_block_size())
        prog = progress_of(ctx)
        state = {"synced": time.monotonic()}
        pending: list = [None]  # the latest interval, printed once the next report shows it final

        def say(n: int, cut) -> None:
            progress.info("[%s] %s, interval %d: %.0f IOPS, mean response time %.1f %s", plan.key,
                          phase.label, n, cut.iops, cut.lat_mean_us, micro_unit())

        def on_report(report: dict) -> bool:
            got = cutter.feed(report, report_time(report))
            if got is None:
                return False
            cut, reads = got
            n = offset + cut.index
            series.set_row(n, (cut.wall_s, cut.fio_s, cut.ios, cut.io_bytes, cut.iops, cut.lat_mean_us,
                               reads, index))
            ctx.writer.append(series_id, n, series.row(n - 1))
            ctx.health_check()  # temperature, at most once a minute
            now = time.monotonic()
            if now - state["synced"] >= SYNC_S:
                ctx.writer.sync()
                state["synced"] = now
            ctx.phase = f"{phase.label}, interval {n + 1}"
            prog.interval(n, cut.iops, cut.written_total)
            if pending[0] is not None and pending[0][0] != n:  # only the latest interval can still change
                say(*pending[0])
            pending[0] = (n, cut)
            return False

        ctx.phase = f"{phase.label}, interval {offset + 1}"
        progress.info("[%s] %s: %s for %s", plan.key, phase.label, job.name, duration(float(job.runtime)))
        try:
            ctx.fio.stream(job, self.interval_s, what=f"{plan.key} {phase.label}", on_report=on_report,
                           timeout=job.runtime * 2.0 + 300.0)
        finally:
            if pending[0] is not None:
                say(*pending[0])
        ctx.writer.sync()

    def _add_maxima(self, ctx: RunContext, plan: PlanLike, phase: Phase, job: FioJob, series: Series,
                    maxima: Series, logdir: str) -> Optional[Series]:
        """``maxima`` with this phase's rows from fio's log, or None (with a
        warning) when it cannot be read: the intervals from this phase on
        have no maximum."""
        count = len(series) - len(maxima)
        prefix = os.path.join(logdir, job.name)
        try:
            read, write, files = latlog.read_maxima(prefix, self.interval_s * 1000.0, count)
        except (OSError, ValueError) as exc:
            files, why = 0, str(exc)
        else:
            why = "no log file"
        if not files:
            ctx.event("warning", f"{phase.label}: fio's latency log could not be read ({why}); "
                                 "no maximum response times from this phase on", plan.key)
            return None
        maxima.extend_exact(np.round(np.column_stack([read, write]), 3))
        return maxima

    def estimate(self, opts: object, capacity: int) -> Estimate:
        jobs = self.jobs(LOG_PLACEHOLDER)
        total = self.seconds + FIO_GAP_S * len(self.phases)
        many = f"{len(self.phases)} continuous jobs, one right after the other"
        lines = [f"# {many if len(self.phases) > 1 else 'one continuous job'}, reported every {self.interval_s} s: "
                 + ", ".join(f"{p.label} {duration(float(p.job.runtime), rough=True)}" for p in self.phases),
                 f"# {LOG_PLACEHOLDER}: a temporary directory beside the result file for fio's "
                 "per-interval maximum response times, removed once read"]
        return Estimate(tuple(lines), jobs, total, total)


def phase_rows(test: TestRun) -> Sequence[Tuple[int, str, str]]:
    """(number, label, kind) of every phase the test planned, from its data."""
    out = []
    index = 1
    while f"phase.{index}" in test.data:
        out.append((index, test.data[f"phase.{index}"], test.data.get(f"phase.{index}.kind", "")))
        index += 1
    return out
