"""Block I/O events -- the block tracepoints of tracefs (read by
:mod:`tkperf.rwsw.rawtrace`), blkparse's default text output (here) -- into
requests handed on in issue order with their completion times
(:class:`Pairer`).

Both sources say when a request went to the device (tracefs
``block_rq_issue``, blkparse action ``D``) and when it came back
(``block_rq_complete``, action ``C``; a request the driver gives back to
be issued again is ``block_rq_requeue``, action ``R``), with its direction flags (``RWBS``),
its first sector and its length in 512-byte sectors.  An I/O is an issue
event; its completion is the first completion of the same direction and
start sector after it; an issue followed by a requeue is dropped (the
request's next issue is the I/O).  Reads and writes are the I/Os; flushes
and discards are handed on as requests of their own kind
(:func:`request_kind`); anything else is counted apart and left out.

Nothing of an imported text is kept but numbers: process names, commands and any
other text in a line are not read, so an imported file cannot put markup or
a terminal control sequence anywhere.
"""
from __future__ import annotations

import math
import re
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, Deque, Dict, List, Optional, Protocol, Tuple

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
# a request without data (a flush) has no ``SECTOR + COUNT``, or only the sector
_BLKPARSE = re.compile(rb"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+\.\d+)\s+\d+\s+([DCR])\s+([A-Z]+)"
                       rb"(?:\s+(\d+)(?: \+ (\d+))?)?")


_ACTIONS = {b"D": "issue", b"C": "complete", b"R": "requeue"}


#: Request kinds, as :class:`Pairer` hands them on (``KIND_FUA`` is added to a write with FUA).
KIND_READ, KIND_WRITE, KIND_DISCARD, KIND_FLUSH, KIND_FUA = 0, 1, 2, 3, 4
#: An I/O whose completion has not come this long (seconds) after its issue
#: is given up as lost: a block device's command timeout (30 s for SCSI
#: disks) has passed, and the I/Os issued after it need not wait for it.
HORIZON = 30.0
#: The I/Os handed on at once (their columns, :meth:`Pairer.flush`).
BATCH = 1 << 16


def request_kind(rwbs: bytes) -> Optional[int]:
    """The kind of a request from its RWBS flags (Linux ``blk_fill_rwbs``:
    an optional ``F`` for a preflush, the operation -- ``R`` read, ``W``
    write, ``D`` discard (``DE`` secure erase), ``F`` flush, ``N`` none --
    then ``F`` for FUA, ``A``, ``S``, ``M`` ...): a read, a write (with
    :data:`KIND_FUA` added for FUA), a discard, a flush (a flush request, or
    any request with a preflush and no data), or None for the rest."""
    rest = rwbs
    preflush = len(rest) > 1 and rest[:1] == b"F" and rest[1:2] in (b"F", b"W", b"R", b"D", b"N")
    if preflush:
        rest = rest[1:]
    op = rest[:1]
    if op == b"W":
        return KIND_WRITE + (KIND_FUA if b"F" in rest[1:] else 0)
    if op == b"R":
        return KIND_READ
    if op == b"D":
        return KIND_DISCARD
    if op == b"F" or preflush:
        return KIND_FLUSH
    return None


def direction(rwbs: bytes) -> Optional[bool]:
    """True for a write, False for a read, None for the rest (discard, flush only, ...)."""
    kind = request_kind(rwbs)
    if kind is None or kind in (KIND_DISCARD, KIND_FLUSH):
        return None
    return bool(kind & 1)


@dataclass
class IoTrace:
    """The I/Os of a capture, in issue order: issue and completion times
    (seconds; completion ``nan`` when not seen), direction, byte offset and
    length; ``t0``/``t1`` the capture's start and end on the same clock.
    A small table for tests and tools; a capture itself streams its I/Os
    (:class:`Pairer`) and never holds them all."""

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


class Sink(Protocol):
    """What receives a capture's requests in issue order (:class:`tkperf.rwsw.steps.Accumulator`)."""

    def begin(self, t0: float) -> None: ...

    def end(self, t1: float) -> None: ...

    def batch(self, issue: np.ndarray, done: np.ndarray, kind: np.ndarray, offset: np.ndarray,
              length: np.ndarray) -> None: ...

    def lost(self, t: float, n: int) -> None: ...


_SKIP_OUTSIDE = "issued outside the capture's time"
_SKIP_OTHER = "neither read, write, discard nor flush"
_SKIP_EMPTY = "reads or writes of no data"
_SKIP_REQUEUED = "issues requeued by the driver (issued again later)"
_SKIP_ORPHAN = "completions of I/Os issued before the capture (or given up as lost)"


class Pairer:
    """Issue and completion events, in time order, into requests handed to
    a :class:`Sink` in issue order with their completion times.

    Memory follows what is in flight, not what the capture touched: a
    request waits here from its issue until its completion and those of
    the requests issued before it (a completion never seen is given up
    after :data:`HORIZON` seconds), and the requests handed on go in
    batches of :data:`BATCH`."""

    def __init__(self, sink: Sink, first_sector: int = 0, sectors: Optional[int] = None,
                 auto_start: bool = True) -> None:
        self.sink = sink
        self.first = first_sector
        self.last = None if sectors is None else first_sector + sectors
        self.auto_start = auto_start
        self.t0: Optional[float] = None
        self.t1: Optional[float] = None
        self.latest = -math.inf
        # [issue, done, kind, offset, length, state, key]; state 0 an I/O, 1 requeued, 2 outside the time
        self.order: Deque[List[Any]] = deque()
        self.waiting: Dict[Tuple[int, int], Deque[List[Any]]] = {}
        self.skipped: Dict[str, int] = {}
        self.count = 0      # requests handed on
        self.span = 0       # the end of the furthest request handed on (bytes)
        self.issued = 0     # issue events of reads, writes, discards and flushes
        self._cols: Tuple[array, array, array, array, array] = self._new()

    @staticmethod
    def _new() -> Tuple[array, array, array, array, array]:
        return array("d"), array("d"), array("b"), array("q"), array("q")

    def _skip(self, why: str, n: int = 1) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + n

    def start(self, t: float) -> None:
        """The capture starts at ``t``: requests issued before are outside its time."""
        if self.t0 is None:
            self.t0 = t
            self.sink.begin(t)

    def end(self, t: float) -> None:
        """The capture ends at ``t``: requests issued after are outside its time."""
        if self.t1 is None:
            self.t1 = t
            self.sink.end(t)

    def missed(self, t: float, n: int) -> None:
        """``n`` events were lost just before ``t`` (the ring buffer overflowed)."""
        if n > 0:
            self.sink.lost(max(t, self.t0 or t), n)

    def event(self, t: float, kind: str, rq: Optional[int], sector: int, count: int) -> None:
        """One event; ``rq``: :func:`request_kind` of its flags."""
        if t > self.latest:
            self.latest = t
            if self.order and self.order[0][0] < t - HORIZON:
                self._give_up(t - HORIZON)
        if self.t0 is None and self.auto_start:
            self.start(t)
        if rq is None:
            if kind == "issue":
                self._skip(_SKIP_OTHER)
            return
        base = rq & 3
        if base != KIND_FLUSH:
            if count == 0:
                if kind == "issue":
                    self._skip(_SKIP_EMPTY)
                return
            if sector < self.first or (self.last is not None and sector >= self.last):
                return  # another partition of the same disk (a flush, of the whole disk's cache, is kept)
        key = (base, sector)
        if kind == "issue":
            outside = self.t0 is None or t < self.t0 or (self.t1 is not None and t > self.t1)
            self.issued += 1
            rec = [t, math.nan, rq, (max(sector - self.first, 0)) * SECTOR, count * SECTOR, 2 if outside else 0,
                   key]
            self.order.append(rec)
            waiting = self.waiting.get(key)
            if waiting is None:
                self.waiting[key] = deque((rec,))
            else:
                waiting.append(rec)
            return
        waiting = self.waiting.get(key)
        if not waiting:
            if kind != "requeue":
                self._skip(_SKIP_ORPHAN)
            return
        if kind == "requeue":  # issued again later: the earlier issue is not an I/O of its own
            rec = waiting.pop()
            rec[5] = 1
            self._skip(_SKIP_REQUEUED)
        else:
            rec = waiting.popleft()
            rec[1] = t
        if not waiting:
            del self.waiting[key]
        self._emit_ready()

    def _emit_ready(self) -> None:
        order = self.order
        while order and (order[0][5] or order[0][1] == order[0][1]):  # requeued, outside, or done (not nan)
            self._emit(order.popleft())

    def _give_up(self, before: float) -> None:
        """Hand on the oldest requests issued before ``before`` whose completion never came."""
        order = self.order
        while order and order[0][0] < before:
            rec = order.popleft()
            if rec[1] != rec[1]:
                waiting = self.waiting.get(rec[6])
                if waiting is not None:
                    waiting.remove(rec)
                    if not waiting:
                        del self.waiting[rec[6]]
            self._emit(rec)
        self._emit_ready()

    def _emit(self, rec: List[Any]) -> None:
        if rec[5] == 1:
            return
        if rec[5] == 2 or (self.t1 is not None and rec[0] > self.t1):
            self._skip(_SKIP_OUTSIDE)
            return
        cols = self._cols
        for col, v in zip(cols, rec):
            col.append(v)
        self.count += 1
        if rec[3] + rec[4] > self.span:
            self.span = rec[3] + rec[4]
        if len(cols[0]) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand the requests gathered so far to the sink."""
        issue, done, kind, offset, length = self._cols
        if issue:
            self._cols = self._new()
            self.sink.batch(np.frombuffer(issue, dtype=float), np.frombuffer(done, dtype=float),
                            np.frombuffer(kind, dtype=np.int8), np.frombuffer(offset, dtype=np.int64),
                            np.frombuffer(length, dtype=np.int64))

    def finish(self) -> Tuple[float, float]:
        """Hand on every request still waiting (its completion not seen) and
        return the capture's start and end (the end mark, else the last event)."""
        while self.order:
            self._emit(self.order.popleft())
        self.waiting.clear()
        self.flush()
        if self.t0 is None:
            self.start(self.latest if self.latest > -math.inf else 0.0)
        assert self.t0 is not None
        if self.t1 is None:
            self.end(max(self.latest, self.t0))
        assert self.t1 is not None
        return self.t0, self.t1


def event_numbers(m: re.Match[bytes], source: str, line: int) -> Tuple[float, int, int]:
    """(time stamp, first sector, sectors) of a blkparse line, each checked
    against its physical range (:data:`MAX_TRACE_SECONDS`, :data:`MAX_END_BYTE`):
    a ResultFileError naming the line otherwise."""
    stamp, first, count = m.group(3), m.group(6) or b"0", m.group(7) or b"0"  # a flush has no sector
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


def read_blkparse(fh: IO[bytes], source: str, sink: Sink) -> Tuple[str, Pairer]:
    """Hand the requests of blkparse's default text output (actions D, C
    and R) to ``sink``; returns the device they are of (``MAJOR,MINOR``) and
    the pairer (its counts).  A file with no such line, with the events
    of more than one device, or with a number out of its range
    (:func:`event_numbers`), is a ResultFileError."""
    p = Pairer(sink)
    device: Optional[bytes] = None
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
        p.event(t, _ACTIONS[m.group(4)], request_kind(m.group(5)), sector, sectors)
    if device is None or not p.issued:
        raise ResultFileError(f"{source}: no issued I/O (blkparse action D) in {lines} lines; "
                              "not blkparse's default output of a block trace")
    p.finish()
    return device.decode(), p
