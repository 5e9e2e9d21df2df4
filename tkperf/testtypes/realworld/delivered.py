"""What a replay delivered, read back from its rounds: per step and per
stream, next to what the capture asked for (the params the plan stored).

A job's mean outstanding I/Os are its IOPS times its mean response time
(Little's law), per direction, from fio's report of that job; a step's
queue depth is the sum over its stream jobs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from tkperf.api import Round, TestRun, Workload, stored

#: Round labels (``phase.N`` in the test's data) of the replay's calibration runs and steps.
CALIBRATION = "calibration"
STEP = "step"


def outstanding(w: Workload) -> float:
    """Mean outstanding I/Os of a job: IOPS x mean response time, both directions."""
    return sum(side.iops * side.lat_mean_us / 1e6 for side in (w.read, w.write) if side.ios)


@dataclass(frozen=True)
class StreamFigures:
    name: str
    key: str
    asked_share: float
    share: float
    iodepth: int
    qd: float
    iops: float
    lat_mean_us: float


@dataclass(frozen=True)
class StepFigures:
    step: int
    asked_qd: float
    asked_iops: float
    asked_mbps: float
    seconds: float
    qd: float
    iops: float
    mbps: float
    lat_mean_us: float
    streams: Tuple[StreamFigures, ...]


def _float(test: TestRun, key: str) -> float:
    return stored.number(test, key)


def step_rounds(test: TestRun) -> List[Tuple[int, Round]]:
    """(step number, round) of every measured step, in order."""
    out = []
    for rnd in test.rounds:
        label = test.data.get(f"phase.{rnd.index}", "")
        word, _, number = label.partition(" ")
        if word == STEP and number.isdigit():
            out.append((int(number), rnd))
    return out


def step_figures(test: TestRun, step: int, rnd: Round) -> StepFigures:
    ios = sum(w.read.ios + w.write.ios for w in rnd.workloads)
    seconds = max((w.runtime_ms for w in rnd.workloads), default=0) / 1000.0
    streams = []
    for w in rnd.workloads:
        n = w.read.ios + w.write.ios
        streams.append(StreamFigures(w.name, test.params.get(f"stream.{w.name}", w.name),
                                     _float(test, f"share.{w.name}"), n / ios if ios else 0.0, w.iodepth,
                                     outstanding(w), w.iops, w.lat_mean_us))
    lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in rnd.workloads) / ios if ios else 0.0
    return StepFigures(step, _float(test, f"step.{step}.qd"), _float(test, f"step.{step}.iops"),
                       _float(test, f"step.{step}.mbps"), seconds, sum(s.qd for s in streams),
                       sum(w.iops for w in rnd.workloads), sum(w.bw_bytes for w in rnd.workloads) / 1e6,
                       lat, tuple(streams))


def steps(test: TestRun) -> List[StepFigures]:
    """Every measured step's figures, in order."""
    return [step_figures(test, n, rnd) for n, rnd in step_rounds(test)]


def overall(test: TestRun) -> Optional[Tuple[float, float, float]]:
    """(IOPS, MB/s, mean response time µs) over every measured step (or the
    exact replay's one round), weighted by time and I/O count; None before any."""
    rounds = [r for _, r in step_rounds(test)] or [r for r in test.rounds
                                                   if not test.data.get(f"phase.{r.index}", "").startswith(
                                                       CALIBRATION)]
    workloads = [w for r in rounds for w in r.workloads]
    seconds = sum(max((w.runtime_ms for w in r.workloads), default=0) for r in rounds) / 1000.0
    ios = sum(w.read.ios + w.write.ios for w in workloads)
    if not ios or seconds <= 0:
        return None
    moved = sum(w.read.io_bytes + w.write.io_bytes for w in workloads)
    lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in workloads) / ios
    return ios / seconds, moved / seconds / 1e6, lat
