"""Reports that read well on paper (issue 48 item 9): no convergence band
that covers the whole plot, per-test header tables without the white space
of long cells beside short ones, and a comparison table whose figure names
do not wrap over three or four lines."""
from __future__ import annotations

import os
import re
import subprocess

from tkperf import store
from tkperf.render import blocks as b
from tkperf.report import compare
from tkperf.report.context import ReportContext
from tkperf.report.steady import convergence_blocks, tracking_convergence

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    return store.load(os.path.join(ROOT, path))


def _convergence(run, key):
    test = run.test(key)
    blocks = convergence_blocks(ReportContext(run), test, tracking_convergence(test), 2)
    return next(x for x in blocks if isinstance(x, b.Chart))


def test_a_window_of_every_round_is_not_shaded():
    chart = _convergence(_load("examples/example-ssd.xml"), "iops")  # 5 rounds, window 1-5
    assert chart.spec.window == ()
    assert "the measurement window is every round (1-5), so no band is shaded" in chart.caption


def test_a_window_of_some_rounds_is_shaded():
    run = _load("tests/data/golden/inputs/dirth.xml")  # 6 rounds, window 1-5
    test = run.tests[0]
    chart = _convergence(run, test.key)
    assert chart.spec.window == (1, 2, 3, 4, 5)
    assert "the shaded band is the measurement window" in chart.caption


def _pdf_pages(path):
    out = subprocess.run(["pdfinfo", path], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def _page_text(path, page):
    return subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), path, "-"], capture_output=True,
                          text=True, check=True).stdout


def test_the_header_tables_leave_room_on_their_page(tmp_path):
    """example-ssd's PDF was 18 pages, each test's header a page of its own
    with blank rows beside the device's tall cells; one table whose columns
    run on, and table cells without the extra padding, make it 15, each
    header's page carrying the start of its test's figures."""
    from tkperf.cli import main
    assert main(["report", os.path.join(ROOT, "examples", "example-ssd.xml"), "--outdir", str(tmp_path),
                 "--format", "pdf", "--quiet"]) == 0
    pdf = str(tmp_path / "example-ssd.pdf")
    assert _pdf_pages(pdf) <= 15
    pages = [_page_text(pdf, p) for p in range(1, _pdf_pages(pdf) + 1)]
    headers = [i for i, text in enumerate(pages) if "Device under test" in text]
    assert len(headers) == 4
    for i in headers:  # below the header, on its page: the first figures' section or table
        after = pages[i][pages[i].index("deviations"):]
        assert len(after.split()) > 20, pages[i][-500:]


def test_the_comparison_table_gives_the_figure_its_room():
    runs = [_load("examples/example-ssd.xml"), _load("examples/example-full.xml")]
    ctx = compare.CompareContext(tuple(runs), tuple(compare.run_labels(runs)))
    table = ctx.numbers_table("Figure", compare.summary_rows(runs), "Summary")
    assert table.widths[0] >= 40 and sum(table.widths) <= 100  # was 20 of 100: 3-4 lines a label
    three = compare.CompareContext(tuple(runs + runs[:1]), ("a", "b", "c"))
    assert three.numbers_table("Figure", compare.summary_rows(runs + runs[:1]), "S").widths[0] >= 32


def test_the_window_average_in_the_legend_is_rounded_as_the_tables_round():
    from tkperf.render.charts import _average_text
    assert [_average_text(v) for v in (973.136, 17804.2, 79.7013, 0.91234)] == ["973.1", "17,804", "79.7", "0.912"]
