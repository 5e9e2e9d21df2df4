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
from dataclasses import dataclass
from typing import IO, Optional, Tuple

from tkperf.errors import TkperfError, ToolError
from tkperf.rwsw import rawtrace, steps, tracing

log = logging.getLogger("tkperf")

#: One step as long as any run: the accumulator sums the whole recording.
_ONE_STEP = 1e9


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
            self.rec.record(_ONE_STEP, self.raw.fileno(), self.done.is_set, self.begun.set)
        except BaseException as exc:  # said by the main thread
            self.failed = exc
            self.begun.set()

    def stop(self) -> Traced:
        """End the recording and sum it; a ToolError when it failed."""
        try:
            self.done.set()
            self.thread.join()
            if self.failed is not None:
                raise ToolError(f"the replay's block trace failed: {self.failed}")
            self.rec.__exit__(None, None, None)
            assert self.rec.layout is not None
            return summed(self.raw, self.rec.layout, self.dev, self.rec.lost)
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
