"""What a whole file holds, recorded by its writer: the closing record.

How much an XML parser forgives changes between releases (lxml 6.2 reads
some documents cut short without an error where 6.1 refused them), so
tkperf never leaves a file's completeness to the parser.  Every file it
writes whole and later reads back as a whole (a result file at each save,
a capture) ends with one line, its *closing record*::

    <?tkperf-seal BYTES sha256:HEX?>

where ``BYTES`` is the number of bytes before that line and ``HEX`` the
SHA-256 digest of those bytes.  The line is an XML processing instruction,
so every XML tool still reads the file.  A reader finds the record, checks
that it stands at ``BYTES`` and that the digest matches, and only then
parses: a file cut at any byte before the record's end has no record (or a
torn one) and is refused in one line naming where it ends; a file changed
after the fact has a digest that does not match.

A result file also grows by rows appended after the record, one
``write`` each (:class:`tkperf.store.xml_write.ResultWriter`); the record
cannot cover them, so each carries its own check
(:func:`tkperf.model.series.format_row`).
"""
from __future__ import annotations

import hashlib
import re
from typing import Tuple

from tkperf.errors import ResultFileError

#: The processing instruction's target.
TARGET = b"tkperf-seal"
_RECORD = re.compile(rb"<\?tkperf-seal ([0-9]{1,15}) sha256:([0-9a-f]{64})\?>")
_START = b"<?" + TARGET + b" "


def record(body: bytes) -> bytes:
    """The closing record of ``body`` (with its newline)."""
    return b"<?tkperf-seal %d sha256:%s?>\n" % (len(body), hashlib.sha256(body).hexdigest().encode("ascii"))


def sealed(body: bytes) -> bytes:
    """``body`` followed by its closing record: what is written."""
    return body + record(body)


def find(data: bytes, start: int = 0) -> int:
    """Where the closing record's line starts in ``data`` (at or after
    ``start``, at the start of a line); -1 when there is none."""
    pos = data.find(b"\n" + _START, max(start - 1, 0))
    if pos >= 0:
        return pos + 1
    return 0 if start == 0 and data.startswith(_START) else -1


def where(data: bytes) -> str:
    """'the file ends at byte N' (for messages about a cut)."""
    return f"the file ends at byte {len(data):,}"


def no_end_tag(data: bytes, source: str, root: str) -> ResultFileError:
    """The error for a document whose root end tag ``</root>`` is not in its
    bytes: it was cut (told from the bytes, not from the parser's leniency)."""
    return ResultFileError(f"{source}: cut short: the document has no end tag </{root}> ({where(data)})")


def check(data: bytes, source: str, what: str, start: int = 0) -> Tuple[int, int]:
    """Find and check the closing record of ``data`` at or after ``start``:
    (where the sealed bytes end, where the record's line ends).  A missing,
    torn or second record, or one that does not match the bytes before it,
    is a ResultFileError naming ``source``, ``what`` it is and the cut."""
    pos = find(data, start)
    if pos < 0:
        raise ResultFileError(
            f"{source}: cut short: no closing record ({where(data)}; every {what} tkperf writes "
            "ends with one, so bytes are missing from its end)")
    m = _RECORD.match(data, pos)
    if m is None:
        raise ResultFileError(f"{source}: cut short or damaged: its closing record at byte {pos:,} "
                              f"is not whole ({where(data)})")
    end = m.end()
    if data[end:end + 1] == b"\n":
        end += 1
    elif end != len(data):
        raise ResultFileError(f"{source}: damaged: its closing record at byte {pos:,} does not end its line")
    count = int(m.group(1))
    if count != pos:
        raise ResultFileError(
            f"{source}: damaged: its closing record says {count:,} bytes come before it, "
            f"but it stands at byte {pos:,} (bytes {'missing' if pos < count else 'added'})")
    if hashlib.sha256(data[:pos]).hexdigest().encode("ascii") != m.group(2):
        raise ResultFileError(f"{source}: damaged: the first {pos:,} bytes do not match the digest "
                              "of its closing record (changed after tkperf wrote it)")
    if find(data, end) >= 0:
        raise ResultFileError(f"{source}: damaged: a second closing record follows the first")
    return pos, end
