"""Series: columns of figures measured step by step (one row per interval),
and the one-line text form their rows take in the result file.

A :class:`Series` keeps its rows as numpy float64 columns that grow by
doubling, so appending a row costs the same however long the series, and a
column is a numpy view with no copy.  Values are rounded as they come
(:data:`DIGITS` significant digits; whole numbers stay exact), so what is in
memory is exactly what the file says and a save/load round trip is exact.

In the result file (format 2) a series is declared inside its ``<test>``
and its rows follow the root element's end tag, one processing instruction
a line (:func:`format_row`, :func:`parse_rows`)::

    <?tkperf-row wsat.intervals 1 1.0012 1.0004 45321 185636864 45321.125 705.312?>

series id, 1-based row index, one number per column.  A row with the index
of the row before it replaces that row; a last line without its newline
(a kill or a power loss in the middle of an append) is dropped on reading.

Since format 3 the rows a full save writes are covered by the file's
closing record (:mod:`tkperf.store.seal`), and a row appended after it
carries its own check, the CRC-32 of the line before it as a last token
``c`` + 8 hex digits (:func:`format_row` with ``check=True``)::

    <?tkperf-row wsat.intervals 2 1.0008 1.0002 45120 184811520 45120.5 707.1 c1f0e33a2?>

so a row that a cut or a stray write changed is told from a whole one.

This module knows nothing of XML libraries: the store parses the document,
this module the rows.
"""
from __future__ import annotations

import math
import re
import zlib
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tkperf.errors import ResultFileError

#: Significant digits a float keeps when it enters a series (whole numbers
#: are kept exactly): 8 digits are 0.001 IOPS below 100,000 IOPS, 10 ns of a
#: second -- far finer than fio's millisecond run times measure.
DIGITS = 8

#: Rows a new series has room for before it first grows.
INITIAL_ROWS = 64

#: A series id or name, and a column name: what can stand in a row's
#: space-separated text and in an XML attribute without escaping.
TOKEN_RE = re.compile(r"[A-Za-z0-9_.:+@-]+")
COLUMN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")

ROW_TARGET = b"tkperf-row"
_MAX_EXACT = float(2 ** 53)


def round_value(value: float, digits: Optional[int] = DIGITS) -> float:
    """``value`` as a series keeps it: whole numbers exact, other finite
    values rounded to ``digits`` significant digits (None: unrounded)."""
    v = float(value)
    if digits is None or v.is_integer() or not math.isfinite(v):
        return v
    return float(format(v, f".{digits}g"))


class Series:
    """Named columns of float64 rows, appended one at a time.

    ``digits`` rounds what :meth:`append` and :meth:`set_row` store (None:
    kept as given, as an upgraded older file's values are).
    """

    __slots__ = ("name", "columns", "digits", "_data", "_len", "_pos")

    def __init__(self, name: str, columns: Sequence[str], digits: Optional[int] = DIGITS,
                 capacity: int = INITIAL_ROWS) -> None:
        if not TOKEN_RE.fullmatch(name or ""):
            raise ValueError(f"series name {name!r} is not a word of letters, digits and _.:+@-")
        cols = tuple(columns)
        if not cols:
            raise ValueError(f"series {name!r} has no columns")
        for c in cols:
            if not isinstance(c, str) or not COLUMN_RE.fullmatch(c):
                raise ValueError(f"series {name!r}: column name {c!r} is not a word")
        if len(set(cols)) != len(cols):
            raise ValueError(f"series {name!r}: a column name is repeated")
        self.name = name
        self.columns: Tuple[str, ...] = cols
        self.digits = digits
        self._data = np.empty((len(cols), max(int(capacity), 1)), dtype=np.float64)
        self._len = 0
        self._pos = {c: i for i, c in enumerate(cols)}

    # --- building ------------------------------------------------------------
    @classmethod
    def from_rows(cls, name: str, columns: Sequence[str], rows, digits: Optional[int] = DIGITS) -> Series:
        """A series holding ``rows`` (a (n, columns) array or sequence of rows)
        exactly as given: no rounding (they are already what a file says)."""
        s = cls(name, columns, digits)
        arr = np.asarray(rows, dtype=np.float64)
        if arr.size:
            s.extend_exact(arr)
        return s

    def _grow(self, needed: int) -> None:
        cap = self._data.shape[1]
        if needed <= cap:
            return
        new = np.empty((self._data.shape[0], max(needed, cap * 2)), dtype=np.float64)
        new[:, : self._len] = self._data[:, : self._len]
        self._data = new

    def _clean(self, values: Sequence[float]) -> List[float]:
        if len(values) != len(self.columns):
            raise ValueError(f"series {self.name!r}: {len(values)} values for "
                             f"{len(self.columns)} columns ({' '.join(self.columns)})")
        d = self.digits
        return [round_value(v, d) for v in values]

    def append(self, values: Sequence[float]) -> int:
        """Add a row (rounded); returns its 1-based index."""
        row = self._clean(values)
        n = self._len
        if n == self._data.shape[1]:
            self._grow(n + 1)
        self._data[:, n] = row
        self._len = n + 1
        return n + 1

    def set_row(self, index: int, values: Sequence[float]) -> bool:
        """Row ``index`` (1-based): the next one (appended) or the last one
        (replaced; returns True).  Any other index is a ValueError."""
        if index == self._len + 1:
            self.append(values)
            return False
        if index == self._len and index >= 1:
            self._data[:, index - 1] = self._clean(values)
            return True
        raise ValueError(f"series {self.name!r} has {self._len} rows: row {index} can only be "
                         f"{self._len} (replace the last) or {self._len + 1} (append)")

    def extend_exact(self, rows: np.ndarray) -> None:
        """Append a block of rows, shape (n, columns), as they are (no rounding)."""
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(self.columns):
            raise ValueError(f"series {self.name!r}: rows of shape {rows.shape} for "
                             f"{len(self.columns)} columns")
        n = rows.shape[0]
        self._grow(self._len + n)
        self._data[:, self._len: self._len + n] = rows.T
        self._len += n

    def replace_last_exact(self, values: Sequence[float]) -> None:
        """Overwrite the last row as given (no rounding)."""
        if not self._len:
            raise ValueError(f"series {self.name!r} has no row to replace")
        self._data[:, self._len - 1] = values

    # --- reading -------------------------------------------------------------
    def __len__(self) -> int:
        return self._len

    @property
    def width(self) -> int:
        return len(self.columns)

    def column(self, name: str) -> np.ndarray:
        """The filled part of one column: a read-only view, no copy."""
        try:
            i = self._pos[name]
        except KeyError:
            raise KeyError(f"series {self.name!r} has no column {name!r} "
                           f"(it has {' '.join(self.columns)})") from None
        view = self._data[i, : self._len]
        view.flags.writeable = False
        return view

    def row(self, i: int) -> Tuple[float, ...]:
        """Row ``i`` counted from 0 (negative from the end), as Python floats."""
        n = self._len
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"series {self.name!r} has {n} rows, no row {i}")
        return tuple(self._data[:, j].tolist())

    def rows(self, chunk: int = 4096) -> Iterator[Tuple[float, ...]]:
        """Every row in order, as tuples of Python floats."""
        n = self._len
        for start in range(0, n, chunk):
            for r in self._data[:, start: min(start + chunk, n)].T.tolist():
                yield tuple(r)

    def to_array(self) -> np.ndarray:
        """A copy of the filled rows, shape (rows, columns)."""
        return self._data[:, : self._len].T.copy()

    def as_dict(self) -> Dict[str, np.ndarray]:
        return {c: self.column(c) for c in self.columns}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Series):
            return NotImplemented
        return (self.name == other.name and self.columns == other.columns and self._len == other._len
                and bool(np.array_equal(self._data[:, : self._len], other._data[:, : other._len],
                                        equal_nan=True)))

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Series({self.name!r}, {' '.join(self.columns)!r}, {self._len} rows)"

    def __getstate__(self):
        return (self.name, self.columns, self.digits, self.to_array())

    def __setstate__(self, state) -> None:
        name, columns, digits, arr = state
        Series.__init__(self, name, columns, digits, max(len(arr), 1))
        if len(arr):
            self.extend_exact(arr)


# --- the row codec -------------------------------------------------------------

def format_value(value: float) -> str:
    """Whole numbers as integers, other values in the shortest form that
    reads back to the same float."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    v = float(value)
    if v.is_integer() and abs(v) < _MAX_EXACT:
        return str(int(v))
    return repr(v)


def check_id(series_id: str) -> str:
    if not isinstance(series_id, str) or not TOKEN_RE.fullmatch(series_id):
        raise ValueError(f"series id {series_id!r} is not a word of letters, digits and _.:+@-")
    return series_id


def format_row(series_id: str, index: int, values: Sequence[float], check: bool = False) -> bytes:
    """One row as its line in the result file (with the newline); with
    ``check``, the line's CRC-32 as its last token (a row appended after
    the file's closing record)."""
    check_id(series_id)
    if int(index) < 1:
        raise ValueError(f"series {series_id}: row index {index} (rows count from 1)")
    text = f"<?tkperf-row {series_id} {index:d} {' '.join(map(format_value, values))}".encode("ascii")
    if check:
        text += b" c%08x" % zlib.crc32(text)
    return text + b"?>\n"


_CHECK_RE = re.compile(rb" c([0-9a-f]{8})\?>\Z")


def _checked(line: bytes) -> Optional[bytes]:
    """The row ``line`` without its check token when the check matches, else None."""
    m = _CHECK_RE.search(line)
    if m is None or zlib.crc32(line[:m.start()]) != int(m.group(1), 16):
        return None
    return line[:m.start()] + b"?>"


def format_rows(series_id: str, series: Series, chunk: int = 4096) -> bytes:
    """Every row of ``series`` as lines (a full save), made a block at a time."""
    check_id(series_id)
    fv = format_value
    head = f"<?tkperf-row {series_id} "
    out = bytearray()
    rows = series.rows(chunk)
    for start in range(1, len(series) + 1, chunk):
        out += "".join(f"{head}{i} {' '.join(map(fv, r))}?>\n"
                       for i, r in zip(range(start, start + chunk), rows)).encode("ascii")
    return bytes(out)


class _Pending:
    """Rows of one series read but not yet converted to floats."""

    __slots__ = ("series", "width", "count", "tokens", "lines")

    def __init__(self, series: Series) -> None:
        self.series = series
        self.width = series.width
        self.count = len(series)
        self.tokens: List[bytes] = []
        self.lines: List[int] = []


#: Rows converted to floats at a time while reading (bounds the memory of
#: not-yet-converted text).
FLUSH_ROWS = 8192


def _flush(p: _Pending, source: str) -> None:
    if not p.lines:
        return
    try:
        block = np.array(p.tokens, dtype=np.float64)
    except ValueError:
        w = p.width
        for k, line in enumerate(p.lines):
            for tok in p.tokens[k * w: (k + 1) * w]:
                try:
                    float(tok)
                except ValueError:
                    raise ResultFileError(
                        f"{source}: line {line}: bad series row: "
                        f"{tok.decode('ascii', 'replace')!r} is not a number") from None
        raise  # pragma: no cover - numpy and float() disagree
    p.series.extend_exact(block.reshape(len(p.lines), p.width))
    p.tokens = []
    p.lines = []


def _whole_lines(tail: bytes, first_line: int, checked: bool, dropped: Optional[List[str]]) -> List[bytes]:
    """The lines of ``tail`` without a torn last one (nor the NUL bytes a
    power loss leaves), what was dropped said in ``dropped``."""
    body = tail.rstrip(b"\x00")
    last = body.rfind(b"\n")
    torn = body[last + 1:]
    body = body[: last + 1]
    lines = body.split(b"\n")
    lines.pop()  # the empty piece after the final newline
    t = torn.strip()
    # A complete row that lost only its newline is kept; anything less is torn.
    if t and t.startswith(b"<?") and t.endswith(b"?>") and b"\x00" not in t \
            and (not checked or _checked(t) is not None):
        lines.append(t)
    elif t and dropped is not None:
        dropped.append(f"a torn last row ({len(torn):,} bytes, line {first_line + len(lines)}) "
                       "was dropped: the file was cut there")
    elif dropped is not None and tail[len(body):].strip(b"\n \t"):
        dropped.append(f"{len(tail) - len(body):,} NUL bytes after the last row (what a power loss "
                       "leaves) were dropped")
    return lines


def _row_parts(line: bytes, lineno: int, source: str, checked: bool) -> List[bytes]:
    """A row's words (``tkperf-row``, the series, the index, the values),
    its check verified with ``checked``; a line that is no row is refused."""
    if not (line.startswith(b"<?") and line.endswith(b"?>")):
        raise ResultFileError(f"{source}: line {lineno}: after </tkperf> only series rows "
                              f"(<?tkperf-row ...?>) may follow")
    if checked:
        whole = _checked(line)
        if whole is None:
            raise ResultFileError(f"{source}: line {lineno}: damaged series row: its check "
                                  "does not match (or it has none)")
        line = whole
    parts = line[2:-2].split()
    if len(parts) < 3 or parts[0] != ROW_TARGET:
        raise ResultFileError(f"{source}: line {lineno}: bad series row: expected "
                              f"<?tkperf-row SERIES INDEX VALUES...?>")
    return parts


def _add_row(p: _Pending, parts: List[bytes], lineno: int, source: str) -> None:
    """One row's values into its series: the next row, or one that replaces
    the last; any other index, or a wrong count of values, is refused."""
    try:
        index = int(parts[2])
    except ValueError:
        raise ResultFileError(f"{source}: line {lineno}: bad series row: index "
                              f"{parts[2].decode('ascii', 'replace')!r} is not a whole number") from None
    values = parts[3:]
    if len(values) != p.width:
        raise ResultFileError(f"{source}: line {lineno}: bad series row: {len(values)} values "
                              f"for the {p.width} columns of {p.series.name!r}")
    if index == p.count + 1:
        p.tokens.extend(values)
        p.lines.append(lineno)
        p.count = index
        if len(p.lines) >= FLUSH_ROWS:
            _flush(p, source)
    elif index == p.count and index >= 1:
        if p.lines:
            p.tokens[-p.width:] = values
            p.lines[-1] = lineno
        else:  # the row it replaces is converted already
            try:
                p.series.replace_last_exact([float(v) for v in values])
            except ValueError:
                raise ResultFileError(f"{source}: line {lineno}: bad series row: "
                                      f"a value is not a number") from None
    else:
        raise ResultFileError(f"{source}: line {lineno}: row {index} of series "
                              f"{parts[1].decode('ascii', 'replace')!r} out of order "
                              f"(expected {p.count + 1}, or {p.count} to replace the last)")


def parse_rows(tail: bytes, series: Mapping[str, Series], source: str = "<data>",
               first_line: int = 1, checked: bool = False,
               dropped: Optional[List[str]] = None) -> int:
    """Read the rows after the root element (``tail``) into the declared
    ``series`` (id -> Series); returns how many lines were read as rows.

    A last line without its newline (a torn append; also when a power loss
    left NUL bytes) is dropped, and said in ``dropped``.  Blank lines are
    allowed.  With ``checked`` (rows appended after a closing record) every
    row must carry its own check (:func:`format_row`), and a last row whose
    check fails is torn too.  Anything else that is not a well-formed row
    of a declared series, in order, is a ResultFileError naming the line
    (``first_line`` is the file's line number of the tail's first line).
    """
    lines = _whole_lines(tail, first_line, checked, dropped)
    pending: Dict[bytes, _Pending] = {}
    for sid, s in series.items():
        pending[sid.encode("ascii")] = _Pending(s)
    read = 0
    lineno = first_line - 1
    for line in lines:
        lineno += 1
        line = line.strip()
        if not line:
            continue
        parts = _row_parts(line, lineno, source, checked)
        p = pending.get(parts[1])
        if p is None:
            raise ResultFileError(f"{source}: line {lineno}: row of series "
                                  f"{parts[1].decode('ascii', 'replace')!r}, which no test declares")
        _add_row(p, parts, lineno, source)
        read += 1
    for p in pending.values():
        _flush(p, source)
    return read
