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

import os
import re
import struct
from array import array
from dataclasses import dataclass
from typing import IO, Dict, Iterator, Optional, Tuple

import numpy as np

from tkperf.errors import ToolError
from tkperf.rwsw.trace import IoTrace, Pairer, direction

CHUNK = struct.Struct("<II")
_FIELD = re.compile(r"field:[^;]*?(\w+)(?:\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);")
_PADDING, _TIME_EXTEND, _TIME_STAMP = 29, 30, 31
_TS_BITS = 59  # an absolute time stamp's width; the page's time stamp gives the bits above
_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")
KINDS = {"block_rq_issue": "issue", "block_rq_complete": "complete", "block_rq_requeue": "requeue"}
START, END = b"tkperf-capture-start", b"tkperf-capture-end"


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


def _records(page: bytes, layout: Layout) -> Iterator[Tuple[int, int, int]]:
    """(time stamp in ns, start, end) of every data event on one page."""
    (ts,) = _U64.unpack_from(page, 0)
    off, size = layout.commit
    commit = int.from_bytes(page[off:off + size], "little") & ((1 << 30) - 1)  # the lost-events flags off
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


def read_raw(fh: IO[bytes], layout: Layout, dev: int, first_sector: int = 0,
             sectors: Optional[int] = None) -> IoTrace:
    """The I/Os of a capture's raw file between its start and end marks."""
    times, kinds, writes, starts, counts = array("q"), array("b"), array("b"), array("Q"), array("Q")
    t0: Optional[int] = None
    t1: Optional[int] = None
    code = {"issue": 0, "complete": 1, "requeue": 2}
    while True:
        head = fh.read(CHUNK.size)
        if len(head) < CHUNK.size:
            break
        _cpu, length = CHUNK.unpack(head)
        data = fh.read(length)
        for pstart in range(0, len(data), layout.page_size):
            page = data[pstart:pstart + layout.page_size]
            if len(page) < layout.data:
                continue
            for ts, a, b in _records(page, layout):
                (ident,) = _U16.unpack_from(page, a)
                ev = layout.events.get(ident)
                if ev is None:
                    if ident == layout.marker:
                        text = page[a + layout.marker_buf:b]
                        if text.startswith(START):
                            t0 = ts
                        elif text.startswith(END):
                            t1 = ts
                    continue
                kind, o_dev, o_sector, o_nr, o_rwbs = ev
                if _U32.unpack_from(page, a + o_dev)[0] != dev:
                    continue
                w = direction(page[a + o_rwbs:a + o_rwbs + 10].split(b"\0", 1)[0])
                times.append(ts)
                kinds.append(code[kind])
                writes.append(-1 if w is None else int(w))
                starts.append(_U64.unpack_from(page, a + o_sector)[0])
                counts.append(_U32.unpack_from(page, a + o_nr)[0])
    p = Pairer(first_sector, sectors)
    names = ("issue", "complete", "requeue")
    order = np.argsort(np.frombuffer(times, dtype=np.int64) if times else np.zeros(0, np.int64), kind="stable")
    for lo in range(0, order.size, 1 << 20):  # Python's ints a million at a time: a long capture has many
        for i in order[lo:lo + (1 << 20)].tolist():
            d = writes[i]
            p.event(times[i] / 1e9, names[kinds[i]], None if d < 0 else bool(d), starts[i], counts[i])
    last = max(times) / 1e9 if times else 0.0
    return p.result(None if t0 is None else t0 / 1e9, None if t1 is None else t1 / 1e9, last)
