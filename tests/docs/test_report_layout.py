"""How the report reads: long words are never cut (rst, HTML, PDF)."""
from __future__ import annotations

import copy
import dataclasses
import os
import re
import subprocess

import lxml.html
import pytest

from tkperf import store
from tkperf.report import report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    out = subprocess.run(["pdftotext", long_words + ".pdf", "-"], check=True,
                         capture_output=True, text=True).stdout
    joined = out.replace("\n", "")
    for word in (MODEL, SERIAL, BY_ID):
        assert word in joined, word


def test_the_events_time_stamps_and_headings_are_whole_words_in_the_pdf(long_words):
    """A time stamp of the events table fits its column: one word, not
    broken at the column's edge; so does each heading."""
    words = subprocess.run(["pdftotext", "-bbox", long_words + ".pdf", "-"], check=True,
                           capture_output=True, text=True).stdout
    found = re.findall(r">([^<]*)</word>", words)
    stamps = [w for w in found if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", w)]
    assert len(stamps) >= 3
    assert not [w for w in found if re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:+]*", w) and w not in stamps]
    assert {"Time", "Kind", "Test", "Round", "Message"} <= set(found)


def test_pdf_plots_are_vector_graphics(long_words):
    """The plots are drawn into the PDF as vector graphics (recorded while
    their SVGs were drawn): their text is PDF text, and no plot is a picture
    (only a heat map's cells and its colour bar are, without a soft mask)."""
    text = subprocess.run(["pdftotext", long_words + ".pdf", "-"], check=True, capture_output=True,
                          text=True).stdout
    assert "tracking variable, all rounds" in text  # a legend entry of the measurement-window plots
    with open(long_words + ".rst", encoding="utf-8") as fh:
        assert "tracking variable" not in fh.read()  # so it comes from the plots, not the text
    listing = subprocess.run(["pdfimages", "-list", long_words + ".pdf"], check=True, capture_output=True,
                             text=True).stdout.splitlines()[2:]
    widths = [int(line.split()[3]) for line in listing]
    assert len(widths) <= 2 and all(w < 7 * 120 for w in widths)  # a plot as PNG is 840 px wide


def test_the_nines_headings_stay_on_one_line_in_the_pdf(tmp_path):
    from tkperf.render import blocks as b
    from tkperf.render import documents
    from tkperf.report import qos

    bins = ((50_000, 1_000_000), (90_000, 990), (200_000, 9), (900_000, 1))
    dist = qos.Distribution("RND 4k 100/0 read", 4096, 100, "read", bins, 60.0, 900.0)
    table = qos.nines_table([dist, dist], "Response-time percentiles")
    assert "99.9999%" in table.headers
    result = documents.publish([b.Title("nines"), table], str(tmp_path), "n", ("pdf",))
    assert result.warnings == ()
    words = subprocess.run(["pdftotext", "-bbox", str(tmp_path / "n.pdf"), "-"], check=True,
                           capture_output=True, text=True).stdout
    found = re.findall(r">([^<]*)</word>", words)
    assert found.count("99.9999%") == 3  # the heading and the two rows' Supported cells, each one word


def test_html_contents_link_every_test_and_part(long_words):
    doc = lxml.html.parse(long_words + ".html").getroot()
    sections = {s.get("id"): s for s in doc.iter("section")}
    toc = doc.xpath("//nav[contains(@class, 'contents')] | //div[contains(@class, 'contents')]")
    assert len(toc) == 1
    links = [a.get("href")[1:] for a in toc[0].xpath(".//a[starts-with(@href, '#')]")
             if a.get("href") != "#top"]
    # Every test (h2) and each of its parts (h3) is in the contents, in order, and each link lands.
    wanted = [s.get("id") for s in doc.iter("section") if s.xpath("./h2 | ./h3")]
    assert links == wanted and len(links) > 10
    assert all(link in sections for link in links)
    # Anchors made from the titles: the same part of a test has the same id in every build.
    for ident in ("iops", "iops-steady-state-convergence", "iops-measurement-window", "throughput",
                  "latency", "latency-response-time-distribution-latency-qos", "write-saturation"):
        assert ident in sections, ident
    assert sections["iops-steady-state-convergence"].getparent() is sections["iops"]


def test_stable_ids_do_not_depend_on_other_sections():
    from docutils.core import publish_doctree

    from tkperf.render import navigation

    def ids(text: str) -> list:
        tree = publish_doctree(text, settings_overrides={"report_level": 5})
        navigation.stable_ids(tree)
        return [s["ids"][0] for s in tree.findall(lambda n: n.tagname == "section")]

    one = "T\n=\n\nA\n-\n\nParts\n~~~~~\n\nB\n-\n\nParts\n~~~~~\n"
    two = "T\n=\n\nX\n-\n\nParts\n~~~~~\n\n" + one.split("\n", 3)[3]
    assert ids(one) == ["a", "a-parts", "b", "b-parts"]
    assert ids(two)[-4:] == ids(one)  # a test added before: the others keep their anchors
    assert navigation.slug("RND 4KiB 100% W <script>") == "rnd-4kib-100-w-script"


def test_numbers_are_right_aligned_in_html(long_words):
    doc = lxml.html.parse(long_words + ".html").getroot()
    summary = doc.xpath("//table[caption[contains(., 'Summary performance data')]]")[0]
    head = [th.get("class") or "" for th in summary.xpath(".//thead//th")]
    assert ["num" in c for c in head] == [False, False, True, False, False]  # Figure, pattern, Value, unit, source
    values = summary.xpath(".//tbody/tr/td[3]")
    assert values and all("num" in (td.get("class") or "") for td in values)
    assert not any("num" in (td.get("class") or "") for td in summary.xpath(".//tbody/tr/td[1]"))
    css = " ".join(s.text or "" for s in doc.iter("style"))
    assert re.search(r"td\.num[^{]*\{[^}]*text-align: right", css)
    assert "µs" in doc.text_content() and not re.search(r"\d us\b|\(us\)", doc.text_content())


def test_numeric_columns():
    from tkperf.render.navigation import numeric_columns

    rows = [["4k", "1,234", "n/a", "+5.0%", "12.5 µs", "read"], ["8k", "99", "", "-0.1%", "n/s", "write"]]
    assert numeric_columns(rows) == [False, True, False, True, True, False]


def test_a_relative_outdir_keeps_the_pdf_plots(tmp_path, monkeypatch, capsys):
    """rst2pdf joins an image path to its base directory: the SVG plots'
    paths must not carry a relative --outdir twice (the demo's PDF lost
    every plot that way: 'Missing image file: tkperf-demo/tkperf-demo/...')."""
    from tkperf.cli import main

    example = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                           "example-ssd.xml")
    monkeypatch.chdir(tmp_path)
    assert main(["report", example, "--outdir", "rel", "--format", "html,pdf", "-q"]) == 0
    err = capsys.readouterr().err
    assert "Missing image" not in err and "warning" not in err, err
    text = subprocess.run(["pdftotext", str(tmp_path / "rel" / "example-ssd.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    assert "Block size (bytes, fio units: k = KiB)" in text  # an axis label: the plot is in, as vector text
