"""The figures of a capture (:mod:`tkperf.rwsw.model`): its IO streams, what
the application saw, its time steps, and, for a capture of several devices
or one combined from several captures, each device's figures and the
captures it was made of.

An IO stream is one combination of access (random or sequential), direction
(read or write) and transfer size, with its I/O count and its share of the
I/Os and of the bytes (:class:`Stream`); a step (:class:`Step`) holds its
streams, queue depth, IOPS, throughput and what the application saw
(:class:`Seen`: response times, flushes, FUA writes, discards, lost events).
A capture of several devices keeps the same figures per device
(:class:`Device`) beside those of the whole; a combined capture names its
sources (:class:`Source`).  Numbers are SI: seconds, bytes, MB/s of 10**6
bytes.  Steps are numbered from 1 wherever a user sees them; :attr:`Step.index`
counts from 0.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Tuple

ACCESS = ("random", "sequential")
RW = ("read", "write")

_SHORT = {"random": "RND", "sequential": "SEQ"}
_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def size_text(n: int) -> str:
    """A transfer size in the largest binary unit that divides it: 4KiB, 1MiB, 1536B."""
    for unit, name in _UNITS:
        if n >= unit and n % unit == 0:
            return f"{n // unit}{name}"
    return f"{n}B"


@dataclass(frozen=True)
class Stream:
    """One IO stream: access, direction and transfer size, with its count and shares."""

    access: str        # "random" | "sequential"
    rw: str            # "read" | "write"
    bs: int            # transfer size in bytes
    ios: int           # I/O count
    share: float       # share of the I/Os, 0..1
    byte_share: float  # share of the bytes, 0..1
    #: Flushes this write stream issued (those that followed one of its writes,
    #: :mod:`tkperf.rwsw.steps`); None: not recorded (a read stream, a file
    #: written before tkperf kept them).
    flushes: Optional[int] = None

    @property
    def key(self) -> str:
        """``RND 4KiB read``, ``SEQ 64KiB write``."""
        return f"{_SHORT[self.access]} {size_text(self.bs)} {self.rw}"


@dataclass(frozen=True)
class Latency:
    """Response times of the I/Os whose completion was seen: issue to
    completion at the block layer, microseconds (tkperf.rwsw.latency)."""

    ios: int           # I/Os timed
    mean_us: float
    p99_us: float
    max_us: float


@dataclass(frozen=True)
class Seen:
    """What the application saw, beyond its streams (capture version 2).
    A latency is None when no I/O of that kind was timed."""

    lat: Optional[Latency]     # reads and writes together
    read: Optional[Latency]
    write: Optional[Latency]
    flushes: int       # requests asking the device to flush its write cache (a flush, or a write with preflush)
    fua: int           # writes with Force Unit Access
    discards: int      # discard (and secure erase) requests
    discard_bytes: int
    lost_events: Optional[int]  # trace events the kernel's ring buffer lost; None: not known (an import)
    #: Whether lost events fell in this step's time (or the whole capture's):
    #: its figures miss the I/Os whose events were lost, and the I/Os in
    #: flight at the loss have no response time (:data:`LOSS_NOTE`).  False in
    #: a file written before tkperf recorded it: there a step is touched when
    #: its own ``lost_events`` is above 0 (:attr:`Step.touched_by_loss`).
    loss_touched: bool = False


#: What the figures of a step touched by lost events are (show, report, replay verdicts).
LOSS_NOTE = ("events lost by the trace buffer fell in this time: its I/O count, queue depth and response "
             "times miss the I/Os whose events were lost (pairing restarted after the loss)")


def coverage(streams: Sequence[Stream], share: float = 0.8) -> Optional[Tuple[float, float]]:
    """The dominant streams' (:func:`dominant`) share of the I/Os and of the
    bytes, in percent, or None when there is no I/O."""
    chosen = _chosen(streams, share)
    if not chosen:
        return None
    return 100.0 * min(1.0, sum(s.share for s in chosen)), 100.0 * min(1.0, sum(s.byte_share for s in chosen))


class _Covered:
    """The coverage of a step's or a whole capture's streams."""

    streams: Tuple[Stream, ...]

    @property
    def coverage_ios_pct(self) -> Optional[float]:
        """The dominant streams' (80% of the I/Os) share of the I/Os (%), None without I/O."""
        c = coverage(self.streams)
        return None if c is None else c[0]

    @property
    def coverage_bytes_pct(self) -> Optional[float]:
        """The dominant streams' (80% of the I/Os) share of the bytes (%), None without I/O:
        far below the I/O share when the large transfers are in the streams left out."""
        c = coverage(self.streams)
        return None if c is None else c[1]


@dataclass(frozen=True)
class Step(_Covered):
    """One time step of a capture."""

    index: int         # 0-based (shown as :attr:`number`, from 1)
    start: float       # seconds from the capture's start
    duration: float    # seconds
    streams: Tuple[Stream, ...]   # largest share first
    qd: float          # mean outstanding I/Os over the step
    iops: float
    mbps: float        # MB/s, 10**6 bytes
    seen: Optional[Seen] = None   # None: not recorded (a version 1 capture)

    @property
    def number(self) -> int:
        """The step's number as users see it, from 1."""
        return self.index + 1

    @property
    def touched_by_loss(self) -> Optional[bool]:
        """Whether the step's figures miss events the trace lost (:data:`LOSS_NOTE`):
        lost events fell in its time; None where not recorded (a version 1 capture).
        A replay verdict that compares this step's figures must say so or leave it out."""
        if self.seen is None:
            return None
        return self.seen.loss_touched or bool(self.seen.lost_events)


def _chosen(streams: Sequence[Stream], share: float) -> List[Stream]:
    ordered = sorted(streams, key=lambda s: (-s.share, s.key))
    chosen: List[Stream] = []
    total = 0.0
    for s in ordered:
        if total >= share - 1e-9 and chosen:
            break
        chosen.append(s)
        total += s.share
    return chosen if total > 0 else []


def dominant(streams: Sequence[Stream], share: float = 0.8) -> Tuple[Stream, ...]:
    """The fewest largest streams whose shares add up to at least ``share``,
    re-normalised so that their shares (and byte shares) sum to 1."""
    chosen = _chosen(streams, share)
    if not chosen:
        return ()
    total = sum(s.share for s in chosen)
    byte_total = sum(s.byte_share for s in chosen)
    return tuple(replace(s, share=s.share / total,
                         byte_share=(s.byte_share / byte_total) if byte_total > 0 else 0.0) for s in chosen)


@dataclass(frozen=True)
class Device(_Covered):
    """One device of a capture of several (``tkperf capture DEV1 DEV2``, or
    captures combined): its own streams, steps (on the capture's step grid,
    as many as the capture's) and figures.  In the capture's iolog, which
    lays the devices end to end, its I/Os are at ``offset`` + their offset on
    the device."""

    name: str          # the device as given (informative text, untrusted on read)
    size: int          # bytes
    offset: int        # where its addresses begin in the capture's iolog
    streams: Tuple[Stream, ...]
    steps: Tuple[Step, ...]
    qd: float
    iops: float
    mbps: float
    seen: Optional[Seen] = None
    host: Optional[str] = None   # the host it was captured on, where recorded

    @property
    def ios(self) -> int:
        return sum(s.ios for s in self.streams)

    @property
    def label(self) -> str:
        """``HOST:DEVICE``, or the device alone where the host is not recorded."""
        return f"{self.host}:{self.name}" if self.host else self.name


#: How captures were combined (:class:`Source`): one after the other in time
#: (the days of one workload), or side by side from a common start (hosts).
COMBINED = ("days", "hosts")


@dataclass(frozen=True)
class Source:
    """One capture a combined capture was made of: its file name, capture name,
    host, devices, start and length, and where in the combined capture it
    begins (``at``, seconds)."""

    file: str
    name: str
    host: Optional[str]
    devices: str       # the devices as the source names them, joined by ", "
    started: str
    duration: float
    at: float
