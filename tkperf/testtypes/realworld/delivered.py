"""What a replay delivered, read back from its rounds: per step and per
stream, next to what the capture asked for (the params the plan stored).

A step's queue depth and response time are measured as the capture
measures them, with one definition on both sides: the target recorded at
the same block tracepoints around the step's fio run, paired and summed by
the capture's own code (:mod:`.blockstats`, ``trace.N.*``): the data I/Os
(reads and writes, flushes and discards apart), each one's response time
issue to completion (mean and 99th percentile), and their time in flight
over the run's time (the time-averaged count in flight).

Results from before replays were traced, and targets that could not be
traced, have the target's block-layer counters instead
(``/sys/class/block/NAME/stat``, ``block.N.*``): milliseconds in flight
added up per I/O, over the run's milliseconds and per I/O.  Those count each
flush's empty write as a write and charge it the flush time, so in a step
that flushed they are not the capture's definition (and give no 99th
percentile); they are labelled as such (:data:`COUNTERS`).  Where the
target has neither (a file, a test host's device), fio's figures stand in,
labelled too: a job's mean outstanding I/Os as its IOPS times its mean
response time (Little's law on fio's submission-to-reaping latency), which
exceeds the device's in-flight count whenever fio holds I/Os the device is
not working on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tkperf.api import Round, TestRun, Workload
from tkperf.pts import stored
from tkperf.testtypes.realworld import blockstats

#: Round labels (``phase.N`` in the test's data) of the replay's calibration runs and steps,
#: and of the exact replay's one round.
CALIBRATION = "calibration"
STEP = "step"
EXACT_LABEL = "exact"
#: How each figure was measured (labels the report and the verdict use):
#: the capture's definition, the block-layer counters, fio's.
BLOCK = "block tracepoints, data I/Os issue to completion, as the capture measures them"
COUNTERS = "block-layer counters, which count each flush as a write"
FIO = "fio, submission to completion"
#: A step (or an exact replay) whose queue depth, mean or 99th percentile
#: response time is beyond this factor of the capture's, either way, is named.
FIGURE_RATIO = 2.0
#: A step served below this share of its captured rate (captured intensity) is named.
RATE_TOLERANCE = 0.10
#: A step whose flushes at the block layer are off its captured count by more
#: than this share is named (fio's fsync interval is a whole number of writes).
FLUSH_TOLERANCE = 0.25
#: The param that marks a captured step touched by lost trace events (``step.N.touched_by_loss``).
TOUCHED = "touched_by_loss"


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
    #: The 99th percentile response time (µs), captured (0: not recorded) and
    #: delivered (None: not known, measured by the counters or fio).
    asked_p99_us: float = 0.0
    lat_p99_us: Optional[float] = None
    #: Trace events the kernel lost while the step ran (its figures are then not whole).
    lost: int = 0
    #: Whether the capture lost trace events in this step (``step.N.touched_by_loss``): its
    #: captured figures miss those I/Os, so nothing is judged against them.
    touched: bool = False


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


@dataclass(frozen=True)
class Measured:
    """A round's queue depth and response time at the block layer, and how they were measured."""

    qd: float
    lat_mean_us: float
    lat_p99_us: Optional[float]   # None: not known (the counters give none)
    source: str                   # :data:`BLOCK` (traced) or :data:`COUNTERS`
    ios: int
    flushes: int
    discards: int
    lost: int = 0


def measured_of(data: Dict[str, str], rnd: Round) -> Optional[Measured]:
    """A round's figures at the block layer: traced where it was, else the
    counters', else None (then fio's stand in)."""
    seconds = _seconds(rnd)
    if seconds <= 0:
        return None
    got = blockstats.stored_traced(data, rnd.index)
    if got is not None and got.ios > 0:
        return Measured(got.busy_us / (1e6 * seconds), got.lat_mean_us, got.lat_p99_us, BLOCK, got.ios,
                        got.flushes, got.discards, got.lost)
    counters = blockstats.stored(data, rnd.index)
    if counters is None or counters.ios <= 0:
        return None
    return Measured(counters.busy_ms / (1000.0 * seconds), 1000.0 * counters.busy_ms / counters.ios, None,
                    COUNTERS, counters.ios, counters.flushes, counters.discards)


def measured(test: TestRun, rnd: Round) -> Optional[Measured]:
    return measured_of(test.data, rnd)


def block_figures(test: TestRun, rnd: Round) -> Optional[Tuple[float, float]]:
    """(time-averaged in flight, mean response time µs) of a round at the block layer, or None."""
    got = measured(test, rnd)
    return None if got is None else (got.qd, got.lat_mean_us)


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
    block = measured(test, rnd)
    qd, lat, source = (block.qd, block.lat_mean_us, block.source) if block is not None else (fio_qd, fio_lat, FIO)
    asked_qd, asked_iops = _float(test, f"step.{step}.qd"), _float(test, f"step.{step}.iops")
    kept_iops = _float(test, f"step.{step}.kept_iops") or asked_iops * kept
    asked_lat = _float(test, f"step.{step}.lat_mean_us") or (1e6 * asked_qd / asked_iops if asked_iops > 0 else 0.0)
    return StepFigures(step, asked_qd, asked_iops, _float(test, f"step.{step}.mbps"), seconds, qd,
                       ios / seconds if seconds > 0 else 0.0, sum(w.bw_bytes for w in rnd.workloads) / 1e6,
                       lat, tuple(streams), kept_iops, source, fio_qd, fio_lat, asked_lat,
                       int(_float(test, f"step.{step}.flushes")), block.flushes if block else None,
                       _float(test, f"step.{step}.lat_p99_us"), block.lat_p99_us if block else None,
                       block.lost if block else 0, touched(test, step))


def touched(test: TestRun, step: int) -> bool:
    """Whether the capture lost trace events in step ``step`` (its figures miss them; a
    result from before the mark was kept: not known, taken as not)."""
    return test.params.get(f"step.{step}.{TOUCHED}") == "true"


def touched_steps(test: TestRun) -> List[int]:
    """The numbers of the captured steps the capture lost trace events in, in order."""
    return sorted(int(k.split(".")[1]) for k, v in test.params.items()
                  if v == "true" and k.startswith("step.") and k.endswith(f".{TOUCHED}") and k.split(".")[1].isdigit())


def not_judged(n: int) -> str:
    """The verdict's words for a step the capture lost events in."""
    return f"step {n}: not judged, the capture lost events in it (its captured figures miss the I/Os whose " \
           "events were lost)"


def steps(test: TestRun) -> List[StepFigures]:
    """Every measured step's figures, in order."""
    return [step_figures(test, n, rnd) for n, rnd in step_rounds(test)]


def _fmt(x: float, unit: str) -> str:
    return f"{x:,.3f}" if unit == "qd" else f"{x:,.0f} µs"


def figures_off(asked_qd: float, qd: float, asked_mean: float, mean: Optional[float], asked_p99: float,
                p99: Optional[float], ratio: float = FIGURE_RATIO) -> str:
    """The figures of a replay (or one of its steps) beyond ``ratio`` of the
    capture's either way, in words ("" when none is): queue depth, mean and
    99th percentile response time, each where both sides have it."""
    out = []
    for what, unit, a, got in (("queue depth", "qd", asked_qd, qd), ("mean response time", "us", asked_mean, mean),
                               ("99th percentile response time", "us", asked_p99, p99)):
        if a > 0 and got is not None and got >= 0 and not 1.0 / ratio <= got / a <= ratio:
            out.append(f"{what} {_fmt(got, unit)} against the captured {_fmt(a, unit)} ({got / a:.2f}x)")
    return ", ".join(out)


def source_verdicts(figures: List[Measured], counted_flushes: bool) -> List[str]:
    """What the measurement itself leaves unknown: figures from the block-layer
    counters where the replay flushed, or a trace that lost events."""
    out = []
    if counted_flushes and any(m.source == COUNTERS for m in figures):
        out.append(f"queue depth and response time from the {COUNTERS} (the target was not traced at the block "
                   "tracepoints, or the result is from before replays were): where the replay flushed they are "
                   "not the capture's definition, and the data I/Os' own figures and 99th percentile cannot be "
                   "known")
    return out


def _rate_verdicts(got: StepFigures, fsync: str) -> List[str]:
    """A step at the captured intensity served off its captured rate, or off its captured flushes."""
    out = []
    if got.kept_iops > 0 and got.iops < (1.0 - RATE_TOLERANCE) * got.kept_iops:
        out.append(f"step {got.step}: the drive served {got.iops:,.1f} IOPS against the captured "
                   f"{got.kept_iops:,.1f} (mean response time {got.lat_mean_us:,.0f} µs against the "
                   f"captured {got.asked_lat_us:,.0f} µs, {got.source})")
    elif got.kept_iops > 0 and got.iops > (1.0 + RATE_TOLERANCE) * got.kept_iops:
        out.append(f"step {got.step}: ran at {got.iops:,.1f} IOPS, above the captured {got.kept_iops:,.1f}")
    if got.asked_flushes and (got.flushes is None or abs(got.flushes / got.asked_flushes - 1.0) > FLUSH_TOLERANCE):
        seen = "not measured" if got.flushes is None else f"{got.flushes:,}"
        out.append(f"step {got.step}: {seen} flushes at the block layer against the captured "
                   f"{got.asked_flushes:,} (fio fsync every {fsync} writes)")
    return out


def _figure_verdicts(got: StepFigures, captured: bool, qd_tolerance: float) -> List[str]:
    """A step whose queue depth and response times (captured intensity, traced) or queue depth
    (maximum intensity) are off the capture's; a step whose trace lost events is not judged."""
    if got.lost:
        return [f"step {got.step}: the kernel lost {got.lost:,} trace events while it ran: its queue depth "
                "and response times are of the events recorded, not judged"]
    if captured:
        off = figures_off(got.asked_qd, got.qd, got.asked_lat_us, got.lat_mean_us, got.asked_p99_us,
                          got.lat_p99_us) if got.source == BLOCK else ""
        return [f"step {got.step}: {off} ({BLOCK})"] if off else []
    if got.asked_qd > 0 and abs(got.qd / got.asked_qd - 1.0) > qd_tolerance:
        return [f"step {got.step} ran at a queue depth of {got.qd:.2f} against the captured "
                f"{got.asked_qd:.2f} ({got.source})"]
    return []


def step_verdicts(test: TestRun, qd_tolerance: float, share_tolerance: float) -> List[str]:
    """Each step's departure from its capture, in words (without the test's key).

    At the captured intensity: a step served below its captured rate, with
    both figures and the response times that explain it; a step whose queue
    depth, mean or 99th percentile response time, traced as the capture
    traces them, is beyond :data:`FIGURE_RATIO` of the capture's.  At the
    maximum intensity (and in results from before it was an option): a step
    whose queue depth is off.  Both: a stream whose share of the replayed
    I/Os is off its captured share among the streams that ran; a step whose
    trace lost events (its figures are not whole, and are not judged).  A
    step the capture lost events in is not judged at all, and said so
    (:func:`not_judged`): its captured figures miss what was lost."""
    captured = test.params.get("intensity", "max") == "captured"
    out = []
    for got in steps(test):
        if got.touched:
            out.append(not_judged(got.step))
            continue
        if captured:
            out += _rate_verdicts(got, test.params.get(f"step.{got.step}.fsync", "?"))
        out += _figure_verdicts(got, captured, qd_tolerance)
        out += [f"step {got.step}: {x.key} made {100 * x.share:.1f}% of the replayed I/Os against the captured "
                f"{100 * x.asked_share:.1f}% of the streams that ran"
                for x in got.streams if abs(x.share - x.asked_share) > share_tolerance]
    rounds = [m for m in (measured(test, r) for _, r in step_rounds(test)) if m is not None]
    out += source_verdicts(rounds, any(m.flushes for m in rounds))
    return out


@dataclass(frozen=True)
class Overall:
    iops: float
    mbps: float
    lat_mean_us: float
    lat_source: str
    fio_lat_us: float
    #: The steps left out: the capture lost trace events in them (:func:`touched_steps`).
    left_out: Tuple[int, ...] = ()


def _measured_rounds(test: TestRun) -> Tuple[List[Round], Tuple[int, ...]]:
    """The rounds the overall figures are of: every step but those the capture lost events in (or
    the exact replay's one round), and the steps left out."""
    numbered = step_rounds(test)
    if not numbered:
        return [r for r in test.rounds if not test.data.get(f"phase.{r.index}", "").startswith(CALIBRATION)], ()
    left = tuple(n for n, _ in numbered if touched(test, n))
    return [r for n, r in numbered if n not in left], left


def _lat_of(test: TestRun, rounds: List[Round], fio_lat: float) -> Tuple[float, str]:
    """The rounds' mean response time and how it was measured: the block layer's where every round
    has it (traced, else the counters), else fio's."""
    got = [measured(test, r) for r in rounds]
    known = [m for m in got if m is not None]
    if not got or len(known) < len(got) or not sum(m.ios for m in known):
        return fio_lat, FIO
    lat = sum(m.lat_mean_us * m.ios for m in known) / sum(m.ios for m in known)
    return lat, BLOCK if {m.source for m in known} == {BLOCK} else COUNTERS


def _replayed_s(test: TestRun, rnd: Round) -> float:
    """A round's length: fio's runtime, less an exact replay's lead before the capture's time 0
    (measured, ``exact.zero_us``; the steps run at once from their start)."""
    seconds = _seconds(rnd)
    if test.data.get(f"phase.{rnd.index}") == EXACT_LABEL and "exact.zero_us" in test.data:
        seconds -= stored.whole(test, "exact.zero_us") / 1e6
    return max(0.0, seconds)


def overall(test: TestRun) -> Optional[Overall]:
    """IOPS, MB/s and mean response time over every measured step (or the
    exact replay's one round, from the capture's time 0), weighted by time and
    I/O count; steps the capture lost events in are left out (named in
    ``left_out``); None before any."""
    rounds, left = _measured_rounds(test)
    workloads = [w for r in rounds for w in r.workloads]
    seconds = sum(_replayed_s(test, r) for r in rounds)
    ios = sum(w.read.ios + w.write.ios for w in workloads)
    if not ios or seconds <= 0:
        return None
    moved = sum(w.read.io_bytes + w.write.io_bytes for w in workloads)
    fio_lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in workloads) / ios
    lat, source = _lat_of(test, rounds, fio_lat)
    return Overall(ios / seconds, moved / seconds / 1e6, lat, source, fio_lat, left)
