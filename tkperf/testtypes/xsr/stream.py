"""The XSR loop shape: three continuous fio jobs, one per phase, started one
right after the other and cut into intervals as they run.

It is the consistency test's multi-phase stream
(:class:`tkperf.pts.stream.phases.ConsistencyStream`) without
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

from tkperf.pts import (
    FIO_GAP_S,
    ConsistencyStream,
    Estimate,
    duration,
)
from tkperf.pts.stream.phases import COLUMNS, SERIES, Phase

__all__ = ["COLUMNS", "SERIES", "Phase", "XsrStream"]


@dataclass(frozen=True)
class XsrStream(ConsistencyStream):
    """Phases of one continuous job each, cut into ``interval_s`` intervals,
    without latency logs."""

    latency_log: bool = False

    def estimate(self, opts: object, capacity: int) -> Estimate:
        total = self.seconds + FIO_GAP_S * len(self.phases)
        line = (f"# {len(self.phases)} continuous jobs, one right after the other, reported every "
                f"{self.interval_s} s: "
                + ", ".join(f"{p.label} {duration(float(p.job.runtime), rough=True)}" for p in self.phases))
        return Estimate((line,), self.jobs(), total, total)
