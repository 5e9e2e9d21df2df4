"""The report of one run: built from the committed example result files (real
quick runs on loop devices) to reST, HTML and PDF, and looked into.

Each example is rendered to every format once per module (PDF rendering is
the slow part); the tests then read what was written.
"""
from __future__ import annotations

import base64
import copy
import dataclasses
import os
import re
import shutil
import subprocess
import sys

import lxml.html
import numpy as np
import pytest

from tkperf import pts, store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_RESULT_FILE, EXIT_USAGE, OutputError, UsageError
from tkperf.model.results import Event, IoStats, Round, RunResult, TestRun, Workload
from tkperf.render import rst
from tkperf.report import header, page, report, steady, words
from tkperf.testtypes import writesat
from tkperf.testtypes.iops import view as iops_view
from tkperf.testtypes.latency import view as lat_view
from tkperf.testtypes.writesat import view as wsat_view

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
GOLDEN = os.path.join(ROOT, "tests", "data", "example-ssd-summary.rst")
PNG = b"\x89PNG\r\n\x1a\n"
# A4 width in points and the right margin the report's PDF style sets (1.5 cm).
A4_WIDTH_PT = 595.28
MARGIN_PT = 1.5 / 2.54 * 72


def example(name: str) -> str:
    return os.path.join(EXAMPLES, f"{name}.xml")


def load(name: str) -> RunResult:
    return store.load(example(name))


def pdf_text(path: str, first: int = 0, last: int = 0) -> str:
    """The PDF's text, whitespace runs (line breaks too) made single spaces."""
    argv = ["pdftotext"]
    if first:
        argv += ["-f", str(first), "-l", str(last or first)]
    out = subprocess.run(argv + [path, "-"], check=True, capture_output=True, text=True).stdout
    return " ".join(out.split())


def pdf_lines(path: str) -> list:
    out = subprocess.run(["pdftotext", "-layout", path, "-"], check=True, capture_output=True,
                         text=True).stdout
    return [line.strip() for line in out.splitlines()]


def pdf_pages(path: str) -> int:
    out = subprocess.run(["pdfinfo", path], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def figure_refs(rst: str) -> list:
    return re.findall(r"^\.\. figure:: (\S+)$", rst, re.M)


def summary_table_rst(figures) -> str:
    """The summary page's table as reST, as the report writes it."""
    return rst.to_rst([page.summary_table(figures)])


@dataclasses.dataclass
class Built:
    run: RunResult
    outdir: str
    result: report.ReportResult

    def path(self, ext: str) -> str:
        return os.path.join(self.outdir, f"{self.run.name}.{ext}")

    def read(self, ext: str) -> str:
        with open(self.path(ext), encoding="utf-8") as fh:
            return fh.read()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each example rendered once, to every format, in its own directory."""
    cache = {}

    def get(name: str) -> Built:
        if name not in cache:
            run = load(name)
            outdir = str(tmp_path_factory.mktemp(name))
            cache[name] = Built(run, outdir, report.build_report(run, outdir))
        return cache[name]

    return get


@pytest.mark.parametrize("name", ["example-ssd", "example-client", "example-full"])
def test_every_format_is_written_without_warnings(built, name):
    b = built(name)
    assert b.result.warnings == ()
    assert b.result.paths == (b.path("rst"), b.path("html"), b.path("pdf"),
                              os.path.join(b.outdir, f"{name}-plots"))
    for ext in ("rst", "html", "pdf"):
        assert os.path.getsize(b.path(ext)) > 1000
    with open(b.path("pdf"), "rb") as fh:
        assert fh.read(5) == b"%PDF-"
    # No temporary file of the atomic writes is left behind.
    assert not [n for n in os.listdir(b.outdir) if n.endswith(".tmp")]


@pytest.mark.parametrize("name, tests", [
    ("example-ssd", ["IOPS", "Throughput 1024k", "Latency", "Write Saturation"]),
    ("example-client", ["IOPS", "Write Saturation"]),
    ("example-full", ["IOPS", "Throughput 128k", "Throughput 1024k", "Latency", "Write Saturation"]),
])
def test_pdf_has_a_summary_page_and_a_section_per_test(built, name, tests):
    b = built(name)
    pages = pdf_pages(b.path("pdf"))
    # Summary page, notes, then at least a page per test.
    assert pages >= 2 + len(tests)
    first = pdf_text(b.path("pdf"), 1)
    assert f"tkperf report: {name}" in first
    assert "Summary performance data" in first
    assert "Steady state by test" in first
    assert "NOT a PTS-conformant" in first  # the examples are --quick runs
    lines = pdf_lines(b.path("pdf"))
    for title in tests + ["Run notes"]:
        assert title in lines, title
    text = pdf_text(b.path("pdf"))
    # The SNIA header opens every test section (TP: every block size).
    assert text.count("Device under test") == len(tests)
    assert text.count("Set-up parameters") == len(tests)


@pytest.mark.parametrize("name", ["example-ssd", "example-full"])
def test_pdf_text_stays_inside_the_page(built, name):
    """No table (the 8-column IOPS matrix, the 9-column percentile table)
    runs past the right margin."""
    b = built(name)
    out = subprocess.run(["pdftotext", "-bbox", b.path("pdf"), "-"], check=True,
                         capture_output=True, text=True).stdout
    right = [float(x) for x in re.findall(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"', out)]
    assert right, "no words found in the PDF"
    assert max(right) <= A4_WIDTH_PT - MARGIN_PT + 1.0


@pytest.mark.parametrize("name", ["example-ssd", "example-client", "example-full"])
def test_every_referenced_plot_exists_and_is_an_svg(built, name):
    b = built(name)
    refs = figure_refs(b.read("rst"))
    assert len(refs) >= 5
    for ref in refs:
        assert ref.endswith(".svg"), ref
        with open(os.path.join(b.outdir, ref), encoding="utf-8") as fh:
            svg = fh.read()
        assert "<svg" in svg and "<text" in svg, ref  # vector, text kept as text
    # The plot directory holds exactly the referenced plots (no PNGs unless asked for).
    plot_dir = os.path.join(b.outdir, f"{name}-plots")
    assert sorted(os.listdir(plot_dir)) == sorted(os.path.basename(r) for r in refs)


def test_report_png_option_draws_pngs_the_rst_refers_to(tmp_path):
    """``tkperf report --png``: every plot as a PNG beside its SVG, the reST
    refers to the PNGs; the HTML embeds the SVGs still."""
    src = tmp_path / "example-client.xml"
    shutil.copy(os.path.join(EXAMPLES, "example-client.xml"), src)
    proc = subprocess.run([sys.executable, "-m", "tkperf", "report", str(src), "--png", "--format", "rst,html"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    refs = figure_refs((tmp_path / "example-client.rst").read_text(encoding="utf-8"))
    assert refs and all(r.endswith(".png") for r in refs)
    for ref in refs:
        with open(tmp_path / ref, "rb") as fh:
            assert fh.read(8) == PNG, ref
        assert (tmp_path / (ref[:-4] + ".svg")).is_file(), ref
    html = (tmp_path / "example-client.html").read_text(encoding="utf-8")
    assert html.count("data:image/svg+xml;base64,") == len(refs)
    assert "data:image/png" not in html


def test_plots_cover_every_test(built):
    names = {os.path.basename(r) for r in figure_refs(built("example-full").read("rst"))}
    assert {"iops-convergence.svg", "iops-window-rnd-4k-0-100.svg", "iops-window-rnd-64k-65-35.svg",
            "iops-window-rnd-1024k-100-0.svg", "iops-iops-by-bs.svg", "iops-iops-matrix.svg",
            "tp-128k-convergence.svg", "tp-1024k-window.svg", "tp-by-bs.svg",
            "lat-ave-max.svg", "lat-convergence.svg", "lat-window.svg",
            "wsat-iops-vs-time.svg", "wsat-iops-vs-tgbw.svg"} <= names


@pytest.mark.parametrize("name", ["example-ssd", "example-full"])
def test_html_is_self_contained_and_parses(built, name):
    b = built(name)
    with open(b.path("html"), "rb") as fh:
        doc = lxml.html.fromstring(fh.read())
    images = doc.xpath("//img/@src")
    assert len(images) == len(figure_refs(b.read("rst")))
    for src in images:  # the plots' SVGs: vector graphics, sharp when zoomed
        assert src.startswith("data:image/svg+xml;base64,")
        assert b"<svg" in base64.b64decode(src.split(",", 1)[1])[:2000]
    # docutils renders markup problems as system messages; there must be none.
    assert not doc.xpath("//*[contains(@class, 'system-message')]")
    assert doc.xpath("//title")[0].text == f"tkperf report: {name}"
    headings = [h.text_content().strip() for h in doc.xpath("//h2")]
    assert headings[:3] == ["Run notes", "IOPS", "Throughput"]
    assert doc.xpath("//link[@rel='stylesheet']") == []  # styles embedded too


def test_summary_table_matches_the_golden_file():
    with open(GOLDEN, encoding="utf-8") as fh:
        golden = fh.read()
    assert summary_table_rst(page.summary_figures(load("example-ssd"))) == golden


def test_summary_figures_agree_with_the_rounds():
    run = load("example-ssd")
    figures = {f.key: f for f in page.summary_figures(run)}
    iops = run.test("iops")
    last5 = [r.workload("rnd-4k-65-35").iops for r in iops.rounds[-5:]]
    assert figures["rnd_4k_mixed_iops"].value == pytest.approx(sum(last5) / len(last5))
    wsat = run.test("wsat")
    assert figures["fob_iops"].value == writesat.iops(wsat)[0]
    lat = run.test("lat")
    # the PTS MAX: the per-round maxima averaged over the window (issue 19)
    maxima = [r.workload("rnd-4k-0-100").write.lat_max_us for r in lat.rounds[-5:]]
    assert figures["rnd_4k_write_lat_max_us"].value == pytest.approx(sum(maxima) / len(maxima))


def test_unmeasured_figures_say_n_a(built):
    """example-client ran IOPS and WSAT only: TP and LAT figures are n/a."""
    figures = {f.key: f for f in page.summary_figures(load("example-client"))}
    for key in ("seq_write_mb_s", "seq_read_mb_s", "rnd_4k_write_lat_mean_us", "rnd_4k_write_lat_max_us"):
        assert figures[key].value is None
        assert figures[key].source == "not measured"
    assert figures["rnd_4k_write_iops"].value is not None
    table = summary_table_rst(list(figures.values()))
    assert table.count("     - n/a\n") == 4
    assert "n/a" in pdf_text(built("example-client").path("pdf"), 1)


def test_iops_matrix_is_the_7x8_table_of_window_averages(built):
    run = load("example-full")
    grid = iops_view.iops_grid(run.test("iops"))
    assert grid.rows == ("512", "4k", "8k", "16k", "32k", "64k", "128k", "1024k")
    assert grid.cols == ("100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100")
    rounds = run.test("iops").rounds[-5:]
    expected = sum(r.workload("rnd-8k-65-35").iops for r in rounds) / 5
    assert grid.values[2][2] == pytest.approx(expected)
    # The same figure, formatted, is in the report's table and in the PDF.
    cell = words.fmt(expected, "IOPS")
    assert f"     - {cell}\n" in built("example-full").read("rst")
    assert cell in pdf_text(built("example-full").path("pdf"))


def test_lat_tables_and_percentiles(built):
    run = load("example-full")
    ave, worst, largest = lat_view.lat_grids(run.test("lat"))
    assert ave.rows == ("512", "4k", "8k") and ave.cols == ("100/0", "65/35", "0/100")
    assert all(w >= a for ra, rw in zip(ave.values, worst.values) for a, w in zip(ra, rw))
    assert all(g >= w for rw, rg in zip(worst.values, largest.values) for w, g in zip(rw, rg))
    rows = lat_view.lat_percentiles(run.test("lat"))
    # 100/0 reads, 65/35 both directions, 0/100 writes: 4 rows per block size.
    assert len(rows) == 12
    for r in rows:
        values = [v for v in r.percentiles if v is not None]
        assert values == sorted(values), "percentiles must not decrease"
    rst = built("example-full").read("rst")
    # the recorded LAT kept its histograms: the percentiles come from them, in µs, every nine a column
    assert "Response-time percentiles, LAT rounds" in rst and "(µs; AVE:" in rst
    for p in ("99%", "99.9%", "99.99%", "99.999%", "99.9999%"):
        assert f"     - {p}\n" in rst


def html_cells(path: str) -> list:
    """Every table cell's text in an HTML report, whitespace normalised."""
    doc = lxml.html.parse(path).getroot()
    return [" ".join(td.text_content().split()) for td in doc.xpath("//td | //th")]


def test_header_discloses_platform_device_and_setup(built):
    b = built("example-ssd")
    cells = html_cells(b.path("html"))
    for label in ("Test platform", "Device under test", "Set-up parameters", "Test parameters",
                  "Host", "CPU", "Memory", "OS", "Kernel", "fio", "tkperf", "Vendor", "Model", "Serial",
                  "Firmware", "Capacity", "Interface", "Write cache", "Purge method", "PTS PURGE",
                  "Data pattern", "Active range", "Pre-condition 1", "Pre-condition 2",
                  "Stimulus", "OIO"):
        # Once per test section: IOPS, TP 1024k, LAT, WSAT.
        assert cells.count(label) == 4, label
    # Once per section and once as the summary's steady-state column heading.
    assert cells.count("Steady state") == 5
    # WSAT has neither WIPC nor rounds: its intervals instead.
    assert cells.count("WIPC OIO") == cells.count("Rounds run") == 3
    assert cells.count("Intervals run") == 1
    # example-ssd was re-run under issue 8: WSAT has no steady-state stop by default.
    assert any(c.startswith("not a stop rule (WSAT runs to its time or TGBW limit)") for c in cells), cells
    assert cells.count(b.run.host.fio_version) == 4
    # The loop device was discarded, not purged, and the header says so.
    assert cells.count("NO: transport 'loop' has no PTS PURGE tkperf knows; used a whole-device "
                       "discard, which is not a PTS PURGE") == 4
    assert "TC 1 x QD 8 = OIO 8" in cells
    assert any(c.startswith("random (fio's random buffers, scrambled on reuse but not refilled") for c in cells)
    assert "100% (preconditioning and test)" in cells
    assert "none: WSAT starts fresh after the purge" in cells


def test_description_file_fills_what_the_device_does_not_report():
    run = load("example-ssd-2")
    fields = dict(header.device_fields(run, run.test("iops")))
    assert fields["Vendor"] == "Example Co. (description file)"
    assert fields["Serial"] == "EX-0003 (description file)"
    assert fields["Firmware"] == "1.0 (description file)"
    # What the device reports wins over the description file.
    assert fields["Model"] == run.device.model


def _partial(run: RunResult) -> RunResult:
    """The run as if interrupted during LAT and then resumed: LAT has no round,
    WSAT never started."""
    run = copy.deepcopy(run)
    run.status = "interrupted"
    run.finished = ""
    run.tests = [t for t in run.tests if t.key != "wsat"]
    lat = run.test("lat")
    lat.status, lat.rounds, lat.steady, lat.stop_reason, lat.finished = "interrupted", [], None, "", ""
    run.events.append(Event(time="2026-11-22T05:00:00+00:00", kind="interruption",
                            message="interrupted by SIGINT", test="lat", round=1))
    run.events.append(Event(time="2026-11-22T05:10:00+00:00", kind="resume",
                            message="resumed: lat restarts from its purge", test="lat"))
    return run


def test_partial_report_of_an_interrupted_resumed_run(tmp_path):
    run = _partial(load("example-ssd"))
    result = report.build_report(run, str(tmp_path), ("rst", "html"))
    assert result.warnings == ()
    rst = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert "The run is interrupted: this is a partial report" in rst
    assert "The run was resumed 1 time" in rst
    assert "LAT is interrupted after 0 rounds." in rst
    assert "No round of this test completed (status: interrupted)" in rst
    assert "interrupted by SIGINT" in rst and "resumed: lat restarts from its purge" in rst
    figures = {f.key: f for f in page.summary_figures(run)}
    assert figures["rnd_4k_write_lat_mean_us"].value is None
    # Without WSAT there is no FOB figure: IOPS round 1 comes after WIPC (issue 8).
    assert figures["fob_iops"].source == "not measured"
    lxml.html.fromstring((tmp_path / "example-ssd.html").read_bytes())


def test_a_run_with_no_test_yet_still_reports(tmp_path):
    run = copy.deepcopy(load("example-ssd"))
    run.tests, run.status = [], "running"
    result = report.build_report(run, str(tmp_path), ("rst",))
    assert result.warnings == ()
    rst = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert "No test of this run has started" in rst
    assert figure_refs(rst) == []


def test_file_target_is_said_plainly(tmp_path):
    run = copy.deepcopy(load("example-ssd"))
    run.device = dataclasses.replace(run.device, kind="file", path="/var/tmp/target.img",
                                     resolved="/var/tmp/target.img")
    report.build_report(run, str(tmp_path), ("rst", "html"))
    rst = (tmp_path / "example-ssd.rst").read_text(encoding="utf-8")
    assert "is a FILE, not a raw block device" in rst
    assert "/var/tmp/target.img: a FILE target, not a raw block device" in html_cells(
        str(tmp_path / "example-ssd.html"))


def test_text_from_the_result_file_cannot_inject_markup(tmp_path):
    run = copy.deepcopy(load("example-client"))
    run.events.append(Event(time="t", kind="warning",
                            message=".. raw:: html\n\n   <script>alert(1)</script> *x* `y`_"))
    run.device = dataclasses.replace(run.device, model="- |sub| _target: `x`")
    result = report.build_report(run, str(tmp_path), ("rst", "html"))
    assert result.warnings == ()
    html = (tmp_path / "example-client.html").read_text(encoding="utf-8")
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; *x* `y`_" in html
    assert "- |sub| _target: `x`" in html


def test_rebuilding_replaces_the_files_and_drops_stale_plots(tmp_path):
    run = load("example-client")
    report.build_report(run, str(tmp_path), ("rst", "html"))
    stale = tmp_path / "example-client-plots" / "tp-by-bs.png"
    stale.write_bytes(PNG)
    first = (tmp_path / "example-client.rst").read_text(encoding="utf-8")
    report.build_report(run, str(tmp_path), ("rst", "html"))
    assert not stale.exists()
    assert (tmp_path / "example-client.rst").read_text(encoding="utf-8") == first
    assert sorted(os.listdir(tmp_path)) == ["example-client-plots", "example-client.html",
                                            "example-client.rst"]
    assert (tmp_path / "example-client.rst").stat().st_mode & 0o044 == 0o044  # readable by others


def test_missing_pdf_toolchain_is_a_warning(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "rst2pdf.createpdf", None)  # import now raises ImportError
    result = report.build_report(load("example-client"), str(tmp_path))
    assert len(result.warnings) == 1 and "rst2pdf is not available" in result.warnings[0]
    assert [os.path.basename(p) for p in result.paths] == ["example-client.rst", "example-client.html",
                                                          "example-client-plots"]
    assert not (tmp_path / "example-client.pdf").exists()


def test_unwritable_outdir_is_an_output_error(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file")
    with pytest.raises(OutputError, match="cannot create report directory"):
        report.build_report(load("example-client"), str(blocker / "sub"), ("rst",))


def test_unknown_format_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError):
        report.build_report(load("example-client"), str(tmp_path), ("docx",))


def test_window_view_of_the_tkperf_talk_example():
    """Seed 003's worked example: rounds 7-11 of the IOPS tracking variable."""
    values = [30000, 24000, 19000, 16000, 15000, 14200, 13705, 14639, 14747, 14678, 13927]
    rounds = [Round(index=i + 1, started="", wall_s=1.0, fio_s=1.0, workloads=(
        Workload(name="rnd-4k-0-100", rw="randrw", bs=4096, rwmixread=0, numjobs=2, iodepth=16,
                 runtime_ms=60000, write=IoStats(iops=float(v), ios=1)),)) for i, v in enumerate(values)]
    test = TestRun(type="iops", key="iops", tracking_workload="rnd-4k-0-100", tracking_metric="write.iops",
                   tracking_label="RND 4k 0/100 IOPS", rounds=rounds)
    view = steady.window_view(test)
    assert view.window_rounds == (7, 8, 9, 10, 11)
    assert view.average == pytest.approx(14339.2)
    assert view.slope == pytest.approx(48.3)
    assert view.intercept == pytest.approx(13904.5)
    assert view.verdict == "Steady, rounds 7-11: range 7.3% (limit 20%), slope excursion 1.3% (limit 10%)"
    assert words.verdict(test, steady.steady_state(test)) == "steady state reached in rounds 7-11"
    conv = pts.matrix_convergence(test)
    assert conv.series[0].y == tuple(float(v) for v in values)


def test_wsat_bins_keep_a_day_of_seconds_readable():
    n = 86400
    data = wsat_view.WsatData(seconds=np.arange(1, n + 1, dtype=float),
                           written_gb=np.arange(1, n + 1, dtype=float) * 0.4,
                           iops=np.linspace(100000.0, 20000.0, n))
    bins = wsat_view.wsat_bins(data)
    assert len(bins) == wsat_view.TABLE_ROWS
    assert bins[0].first == 1 and bins[-1].last == n
    assert sum(b.last - b.first + 1 for b in bins) == n
    assert bins[0].max_iops == 100000.0 and bins[-1].min_iops == 20000.0
    assert bins[-1].end_s == n


# --- the command line ------------------------------------------------------------------

def test_cli_report_writes_the_chosen_formats(tmp_path, capsys):
    assert main(["report", example("example-client"), "--outdir", str(tmp_path), "--format", "html"]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"report: {tmp_path / 'example-client.html'}" in out
    assert sorted(os.listdir(tmp_path)) == ["example-client-plots", "example-client.html"]


def _truncated(tmp_path):
    with open(example("example-ssd"), "rb") as fh:
        data = fh.read()
    path = tmp_path / "truncated.xml"
    path.write_bytes(data[: len(data) // 2])
    return str(path)


def _not_xml(tmp_path):
    path = tmp_path / "notes.xml"
    path.write_text("IOPS were good, trust me\n")
    return str(path)


def _other_xml(tmp_path):
    path = tmp_path / "other.xml"
    path.write_text('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><g/></svg>\n')
    return str(path)


@pytest.mark.parametrize("make, argv_tail, code, words", [
    (_not_xml, [], EXIT_RESULT_FILE, "not valid XML"),
    (_other_xml, [], EXIT_RESULT_FILE, "XML of another kind (root <{http://www.w3.org/2000/svg}svg>)"),
    (_truncated, [], EXIT_RESULT_FILE, "cut short"),
    (lambda p: str(p / "missing.xml"), [], EXIT_RESULT_FILE, "No such file"),
    (lambda p: example("example-client"), ["--outdir", "FILE/sub"], EXIT_OUTPUT, "output directory"),
    (lambda p: example("example-client"), ["--format", "html,docx"], EXIT_USAGE, "unknown report format"),
], ids=["not-xml", "other-xml", "truncated", "missing", "outdir-under-file", "bad-format"])
def test_cli_report_bad_inputs(tmp_path, capsys, make, argv_tail, code, words):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file")
    argv = ["report", make(tmp_path)] + [a.replace("FILE", str(blocker)) for a in argv_tail]
    if "--outdir" not in argv:
        argv += ["--outdir", str(tmp_path / "out")]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tkperf: error: "), err
    assert words in err
    assert "Traceback" not in err
