"""Block I/O events -- the block tracepoints of tracefs (read by
:mod:`tkperf.rwsw.rawtrace`), blkparse's default text output (here) -- into
one table of I/Os (:class:`IoTrace`).

Both sources say when a request went to the device (tracefs
``block_rq_issue``, blkparse action ``D``) and when it came back
(``block_rq_complete``, action ``C``; a request the driver gives back to
be issued again is ``block_rq_requeue``, action ``R``), with its direction flags (``RWBS``),
its first sector and its length in 512-byte sectors.  An I/O is an issue
event; its completion is the first completion of the same direction and
start sector after it; an issue followed by a requeue is dropped (the
request's next issue is the I/O).  Requests without data (a flush), discards and
anything that is neither a read nor a write are counted apart and left out.

Nothing of an imported text is kept but numbers: process names, commands and any
other text in a line are not read, so an imported file cannot put markup or
a terminal control sequence anywhere.
"""
from __future__ import annotations

import re
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Deque, Dict, List, Optional, Tuple

import numpy as np

from tkperf.errors import ResultFileError

SECTOR = 512

#: The physical range of an imported event's numbers (docs/rwsw.rst): a time
#: stamp (blkparse's seconds since the trace began) of at most ten years,
#: and an I/O that ends within 2^63 bytes (the largest offset Linux gives a
#: block device; fio and the iolog count offsets in signed 64 bits).
MAX_TRACE_SECONDS = 10 * 366 * 86400.0
MAX_END_BYTE = 2 ** 63 - 1
#: A number with more digits than this is out of range whatever it says
#: (and Python refuses to convert one of more than 4300 digits).
_MAX_DIGITS = 24

# ``  7,0    1       17     0.000123456  4711  D   W 2048 + 8 [fio]``
_BLKPARSE = re.compile(rb"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+\.\d+)\s+\d+\s+([DCR])\s+(\S+)\s+(\d+) \+ (\d+)")


_ACTIONS = {b"D": "issue", b"C": "complete", b"R": "requeue"}


def direction(rwbs: bytes) -> Optional[bool]:
    """True for a write, False for a read, None for the rest (discard, flush only, ...)."""
    if b"D" in rwbs or b"E" in rwbs:  # discard, secure erase
        return None
    if b"W" in rwbs:
        return True
    if b"R" in rwbs:
        return False
    return None


@dataclass
class IoTrace:
    """The I/Os of a capture, in issue order: issue and completion times
    (seconds; completion ``nan`` when not seen), direction, byte offset and
    length; ``t0``/``t1`` the capture's start and end on the same clock."""

    issue: np.ndarray
    done: np.ndarray
    write: np.ndarray
    offset: np.ndarray
    length: np.ndarray
    t0: float
    t1: float
    skipped: Dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.issue.size)


class Pairer:
    """Issue and completion events into I/Os."""

    def __init__(self, first_sector: int = 0, sectors: Optional[int] = None) -> None:
        self.first = first_sector
        self.last = None if sectors is None else first_sector + sectors
        # compact columns (8 bytes an I/O each, 1 for the direction): a long capture has millions
        self.issue = array("d")
        self.done = array("d")
        self.write = array("b")
        self.offset = array("q")
        self.length = array("q")
        self.pending: Dict[Tuple[bool, int], Deque[int]] = {}
        self.skipped: Dict[str, int] = {}
        self.dropped: List[int] = []

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def event(self, t: float, kind: str, w: Optional[bool], sector: int, count: int) -> None:
        """One event; ``w``: :func:`direction` of its flags."""
        if w is None or count == 0:
            if kind == "issue":
                self._skip("neither read nor write (discard, flush)")
            return
        if sector < self.first or (self.last is not None and sector >= self.last):
            return  # another partition of the same disk
        if kind == "issue":
            self.pending.setdefault((w, sector), deque()).append(len(self.issue))
            self.issue.append(t)
            self.done.append(float("nan"))
            self.write.append(1 if w else 0)
            self.offset.append((sector - self.first) * SECTOR)
            self.length.append(count * SECTOR)
        elif kind == "requeue":  # issued again later: the earlier issue is not an I/O of its own
            waiting = self.pending.get((w, sector))
            if waiting:
                self.dropped.append(waiting.pop())
                self._skip("issues requeued by the driver (issued again later)")
        else:
            waiting = self.pending.get((w, sector))
            if waiting:
                self.done[waiting.popleft()] = t
            else:
                self._skip("completions of I/Os issued before the capture")

    def result(self, t0: Optional[float], t1: Optional[float], last_event: float) -> IoTrace:
        issue = np.frombuffer(self.issue, dtype=float) if self.issue else np.zeros(0)
        keep = np.ones(issue.size, dtype=bool)
        keep[self.dropped] = False
        start = t0 if t0 is not None else (float(issue.min()) if issue.size else 0.0)
        end = t1 if t1 is not None else max(last_event, start)
        outside = keep & ((issue < start) | (issue > end))  # issued before the start mark or after the end mark
        if outside.any():
            self.skipped["issued outside the capture's time"] = int(outside.sum())
            keep &= ~outside
        order = np.nonzero(keep)[0][np.argsort(issue[keep], kind="stable")]
        return IoTrace(issue=issue[order], done=np.array(self.done, dtype=float)[order],
                       write=np.array(self.write, dtype=bool)[order],
                       offset=np.array(self.offset, dtype=np.int64)[order],
                       length=np.array(self.length, dtype=np.int64)[order], t0=start, t1=end,
                       skipped=dict(self.skipped))


def event_numbers(m: re.Match[bytes], source: str, line: int) -> Tuple[float, int, int]:
    """(time stamp, first sector, sectors) of a blkparse line, each checked
    against its physical range (:data:`MAX_TRACE_SECONDS`, :data:`MAX_END_BYTE`):
    a ResultFileError naming the line otherwise."""
    stamp, first, count = m.group(3), m.group(6), m.group(7)
    if max(len(stamp), len(first), len(count)) > _MAX_DIGITS:
        raise ResultFileError(f"{source}: line {line}: a number of more than {_MAX_DIGITS} digits "
                              f"({max((stamp, first, count), key=len)[:30].decode()}...); not a block trace's")
    t = float(stamp)
    if not t <= MAX_TRACE_SECONDS:
        raise ResultFileError(f"{source}: line {line}: time stamp {stamp.decode()} s is more than ten years "
                              "into the trace; not a block trace's")
    sector, sectors = int(first), int(count)
    if (sector + sectors) * SECTOR > MAX_END_BYTE:
        raise ResultFileError(f"{source}: line {line}: sector {sector} + {sectors} ends beyond 2^63 bytes, "
                              "past the end of any block device")
    return t, sector, sectors


def read_blkparse(fh: IO[bytes], source: str) -> Tuple[IoTrace, str]:
    """The I/Os of blkparse's default text output (actions D and C) and the
    device they are of (``MAJOR,MINOR``).  A file with no such line, with
    the events of more than one device, or with a number out of its range
    (:func:`event_numbers`), is a ResultFileError."""
    p = Pairer()
    device: Optional[bytes] = None
    last = 0.0
    first: Optional[float] = None
    lines = 0
    for line in fh:
        lines += 1
        m = _BLKPARSE.match(line)
        if m is None:
            continue
        dev = m.group(1) + b"," + m.group(2)
        if device is None:
            device = dev
        elif dev != device:
            raise ResultFileError(f"{source}: holds the events of more than one device "
                                  f"({device.decode()} and {dev.decode()}); give blkparse one device's trace")
        t, sector, sectors = event_numbers(m, source, lines)
        first = t if first is None else min(first, t)
        last = max(last, t)
        p.event(t, _ACTIONS[m.group(4)], direction(m.group(5)), sector, sectors)
    if device is None or not p.issue:
        raise ResultFileError(f"{source}: no issued I/O (blkparse action D) in {lines} lines; "
                              "not blkparse's default output of a block trace")
    return p.result(first, last, last), device.decode()
