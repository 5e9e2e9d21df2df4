"""A capture's I/Os (fio iolog version 3) mapped onto a target's range, for
``replay --replay exact`` (docs/rwsw-tests.rst, "Exact replay").

The capture's iolog names the captured device and holds byte offsets on it.
The mapped copy names the target instead (so no ``replay_redirect`` is
needed; the copy adds and opens the target first and closes it last,
whatever file actions the capture holds) and moves every I/O into the target's range ``[0, span)``: an
offset within the range stays where it is; one beyond it wraps around
(offset modulo the span), which keeps runs of sequential I/Os sequential;
an I/O that would end past the span is moved back so it ends at the span
(aligned down to 4 KiB).  Timestamps are kept (microseconds since the
capture's start), so fio replays the capture's own timing.

The file is untrusted input, opened without following another user's link
(:func:`tkperf.model.files.open_to_read`): every line must be a timestamp, a file name and
an action fio knows, or it is refused with one line
(:class:`~tkperf.errors.ResultFileError`).  Trims and syncs are left out
(counted), and so are I/Os longer than the span.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO, Optional

from tkperf.errors import ResultFileError
from tkperf.model.files import open_to_read

HEADER = "fio version 3 iolog"
IO_ACTIONS = ("read", "write")
DROPPED_ACTIONS = ("trim", "sync", "datasync")
FILE_ACTIONS = ("add", "open", "close")
ALIGN = 4096
#: A line longer than this is not an iolog line.
MAX_LINE = 4096


@dataclass(frozen=True)
class Mapped:
    """What mapping an iolog did: its I/O counts and the span it mapped onto."""

    reads: int
    writes: int
    #: I/Os moved (wrapped or pulled back) to fit the span.
    moved: int
    #: Trims, syncs and I/Os longer than the span, left out.
    dropped: int
    span: int
    #: The last timestamp, in microseconds (the replay's length when timed).
    last_us: int
    #: The longest I/O in bytes.
    largest: int = 0

    @property
    def ios(self) -> int:
        return self.reads + self.writes


def iolog_path(capture_path: str, name: Optional[str]) -> Optional[str]:
    """The iolog file of a capture (its ``iolog`` is a plain name beside the XML), or None."""
    if not name:
        return None
    return os.path.join(os.path.dirname(os.path.abspath(capture_path)), name)


def check_readable(path: str) -> None:
    """A ResultFileError unless ``path`` is a regular file tkperf may read (not
    through another user's link, not a FIFO: :func:`tkperf.model.files.open_to_read`)."""
    os.close(open_to_read(path, "iolog", ResultFileError))


def place(offset: int, length: int, span: int) -> int:
    """Where an I/O of ``length`` bytes at ``offset`` lands in ``[0, span)``."""
    if offset + length <= span:
        return offset
    moved = offset % span
    if moved + length > span:
        moved = (span - length) // ALIGN * ALIGN
    return max(0, moved)


def _fail(path: str, number: int, why: str) -> ResultFileError:
    return ResultFileError(f"{path}: line {number}: {why}")


def _int(text: str, path: str, number: int, what: str) -> int:
    if not text.isdigit() or len(text) > 20:
        raise _fail(path, number, f"{what} {text[:30]!r} is not a whole number")
    return int(text)


def map_iolog(src: str, dst: IO[str], target: str, span: int) -> Mapped:
    """Copy the iolog ``src`` to ``dst`` with every I/O on ``target`` within
    ``[0, span)``; returns the counts.  The target's name must be one word."""
    if not target or any(ch.isspace() for ch in target):
        raise ResultFileError(f"exact replay needs a target path without spaces, not {target!r}")
    if span < ALIGN:
        raise ResultFileError(f"exact replay needs a target range of at least {ALIGN} bytes")
    reads = writes = moved = dropped = largest = 0
    last = 0
    fd = open_to_read(src, "iolog", ResultFileError)
    with open(fd, encoding="ascii", errors="strict", newline="\n") as fh:
        try:
            first = fh.readline(MAX_LINE).rstrip("\n")
            if first != HEADER:
                raise _fail(src, 1, f"not a fio version 3 iolog (first line {first[:40]!r})")
            dst.write(f"{HEADER}\n0 {target} add\n0 {target} open\n")
            for number, line in enumerate(fh, 2):
                if len(line) > MAX_LINE:
                    raise _fail(src, number, "too long for an iolog line")
                parts = line.split()
                if not parts:
                    continue
                if len(parts) not in (3, 5):
                    raise _fail(src, number, "not 'timestamp file action [offset length]'")
                stamp = _int(parts[0], src, number, "timestamp")
                if stamp < last:
                    raise _fail(src, number, "timestamps go backwards")
                last = stamp
                action = parts[2]
                if len(parts) == 3:
                    if action not in FILE_ACTIONS:
                        raise _fail(src, number, f"unknown file action {action[:20]!r}")
                    continue  # the copy opens and closes the target itself
                if action in DROPPED_ACTIONS:
                    dropped += 1
                    continue
                if action not in IO_ACTIONS:
                    raise _fail(src, number, f"unknown I/O action {action[:20]!r}")
                offset = _int(parts[3], src, number, "offset")
                length = _int(parts[4], src, number, "length")
                if length == 0 or length > span:
                    dropped += 1
                    continue
                largest = max(largest, length)
                where = place(offset, length, span)
                moved += where != offset
                if action == "read":
                    reads += 1
                else:
                    writes += 1
                dst.write(f"{stamp} {target} {action} {where} {length}\n")
        except UnicodeDecodeError:
            raise ResultFileError(f"{src}: not a text iolog (bytes outside ASCII)") from None
    dst.write(f"{last} {target} close\n")
    return Mapped(reads, writes, moved, dropped, span, last, largest)


def scan(src: str) -> Mapped:
    """What an iolog holds (its counts, length, longest I/O), without keeping a copy."""
    with open(os.devnull, "w", encoding="ascii") as sink:
        return map_iolog(src, sink, "target", 1 << 62)
