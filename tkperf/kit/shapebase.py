"""What every loop shape shares (:mod:`tkperf.kit.shapes` holds the shapes):
the :class:`Shape` contract, the dry run's :class:`Estimate`, running one
round of workloads as one fio process (:func:`record_round`), and the
constants the estimates use."""
from __future__ import annotations

import abc
import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple

from tkperf.fio.jobs import FioJob
from tkperf.fio.output import CPU_BOUND_MARK, cpu_bound_warning
from tkperf.kit import writerate
from tkperf.kit.context import PlanLike, RunContext
from tkperf.kit.steps import Steps
from tkperf.model.results import Round, TestRun, now_iso

progress = logging.getLogger("tkperf.progress")
debug = logging.getLogger("tkperf.debug")


def debug_steady(key: str, verdict: Any) -> None:
    """Every figure of a steady-state evaluation, for ``--debug``."""
    if not debug.isEnabledFor(logging.DEBUG) or verdict is None:
        return
    if not hasattr(verdict, "slope_excursion"):
        debug.debug("[%s] steady state: %r", key, verdict)
        return
    v = verdict
    debug.debug("[%s] steady state over rounds %s: values %s; average %.6g, range %.6g (limit %.6g), "
                "slope %.6g, intercept %.6g, slope excursion %.6g (limit %.6g): %s", key,
                list(v.rounds), [float(f"{x:.6g}") for x in v.values], v.average, v.range,
                v.max_range, v.slope, v.intercept, v.slope_excursion, v.max_slope_excursion,
                "steady" if v.steady else "not steady")

# fio leaves about this much between stonewalled workloads (its scheduler
# polls every 100 ms), measured with fio 3.33; used only for estimates.
FIO_GAP_S = 0.3
#: Write rate the estimates assume for a drive tkperf knows nothing of
#: (:data:`tkperf.kit.writerate.DEFAULT`; the rate in force: :func:`tkperf.kit.writerate.bps`).
ESTIMATE_WRITE_RATE = writerate.DEFAULT.bps
#: The start of a stream's stop reason when a steady-state stop was asked for
#: but the stored figures (fio's last report merged in) do not hold it.
UNHELD = "stopped early for a steady state"


@dataclass(frozen=True)
class Estimate:
    """What the dry run says of a shape: its fio jobs and how long it may take."""

    lines: Tuple[str, ...]
    jobs: Tuple[FioJob, ...]
    low_s: float
    high_s: float
    #: A round loop's (fewest, most) rounds and one round's seconds, so the dry
    #: run shows ``low_s`` as rounds x round time; (0, 0) for other shapes.
    rounds: Tuple[int, int] = (0, 0)
    round_s: float = 0.0


class Shape(Steps, abc.ABC):
    """A way of running fio for one test instance, and what it decides
    about the test (:class:`~tkperf.kit.steps.Steps`)."""

    @abc.abstractmethod
    def run(self, ctx: RunContext, plan: PlanLike, test: TestRun) -> None:
        """Measure into ``test``, saving as it goes; sets ``test.stop_reason``."""

    @abc.abstractmethod
    def estimate(self, ctx_opts: object, capacity: int) -> Estimate:
        """Job files and duration for ``--dry-run``; touches nothing."""


def round_seconds(jobs: Sequence[FioJob]) -> float:
    return sum(j.planned_seconds + FIO_GAP_S for j in jobs)


def scaled(value: float, metric: str) -> float:
    return value / 1e6 if metric.endswith("bw_bytes") else value  # labels say MB/s


def wants_histograms(ctx: RunContext, plan: PlanLike) -> bool:
    """Whether this plan's workloads keep their response-time histograms: the
    plan asks (LAT), or the run does (``--latency-histograms``)."""
    return bool(plan.histograms or ctx.opts.latency_histograms)


def record_round(ctx: RunContext, test: TestRun, jobs: Sequence[FioJob], index: int, what: str,
                 histograms: bool = False, timeout: Optional[float] = None) -> Round:
    """Run ``jobs`` as one fio process and append the result as round ``index``
    (with every workload's response-time histogram when ``histograms``); warns,
    once per test, when fio looks CPU-bound (:func:`~tkperf.fio.output.cpu_bound_warning`)."""
    started = now_iso()
    workloads, wall = ctx.fio.run(jobs, what=what, histograms=histograms, timeout=timeout)
    fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
    rnd = Round(index=index, started=started, wall_s=wall, fio_s=fio_s, workloads=tuple(workloads))
    test.rounds.append(rnd)
    run = ctx.run  # one CPU warning per test, not per round (nor per resume)
    if not any(e.test == test.key and CPU_BOUND_MARK in e.message for e in run.events):
        text = cpu_bound_warning(rnd.workloads, run.facts.get("host_sharing") if isinstance(run.facts, dict) else None)
        if text:
            ctx.event("warning", text, test.key, index)
    ctx.health_check()  # temperature, at most once a minute
    return rnd


#: Round N's workloads from the test so far: ``jobs_for(test, N)``.
JobsFor = Callable[[TestRun, int], Sequence[FioJob]]


def blank_test() -> TestRun:
    """A test with nothing measured yet (what a plan's first round sees)."""
    return TestRun(type="", key="", tracking_workload="", tracking_metric="", tracking_label="")
