"""The target's own block-layer counters around a replay's fio runs: the
queue depth and response time a replay gave the drive, measured the way
``tkperf capture`` measures a capture's.

A capture's queue depth is the block layer's time-averaged count of I/Os in
flight (issue to completion) and its response time is that of each I/O,
issue to completion, at the block layer.  Linux keeps both for every block
device in ``/sys/class/block/NAME/stat`` (the kernel's
Documentation/block/stat.rst, "Block layer statistics in /sys/block/<dev>/stat"):
per direction the I/Os completed and the milliseconds they spent in
flight, added up per I/O.  Read before and after a fio run, the difference
gives the run's mean response time (milliseconds in flight / I/Os) and its
time-averaged in-flight count (milliseconds in flight / milliseconds of
run), the same quantities as the capture's, from the same layer; fio's own
latency (submission to reaping) is longer whenever fio leaves completed I/Os
waiting while it keeps a replay's timing.

Those counters are not the capture's definition when the workload
flushes: an ``fsync`` reaches the block layer as an empty write with a
preflush, which the counters count as a write and charge the whole flush
time (and a FUA write on a device without FUA its post-flush too), so a
flushing step's queue depth and mean response time came out several times
the device's (0.407 against 0.079 in a replayed step).  A replay is
therefore recorded the way the capture records: the same block
tracepoints (``block_rq_issue``, ``block_rq_complete``,
``block_rq_requeue``, :class:`tkperf.rwsw.tracing.Recorder`), paired by
the capture's own code (:func:`tkperf.rwsw.rawtrace.read_raw`) and summed
by it (:class:`tkperf.rwsw.steps.Accumulator`): reads and writes are the
data I/Os, flushes and discards are counted apart, the response time is
each data I/O's issue to completion (mean, 99th percentile and largest from
the capture's histogram, :mod:`tkperf.rwsw.latency`), and the queue depth
their time in flight over the run's time (:class:`Traced`, ``trace.N.KEY``
in the test's data).  The counters are still kept beside it.  The raw
events go to an unnamed temporary file (some 130 to 190 bytes per I/O) while fio
runs, and are summed when it ends.

A target that is not a block device of this host (a file, a test host's
device) has no counters: the replay then falls back to fio's figures and
says so.  A target that cannot be traced (tkperf not root, a kernel without
the block tracepoints) keeps the counters' figures, and the replay says
that they are not the capture's definition.
"""
from __future__ import annotations

import logging
import math
import os
import stat
import weakref
from dataclasses import dataclass
from typing import Dict, List, Optional

from tkperf.pts import TkperfError
from tkperf.rwsw.replaytrace import Anchor as TraceAnchor
from tkperf.rwsw.replaytrace import Recording as TraceRecording
from tkperf.rwsw.replaytrace import StepTraced as TracedStep
from tkperf.rwsw.replaytrace import Traced as TracedRun
from tkperf.rwsw.replaytrace import traceable
from tkperf.rwsw.tracing import DeviceFacts as TraceDevice

log = logging.getLogger("tkperf")

#: Fields of /sys/class/block/NAME/stat (0-based): reads, read ms, writes,
#: write ms, discards, discard ms, flushes, flush ms.
_READS, _READ_MS, _WRITES, _WRITE_MS = 0, 3, 4, 7
_DISCARDS, _DISCARD_MS, _FLUSHES, _FLUSH_MS = 11, 14, 15, 16
#: Keys of the test data one round's counters are kept under (``block.N.KEY``).
KEYS = ("ios", "busy_ms", "flushes", "flush_ms", "discards", "discard_ms")


@dataclass(frozen=True)
class Counters:
    """One reading of a device's counters (or the difference of two)."""

    ios: int = 0          # reads and writes completed
    busy_ms: int = 0      # their milliseconds in flight, added up per I/O
    flushes: int = 0
    flush_ms: int = 0
    discards: int = 0
    discard_ms: int = 0

    def minus(self, before: Counters) -> Counters:
        return Counters(*(max(0, getattr(self, k) - getattr(before, k)) for k in KEYS))


def stat_file(target: str) -> Optional[str]:
    """The counters' file of ``target`` when it is a block device of this host, else None."""
    try:
        real = os.path.realpath(target)
        if not stat.S_ISBLK(os.stat(real).st_mode):
            return None
    except OSError:
        return None
    path = os.path.join("/sys/class/block", os.path.basename(real), "stat")
    return path if os.path.isfile(path) else None


def read(path: Optional[str]) -> Optional[Counters]:
    """The counters now, or None when there are none to read."""
    if path is None:
        return None
    try:
        with open(path, encoding="ascii") as fh:
            fields = [int(x) for x in fh.read().split()]
    except (OSError, ValueError):
        return None
    if len(fields) < 11:
        return None

    def at(i: int) -> int:
        return fields[i] if i < len(fields) else 0

    return Counters(at(_READS) + at(_WRITES), at(_READ_MS) + at(_WRITE_MS), at(_FLUSHES), at(_FLUSH_MS),
                    at(_DISCARDS), at(_DISCARD_MS))


def store(data: Dict[str, str], index: int, got: Counters) -> None:
    """Keep round ``index``'s counters in the test's data."""
    data.update({f"block.{index}.{k}": str(getattr(got, k)) for k in KEYS})


def stored(data: Dict[str, str], index: int) -> Optional[Counters]:
    """Round ``index``'s counters from the test's data, or None if not
    measured.  A file's counters are counts of at least 0: the stored-field
    table (:data:`tkperf.model.stored.DATA`, ``block.N.KEY``) leaves a test
    with one that is not out before it is shown; one that slipped past is
    not measured here either."""
    try:
        got = Counters(*(int(data[f"block.{index}.{k}"]) for k in KEYS))
    except (KeyError, ValueError):
        return None
    return got if min(getattr(got, k) for k in KEYS) >= 0 else None


#: Keys of a round's traced figures (``trace.N.KEY``): the data I/Os (reads
#: and writes) and their microseconds in flight (whole), their response
#: times (µs), the flushes and discards apart, and the events the kernel lost.
TRACE_KEYS = ("ios", "busy_us", "lat_mean_us", "lat_p99_us", "lat_max_us", "flushes", "discards", "lost")
_TRACE_WHOLE = ("ios", "busy_us", "flushes", "discards", "lost")


Traced = TracedRun


def store_traced(data: Dict[str, str], index: int, got: Traced) -> None:
    """Keep round ``index``'s traced figures in the test's data."""
    data.update({f"trace.{index}.{k}": (str(getattr(got, k)) if k in _TRACE_WHOLE else repr(getattr(got, k)))
                 for k in TRACE_KEYS})


#: Keys of one captured step's traced figures in an exact replay's round (``trace.N.step.M.KEY``).
STEP_KEYS = ("ios", "qd", "lat_mean_us", "lat_p99_us", "lost")
_STEP_WHOLE = ("ios", "lost")


def store_steps(data: Dict[str, str], index: int, got: Traced) -> None:
    """Keep round ``index``'s figures per captured step (an exact replay's), numbered from 1."""
    for n, st in enumerate(got.steps, 1):
        data.update({f"trace.{index}.step.{n}.{k}": (str(getattr(st, k)) if k in _STEP_WHOLE
                                                     else repr(getattr(st, k))) for k in STEP_KEYS})


def stored_steps(data: Dict[str, str], index: int) -> List[Optional[TracedStep]]:
    """Round ``index``'s figures per captured step, in order (None for one that does not read as
    numbers of at least 0); empty when not measured (a steps replay, a result from before)."""
    out: List[Optional[TracedStep]] = []
    n = 1
    while f"trace.{index}.step.{n}.ios" in data:
        try:
            values = {k: (int(data[f"trace.{index}.step.{n}.{k}"]) if k in _STEP_WHOLE
                          else float(data[f"trace.{index}.step.{n}.{k}"])) for k in STEP_KEYS}
            ok = all(math.isfinite(v) and v >= 0 for v in values.values())
            out.append(TracedStep(**values) if ok else None)  # type: ignore[arg-type]
        except (KeyError, ValueError):
            out.append(None)
        n += 1
    return out


def stored_traced(data: Dict[str, str], index: int) -> Optional[Traced]:
    """Round ``index``'s traced figures, or None where the round was not
    traced (a result from before replays were traced, a target that could
    not be: what cannot be known for it is its data I/Os' own queue depth
    and response time, and their 99th percentile)."""
    try:
        values = {k: (int(data[f"trace.{index}.{k}"]) if k in _TRACE_WHOLE else float(data[f"trace.{index}.{k}"]))
                  for k in TRACE_KEYS}
    except (KeyError, ValueError):
        return None
    if any(not math.isfinite(v) or v < 0 for v in values.values()):
        return None
    return Traced(**values)  # type: ignore[arg-type]


class Meter:
    """Reads a target's counters, and records it at the block tracepoints,
    around each fio run: ``before = meter.start()``, the run,
    ``meter.stop(data, n, before)``."""

    def __init__(self, target: str, trace: bool = True) -> None:
        self.path = stat_file(target)
        self.target = target
        self.dev: Optional[TraceDevice] = None  # the device to record, None when it is not
        self.untraced = ""   # why the target is not traced ("" while it is, or may be)
        self.recording: Optional[TraceRecording] = None
        self._finalizer = weakref.finalize(self, lambda: None)
        if self.path is None:
            self.untraced = "not a block device of this host"
        elif not trace:
            self.untraced = "not asked for"
        else:
            self.dev, why = traceable(target)
            if self.dev is None:
                self._untraced(why)

    def _untraced(self, why: str) -> None:
        self.untraced = why
        self.dev = None
        log.warning("replay: %s is measured by its block-layer counters only, not at the block tracepoints "
                    "as the capture is (%s): they count each flush's empty write as a write", self.target, why)

    def start(self) -> Optional[Counters]:
        self._end_recording()
        if self.dev is not None:
            try:
                self.recording = TraceRecording(self.dev)
                # a run that fails between start and stop drops its meter: the recording ends with it (or at exit)
                self._finalizer = weakref.finalize(self, self.recording.close)
            except (TkperfError, OSError) as err:
                self._untraced(str(err))
        return read(self.path)

    def abandon(self) -> None:
        """The run failed: its recording is put away unread."""
        self._end_recording()

    def _end_recording(self) -> None:
        """A recording a run left unfinished (fio failed between start and stop) is put away."""
        recording, self.recording = self.recording, None
        if recording is not None:
            self._finalizer.detach()
            recording.close()

    def stop(self, data: Dict[str, str], index: int, before: Optional[Counters],
             anchor: Optional[TraceAnchor] = None) -> None:
        """Store the run's counters and traced figures (``anchor``: also per captured step)."""
        after = read(self.path)
        if before is not None and after is not None:
            store(data, index, after.minus(before))
        recording, self.recording = self.recording, None
        if recording is None:
            return
        self._finalizer.detach()
        try:
            got = recording.stop(anchor)
            store_traced(data, index, got)
            store_steps(data, index, got)
        except (TkperfError, OSError) as err:
            self._untraced(str(err))
