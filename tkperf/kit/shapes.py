"""Loop shapes: how a test drives fio, each written once for any test type.

* :class:`Rounds`: the PTS round loop.  Every round is one fio process whose
  workloads run back to back (``stonewall``); after each round the 20/10
  steady-state check of the tracking figure decides whether to go on.  A
  round's workloads are the same every round, or computed from the rounds
  so far (TP's sequential workloads continue where the last ones stopped).
* :class:`Stream`: one continuous fio job reported every interval
  (``--status-interval``) and cut into intervals, appended to a series as
  they come; stops at its time limit, a bytes-written limit or, optionally,
  steady state judged on points spaced apart (WSAT).
* :class:`Sweep`: one pass over settings (OIO, block size ...), every point
  a workload of one fio process, back to back with no idle gap.
* :class:`Phases`: fio runs separated by idle time (host idle recovery and
  the like); every phase is recorded as a round.

A shape reads the run through a :class:`Context` (the runner): the fio back
end, the options, the target, and saving/appending.  The dry run asks each
shape for its job files and duration (:meth:`Shape.describe`).

What they share (the :class:`Shape` contract, :class:`Estimate`,
:func:`record_round`) is in :mod:`tkperf.kit.shapebase`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional, Sequence, Tuple

import numpy as np

from tkperf.durations import duration, unit_words
from tkperf.fio.intervals import IntervalCutter, report_time
from tkperf.fio.jobs import FioJob
from tkperf.kit import writerate
from tkperf.kit.context import PlanLike, RunContext
from tkperf.kit.progress import progress_of, tracking_text
from tkperf.kit.shapebase import (  # noqa: F401 - FIO_GAP_S ... blank_test: also importable from here
    ESTIMATE_WRITE_RATE,
    FIO_GAP_S,
    UNHELD,
    Estimate,
    JobsFor,
    Shape,
    blank_test,
    debug_steady,
    progress,
    record_round,
    round_seconds,
    scaled,
    wants_histograms,
)
from tkperf.model.results import Round, TestRun, format_gb
from tkperf.model.series import Series
from tkperf.model.steadystate import Steady, SteadyState, spaced_steady


@dataclass(frozen=True)
class Rounds(Shape):
    """Rounds of workloads until the tracking figure is steady (20/10).

    Every round runs ``jobs``; with ``jobs_for``, round N runs
    ``jobs_for(test, N)`` instead, computed from the rounds measured so far,
    and the start offset of each of its workloads is kept in the test's data
    as ``offset.N.NAME``.
    """

    first_round_is_fob: ClassVar[bool] = True

    jobs: Tuple[FioJob, ...] = ()
    jobs_for: Optional[JobsFor] = None

    def __post_init__(self) -> None:
        if not self.jobs and self.jobs_for is None:
            raise ValueError("a round loop needs jobs or jobs_for")

    def round_jobs(self, test: TestRun, index: int) -> Tuple[FioJob, ...]:
        """The workloads of round ``index`` of ``test``."""
        return self.jobs if self.jobs_for is None else tuple(self.jobs_for(test, index))

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        opts = ctx.opts
        if plan.policy is Steady.NONE or plan.tracking is None:
            raise ValueError(f"{plan.key}: the round loop needs a steady-state policy and a tracking figure")
        prog = progress_of(ctx)
        for index in range(len(test.rounds) + 1, opts.max_rounds + 1):
            ctx.phase = f"round {index}"
            jobs = self.round_jobs(test, index)
            prog.round_started(index, round_seconds(jobs), plan.tracking.label)
            rnd = record_round(ctx, test, jobs, index, f"{plan.key} round {index}",
                               wants_histograms(ctx, plan))
            if self.jobs_for is not None:
                test.data.update((f"offset.{index}.{j.name}", str(j.offset)) for j in jobs)
            test.steady = plan.steady_state(test, opts.window)
            value = scaled(test.tracking_values()[-1][1], plan.tracking.metric)
            prog.round_finished(index, value, test.steady, rnd.wall_s)
            debug_steady(plan.key, test.steady)
            progress.info("[%s] round %d: %s = %s (%s)", plan.key, index, unit_words(plan.tracking.label),
                          tracking_text(value), "steady" if test.steady.steady else "not steady yet")
            ctx.save()
            if test.steady.steady:
                test.stop_reason = "steady state"
                return
        test.stop_reason = "max rounds"
        ctx.event("warning", f"no steady state within {opts.max_rounds} rounds; "
                             f"the report uses the last {opts.window} rounds", plan.key)

    def estimate(self, opts, capacity: int) -> Estimate:
        jobs = self.round_jobs(blank_test(), 1)
        per_round = round_seconds(jobs)
        first = min(opts.window, opts.max_rounds)
        return Estimate((f"# each round: {len(jobs)} workloads, about {duration_rough(per_round)}; "
                         f"{first} to {opts.max_rounds} rounds",), jobs,
                        first * per_round, opts.max_rounds * per_round, (first, opts.max_rounds), per_round)


STREAM_COLUMNS: Tuple[str, ...] = ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us")
#: The columns a stream with ``response_times`` adds: each interval's 99.999%
#: (0 where its I/O count does not support it) and maximum response time, us
#: (:mod:`tkperf.fio.intervals`).
RESPONSE_TIME_COLUMNS: Tuple[str, ...] = ("lat_p99_999_us", "lat_max_us")


@dataclass(frozen=True)
class Stream(Shape):
    """One continuous job, cut into intervals that are appended as they come.

    Stops at ``job.runtime`` (fio's own time limit), when ``stop_bytes``
    have been written (0: no such limit), or, with ``steady_stop``, when the
    IOPS are steady (20/10) on the last ``window`` points
    ``steady_spacing_s`` apart (0: adjacent intervals; see
    :func:`spaced_steady`) and at least ``steady_after_bytes`` were written
    (fresh drives look steady before their write cliff).  Each point is the
    IOPS of the last ``point_s`` seconds of intervals before it (whole
    intervals, at least one, never more than the spacing: the last minute,
    :data:`tkperf.kit.longrounds.POINT_S`); ``point_s`` 0: the mean of all
    the intervals since the point before (the earlier definition).  The
    verdict on those points is kept as the test's steady state either way.
    """

    unit: ClassVar[str] = "interval"
    keeps_steady_on_resume: ClassVar[bool] = False

    job: FioJob
    interval_s: int
    stop_bytes: int = 0
    steady_stop: bool = False
    steady_after_bytes: int = 0
    series: str = "intervals"
    steady_spacing_s: int = 0
    point_s: int = 0
    #: fio reports json+ and every interval also keeps its 99.999% and
    #: maximum response time (:data:`RESPONSE_TIME_COLUMNS`).
    response_times: bool = False

    @property
    def point_intervals(self) -> int:
        """Intervals each point measures: the fewest whole intervals that hold
        ``point_s`` (a 60 s interval: one; 7 s: nine), at most a spacing's
        worth; 0 for a whole spacing (``point_s`` 0, the earlier definition)."""
        if self.point_s <= 0:
            return 0
        return min(self.steady_every, max(1, math.ceil(self.point_s / self.interval_s)))

    @property
    def steady_every(self) -> int:
        """Intervals per steady-state point: the spacing over the interval,
        rounded, at least 1."""
        if self.steady_spacing_s <= 0:
            return 1
        return max(1, round(self.steady_spacing_s / self.interval_s))

    def steady_rule(self, window: int) -> str:
        """The steady-state rule in words: '20/10 on 5 points 30 min apart'."""
        return f"20/10 on {window} points {duration_rough(self.steady_every * self.interval_s)} apart"

    def point_words(self) -> str:
        """', each the IOPS of its last 60 s (1 interval)': what a point is ('' for the earlier definition)."""
        take = self.point_intervals
        if not take:
            return ""
        return (f", each the IOPS of its last {take * self.interval_s} s ({take} interval"
                f"{'s' if take != 1 else ''})")

    def verdict(self, values: Sequence[float] | np.ndarray, window: int) -> SteadyState:
        """The steady-state verdict on the interval figures ``values`` so far."""
        return spaced_steady(values, self.steady_every, window, self.point_intervals)

    def stop_reason(self, steady: SteadyState, written: int, window: int) -> str:
        """Why the stream stops now ('' to go on), after ``written`` bytes."""
        if self.stop_bytes and written >= self.stop_bytes:
            return f"TGBW reached ({written / 1e9:.2f} GB)"
        if self.steady_stop and written >= self.steady_after_bytes and steady.steady:
            return f"steady state ({self.steady_rule(window)})"
        return ""

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        """Each interval is stored as it comes and printed once, when it is
        final: only the latest interval can change (fio's short last report
        is merged into it, :class:`~tkperf.fio.intervals.IntervalCutter`), so
        its line waits for the next report or the end.  A steady-state stop
        is decided on the stored figures: the verdict is taken again once
        fio's last report is in, and the stop is called steady only if that
        verdict, the one stored, still holds (:meth:`settled_reason`)."""
        series = Series(self.series, STREAM_COLUMNS + (RESPONSE_TIME_COLUMNS if self.response_times else ()))
        test.series = {self.series: series}  # a stream starts afresh, never half-way
        series_id = f"{plan.key}.{self.series}"
        column = _steady_column(plan)
        ctx.save()
        cutter = IntervalCutter(self.job.name, self.interval_s, block_size=self.job.one_block_size(),
                                response_times=self.response_times)
        reason_of_stop = ["time limit"]
        stopping = [False]  # a stop was asked for: later reports only complete the last interval
        synced = [time.monotonic()]
        prog = progress_of(ctx)
        pending: list = [None]  # the latest interval, printed once the next report shows it final

        def say(cut) -> None:
            progress.info("[%s] interval %d: %s IOPS, %.2f GB written", plan.key, cut.index,
                          f"{cut.iops:,.0f}", cut.written_total / 1e9)

        def on_report(report: dict) -> bool:
            cut = cutter.feed(report, report_time(report))
            if cut is None:
                return False
            row: Tuple[float, ...] = (cut.wall_s, cut.fio_s, cut.ios, cut.io_bytes, cut.iops, cut.lat_mean_us)
            if self.response_times:
                row += (cut.lat_p99_999_us, cut.lat_max_us)
            series.set_row(cut.index, row)
            ctx.writer.append(series_id, cut.index, series.row(cut.index - 1))
            ctx.health_check()
            now = time.monotonic()
            if now - synced[0] >= 60.0:
                ctx.writer.sync()
                synced[0] = now
            ctx.phase = f"interval {cut.index + 1}"
            test.steady = self.verdict(series.column(column) if column else (), ctx.opts.window)
            prog.interval(cut.index, cut.iops, cut.written_total)
            debug_steady(plan.key, test.steady)
            if pending[0] is not None and pending[0].index != cut.index:
                say(pending[0])
            pending[0] = cut
            if stopping[0]:  # fio's report as it stops: the writes since, in the last interval
                return True
            reason = self.stop_reason(test.steady, cut.written_total, ctx.opts.window)
            if reason:
                reason_of_stop[0] = reason
                stopping[0] = True
            return bool(reason)

        ctx.phase = "interval 1"
        prog.stream_started(self.job.runtime, self.stop_bytes)
        late = self.stop_bytes and not ctx.fio.live_intervals  # fio must stop itself at the TGBW
        try:
            ctx.fio.stream(self.job.stopping_after(self.stop_bytes) if late else self.job, self.interval_s,
                           what=plan.key, on_report=on_report, timeout=self.job.runtime * 2.0 + 300.0,
                           **({"histograms": True} if self.response_times else {}))
        finally:
            if pending[0] is not None:
                say(pending[0])
        ctx.writer.sync()
        test.stop_reason = self.settled_reason(reason_of_stop[0], test.steady, len(series), ctx.opts.window)

    def settled_reason(self, reason: str, steady: Optional[SteadyState], intervals: int, window: int) -> str:
        """The stop reason as the stored figures support it.  A steady-state
        stop is asked for on the interval that passed 20/10; fio's report as
        it stops then completes that interval.  ``steady`` is the verdict on
        the stored figures: if it no longer holds, the stop is not called a
        steady state (the stored verdict, the stop and every text agree)."""
        if not reason.startswith("steady state") or (steady is not None and steady.steady):
            return reason
        return (f"{UNHELD} ({self.steady_rule(window)}) on interval {intervals} as first measured; "
                "with fio's final report merged into it, the stored points are not steady")

    def estimate(self, opts, capacity: int) -> Estimate:
        """The time limit, or the byte limit at the assumed write rate
        (:mod:`tkperf.kit.writerate`) when that comes first; steady state
        after ``steady_after_bytes`` and a window."""
        runtime = float(self.job.runtime)
        stops = [duration_rough(runtime)]
        high = runtime
        if self.stop_bytes:  # the stream stops at the end of the interval that reaches the amount
            rate = writerate.current()
            speed = rate.text().split(",")[0]
            seconds = self.stop_bytes / rate.bps
            if self.job.rw in ("randwrite", "randrw") and rate.random is not None:  # slower past the burst
                timed = rate.random(self.stop_bytes, self.job.bs, self.job.iodepth * self.job.numjobs)
                seconds = timed.seconds
                speed = _random_speed(timed, self.stop_bytes)
            at_rate = math.ceil(seconds / self.interval_s) * self.interval_s
            # the amount's own time, said as a time, not as a rate times a time that would not add up
            # (random writes are timed at the burst's rate, then the slower rate past it)
            timing = f"about {duration_rough(at_rate)} at {speed}" if speed.endswith("MB/s") else \
                f"about {duration_rough(at_rate)}: {speed}"
            stops.append(f"{format_gb(self.stop_bytes)} written ({timing})")
            high = min(high, at_rate)
        low = high
        if self.steady_stop:
            stops.append(f"steady state ({self.steady_rule(opts.window)}{self.point_words()})")
            low = min(high, max(self.steady_after_bytes / writerate.bps(),
                                opts.window * self.steady_every * self.interval_s))
        first = "" if len(stops) == 1 else ", whichever comes first"
        return Estimate((f"# one continuous job, reported every {self.interval_s} s, stopping at "
                         + " or ".join(stops) + first,), (self.job,), low, high)


def _random_speed(timed: writerate.RandomTiming, amount: float) -> str:
    """'32.8 MB/s for the burst, then 4.5 MB/s on average (write amplification
    rising to 7.0)': how random writes of ``amount`` bytes were timed."""
    after, after_s = amount - timed.burst_bytes, timed.seconds - timed.burst_s
    burst = timed.burst_bytes / timed.burst_s if timed.burst_s > 0 else 0.0
    if after <= 0 or after_s <= 0:
        return f"{burst / 1e6:,.1f} MB/s, all in the burst before garbage collection"
    return (f"{burst / 1e6:,.1f} MB/s for the burst, then {after / after_s / 1e6:,.1f} MB/s on average "
            f"(write amplification rising to {timed.waf:.1f})")


def _steady_column(plan: PlanLike) -> str:
    """The stream column of the tracking figure (``write.iops`` -> ``iops``); '' when none is sought."""
    tracked = plan.tracking if plan.policy is not Steady.NONE else None
    column = tracked.metric.rsplit(".", 1)[-1] if tracked is not None else ""
    return column if column in STREAM_COLUMNS else ""


@dataclass(frozen=True)
class Sweep(Shape):
    """One pass over settings: every point one workload, all in one fio
    process, back to back; recorded as round 1 with a workload per point."""

    unit: ClassVar[str] = "point"

    points: Tuple[FioJob, ...]

    def steps_done(self, test: TestRun) -> int:
        return sum(len(r.workloads) for r in test.rounds)

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        test.rounds.clear()  # a sweep is one unbroken pass
        ctx.phase = "sweep"
        progress_of(ctx).once_started(f"sweep over {len(self.points)} points", round_seconds(self.points))
        progress.info("[%s] sweep over %d points", plan.key, len(self.points))
        record_round(ctx, test, self.points, 1, f"{plan.key} sweep", wants_histograms(ctx, plan))
        if plan.tracking is not None:
            test.steady = plan.steady_state(test, ctx.opts.window)
            debug_steady(plan.key, test.steady)
        ctx.save()
        test.stop_reason = "sweep complete"

    def estimate(self, opts, capacity: int) -> Estimate:
        t = round_seconds(self.points)
        return Estimate((f"# one sweep over {len(self.points)} points, about {duration_rough(t)}",),
                        self.points, t, t)


@dataclass(frozen=True)
class Phase:
    """Workloads run as one fio process, then ``idle_s`` seconds without I/O."""

    jobs: Tuple[FioJob, ...]
    idle_s: float = 0.0
    label: str = ""
    #: Seconds before fio counts as hung (0: from the jobs' planned time);
    #: a phase that runs until it has written an amount sets it from that.
    timeout_s: float = 0.0
    #: ``place(job, earlier_rounds) -> job``: where a job starts, from what
    #: the phases before it moved (a SEQ point continuing the last); None:
    #: the jobs as planned.
    place: Optional[Callable[[FioJob, Sequence[Round]], FioJob]] = None

    def placed(self, earlier: Sequence[Round]) -> Tuple[FioJob, ...]:
        """The phase's jobs as they run after the rounds ``earlier``."""
        if self.place is None:
            return self.jobs
        return tuple(self.place(j, earlier) for j in self.jobs)


@dataclass(frozen=True)
class Phases(Shape):
    """Fio runs separated by idle gaps; every phase is one recorded round and
    its label is kept in the test's data as ``phase.N``."""

    unit: ClassVar[str] = "phase"

    phases: Tuple[Phase, ...]

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        histograms = wants_histograms(ctx, plan)

        def record(index: int, phase: Phase, jobs: Tuple[FioJob, ...]) -> None:
            record_round(ctx, test, jobs, index, f"{plan.key} phase {index}", histograms, phase.timeout_s or None)
            progress.info("[%s] %s %d of %d%s", plan.key, self.unit, index, len(self.phases),
                          f" ({phase.label})" if phase.label else "")

        self._run_phases(ctx, test, record, f"all {self.unit}s run")

    def _run_phases(self, ctx: RunContext, test: TestRun, record: Callable[[int, Phase, Tuple[FioJob, ...]], None],
                    finished: str) -> None:
        """Every phase in turn: placed, run by ``record(index, phase, jobs)``, its label and idle time kept, the
        run saved, then its idle gap; ``finished`` is the test's stop reason after the last."""
        test.rounds.clear()  # idle time is part of the stimulus: never resumed half-way
        prog = progress_of(ctx)
        total = self.estimate(ctx.opts, 0).high_s
        for index, phase in enumerate(self.phases, 1):
            ctx.phase = f"{self.unit} {index}"  # what the phases are called where a user reads it (a replay's: steps)
            prog.once_started(f"{self.unit} {index} of {len(self.phases)}", total)
            jobs = phase.placed(test.rounds)
            if phase.place is not None:
                test.data.update((f"offset.{index}.{j.name}", str(j.offset)) for j in jobs)
            record(index, phase, jobs)
            test.data[f"phase.{index}"] = phase.label or f"phase {index}"
            test.data[f"idle.{index}"] = repr(float(phase.idle_s))
            ctx.save()
            if phase.idle_s > 0 and index < len(self.phases):
                ctx.phase = f"idle after {self.unit} {index}"
                prog.once_started(ctx.phase, total)
                time.sleep(phase.idle_s)
        unrun = self._idle_at_end()
        if unrun:
            progress.info("[%s] %s", test.key, unrun)
        test.stop_reason = finished

    def _idle_at_end(self) -> str:
        """What is not run, said (a run and a dry run): the idle time after
        the last phase, which nothing measured follows ('' when there is none)."""
        idle = self.phases[-1].idle_s if self.phases else 0.0
        if idle <= 0:
            return ""
        return (f"last {duration_rough(idle)} (after {self.unit} {len(self.phases)}) had no I/O: not kept "
                "(no measurement follows it)")

    def estimate(self, opts, capacity: int) -> Estimate:
        jobs = tuple(j for p in self.phases for j in p.jobs)
        busy = sum(round_seconds(p.jobs) for p in self.phases)
        idle = sum(p.idle_s for p in self.phases[:-1])
        unrun = self._idle_at_end()
        return Estimate((f"# {len(self.phases)} {self.unit}s, {duration_rough(busy)} of I/O and "
                         f"{duration_rough(idle)} idle",) + ((f"# {unrun}",) if unrun else ()),
                        jobs, busy + idle, busy + idle)


def duration_rough(seconds: float) -> str:
    """An estimate's duration: '45 s', '12 min', '3.5 h'."""
    return duration(seconds, rough=True)
