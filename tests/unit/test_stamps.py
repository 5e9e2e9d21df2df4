"""A chart's own file names its drive, run and test (issue 60 item 7): a
caption line in the picture and the SVG's <title> and <desc>; the drive's
words from the result file stay text."""
from __future__ import annotations

import dataclasses
import os

from lxml import etree

from tkperf import store
from tkperf.render import blocks as b
from tkperf.render import charts
from tkperf.report import compare, report

SVG = "{http://www.w3.org/2000/svg}"
MARKUP = '<b onclick="x()">Drive & Co</b> $x^2$'


def example(name: str) -> str:
    return os.path.join(os.path.dirname(__file__), "..", "..", "examples", f"{name}.xml")


def _svg(path: str) -> etree._Element:
    return etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True)).getroot()


def _texts(root: etree._Element) -> list:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_a_reports_svg_names_drive_run_and_test_and_markup_in_them_stays_text(tmp_path):
    run = store.load(example("example-ssd"))
    run.device = dataclasses.replace(run.device, model=MARKUP, serial="S/N<1>")
    run.name = "night&day"
    report.build_report(run, str(tmp_path), formats=("rst",), png=True)
    plots = tmp_path / "night_day-plots" if (tmp_path / "night_day-plots").exists() else next(tmp_path.glob("*-plots"))
    root = _svg(str(plots / "tp-by-bs.svg"))
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert list(root).index(title) == 0 and list(root).index(desc) == 1  # what a slide tool shows first
    for text in (title.text, desc.text):
        assert MARKUP in text and "S/N S/N<1>" in text and "run night&day" in text and "TP" in text
        assert "2026-11-25" in text
    assert len(title) == 0 and len(desc) == 0  # no element came from the strings
    stamp = next(t for t in _texts(root) if MARKUP in t)
    assert stamp.startswith("TP · run night&day 2026-11-25 00:16, quick · ")
    assert not root.findall(f".//{SVG}b") and not root.xpath("//@onclick")
    assert (plots / "tp-by-bs.png").stat().st_size > 0
    # every chart of the report is stamped, each with its own test
    for svg in plots.glob("*.svg"):
        line = next(t for t in _texts(_svg(str(svg))) if MARKUP in t)
        assert line.split(" · ")[0] == svg.name.split("-")[0].upper(), svg.name


def test_a_comparisons_svg_names_every_run_and_drive(tmp_path):
    runs = [store.load(example("example-ssd")), store.load(example("example-full"))]
    compare.build_comparison(runs, str(tmp_path), formats=("rst",))
    root = _svg(str(tmp_path / "comparison-plots" / "tp.svg"))
    title = root.find(f"{SVG}title").text
    assert " — TP · comparison of 2 runs · example-ssd: " in title and "example-full: " in title
    assert any(t.startswith("TP · comparison of 2 runs") for t in _texts(root))


def _y(el: etree._Element) -> float:
    """Where a text's baseline sits, in points from the top."""
    return float(el.get("y"))


def test_the_stamp_keeps_clear_of_a_figure_title(tmp_path):
    """A chart with a figure-level title (grouped bars): the layout puts
    that title at the top; the stamp's strip pushes it down."""
    grid = b.Grid(rows=("4k",), row_keys=(4096.0,), cols=("a", "b"), values=((1.0, 2.0),), unit="IOPS")
    spec = b.BarsChart((b.Panel(grid, "left", "IOPS"), b.Panel(grid, "right", "IOPS")), title="Figure title")
    stamp = b.Stamp("IOPS · run r · a drive")
    charts.draw(b.Stamped(spec, stamp), str(tmp_path / "c.png"), ("svg",))
    root = _svg(str(tmp_path / "c.svg"))
    texts = {"".join(t.itertext()): t for t in root.iter(f"{SVG}text")}
    # the title's top (its baseline less its 10.8 px) is below the stamp's baseline
    assert _y(texts["IOPS · run r · a drive"]) < _y(texts["Figure title"]) - 10.8
    assert root.find(f"{SVG}title").text == "Figure title — IOPS · run r · a drive"
    charts.draw(spec, str(tmp_path / "plain.png"), ("svg",))  # no stamp: no line, no title
    plain = _svg(str(tmp_path / "plain.svg"))
    assert plain.find(f"{SVG}title") is None and "IOPS · run r · a drive" not in _texts(plain)
