"""What a replay delivered, read back from its rounds: per step and per
stream, next to what the capture asked for (the params the plan stored).

A step's queue depth is measured the way the capture measures it: the
block layer's time-averaged count of I/Os in flight, issue to completion,
from the target's own counters around the step's fio run
(:mod:`.blockstats`: milliseconds in flight added up per I/O, over the
run's milliseconds), and its mean response time likewise (milliseconds in
flight per I/O).  Where the target has no such counters (a file, a test
host's device; results from before they were kept), fio's figures stand
in, and are labelled as such: a job's mean outstanding I/Os as its IOPS
times its mean response time (Little's law on fio's submission-to-reaping
latency), which exceeds the device's in-flight count whenever fio holds
I/Os the device is not working on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from tkperf.api import Round, TestRun, Workload
from tkperf.pts import stored
from tkperf.testtypes.realworld import blockstats

#: Round labels (``phase.N`` in the test's data) of the replay's calibration runs and steps.
CALIBRATION = "calibration"
STEP = "step"
#: How each figure was measured (labels the report and the verdict use).
BLOCK = "block layer, issue to completion"
FIO = "fio, submission to completion"
#: A step served below this share of its captured rate (captured intensity) is named.
RATE_TOLERANCE = 0.10
#: A step whose flushes at the block layer are off its captured count by more
#: than this share is named (fio's fsync interval is a whole number of writes).
FLUSH_TOLERANCE = 0.25


def outstanding(w: Workload) -> float:
    """Mean outstanding I/Os of a job as fio sees them: IOPS x mean response time, both directions."""
    return sum(side.iops * side.lat_mean_us / 1e6 for side in (w.read, w.write) if side.ios)


@dataclass(frozen=True)
class StreamFigures:
    name: str
    key: str
    #: The stream's captured share among the streams the step ran (0..1).
    asked_share: float
    share: float
    iodepth: int
    #: fio's mean outstanding I/Os of the job (Little's law on fio's latency).
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
    #: The IOPS the streams that ran asked for (the step's minus the left-out streams').
    kept_iops: float = 0.0
    #: How ``qd`` and ``lat_mean_us`` were measured: :data:`BLOCK` or :data:`FIO`.
    source: str = FIO
    #: fio's figures beside the block layer's.
    fio_qd: float = 0.0
    fio_lat_us: float = 0.0
    asked_lat_us: float = 0.0
    #: The step's captured flushes (0: none recorded) and those its block layer saw (None: not measured).
    asked_flushes: int = 0
    flushes: Optional[int] = None


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


def _seconds(rnd: Round) -> float:
    return max((w.runtime_ms for w in rnd.workloads), default=0) / 1000.0


def _ios(rnd: Round) -> int:
    return sum(w.read.ios + w.write.ios for w in rnd.workloads)


def block_figures(test: TestRun, rnd: Round) -> Optional[Tuple[float, float]]:
    """(time-averaged in flight, mean response time µs) of a round at the block layer, or None."""
    got = blockstats.stored(test.data, rnd.index)
    seconds = _seconds(rnd)
    if got is None or got.ios <= 0 or seconds <= 0:
        return None
    return got.busy_ms / (1000.0 * seconds), 1000.0 * got.busy_ms / got.ios


def step_figures(test: TestRun, step: int, rnd: Round) -> StepFigures:
    ios = _ios(rnd)
    seconds = _seconds(rnd)
    left_out = _float(test, f"step.{step}.left_out")
    kept = max(1e-9, 1.0 - left_out)
    streams = []
    for w in rnd.workloads:
        n = w.read.ios + w.write.ios
        streams.append(StreamFigures(w.name, test.params.get(f"stream.{w.name}", w.name),
                                     _float(test, f"share.{w.name}") / kept, n / ios if ios else 0.0, w.iodepth,
                                     outstanding(w), w.iops, w.lat_mean_us))
    fio_lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in rnd.workloads) / ios if ios else 0.0
    fio_qd = sum(s.qd for s in streams)
    block = block_figures(test, rnd)
    qd, lat, source = (block[0], block[1], BLOCK) if block is not None else (fio_qd, fio_lat, FIO)
    asked_qd, asked_iops = _float(test, f"step.{step}.qd"), _float(test, f"step.{step}.iops")
    kept_iops = _float(test, f"step.{step}.kept_iops") or asked_iops * kept
    asked_lat = _float(test, f"step.{step}.lat_mean_us") or (1e6 * asked_qd / asked_iops if asked_iops > 0 else 0.0)
    counters = blockstats.stored(test.data, rnd.index)
    return StepFigures(step, asked_qd, asked_iops, _float(test, f"step.{step}.mbps"), seconds, qd,
                       ios / seconds if seconds > 0 else 0.0, sum(w.bw_bytes for w in rnd.workloads) / 1e6,
                       lat, tuple(streams), kept_iops, source, fio_qd, fio_lat, asked_lat,
                       int(_float(test, f"step.{step}.flushes")), counters.flushes if counters else None)


def steps(test: TestRun) -> List[StepFigures]:
    """Every measured step's figures, in order."""
    return [step_figures(test, n, rnd) for n, rnd in step_rounds(test)]


def step_verdicts(test: TestRun, qd_tolerance: float, share_tolerance: float) -> List[str]:
    """Each step's departure from its capture, in words (without the test's key).

    At the captured intensity: a step served below its captured rate, with
    both figures and the response times that explain it.  At the maximum
    intensity (and in results from before it was an option): a step whose
    queue depth is off.  Both: a stream whose share of the replayed I/Os is
    off its captured share among the streams that ran."""
    captured = test.params.get("intensity", "max") == "captured"
    out = []
    for got in steps(test):
        if captured:
            if got.kept_iops > 0 and got.iops < (1.0 - RATE_TOLERANCE) * got.kept_iops:
                out.append(f"step {got.step}: the drive served {got.iops:,.1f} IOPS against the captured "
                           f"{got.kept_iops:,.1f} (mean response time {got.lat_mean_us:,.0f} µs against the "
                           f"captured {got.asked_lat_us:,.0f} µs, {got.source})")
            elif got.kept_iops > 0 and got.iops > (1.0 + RATE_TOLERANCE) * got.kept_iops:
                out.append(f"step {got.step}: ran at {got.iops:,.1f} IOPS, above the captured {got.kept_iops:,.1f}")
            if got.asked_flushes and (got.flushes is None or abs(got.flushes / got.asked_flushes - 1.0)
                                      > FLUSH_TOLERANCE):
                seen = "not measured" if got.flushes is None else f"{got.flushes:,}"
                out.append(f"step {got.step}: {seen} flushes at the block layer against the captured "
                           f"{got.asked_flushes:,} (fio fsync every {test.params.get(f'step.{got.step}.fsync', '?')} "
                           "writes)")
        elif got.asked_qd > 0 and abs(got.qd / got.asked_qd - 1.0) > qd_tolerance:
            out.append(f"step {got.step} ran at a queue depth of {got.qd:.2f} against the captured "
                       f"{got.asked_qd:.2f} ({got.source})")
        for x in got.streams:
            if abs(x.share - x.asked_share) > share_tolerance:
                out.append(f"step {got.step}: {x.key} made {100 * x.share:.1f}% of the replayed I/Os against the "
                           f"captured {100 * x.asked_share:.1f}% of the streams that ran")
    return out


@dataclass(frozen=True)
class Overall:
    iops: float
    mbps: float
    lat_mean_us: float
    lat_source: str
    fio_lat_us: float


def overall(test: TestRun) -> Optional[Overall]:
    """IOPS, MB/s and mean response time over every measured step (or the
    exact replay's one round), weighted by time and I/O count; None before any."""
    rounds = [r for _, r in step_rounds(test)] or [r for r in test.rounds
                                                   if not test.data.get(f"phase.{r.index}", "").startswith(
                                                       CALIBRATION)]
    workloads = [w for r in rounds for w in r.workloads]
    seconds = sum(_seconds(r) for r in rounds)
    ios = sum(w.read.ios + w.write.ios for w in workloads)
    if not ios or seconds <= 0:
        return None
    moved = sum(w.read.io_bytes + w.write.io_bytes for w in workloads)
    fio_lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in workloads) / ios
    counters = [blockstats.stored(test.data, r.index) for r in rounds]
    lat, source = fio_lat, FIO
    if counters and all(c is not None and c.ios > 0 for c in counters):
        lat = 1000.0 * sum(c.busy_ms for c in counters if c) / sum(c.ios for c in counters if c)
        source = BLOCK
    return Overall(ios / seconds, moved / seconds / 1e6, lat, source, fio_lat)
