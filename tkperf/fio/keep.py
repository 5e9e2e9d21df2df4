"""fio's own output, kept beside the result file for a user's own analysis.

Every fio invocation of a run on this host (a round, a WIPC, a stream)
leaves what fio printed -- its JSON report, or for a stream the JSON status
reports one after another -- gzip-compressed in ``OUTDIR/NAME.fio-json/``,
one file per invocation, numbered in the order fio ran::

    NAME.fio-json/0001-iops-wipc.json.gz
    NAME.fio-json/0002-iops-round-1.json.gz

The result file lists them in its facts (``facts["fio_output"]``)::

    {"dir": "NAME.fio-json",
     "files": [{"file": "0002-iops-round-1.json.gz", "what": "iops round 1",
                "format": "json", "started": "2026-...", "bytes": 31244}, ...]}

``format`` is ``json`` or ``json+`` (fio's ``--output-format``; json+ also
holds the latency bins) or ``json-stream`` (``--status-interval`` reports,
concatenated).  A file is written to a temporary name and renamed when fio
is done, so a file listed is always whole.  Keeping is best effort: a file
that cannot be written is a warning in the log, never a failed run.
"""
from __future__ import annotations

import contextlib
import glob
import gzip
import logging
import os
import re
from datetime import datetime, timezone
from typing import IO, Callable, Dict, Iterator, List, Optional

from tkperf.errors import OutputError
from tkperf.model import files

log = logging.getLogger("tkperf")

#: The key of ``RunResult.facts`` that lists the kept files.
FACT = "fio_output"
SUFFIX = ".fio-json"
_write = Callable[[str], None]


def directory_name(run_name: str) -> str:
    """``NAME.fio-json``: the folder beside ``NAME.xml``."""
    return f"{run_name}{SUFFIX}"


def _slug(what: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")[:60] or "fio"


class OutputKeeper:
    """Writes each fio invocation's output into ``directory`` and lists it in
    ``index`` (the dict stored as ``facts["fio_output"]``)."""

    def __init__(self, directory: str, index: Dict[str, object]) -> None:
        self.directory = directory
        self.index = index
        listed = index.setdefault("files", [])
        self.files: List[dict] = listed if isinstance(listed, list) else []
        index["files"] = self.files
        self._warned = False

    def _next_name(self, what: str) -> str:
        taken = [int(m.group(1)) for f in self.files if isinstance(f, dict)
                 for m in [re.match(r"(\d+)-", str(f.get("file", "")))] if m]
        return f"{max(taken, default=0) + 1:04d}-{_slug(what)}.json.gz"

    @contextlib.contextmanager
    def writer(self, what: str, fmt: str, started: Optional[str] = None) -> Iterator[_write]:
        """A function that appends fio's text to a new kept file; the file is
        listed when the ``with`` block ends, whatever ended it.  ``started``:
        when that fio run started (ISO 8601, UTC), for output kept after fio
        returned; default now (a stream opens its writer before fio starts)."""
        name = self._next_name(what)
        started = started or now_utc()
        out: Optional[_Gzip] = None
        try:
            out = _Gzip(self.directory, name)
        except (OSError, OutputError) as exc:
            self._warn(f"cannot keep fio's output of {what} in {self.directory}: {exc}")

        def write(text: str) -> None:
            nonlocal out
            if out is None or not text:
                return
            try:
                out.gz.write(text.encode("utf-8"))
                out.written = True
            except OSError as exc:
                self._warn(f"cannot keep fio's output of {what}: {exc.strerror or exc}")
                out.discard()
                out = None

        try:
            yield write
        finally:
            if out is not None and not out.written:  # fio never started: nothing to keep
                out.discard()
            elif out is not None:
                try:
                    size = out.commit()
                    self.files.append({"file": name, "what": what, "format": fmt, "started": started,
                                       "bytes": size})
                except OSError as exc:
                    out.discard()
                    self._warn(f"cannot keep fio's output of {what}: {exc.strerror or exc}")

    def _warn(self, message: str) -> None:
        if not self._warned:  # once per run: a full disk would say it for every round
            log.warning("%s (later failures are not logged)", message)
            self._warned = True


def now_utc() -> str:
    """The time now as a kept file's ``started`` stamp (ISO 8601, UTC, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _Gzip:
    """A gzip file written under a temporary name in a folder of ours (not a
    link someone planted) and renamed to ``name`` when whole."""

    raw: IO[bytes]
    tmp: str

    def __init__(self, directory: str, name: str) -> None:
        files.ensure_own_dir(directory, "fio output folder")
        self.final = os.path.join(directory, name)
        with files.temp_file(directory, name + ".") as (self.raw, self.tmp):  # what any new file gets
            self.gz = gzip.GzipFile(filename=name[:-3], mode="wb", compresslevel=6, fileobj=self.raw)
        self.written = False

    def commit(self) -> int:
        """Finish the file and give it its name; its size in bytes."""
        self.gz.close()
        self.raw.close()
        os.replace(self.tmp, self.final)
        return os.path.getsize(self.final)

    def discard(self) -> None:
        for close in (self.gz.close, self.raw.close):
            with contextlib.suppress(OSError, ValueError):
                close()
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


def attach(fio: object, facts: Dict[str, object], outdir: str, run_name: str, fresh: bool) -> None:
    """Keep the output of every fio invocation of ``fio`` (a back end that
    has a ``keeper``) in ``outdir/NAME.fio-json``, listed in ``facts``.  A
    fresh run starts the folder afresh (``--overwrite`` left an older run's);
    a resumed run goes on numbering after its saved files."""
    if not hasattr(fio, "keeper"):
        return
    directory = os.path.join(outdir, directory_name(run_name))
    found = facts.get(FACT)
    saved: Dict[str, object] = found if isinstance(found, dict) else {}
    fresh = fresh or not isinstance(found, dict)
    # an earlier run's files (--overwrite), or what a killed run left half-written
    for old in glob.glob(os.path.join(glob.escape(directory), "[0-9]*.json.gz" + ("*" if fresh else ".*.tmp"))):
        with contextlib.suppress(OSError):
            os.unlink(old)
    if fresh:
        saved = {}
    saved["dir"] = directory_name(run_name)
    facts[FACT] = saved
    fio.keeper = OutputKeeper(directory, saved)


def kept_path(result_path: str, facts: Dict[str, object], entry: Dict[str, object]) -> str:
    """Where the file of one entry of ``facts["fio_output"]["files"]`` is,
    for the result file at ``result_path`` (names from the file are taken as
    names only, never as paths out of its folder)."""
    found = facts.get(FACT)
    index: Dict[str, object] = found if isinstance(found, dict) else {}
    folder = os.path.basename(str(index.get("dir", "")))
    name = os.path.basename(str(entry.get("file", "")))
    return os.path.join(os.path.dirname(os.path.abspath(result_path)), folder, name)


def read_kept(path: str) -> bytes:
    """The text fio printed, from a kept file."""
    with gzip.open(path, "rb") as fh:
        return fh.read()
