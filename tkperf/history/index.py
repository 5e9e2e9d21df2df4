"""An SQLite index of result files' headline figures, kept beside the results.

The XML files stay the truth and the index is a cache: it holds, per
file, its size, modification time and SHA-256, and what :func:`facts`
read from it (the device, when it started, every headline figure with its
window's spread).  Each :meth:`Index.update` reads and hashes every file;
a row is used only when size, time and hash all match, and a new or
changed file is parsed from the very bytes that were hashed; a file gone
from the directory leaves the index.  A file that is not a tkperf result
is remembered as such, so it is not parsed again until it changes.  The
index is rebuilt from scratch when its layout or tkperf's version changed,
or when it cannot be read (a damaged page, tables of another layout, not
a database at all).

The file itself is untrusted (it may sit in a directory others write):
:mod:`tkperf.history.indexfile` opens it without following links, trusts
only the caller's own file, waits for a writer's lock, lets SQLite work on
a private copy and puts the result back with an atomic rename.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import __version__, store, strictjson
from tkperf.errors import ResultFileError, TkperfError
from tkperf.history import folder, indexfile
from tkperf.kit import registry
from tkperf.model import noise, shown, stored
from tkperf.model.results import RunResult
from tkperf.simdrive import hostlimit
from tkperf.verdict import regression

#: The index's file name, in the results directory.
INDEX_NAME = ".tkperf-history.sqlite"
#: The layout of the tables; a change rebuilds the index.
INDEX_VERSION = "4"  # 3: the figures include every mean latency LAT measured; 4: the host's idle share

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
    error TEXT NOT NULL, started TEXT NOT NULL, device TEXT NOT NULL, label TEXT NOT NULL,
    firmware TEXT NOT NULL, quick INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS figures(
    path TEXT NOT NULL, ord INTEGER NOT NULL, test TEXT NOT NULL, figure TEXT NOT NULL,
    label TEXT NOT NULL, unit TEXT NOT NULL, better TEXT NOT NULL, text TEXT NOT NULL,
    value REAL NOT NULL, lo REAL, hi REAL, sd REAL, n INTEGER NOT NULL, steady INTEGER);
CREATE INDEX IF NOT EXISTS figures_by_path ON figures(path);
"""
WORK_NAME = "index.sqlite"


#: What a JUnit report (``tkperf check --junit``, a nightly job's junit.xml
#: beside its result) is recorded as: not a result, and not listed as skipped.
JUNIT = "a JUnit report (tkperf check --junit), not a tkperf result"
_JUNIT_ROOT = re.compile(rb"\s*(<\?xml[^>]*\?>\s*)?<testsuites?[\s>/]")


def is_junit(data: bytes) -> bool:
    """Whether the bytes begin as a JUnit report (root element testsuites or testsuite)."""
    return _JUNIT_ROOT.match(data[:4096]) is not None


@dataclass(frozen=True)
class FigureName:
    """Which headline figure of which test, and how it is shown."""

    test: str
    figure: str
    label: str
    unit: str
    better: str
    text: str


@dataclass(frozen=True)
class Spread:
    """A figure's value and the spread of its window values: ``lo``/``hi``/
    ``sd`` (None when the window has none), ``n`` of them, and whether the
    test was steady."""

    value: float
    lo: Optional[float]
    hi: Optional[float]
    sd: Optional[float]
    n: int
    steady: Optional[bool]


@dataclass(frozen=True)
class FigureRow(Spread, FigureName):
    """One headline figure of one test of one file (its name first, then its
    :class:`Spread`)."""


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
    """What one :meth:`Index.update` did, and what the directory's scan and
    the index file had to say."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: List[str] = field(default_factory=list)  # files that are not tkperf results
    links: int = 0  # links (dangling, looping or not) and other non-regular entries left out of a directory
    notes: List[str] = field(default_factory=list)  # one line each about the index file

    def as_dict(self) -> dict:
        return {"added": self.added, "changed": self.changed, "removed": self.removed,
                "unchanged": self.unchanged, "skipped": list(self.skipped), "links": self.links}


def device_key(run: RunResult) -> Tuple[str, str]:
    """(grouping key, label): by serial, else by the device's name."""
    d = run.device
    name = " ".join(x for x in (d.vendor, d.model) if x).strip() or d.path
    label = f"{name} (serial {d.serial})" if d.serial else name
    return (f"serial:{d.serial}" if d.serial else f"name:{name}"), label


def _finite(x: float) -> Optional[float]:
    return x if math.isfinite(x) else None


def facts(run: RunResult, path: str) -> FileFacts:
    """The device, start and headline figures (with their window spread) of
    a run.  A figure a test type computed as no finite number is left out
    (no trend or change point rests on it), and so are such window values
    and every test whose stored numbers are not in their ranges
    (:func:`tkperf.model.stored.check_test`).  A file whose options are not
    what a run stores is no result (:func:`tkperf.report.checked.check_run`,
    a ResultFileError), and its long texts are cut as ``show`` cuts them
    (:func:`tkperf.model.shown.bound_run`)."""
    from tkperf.report import checked  # the reading layer of show and check, the report's modules with it

    checked.check_run(run)
    shown.bound_run(run)
    key, label = device_key(run)
    rows: List[FigureRow] = []
    for test in run.tests:
        try:
            stored.check_counts(test)
            if registry.is_builtin(test.type):
                stored.check_test(test)
        except stored.StoredValueError:
            continue  # a stored number out of its range: as show leaves the test out, so does the index
        spread = noise.window_values(test, regression.figures)
        steady = None if test.steady is None else bool(test.steady.steady)
        for fig in regression.figures(test):
            if not math.isfinite(fig.value):
                continue
            vals = [v for v in spread.get(fig.key, []) if math.isfinite(v)]
            rows.append(FigureRow(test.key, fig.key, fig.label, fig.unit, fig.better, fig.text, fig.value,
                                  min(vals) if vals else None, max(vals) if vals else None,
                                  _finite(noise.stdev(vals)) if vals else None, len(vals) if vals else 1,
                                  steady))
    idle = host_idle(run)
    if idle is not None:
        rows.append(FigureRow(HOST_TEST, HOST_FIGURE, "emulated SSD idle share", "%", "", "{:.1f}", idle,
                              None, None, None, 1, None))
    return FileFacts(path, run.started, key, label, run.device.firmware, run.quick, tuple(rows))


#: The trend of the host's state: on tkperf's emulated SSD, the share of the
#: run the drive was idle (its ``simdrive_host`` facts), in percent.  A
#: loaded host keeps the drive idle more; a figure's change point at a step
#: of it may follow the host, not the drive (:mod:`tkperf.history.trends`).
HOST_TEST, HOST_FIGURE = "host", "simdrive_idle_share"


def host_idle(run: RunResult) -> Optional[float]:
    """The emulated SSD's idle share of the run in percent (None: not recorded)."""
    doc = run.facts.get(hostlimit.FACT) if isinstance(run.facts, dict) else None
    value = doc.get("idle_share") if isinstance(doc, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value) * 100.0


def _fresh(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    return db


#: What a sound index's tables look like (``sqlite_master``).
_LAYOUT = sorted(_fresh(":memory:").execute("SELECT type, name, sql FROM sqlite_master").fetchall())


def _unsound(db: sqlite3.Connection) -> str:
    """Why the database is not an index ("" when it is one)."""
    try:
        check = db.execute("PRAGMA quick_check").fetchall()
        if check != [("ok",)]:
            return "damaged: " + (" ".join(str(check[0][0]).split())[:120] if check else "no answer")
        if sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall()) != _LAYOUT:
            return "tables of another layout"
    except sqlite3.DatabaseError as exc:
        return " ".join(str(exc).split())[:120]
    return ""


def _older(db: sqlite3.Connection) -> bool:
    """Whether the database is an index of another layout version (an older tkperf's)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    except sqlite3.Error:
        return False
    return row is not None and row[0] != INDEX_VERSION


def _prepare(db: sqlite3.Connection) -> sqlite3.Connection:
    """The index's tables, emptied when written by another layout or tkperf."""
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
    absolute) finds its index valid.  :attr:`notes`: lines about the index
    file (not trusted, rebuilt, not updated); :attr:`kept`: the file is in
    use.  :meth:`close` puts a changed index back."""

    def __init__(self, path: Optional[str], base: Optional[str] = None,
                 wait_s: Optional[float] = None) -> None:
        self.path = path
        self.base = base
        self.notes: List[str] = []
        self.kept = False
        self._dir_fd: Optional[int] = None
        self._private: Optional[str] = None
        self._loaded = b""
        self.db = self._connect(path, wait_s)

    def _key(self, path: str) -> str:
        """The file's row name: its path (relative to ``base``); a path whose
        bytes are not UTF-8 (lone surrogates, which SQLite's text cannot
        hold) as a NUL, which no path holds, and the hex of its bytes."""
        key = os.path.relpath(path, self.base) if self.base is not None else path
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            return "\0" + os.fsencode(key).hex()
        return key

    def _real(self, key: str) -> str:
        if key.startswith("\0"):
            key = os.fsdecode(bytes.fromhex(key[1:]))
        return os.path.join(self.base, key) if self.base is not None else key

    def _memory(self) -> sqlite3.Connection:
        self.kept = False
        return _prepare(_fresh(":memory:"))

    def _connect(self, path: Optional[str], wait_s: Optional[float]) -> sqlite3.Connection:
        if path is None:
            return self._memory()
        directory, name = os.path.split(path)
        try:
            self._dir_fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return self._memory()
        loaded = indexfile.read_index(self._dir_fd, name, path, wait_s)
        if loaded.note:
            self.notes.append(loaded.note)
        if not loaded.writable:
            return self._memory()
        try:  # SQLite works on a private copy: no link, journal or lock beside the results
            self._private = tempfile.mkdtemp(prefix="tkperf-history-")
            work = os.path.join(self._private, WORK_NAME)
            with open(work, "xb") as fh:
                fh.write(loaded.data or b"")
        except OSError as exc:
            self.notes.append(f"{path}: no room for a working copy ({exc.strerror}); "
                              f"the history is built from the result files in memory")
            return self._memory()
        self._loaded = loaded.data or b""
        try:
            db = sqlite3.connect(work)
            why = (indexfile.cut_short(loaded.data) or _unsound(db)) if loaded.data else ""
            if why:
                if not _older(db):  # an older tkperf's index is rebuilt without a word
                    self.notes.append(f"{path}: not a readable index ({why}); rebuilt from the result files")
                db.close()
                os.unlink(work)
                db = sqlite3.connect(work)
            db.execute("PRAGMA journal_mode=DELETE")
            self.kept = True
            return _prepare(db)
        except (sqlite3.Error, OSError) as exc:
            self.notes.append(f"{path}: {exc}; the history is built from the result files in memory")
            return self._memory()

    def close(self) -> None:
        """Close the database; put a changed index back in place (atomically)."""
        try:
            if self.kept and self._private is not None and self._dir_fd is not None and self.path:
                self.db.commit()
                self.db.close()
                with open(os.path.join(self._private, WORK_NAME), "rb") as fh:
                    data = fh.read()
                if data != self._loaded:
                    done, note = indexfile.write_index(self._dir_fd, os.path.basename(self.path),
                                                       self.path, data)
                    self.kept = done
                    if note:
                        self.notes.append(note)
            else:
                self.db.close()
        except (OSError, sqlite3.Error) as exc:  # e.g. a full temporary directory
            self.kept = False
            self.notes.append(f"{self.path}: not updated ({getattr(exc, 'strerror', None) or exc}); "
                              f"the history is shown from memory")
        finally:
            if self._private is not None:
                shutil.rmtree(self._private, ignore_errors=True)
            if self._dir_fd is not None:
                os.close(self._dir_fd)
                self._dir_fd = None

    def update(self, paths: Sequence[str], strict: bool = False) -> UpdateStats:
        """Bring the index to ``paths``: read and hash every file, parse the
        new and changed ones, drop gone ones.  ``strict``: the paths were
        named one by one (a link is followed, a file that is not a result is
        an error) rather than found in a directory (a link is not opened,
        such a file is skipped)."""
        stats = UpdateStats()
        known = {p: (m, s, h, e) for p, m, s, h, e in
                 self.db.execute("SELECT path, mtime_ns, size, sha256, error FROM files")}
        wanted = {self._key(p): p for p in paths}
        with self.db:
            for gone in sorted(set(known) - set(wanted)):
                self._forget(gone)
                stats.removed += 1
            for key, path in wanted.items():
                old = known.get(key)
                try:
                    data, st = folder.read_result(path, follow=strict)
                except ResultFileError as exc:  # gone or swapped for a link since the scan
                    if old is not None:
                        self._forget(key)
                    self._skip(str(exc), path, strict, stats)
                    continue
                digest = hashlib.sha256(data).hexdigest()
                if old is not None and old[:3] == (st.st_mtime_ns, st.st_size, digest):
                    if old[3]:
                        self._skip(old[3], path, strict, stats)
                    else:
                        stats.unchanged += 1
                    continue
                if old is not None:
                    self._forget(key)
                error = self._read(path, key, st, data, digest)
                if error and is_junit(data):
                    self.db.execute("UPDATE files SET error = ? WHERE path = ?", (JUNIT, key))
                    error = JUNIT
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
            raise ResultFileError(error if error != JUNIT else f"{path}: {JUNIT}")
        if error != JUNIT:  # a night's own check report is not a stray file: not listed
            stats.skipped.append(path)

    def _forget(self, path: str) -> None:
        self.db.execute("DELETE FROM figures WHERE path = ?", (path,))
        self.db.execute("DELETE FROM files WHERE path = ?", (path,))

    def _read(self, path: str, key: str, st: os.stat_result, data: bytes, digest: str) -> str:
        """Index one file under ``key``; its error line when it is not a readable result."""
        try:
            f = facts(store.loads(data, path), path)
        except TkperfError as exc:
            error = strictjson.text(str(exc)) or "not a tkperf result"  # SQLite's text holds no lone surrogate
            self.db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, '', '', '', '', 0)",
                            (key, st.st_mtime_ns, st.st_size, digest, error))
            return error
        self.db.execute("INSERT INTO files VALUES (?, ?, ?, ?, '', ?, ?, ?, ?, ?)",
                        (key, st.st_mtime_ns, st.st_size, digest, f.started, f.device, f.label, f.firmware,
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
