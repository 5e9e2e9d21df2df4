"""The PDF's charts: drawn from the graphic recorded while each chart's SVG
was drawn (tkperf.render.recorder), at the size known before drawing, by a
PDF writer that starts before the charts are done."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tkperf import store
from tkperf.render import blocks as b
from tkperf.render import documents, parallel
from tkperf.render.pdf import PdfGraphic
from tkperf.report import report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def example_charts(name: str = "example-full"):
    run = store.load(os.path.join(ROOT, "examples", f"{name}.xml"))
    return b.charts(report.report_blocks(run))


def pdftotext(path, *args) -> str:
    return subprocess.run(["pdftotext", *args, str(path), "-"], check=True, capture_output=True,
                          text=True).stdout


def test_every_chart_is_drawn_at_the_size_known_before_it_is_drawn(tmp_path):
    """The PDF writer lays the pages out before the charts come: each
    chart's graphic (and its SVG) has the size ``chart_inches`` predicts."""
    charts = example_charts()
    kinds = {type(c.spec).__name__ for c in charts}
    assert {"HeatmapChart", "WindowChart", "HistogramChart", "ConfidenceChart", "BarsChart"} <= kinds
    for chart in charts:
        done = parallel._draw_one(str(tmp_path / chart.filename), chart.spec, ("svg", "pdf-graphic"))
        assert not done.kind, done.warning()
        assert isinstance(done.graphic, PdfGraphic)
        width, height = (72 * v for v in b.chart_inches(chart.spec))
        assert (done.graphic.width, done.graphic.height) == pytest.approx((width, height)), chart.filename
        svg = (tmp_path / chart.filename).with_suffix(".svg").read_text()
        assert f'width="{width:g}pt" height="{height:g}pt"' in svg, chart.filename


def _page_of(graphic: PdfGraphic, path) -> None:
    from reportlab.pdfgen import canvas

    canv = canvas.Canvas(str(path), pagesize=(graphic.width, graphic.height))
    graphic.drawOn(canv)
    canv.showPage()
    canv.save()


def test_text_sits_where_the_svg_puts_it(tmp_path):
    """Text is set in Helvetica but anchored as the SVG anchors it: the
    centred title's middle and the right-aligned tick labels' right ends
    are where the SVG puts them, and every word of the SVG is in the PDF."""
    spec = b.ConvergenceChart(
        series=(b.Series("RND 4k W", (1.0, 2.0, 3.0, 4.0, 5.0), (1000.0, 2000.0, 1500.0, 1800.0, 1700.0)),),
        window=(3, 4, 5), ylabel="IOPS", title="A centred title of some length", legend_title="Workload")
    done = parallel._draw_one(str(tmp_path / "c.png"), spec, ("svg", "pdf-graphic"))
    assert not done.kind, done.warning()
    _page_of(done.graphic, tmp_path / "c.pdf")
    svg = (tmp_path / "c.svg").read_text()
    title = re.search(r'<text [^>]*x="([\d.]+)" y="([\d.]+)"[^>]*text-anchor: middle[^>]*>A centred title', svg)
    if title is None:  # attribute order differs between matplotlib versions
        title = re.search(r'<text [^>]*style="[^"]*text-anchor: middle[^"]*"[^>]*x="([\d.]+)" y="([\d.]+)"'
                          r'[^>]*>A centred title', svg)
    assert title, svg[:3000]
    words = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
                       pdftotext(tmp_path / "c.pdf", "-bbox"))
    line = [w for w in words if w[4] in ("A", "centred", "title", "of", "some", "length")]
    assert len(line) == 6
    middle = (float(line[0][0]) + float(line[-1][2])) / 2
    assert middle == pytest.approx(float(title.group(1)), abs=1.5)
    assert float(line[0][1]) < float(title.group(2)) <= float(line[0][3]) + 1  # the baseline inside the box
    top_label = [w for w in words if w[4] == "2,000"]
    assert top_label, [w[4] for w in words]
    svg_words = set(re.findall(r">([^<>\s]+)</text>", svg))
    pdf_words = {w[4] for w in words}
    assert svg_words <= pdf_words | {"–"}, svg_words - pdf_words


def test_transparency_dashes_and_images_reach_the_pdf(tmp_path):
    """The grid is translucent (an ExtGState in the PDF) and a cloud of
    dots a picture: the PDF graphic keeps what the SVG has."""
    rng = np.random.default_rng(1)
    dense = b.CurvesChart((b.Curve("dots", np.arange(5000.0), 1000 + rng.standard_normal(5000)),),
                          "Time", "IOPS", title="Many dots")
    done = parallel._draw_one(str(tmp_path / "d.png"), dense, ("svg", "pdf-graphic"))
    assert not done.kind, done.warning()
    kinds = [op[0] for op in done.graphic.ops]
    assert "image" in kinds and "alpha" in kinds
    _page_of(done.graphic, tmp_path / "d.pdf")
    listing = subprocess.run(["pdfimages", "-list", str(tmp_path / "d.pdf")], check=True, capture_output=True,
                             text=True).stdout.splitlines()[2:]
    assert len(listing) >= 1
    raw = (tmp_path / "d.pdf").read_bytes()
    assert re.search(rb"/CA \.3\b|/CA 0\.3\b", raw), raw[:1500]  # the grid's stroke transparency


def test_without_svglib_the_pdf_still_has_vector_plots(tmp_path, monkeypatch):
    """svglib is not needed for the report's own charts: each is drawn from
    its recorded graphic, as vector graphics with text (no PNGs drawn)."""
    import rst2pdf.image

    monkeypatch.setitem(sys.modules, "svglib.svglib", None)  # import now raises ImportError
    monkeypatch.setattr(rst2pdf.image, "SVGImage", None)
    run = store.load(os.path.join(ROOT, "examples", "example-ssd.xml"))
    result = report.build_report(run, str(tmp_path), ("pdf",))
    assert result.warnings == ()
    plots = os.listdir(tmp_path / "example-ssd-plots")
    assert plots and all(p.endswith(".svg") for p in plots)
    text = pdftotext(tmp_path / "example-ssd.pdf")
    assert "Block size (bytes, fio units: k = KiB)" in text  # an axis label: vector text
    assert rst2pdf.image.SVGImage is None  # rst2pdf as it was


def test_a_chart_that_fails_starts_the_pdf_anew_without_it(tmp_path):
    """The PDF writer starts while the charts are drawn, as if all will be;
    when one fails, it is stopped and the PDF written from the reST that says
    so: the PDF holds the sentence and every other chart."""
    bad = b.CurvesChart((b.Curve("x", np.arange(3.0), np.arange(4.0)),), "Time", "IOPS")
    good = b.ConvergenceChart(series=(b.Series("w", (1.0, 2.0), (5.0, 6.0)),), ylabel="Good axis",
                              title="The good chart")
    content = [b.Title("T"), b.Chart("good.png", good, "Good."), b.Chart("bad.png", bad, "Bad."),
               b.Chart("good2.png", good, "Good again.")]
    result = documents.publish(content, str(tmp_path), "doc", ("html", "pdf"))
    assert len(result.warnings) == 1 and "bad.svg could not be drawn" in result.warnings[0]
    text = pdftotext(tmp_path / "doc.pdf")
    assert "could not be drawn" in text
    assert text.count("Good axis") == 2
    assert sorted(os.listdir(tmp_path / "doc-plots")) == ["good.svg", "good2.svg"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".") or n.endswith(".tmp")]


def test_the_pdf_writer_waits_for_charts_still_being_drawn(tmp_path, monkeypatch):
    """The PDF writer draws its pages while the charts come: a chart that
    comes late is waited for, and the PDF has every chart."""
    import time

    from tkperf.render import charts

    slow = charts.DRAWINGS[b.ConvergenceChart]

    def late(path, spec):
        time.sleep(0.5)
        return slow(path, spec)

    monkeypatch.setitem(charts.DRAWINGS, b.ConvergenceChart, late)
    starts = []
    real_start = documents.PdfChild.start

    def start(*args, **kwargs):
        starts.append(os.listdir(tmp_path / "doc-plots"))
        return real_start(*args, **kwargs)

    monkeypatch.setattr(documents.PdfChild, "start", start)
    series = (b.Series("w", (1.0, 2.0), (5.0, 6.0)),)
    content = [b.Title("T")] + [b.Chart(f"c{i}.png", b.ConvergenceChart(series, f"Axis {i}", f"Chart {i}"),
                                        f"Caption {i}.") for i in range(3)]
    result = documents.publish(content, str(tmp_path), "doc", ("pdf",))
    assert result.warnings == ()
    assert starts and len([n for n in starts[0] if n.endswith(".svg")]) < 3  # started before the charts were done
    text = pdftotext(tmp_path / "doc.pdf")
    for i in range(3):
        assert f"Axis {i}" in text and f"Chart {i}" in text


def test_text_outside_the_pdf_fonts_does_not_break_a_chart(tmp_path):
    """Labels come from result files: characters Helvetica lacks (CJK, a
    control character) still give a chart and a PDF page, with the rest
    of the text as it is."""
    import warnings

    spec = b.ConvergenceChart((b.Series("drive \u65e5\u672c \x1b[31m", (1.0, 2.0), (3.0, 4.0)),), "\u00b5s \u2265",
                              "Title \u2265 \u00fcn\u00efcode")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # matplotlib's own: no such glyph in DejaVu Sans
        done = parallel._draw_one(str(tmp_path / "u.png"), spec, ("svg", "pdf-graphic"))
    assert not done.kind, done.warning()
    _page_of(done.graphic, tmp_path / "u.pdf")
    text = pdftotext(tmp_path / "u.pdf")
    assert "Title \u2265" in text and "\u00fcn\u00efcode" in text and "\u00b5s" in text


def test_the_svg_drawn_with_the_pdf_graphic_is_the_one_savefig_writes(tmp_path):
    """Drawing the PDF graphic in the same pass changes nothing in the SVG
    (the HTML's plots): byte for byte what matplotlib's savefig writes."""
    (tmp_path / "alone").mkdir()
    (tmp_path / "both").mkdir()
    charts = example_charts("example-ssd")
    for chart in charts:
        parallel._draw_one(str(tmp_path / "alone" / chart.filename), chart.spec, ("svg",))
        parallel._draw_one(str(tmp_path / "both" / chart.filename), chart.spec, ("svg", "pdf-graphic"))
        name = os.path.splitext(chart.filename)[0] + ".svg"
        assert (tmp_path / "alone" / name).read_bytes() == (tmp_path / "both" / name).read_bytes(), name
    assert len(charts) >= 5


def test_an_infinite_coordinate_is_a_number_the_pdf_can_hold():
    """A value at a log axis's zero is -inf on the page: a path breaks
    there, and any other coordinate is a far-away number; never 'inf' or
    'nan' in the operators (either would break the page)."""
    from matplotlib.path import Path
    from matplotlib.transforms import IdentityTransform

    from tkperf.render.recorder import _num, _path_ops

    ops = _path_ops(Path([(0.0, 0.0), (10.0, float("-inf")), (20.0, 5.25), (30.0, float("nan"))]),
                    IdentityTransform())
    assert ops == "0 0 m 20 5.25 m"
    assert [_num(v) for v in (float("inf"), float("-inf"), float("nan"), 1e12, -0.001)] == [
        "100000", "-100000", "-100000", "100000", "0"]


def test_rst2pdf_is_loaded_without_matplotlib_and_leaves_it_loadable():
    """The process that parses the report loads rst2pdf without the
    matplotlib it wants only for math; matplotlib still loads afterwards,
    and where it was loaded first rst2pdf has its math as usual."""
    code = ("import sys\n"
            "from tkperf.render import pdf\n"
            "pdf.load_rst2pdf()\n"
            "import rst2pdf.math_flowable as m\n"
            "print('matplotlib' in sys.modules, m.HAS_MATPLOTLIB, 'svglib' in sys.modules)\n"
            "import matplotlib.pyplot\n"
            "print('loadable')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False", "loadable"]
    first = "import matplotlib\n" + code.replace("import matplotlib.pyplot\n", "")
    out = subprocess.run([sys.executable, "-c", first], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "False", "loadable"]


def test_an_svg_that_is_no_chart_is_still_read_by_svglib(tmp_path):
    """svglib, kept out while rst2pdf loads, is loaded when an SVG image
    that is not a chart is met, and draws it as vector graphics."""
    (tmp_path / "drawing.svg").write_text(
        "<svg xmlns='http://www.w3.org/2000/svg' width='200' height='50'>"
        "<text x='10' y='30' font-size='14'>Hello from an SVG</text></svg>")
    code = ("import sys\n"
            "from tkperf.render import documents, pdf\n"
            "pdf.load_rst2pdf()\n"
            "assert 'svglib' not in sys.modules\n"
            f"doctree, _ = documents.parse_rst('.. image:: drawing.svg\\n', {str(tmp_path / 'd.rst')!r})\n"
            f"data, problems = pdf.render_pdf(doctree, {str(tmp_path)!r}, False, {{}})\n"
            "assert problems == [], problems\n"
            f"open({str(tmp_path / 'd.pdf')!r}, 'wb').write(data)\n"
            "print('svglib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"]
    assert "Hello from an SVG" in pdftotext(tmp_path / "d.pdf")
