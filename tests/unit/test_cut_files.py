"""Files cut short, swept: a file tkperf wrote and later reads, cut at any
byte, is refused in one line with exit 7 naming the cut, or -- where the
format allows a clean prefix (rows appended after the closing record) --
read as exactly that prefix, saying it was cut; never shown, checked,
compared, exported or resumed as complete with less than it held
(docs/resilience.rst, "Files cut short").

The cut points are every element and line boundary near the end and evenly
spaced points through the file.  Whether the XML parser forgives a cut
changes between lxml releases (6.2 reads documents 6.1 refused), so CI runs
this module on the oldest supported lxml (Debian 12's) and on the newest.
"""
import os
import re
import shutil
import sqlite3

import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_RESULT_FILE, ResultFileError
from tkperf.history import indexfile
from tkperf.history.index import INDEX_NAME
from tkperf.rwsw import model as capture_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
CAPTURE = os.path.join(ROOT, "examples", "rwsw", "pgbench.xml")
#: What a cut file is refused with: named as cut, or -- cut before its root
#: element's start tag was whole -- as empty or not XML.
CUT = r"^cut\.xml: (cut short|empty file|not valid XML \(truncated or corrupt\?\))"


def cut_points(data: bytes, start: int = 0, spaced: int = 60, near_end: int = 3000):
    """Evenly spaced offsets from ``start``, and every boundary (after a '>'
    or a newline) in the last ``near_end`` bytes; the whole length left out."""
    points = set(range(start, len(data), max(1, (len(data) - start) // spaced)))
    tail = max(start, len(data) - near_end)
    points.update(tail + m.end() for m in re.finditer(rb"[>\n]", data[tail:]))
    points.discard(len(data))
    return sorted(points)


def _refused(capsys, argv, path):
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_RESULT_FILE, (argv, code, err)
    assert len(err) == 1 and err[0].startswith(f"tkperf: error: {path}: ") and "cut short" in err[0], err


def test_a_finished_result_cut_anywhere_is_refused():
    with open(EXAMPLE, "rb") as fh:
        data = fh.read()
    points = cut_points(data)
    assert len(points) > 120
    for cut in points:
        if cut == len(data) - 1:  # only the last newline gone: everything it held is there
            assert store.loads(data[:cut], "cut.xml") == store.loads(data, "whole.xml")
            continue
        with pytest.raises(ResultFileError, match=CUT):
            store.loads(data[:cut], "cut.xml")


@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.99])
def test_every_reader_refuses_a_cut_result(tmp_path, capsys, fraction):
    with open(EXAMPLE, "rb") as fh:
        data = fh.read()
    cut = tmp_path / "example-ssd.xml"  # the run's own name: resume reads it
    cut.write_bytes(data[: int(len(data) * fraction)])
    path = str(cut)
    for argv in (["show", path], ["show", path, "--json"],
                 ["report", path, "--format", "rst", "--outdir", str(tmp_path / "r")],
                 ["check", path, "--baseline", EXAMPLE], ["check", EXAMPLE, "--baseline", path],
                 ["compare", EXAMPLE, path, "--outdir", str(tmp_path / "c")],
                 ["export", path, "--csv", str(tmp_path / "csv")], ["resume", path, "--yes"]):
        _refused(capsys, argv, path)
    assert sorted(os.listdir(tmp_path)) == ["example-ssd.xml"]  # nothing written
    assert cut.read_bytes() == data[: int(len(data) * fraction)]  # nor resumed


def _with_appended_rows(tmp_path):
    """example-ssd.xml as a run in progress: saved whole with its WSAT
    intervals not yet measured, then each appended after the closing record."""
    run = store.load(EXAMPLE)
    run.status = "running"
    series = run.test("wsat").series["intervals"]
    rows = [series.row(i) for i in range(len(series))]
    assert len(rows) >= 5
    series.__init__(series.name, series.columns)  # emptied, as at the start of the test
    path = str(tmp_path / "example-ssd.xml")
    writer = store.ResultWriter(path)
    writer.save(run)
    for i, row in enumerate(rows, 1):
        writer.append("wsat.intervals", i, row)
    writer.close()
    with open(path, "rb") as fh:
        return fh.read(), len(rows)


@pytest.mark.docs  # builds whole documents: the docs tier
def test_rows_appended_after_the_record_read_as_the_prefix_they_are(tmp_path):
    data, n = _with_appended_rows(tmp_path)
    record_end = data.index(b"\n", data.index(b"<?tkperf-seal")) + 1
    row_ends = [m.end() for m in re.compile(rb"\?>").finditer(data, record_end)]
    assert len(row_ends) == n
    for cut in cut_points(data) + list(range(record_end - 3, len(data))):
        if cut < record_end - 1:  # (only the record's newline gone: everything saved whole is there)
            with pytest.raises(ResultFileError, match=CUT):
                store.loads(data[:cut], "cut.xml")
            continue
        run = store.loads(data[:cut], "cut.xml")
        whole_rows = sum(1 for end in row_ends if end <= cut)
        assert len(run.test("wsat").series["intervals"]) == whole_rows, cut
        at_boundary = cut in (record_end - 1, record_end) or cut in row_ends or cut - 1 in row_ends
        assert (run.integrity == "") == at_boundary, (cut, run.integrity)
        assert run.status == "running"  # a run in progress: never shown as complete


@pytest.mark.docs  # builds whole documents: the docs tier
def test_a_torn_row_is_said_by_every_reader(tmp_path, capsys):
    data, _ = _with_appended_rows(tmp_path)
    cut = data[: data.rindex(b"<?tkperf-row") + 20]
    path = tmp_path / "torn" / "example-ssd.xml"
    path.parent.mkdir()
    path.write_bytes(cut)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr()
    assert "result file: a torn last row" in out.out and "run running" in out.out and out.err == ""
    assert main(["show", str(path), "--json"]) == 0
    assert '"file_integrity": "a torn last row' in capsys.readouterr().out
    for argv in (["export", str(path), "--csv", str(tmp_path / "csv")],
                 ["check", str(path), "--baseline", EXAMPLE, "--json"]):
        main(argv)
        err = capsys.readouterr().err
        assert f"tkperf: warning: {path}: result file: a torn last row" in err, argv
    assert main(["report", str(path), "--format", "rst", "--outdir", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    with open(tmp_path / "r" / "example-ssd.rst", encoding="utf-8") as fh:
        assert "The result file: a torn last row" in fh.read()


def test_a_cut_capture_is_refused(capsys, tmp_path):
    with open(CAPTURE, "rb") as fh:
        data = fh.read()
    whole = capture_model.loads(data, "whole.xml")
    assert whole.integrity == ""
    for cut in cut_points(data):
        if cut == len(data) - 1:
            assert capture_model.loads(data[:cut], "cut.xml") == whole
            continue
        with pytest.raises(ResultFileError, match=CUT):
            capture_model.loads(data[:cut], "cut.xml")
    path = tmp_path / "pgbench.xml"
    path.write_bytes(data[: len(data) // 2])
    for argv in (["show", str(path)], ["show", str(path), "--json"],
                 ["report", str(path), "--format", "rst", "--outdir", str(tmp_path / "r")]):
        _refused(capsys, argv, str(path))


def test_a_cut_history_index_is_rebuilt_and_said(tmp_path, capsys):
    folder = tmp_path / "nights"
    folder.mkdir()
    for name in ("example-ssd.xml", "example-ssd-2.xml"):
        shutil.copy(os.path.join(ROOT, "examples", name), folder / name)
    assert main(["history", str(folder), "--json"]) == 0
    capsys.readouterr()
    index = folder / INDEX_NAME
    data = index.read_bytes()
    assert indexfile.cut_short(data) == "" and sqlite3.connect(index).execute("PRAGMA quick_check").fetchone()
    expected = None
    points = [p for p in cut_points(data, spaced=12, near_end=0) if p > 0]
    for cut in points:
        assert indexfile.cut_short(data[:cut]), cut
    for cut in points[:: max(1, len(points) // 4)]:
        index.write_bytes(data[:cut])
        os.chmod(index, 0o600)
        assert main(["history", str(folder), "--json"]) == 0
        out = capsys.readouterr()
        assert f"{index}: not a readable index (" in out.err, (cut, out.err)
        expected = expected or out.out
        assert out.out == expected  # the same history, built from the result files
        assert indexfile.cut_short(index.read_bytes()) == ""  # and the index written whole again
