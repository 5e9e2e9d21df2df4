"""A capture's I/Os (its iolog) mapped onto a target's range, for
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

The capture's iolog is fio's text (captures before tkperf packed them) or
tkperf's packed iolog (:mod:`tkperf.rwsw.packedlog`, some 4 to 8 bytes an
I/O where the text takes 40); :func:`actions` reads either, and the copy is
fio's text.  The file is untrusted input, opened without following another user's link
(:func:`tkperf.model.files.open_to_read`): every line must be a timestamp, a file name and
an action fio knows (every packed value in its range), or it is refused with one line
(:class:`~tkperf.errors.ResultFileError`).  Trims and syncs are left out
(counted), and so are I/Os longer than the span.
"""
from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from typing import IO, Iterator, Optional, Tuple

from tkperf.errors import ResultFileError
from tkperf.model.files import open_to_read
from tkperf.rwsw import packedlog

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


def _text_actions(fh: IO[str], src: str) -> Iterator[Tuple[int, str, int, int]]:
    """(µs, action, offset, length) of every action line of fio's text iolog ``fh``, checked; the
    end last (its time, ``close``, 0, 0)."""
    last = 0
    try:
        first = fh.readline(MAX_LINE).rstrip("\n")
        if first != HEADER:
            raise _fail(src, 1, f"not a fio version 3 iolog (first line {first[:40]!r})")
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
            if action not in IO_ACTIONS + DROPPED_ACTIONS:
                raise _fail(src, number, f"unknown I/O action {action[:20]!r}")
            if action in ("sync", "datasync"):
                yield stamp, action, 0, 0
                continue
            yield stamp, action, _int(parts[3], src, number, "offset"), _int(parts[4], src, number, "length")
    except UnicodeDecodeError:
        raise ResultFileError(f"{src}: not a text iolog (bytes outside ASCII)") from None
    yield last, "close", 0, 0


def _packed_actions(fh: IO[bytes], src: str) -> Iterator[Tuple[int, str, int, int]]:
    """The same of a packed iolog (:mod:`tkperf.rwsw.packedlog`)."""
    for usec, code, offset, length in packedlog.read_chunks(fh, src):
        if not code.size:
            yield int(usec[0]), "close", 0, 0
            return
        for t, a, o, n in zip(usec.tolist(), code.tolist(), offset.tolist(), length.tolist()):
            yield t, packedlog.ACTIONS[a], o, n


@contextlib.contextmanager
def actions(src: str) -> Iterator[Iterator[Tuple[int, str, int, int]]]:
    """The actions of the iolog ``src``, either kind (fio's text, tkperf's packed), opened without following
    another user's link: (µs since the start, action, offset, length) in issue order, checked as they are
    read, the end last (``close``); a ResultFileError names what is wrong."""
    fd = open_to_read(src, "iolog", ResultFileError)
    with open(fd, "rb") as raw:
        if packedlog.is_packed(raw.read(len(packedlog.MAGIC))):
            raw.seek(0)
            yield _packed_actions(raw, src)
            return
        raw.seek(0)
        with io.TextIOWrapper(raw, encoding="ascii", errors="strict", newline="\n") as fh:
            yield _text_actions(fh, src)


def map_iolog(src: str, dst: IO[str], target: str, span: int) -> Mapped:
    """Copy the iolog ``src`` (either kind) to ``dst`` as fio's text iolog with every I/O on ``target``
    within ``[0, span)``; returns the counts.  The target's name must be one word."""
    if not target or any(ch.isspace() for ch in target):
        raise ResultFileError(f"exact replay needs a target path without spaces, not {target!r}")
    if span < ALIGN:
        raise ResultFileError(f"exact replay needs a target range of at least {ALIGN} bytes")
    reads = writes = moved = dropped = largest = 0
    last = 0
    dst.write(f"{HEADER}\n0 {target} add\n0 {target} open\n")
    with actions(src) as found:
        for stamp, action, offset, length in found:
            last = stamp
            if action == "close":
                break
            if action in DROPPED_ACTIONS or length == 0 or length > span:
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
    dst.write(f"{last} {target} close\n")
    return Mapped(reads, writes, moved, dropped, span, last, largest)


def scan(src: str) -> Mapped:
    """What an iolog holds (its counts, length, longest I/O), without keeping a copy."""
    with open(os.devnull, "w", encoding="ascii") as sink:
        return map_iolog(src, sink, "target", 1 << 62)


def text_lines(src: str) -> Iterator[str]:
    """The iolog ``src`` (either kind) as fio's text iolog version 3, a line at a time (no newline): a
    packed iolog's file is ``rwsw.capture``, as a capture's text iolog names it."""
    fd = open_to_read(src, "iolog", ResultFileError)
    with open(fd, "rb") as raw:
        if packedlog.is_packed(raw.read(len(packedlog.MAGIC))):
            raw.seek(0)
            for piece in packedlog.text_lines(raw, src, "rwsw.capture"):
                yield from piece.splitlines()
            return
        raw.seek(0)
        for line in raw:
            yield line.decode("ascii", errors="replace").rstrip("\n")
