"""The binary pages of tracefs's ``per_cpu/cpuN/trace_pipe_raw`` read into I/Os.

Reading the events as binary pages costs the kernel no formatting: the
text of ``trace_pipe`` cost a capture some 40 times the CPU time
(measured on a loop device under fio, docs/rwsw.rst), which an
application under capture would lose.  The page and event layout is the
ring buffer's (Linux ``kernel/trace/ring_buffer.c``, public repository
torvalds/linux; described at run time by ``events/header_page`` and
``events/header_event``): a page is a 64-bit time stamp, a commit word (the
data's length; two high bits flag lost events), then events, each a 32-bit
header (5 bits type or length in words, 27 bits time delta in the trace
clock's nanoseconds) and its record.  Each event's fields stand where its
``format`` file says.

The file a capture writes holds each read's bytes behind an 8-byte header
(CPU number, length).
"""
from __future__ import annotations

import heapq
import os
import re
import struct
from array import array
from collections import deque
from dataclasses import dataclass
from typing import IO, Any, Deque, Dict, Iterator, Optional, Sequence, Tuple

from tkperf.errors import ToolError
from tkperf.rwsw.trace import Pairer, Sink, Span, request_kind

CHUNK = struct.Struct("<II")
_FIELD = re.compile(r"field:[^;]*?(\w+)(?:\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);")
_PADDING, _TIME_EXTEND, _TIME_STAMP = 29, 30, 31
_TS_BITS = 59  # an absolute time stamp's width; the page's time stamp gives the bits above
_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")
KINDS = {"block_rq_issue": "issue", "block_rq_complete": "complete", "block_rq_requeue": "requeue"}
START, END, DRAIN = b"tkperf-capture-start", b"tkperf-capture-end", b"tkperf-capture-drain"
#: An event is handed on once a drain's mark is this much later (ns): every CPU is read after the mark is
#: written, so only an event still being written then (microseconds, preemption off) can come in a later part.
MARGIN_NS = 10_000_000
#: Without drain marks (one lost), an event is handed on once the trace has gone this far past it (ns): a
#: drain reads every CPU in milliseconds, so no event of a later part is older than the latest of an earlier
#: one by more.
HOLD_NS = 500_000_000


def _fields(path: str) -> Dict[str, Tuple[int, int]]:
    """name -> (offset, size) from a tracefs ``format`` file."""
    with open(path, encoding="ascii", errors="replace") as fh:
        return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _FIELD.finditer(fh.read())}


@dataclass(frozen=True)
class Layout:
    """Where the fields are: the page header's, and each traced event's by its id."""

    commit: Tuple[int, int]             # offset, size of the commit word
    data: int                           # offset of the first event on a page
    page_size: int                      # a page's bytes, header and data
    events: Dict[int, Tuple[str, int, int, int, int]]  # id -> kind, dev, sector, nr_sector, rwbs offsets
    marker: int                         # the id of ftrace's print event (the trace_marker lines)
    marker_buf: int


def read_layout(root: str, instance: str) -> Layout:
    """The layout of this kernel's pages and events (``root``: the tracefs)."""
    try:
        page = _fields(os.path.join(root, "events", "header_page"))
        events = {}
        for name, kind in KINDS.items():
            base = os.path.join(instance, "events", "block", name)
            with open(os.path.join(base, "id"), encoding="ascii") as fh:
                ident = int(fh.read())
            f = _fields(os.path.join(base, "format"))
            events[ident] = (kind, f["dev"][0], f["sector"][0], f["nr_sector"][0], f["rwbs"][0])
        with open(os.path.join(root, "events", "ftrace", "print", "id"), encoding="ascii") as fh:
            marker = int(fh.read())
        buf = _fields(os.path.join(root, "events", "ftrace", "print", "format"))["buf"][0]
        return Layout(commit=page["commit"], data=page["data"][0], page_size=sum(page["data"]), events=events,
                      marker=marker, marker_buf=buf)
    except (OSError, KeyError, ValueError) as exc:
        raise ToolError(f"cannot read the layout of the kernel's trace events in {root}: {exc}") from None


def _missed(page: bytes, layout: Layout) -> Tuple[int, int]:
    """(the page's data length, the events lost just before it): the kernel
    flags a page read after lost events (bit 31 of the commit word) and
    stores their count behind its data when there is room (bit 30); lost
    events whose count was not stored count as one."""
    off, size = layout.commit
    raw = int.from_bytes(page[off:off + size], "little")
    commit = raw & ((1 << 30) - 1)
    lost = 0
    if raw & (1 << 30):
        at = layout.data + commit
        lost = _U64.unpack_from(page, at)[0] if at + 8 <= len(page) else 1
    elif raw & (1 << 31):
        lost = 1
    return commit, lost


def _records(page: bytes, layout: Layout) -> Iterator[Tuple[int, int, int]]:
    """(time stamp in ns, start, end) of every data event on one page."""
    (ts,) = _U64.unpack_from(page, 0)
    commit, _ = _missed(page, layout)
    pos, end = layout.data, min(layout.data + commit, len(page))
    while pos + 4 <= end:
        (head,) = _U32.unpack_from(page, pos)
        kind, delta = head & 0x1F, head >> 5
        if kind == _PADDING:
            if delta == 0:
                return  # the rest of the page is empty
            pos += 4 + _U32.unpack_from(page, pos + 4)[0]
        elif kind == _TIME_EXTEND:
            ts += delta + (_U32.unpack_from(page, pos + 4)[0] << 27)
            pos += 8
        elif kind == _TIME_STAMP:
            absolute = delta + (_U32.unpack_from(page, pos + 4)[0] << 27)
            ts = (ts & ~((1 << _TS_BITS) - 1)) | absolute
            pos += 8
        elif kind == 0:  # a long record: its length (itself included) in the next word
            length = _U32.unpack_from(page, pos + 4)[0]
            ts += delta
            yield ts, pos + 8, pos + 4 + length
            pos += 4 + length
        else:
            ts += delta
            yield ts, pos + 4, pos + 4 + 4 * kind
            pos += 4 + 4 * kind


def _reads(fh: IO[bytes], pos: int = 0) -> Iterator[Tuple[int, int, int]]:
    """(where, CPU, length) of each read the file holds from byte ``pos`` on; its pages follow its header."""
    while True:
        fh.seek(pos)
        head = fh.read(CHUNK.size)
        if len(head) < CHUNK.size:
            return
        cpu, length = CHUNK.unpack(head)
        yield pos, cpu, length
        pos += CHUNK.size + length


def _chunks(fh: IO[bytes]) -> Dict[int, array[int]]:
    """Per CPU, the spans of the file (start, end) that hold its reads one
    after another, in order (each CPU's pages are in time order; the CPUs'
    are merged later).  A drain reads every page a CPU holds in a row, so
    a span covers many pages: some 8 a second per CPU, whatever the I/O rate."""
    out: Dict[int, array] = {}
    last = -1
    for pos, cpu, length in _reads(fh):
        spans = out.setdefault(cpu, array("q"))
        end = pos + CHUNK.size + length
        if cpu == last:
            spans[-1] = end
        else:
            spans.extend((pos, end))
        last = cpu
    return out


_ISSUE, _COMPLETE, _REQUEUE, _START, _END, _LOST, _DRAIN = range(7)
_KIND_CODE = {"issue": _ISSUE, "complete": _COMPLETE, "requeue": _REQUEUE}
_NAMES = ("issue", "complete", "requeue")


def _events(fh: IO[bytes], spans: array[int], layout: Layout, devs: Dict[int, int],
            last: Dict[str, Optional[int]]) -> Iterator[Tuple[int, int, Any]]:
    """(time stamp, what, details) of one CPU's events, in time order.  A
    loss comes at the time of this CPU's last event before it (``last``,
    kept from one part of a recording to the next; the page's time when
    there is none), with the count lost and the time of the page after it
    (where they end), so the other CPUs' events in between are read knowing
    of it."""
    for c in range(0, len(spans), 2):
        pos = spans[c]
        while pos < spans[c + 1]:
            fh.seek(pos)
            _cpu, length = CHUNK.unpack(fh.read(CHUNK.size))
            data = fh.read(length)
            pos += CHUNK.size + length
            for ev in _page_events(data, layout, devs):
                if ev[1] == _LOST:  # told at the CPU's last event before it, with its end
                    yield (ev[0] if last["t"] is None else last["t"]), _LOST, (ev[2], ev[0])
                else:
                    last["t"] = ev[0]
                    yield ev


def _page_events(data: bytes, layout: Layout, devs: Dict[int, int]) -> Iterator[Tuple[int, int, Any]]:
    """The events of one read's pages, of the disks ``devs`` (dev_t -> the device's index)."""
    for pstart in range(0, len(data), layout.page_size):
        page = data[pstart:pstart + layout.page_size]
        if len(page) < layout.data:
            continue
        _, lost = _missed(page, layout)
        if lost:
            yield _U64.unpack_from(page, 0)[0], _LOST, lost
        for ts, a, b in _records(page, layout):
            (ident,) = _U16.unpack_from(page, a)
            ev = layout.events.get(ident)
            if ev is None:
                if ident == layout.marker:
                    text = page[a + layout.marker_buf:b]
                    if text.startswith(START):
                        yield ts, _START, None
                    elif text.startswith(END):
                        yield ts, _END, None
                    elif text.startswith(DRAIN):
                        yield ts, _DRAIN, None
                continue
            kind, o_dev, o_sector, o_nr, o_rwbs = ev
            index = devs.get(_U32.unpack_from(page, a + o_dev)[0])
            if index is None:
                continue
            yield ts, _KIND_CODE[kind], (request_kind(page[a + o_rwbs:a + o_rwbs + 10].split(b"\0", 1)[0]),
                                         _U64.unpack_from(page, a + o_sector)[0],
                                         _U32.unpack_from(page, a + o_nr)[0], index)


class Stream:
    """The requests of a recording handed to a sink as its parts come, each
    part a file of whole drains (:meth:`part`), then :meth:`finish`: what a
    capture analyses while it records, so its raw events need not wait on
    disk until the end.  Within a part every CPU's events are merged in time
    order.  Across parts: each drain first writes a mark, then reads every
    CPU, so the next part holds no event older than the mark of this part's
    last drain (but for one still being written then: :data:`MARGIN_NS`);
    the events after that line are held and merged with the next part's.
    Without the line (no mark found, or a part whose last drain is not
    known), an event is held until the trace has gone :data:`HOLD_NS` past
    it.  ``seconds``: the capture ends that long after its start mark at the
    latest (the end mark, written once the recorder wakes, is late by
    however long a loaded host kept it asleep: what was issued in between is
    outside the capture); an earlier end mark (a recording stopped early)
    ends it there.  ``devices``: the devices a capture records (each of its
    own disk, or one's part)."""

    def __init__(self, layout: Layout, sink: Sink, devices: Sequence[Span], seconds: Optional[float] = None) -> None:
        self.layout = layout
        self.pairer = Pairer(sink, auto_start=False, spans=devices)
        self.devs = {d.dev: i for i, d in enumerate(devices)}
        self.seconds = seconds
        self.until: Optional[float] = None     # the start mark's time plus ``seconds``
        self.last: Dict[int, Dict[str, Optional[int]]] = {}  # per CPU, its last event's time stamp
        self.held: Deque[Tuple[int, int, Any]] = deque()  # events held for the next part, in time order
        self.peak_held = 0                     # the most events held at once (memory follows it)

    def _line(self, fh: IO[bytes], tail: int) -> Optional[int]:
        """The time stamp before which no later part has an event: the mark of the drain whose reads begin at
        byte ``tail`` of the part, less :data:`MARGIN_NS`; None when it holds no mark."""
        mark = None
        for _pos, _cpu, length in _reads(fh, tail):  # each read's pages follow its header
            for ev in _page_events(fh.read(length), self.layout, {}):
                if ev[1] == _DRAIN:
                    mark = ev[0] if mark is None else max(mark, ev[0])
        return None if mark is None else mark - MARGIN_NS

    def part(self, fh: IO[bytes], tail: Optional[int] = None, last: bool = False) -> None:
        """Read one part of the recording (whole drains, in the order recorded); ``tail``: where its last
        drain's reads begin in it, when known; ``last``: no part follows (nothing is held)."""
        line = self._line(fh, tail) if tail is not None else None
        if last:
            line = 1 << 64  # later than any time stamp
        spans = _chunks(fh)
        for cpu in spans:
            self.last.setdefault(cpu, {"t": None})
        before, self.held = self.held, deque()
        merged = heapq.merge(before, *(_events(fh, s, self.layout, self.devs, self.last[cpu])
                                       for cpu, s in spans.items()), key=lambda e: e[0])
        held, hand = self.held, self._hand
        for ev in merged:
            if ev[1] == _DRAIN:
                continue
            if line is not None and ev[0] < line:  # in time order: nothing is held yet
                hand(ev)
                continue
            held.append(ev)
            while held[0][0] < ev[0] - HOLD_NS:
                hand(held.popleft())
            if len(held) > self.peak_held:
                self.peak_held = len(held)

    def finish(self) -> Pairer:
        """Hand on every event still held; the pairer (its counts)."""
        while self.held:
            self._hand(self.held.popleft())
        self.pairer.finish()
        return self.pairer

    def _hand(self, ev: Tuple[int, int, Any]) -> None:
        ts, what, info = ev
        t = ts / 1e9
        p = self.pairer
        if self.until is not None and t > self.until:
            p.end(self.until)  # once: the first end wins (Pairer.end)
        if what <= _REQUEUE:
            p.event(t, _NAMES[what], info[0], info[1], info[2], info[3])
        elif what == _START:
            p.start(t)
            if self.seconds is not None and p.t0 == t:
                self.until = t + self.seconds
        elif what == _END:
            p.end(t)
        else:
            p.missed(info[1] / 1e9, info[0], t)


def read_raw(fh: IO[bytes], layout: Layout, dev: int, sink: Sink, first_sector: int = 0,
             sectors: Optional[int] = None, seconds: Optional[float] = None, devices: Sequence[Span] = ()) -> Pairer:
    """Hand the requests of a recording's raw file, whole, between its start
    and end marks to ``sink`` (:class:`Stream`); returns the pairer (its
    counts).  ``devices``: the devices of a capture of several (each of its
    own disk), in place of ``dev``, ``first_sector`` and ``sectors``."""
    stream = Stream(layout, sink, tuple(devices) or (Span(dev, first_sector, sectors, 0),), seconds)
    stream.part(fh, last=True)
    return stream.finish()
