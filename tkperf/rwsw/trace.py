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
from dataclasses import dataclass, field
from typing import IO, Dict, List, Optional, Protocol, Tuple

import numpy as np

from tkperf.errors import ResultFileError
from tkperf.rwsw import daylong

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

    def lost(self, t: float, n: int, since: float) -> None:
        """``n`` events lost just before ``t``; the figures from ``since`` to ``t`` miss what they held."""


_SKIP_OUTSIDE = "issued outside the capture's time"
_SKIP_OTHER = "neither read, write, discard nor flush"
_SKIP_EMPTY = "reads or writes of no data"
_SKIP_REQUEUED = "issues requeued by the driver (issued again later)"
_SKIP_ORPHAN = "completions of I/Os issued before the capture"
_SKIP_AFTER_LOSS = ("completions in or right after the time of lost events (their issue lost, in flight at "
                    "the loss, or not paired while events were being lost)")
_SKIP_LATE = "completions of I/Os issued before the capture, or given up before they came"
_GIVEN_UP = "I/Os whose completion was not seen in time, given up (handed on without a response time)"

#: A request's key in :attr:`Pairer.waiting`: its start sector and kind
#: (``sector * 4 + kind``), but one key for every flush: the kernel gives
#: a flush no sector (``block_rq_issue`` reports 0, ``block_rq_complete``
#: 2^64-1, blkparse either), so the flushes of the device pair in the
#: order they were issued (the block layer has one flush in flight per
#: hardware queue: Linux ``block/blk-flush.c``).
FLUSH_KEY = -1
#: The most requests held at once beyond those in flight (34 bytes each):
#: an I/O whose completion has not come while this many issued after it are
#: done is given up as lost before :data:`HORIZON` (about 10 s at 100,000
#: IOPS; some 36 MB).
MAX_HELD = 1 << 20

# request states: 0 an I/O, 1 requeued (not an I/O), 2 issued outside the
# capture's time, 3 an I/O given up (its completion not seen)
_IO, _REQUEUED, _OUTSIDE, _GAVE_UP = 0, 1, 2, 3


def _key(base: int, sector: int) -> int:
    return FLUSH_KEY if base == KIND_FLUSH else sector * 4 + base


class Pairer:
    """Issue and completion events, in time order, into requests handed to
    a :class:`Sink` in issue order with their completion times.

    A completion is its request's: the first issue of the same kind and
    start sector still waiting, and for a flush (which has no sector,
    :data:`FLUSH_KEY`) the first flush still waiting.  Memory follows what is
    in flight, not what the capture touched: a request is held from its
    issue until its completion and those of the requests issued before it,
    in columns (34 bytes a request), and handed on in batches of
    :data:`BATCH`.  A completion never seen is given up after
    :data:`HORIZON` seconds, or once :data:`MAX_HELD` requests wait behind
    it; when the trace lost events (:meth:`missed`), every request then in
    flight is given up at once, so pairing starts afresh: a completion that
    was lost leaves no request behind to take the completion of a later I/O
    of the same sector."""

    def __init__(self, sink: Sink, first_sector: int = 0, sectors: Optional[int] = None,
                 auto_start: bool = True) -> None:
        self.sink = sink
        self.first = first_sector
        self.last = None if sectors is None else first_sector + sectors
        self.auto_start = auto_start
        self.t0: Optional[float] = None
        self.t1: Optional[float] = None
        self.latest = -math.inf
        # the requests held, in issue order, as columns: index i is request number base + i
        self._issue, self._done, self._kind, self._offset, self._length, self._state = self._columns()
        self.base = 0       # the number of the request at index 0
        self.ready = 0      # index of the first request not ready to hand on (its completion awaited)
        self.waiting: Dict[int, List[int]] = {}   # key -> numbers of the requests awaiting their completion
        self.skipped: Dict[str, int] = {}
        self.count = 0      # requests handed on
        self.span = 0       # the end of the furthest request handed on (bytes)
        self.issued = 0     # issue events of reads, writes, discards and flushes
        self.flushes_paired = 0
        self.losses = 0     # times the trace lost events
        self.lossy_until = -math.inf   # the end of the window of the losses under way

    @staticmethod
    def _columns() -> Tuple[array, array, array, array, array, array]:
        return array("d"), array("d"), array("b"), array("q"), array("q"), array("b")

    @property
    def held(self) -> int:
        """Requests held for a completion: in flight, and done but waiting behind one in flight (beside
        them, fewer than :data:`BATCH` ready requests wait to be handed on in one batch)."""
        return len(self._issue) - self.ready

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

    def missed(self, t: float, n: int, since: Optional[float] = None) -> None:
        """``n`` events were lost between ``since`` (the last event the trace
        kept before them, where known) and ``t``; called in time order at
        ``since`` (else at ``t``): the events of other CPUs in between are
        still to come.  Every request in flight is given up (its completion
        may be among the lost events), and until ``t`` (the loss's window)
        nothing is paired: a request issued then is handed on without a
        response time and a completion then is left out, since either may be
        the other half of a lost event (a completion kept whose issue was lost
        would be taken by an earlier request of the same sector).  Pairing
        starts afresh at ``t``.  The sink is told the time the loss touched:
        from ``since``, or the earliest request given up, to ``t``."""
        if n <= 0:
            return
        self.losses += 1
        start = min(t if since is None else min(since, t), self._give_up_waiting())
        self.lossy_until = max(self.lossy_until, t)
        if self.t0 is not None:
            self.sink.lost(max(t, self.t0), n, max(start, self.t0))
        self._advance()

    def _give_up_waiting(self) -> float:
        """Give up every request awaiting its completion; returns the earliest
        issue time of those given up (inf: none)."""
        first = math.inf
        for nums in self.waiting.values():
            for num in nums:
                i = num - self.base
                if i >= 0:
                    if self._state[i] == _IO:
                        self._state[i] = _GAVE_UP
                    first = min(first, self._issue[i])
        self.waiting.clear()
        return first

    def event(self, t: float, kind: str, rq: Optional[int], sector: int, count: int) -> None:
        """One event; ``rq``: :func:`request_kind` of its flags."""
        if t > self.latest:
            self.latest = t
            if self.ready < len(self._issue) and self._issue[self.ready] < t - HORIZON:
                self._give_up(t - HORIZON)
            if t >= self.lossy_until > -math.inf:  # the loss's window is over: pairing starts afresh
                self.lossy_until = -math.inf
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
        if kind == "issue":
            self._issued(t, rq, sector, count)
        else:
            self._completed(t, kind == "requeue", _key(base, sector))

    def _issued(self, t: float, rq: int, sector: int, count: int) -> None:
        """A request issued at ``t``: held until its completion (in a loss's window: not paired)."""
        base = rq & 3
        outside = self.t0 is None or t < self.t0 or (self.t1 is not None and t > self.t1)
        self.issued += 1
        num = self.base + len(self._issue)
        self._issue.append(t)
        self._done.append(math.nan)
        self._kind.append(rq)
        self._offset.append(0 if base == KIND_FLUSH else (sector - self.first) * SECTOR)
        self._length.append(count * SECTOR)
        if t < self.lossy_until:
            self._state.append(_OUTSIDE if outside else _GAVE_UP)
            if len(self._issue) - 1 == self.ready:
                self._advance()
            return
        self._state.append(_OUTSIDE if outside else _IO)
        key = _key(base, sector)
        nums = self.waiting.get(key)
        if nums is None:
            self.waiting[key] = [num]
        else:
            nums.append(num)
        if len(self._issue) - self.ready > MAX_HELD:
            self._give_up(math.inf, len(self._issue) - MAX_HELD)

    def _completed(self, t: float, requeue: bool, key: int) -> None:
        """The completion (or requeue) at ``t`` of the first request awaiting it under ``key``."""
        nums = None if t < self.lossy_until else self.waiting.get(key)
        if not nums:
            if not requeue:
                self._skip(_SKIP_AFTER_LOSS if self.losses else
                           _SKIP_LATE if self.skipped.get(_GIVEN_UP) else _SKIP_ORPHAN)
            return
        i = (nums.pop() if requeue else nums.pop(0)) - self.base
        if not nums:
            del self.waiting[key]
        if i < 0:
            return  # issued outside the capture's time, and handed on (left out) already
        if requeue:  # issued again later: the earlier issue is not an I/O of its own
            self._state[i] = _REQUEUED
            self._skip(_SKIP_REQUEUED)
        else:
            self._done[i] = t
            if key == FLUSH_KEY:
                self.flushes_paired += 1
        if i == self.ready:
            self._advance()

    def _advance(self) -> None:
        """Move past the requests ready to hand on (done, given up, requeued or
        outside the time); hand them on once a batch is ready."""
        r, n = self.ready, len(self._issue)
        state, done = self._state, self._done
        while r < n and (state[r] or done[r] == done[r]):  # not an I/O awaiting, or done (not nan)
            r += 1
        self.ready = r
        if r >= BATCH:
            self.flush()

    def _give_up(self, before: float, upto: Optional[int] = None) -> None:
        """Give up the oldest requests awaiting their completion: those issued
        before ``before``, or (``upto``) those at indexes below it."""
        r, n = self.ready, len(self._issue)
        stop = n if upto is None else min(upto, n)
        while r < stop and (upto is not None or self._issue[r] < before):
            if not self._state[r] and self._done[r] != self._done[r]:
                self._state[r] = _GAVE_UP
                self._skip(_GIVEN_UP)
                num = self.base + r
                key = _key(self._kind[r] & 3, self._offset[r] // SECTOR + self.first)
                nums = self.waiting.get(key)
                if nums is not None and num in nums:
                    nums.remove(num)
                    if not nums:
                        del self.waiting[key]
            r += 1
        self.ready = r
        self._advance()

    def flush(self) -> None:
        """Hand the requests ready so far to the sink, in issue order, in batches of at most :data:`BATCH`."""
        while self.ready:
            self._hand_on(min(self.ready, BATCH))

    def _hand_on(self, r: int) -> None:
        """Hand the first ``r`` requests held (all ready) to the sink."""
        cols = self._issue, self._done, self._kind, self._offset, self._length, self._state
        if r == len(self._issue):
            taken = cols
            self._issue, self._done, self._kind, self._offset, self._length, self._state = self._columns()
        else:
            taken = tuple(c[:r] for c in cols)  # type: ignore[assignment]
            for c in cols:
                del c[:r]
        self.base += r
        self.ready -= r
        issue = np.frombuffer(taken[0], dtype=float)
        state = np.frombuffer(taken[5], dtype=np.int8)
        io = (state == _IO) | (state == _GAVE_UP)
        outside = state == _OUTSIDE
        if self.t1 is not None:
            late = io & (issue > self.t1)
            outside |= late
            io &= ~late
        if outside.any():
            self._skip(_SKIP_OUTSIDE, int(outside.sum()))
        if not io.any():
            return
        offset = np.frombuffer(taken[3], dtype=np.int64)[io]
        length = np.frombuffer(taken[4], dtype=np.int64)[io]
        self.count += int(io.sum())
        self.span = max(self.span, int((offset + length).max()))
        self.sink.batch(issue[io], np.frombuffer(taken[1], dtype=float)[io], np.frombuffer(taken[2], dtype=np.int8)[io],
                        offset, length)

    def finish(self) -> Tuple[float, float]:
        """Hand on every request still held (one whose completion was not
        seen without it) and return the capture's start and end (the end
        mark, else the last event)."""
        self.waiting.clear()
        self.ready = len(self._issue)
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
    for line in daylong.lines(fh):  # a line at most 4 KiB at a time: a file of any size streams
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
