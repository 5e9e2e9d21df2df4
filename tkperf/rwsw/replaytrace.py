"""A replay's fio run recorded as ``tkperf capture`` records a device: the
same block tracepoints in tkperf's own tracefs instance
(:class:`tkperf.rwsw.tracing.Recorder`), read by a thread while the run
lasts into an unnamed temporary file (some 130 to 190 bytes per I/O), then paired
and summed by the capture's own code (:func:`tkperf.rwsw.rawtrace.read_raw`,
:class:`tkperf.rwsw.steps.Accumulator`) as one step: the data I/Os (reads
and writes; flushes and discards counted apart), their time in flight, and
their response times issue to completion (mean, 99th percentile and
largest, :mod:`tkperf.rwsw.latency`).  One definition on both sides: the
replay's figures are the capture's quantities of the same kind of I/O.
"""
from __future__ import annotations

import logging
import tempfile
import threading
from dataclasses import dataclass, replace
from typing import IO, List, Optional, Sequence, Tuple

import numpy as np

from tkperf.errors import TkperfError, ToolError
from tkperf.rwsw import rawtrace, steps, tracing

log = logging.getLogger("tkperf")

#: One step as long as any run: the accumulator sums the whole recording.
_ONE_STEP = 1e9


@dataclass(frozen=True)
class StepTraced:
    """One captured step's window of a recording, summed as the capture sums that step."""

    ios: int = 0              # data I/Os issued in the window
    qd: float = 0.0           # their time in flight within the window over its length
    lat_mean_us: float = 0.0
    lat_p99_us: float = 0.0
    lost: int = 0             # events lost in the window


@dataclass(frozen=True)
class Traced:
    """One fio run recorded at the block tracepoints, summed as the capture sums a step."""

    ios: int = 0              # data I/Os (reads and writes) issued in the recording
    busy_us: int = 0          # their microseconds in flight, added up per I/O (the queue depth's numerator)
    lat_mean_us: float = 0.0  # response time, issue to completion, of those whose completion was seen
    lat_p99_us: float = 0.0
    lat_max_us: float = 0.0
    flushes: int = 0
    discards: int = 0
    lost: int = 0             # events the kernel's trace buffer lost (the figures are then not whole)
    #: Per captured step (an exact replay, :class:`Anchor`): the figures in each step's window of
    #: the capture's time; empty when not asked for.
    steps: Tuple[StepTraced, ...] = ()


@dataclass(frozen=True)
class Anchor:
    """How a recording is laid onto a capture's steps: the captured reads' and writes' time stamps
    (µs from the capture's start, in order), the capture's step length and its duration (s)."""

    stamps: Sequence[int]
    step_s: float
    duration_s: float


#: The first reads and writes that set the capture's time 0 in the recording (:func:`zero_at`).
ANCHOR_IOS = 64


class _Issues:
    """A sink that keeps only the issue times (trace clock) of the data I/Os."""

    def __init__(self) -> None:
        self.times: List[np.ndarray] = []

    def begin(self, t0: float) -> None:
        pass

    def end(self, t1: float) -> None:
        pass

    def lost(self, t: float, n: int, since: Optional[float] = None) -> None:
        pass

    def batch(self, issue: np.ndarray, done: np.ndarray, kind: np.ndarray, offset: np.ndarray,
              length: np.ndarray) -> None:
        self.times.append(issue[(kind & 3) <= 1])


def zero_at(issued: np.ndarray, stamps: Sequence[int]) -> Optional[float]:
    """The capture's time 0 on the recording's clock: the k-th read or write the target issued is
    the capture's k-th (fio issues them in the iolog's order, each at its captured millisecond or
    later), and of the first :data:`ANCHOR_IOS` the one issued earliest against its captured time
    was on time (a split or merged request further on would shift the count; None without I/O)."""
    n = min(len(issued), len(stamps), ANCHOR_IOS)
    if n == 0:
        return None
    trace = np.sort(np.asarray(issued, dtype=np.float64))[:n]
    cap = np.sort(np.asarray(stamps[:max(n, ANCHOR_IOS)], dtype=np.float64))[:n] / 1e6
    return float(np.min(trace - cap))


class _Anchored(steps.Accumulator):
    """The capture's accumulator with its time 0 at the capture's time 0 in the recording and its
    end at the capture's end: its steps are the capture's windows (the last keeps the I/Os issued
    after it, their time in flight within it)."""

    def __init__(self, step: float, zero: float, duration: float) -> None:
        super().__init__(step, None, lost_known=True)
        self.zero, self.duration = zero, duration

    def begin(self, t0: float) -> None:
        super().begin(self.zero)
        super().end(self.zero + self.duration)

    def end(self, t1: float) -> None:
        pass


def _read(raw: IO[bytes], layout: rawtrace.Layout, dev: tracing.DeviceFacts, sink) -> None:
    raw.seek(0)
    rawtrace.read_raw(raw, layout, dev.kernel_dev, sink, dev.first_sector, dev.sectors if dev.first_sector else None)


def stepped(raw: IO[bytes], layout: rawtrace.Layout, dev: tracing.DeviceFacts,
            anchor: Anchor) -> Tuple[StepTraced, ...]:
    """The recording's figures in each of the capture's step windows (its time 0 found by
    :func:`zero_at`), summed by the capture's own code (:class:`_Anchored`).  Empty when the
    recording holds no read or write."""
    issues = _Issues()
    _read(raw, layout, dev, issues)
    zero = zero_at(np.concatenate(issues.times) if issues.times else np.zeros(0), anchor.stamps)
    del issues
    if zero is None or anchor.step_s <= 0 or anchor.duration_s <= 0:
        return ()
    acc = _Anchored(anchor.step_s, zero, anchor.duration_s)
    _read(raw, layout, dev, acc)
    cap = acc.finish(name="replay", device=dev.path, size=dev.size, source="tracefs", started="", iolog=None)
    out = []
    for st in cap.steps:
        lat = st.seen.lat if st.seen is not None else None
        out.append(StepTraced(sum(x.ios for x in st.streams), st.qd, lat.mean_us if lat else 0.0,
                              lat.p99_us if lat else 0.0, (st.seen.lost_events or 0) if st.seen is not None else 0))
    return tuple(out)


def summed(raw: IO[bytes], layout: rawtrace.Layout, dev: tracing.DeviceFacts, lost: int) -> Traced:
    """The figures of a recording (``raw``, as :class:`tracing.Recorder` writes
    it) by the capture's own pairing and sums, as one step."""
    acc = steps.Accumulator(_ONE_STEP, None, lost_known=True)
    raw.seek(0)
    rawtrace.read_raw(raw, layout, dev.kernel_dev, acc, dev.first_sector,
                      dev.sectors if dev.first_sector else None)
    cap = acc.finish(name="replay", device=dev.path, size=dev.size, source="tracefs", started="",
                     iolog=None, lost_events=lost)
    seen = cap.seen
    ios = sum(s.ios for s in cap.streams)
    lat = seen.lat if seen is not None else None
    return Traced(ios=ios, busy_us=int(round(cap.qd * cap.duration * 1e6)),
                  lat_mean_us=lat.mean_us if lat else 0.0, lat_p99_us=lat.p99_us if lat else 0.0,
                  lat_max_us=lat.max_us if lat else 0.0, flushes=seen.flushes if seen else 0,
                  discards=seen.discards if seen else 0,
                  lost=(seen.lost_events or 0) if seen else lost)


class Recording:
    """One fio run's recording: tkperf's tracefs instance on the target's
    disk, read by a thread of its own into an unnamed temporary file."""

    def __init__(self, dev: tracing.DeviceFacts) -> None:
        self.dev = dev
        self.raw = tempfile.TemporaryFile(prefix=".tkperf-replay-", suffix=".trace.tmp")
        self.rec = tracing.Recorder(dev)
        self.done = threading.Event()
        self.begun = threading.Event()
        self.failed: Optional[BaseException] = None
        try:
            self.rec.__enter__()
        except BaseException:
            self.raw.close()
            raise
        self.thread = threading.Thread(target=self._read, name="tkperf-replay-trace", daemon=True)
        self.thread.start()
        self.begun.wait(30.0)
        if not self.begun.is_set():
            self.close()
            raise ToolError("the replay's block trace did not start within 30 s")

    def _read(self) -> None:
        try:
            self.rec.record(_ONE_STEP, self.raw.fileno, self.done.is_set, self.begun.set)
        except BaseException as exc:  # said by the main thread
            self.failed = exc
            self.begun.set()

    def stop(self, anchor: Optional[Anchor] = None) -> Traced:
        """End the recording and sum it (and, with ``anchor``, per captured step:
        :func:`stepped`); a ToolError when it failed."""
        try:
            self.done.set()
            self.thread.join()
            if self.failed is not None:
                raise ToolError(f"the replay's block trace failed: {self.failed}")
            self.rec.__exit__(None, None, None)
            assert self.rec.layout is not None
            whole = summed(self.raw, self.rec.layout, self.dev, self.rec.lost)
            if anchor is None:
                return whole
            return replace(whole, steps=stepped(self.raw, self.rec.layout, self.dev, anchor))
        finally:
            self.close()

    def close(self) -> None:
        """Put tracing back as it was (also when the run failed) and drop the raw events."""
        self.done.set()
        if self.thread.is_alive():
            self.thread.join(5.0)
        if self.rec.instance is not None or self.rec.registered:
            self.rec._close_quietly()
        for problem in self.rec.problems:
            log.warning("replay trace: %s", problem)
        self.rec.problems = []
        self.raw.close()


def traceable(target: str) -> Tuple[Optional[tracing.DeviceFacts], str]:
    """The device to record for ``target`` and "", or None and why it cannot
    be recorded (tkperf not root, not a device with a request queue, the
    temporary folder on it)."""
    try:
        tracing.needs_root()
        dev = tracing.device_facts(target)
        if tracing.on_device(tempfile.gettempdir(), dev):
            return None, f"the temporary folder {tempfile.gettempdir()} is on the target"
    except (TkperfError, OSError) as err:
        return None, str(err)
    return dev, ""
