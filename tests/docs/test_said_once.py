"""Each thing said once: the deviations are listed once, on the report's
first page, and every test header links there with that test's count; the
--quick warning is on the first screen once; repeated events fold into one
row; the one-page summary is one page (pdftotext, page by page)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tkperf import store
from tkperf.report import header, page, report, summary
from tkperf.verdict import conformance

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
needs_pdftotext = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs pdftotext (poppler-utils)")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("said-once")
    run = store.load(EXAMPLE)
    result = report.build_report(run, str(out), ("rst", "html", "pdf"))
    assert not result.warnings, result.warnings
    return run, out


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@needs_pdftotext
def test_the_deviations_are_on_the_first_page_only_and_the_summary_is_one_page(built):
    run, out = built
    pdf = str(out / "example-ssd.pdf")
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(["pdfinfo", pdf], capture_output=True,
                                                               text=True).stdout).group(1))
    texts = [_flat(subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), pdf, "-"], capture_output=True,
                                  text=True).stdout) for n in range(1, pages + 1)]
    deviations = conformance.of_run(run).deviations
    assert len(deviations) > 5
    for d in deviations:
        start = _flat(d)[:28]
        where = [n for n, t in enumerate(texts, 1) if start in t]
        assert where == [1], (d, where)
    # the summary page ends with that list: the second page is the run notes, not the list's tail
    assert texts[1].lstrip().startswith("Run notes"), texts[1][:200]
    # and every test header points to it, with that test's own count
    for t in run.tests:
        cell = header.conformance_of_test(conformance.of_run(run), t, run)
        assert re.search(r"(\d+ of the run's \d+ deviations apply|every one of the run's \d+ deviations "
                         r"applies) to this test", cell), cell
    assert sum("listed once on the first page" in t for t in texts) == len(run.tests)


def test_each_header_links_to_the_one_list(built):
    run, out = built
    html = (out / "example-ssd.html").read_text()
    assert html.count('id="deviations"') == 1
    assert html.count('href="#deviations"') == len(run.tests)
    assert html.count("This is a --quick smoke test") == 1  # the warning box, once
    rst = (out / "example-ssd.rst").read_text()
    first = conformance.of_run(run).deviations[1]
    assert rst.count(first) == 1


def test_a_test_counts_the_deviations_that_name_it_or_no_test():
    run = store.load(EXAMPLE)
    c = conformance.of_run(run)
    by_key = {t.key: t for t in run.tests}
    assert header.applies_to("IOPS matrix narrowed to 128k,4k", by_key["iops"], run)
    assert not header.applies_to("IOPS matrix narrowed to 128k,4k", by_key["lat"], run)
    assert header.applies_to("write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)",
                             by_key["wsat"], run)
    assert header.applies_to("purged by discard, which is not a PTS PURGE (iops, tp-1024k, lat, wsat)",
                             by_key["tp-1024k"], run)
    assert not header.applies_to("lat: no steady state within 5 rounds", by_key["iops"], run)
    counts = {t.key: sum(header.applies_to(d, t, run) for d in c.deviations) for t in run.tests}
    # the reused buffers: one more for all; WSAT: its missing capture (a result from before it)
    assert counts == {"iops": 9, "tp-1024k": 8, "lat": 8, "wsat": 9}


def test_repeated_events_fold_into_one_row_with_their_count():
    run = store.load(EXAMPLE)
    rows = page.event_rows(run)
    messages = [r[4] for r in rows]
    assert len(messages) == len(set(messages))
    purge = [r for r in rows if r[4].startswith("purge: ")]
    assert len(purge) == 1 and purge[0][2] == "iops, tp-1024k, lat, wsat" and purge[0][4].endswith("(4 times)")
    assert len(rows) < len(run.events)


def test_the_terminal_summary_lists_each_deviation_once():
    run = store.load(EXAMPLE)
    text = "\n".join(summary.lines(run))
    for d in conformance.of_run(run).deviations:
        assert text.count(d) == 1, d
