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

A target that is not a block device of this host (a file, a test host's
device) has no counters: the replay then falls back to fio's figures and
says so.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Dict, Optional

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


class Meter:
    """Reads a target's counters around each fio run:
    ``before = meter.start()``, the run, ``meter.stop(data, n, before)``."""

    def __init__(self, target: str) -> None:
        self.path = stat_file(target)

    def start(self) -> Optional[Counters]:
        return read(self.path)

    def stop(self, data: Dict[str, str], index: int, before: Optional[Counters]) -> None:
        after = read(self.path)
        if before is not None and after is not None:
            store(data, index, after.minus(before))
