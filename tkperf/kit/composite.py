"""Composite loop shapes: a steady state first, then a measurement built on it.

:class:`SteadyThenSweep` drives a drive into steady state with one workload
and then, without a pause, sweeps over settings: rounds of ``steady`` (the
PTS round loop of :class:`~tkperf.kit.shapes.Rounds`, 20/10 on the
plan's tracking figure, up to ``--max-rounds``), then one more round with
every point of ``sweep`` as a stonewalled job of ONE fio process, so there
is no idle time between the last steady-state round and the first point, or
between two points.  The sweep is recorded as the round after the last
steady-state round; its index is kept in the test's data under
:data:`SWEEP_ROUND` so that readers tell it from the steady-state rounds.

It knows nothing of the test type using it: the steady job and the sweep
points are data.  DIRTH (demand intensity) sweeps TC x QD of one access
pattern from high to low OIO; an enterprise composite workload test can
sweep its own mix the same way.

Resuming: a test that was interrupted restarts from its PURGE, as every
interrupted round-based test that is not yet steady does.  This shape
does not keep a steady state on resume (``keeps_steady_on_resume``): a test
interrupted after its steady state but before (or during) its sweep has no
whole sweep, and an interruption is idle time the PTS does not allow
between the steady state and the sweep.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, List, Optional, Sequence, Tuple

from tkperf.fio.jobs import FioJob
from tkperf.kit.context import PlanLike, RunContext
from tkperf.kit.progress import progress_of
from tkperf.kit.shapes import FIO_GAP_S, Estimate, Rounds, Shape, duration_rough, record_round, wants_histograms
from tkperf.kit.steps import Headline
from tkperf.model.figures import Figure
from tkperf.model.results import Round, TestRun
from tkperf.model.series import Series
from tkperf.model.steadystate import SteadyState, evaluate

progress = logging.getLogger("tkperf.progress")

#: The key of ``test.data`` holding the index of the sweep round.
SWEEP_ROUND = "sweep_round"
#: The key of ``test.data`` holding the index of the round of captures (:class:`SweepRounds`).
CAPTURE_ROUND = "capture_round"


def _names_of_their_own(jobs: Sequence[FioJob], what: str) -> None:
    """A ValueError unless every job of ``jobs`` (``what`` they are) has a name no other has."""
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"{what} need names of their own")


def _tracks_one_of(plan: PlanLike, jobs: Sequence[FioJob], what: str) -> None:
    """A ValueError unless the plan's tracking figure is one of ``jobs`` (``what`` it must be)."""
    if plan.tracking is None or plan.tracking.workload not in {j.name for j in jobs}:
        raise ValueError(f"{plan.key}: the tracking figure must be {what}")


def _seconds(jobs: Sequence[FioJob]) -> float:
    """Planned seconds of one fio process running ``jobs`` back to back."""
    return sum(j.planned_seconds + FIO_GAP_S for j in jobs)



@dataclass(frozen=True)
class SteadyThenSweep(Shape):
    """Rounds of ``steady`` until steady state (or ``--max-rounds``), then
    one round of every ``sweep`` point, in the order given, in one fio
    process.  The plan's tracking figure must be a workload of ``steady``
    and no sweep point may share a name with a steady job (the sweep round
    would otherwise count as a steady-state round)."""

    keeps_steady_on_resume: ClassVar[bool] = False

    steady: Tuple[FioJob, ...]
    sweep: Tuple[FioJob, ...]

    def __post_init__(self) -> None:
        if not self.steady or not self.sweep:
            raise ValueError("a steady-then-sweep shape needs steady jobs and sweep points")
        _names_of_their_own(self.steady + self.sweep, "steady jobs and sweep points")

    def first_figures(self, headline: Headline, test: TestRun) -> List[Figure]:
        return first_round_figure(test)

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        _tracks_one_of(plan, self.steady, "a workload of the steady-state rounds")
        test.rounds.clear()  # steady state and sweep are one unbroken run
        test.data.pop(SWEEP_ROUND, None)
        progress_of(ctx).rounds_then(_seconds(self.sweep))
        Rounds(self.steady).run(ctx, plan, test)
        reached = test.stop_reason
        index = len(test.rounds) + 1
        ctx.phase = "sweep"
        progress_of(ctx).once_started(f"sweep over {len(self.sweep)} points", _seconds(self.sweep))
        progress.info("[%s] sweep over %d points, right after %s", plan.key, len(self.sweep), reached)
        record_round(ctx, test, self.sweep, index, f"{plan.key} sweep", wants_histograms(ctx, plan))
        test.data[SWEEP_ROUND] = str(index)
        test.stop_reason = f"sweep complete after {reached}"
        ctx.save()

    def estimate(self, opts, capacity: int) -> Estimate:
        per_round = _seconds(self.steady)
        sweep = _seconds(self.sweep)
        first = min(opts.window, opts.max_rounds)
        jobs = "job" if len(self.steady) == 1 else f"{len(self.steady)} jobs"
        return Estimate((f"# steady state: rounds of the first {jobs} below, one fio process each, about "
                         f"{duration_rough(per_round)} a round; {first} to {opts.max_rounds} rounds",
                         f"# then the other {len(self.sweep)} jobs below as one sweep in one fio process, "
                         f"about {duration_rough(sweep)}, no idle between them"),
                        self.steady + self.sweep, first * per_round + sweep, opts.max_rounds * per_round + sweep)


#: The series of the workload-dependent preconditioning rounds before the
#: sweep rounds (:class:`SweepRounds`), one row a round: the round, the IOPS
#: and mean response time of its tracked workload (its last; results from
#: before tracked its first), the bytes the whole round wrote and its wall seconds.
WDPC_SERIES = "wdpc"
WDPC_COLUMNS: Tuple[str, ...] = ("round", "iops", "lat_mean_us", "io_bytes", "wall_s")
#: The key of ``test.data`` holding why the preconditioning ended ("steady state" or "max rounds").
WDPC_STOP = "wdpc_stop"


def wdpc_verdict(test: TestRun, window: int) -> Optional[SteadyState]:
    """The 20/10 verdict on the preconditioning rounds' tracked IOPS (the
    last ``window`` rounds); None for a test without that phase."""
    s = test.series.get(WDPC_SERIES)
    if s is None:
        return None
    return evaluate([int(v) for v in s.column("round")], [float(v) for v in s.column("iops")], window)


def wdpc_written(test: TestRun) -> int:
    """Bytes the preconditioning rounds wrote (0 without them)."""
    s = test.series.get(WDPC_SERIES)
    return int(s.column("io_bytes").sum()) if s is not None else 0


def _precondition(ctx: RunContext, plan: PlanLike, test: TestRun, jobs: Tuple[FioJob, ...]) -> None:
    """Rounds of ``jobs`` (one fio process each) until the IOPS of the last
    job (the round's measured last minute) hold 20/10 over the last window,
    at most ``--max-rounds``; every round a row of the test's :data:`WDPC_SERIES`."""
    series = Series(WDPC_SERIES, WDPC_COLUMNS)
    test.series[WDPC_SERIES] = series
    test.data.pop(WDPC_STOP, None)
    opts = ctx.opts
    for index in range(1, opts.max_rounds + 1):
        ctx.phase = f"preconditioning round {index}"
        progress_of(ctx).phase_started(f"workload dependent preconditioning round {index}")
        workloads, wall = ctx.fio.run(jobs, what=f"{plan.key} preconditioning round {index}")
        tracked = workloads[-1]
        series.append((index, tracked.iops, tracked.lat_mean_us, sum(w.write.io_bytes for w in workloads), wall))
        verdict = wdpc_verdict(test, opts.window)
        progress.info("[%s] preconditioning round %d: %.6g IOPS (%s)", plan.key, index, tracked.iops,
                      "steady" if verdict is not None and verdict.steady else "not steady yet")
        ctx.save()
        if verdict is not None and verdict.steady:
            test.data[WDPC_STOP] = "steady state"
            return
    test.data[WDPC_STOP] = "max rounds"
    ctx.event("warning", f"workload dependent preconditioning: no steady state within {opts.max_rounds} "
                         "rounds; the sweep rounds follow", plan.key)


#: ``captures(test) -> jobs``: the capture jobs once the rounds are over (:class:`SweepRounds`).
Captures = Callable[[TestRun], Sequence[FioJob]]


@dataclass(frozen=True)
class SweepRounds(Shape):
    """The PTS 2.0 implementation's round structure of DIRTH and CBW: every
    round is ``prewrite`` followed by every ``sweep`` point, in one fio
    process, repeated until the plan's tracking figure (a sweep point,
    TC32/QD32 by default) is steady or ``--max-rounds``; then, in one more
    fio process, the jobs ``captures(test)`` gives from the measured rounds
    (a pre-write and a capture per chosen point), recorded as the round
    whose index is kept under :data:`CAPTURE_ROUND`.  Only the captures keep
    their response-time histograms (the rounds' are not read: the points'
    figures are window means).  ``capture_seconds`` is what the captures
    take, for the estimate."""

    keeps_steady_on_resume: ClassVar[bool] = False

    prewrite: FioJob
    sweep: Tuple[FioJob, ...]
    captures: Captures
    capture_seconds: float
    #: The workload-dependent preconditioning before the sweep rounds: rounds
    #: of these jobs, one fio process a round, until the IOPS of the last one
    #: hold 20/10 (at most ``--max-rounds``), kept as the test's
    #: :data:`WDPC_SERIES` with its stop reason under :data:`WDPC_STOP`; the
    #: sweep rounds are numbered from 1 after it.  Empty: none.
    precondition: Tuple[FioJob, ...] = ()

    def __post_init__(self) -> None:
        if not self.sweep:
            raise ValueError("a sweep-rounds shape needs sweep points")
        _names_of_their_own((self.prewrite,) + self.sweep + self.precondition,
                            "the pre-write, the preconditioning and the sweep points")

    def first_figures(self, headline: Headline, test: TestRun) -> List[Figure]:
        return first_round_figure(test)

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        _tracks_one_of(plan, self.sweep, "a point of the sweep")
        test.rounds.clear()  # the rounds and the captures are one unbroken run
        test.data.pop(CAPTURE_ROUND, None)
        test.series.pop(WDPC_SERIES, None)
        if self.precondition:
            _precondition(ctx, plan, test, self.precondition)
        progress_of(ctx).rounds_then(self.capture_seconds)
        plain: Any = plan  # a Plan, a dataclass
        Rounds((self.prewrite,) + self.sweep).run(ctx, replace(plain, histograms=False), test)
        reached = test.stop_reason
        jobs = tuple(self.captures(test))
        index = len(test.rounds) + 1
        ctx.phase = "captures"
        progress_of(ctx).once_started(f"{len(jobs)} capture jobs", _seconds(jobs))
        progress.info("[%s] captures (%d jobs), right after %s", plan.key, len(jobs), reached)
        record_round(ctx, test, jobs, index, f"{plan.key} captures", True)
        test.data[CAPTURE_ROUND] = str(index)
        test.stop_reason = f"captures complete after {reached}"
        ctx.save()

    def estimate(self, opts, capacity: int) -> Estimate:
        jobs = (self.prewrite,) + self.sweep
        per_round = _seconds(jobs)
        first = min(opts.window, opts.max_rounds)
        pre = _seconds(self.precondition)
        lines: Tuple[str, ...] = ()
        if self.precondition:
            lines = (f"# workload dependent preconditioning: rounds of the first {len(self.precondition)} job(s) "
                     f"below, one fio process each, about {duration_rough(pre)} a round, until the IOPS of the "
                     f"last (the round's measured last minute) hold 20/10; {first} to {opts.max_rounds} rounds",)
        return Estimate(lines + (
                        f"# then each round: the pre-write, then the {len(self.sweep)} sweep points below, one fio "
                        f"process, about {duration_rough(per_round)}; {first} to {opts.max_rounds} rounds",
                        "# then a pre-write and a capture at each of the max, mid and min points, one fio process, "
                        f"about {duration_rough(self.capture_seconds)}"),
                        self.precondition + jobs, first * (per_round + pre) + self.capture_seconds,
                        opts.max_rounds * (per_round + pre) + self.capture_seconds)


@dataclass(frozen=True)
class RoundsThenCapture(Shape):
    """The round loop of :class:`~tkperf.kit.shapes.Rounds` (``jobs`` until
    the tracking figure is steady or ``--max-rounds``), then, right after it
    in one more fio process, the ``capture`` jobs with their response-time
    histograms, recorded as the round whose index is kept under
    :data:`CAPTURE_ROUND` (as :class:`SweepRounds` keeps its captures).  The
    PTS 2.0 implementation (Alan-ADATA/SSS-PTS-TEST on GitHub,
    test/lib/BlockStorageTestLatency.php) runs LAT this way: after the
    steady-state rounds, a 20-minute RND 4KiB write capture at TC1/QD1 from
    which the response-time histogram and confidence plots come.  No
    ``capture`` jobs: the round loop alone.

    The capture must follow the rounds without idle time, so a test
    interrupted before it is done restarts from its PURGE on resume, steady
    or not (``keeps_steady_on_resume``)."""

    keeps_steady_on_resume: ClassVar[bool] = False
    first_round_is_fob: ClassVar[bool] = True

    jobs: Tuple[FioJob, ...]
    capture: Tuple[FioJob, ...] = ()

    def __post_init__(self) -> None:
        if not self.jobs:
            raise ValueError("a round loop needs jobs")
        _names_of_their_own(self.jobs + self.capture, "the round jobs and the capture jobs")

    def round_jobs(self, test: TestRun, index: int) -> Tuple[FioJob, ...]:
        """The workloads of round ``index`` (every round runs ``jobs``; the capture is no round of the loop)."""
        return self.jobs

    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        test.rounds.clear()  # the rounds and the capture are one unbroken run
        test.data.pop(CAPTURE_ROUND, None)
        if self.capture:
            progress_of(ctx).rounds_then(_seconds(self.capture))
        Rounds(self.jobs).run(ctx, plan, test)
        if not self.capture:
            return
        reached = test.stop_reason
        index = len(test.rounds) + 1
        ctx.phase = "capture"
        progress_of(ctx).once_started("response-time capture", _seconds(self.capture))
        progress.info("[%s] response-time capture, right after %s", plan.key, reached)
        record_round(ctx, test, self.capture, index, f"{plan.key} capture", True)
        test.data[CAPTURE_ROUND] = str(index)
        test.stop_reason = f"capture complete after {reached}"
        ctx.save()

    def estimate(self, opts, capacity: int) -> Estimate:
        est = Rounds(self.jobs).estimate(opts, capacity)
        if not self.capture:
            return est
        cap = _seconds(self.capture)
        return replace(est, lines=est.lines + (
            f"# then the response-time capture (the last job below), one fio process, about "
            f"{duration_rough(cap)}, right after the rounds",),
            jobs=est.jobs + self.capture, low_s=est.low_s + cap, high_s=est.high_s + cap)


def _indexed_round(test: TestRun, key: str) -> Optional[Round]:
    text = test.data.get(key, "")
    if not text.isdigit():
        return None
    for r in test.rounds:
        if r.index == int(text):
            return r
    return None


def sweep_round(test: TestRun) -> Optional[Round]:
    """The sweep of a test run by :class:`SteadyThenSweep`; None before it
    was measured (or when the stored index names no round)."""
    return _indexed_round(test, SWEEP_ROUND)


def capture_round(test: TestRun) -> Optional[Round]:
    """The captures of a test run by :class:`SweepRounds`; None before them."""
    return _indexed_round(test, CAPTURE_ROUND)


def first_round_figure(test: TestRun) -> List[Figure]:
    """Round 1 of the steady-state loop at the highest OIO (the tracking
    workload), right after the purge; none when round 1 is the sweep."""
    if not test.rounds or not test.tracking_workload:
        return []
    w = test.rounds[0].workload(test.tracking_workload)
    swept = sweep_round(test)
    if w is None or (swept is not None and swept.index == 1):
        return []
    return [Figure("max_oio_iops", f"IOPS at TC{w.numjobs}/QD{w.iodepth}", w.iops, "IOPS")]


def steady_rounds(test: TestRun) -> Tuple[Round, ...]:
    """The steady-state rounds: every round but the sweep or the captures."""
    after = {r.index for r in (sweep_round(test), capture_round(test)) if r is not None}
    return tuple(r for r in test.rounds if r.index not in after)
