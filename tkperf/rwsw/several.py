"""A capture of several devices at once (``tkperf capture DEV1 DEV2 ...``):
the devices checked, their requests on one timeline split into each
device's figures beside the whole's (:class:`Split`).

The devices are traced together (one tracefs instance, one filter, one
clock), so their steps are the same steps.  The whole capture lays their
addresses end to end (the first device's at 0, the next at the first's
size, and so on): its iolog and its sequential rule see one address space
in which no two devices' I/Os meet, and a replay onto one target folds
them into its range as it folds one device (docs/rwsw.rst, "Several
devices").  Each device's own figures (:class:`tkperf.rwsw.figures.Device`)
are its requests alone: its streams, steps, queue depth and response
times, and the flushes it was sent.  Events the trace buffer lost are the
buffer's, not a device's: each device's steps are marked where the
capture's are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tkperf.errors import UsageError
from tkperf.rwsw import tracing
from tkperf.rwsw.figures import Device
from tkperf.rwsw.model import MAX_DEVICES, Capture
from tkperf.rwsw.steps import Accumulator
from tkperf.rwsw.trace import DEVICE_SHIFT, KIND_FLUSH, Span


def _node(d: tracing.DeviceFacts) -> str:
    return f"{d.major}:{d.minor}"


def facts(devices: Sequence[str]) -> Tuple[tracing.DeviceFacts, ...]:
    """Each device's facts (:func:`tkperf.rwsw.tracing.device_facts`: a missing
    or non-block device is a TargetError, exit 4); a UsageError (exit 2) for
    more than :data:`MAX_DEVICES`, for one given twice, and for two on one disk
    (a partition of the other, or two partitions: their requests are the
    disk's, told apart only by sector; capture the disk)."""
    if len(devices) > MAX_DEVICES:
        raise UsageError(f"{len(devices)} devices: a capture records at most {MAX_DEVICES}")
    out: List[tracing.DeviceFacts] = []
    for name in devices:
        d = tracing.device_facts(name)
        for e in out:
            if (e.major, e.minor, e.first_sector, e.sectors) == (d.major, d.minor, d.first_sector, d.sectors):
                raise UsageError(f"{name}: the same device as {e.path}, given twice")
            if (e.major, e.minor) == (d.major, d.minor):
                if d.first_sector == 0 or e.first_sector == 0:
                    part, disk = (name, e.path) if d.first_sector else (e.path, name)
                    raise UsageError(f"{part} is a partition of {disk}, whose requests hold its own: capture the "
                                     "disk, or the partition alone")
                raise UsageError(f"{name} and {e.path} are partitions of one disk ({_node(d)}), whose requests "
                                 "hold both: capture the disk")
        out.append(d)
    return tuple(out)


def spans(devs: Sequence[tracing.DeviceFacts]) -> Tuple[Span, ...]:
    """The devices laid end to end: each one's disk, sectors and the byte its addresses begin at."""
    out, base = [], 0
    for d in devs:
        out.append(Span(d.kernel_dev, d.first_sector, d.sectors if d.first_sector else None, base))
        base += d.size
    return tuple(out)


@dataclass
class Split:
    """The sink of a pairing of several devices: every request goes to the
    whole capture's accumulator (addresses end to end, the iolog), and each
    device's requests to its own (addresses on the device)."""

    whole: Accumulator
    parts: Sequence[Accumulator]
    bases: Sequence[int]

    def begin(self, t0: float) -> None:
        for acc in (self.whole, *self.parts):
            acc.begin(t0)

    def end(self, t1: float) -> None:
        for acc in (self.whole, *self.parts):
            acc.end(t1)

    def lost(self, t: float, n: int, since: Optional[float] = None) -> None:
        for acc in (self.whole, *self.parts):
            acc.lost(t, n, since)

    def batch(self, issue: np.ndarray, done: np.ndarray, kind: np.ndarray, offset: np.ndarray,
              length: np.ndarray) -> None:
        self.whole.batch(issue, done, kind, offset, length)
        dev = kind >> DEVICE_SHIFT
        flush = (kind & 3) == KIND_FLUSH  # a flush has no address: 0 on every device
        for i, acc in enumerate(self.parts):
            mine = dev == i
            if mine.any():
                acc.batch(issue[mine], done[mine], kind[mine], np.where(flush[mine], 0, offset[mine] - self.bases[i]),
                          length[mine])


def device(c: Capture, name: str, size: int, offset: int, host: Optional[str]) -> Device:
    """One device's figures, from the capture its accumulator made."""
    return Device(name=name, size=size, offset=offset, streams=c.streams, steps=c.steps, qd=c.qd, iops=c.iops,
                  mbps=c.mbps, seen=c.seen, host=host)


def joined(names: Sequence[str]) -> str:
    """The capture's ``device`` text for several: ``/dev/sdb + /dev/sdc``."""
    return " + ".join(names)
