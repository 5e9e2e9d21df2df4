"""An exact replay's iolog: checked against its capture when the run is
planned, and copied onto the target with flushes and discards kept.

The capture's iolog (fio iolog version 3, beside its XML) is untrusted
input.  Its format is checked by :func:`tkperf.rwsw.iolog.scan`; then, against
the capture it belongs to, every line must agree (:func:`check`): no time
stamp beyond the capture's duration, no I/O beyond the captured device's
size, and every read or write of a transfer size the capture holds for its
direction.  A disagreement is refused in one line (exit 7) before anything
is written.

The copy (:func:`write_mapped`) names the target, moves every I/O into the
target's range ``[0, span)`` (an offset beyond it wraps around, modulo the
span; one that would end past the span is pulled back, aligned down to
4 KiB) and holds the captured timing against fio's clock: it is an iolog
of version 2, whose ``wait`` action fio 3.33 holds until a time since fio
started (milliseconds; axboe/fio ``iolog.c``, ``read_iolog_get``:
``mtime_since_genesis``), and every captured millisecond that holds an
action begins with a wait until it (:data:`LEAD_MS` later).  A version 3
iolog's time stamps are not held so: fio waits each gap after its previous
issue (``iolog_delay``), so whatever it is late by -- a sleep's overshoot,
a full queue -- adds up (3.0 to 6.6 s behind after 10 s of a bursty
capture on a loop device, ``benchmarks/exact_timing.py``); with the waits
a late fio catches up at the next millisecond.  Flushes (``sync``, ``datasync``) are
kept as fio's ``sync`` and ``datasync`` actions and discards as ``trim``
actions, mapped like the I/Os.

How the replay kept the timing is measured from fio's own record of every
I/O it issued (its submission-latency log, ``write_lat_log``: the time of
each submission in ms since the job started), in the capture's own steps
(:func:`timing`): the reads and writes fio issued within each step's time
against those the capture issued in it.

The replay's queue depth (fio ``iodepth``) is the capture's peak in-flight
count (:func:`peak_in_flight`): every I/O taken as in flight from its issue
for its step's mean response time (the capture's block-layer figure: the
step's queue depth / its IOPS, Little's law, or its recorded mean when the
capture has one), the most that overlap at any moment.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import IO, Dict, Iterator, List, MutableSequence, Optional, Sequence, Set, Tuple

import numpy as np

from tkperf.pts import ResultFileError, log_files, parse_log
from tkperf.rwsw.iolog import actions as iolog_actions
from tkperf.rwsw.iolog import place as iolog_place
from tkperf.rwsw.model import Capture

HEADER = "fio version 3 iolog"
#: The mapped copy's header: version 2, whose ``wait`` waits until a time since fio started.
WAIT_HEADER = "fio version 2 iolog"
#: The capture's time 0 is this long after fio starts (ms), so that the
#: job's thread is made, its first iolog lines read and the target opened
#: before the first captured I/O is due: fio 3.33 polls the jobs it starts
#: every 100 ms (``backend.c``, ``run_threads``), and on a two-core host at
#: load 8 to 10 a job was ready 105 to 118 ms after fio started.  The rest
#: of the lead is in fio's runtime; :attr:`Timing.zero_us` measures it.
LEAD_MS = 300
#: Captured I/Os this close to a step's edge (µs, either side) may be
#: counted in the step next to it by the measurement's grain: fio's waits
#: and its log are whole milliseconds.
EDGE_US = 5000
IO_ACTIONS = ("read", "write")
SYNC_ACTIONS = ("sync", "datasync")
TRIM = "trim"
MAX_LINE = 4096
#: Slack on the capture's duration: its time stamps are whole microseconds.
STAMP_SLACK_US = 1000
#: The most I/Os an exact replay keeps outstanding (fio iodepth).
MAX_DEPTH = 256


@dataclass(frozen=True)
class Line:
    stamp: int
    action: str
    offset: int
    length: int


@dataclass(frozen=True)
class Counts:
    """An iolog's actions, counted: reads and writes (its I/Os), flushes, discards."""

    reads: int
    writes: int
    flushes: int
    discards: int

    @property
    def ios(self) -> int:
        return self.reads + self.writes


@dataclass(frozen=True)
class Checked(Counts):
    """What an iolog holds, once checked against its capture."""

    last_us: int
    largest: int
    #: The capture's peak in-flight count (the replay's fio iodepth).
    depth: int


def _lines(path: str) -> Iterator[Line]:
    """Every action line of the iolog (fio's text or tkperf's packed; file actions left out), one at a
    time, checked as it is read (:func:`tkperf.rwsw.iolog.actions`)."""
    with iolog_actions(path) as found:
        for stamp, action, offset, length in found:
            if action != "close":
                yield Line(stamp, action, offset, length)


def seen_figure(part: object, *names: str) -> Optional[float]:
    """A figure of what a capture (or step) saw, ``seen.lat.mean_us`` say,
    when the capture recorded it (capture version 2), else None."""
    value: object = part
    for name in ("seen",) + names:
        value = getattr(value, name, None)
        if value is None:
            return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mean_rt_us(part: object) -> float:
    """The mean response time (µs, block layer, issue to completion) of a
    capture or step: recorded, or its queue depth / its IOPS (Little's law)."""
    recorded = seen_figure(part, "lat", "mean_us")
    if recorded is not None and recorded > 0:
        return recorded
    qd, iops = float(getattr(part, "qd", 0.0)), float(getattr(part, "iops", 0.0))
    return 1e6 * qd / iops if iops > 0 else 0.0


def _mean_rt_us(cap: Capture) -> List[Tuple[float, float]]:
    """(step start µs, the step's mean response time µs) of every step."""
    return [(1e6 * s.start, mean_rt_us(s)) for s in cap.steps]


def peak_in_flight(stamps: List[int], cap: Capture) -> int:
    """The most I/Os in flight at once, each from its time stamp for its step's mean response time."""
    steps = _mean_rt_us(cap)
    ends: List[float] = []
    peak = k = 0
    for t in stamps:
        while k + 1 < len(steps) and steps[k + 1][0] <= t:
            k += 1
        rt = steps[k][1] if steps else 0.0
        while ends and ends[0] <= t:
            heapq.heappop(ends)
        heapq.heappush(ends, t + max(rt, 1.0))
        peak = max(peak, len(ends))
    return max(1, min(MAX_DEPTH, peak))


def _sizes(cap: Capture) -> Dict[str, Set[int]]:
    out: Dict[str, Set[int]] = {"read": set(), "write": set()}
    for st in [cap.streams] + [s.streams for s in cap.steps]:
        for s in st:
            out[s.rw].add(s.bs)
    return out


def check(path: str, cap: Capture) -> Checked:
    """The iolog ``path`` against its capture; a ResultFileError (one line, exit 7) at the first disagreement."""
    name = cap.iolog or path
    last_allowed = int(math.ceil(cap.duration * 1e6)) + STAMP_SLACK_US
    sizes = _sizes(cap)
    reads = writes = flushes = discards = largest = last = 0
    stamps: List[int] = []
    for ln in _lines(path):
        if ln.stamp > last_allowed:
            raise ResultFileError(f"{name}: an I/O at {ln.stamp / 1e6:.3f} s, beyond the capture's "
                                  f"{cap.duration:.3f} s: the iolog is not this capture's")
        last = max(last, ln.stamp)
        if ln.action in SYNC_ACTIONS:
            flushes += 1
            continue
        if ln.offset + ln.length > cap.size:
            raise ResultFileError(f"{name}: a {ln.action} of {ln.length} bytes at offset {ln.offset} ends beyond "
                                  f"the captured device's {cap.size} bytes: the iolog is not this capture's")
        if ln.action == TRIM:
            discards += 1
            continue
        if ln.action not in IO_ACTIONS:
            continue
        if ln.length not in sizes[ln.action]:
            raise ResultFileError(f"{name}: a {ln.action} of {ln.length} bytes, a transfer size the capture "
                                  f"holds no {ln.action} stream of: the iolog is not this capture's")
        reads += ln.action == "read"
        writes += ln.action == "write"
        largest = max(largest, ln.length)
        stamps.append(ln.stamp)
    return Checked(reads, writes, flushes, discards, last, largest, peak_in_flight(stamps, cap))


@dataclass(frozen=True)
class Written(Counts):
    """What the mapped copy holds."""

    moved: int
    dropped: int
    span: int
    last_us: int
    largest: int


def write_mapped(src: str, dst: IO[str], target: str, span: int,
                 stamps: Optional[MutableSequence[int]] = None) -> Written:
    """Copy the iolog ``src`` to ``dst`` on ``target`` within ``[0, span)``,
    flushes and discards kept, each captured millisecond held by a wait
    until :data:`LEAD_MS` after it; the time stamps (µs) of the reads and
    writes copied are appended to ``stamps``."""
    if not target or any(ch.isspace() for ch in target):
        raise ResultFileError(f"exact replay needs a target path without spaces, not {target!r}")
    counts = {"read": 0, "write": 0, "flush": 0, "trim": 0}
    moved = dropped = largest = last = 0
    waited = -1
    dst.write(f"{WAIT_HEADER}\n{target} add\n{target} open\n")

    def wait(stamp: int) -> None:
        nonlocal waited
        if stamp // 1000 > waited:
            waited = stamp // 1000
            dst.write(f"{target} wait {LEAD_MS + waited} 0\n")

    for ln in _lines(src):
        last = max(last, ln.stamp)
        if ln.action in SYNC_ACTIONS:
            counts["flush"] += 1
            wait(ln.stamp)
            dst.write(f"{target} {ln.action} 0 0\n")
            continue
        if ln.action not in IO_ACTIONS + (TRIM,):
            continue
        if ln.length == 0 or ln.length > span:
            dropped += 1
            continue
        where = iolog_place(ln.offset, ln.length, span)
        moved += where != ln.offset
        counts[ln.action] += 1
        if ln.action != TRIM:
            largest = max(largest, ln.length)
            if stamps is not None:
                stamps.append(ln.stamp)
        wait(ln.stamp)
        dst.write(f"{target} {ln.action} {where} {ln.length}\n")
    dst.write(f"{target} close\n")
    return Written(counts["read"], counts["write"], counts["flush"], counts["trim"], moved, dropped, span, last,
                   largest)


def captured_params(cap: Capture) -> Dict[str, str]:
    """What the capture recorded of its response times, flushes and discards
    (capture version 2), as the replay's params, and which steps lost trace
    events (``step.N.touched_by_loss``); nothing for older captures."""
    out = {}
    for key, names in (("capture_lat_mean_us", ("lat", "mean_us")), ("capture_lat_p99_us", ("lat", "p99_us")),
                       ("capture_flushes", ("flushes",)), ("capture_fua", ("fua",)),
                       ("capture_discards", ("discards",))):
        value = seen_figure(cap, *names)
        if value is not None:
            out[key] = repr(value) if "lat" in key else str(int(value))
    for st in cap.steps:
        value = seen_figure(st, "lat", "mean_us")
        if value is not None:
            out[f"step.{st.index + 1}.lat_mean_us"] = repr(value)
        if getattr(st, "touched_by_loss", None):  # its figures miss the I/Os whose events were lost
            out[f"step.{st.index + 1}.touched_by_loss"] = "true"
    return out


@dataclass(frozen=True)
class StepTiming:
    """One step of an exact replay, timed: the reads and writes the capture
    issued within the step's time, those fio issued within it, and the
    captured ones within :data:`EDGE_US` of its edges (either side)."""

    captured: int
    replayed: int
    edge: int


@dataclass(frozen=True)
class Timing:
    """How an exact replay kept the captured timing: every step's counts and
    how far fio's issues fell behind their captured times (µs)."""

    steps: Tuple[StepTiming, ...]
    lag_max_us: int
    lag_p99_us: int
    #: Where the capture's time 0 fell in fio's run (µs after its job
    #: started; 0 when the job started after it): fio's runtime less this
    #: is the replay's length.
    zero_us: int = 0


def issued_ms(prefix: str) -> Optional[np.ndarray]:
    """The times (ms since the job started) fio issued its reads and writes,
    from its submission-latency log (``write_lat_log=prefix``), sorted; None
    when fio wrote none or it cannot be read."""
    files = log_files(prefix, "slat")
    if len(files) != 1:
        return None
    try:
        with open(files[0], encoding="ascii") as fh:
            rows = parse_log(fh.read(), files[0])
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return np.sort(rows[(rows[:, 2] == 0) | (rows[:, 2] == 1), 0])


def _within(ordered: np.ndarray, lo: float, hi: float) -> int:
    """How many of the sorted ``ordered`` are in ``[lo, hi)``."""
    return int(np.searchsorted(ordered, hi, "left") - np.searchsorted(ordered, lo, "left"))


def timing(stamps: Sequence[int], issued: np.ndarray, windows: Sequence[Tuple[float, float]]) -> Optional[Timing]:
    """The replay's timing against the capture's: the k-th read or write fio
    issued (``issued``, ms since its job started) is the k-th of the capture
    (``stamps``, µs; fio issues them in the iolog's order), and fio's clock
    is set against the capture's by the I/O it issued earliest relative to
    its captured time (fio never issues one before its wait, so that one
    was on time, within the log's millisecond); each step's counts are
    taken over its ``windows`` (start s, duration s)."""
    cap = np.sort(np.asarray(stamps, dtype=np.float64))
    n = min(len(cap), len(issued))
    if n == 0 or not windows:
        return None
    rep = np.asarray(issued, dtype=np.float64) * 1000.0
    shift = float(np.max(cap[:n] - rep[:n]))  # fio's clock to the capture's
    rep = rep + shift
    lag = rep[:n] - cap[:n]
    out = []
    for k, (start, duration) in enumerate(windows):
        lo = 1e6 * start
        hi = 1e6 * (start + duration) if k + 1 < len(windows) else math.inf  # the last step keeps the late ones
        edge = _within(cap, lo - EDGE_US, lo + EDGE_US)
        if hi != math.inf:
            edge += _within(cap, max(lo + EDGE_US, hi - EDGE_US), hi + EDGE_US)
        out.append(StepTiming(_within(cap, lo, hi), _within(rep, lo, hi), edge))
    ordered = np.sort(lag)
    p99 = ordered[max(0, math.ceil(0.99 * n) - 1)]  # nearest rank
    return Timing(tuple(out), int(round(max(0.0, float(ordered[-1])))), int(round(max(0.0, float(p99)))),
                  int(round(max(0.0, -shift))))
