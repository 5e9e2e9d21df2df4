"""blkparse's default text output (``blkparse -i DEV``) read into requests
(:class:`tkperf.rwsw.trace.Pairer`), for ``tkperf capture --import``.

The lines of actions ``D`` (issued), ``C`` (completed) and ``R`` (requeued)
are read; the summary and every other line are skipped.  Nothing of an
imported text is kept but numbers: process names, commands and any other
text in a line are not read, so an imported file cannot put markup or a
terminal control sequence anywhere.  Every number is checked against its
physical range as its line is read (:func:`event_numbers`).
"""
from __future__ import annotations

import re
from typing import IO, Optional, Tuple

from tkperf.errors import ResultFileError
from tkperf.rwsw import daylong
from tkperf.rwsw.trace import SECTOR, Pairer, Sink, request_kind

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
