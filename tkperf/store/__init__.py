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


def loads(data: bytes, source: str = "<data>") -> RunResult:
    """Parse, validate and read a result file's bytes (any format this tkperf
    reads; older ones are upgraded); every failure is a ResultFileError
    naming ``source``, a figure that is not a finite number in its range
    too (:func:`tkperf.model.ranges.check_run`)."""
    if tkperf2.detect(data):
        return ranges.check_run(tkperf2_run.loads(data, source), source)
    version = check_head(data, source)
    if version < FORMAT_VERSION:
        return ranges.check_run(format1.loads(data, source, version), source)
    head, tail, first_line = split_tail(data)
    declared: Dict[str, Series] = {}
    run = parse_document(head, source, schema(), declared=declared)
    if tail:
        parse_rows(tail, declared, source, first_line)
    return ranges.check_run(run, source)


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
