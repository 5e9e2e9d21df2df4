"""Loop shapes: how a test drives fio, each written once for any test type.

* :class:`Rounds`: the PTS round loop.  Every round is one fio process whose
  workloads run back to back (``stonewall``); after each round the 20/10
  steady-state check of the tracking figure decides whether to go on.
* :class:`Stream`: one continuous fio job reported every interval
  (``--status-interval``) and cut into intervals, appended to a series as
  they come; stops at its time limit, a bytes-written limit or, optionally,
  steady state (WSAT).
* :class:`Sweep`: one pass over settings (OIO, block size ...), every point
  a workload of one fio process, back to back with no idle gap.
* :class:`Phases`: fio runs separated by idle time (host idle recovery and
  the like); every phase is recorded as a round.

A shape reads the run through a :class:`Context` (the runner): the fio back
end, the options, the target, and saving/appending.  The dry run asks each
shape for its job files and duration (:meth:`Shape.describe`).
"""
from __future__ import annotations

import abc
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, Tuple

from tkperf.fio.jobs import FioJob
from tkperf.fio.intervals import IntervalCutter
from tkperf.model.results import Round, TestRun, now_iso
from tkperf.model.series import Series

if TYPE_CHECKING:  # pragma: no cover
    from tkperf.engine.runner import Runner
    from tkperf.testtypes.base import Plan

progress = logging.getLogger("tkperf.progress")

# fio leaves about this much between stonewalled workloads (its scheduler
# polls every 100 ms), measured with fio 3.33; used only for estimates.
FIO_GAP_S = 0.3


@dataclass(frozen=True)
class Estimate:
    """What the dry run says of a shape: its fio jobs and how long it may take."""

    lines: Tuple[str, ...]
    jobs: Tuple[FioJob, ...]
    low_s: float
    high_s: float


class Shape(abc.ABC):
    """A way of running fio for one test instance."""

    @abc.abstractmethod
    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        """Measure into ``test``, saving as it goes; sets ``test.stop_reason``."""

    @abc.abstractmethod
    def estimate(self, ctx_opts: object, capacity: int) -> Estimate:
        """Job files and duration for ``--dry-run``; touches nothing."""


def _per_round(jobs: Sequence[FioJob]) -> float:
    return sum(j.planned_seconds + FIO_GAP_S for j in jobs)


def _scaled(value: float, metric: str) -> float:
    return value / 1e6 if metric.endswith("bw_bytes") else value  # labels say MB/s


def record_round(ctx: "Runner", test: TestRun, jobs: Sequence[FioJob], index: int, what: str) -> Round:
    """Run ``jobs`` as one fio process and append the result as round ``index``."""
    started = now_iso()
    workloads, wall = ctx.fio.run(jobs, what=what)
    fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
    rnd = Round(index=index, started=started, wall_s=wall, fio_s=fio_s, workloads=tuple(workloads))
    test.rounds.append(rnd)
    return rnd


@dataclass(frozen=True)
class Rounds(Shape):
    """Rounds of the same workloads until the tracking figure is steady (20/10)."""

    jobs: Tuple[FioJob, ...]

    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        opts = ctx.opts
        if plan.tracking is None:
            raise ValueError(f"{plan.key}: the round loop needs a tracking figure")
        for index in range(len(test.rounds) + 1, opts.max_rounds + 1):
            ctx.phase = f"round {index}"
            record_round(ctx, test, self.jobs, index, f"{plan.key} round {index}")
            test.steady = plan.steady_state(test, opts.window)
            value = _scaled(test.tracking_values()[-1][1], plan.tracking.metric)
            progress.info("[%s] round %d: %s = %.6g (%s)", plan.key, index, plan.tracking.label,
                          value, "steady" if test.steady.steady else "not steady yet")
            ctx.save()
            if test.steady.steady:
                test.stop_reason = "steady state"
                return
        test.stop_reason = "max rounds"
        ctx.event("warning", f"no steady state within {opts.max_rounds} rounds; "
                             f"the report uses the last {opts.window} rounds", plan.key)

    def estimate(self, opts, capacity: int) -> Estimate:
        per_round = _per_round(self.jobs)
        first = min(opts.window, opts.max_rounds)
        return Estimate((f"# each round: {len(self.jobs)} workloads, about {hours(per_round)}; "
                         f"{first} to {opts.max_rounds} rounds",), self.jobs,
                        first * per_round, opts.max_rounds * per_round)


STREAM_COLUMNS: Tuple[str, ...] = ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us")


@dataclass(frozen=True)
class Stream(Shape):
    """One continuous job, cut into intervals that are appended as they come.

    Stops at ``job.runtime`` (fio's own time limit), when ``stop_bytes``
    have been written (0: no such limit), or, with ``steady_stop``, when the
    last ``window`` intervals' IOPS are steady and at least
    ``steady_after_bytes`` were written (fresh drives look steady before
    their write cliff).
    """

    job: FioJob
    interval_s: int
    stop_bytes: int = 0
    steady_stop: bool = False
    steady_after_bytes: int = 0
    series: str = "intervals"

    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        series = Series(self.series, STREAM_COLUMNS)
        test.series = {self.series: series}  # a stream starts afresh, never half-way
        series_id = f"{plan.key}.{self.series}"
        ctx.save()
        cutter = IntervalCutter(self.job.name, self.interval_s)
        state = {"reason": "time limit", "synced": time.monotonic()}

        def on_report(report: dict) -> bool:
            cut = cutter.feed(report, time.monotonic())
            if cut is None:
                return False
            row = (cut.wall_s, cut.fio_s, cut.ios, cut.io_bytes, cut.iops, cut.lat_mean_us)
            series.set_row(cut.index, row)
            ctx.writer.append(series_id, cut.index, series.row(cut.index - 1))
            now = time.monotonic()
            if now - state["synced"] >= 60.0:
                ctx.writer.sync()
                state["synced"] = now
            ctx.phase = f"interval {cut.index + 1}"
            test.steady = test.evaluate(ctx.opts.window)
            progress.info("[%s] interval %d: %.0f IOPS, %.2f GB written", plan.key, cut.index,
                          cut.iops, cut.written_total / 1e9)
            if self.stop_bytes and cut.written_total >= self.stop_bytes:
                state["reason"] = f"TGBW reached ({cut.written_total / 1e9:.2f} GB)"
                return True
            if self.steady_stop and cut.written_total >= self.steady_after_bytes and test.steady.steady:
                state["reason"] = "steady state"
                return True
            return False

        ctx.phase = "interval 1"
        ctx.fio.stream(self.job, self.interval_s, what=plan.key, on_report=on_report,
                       timeout=self.job.runtime * 2.0 + 300.0)
        ctx.writer.sync()
        test.stop_reason = state["reason"]

    def estimate(self, opts, capacity: int) -> Estimate:
        stops = [hours(self.job.runtime)]
        if self.stop_bytes:
            stops.append(f"{self.stop_bytes / 1e9:.1f} GB written")
        if self.steady_stop:
            stops.append("steady state")
        low = min(float(self.job.runtime), opts.window * self.interval_s)
        return Estimate((f"# one continuous job, reported every {self.interval_s} s, stopping at "
                         + " or ".join(stops),), (self.job,), low, float(self.job.runtime))


@dataclass(frozen=True)
class Sweep(Shape):
    """One pass over settings: every point one workload, all in one fio
    process, back to back; recorded as round 1 with a workload per point."""

    points: Tuple[FioJob, ...]

    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        test.rounds.clear()  # a sweep is one unbroken pass
        ctx.phase = "sweep"
        progress.info("[%s] sweep over %d points", plan.key, len(self.points))
        record_round(ctx, test, self.points, 1, f"{plan.key} sweep")
        if plan.tracking is not None:
            test.steady = plan.steady_state(test, ctx.opts.window)
        ctx.save()
        test.stop_reason = "sweep complete"

    def estimate(self, opts, capacity: int) -> Estimate:
        t = _per_round(self.points)
        return Estimate((f"# one sweep over {len(self.points)} points, about {hours(t)}",),
                        self.points, t, t)


@dataclass(frozen=True)
class Phase:
    """Workloads run as one fio process, then ``idle_s`` seconds without I/O."""

    jobs: Tuple[FioJob, ...]
    idle_s: float = 0.0
    label: str = ""


@dataclass(frozen=True)
class Phases(Shape):
    """Fio runs separated by idle gaps; every phase is one recorded round and
    its label is kept in the test's data as ``phase.N``."""

    phases: Tuple[Phase, ...]

    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        test.rounds.clear()  # idle time is part of the stimulus: never resumed half-way
        for index, phase in enumerate(self.phases, 1):
            ctx.phase = f"phase {index}"
            record_round(ctx, test, phase.jobs, index, f"{plan.key} phase {index}")
            test.data[f"phase.{index}"] = phase.label or f"phase {index}"
            test.data[f"idle.{index}"] = repr(float(phase.idle_s))
            progress.info("[%s] phase %d of %d%s", plan.key, index, len(self.phases),
                          f" ({phase.label})" if phase.label else "")
            ctx.save()
            if phase.idle_s > 0 and index < len(self.phases):
                ctx.phase = f"idle after phase {index}"
                time.sleep(phase.idle_s)
        test.stop_reason = "all phases run"

    def estimate(self, opts, capacity: int) -> Estimate:
        jobs = tuple(j for p in self.phases for j in p.jobs)
        busy = sum(_per_round(p.jobs) for p in self.phases)
        idle = sum(p.idle_s for p in self.phases[:-1])
        return Estimate((f"# {len(self.phases)} phases, {hours(busy)} of I/O and {hours(idle)} idle",),
                        jobs, busy + idle, busy + idle)


def hours(seconds: float) -> str:
    """A duration for the dry run: '45 s', '12 min', '3.5 h'."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

