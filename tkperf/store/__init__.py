"""The XML result file: dump, load, validate, atomic writes and appends.

The format and its versions are described in :mod:`tkperf.store.fileformat`;
this module is the front door: :func:`load`/:func:`loads` (any format this
tkperf reads), :func:`save`/:func:`dumps` and :class:`ResultWriter` (the
current one), written by :mod:`~tkperf.store.xml_write` and read by
:mod:`~tkperf.store.xml_read`.

Files of a newer version are refused with a clear message; format 1 files
are upgraded on load (:mod:`tkperf.store.legacy.format1`), and result files of the
original TKperf (2.x, 1.x), told apart by content, are read by
:mod:`tkperf.store.legacy.tkperf2_run`.  Files are parsed with
entity expansion, DTD loading and network access off; a DOCTYPE is refused
outright, since tkperf never writes one.  Reading streams: the XML Schema is
checked while the document is parsed and every round is turned into objects
and dropped from the tree at once; the series rows after the root are read
line by line into numpy columns (:func:`tkperf.model.series.parse_rows`),
and a torn last line -- a kill or power loss in the middle of an append --
is dropped.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List

from tkperf.errors import ResultFileError
from tkperf.model import ranges
from tkperf.model.files import atomic_write, ensure_dir, read_limited
from tkperf.model.results import RunResult
from tkperf.model.series import Series, parse_rows
from tkperf.store import seal
from tkperf.store.fileformat import FORMAT_VERSION, MAX_FILE_BYTES, SCHEMA_PATH, safe_parser, schema
from tkperf.store.legacy import format1, tkperf2, tkperf2_run
from tkperf.store.xml_read import check_head, parse_document, split_tail
from tkperf.store.xml_write import ResultWriter, dumps, series_id, to_element

__all__ = ["FORMAT_VERSION", "MAX_FILE_BYTES", "SCHEMA_PATH", "ResultWriter", "atomic_write",
           "dumps", "ensure_dir", "load", "loads", "parse_document", "safe_parser", "save",
           "schema", "series_id", "validate"]


def run_file(outdir: str, name: str, suffix: str = ".xml") -> str:
    """Where a run named ``name`` keeps its result (``.xml``) or log (``.log``)."""
    return os.path.join(outdir, f"{name}{suffix}")


class RunFiles:
    """The files of a run named ``name`` in ``outdir`` (a mixin for what
    has both): its result and its log."""

    name: str
    outdir: str

    @property
    def xml_path(self) -> str:
        return run_file(self.outdir, self.name)

    @property
    def log_path(self) -> str:
        return run_file(self.outdir, self.name, ".log")


def save(run: RunResult, path: str) -> None:
    """Write the whole file atomically (a :class:`ResultWriter` appending to
    ``path`` must save through its own :meth:`ResultWriter.save`)."""
    atomic_write(path, dumps(run))


#: What ``show`` and the report say of a file whose format records no
#: completeness (``integrity``), by format.
UNVERIFIED: Dict[str, str] = {
    "tkperf2": ("a result file of the original TKperf, which records no completeness: "
                "whether it was cut short cannot be told"),
    "1": ("written in tkperf result format 1, which records no completeness: "
        "a file cut short cannot be told from a whole one"),
    "2": ("written in tkperf result format 2, which records no completeness: "
        "series rows cut from its end cannot be told"),
}


def loads(data: bytes, source: str = "<data>") -> RunResult:
    """Parse, validate and read a result file's bytes (any format this tkperf
    reads; older ones are upgraded); every failure is a ResultFileError
    naming ``source``, a figure that is not a finite number in its range
    too (:func:`tkperf.model.ranges.check_run`).

    A file of the current format is whole when its closing record checks
    (:mod:`tkperf.store.seal`): one cut before it is refused, whatever the
    XML parser would forgive; rows appended after it are read up to a cut
    (a torn last row is dropped).  Of every format, a document without its
    root end tag is refused.  What is known of the file's completeness is
    in the run's ``integrity`` ("" for a whole file)."""
    if tkperf2.detect(data):
        run = tkperf2_run.loads(data, source)
        run.integrity = UNVERIFIED["tkperf2"]
        return ranges.check_run(run, source)
    head, tail, first_line = split_tail(data)
    version = check_head(head, source)
    if not _ascii_compatible(head):
        raise ResultFileError(f"{source}: not in UTF-8 (re-encoded by another tool?): tkperf writes and "
                              "reads its result files in UTF-8 only, so that what the file holds can be checked")
    if first_line == 0:  # no </tkperf>: told from the bytes, not from the parser's leniency
        raise seal.no_end_tag(data, source, "tkperf")
    if version == 1:
        run = format1.loads(data, source, version)
        run.integrity = UNVERIFIED["1"]
        return ranges.check_run(run, source)
    notes: List[str] = [] if version >= 3 else [UNVERIFIED[str(version)]]
    appended = b""
    appended_line = 0
    if version >= 3:
        sealed_end, record_end = seal.check(data, source, "result file", start=len(head))
        tail = data[len(head):sealed_end]
        appended = data[record_end:]
        appended_line = data.count(b"\n", 0, record_end) + 1
    declared: Dict[str, Series] = {}
    run = parse_document(head, source, schema(), declared=declared)
    if tail:
        parse_rows(tail, declared, source, first_line, dropped=notes)
    if appended:
        parse_rows(appended, declared, source, appended_line, checked=True, dropped=notes)
    run.integrity = "; ".join(notes)
    return ranges.check_run(run, source)


def cut_notes(run: RunResult) -> str:
    """What reading ``run``'s file found cut (a torn last row dropped ...),
    without the notes every file of an older format carries: "" when nothing was cut."""
    old = set(UNVERIFIED.values())
    return "; ".join(n for n in run.integrity.split("; ") if n and n not in old)


def _ascii_compatible(data: bytes) -> bool:
    """Whether ``data`` is in an encoding whose markup is ASCII bytes (UTF-8,
    which tkperf writes; not UTF-16 or UTF-32, with or without a byte order mark)."""
    start = data[:4]
    return b"\x00" not in start and not start.startswith((b"\xff\xfe", b"\xfe\xff"))


def load(path: str) -> RunResult:
    """Read a result file; a ResultFileError says plainly what is wrong with it."""
    return loads(read_bytes(path), path)


def _inside(path: str) -> str:
    """'; did you mean DIR/NAME.xml?' for a run's directory given where its
    result file is expected: the file a run writes there (``NAME/NAME.xml``),
    else the directory's only .xml file; '' when there is no such one."""
    if not os.path.isdir(path):
        return ""
    own = os.path.join(path, os.path.basename(os.path.normpath(path)) + ".xml")
    try:
        found = sorted(f for f in os.listdir(path) if f.endswith(".xml"))
    except OSError:
        return ""
    if os.path.isfile(own):
        return f"; did you mean {own}?"
    if len(found) == 1 and os.path.isfile(os.path.join(path, found[0])):
        return f"; did you mean {os.path.join(path, found[0])}?"
    return f"; it is a directory of {len(found)} .xml files" if found else "; it is a directory"


def read_bytes(path: str) -> bytes:
    """A result file's bytes: a regular file within the size limit, not
    read through another user's link (:func:`tkperf.model.files.read_limited`),
    or a ResultFileError saying why not."""
    if os.path.isdir(path):
        raise ResultFileError(f"{path}: not a regular file" + _inside(path))
    try:
        os.stat(path)
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from exc
    return read_limited(path, "", MAX_FILE_BYTES)


def validate(run: RunResult) -> List[str]:
    """Schema errors of the XML this run would be written as (empty when valid)."""
    root = to_element(run)
    sch = schema()
    if sch.validate(root):
        return []
    errors: Any = sch.error_log  # iterable, though lxml-stubs do not say so
    return [f"line {e.line}: {e.message}" for e in errors]
