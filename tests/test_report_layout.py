"""How the report reads: long words are never cut (rst, HTML, PDF)."""
from __future__ import annotations

import copy
import dataclasses
import os
import re
import subprocess

import lxml.html
import pytest

from tkperf.model import store
from tkperf.render import report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = "SAMSUNGMZQL27T6HBLA-00A07-ENTERPRISE-U.2-NVMe-SSD-7.68TB-rev-X9"  # 60+ characters
SERIAL = "S6CKNA0W900123ZZXQ4711ABCDEF0123456789"
BY_ID = "/dev/disk/by-id/nvme-SAMSUNG_MZQL27T6HBLA-00A07_S6CKNA0W900123ZZXQ4711"


@pytest.fixture(scope="module")
def long_words(tmp_path_factory):
    """example-ssd with a 60-character model, a long serial and a by-id path, built in every format."""
    run = store.load(os.path.join(ROOT, "examples", "example-ssd.xml"))
    assert len(MODEL) >= 60
    run = copy.deepcopy(run)
    run.device = dataclasses.replace(run.device, model=MODEL, serial=SERIAL, path=BY_ID)
    outdir = str(tmp_path_factory.mktemp("long"))
    result = report.build_report(run, outdir)
    assert result.warnings == ()
    return os.path.join(outdir, run.name)


def test_long_words_are_whole_in_the_rst(long_words):
    with open(long_words + ".rst", encoding="utf-8") as fh:
        text = fh.read()
    for word in (MODEL, SERIAL):
        assert re.search(rf"^     - {re.escape(word)}$", text, re.M), word
    assert BY_ID in text.replace("\\", "")


def test_long_words_are_whole_in_the_html(long_words):
    tree = lxml.html.parse(long_words + ".html")
    cells = [" ".join(td.text_content().split()) for td in tree.iter("td")]
    for word in (MODEL, SERIAL):
        assert word in cells, word
    assert f"{BY_ID} (/dev/loop0)" in cells


def test_long_words_are_whole_in_the_pdf(long_words):
    # The PDF may break a long word at the column's edge, but never put a
    # space into it: with the line breaks taken out, each word is whole.
    out = subprocess.run(["pdftotext", "-f", "1", "-l", "4", long_words + ".pdf", "-"], check=True,
                         capture_output=True, text=True).stdout
    joined = out.replace("\n", "")
    for word in (MODEL, SERIAL, BY_ID):
        assert word in joined, word


def test_pdf_plots_are_vector_graphics(long_words):
    """The plots are drawn into the PDF from their SVGs: their text is PDF
    text, and no plot is a picture (only a heat map's cells are)."""
    text = subprocess.run(["pdftotext", long_words + ".pdf", "-"], check=True, capture_output=True,
                          text=True).stdout
    assert "tracking variable, all rounds" in text  # a legend entry of the measurement-window plots
    with open(long_words + ".rst", encoding="utf-8") as fh:
        assert "tracking variable" not in fh.read()  # so it comes from the plots, not the text
    listing = subprocess.run(["pdfimages", "-list", long_words + ".pdf"], check=True, capture_output=True,
                             text=True).stdout.splitlines()[2:]
    widths = [int(line.split()[3]) for line in listing]
    assert len(widths) <= 2 and all(w < 7 * 120 for w in widths)  # a plot as PNG is 840 px wide
