"""``tkperf compare``: 2 to 8 committed example result files side by side."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess

import jsonschema
import lxml.html
import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_RESULT_FILE, EXIT_USAGE, UsageError
from tkperf.report import compare
from tkperf.report.context import CompareContext
from tkperf.testtypes.iops import view as iops_view
from tkperf.testtypes.latency import view as lat_view
from tkperf.testtypes.throughput import view as tp_view
from tkperf.testtypes.writesat import view as wsat_view

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAME = ["example-ssd", "example-ssd-2"]            # same options, two loop devices
MIXED = ["example-ssd", "example-client", "example-ssd-2"]  # example-client: --class client -iod 4


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", f"{name}.xml")


def pdf_text(path: str) -> str:
    out = subprocess.run(["pdftotext", path, "-"], check=True, capture_output=True, text=True).stdout
    return " ".join(out.split())


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """Each set of files compared once, in every format."""
    cache = {}

    def get(names: tuple):
        if names not in cache:
            outdir = str(tmp_path_factory.mktemp("cmp"))
            runs = [store.load(example(n)) for n in names]
            cache[names] = (outdir, compare.build_comparison(runs, outdir, name="cmp"))
        return cache[names]

    return get


@pytest.mark.parametrize("names", [tuple(SAME), tuple(MIXED)], ids=["two", "three"])
def test_comparison_is_written_in_every_format(compared, names):
    outdir, result = compared(names)
    assert result.warnings == ()
    assert [os.path.basename(p) for p in result.paths] == ["cmp.rst", "cmp.html", "cmp.pdf", "cmp-plots"]
    with open(os.path.join(outdir, "cmp.pdf"), "rb") as fh:
        assert fh.read(5) == b"%PDF-"
    with open(os.path.join(outdir, "cmp.rst"), encoding="utf-8") as fh:
        rst = fh.read()
    refs = re.findall(r"^\.\. figure:: (\S+)$", rst, re.M)
    figures = [os.path.basename(r) for r in refs]
    # the LAT confidence overlays follow for each RND 4k cell whose windows kept histograms
    assert [f for f in figures if not f.startswith("lat-confidence-")] == [
        "wsat-iops-vs-time.svg", "wsat-normalised-vs-time.svg", "wsat-iops-vs-tgbw.svg", "wsat-iops-vs-fills.svg",
        "iops-corners.svg", "tp.svg", "lat.svg"]
    assert figures.index("lat.svg") < min((figures.index(f) for f in figures if f.startswith("lat-confidence-")),
                                          default=len(figures))
    for ref in refs:
        with open(os.path.join(outdir, ref), "rb") as fh:
            assert b"<svg" in fh.read(2000)
    doc = lxml.html.parse(os.path.join(outdir, "cmp.html")).getroot()
    assert len(doc.xpath("//img[starts-with(@src, 'data:image/svg+xml;base64,')]")) == len(refs)
    assert not doc.xpath("//*[contains(@class, 'system-message')]")
    headers = [" ".join(th.text_content().split()) for th in doc.xpath("(//table)[1]/thead//th")]
    assert headers == ["Figure", names[0]] + [h for n in names[1:] for h in (n, "% vs first")]


def test_same_settings_need_no_note(compared):
    outdir, _ = compared(tuple(SAME))
    text = pdf_text(os.path.join(outdir, "cmp.pdf"))
    assert "All runs were made with the same options." in text
    assert "Settings that differ" not in text
    assert "different settings" not in text


def test_different_settings_get_a_visible_note(compared):
    outdir, _ = compared(tuple(MIXED))
    text = pdf_text(os.path.join(outdir, "cmp.pdf"))
    first_page = " ".join(subprocess.run(["pdftotext", "-f", "1", "-l", "1", os.path.join(outdir, "cmp.pdf"),
                                          "-"], capture_output=True, text=True, check=True).stdout.split())
    # example-client was re-run under issue 8 as --class client: its revision
    # (pts-c-2.0) brings its own active range and write cache.
    assert ("These runs were made with different settings (active_range, device_class, iodepth, pts, "
            "tests, write_cache, wsat_tgbw)" in first_page)
    assert "Settings that differ" in text
    doc = lxml.html.parse(os.path.join(outdir, "cmp.html")).getroot()
    rows = {}
    for tr in doc.xpath("//table[caption[contains(., 'Settings that differ')]]//tbody/tr"):
        cells = [" ".join(td.text_content().split()) for td in tr.xpath("th|td")]
        rows[cells[0]] = cells[1:]
    assert rows == {
        "active_range": ["100", "75", "100"],
        "pts": ["pts-e-2.0", "pts-c-2.0", "pts-e-2.0"],
        "write_cache": ["off", "on", "off"],
        "device_class": ["enterprise", "client", "enterprise"],
        "iodepth": ["8", "4", "8"],
        "tests": ["iops,tp,lat,wsat", "iops,wsat", "iops,tp,lat,wsat"],
        "wsat_tgbw": ["4x", "24x", "4x"],
    }


def test_corners_and_n_a_where_a_run_did_not_measure():
    runs = [store.load(example(n)) for n in MIXED]
    labels = compare.run_labels(runs)
    ctx = CompareContext(tuple(runs), tuple(labels))
    corners = iops_view.corner_grid(ctx)
    # The quick examples measure 4k and 128k only: no RND 8KiB 65:35 corner at all.
    assert corners.rows == ("RND 4KiB 100% W", "RND 4KiB 65:35", "RND 4KiB 100% R")
    assert all(v is not None for row in corners.values for v in row)
    write, read = tp_view.tp_grids(ctx)
    assert write.rows == ("1024k",)
    assert write.values[0][1] is None and read.values[0][1] is None  # example-client ran no TP
    assert write.values[0][0] > 0 and read.values[0][2] > 0
    ave, worst = lat_view.compare_grids(ctx)
    assert ave.rows == ("4k 100/0", "4k 0/100")
    assert ave.values[0][1] is None


def test_wsat_normalised_curves_peak_at_one():
    """The normalised chart is drawn from curves the view computed: each run's
    IOPS divided by its own maximum, so every curve peaks at exactly 1.0."""
    runs = [store.load(example(n)) for n in MIXED]
    ctx = CompareContext(tuple(runs), tuple(compare.run_labels(runs)))
    curves = wsat_view.wsat_curves(ctx)
    assert [c.label for c in curves] == MIXED
    for c in curves:
        assert list(c.seconds) == sorted(c.seconds)
    spec = wsat_view.normalised_chart(curves)
    assert [c.label for c in spec.curves] == MIXED
    for c, raw in zip(spec.curves, curves):
        assert c.y.max() == 1.0
        assert c.y == pytest.approx(raw.iops / raw.iops.max())
        assert list(c.x) == list(raw.seconds)
    # The comparison's normalised chart is that spec.
    section = wsat_view.compare_section(ctx, ctx.runs, ctx.labels)
    chart = next(x for x in section if getattr(x, "filename", "") == "wsat-normalised-vs-time.png")
    assert [c.y.max() for c in chart.spec.curves] == [1.0, 1.0, 1.0]


def test_a_file_given_twice_gets_two_labels():
    run = store.load(example("example-ssd"))
    assert compare.run_labels([run, copy.deepcopy(run), copy.deepcopy(run)]) == [
        "example-ssd", "example-ssd #2", "example-ssd #3"]


def test_eight_runs_fit_the_page_with_a_column_key(tmp_path):
    names = ["example-ssd", "example-client", "example-ssd-2", "example-full"] * 2
    runs = [store.load(example(n)) for n in names]
    result = compare.build_comparison(runs, str(tmp_path), ("rst", "pdf"), name="eight")
    assert result.warnings == ()
    pdf = str(tmp_path / "eight.pdf")
    text = pdf_text(pdf)
    assert "tkperf comparison of 8 runs" in text
    assert "The runs compared" in text and "R8 example-full #2" in text
    out = subprocess.run(["pdftotext", "-bbox", pdf, "-"], check=True, capture_output=True, text=True).stdout
    right = max(float(x) for x in re.findall(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"', out))
    assert right <= 595.28 - 1.5 / 2.54 * 72 + 1.0  # inside the A4 page's right margin


def test_too_few_or_too_many_runs(tmp_path):
    run = store.load(example("example-client"))
    with pytest.raises(UsageError, match="2 to 8"):
        compare.build_comparison([run], str(tmp_path), ("rst",))
    with pytest.raises(UsageError, match="2 to 8"):
        compare.build_comparison([run] * 9, str(tmp_path), ("rst",))


def test_cli_compare(tmp_path, capsys):
    argv = ["compare", example("example-ssd"), example("example-client"), "--outdir", str(tmp_path),
            "--format", "rst,html", "--name", "two-drives"]
    assert main(argv) == EXIT_OK
    assert sorted(os.listdir(tmp_path)) == ["two-drives-plots", "two-drives.html", "two-drives.rst"]
    assert f"report: {tmp_path / 'two-drives.html'}" in capsys.readouterr().out


@pytest.mark.parametrize("files, code, words", [
    (["example-ssd"], EXIT_USAGE, "compare takes 2 to 8 result files, not 1"),
    (["example-ssd"] * 9, EXIT_USAGE, "compare takes 2 to 8 result files, not 9"),
    (["example-ssd", "BROKEN"], EXIT_RESULT_FILE, "cut short"),
], ids=["one", "nine", "broken"])
def test_cli_compare_bad_inputs(tmp_path, capsys, files, code, words):
    broken = tmp_path / "broken.xml"
    with open(example("example-ssd"), "rb") as fh:
        broken.write_bytes(fh.read()[:5000])
    paths = [str(broken) if f == "BROKEN" else example(f) for f in files]
    assert main(["compare"] + paths + ["--outdir", str(tmp_path / "out")]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


TP_ROW = "Throughput, SEQ 1024KiB 100% W (MB/s) [TP: window average, steady or NOT as labelled]"


def test_last_rounds_means_are_labelled_with_the_same_caveats_everywhere(tmp_path, capsys):
    """example-ssd's TP reached steady state, example-full's did not: both
    stand in one row, each labelled how its window ended, never a
    last-rounds mean called a steady-state average; the terminal, the JSON
    and the report give the same caveats (issue 43 item 4, issue 48 item 5,
    issue 60 item 7)."""
    files = [example("example-ssd"), example("example-full")]
    runs = [store.load(f) for f in files]
    caveats = compare.comparison_caveats(runs, compare.run_labels(runs))
    unsteady = next(c for c in caveats if c.startswith("No steady state reached in "))
    assert "example-ssd (IOPS, LAT); example-full (IOPS, TP 1024k, TP 128k, LAT)" in unsteady
    rows = {r.title: r for r in compare.figure_rows(runs)}
    assert rows[TP_ROW].values == (pytest.approx(3283.5, abs=0.05), pytest.approx(3936.0, abs=0.05))
    assert rows[TP_ROW].labels == ("steady", "NOT steady, last 5 rounds")
    assert not [t for t in rows if "Throughput, SEQ 1024KiB 100% W" in t and t != TP_ROW]
    assert not [t for t in rows if "NO steady state" in t and "steady-state window average" in t]
    assert not [t for t in rows if ("NO steady state" in t or "NOT" in t) and t.startswith("Steady-state")]

    assert main(["compare", *files, "--outdir", str(tmp_path / "t"), "--format", "rst,html"]) == EXIT_OK
    out = capsys.readouterr().out
    assert [ln[len("warning: "):] for ln in out.splitlines() if ln.startswith("warning: ")] == caveats
    tp = [ln for ln in out.splitlines() if ln.startswith("Throughput, SEQ 1024KiB 100% W")]
    assert len(tp) == 1 and tp[0].split("]")[-1].split() == [
        "3,283.5", "(steady)", "3,936.0", "(NOT", "steady,", "last", "5", "rounds)", "+19.9%"]

    assert main(["compare", *files, "--outdir", str(tmp_path / "j"), "--format", "rst", "--json"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    from test_json_schemas import _schema
    jsonschema.validate(doc, _schema("compare"), cls=jsonschema.Draft202012Validator)
    assert doc["caveats"] == caveats
    assert [r["not_steady"] for r in doc["runs"]] == [["iops", "lat"], ["iops", "tp-1024k", "tp-128k", "lat"]]
    tp_json = [f for f in doc["figures"] if (f["figure"], f["pattern"]) == ("Throughput", "SEQ 1024KiB 100% W")]
    assert [(f["last_rounds_mean"], f["value_labels"]) for f in tp_json] == [
        (True, ["steady", "NOT steady, last 5 rounds"])]
    assert tp_json[0]["difference_pct"] == [pytest.approx(19.872, abs=0.01)]
    assert doc["reports"] == [str(tmp_path / "j" / "comparison.rst"), str(tmp_path / "j" / "comparison-plots")]

    assert main(["compare", *files, "--outdir", str(tmp_path / "q"), "--format", "rst", "-q"]) == EXIT_OK
    quiet = capsys.readouterr().out
    assert [ln[len("warning: "):] for ln in quiet.splitlines() if ln.startswith("warning: ")] == caveats
    assert "Summary figures" not in quiet

    html = " ".join(lxml.html.parse(str(tmp_path / "t" / "comparison.html")).getroot().text_content().split())
    for caveat in caveats:
        assert " ".join(caveat.split()) in html
    assert "[TP: window average, steady or NOT as labelled]" in html
    assert "3,283.5 (steady)" in html and "3,936.0 (NOT steady, last 5 rounds)" in html


# --- issue 55 item 2: every run's own caveats, an imported TKperf 2.x result's first ------------------

def _warnings(text: str) -> list:
    return [ln[len("warning: "):] for ln in text.splitlines() if ln.startswith("warning: ")]


def test_an_imported_tkperf2_results_caveats_lead_on_the_terminal_in_json_and_in_the_report(tmp_path, capsys):
    """An old TKperf 2.2 file, imported by ``tkperf import``, compared with a
    tkperf run: its caveats (WSAT measures no cliff, IOPS and LAT rounds
    replay their offsets, what the file did not record) come first, naming
    the run, on the terminal, in --json and in the report's warning box (reST,
    HTML, PDF); its WSAT's first round and window averages stand under the
    import's definitions, in rows of their own, with no difference taken."""
    from conftest import data_path
    from tkperf.verdict import conformance

    old = str(tmp_path / "apacer.xml")
    assert main(["import", data_path("tkperf2/ssd-2.2-apacer.xml"), "-o", old]) == EXIT_OK
    files = [old, example("example-ssd")]
    runs = [store.load(f) for f in files]
    assert compare.run_labels(runs) == ["apacer-as340", "example-ssd"]
    replayed = conformance.imported_caveats(runs[0])
    assert [c.split(":")[0] for c in replayed] == ["iops", "lat", "wsat"]
    assert "measures no write cliff" in replayed[2]
    caveats = compare.comparison_caveats(runs, compare.run_labels(runs))
    assert caveats[:3] == [f"apacer-as340: {c}" for c in replayed]  # imported first, naming the run
    assert caveats[3].startswith("apacer-as340: imported from a result file of the original TKperf 2.2: "
                                 "cannot be known: ")
    assert caveats[4].startswith("These runs were made with different settings")
    # example-ssd's own verdict lines follow, each naming it
    assert "example-ssd: --quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)" in caveats
    assert "example-ssd: write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)" in caveats

    rows = {r.title: r.values for r in compare.figure_rows(runs)}
    fob = "FOB IOPS, RND 4KiB 100% W (IOPS) "
    assert rows[fob + "[WSAT: first round of the original TKperf, no cliff measured]"] == (40000.0, None)
    assert rows[fob + "[WSAT: first interval after the purge (FOB)]"][0] is None
    assert rows["Steady-state IOPS, RND 4KiB 100% W (IOPS) [IOPS: steady-state window average, of the original "
                "TKperf (every round replays the same offsets)]"][1] is None
    # TP's sequential rounds replay nothing: its figures share tkperf's definition
    tp = rows["Throughput, SEQ 1024KiB 100% W (MB/s) [TP: steady-state window average]"]
    assert tp[0] == pytest.approx(494.5, abs=0.05)

    assert main(["compare", *files, "--outdir", str(tmp_path / "t"), "--format", "rst,html,pdf"]) == EXIT_OK
    out = capsys.readouterr().out
    assert _warnings(out) == caveats
    shown = [ln for ln in out.splitlines() if ln.startswith(fob)]
    assert len(shown) == 2 and all(ln.rstrip().endswith("n/a") for ln in shown)  # no -80% across definitions

    assert main(["compare", *files, "--outdir", str(tmp_path / "j"), "--format", "rst", "--json"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    from test_json_schemas import _schema
    jsonschema.validate(doc, _schema("compare"), cls=jsonschema.Draft202012Validator)
    assert doc["caveats"] == caveats
    apacer, ssd = doc["runs"]
    assert (apacer["file"], apacer["imported_from"], ssd["imported_from"]) == (old, "TKperf 2.2", "")
    assert apacer["caveats"][:3] == replayed and len(apacer["caveats"]) == 4
    assert apacer["verdict"] == "NOT PTS-conformant (revision not recorded (imported from TKperf 2.2)): 4 deviations"
    assert ssd["caveats"] == list(conformance.of_run(runs[1]).deviations)
    definitions = {f["definition"] for f in doc["figures"] if f["figure"] == "FOB IOPS"}
    assert definitions == {"WSAT: first round of the original TKperf, no cliff measured",
                           "WSAT: first interval after the purge (FOB)"}

    # show words the imported WSAT's first round as the comparison does, not as tkperf's FOB
    assert main(["show", old]) == EXIT_OK
    fob_lines = [ln.strip() for ln in capsys.readouterr().out.splitlines() if "RND 4k W 40,000 IOPS" in ln]
    assert fob_lines == ["first round of the original TKperf, no cliff measured (its rounds replay one offset "
                         "sequence): RND 4k W 40,000 IOPS"]

    html = " ".join(lxml.html.parse(str(tmp_path / "t" / "comparison.html")).getroot().text_content().split())
    pdf = pdf_text(str(tmp_path / "t" / "comparison.pdf"))
    for caveat in caveats[:4]:
        assert " ".join(caveat.split()) in html
    assert "apacer-as340: wsat: the original TKperf's WSAT measures no write cliff" in pdf
    assert "[WSAT: first round of the original TKperf, no cliff measured]" in html


def test_a_run_on_the_emulated_ssd_carries_its_caveat_though_not_quick(tmp_path, capsys):
    """A run on tkperf's emulated SSD (its device's transport, as the verdict
    reads it) that is not --quick still says it measured a model, not a drive."""
    from tkperf.simdrive import TRANSPORT

    run = store.load(example("example-emulated"))
    assert run.device.transport == TRANSPORT
    run.options = {**run.options, "quick": "false", "runtime": "60"}
    run.quick = False
    path = str(tmp_path / "emulated.xml")
    store.save(run, path)
    assert not store.load(path).quick
    files = [example("example-ssd"), path]
    emulated = "example-emulated: emulated SSD: the target is tkperf's FTL model (tkperf simdrive), not a drive"
    assert main(["compare", *files, "--outdir", str(tmp_path / "t"), "--format", "rst", "-q"]) == EXIT_OK
    said = _warnings(capsys.readouterr().out)
    assert emulated in said
    assert not [c for c in said if "example-emulated" in c and "--quick" in c]  # not quick: said of example-ssd only
    assert main(["compare", *files, "--outdir", str(tmp_path / "j"), "--format", "rst", "--json"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert emulated in doc["caveats"] and doc["caveats"] == said
    assert emulated.split(": ", 1)[1] in doc["runs"][1]["caveats"]
    rst = (tmp_path / "t" / "comparison.rst").read_text()
    assert "example-emulated: emulated SSD: the target is tkperf's FTL model" in rst


def test_a_test_steady_in_one_run_and_not_in_the_other_is_one_row_holding_both(tmp_path):
    """The same run stored again with its TP's steady flag turned off (the
    store's API): TP is one row holding both figures, each labelled, in the
    terminal's table, the report's table (reST; HTML and PDF are made from
    the same table block) and --json (issue 60 item 7)."""
    from tkperf.render import rst as rst_writer

    run = store.load(example("example-ssd"))
    tp = run.test("tp-1024k")
    assert tp is not None and tp.steady is not None and tp.steady.steady
    tp.steady = dataclasses.replace(tp.steady, steady=False)
    run.name = "unsteady"
    other = str(tmp_path / "unsteady.xml")
    store.save(run, other)
    files = [example("example-ssd"), other]
    runs = [store.load(f) for f in files]
    out = compare.terminal_table(runs)
    for pattern in ("SEQ 1024KiB 100% W", "SEQ 1024KiB 100% R"):
        rows = [ln for ln in out if ln.startswith(f"Throughput, {pattern} ")]
        assert len(rows) == 1 and "n/a" not in rows[0], rows
        assert "(steady)" in rows[0] and "(NOT steady, last 5 rounds)" in rows[0] and rows[0].endswith("+0.0%")
    text = rst_writer.to_rst(compare.comparison_blocks(runs), "plots")
    assert text.count("\\[TP: window average, steady or NOT as labelled\\]") == 2  # reST escapes brackets
    assert "- 3,283.5 (steady)\n     - 3,283.5 (NOT steady, last 5 rounds)\n     - \\+0.0" in text
    doc = compare.as_dict(runs, files)
    tp_rows = [f for f in doc["figures"] if f["figure"] == "Throughput"]
    assert [(f["values"][0] == f["values"][1], f["value_labels"], f["difference_pct"]) for f in tp_rows] == [
        (True, ["steady", "NOT steady, last 5 rounds"], [0.0])] * 2
    iops = [f for f in doc["figures"] if f["pattern"] == "RND 4KiB 100% W" and f["figure"] == "Steady-state IOPS"]
    assert [f["value_labels"] for f in iops] == [["", ""]]  # the same definition in both: no labels
