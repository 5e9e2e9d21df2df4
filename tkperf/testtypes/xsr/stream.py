"""The XSR loop shape: three continuous fio jobs, one per phase, started one
right after the other and cut into intervals as they run.

It is the consistency test's multi-phase stream
(:class:`tkperf.testtypes.consistency.stream.ConsistencyStream`) without
fio's latency logs: XSR's figures are throughput per interval, which the
status reports give exactly.  Every phase is one ``--status-interval``
stream through the fio back end; its intervals are appended to the
``intervals`` series (the consistency columns: ``wall_s fio_s ios io_bytes
iops lat_mean_us read_ios phase``) as they come, the ``phase`` column
numbering the phase, so an interrupted run keeps every completed interval.
The phases' labels and kinds are kept in the test's data as ``phase.N`` and
``phase.N.kind``.  Between two phases there is only fio's start (well under
a second): nothing idles on purpose.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Tuple

from tkperf.durations import duration
from tkperf.engine.progress import Progress
from tkperf.engine.shapes import FIO_GAP_S, Estimate
from tkperf.fio.jobs import FioJob
from tkperf.model.results import TestRun
from tkperf.model.series import Series
from tkperf.testtypes.consistency.stream import COLUMNS, SERIES, ConsistencyStream, Phase

if TYPE_CHECKING:  # pragma: no cover
    from tkperf.engine.runner import Runner
    from tkperf.testtypes.base import Plan

__all__ = ["COLUMNS", "SERIES", "Phase", "XsrStream"]


def _progress(ctx: object) -> Progress:
    found = getattr(ctx, "progress", None)
    return found if isinstance(found, Progress) else Progress()


@dataclass(frozen=True)
class XsrStream(ConsistencyStream):
    """Phases of one continuous job each, cut into ``interval_s`` intervals,
    without latency logs."""

    def jobs(self, logdir: str = "") -> Tuple[FioJob, ...]:
        """The phases' jobs as they run (no latency log: ``logdir`` is unused)."""
        return tuple(p.job for p in self.phases)

    def run(self, ctx: "Runner", plan: "Plan", test: TestRun) -> None:
        series = Series(SERIES, COLUMNS)
        test.series = {SERIES: series}  # a stream starts afresh, never half-way
        for key in [k for k in test.data if k.startswith("phase.")]:
            del test.data[key]
        for index, phase in enumerate(self.phases, 1):
            test.data[f"phase.{index}"] = phase.label
            test.data[f"phase.{index}.kind"] = phase.kind
        ctx.save()
        _progress(ctx).stream_started(self.seconds)
        for index, phase in enumerate(self.phases, 1):
            self.run_phase(ctx, plan, index, phase, phase.job, series)
            ctx.save()
        test.stop_reason = "all phases run"

    def estimate(self, opts: object, capacity: int) -> Estimate:
        total = self.seconds + FIO_GAP_S * len(self.phases)
        line = (f"# {len(self.phases)} continuous jobs, one right after the other, reported every "
                f"{self.interval_s} s: "
                + ", ".join(f"{p.label} {duration(float(p.job.runtime), rough=True)}" for p in self.phases))
        return Estimate((line,), self.jobs(), total, total)
