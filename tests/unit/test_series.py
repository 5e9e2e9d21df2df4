"""Series: columns that grow by appending, their rows after the root element,
and what a kill or a power loss leaves of them."""
import os
import signal
import subprocess
import sys
import time
import zlib

import pytest
from lxml import etree

from test_store import sample_run
from tkperf import store
from tkperf.errors import OutputError, ResultFileError
from tkperf.model.results import TestRun
from tkperf.model.series import DIGITS, Series, format_row, parse_rows, round_value

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us")


def stream_run(rows: int = 0):
    """The sample run plus a WSAT test holding ``rows`` intervals."""
    run = sample_run()
    t = TestRun(type="wsat", key="wsat", tracking_workload="wsat-rnd-4k-0-100",
                tracking_metric="write.iops", tracking_label="RND 4k 0/100 IOPS per interval",
                status="running", started="2026-11-22T04:00:00+00:00")
    s = Series("intervals", COLUMNS)
    for i in range(1, rows + 1):
        s.append(row_values(i))
    t.series["intervals"] = s
    run.tests.append(t)
    return run


def row_values(i: int, bump: float = 0.0):
    return (1.0 + i / 3e4, 1.0, 40000 + i, (40000 + i) * 4096, (40000 + i) * 1000 / 1001 + bump,
            700 + i / 7)


# --- the Series ------------------------------------------------------------------

def test_series_grows_and_columns_are_views():
    s = Series("x", ("a", "b"), capacity=2)
    for i in range(1000):
        assert s.append((i, i * 2)) == i + 1
    assert len(s) == 1000
    assert s.column("a").tolist() == list(range(1000))
    assert s.column("b")[-1] == 1998
    assert s.row(0) == (0.0, 0.0) and s.row(-1) == (999.0, 1998.0)
    assert s.columns == ("a", "b")
    assert s.column("a").base is not None  # a view, not a copy
    with pytest.raises(ValueError):
        s.column("a")[0] = 5  # read-only: memory stays what the file says
    with pytest.raises(KeyError, match="no column 'c'"):
        s.column("c")
    with pytest.raises(IndexError):
        s.row(1000)


def test_set_row_appends_or_replaces_the_last_only():
    s = Series("x", ("a",))
    assert s.set_row(1, (1.5,)) is False
    assert s.set_row(2, (2.5,)) is False
    assert s.set_row(2, (3.5,)) is True
    assert s.column("a").tolist() == [1.5, 3.5]
    for bad in (0, 1, 4):
        with pytest.raises(ValueError):
            s.set_row(bad, (9.0,))
    with pytest.raises(ValueError, match="1 values for 2 columns|2 values for 1 columns"):
        s.append((1.0, 2.0))
    with pytest.raises(ValueError):
        Series("x", ())
    with pytest.raises(ValueError):
        Series("bad name", ("a",))
    with pytest.raises(ValueError):
        Series("x", ("a", "a"))


def test_values_are_rounded_as_they_come_and_whole_numbers_stay_exact():
    s = Series("x", ("f", "n"))
    s.append((2 / 3, 185636864))
    assert s.row(0) == (float(f"{2 / 3:.{DIGITS}g}"), 185636864.0)
    assert round_value(123456789012.0) == 123456789012.0
    exact = Series("x", ("f",), digits=None)
    exact.append((2 / 3,))
    assert exact.row(0) == (2 / 3,)


def test_row_codec():
    line = format_row("wsat.intervals", 3, (1.0004, 1.0, 45321, 185636864.0, 45321.125, float("nan")))
    assert line == b"<?tkperf-row wsat.intervals 3 1.0004 1 45321 185636864 45321.125 nan?>\n"
    with pytest.raises(ValueError):
        format_row("has space", 1, (1.0,))
    with pytest.raises(ValueError):
        format_row("x", 0, (1.0,))
    s = Series("intervals", COLUMNS)
    values = [row_values(i) for i in range(1, 50)]
    tail = b"\n" + b"".join(format_row("t.intervals", i, v) for i, v in enumerate(values, 1))
    assert parse_rows(tail, {"t.intervals": s}) == 49
    assert s.to_array().tolist() == [list(v) for v in values]


# --- the file --------------------------------------------------------------------

def test_save_load_round_trip_is_exact_and_plain_xml_still_parses(tmp_path):
    run = stream_run(500)
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    back = store.load(str(path))
    assert back == run
    s = back.test("wsat").series["intervals"]
    assert len(s) == 500 and s.column("iops").tolist() == run.test("wsat").series["intervals"].column("iops").tolist()
    doc = etree.parse(str(path))  # the rows are processing instructions after the root
    assert doc.getroot().find("test[@type='wsat']/series").get("columns") == " ".join(COLUMNS)
    assert store.schema().validate(doc), store.schema().error_log
    # what memory holds is what the file says: saving again writes the same bytes
    store.save(back, str(tmp_path / "again.xml"))
    assert (tmp_path / "again.xml").read_bytes() == path.read_bytes()


def test_writer_appends_and_replaces(tmp_path):
    path = str(tmp_path / "r.xml")
    run = stream_run(0)
    s = run.test("wsat").series["intervals"]
    w = store.ResultWriter(path)
    with pytest.raises(OutputError, match="not saved through this writer"):
        w.append("wsat.intervals", 1, row_values(1))
    w.save(run)
    for i in range(1, 11):
        s.set_row(i, row_values(i))
        w.append("wsat.intervals", i, s.row(i - 1))
    s.set_row(10, row_values(10, bump=0.5))  # a short tail merged into the last interval
    w.append("wsat.intervals", 10, s.row(9))
    w.sync()
    assert store.load(path) == run
    w.save(run)  # a full save in between, then appending goes on in the new file
    s.set_row(11, row_values(11))
    w.append("wsat.intervals", 11, s.row(10))
    w.close()
    back = store.load(path)
    assert back == run and len(back.test("wsat").series["intervals"]) == 11
    assert sorted(os.listdir(tmp_path)) == ["r.xml"]


def _saved_with_rows(tmp_path, rows=20) -> bytes:
    """A run saved whole with no rows, then ``rows`` rows appended by its
    writer (after the file's closing record, each with its own check)."""
    path = str(tmp_path / "r.xml")
    run = stream_run(0)
    w = store.ResultWriter(path)
    w.save(run)
    for i in range(1, rows + 1):
        w.append("wsat.intervals", i, row_values(i))
    w.close()
    with open(path, "rb") as fh:
        return fh.read()


def _with_check(line: bytes) -> bytes:
    """A hand-made row line with the check an appended row carries."""
    if not (line.startswith(b"<?") and line.endswith(b"?>")):
        return line
    return line[:-2] + b" c%08x?>" % zlib.crc32(line[:-2])


def test_torn_tail_is_dropped(tmp_path):
    data = _saved_with_rows(tmp_path)
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    # cut anywhere inside the last row: 19 rows, and the run says it was cut;
    # with only its newline gone: 20
    for cut in range(last_start, len(data)):
        run = store.loads(data[:cut], "torn.xml")
        n = len(run.test("wsat").series["intervals"])
        whole = data[:cut].endswith(b"?>")
        assert n == (20 if whole else 19), cut
        assert ("torn last row" in run.integrity) == (not whole and cut > last_start), (cut, run.integrity)
    assert store.loads(data, "whole.xml").integrity == ""
    # a power loss: the file grew but the blocks are zeros
    for junk in (b"\0" * 4096, b"<?tkperf-row wsat.inter" + b"\0" * 100):
        run = store.loads(data + junk, "nul.xml")
        assert len(run.test("wsat").series["intervals"]) == 20 and "dropped" in run.integrity
    # a kill before the first row: no rows
    head = data[: data.find(b"<?tkperf-row")]
    run = store.loads(head + b"<?tkperf-r", "x")
    assert len(run.test("wsat").series["intervals"]) == 0 and "torn last row" in run.integrity


def test_a_cut_before_the_closing_record_is_refused(tmp_path):
    """Rows a full save wrote are covered by the closing record: a file cut
    among them is refused, whatever the XML parser forgives."""
    path = tmp_path / "r.xml"
    store.save(stream_run(20), str(path))
    data = path.read_bytes()
    end = data.index(b"<?tkperf-seal")
    for cut in range(data.index(b"<?tkperf-row"), end + 10):
        with pytest.raises(ResultFileError, match="cut short"):
            store.loads(data[:cut], "cut.xml")


def test_an_appended_row_that_was_changed_is_refused(tmp_path):
    data = _saved_with_rows(tmp_path)
    i = data.index(b"<?tkperf-row wsat.intervals 5 ")
    j = data.index(b" ", i + len(b"<?tkperf-row wsat.intervals 5 "))
    bad = data[:j - 1] + (b"7" if data[j - 1:j] != b"7" else b"8") + data[j:]
    with pytest.raises(ResultFileError, match=r"line \d+: damaged series row: its check does not match"):
        store.loads(bad, "bad.xml")


@pytest.mark.parametrize("line, message", [
    (b"<?tkperf-row wsat.intervals 21 1 2 3 4 5 x?>", "'x' is not a number"),
    (b"<?tkperf-row wsat.intervals 21 1 2 3 4 5?>", "5 values for the 6 columns"),
    (b"<?tkperf-row wsat.intervals 23 1 2 3 4 5 6?>", "row 23 of series 'wsat.intervals' out of order"),
    (b"<?tkperf-row wsat.intervals 19 1 2 3 4 5 6?>", "out of order"),
    (b"<?tkperf-row nosuch.series 1 1 2 3 4 5 6?>", "'nosuch.series', which no test declares"),
    (b"<?tkperf-row wsat.intervals one 1 2 3 4 5 6?>", "index 'one' is not a whole number"),
    (b"<?other-pi hello?>", "bad series row"),
    (b"<extra/>", "only series rows"),
    (b"<?tkperf-row wsat.intervals 21 1 2 3 \0\0\0", "only series rows"),  # torn, but not last
])
def test_malformed_rows_are_refused(tmp_path, line, message):
    data = _saved_with_rows(tmp_path)
    good = b"<?tkperf-row wsat.intervals 21 1 2 3 4 5 6?>"
    bad = data + _with_check(line) + b"\n" + _with_check(good.replace(b" 21 ", b" 22 ") if b" 21 " in line
                                                          else good) + b"\n"
    with pytest.raises(ResultFileError, match=message) as info:
        store.loads(bad, "bad.xml")
    msg = str(info.value)
    assert msg.startswith("bad.xml: line ") and "\n" not in msg


def test_a_day_of_rows_reads_back_whole(tmp_path):
    # how fast it loads is benchmarks/series.py's figure (store.load in a child
    # process of its own), not a timed assertion here
    run = stream_run(0)
    s = run.test("wsat").series["intervals"]
    for i in range(1, 86401):
        s.append(row_values(i))
    path = tmp_path / "day.xml"
    store.save(run, str(path))
    back = store.load(str(path))
    assert back.test("wsat").series["intervals"] == s


CHILD = r"""
import os, sys
sys.path.insert(0, sys.argv[2])
from tkperf import store
from tkperf.model.series import Series
path = sys.argv[1]
run = store.load(path)
s = run.test("wsat").series["intervals"]
w = store.ResultWriter(path)
w.save(run)
i = 0
while True:
    i += 1
    vals = (1.0 + i / 3e4, 1.0, 40000 + i, (40000 + i) * 4096, (40000 + i) * 1000 / 1001, 700 + i / 7)
    s.set_row(i, vals)
    w.append("wsat.intervals", i, s.row(i - 1))
    if i % 7 == 0:  # a merged tail replaces the row just written
        s.set_row(i, vals[:4] + (vals[4] + 0.5, vals[5]))
        w.append("wsat.intervals", i, s.row(i - 1))
    if i % 50 == 0:
        os.write(1, b"%d\n" % i)
"""


def test_sigkill_while_appending_keeps_every_written_row(tmp_path):
    path = tmp_path / "r.xml"
    store.save(stream_run(0), str(path))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), ROOT], stdout=subprocess.PIPE)
    reported = 0
    try:
        deadline = time.monotonic() + 60
        while reported < 3000 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            reported = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    for line in rest.split():
        reported = max(reported, int(line))
    assert reported >= 3000, "the child did not get going"
    s = store.load(str(path)).test("wsat").series["intervals"]
    assert len(s) >= reported
    expect = Series("intervals", COLUMNS)
    for i in range(1, len(s) + 1):
        vals = row_values(i)
        expect.append(vals)
        if i % 7 == 0 and i < len(s):  # the last row may have been killed before its replacement
            expect.set_row(i, vals[:4] + (vals[4] + 0.5, vals[5]))
    assert s.to_array()[:-1].tolist() == expect.to_array()[:-1].tolist()
    last, vals = s.row(-1), row_values(len(s))
    assert last[:4] == expect.row(-1)[:4]
    assert last[4] in (round_value(vals[4]), round_value(vals[4] + 0.5))
