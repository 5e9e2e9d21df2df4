"""``tkperf export RESULT.xml --csv DIR``: a result file's measurements as CSV.

One file per kind of record, columns documented in docs/export.rst:

* ``rounds.csv``: one row per round of every round-based test;
* ``workloads.csv``: one row per workload (fio job) of every round, both
  directions' figures side by side;
* ``intervals.csv``: one row per interval of every test's series (WSAT,
  XSR, the streams), the series' own columns.

Numbers are written as the file holds them (no rounding); a figure the
file does not hold is an empty cell.  Text from the file (test keys,
workload names, series and column names) is written as text only: a cell
that a spreadsheet would take for a formula -- ``= + - @`` first, also
behind leading blanks or control characters, or a leading TAB or CR --
gets a leading apostrophe (OWASP's CSV injection rules); every cell holding
a CR, LF, quote or comma is quoted.  Numbers tkperf formats itself
(:func:`_number`: digits, sign, point, exponent) stay numbers, negative
ones too.
"""
from __future__ import annotations

import argparse
import csv
import io
import math
import os
import unicodedata
from typing import Dict, Iterable, List, Sequence

from tkperf import store
from tkperf.errors import EXIT_OK
from tkperf.model import files
from tkperf.model.results import IoStats, RunResult
from tkperf.report import checked

ROUND_COLUMNS = ("test", "type", "round", "started", "wall_s", "fio_s", "workloads", "in_steady_window")
WORKLOAD_COLUMNS = ("test", "type", "round", "workload", "rw", "bs", "rwmixread", "numjobs", "iodepth",
                    "runtime_ms")
#: Each direction's columns, prefixed ``read_`` and ``write_``; then ``DIR_pP_us``
#: for each response-time percentile P the file holds.
IO_COLUMNS = ("iops", "bw_bytes", "io_bytes", "ios", "lat_mean_us", "lat_min_us", "lat_max_us",
              "lat_stddev_us", "clat_mean_us", "clat_min_us", "clat_max_us", "clat_stddev_us",
              "slat_mean_us", "slat_min_us", "slat_max_us", "slat_stddev_us")
INTERVAL_COLUMNS = ("test", "type", "series", "row")
KINDS = ("rounds", "workloads", "intervals")


#: What starts a formula in a spreadsheet (OWASP, CSV injection).
FORMULA_START = ("=", "+", "-", "@")


def _blank(ch: str) -> bool:
    """A character a spreadsheet may skip before a formula: white space, a
    separator, a control, format or other non-printing character."""
    return ch.isspace() or unicodedata.category(ch)[0] in ("C", "Z")


def _text(value: str) -> str:
    """Text from the file, never a spreadsheet formula: an apostrophe goes
    before one that starts with a formula character, also behind leading
    blanks or control characters, and before one that starts with TAB or CR."""
    i = 0
    while i < len(value) and _blank(value[i]):
        i += 1
    if value[i:i + 1] in FORMULA_START or value[:1] in ("\t", "\r"):
        return "'" + value
    return value


#: A figure's digits in a machine file: fourteen significant ones, all a measurement holds, without the
#: noise of a float's last bits (8.037375912000016 -> 8.037375912; issue 60 item 6).
SIGNIFICANT = ".14g"


def _number(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        return str(int(value)) if value.is_integer() and abs(value) < 2 ** 53 else format(value, SIGNIFICANT)
    return ""


def rounds(run: RunResult) -> List[List[str]]:
    rows = []
    for t in run.tests:
        window = set(t.steady.rounds) if t.steady else set()
        for r in t.rounds:
            rows.append([_text(t.key), _text(t.type), _number(r.index), _text(r.started), _number(r.wall_s),
                         _number(r.fio_s), _number(len(r.workloads)), _number(r.index in window)])
    return rows


def _percentiles(run: RunResult) -> List[str]:
    seen: Dict[str, None] = {}
    for t in run.tests:
        for r in t.rounds:
            for w in r.workloads:
                for side in (w.read, w.write):
                    for label, _ in side.percentiles:
                        seen.setdefault(label, None)
    return sorted(seen, key=lambda p: float(p) if _is_number(p) else math.inf)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _io(io: IoStats, percentiles: Sequence[str]) -> List[str]:
    got = dict(io.percentiles)
    return [_number(getattr(io, c)) for c in IO_COLUMNS] + [_number(got.get(p)) for p in percentiles]


def workload_header(percentiles: Sequence[str]) -> List[str]:
    per_dir = list(IO_COLUMNS) + [f"p{p}_us" for p in percentiles]
    return list(WORKLOAD_COLUMNS) + [_text(f"{d}_{c}") for d in ("read", "write") for c in per_dir]


def workloads(run: RunResult, percentiles: Sequence[str]) -> List[List[str]]:
    rows = []
    for t in run.tests:
        for r in t.rounds:
            for w in r.workloads:
                rows.append([_text(t.key), _text(t.type), _number(r.index), _text(w.name), _text(w.rw),
                             _number(w.bs), _number(w.rwmixread), _number(w.numjobs), _number(w.iodepth),
                             _number(w.runtime_ms)] + _io(w.read, percentiles) + _io(w.write, percentiles))
    return rows


def interval_columns(run: RunResult) -> List[str]:
    seen: Dict[str, None] = {}
    for t in run.tests:
        for s in t.series.values():
            for c in s.columns:
                seen.setdefault(c, None)
    return list(seen)


def intervals(run: RunResult, columns: Sequence[str]) -> List[List[str]]:
    rows = []
    for t in run.tests:
        for name, s in t.series.items():
            values = {c: s.column(c) for c in s.columns}
            for i in range(len(s)):
                rows.append([_text(t.key), _text(t.type), _text(name), _number(i + 1)]
                            + [_number(float(values[c][i])) if c in values else "" for c in columns])
    return rows


def _csv(header: Iterable[str], rows: Iterable[List[str]]) -> bytes:
    """The table, one line per row ending in LF, every cell holding a CR, LF,
    quote or comma quoted.  The csv module's QUOTE_MINIMAL quotes a cell only
    for the characters of its own line terminator: with "\\n" alone a cell
    holding a CR went out bare, and a reader started a new row there.  So
    each row is written with the RFC 4180 terminator CRLF (which quotes
    both) and ends in LF."""
    buf = io.StringIO()
    row_buf = io.StringIO()
    writer = csv.writer(row_buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    for cells in [list(header)] + list(rows):
        row_buf.seek(0)
        row_buf.truncate()
        writer.writerow(cells)
        buf.write(row_buf.getvalue()[:-2] + "\n")
    return buf.getvalue().encode("utf-8")


def export_csv(run: RunResult, outdir: str) -> List[str]:
    """Write ``rounds.csv``, ``workloads.csv`` and ``intervals.csv`` into
    ``outdir``; their paths."""
    percentiles = _percentiles(run)
    columns = interval_columns(run)
    tables = {
        "rounds": _csv(ROUND_COLUMNS, rounds(run)),
        "workloads": _csv(workload_header(percentiles), workloads(run, percentiles)),
        "intervals": _csv(list(INTERVAL_COLUMNS) + [_text(c) for c in columns], intervals(run, columns)),
    }
    paths = []
    for kind in KINDS:
        path = os.path.join(outdir, f"{kind}.csv")
        files.atomic_write(path, tables[kind])
        paths.append(path)
    return paths


def cmd_export(args: argparse.Namespace) -> int:
    run = checked.load(args.result)
    outdir = store.ensure_dir(args.csv, "CSV directory")
    for path in export_csv(run, outdir):
        print(f"csv: {path}")
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("export", help="write a result file's rounds, workloads and intervals as CSV",
                       allow_abbrev=False,
                       description="The measurements of a result file as CSV, one file per kind: "
                                   "rounds.csv, workloads.csv, intervals.csv (columns: 'tkperf help "
                                   "export').  fio's own JSON output of a run is kept beside its result "
                                   "file, in NAME.fio-json/.")
    p.add_argument("result", help="a tkperf result XML file")
    p.add_argument("--csv", required=True, metavar="DIR", help="directory for the CSV files (made if missing)")
    p.set_defaults(func=cmd_export)
