"""The renderer: blocks -> reST, charts drawn in parallel from plain specs,
``show`` without matplotlib, test types that are not installed or that rely
on the generic sections."""
from __future__ import annotations

import copy
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from typing import List

import numpy as np
import pytest

from tkperf import store
from tkperf.fio.jobs import FioJob
from tkperf.kit import registry
from tkperf.kit.base import Figure, Plan, TestType
from tkperf.kit.shapes import Stream
from tkperf.model.results import RunResult
from tkperf.render import blocks as b
from tkperf.render import documents, parallel, rst
from tkperf.report import compare, report, summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PNG = b"\x89PNG\r\n\x1a\n"
NOTE = "test type nosuchtype is not installed; install it to see its own figures"


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", f"{name}.xml")


def load(name: str) -> RunResult:
    return store.load(example(name))


def grid() -> b.Grid:
    return b.Grid(rows=("4k", "128k"), row_keys=(4096.0, 131072.0), cols=("100/0", "0/100"),
                  values=((1000.0, 900.0), (300.0, None)), unit="IOPS")


# --- blocks -> reST ----------------------------------------------------------------------

def test_title_heading_rubric_paragraph():
    bar = "=" * len("Report of \\*x\\*")
    assert rst.to_rst([b.Title("Report of *x*")]) == f"{bar}\nReport of \\*x\\*\n{bar}\n"
    assert rst.to_rst([b.Heading("IOPS")]) == "IOPS\n====\n"
    # Below level 1 a PDF page break first, unless room_cm is left on the page.
    assert rst.to_rst([b.Heading("Window", 2, room_cm=10)]) == (
        ".. raw:: pdf\n\n   FrameBreak 283\n\nWindow\n------\n")
    assert rst.to_rst([b.Heading("Deep", 3)]) == ".. raw:: pdf\n\n   FrameBreak 142\n\nDeep\n~~~~\n"
    assert rst.to_rst([b.Rubric("Summary")]) == ".. rubric:: Summary\n"
    # Plain text is made inert: no markup, no list, no line break.
    assert rst.to_rst([b.Paragraph("- a `b`\nc")]) == "\\- a \\`b\\` c\n"
    assert rst.to_rst([b.Paragraph("one"), b.Paragraph("two")]) == "one\n\ntwo\n"
    with pytest.raises(ValueError):
        b.Heading("x", 5)


def test_admonition_table_literal():
    assert rst.to_rst([b.Admonition("warning", ())]) == ""
    assert rst.to_rst([b.Admonition("note", ("only one",))]) == ".. note::\n\n   only one\n"
    assert rst.to_rst([b.Admonition("warning", ("a", "b"))]) == ".. warning::\n\n   * a\n   * b\n"
    table = b.table(["Name", "Value"], [["x", "1"], ["y", ""]], title="T", widths=[50, 50], stub_columns=1)
    assert rst.to_rst([table]) == (
        ".. list-table:: T\n   :header-rows: 1\n   :widths: 50 50\n   :stub-columns: 1\n\n"
        "   * - Name\n     - Value\n   * - x\n     - 1\n   * - y\n     -\n")
    # docutils refuses a table without a body row: it gets one that says so.
    assert "   * - none\n     -\n" in rst.to_rst([b.table(["A", "B"], [])])
    with pytest.raises(ValueError):
        b.table(["A", "B"], [["only one"]])
    assert rst.to_rst([b.Literal("line 1\n  line 2")]) == "::\n\n   line 1\n     line 2\n"


def test_header_is_one_list_table_whose_columns_run_on():
    """Platform then set-up on the left, device then test on the right: a
    short group does not leave blank rows beside a long one (issue 48 item 9)."""
    h = b.Header(platform=(("Host", "vm"),), device=(("Model", "X"), ("Serial", "1")),
                 setup=(("Data pattern", "random"),), test=(("Stimulus", "RND"),))
    text = rst.to_rst([h])
    assert text.count(".. list-table::") == 1 and text.count(":widths: 16 34 16 34") == 1
    assert "   * - Test platform\n     -\n     - Device under test\n     -\n" in text
    assert ("   * - Host\n     - vm\n     - Model\n     - X\n"
            "   * - **Set-up parameters**\n     -\n     - Serial\n     - 1\n"
            "   * - Data pattern\n     - random\n     - **Test parameters**\n     -\n"
            "   * -\n     -\n     - Stimulus\n     - RND\n") in text
    # a value that looks like a group title is text, escaped, never bold
    text = rst.to_rst([b.Header(platform=(("Host", "**Set-up parameters**"),), device=(), setup=(), test=())])
    assert "     - \\*\\*Set-up parameters\\*\\*\n" in text


def test_chart_is_a_figure_or_a_sentence():
    chart = b.Chart("c.png", b.LinesChart(grid(), "IOPS", "t"), "A caption.")
    assert rst.to_rst([chart], "r-plots") == (
        ".. figure:: r-plots/c.png\n   :width: 100%\n   :alt: A caption.\n\n   A caption.\n")
    assert rst.to_rst([chart], "r-plots", {"c.png": "no room"}) == (
        "\\(The plot c.png could not be drawn: no room.)\n")
    with pytest.raises(TypeError):
        rst.to_rst(["not a block"])


def test_normalised_curve_peaks_at_one():
    c = b.Curve("a", np.array([1.0, 2.0, 3.0]), np.array([50.0, 200.0, 100.0]))
    assert list(c.normalised().y) == [0.25, 1.0, 0.5]
    assert list(c.normalised().x) == [1.0, 2.0, 3.0]
    flat = b.Curve("z", np.array([1.0]), np.array([0.0]))
    assert list(flat.normalised().y) == [0.0]


# --- charts -----------------------------------------------------------------------------

def specs(n: int) -> list:
    """``n`` chart specs of every kind."""
    g = grid()
    kinds = [
        b.LinesChart(g, "IOPS", "lines"),
        b.HeatmapChart(g, "heat", "IOPS"),
        b.BarsChart((b.Panel(g, "bars", "IOPS"),)),
        b.ConvergenceChart((b.Series("4k", (1.0, 2.0, 3.0), (5.0, 6.0, float("nan"))),), "IOPS", "conv", (2, 3)),
        b.WindowChart("w", "IOPS", (1, 2, 3), (5.0, 6.0, 5.5), (1, 2, 3), (5.0, 6.0, 5.5), 5.5, 0.25, 5.0, "v"),
        b.CurvesChart((b.Curve("run", np.arange(1.0, 5000.0), np.linspace(10, 1, 4999)),), "Time", "IOPS",
                      time_axis=True),
    ]
    return [kinds[i % len(kinds)] for i in range(n)]


def test_the_layout_measures_texts_as_the_svg_is_drawn_and_makes_no_raster(tmp_path, monkeypatch):
    """A chart drawn as SVG (and PDF graphic) is laid out with the texts
    measured as the SVG renderer measures them, each once per process, and
    without an Agg renderer (whose measures differ and cost as much again)."""
    import matplotlib.backends.backend_agg as agg
    from matplotlib.backends.backend_svg import RendererSVG
    from matplotlib.font_manager import FontProperties

    from tkperf.render import plotting, recorder

    made = []  # the canvas's Agg renderers (rasterized parts have their own, made by the SVG's renderer)
    real_renderer = agg.FigureCanvasAgg.get_renderer
    monkeypatch.setattr(agg.FigureCanvasAgg, "get_renderer",
                        lambda self, *a, **k: made.append(self.figure.dpi) or real_renderer(self, *a, **k))
    monkeypatch.setattr(recorder, "_MEASURED", {})
    measured = []
    real_measure = recorder._TEXT_TO_PATH.get_text_width_height_descent
    monkeypatch.setattr(recorder._TEXT_TO_PATH, "get_text_width_height_descent",
                        lambda s, prop, ismath: measured.append((s, prop.copy())) or real_measure(s, prop, ismath))
    for i, spec in enumerate(specs(6)):
        done = parallel._draw_one(str(tmp_path / f"c{i}.png"), spec, ("svg", "pdf-graphic"))
        assert done.error == ""
    assert made == []
    assert "heat" in [m[0] for m in measured] and len(measured) == len(set(measured))  # each once, layout and drawing
    svg = RendererSVG(100, 100, io.StringIO())
    with matplotlib_style():
        prop = FontProperties(size=10)
        assert recorder.measured_text("heat", prop, False) == svg.get_text_width_height_descent("heat", prop, False)
    # With a PNG, the PNG is drawn by Agg, at the same layout.
    parallel._draw_one(str(tmp_path / "p.png"), specs(1)[0], ("png", "svg"))
    assert made and set(made) == {plotting.DPI}


def matplotlib_style():
    import matplotlib

    from tkperf.render import plotting

    return matplotlib.rc_context(plotting._RC)


def test_heatmap_cells_are_vector_rectangles_in_the_svg_and_the_pdf(tmp_path):
    import matplotlib
    from matplotlib.colors import Normalize, to_hex

    path = str(tmp_path / "heat.png")
    done = parallel._draw_one(path, b.HeatmapChart(grid(), "heat", "IOPS"), ("svg", "pdf-graphic"))
    assert done.error == ""
    svg = (tmp_path / "heat.svg").read_text()
    ops = done.graphic.ops
    # One raster image in each (the colour bar's gradient), none for the cells.
    assert svg.count("<image") == 1 and [op[0] for op in ops].count("image") == 1
    norm = Normalize(vmin=0.0, vmax=1000.0)  # values within a factor of 30: a linear scale from 0
    for value in (1000.0, 900.0, 300.0):
        rgb = matplotlib.colormaps["viridis"](norm(value))[:3]
        assert f"fill: {to_hex(rgb)}" in svg, value
        assert " ".join(f"{c:.3f}".rstrip("0").rstrip(".") for c in rgb) + " rg" in "".join(
            op[1] for op in ops if op[0] == "lit"), value
    # The cell without a value is grey, as the background of the axes.
    assert svg.count("fill: #ebebeb") >= 1


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_charts_are_drawn_by_more_than_one_process(tmp_path):
    jobs = [(str(tmp_path / f"c{i}.png"), s) for i, s in enumerate(specs(12))]
    with parallel.Drawing(jobs) as drawing:
        assert drawing.parallel
        done = drawing.wait()
    assert [d.path for d in done] == [p for p, _ in jobs]
    assert all(not d.kind for d in done), [d.warning() for d in done if d.kind]
    pids = {d.pid for d in done}
    assert len(pids) == 2 and os.getpid() not in pids
    for path, _ in jobs:
        with open(path, "rb") as fh:
            assert fh.read(8) == PNG


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_charts_of_a_drawing_process_that_died_are_drawn_here(tmp_path, monkeypatch):
    """A drawing process that dies (killed, out of memory) costs no chart:
    what it did not send back is drawn by the report's own process."""
    from tkperf.render import charts

    parent = os.getpid()
    heatmap = charts.DRAWINGS[b.HeatmapChart]

    def dies_in_a_child(path, spec):
        if os.getpid() != parent:
            os._exit(9)
        return heatmap(path, spec)

    monkeypatch.setitem(charts.DRAWINGS, b.HeatmapChart, dies_in_a_child)
    jobs = [(str(tmp_path / f"c{i}.png"), s) for i, s in enumerate(specs(6))]
    done = parallel.draw_charts(jobs, outputs=("svg",))
    assert [d.path for d in done] == [p for p, _ in jobs]
    assert all(not d.kind for d in done), [d.warning() for d in done if d.kind]
    assert done[1].pid == parent  # the heat map, drawn here after its process died
    for path, _ in jobs:
        assert "<svg" in (tmp_path / os.path.basename(path)).with_suffix(".svg").read_text()[:2000]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_drawers_made_ready_before_draw_the_charts_they_are_given(tmp_path):
    """Drawers started before the charts are known (matplotlib loads while
    the result file does) draw them when a Drawing hands them over."""
    with parallel.Drawers() as drawers:
        leader = drawers._ready[0]
        jobs = [(str(tmp_path / f"r{i}.png"), s) for i, s in enumerate(specs(4))]
        with parallel.Drawing(jobs, outputs=("svg",), drawers=drawers) as drawing:
            assert drawing.parallel
            done = drawing.wait()
        assert drawers.take() is None  # handed over once
    assert all(not d.kind for d in done), [d.warning() for d in done if d.kind]
    assert leader.pid in {d.pid for d in done} and os.getpid() not in {d.pid for d in done}
    assert leader.exitcode == 0
    for path, _ in jobs:
        assert "<svg" in (tmp_path / os.path.basename(path)).with_suffix(".svg").read_text()[:2000]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_drawing_processes_finish_while_the_parent_is_busy(tmp_path):
    """The charts' answers, PDF graphics of over a pipe's usual 64 KiB, wait
    in the pipe for the parent (busy parsing the reST meanwhile) instead of
    holding the drawing processes up."""
    curves = b.CurvesChart(tuple(b.Curve(f"run {k}", np.arange(1.0, 200.0), np.linspace(10 + k, 1, 199))
                                 for k in range(2)), "Time", "IOPS", time_axis=True)  # 2 x 199 markers each
    jobs = [(str(tmp_path / f"big{i}.png"), curves) for i in range(4)]
    with parallel.Drawing(jobs, outputs=("svg", "pdf-graphic")) as drawing:
        leader = drawing._leader
        leader.join(timeout=120)  # nothing read yet: it ends only if every answer fit in the pipe
        assert leader.exitcode == 0
        done = drawing.wait()
    assert all(not d.kind for d in done)
    assert sum(len(pickle.dumps(d)) for d in done) > 4 * 65536


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"),
                    reason="needs /proc/PID/task/TID/children")
def test_drawing_processes_end_with_a_stopped_first_process(tmp_path):
    """Stopping the first drawing process (an interrupt, a killed report)
    ends the others it forked, even one waiting for a lock it held."""
    jobs = [(str(tmp_path / f"c{i}.png"), s) for i, s in enumerate(specs(40))]
    with parallel.Drawing(jobs, outputs=("svg",)) as drawing:
        leader = drawing._leader
        followers = _children_of(leader.pid)
        leader.terminate()
        leader.join()
        for pid in followers:
            assert _ends(pid), f"drawing process {pid} outlived its first process"
    # They ended at once, not after drawing what was left.
    assert len(list(tmp_path.glob("*.svg"))) < len(jobs) / 2


def _children_of(pid: int) -> List[int]:
    """The processes ``pid`` forked, once it has (60 s at most)."""
    for _ in range(600):
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            found = [int(p) for p in fh.read().split()]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"process {pid} forked no drawing process")


def _ends(pid: int) -> bool:
    """Whether ``pid`` ends (or is a zombie) within 60 s."""
    for _ in range(600):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_roomy_pipes_hold_a_megabyte():
    import fcntl
    import multiprocessing

    receive, send = multiprocessing.Pipe(duplex=False)
    try:
        parallel.roomy(receive)
        assert fcntl.fcntl(send.fileno(), 1032) >= min(parallel.PIPE_ROOM, _pipe_max())  # F_GETPIPE_SZ
    finally:
        receive.close()
        send.close()


def _pipe_max() -> int:
    with open("/proc/sys/fs/pipe-max-size", encoding="ascii") as fh:
        return int(fh.read())


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_drawers_not_used_are_stopped(tmp_path):
    """A report that fails before its charts (a bad result file) leaves no
    drawing process behind."""
    with pytest.raises(RuntimeError):
        with parallel.Drawers() as drawers:
            leader = drawers._ready[0]
            raise RuntimeError("the result file was bad")
    assert leader.exitcode is not None and not leader.is_alive()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_drawers_not_used_end_when_their_pipe_is_closed_without_a_signal():
    """The SIGTERM that stops unused drawers is lost when it arrives while
    the fork's own hooks run (tkperf's handler raises there, and the raise
    goes nowhere), so closing the jobs pipe alone must end the drawer: it
    holds no writing end of its own."""
    drawers = parallel.Drawers()
    ready = drawers.take()
    assert ready is not None
    leader, answers, jobs_in = ready
    jobs_in.close()  # what close() does, without the signal
    leader.join(60)
    alive = leader.is_alive()
    if alive:
        leader.kill()
        leader.join()
    answers.close()
    assert not alive and leader.exitcode == 0


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_drawers_stopped_the_moment_they_start_end_by_the_signal():
    """Under the command's handler, a drawer stopped the moment it is
    forked ends by that signal: the signal waits until the child is in its
    own code, instead of coming while the fork is made (Python's own
    after-fork step then drops it, and the drawer went on until its pipe
    closed; raised before the child's code, it carried the copy of the
    caller on with the caller's code, as a test's copy ran the next tests)."""
    from tkperf.target import guard

    me, codes = os.getpid(), []
    with guard.signals_raise():
        for _ in range(10):
            try:
                drawers = parallel.Drawers()
            finally:
                if os.getpid() != me:  # a copy of this process, carried out of the fork
                    os._exit(99)
            ready = drawers.take()
            assert ready is not None
            leader, answers, jobs_in = ready
            leader.terminate()
            jobs_in.close()
            leader.join(60)
            if leader.is_alive():
                leader.kill()
                leader.join()
            answers.close()
            codes.append(leader.exitcode)
    assert codes == [-signal.SIGTERM] * 10  # ended by the signal itself, as without tkperf's handler


def _stopped_by_sigterm() -> None:
    from tkperf.errors import Interrupted

    raise Interrupted(signal.SIGTERM, "SIGTERM")  # what tkperf's handler, inherited by the fork, raises


def test_a_drawing_process_stopped_by_a_signal_ends_quietly(capfd):
    """A drawing process stopped by a signal ends with its exit status and
    writes nothing: a command's stderr keeps its one line."""
    import multiprocessing

    proc = multiprocessing.get_context("fork").Process(target=parallel._started,
                                                       args=(os.getpid(), _stopped_by_sigterm))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 128 + signal.SIGTERM
    assert capfd.readouterr().err == ""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_charts_that_cannot_travel_to_ready_drawers_are_drawn_as_without_them(tmp_path):
    """Charts go to ready drawers through a pipe; one that cannot (a spec
    holding a function) is drawn by processes forked as usual, which have
    it already."""
    class Odd:
        shape = staticmethod(lambda: None)

    with parallel.Drawers() as drawers:
        leader = drawers._ready[0]
        jobs = [(str(tmp_path / "a.png"), specs(1)[0]), (str(tmp_path / "odd.png"), Odd())]
        done = parallel.Drawing(jobs, outputs=("svg",), drawers=drawers).wait()
    assert not done[0].kind
    assert done[1].kind == "TypeError" and "no drawing for a Odd" in done[1].error
    assert leader.pid not in {d.pid for d in done} and not leader.is_alive()


def test_a_report_through_the_command_line_uses_ready_drawers(tmp_path, monkeypatch):
    """``tkperf report`` makes its drawers ready before it loads the file."""
    from tkperf.cli import main

    made = []
    real = parallel.Drawers.__init__

    def init(self, *args, **kwargs):
        made.append(args)
        real(self, *args, **kwargs)

    monkeypatch.setattr(parallel.Drawers, "__init__", init)
    assert main(["report", example("example-ssd"), "--outdir", str(tmp_path), "--format", "rst,pdf", "-q"]) == 0
    assert made == [()]
    assert (tmp_path / "example-ssd.pdf").stat().st_size > 10000


def test_one_chart_or_one_cpu_is_drawn_here(tmp_path):
    (done,) = parallel.draw_charts([(str(tmp_path / "one.png"), specs(1)[0])])
    assert done.pid == os.getpid() and not done.kind
    done = parallel.draw_charts([(str(tmp_path / f"s{i}.png"), s) for i, s in enumerate(specs(3))], workers=1)
    assert {d.pid for d in done} == {os.getpid()}


def test_a_chart_that_fails_is_a_warning_not_a_failed_report(tmp_path):
    bad = b.CurvesChart((b.Curve("x", np.arange(3.0), np.arange(4.0)),), "Time", "IOPS")
    content = [b.Title("T"), b.Chart("good.png", specs(1)[0], "Good."),
               b.Chart("bad.png", bad, "Bad."), b.Chart("odd.png", object(), "Odd.")]
    result = documents.publish(content, str(tmp_path), "doc", ("rst", "html"))
    assert len(result.warnings) == 2
    assert result.warnings[0] == ("plot bad.svg could not be drawn: ValueError: curve 'x': 3 x values "
                                  "for 4 y values")
    assert result.warnings[1].startswith("plot odd.svg could not be drawn: TypeError: no drawing for")
    text = (tmp_path / "doc.rst").read_text(encoding="utf-8")
    assert ".. figure:: doc-plots/good.svg" in text
    assert "\\(The plot bad.svg could not be drawn: curve 'x': 3 x values for 4 y values.)" in text
    assert sorted(os.listdir(tmp_path / "doc-plots")) == ["good.svg"]
    assert (tmp_path / "doc.html").stat().st_size > 0


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
@pytest.mark.parametrize("formats", [("rst", "html", "pdf"), ("rst", "html")])
def test_the_html_made_while_the_charts_are_drawn_is_the_html_made_after(tmp_path, monkeypatch, formats):
    """The HTML is rendered while the charts are still being drawn, with a
    placeholder for each, filled in when they are: the same bytes as
    rendering it afterwards, with every chart in its own place."""
    made_early = []
    real = documents.render_html
    monkeypatch.setattr(documents, "render_html",
                        lambda *a, **k: made_early.append(k.get("later") is not None) or real(*a, **k))
    report.build_report(load("example-full"), str(tmp_path), formats)
    assert made_early == [True]
    html = (tmp_path / "example-full.html").read_bytes()
    assert b"tkperf-chart-" not in html
    doctree, _ = documents.parse_rst((tmp_path / "example-full.rst").read_text(encoding="utf-8"),
                                     str(tmp_path / "example-full.rst"))
    after, warnings = real(doctree, str(tmp_path), copy=False)
    assert warnings == [] and html == after


def test_a_chart_placeholder_is_filled_only_where_it_was_put(tmp_path):
    """A text that looks like a placeholder stays as it is (placeholders
    are random); a chart whose SVG cannot be read keeps its link and is a
    warning."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    text = ("Text data:image/svg+xml;base64,tkperf-chart-0000000000000000-0- here.\n\n"
            ".. figure:: p/a.svg\n\n   A.\n\n.. figure:: p/b.svg\n\n   B.\n")
    doctree, _ = documents.parse_rst(text, str(tmp_path / "doc.rst"))
    later = {str(tmp_path / "p" / "a.svg"): None, str(tmp_path / "p" / "b.svg"): None}
    html, _ = documents.render_html(doctree, str(tmp_path), later=later)
    assert all(later.values()) and later[str(tmp_path / "p" / "a.svg")][0] != later[str(tmp_path / "p" / "b.svg")][0]
    filled, warnings = documents.fill_html(html, later)
    assert b"data:image/svg+xml;base64,tkperf-chart-0000000000000000-0- here" in filled
    assert b'src="data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnLz4="' in filled
    assert b'src="p/b.svg"' in filled and filled.count(b"tkperf-chart-") == 1
    assert warnings == ["HTML: cannot embed p/b.svg: No such file or directory"]


def test_png_plots_on_request_and_the_rst_refers_to_them(tmp_path):
    """``png``: every plot as a PNG too, the reST refers to the PNGs (the
    HTML still embeds the SVGs); a later build without it removes the PNGs."""
    content = [b.Title("T"), b.Chart("good.png", specs(1)[0], "Good.")]
    result = documents.publish(content, str(tmp_path), "doc", ("rst", "html"), png=True)
    assert result.warnings == ()
    assert sorted(os.listdir(tmp_path / "doc-plots")) == ["good.png", "good.svg"]
    assert (tmp_path / "doc-plots" / "good.png").read_bytes().startswith(b"\x89PNG")
    assert ".. figure:: doc-plots/good.png" in (tmp_path / "doc.rst").read_text(encoding="utf-8")
    assert b"data:image/svg+xml;base64," in (tmp_path / "doc.html").read_bytes()
    documents.publish(content, str(tmp_path), "doc", ("rst", "html"))
    assert sorted(os.listdir(tmp_path / "doc-plots")) == ["good.svg"]
    assert ".. figure:: doc-plots/good.svg" in (tmp_path / "doc.rst").read_text(encoding="utf-8")


def test_a_broken_drawing_in_a_real_report(tmp_path, monkeypatch):
    """A drawing that raises costs its chart, never the report (the pool's
    workers are forked, so they see the broken drawing too)."""
    from tkperf.render import charts

    def boom(path, spec):
        raise RuntimeError("no colours left")

    monkeypatch.setitem(charts.DRAWINGS, b.HeatmapChart, boom)
    result = report.build_report(load("example-ssd"), str(tmp_path), ("rst",))
    assert result.warnings == ("plot iops-iops-matrix.svg could not be drawn: RuntimeError: no colours left",)
    text = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert "\\(The plot iops-iops-matrix.svg could not be drawn: no colours left.)" in text
    assert ".. figure:: example-ssd-plots/iops-iops-by-bs.svg" in text


# --- show never loads matplotlib -------------------------------------------------------------

def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` run by a fresh Python on this checkout; it must exit 0."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("argv", [["show"], ["show", "--json"]], ids=["text", "json"])
def test_show_leaves_matplotlib_out(argv):
    code = ("import sys\n"
            "from tkperf.cli import main\n"
            f"rc = main({argv[:1] + [example('example-full')] + argv[1:]!r})\n"
            "assert 'matplotlib' not in sys.modules, 'show imported matplotlib'\n"
            "sys.exit(rc)\n")
    proc = _python(code)
    if "--json" in argv:
        assert json.loads(proc.stdout)["name"] == "example-full"
    else:
        assert proc.stdout.startswith("example-full: ")


def test_the_report_process_draws_nothing_itself(tmp_path):
    """Charts are drawn by the pool's workers: building the reST of a report
    does not load matplotlib into the process that builds it."""
    code = ("import sys\n"
            "from tkperf import store\n"
            "from tkperf.report import report\n"
            f"r = report.build_report(store.load({example('example-ssd')!r}), {str(tmp_path)!r}, ('rst',))\n"
            "assert not r.warnings, r.warnings\n"
            "assert 'matplotlib' not in sys.modules\n")
    _python(code)
    assert len(os.listdir(tmp_path / "example-ssd-plots")) >= 10


# --- test types that are not installed --------------------------------------------------------

def without_type(name: str, key: str) -> RunResult:
    run = copy.deepcopy(load(name))
    run.test(key).type = "nosuchtype"
    return run


def test_show_lists_a_test_of_a_type_not_installed():
    run = without_type("example-ssd", "lat")
    lines = summary.lines(run)
    assert any(line.strip().startswith("NOSUCHTYPE") for line in lines), lines
    tests = {t["key"]: t for t in summary.as_dict(run)["tests"]}
    assert tests["lat"]["headline"] == {} and tests["lat"]["rounds"] == 5


def test_report_of_a_test_type_not_installed(tmp_path):
    run = without_type("example-ssd", "lat")
    result = report.build_report(run, str(tmp_path), ("rst", "html"))
    assert result.warnings == ()
    text = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert NOTE in text
    assert "Test type nosuchtype is not installed" in text  # the summary's caveats
    # Its common parts: the header and its rounds; LAT's own figures are gone.
    assert text.count("Device under test") == 4
    assert "NOSUCHTYPE: every round" in text
    assert "Latency percentiles" not in text and "lat-window.png" not in text
    # The summary page has no latency figures without the LAT test type.
    assert "LAT rounds" not in text
    html = (tmp_path / "example-ssd.html").read_text(encoding="utf-8")
    assert NOTE in html and 'class="system-message' not in html


def test_comparison_with_a_test_type_not_installed(tmp_path):
    runs = [without_type("example-ssd", "wsat"), load("example-ssd-2")]
    result = compare.build_comparison(runs, str(tmp_path), ("rst",), name="cmp")
    assert result.warnings == ()
    text = (tmp_path / "cmp.rst").read_text(encoding="utf-8")
    assert NOTE in text
    assert "wsat-iops-vs-time.svg" in text  # example-ssd-2 still has its WSAT


# --- the generic sections of a test type that writes none --------------------------------------

class PlainRounds(TestType):
    """A plug-in-like test type with no sections of its own."""

    name = "plainr"
    title = "Plain rounds"
    short = "PLAINR"
    order = 90

    def plan(self, opts, capacity):  # pragma: no cover - never run here
        return []

    def headline(self, test):
        v = test.window_average(test.tracking_workload, "iops")
        return [] if v is None else [Figure("plain_iops", "tracked", v, "IOPS")]


class PlainStream(PlainRounds):
    name = "plains"
    title = "Plain stream"
    short = "PLAINS"
    order = 91

    def plan(self, opts, capacity):  # only asked which shape it runs: a stream, whose steps are intervals
        return [Plan(key=self.name, shape=Stream(FioJob(name="w", rw="randwrite", bs=4096, runtime=60), 1))]

    def headline(self, test):
        s = test.series.get("intervals")
        return [] if s is None or not len(s) else [Figure("plain_first", "first", float(s.column("iops")[0]), "IOPS")]


@pytest.fixture
def plain_types(monkeypatch):
    monkeypatch.setitem(registry.types(), "plainr", PlainRounds())
    monkeypatch.setitem(registry.types(), "plains", PlainStream())


def plain_run(name: str) -> RunResult:
    run = copy.deepcopy(load(name))
    run.test("iops").type = "plainr"
    run.test("wsat").type = "plains"
    return run


def figures_of(text: str) -> List[str]:
    return [os.path.basename(r) for r in re.findall(r"^\.\. figure:: (\S+)$", text, re.M)]


def test_generic_report_section(tmp_path, plain_types):
    run = plain_run("example-ssd")
    result = report.build_report(run, str(tmp_path), ("rst", "html"))
    assert result.warnings == ()
    text = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert "Plain rounds\n============" in text and "Plain stream\n============" in text
    assert "PLAINR: headline figures" in text
    assert "Every workload's averages, PLAINR rounds 1-5, NOT steady" in text
    assert "   * - rnd-4k-65-35\n" in text
    figures = figures_of(text)
    assert {"iops-convergence.svg", "iops-window.svg", "wsat-intervals-iops.svg"} <= set(figures)
    assert "IOPS per interval (intervals)" in text
    # The built-in types keep their own sections.
    assert "Throughput 1024k" in text and "lat-ave-max.svg" in figures
    assert text.count("Device under test") == 4
    for name in figures:
        with open(tmp_path / "example-ssd-plots" / name, "rb") as fh:
            assert b"<svg" in fh.read(2000)


def test_generic_compare_section(tmp_path, plain_types):
    runs = [plain_run("example-ssd"), plain_run("example-ssd-2")]
    result = compare.build_comparison(runs, str(tmp_path), ("rst",), name="cmp")
    assert result.warnings == ()
    text = (tmp_path / "cmp.rst").read_text(encoding="utf-8")
    assert "Plain rounds: headline figures, side by side" in text
    assert "   * - PLAINR tracked (IOPS)\n" in text
    assert "   * - PLAINS first (IOPS)\n" in text
    # Streams come first in a comparison, then the rest in the registry's order.
    assert text.index("Plain stream\n") < text.index("Throughput\n") < text.index("Plain rounds\n")


# --- the layout rule ---------------------------------------------------------------------------

def test_render_names_no_test_type_and_no_module_is_too_long():
    render = os.path.join(ROOT, "tkperf", "render")
    modules = [n for n in sorted(os.listdir(render)) if n.endswith(".py")]
    assert len(modules) >= 5, modules  # the renderer's modules were read, not an empty folder
    for name in modules:
        with open(os.path.join(render, name), encoding="utf-8") as fh:
            source = fh.read()
        assert len(source.splitlines()) <= 420, name
        for word in ('"tp"', '"lat"', '"wsat"', "'wsat'", 'test("iops")', 'tests_of("', '.name == "',
                     '.type == "', '"rnd-', '"seq-', 'f"rnd-', 'f"seq-', 'f"tp-'):
            assert word not in source, f"{name} names a test type or builds a workload name: {word}"
