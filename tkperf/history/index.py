"""An SQLite index of result files' headline figures, kept beside the results.

The XML files stay the truth: the index holds, per file, its size and
modification time and what :func:`facts` read from it (the device, when
it started, every headline figure with its window's spread).  Each
:meth:`Index.update` stats every file and reads only the new and changed
ones; a file gone from the directory leaves the index.  A file that is
not a tkperf result is remembered as such, so it is not parsed again
until it changes.  The index is rebuilt from scratch when its layout or
tkperf's version changed, or when it cannot be read.
"""
from __future__ import annotations

import contextlib
import math
import os
import sqlite3
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from tkperf import __version__
from tkperf.errors import ResultFileError, TkperfError
from tkperf.model import noise, store
from tkperf.verdict import regression
from tkperf.model.results import RunResult

#: The index's file name, in the results directory.
INDEX_NAME = ".tkperf-history.sqlite"
#: The layout of the tables; a change rebuilds the index.
INDEX_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    error TEXT NOT NULL, started TEXT NOT NULL, device TEXT NOT NULL, label TEXT NOT NULL,
    firmware TEXT NOT NULL, quick INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS figures(
    path TEXT NOT NULL, ord INTEGER NOT NULL, test TEXT NOT NULL, figure TEXT NOT NULL,
    label TEXT NOT NULL, unit TEXT NOT NULL, better TEXT NOT NULL, text TEXT NOT NULL,
    value REAL NOT NULL, lo REAL, hi REAL, sd REAL, n INTEGER NOT NULL, steady INTEGER);
CREATE INDEX IF NOT EXISTS figures_by_path ON figures(path);
"""


@dataclass(frozen=True)
class FigureRow:
    """One headline figure of one test of one file; ``lo``/``hi``/``sd`` of
    its window values (None when the window has none)."""

    test: str
    figure: str
    label: str
    unit: str
    better: str
    text: str
    value: float
    lo: Optional[float]
    hi: Optional[float]
    sd: Optional[float]
    n: int
    steady: Optional[bool]


@dataclass(frozen=True)
class FileFacts:
    """What the index keeps of one result file."""

    path: str
    started: str
    device: str   # the grouping key: 'serial:...' or 'name:...'
    label: str    # vendor, model, serial as the file gives them (untrusted text)
    firmware: str
    quick: bool
    figures: Tuple[FigureRow, ...] = ()


@dataclass
class UpdateStats:
    """What one :meth:`Index.update` did."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: List[str] = field(default_factory=list)  # files that are not tkperf results

    def as_dict(self) -> dict:
        return {"added": self.added, "changed": self.changed, "removed": self.removed,
                "unchanged": self.unchanged, "skipped": list(self.skipped)}


def device_key(run: RunResult) -> Tuple[str, str]:
    """(grouping key, label): by serial, else by the device's name."""
    d = run.device
    name = " ".join(x for x in (d.vendor, d.model) if x).strip() or d.path
    label = f"{name} (serial {d.serial})" if d.serial else name
    return (f"serial:{d.serial}" if d.serial else f"name:{name}"), label


def _finite(x: float) -> Optional[float]:
    return x if math.isfinite(x) else None


def facts(run: RunResult, path: str) -> FileFacts:
    """The device, start and headline figures (with their window spread) of a run."""
    key, label = device_key(run)
    rows: List[FigureRow] = []
    for test in run.tests:
        spread = noise.window_values(test, regression.figures)
        steady = None if test.steady is None else bool(test.steady.steady)
        for fig in regression.figures(test):
            vals = spread.get(fig.key)
            rows.append(FigureRow(test.key, fig.key, fig.label, fig.unit, fig.better, fig.text, fig.value,
                                  min(vals) if vals else None, max(vals) if vals else None,
                                  _finite(noise.stdev(vals)) if vals else None, len(vals) if vals else 1,
                                  steady))
    return FileFacts(path, run.started, key, label, run.device.firmware, run.quick, tuple(rows))


def _open(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    wanted = {"index_version": INDEX_VERSION, "tkperf_version": __version__}
    if meta != wanted:  # another layout or another tkperf: the figures may differ
        with db:
            db.execute("DELETE FROM figures")
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM meta")
            db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(wanted.items()))
    return db


class Index:
    """The index of one set of result files; ``path`` None keeps it in memory.
    With ``base`` (the results' directory) files are keyed by their path
    relative to it, so the same directory named another way (relative,
    absolute) finds its index valid."""

    def __init__(self, path: Optional[str], base: Optional[str] = None) -> None:
        self.path = path
        self.base = base
        self.db = self._connect(path)

    def _key(self, path: str) -> str:
        return os.path.relpath(path, self.base) if self.base is not None else path

    def _real(self, key: str) -> str:
        return os.path.join(self.base, key) if self.base is not None else key

    @staticmethod
    def _connect(path: Optional[str]) -> sqlite3.Connection:
        if path is None:
            return _open(":memory:")
        try:
            return _open(path)
        except sqlite3.DatabaseError:  # not an index (or a broken one): start afresh
            with contextlib.suppress(OSError):
                os.unlink(path)
            try:
                return _open(path)
            except sqlite3.Error:
                return _open(":memory:")
        except sqlite3.Error:  # e.g. a read-only directory: index in memory only
            return _open(":memory:")

    def close(self) -> None:
        self.db.close()

    def update(self, paths: Sequence[str], strict: bool = False) -> UpdateStats:
        """Bring the index to ``paths``: read new and changed files, drop gone
        ones.  ``strict``: a file that is not a result is an error (named files)
        rather than skipped (a directory's)."""
        stats = UpdateStats()
        known = {p: (m, s, e) for p, m, s, e in self.db.execute("SELECT path, mtime_ns, size, error FROM files")}
        wanted = {self._key(p): p for p in paths}
        with self.db:
            for gone in sorted(set(known) - set(wanted)):
                self._forget(gone)
                stats.removed += 1
            for key, path in wanted.items():
                st = os.stat(path)
                old = known.get(key)
                if old is not None and old[:2] == (st.st_mtime_ns, st.st_size):
                    if old[2]:
                        self._skip(old[2], path, strict, stats)
                    else:
                        stats.unchanged += 1
                    continue
                if old is not None:
                    self._forget(key)
                error = self._read(path, key, st)
                if error:
                    self._skip(error, path, strict, stats)
                elif old is None:
                    stats.added += 1
                else:
                    stats.changed += 1
        return stats

    @staticmethod
    def _skip(error: str, path: str, strict: bool, stats: UpdateStats) -> None:
        if strict:
            raise ResultFileError(error)
        stats.skipped.append(path)

    def _forget(self, path: str) -> None:
        self.db.execute("DELETE FROM figures WHERE path = ?", (path,))
        self.db.execute("DELETE FROM files WHERE path = ?", (path,))

    def _read(self, path: str, key: str, st: os.stat_result) -> str:
        """Index one file under ``key``; its error line when it is not a readable result."""
        try:
            f = facts(store.load(path), path)
        except TkperfError as exc:
            self.db.execute("INSERT INTO files VALUES (?, ?, ?, ?, '', '', '', '', 0)",
                            (key, st.st_mtime_ns, st.st_size, str(exc) or "not a tkperf result"))
            return str(exc) or "not a tkperf result"
        self.db.execute("INSERT INTO files VALUES (?, ?, ?, '', ?, ?, ?, ?, ?)",
                        (key, st.st_mtime_ns, st.st_size, f.started, f.device, f.label, f.firmware,
                         int(f.quick)))
        self.db.executemany(
            "INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(key, i, r.test, r.figure, r.label, r.unit, r.better, r.text, r.value, r.lo, r.hi, r.sd, r.n,
              None if r.steady is None else int(r.steady)) for i, r in enumerate(f.figures)])
        return ""

    def results(self) -> List[FileFacts]:
        """Every indexed result with its figures, in no particular order."""
        rows: Dict[str, List[FigureRow]] = {}
        for r in self.db.execute("SELECT path, test, figure, label, unit, better, text, value, lo, hi, sd, n, "
                                 "steady FROM figures ORDER BY path, ord"):
            fields_ = tuple(r[1:12]) + (None if r[12] is None else bool(r[12]),)
            rows.setdefault(r[0], []).append(FigureRow(*fields_))
        return [FileFacts(self._real(p), started, dev, label, fw, bool(quick), tuple(rows.get(p, ())))
                for p, started, dev, label, fw, quick in self.db.execute(
                    "SELECT path, started, device, label, firmware, quick FROM files WHERE error = ''")]


def scan(directory: str) -> Iterator[str]:
    """Every ``*.xml`` file under ``directory``, sorted; hidden folders left out."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(".xml"):
                yield os.path.join(root, name)
