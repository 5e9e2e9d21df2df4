"""``tkperf history``: trends per device, change points, the SQLite index, the pages."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import sqlite3
from datetime import datetime, timedelta, timezone

import lxml.etree
import numpy as np
import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_RESULT_FILE
from tkperf.history import INDEX_NAME, changepoints, collect
from tkperf.model.results import IoStats, RunResult

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
NIGHTS = 30
STEP_AT = 20       # the first night of the new level
NOISY_NIGHT = 8    # one bad night, not a step
START = datetime(2026, 1, 1, 1, 30, tzinfo=timezone.utc)


def _scale(stats: IoStats, factor: float) -> IoStats:
    return dataclasses.replace(stats, iops=stats.iops * factor, bw_bytes=stats.bw_bytes * factor,
                               lat_mean_us=stats.lat_mean_us / factor)


def night(run: RunResult, i: int, factor: float, serial: str = "SN-HISTORY") -> RunResult:
    """Night ``i`` of a drive: the example with every round's IOPS and MB/s times ``factor``
    (mean latency divided by it), started ``i`` days after :data:`START`."""
    run = copy.deepcopy(run)
    run.device = dataclasses.replace(run.device, serial=serial, model="EXAMPLE SSD")
    run.started = (START + timedelta(days=i)).isoformat()
    for t in run.tests:
        t.rounds = [dataclasses.replace(r, workloads=tuple(
            dataclasses.replace(w, read=_scale(w.read, factor), write=_scale(w.write, factor))
            for w in r.workloads)) for r in t.rounds]
    return run


def factors(n: int = NIGHTS, step_at: int = STEP_AT, step: float = 0.8, noisy: int = NOISY_NIGHT) -> list:
    rng = np.random.default_rng(7)
    out = [1.0 + 0.02 * float(rng.standard_normal()) for _ in range(n)]
    out = [f * (step if i >= step_at else 1.0) for i, f in enumerate(out)]
    out[noisy] *= 0.7
    return out


@pytest.fixture(scope="module")
def example() -> RunResult:
    return store.load(EXAMPLE)


@pytest.fixture(scope="module")
def nightly(tmp_path_factory, example) -> str:
    """A directory of NIGHTS results of one drive, in nightly subfolders, with a step at STEP_AT."""
    root = tmp_path_factory.mktemp("nightly")
    for i, f in enumerate(factors()):
        folder = root / f"night-{i:02d}"
        folder.mkdir()
        store.save(night(example, i, f), str(folder / f"night-{i:02d}.xml"))
    (root / "night-00" / "notes.xml").write_text("<notes/>")  # not a result: skipped
    return str(root)


def history(capsys, *argv: str):
    rc = main(["history", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


# --- change points -----------------------------------------------------------------------------

def test_a_planted_step_names_the_right_run_and_no_other(capsys, nightly):
    rc, out, err = history(capsys, nightly, "--json")
    assert rc == EXIT_OK, err
    data = json.loads(out)
    (device,) = data["devices"]
    assert (device["device"], device["runs"]) == ("serial:SN-HISTORY", NIGHTS)
    changes = {(t["test"], t["figure"]): t["changes"] for t in device["trends"]}
    step_file = os.path.join(nightly, f"night-{STEP_AT:02d}", f"night-{STEP_AT:02d}.xml")
    (write,) = changes[("iops", "rnd_4k_write_iops")]
    assert (write["index"], write["path"]) == (STEP_AT, step_file)
    assert write["change_pct"] == pytest.approx(-20.0, abs=3.0) and write["p_value"] < changepoints.ALPHA
    moved = [k for k, c in changes.items() if c]
    assert ("tp-1024k", "seq_read_mb_s") in moved and ("lat", "rnd_4k_write_lat_mean_us") in moved
    assert {c["path"] for k in moved for c in changes[k]} == {step_file}  # no other run, the noisy one neither
    assert not changes[("lat", "rnd_4k_write_lat_max_us")]  # not scaled: flat, no change
    assert data["changepoints"]["min_segment"] == changepoints.MIN_SEGMENT


def test_json_validates_against_its_schema(capsys, nightly):
    import jsonschema

    rc, out, _ = history(capsys, nightly, "--json")
    with open(os.path.join(ROOT, "tkperf", "model", "data", "history.schema.json"), encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    data = json.loads(out)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert rc == EXIT_OK and data["index"] == os.path.join(nightly, INDEX_NAME)
    data["devices"][0]["trends"][0]["changes"][0]["path"] = None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_trend_points_carry_the_window_spread(capsys, nightly):
    rc, out, _ = history(capsys, nightly, "--json")
    trend = next(t for t in json.loads(out)["devices"][0]["trends"] if t["figure"] == "seq_read_mb_s")
    p = trend["points"][0]
    assert p["lo"] <= p["value"] <= p["hi"] and p["n"] == 5 and p["sd"] > 0
    started = [p["started"] for p in trend["points"]]
    assert started == sorted(started) and len(started) == NIGHTS


def test_one_noisy_night_alone_is_no_step():
    x = [1000.0 + (5.0 if i % 2 else -5.0) for i in range(40)]
    x[20] = 600.0
    assert changepoints.detect(x) == []
    x[20:] = [v * 0.8 for v in x[20:]]
    assert [c.index for c in changepoints.detect(x)] == [20]


def test_a_short_history_has_no_change_points():
    assert changepoints.detect([1.0, 1.0, 2.0, 2.0, 2.0]) == []  # fewer than 2 x MIN_SEGMENT runs


def test_text_output_names_the_change(capsys, nightly):
    rc, out, _ = history(capsys, nightly)
    assert rc == EXIT_OK
    assert out.splitlines()[0] == f"EXAMPLE SSD (serial SN-HISTORY): {NIGHTS} results (serial:SN-HISTORY)"
    assert f"change at run {STEP_AT + 1} " in out and f"night-{STEP_AT:02d}.xml" in out
    assert "skipped 1 XML files that are not tkperf results" in out


# --- the index ---------------------------------------------------------------------------------

def test_the_index_is_updated_from_the_files(tmp_path, example, monkeypatch):
    for i in range(3):
        store.save(night(example, i, 1.0), str(tmp_path / f"n{i}.xml"))
    devices, where, stats = collect([str(tmp_path)])
    assert where == str(tmp_path / INDEX_NAME) and os.path.isfile(where)
    assert (stats.added, stats.unchanged, devices[0].runs) == (3, 0, 3)
    _, _, stats = collect([str(tmp_path)])
    assert (stats.added, stats.changed, stats.removed, stats.unchanged) == (0, 0, 0, 3)
    store.save(night(example, 3, 1.0), str(tmp_path / "n3.xml"))
    store.save(night(example, 1, 0.5), str(tmp_path / "n1.xml"))  # rewritten: another size or mtime
    os.unlink(tmp_path / "n0.xml")
    devices, _, stats = collect([str(tmp_path)])
    assert (stats.added, stats.changed, stats.removed, stats.unchanged) == (1, 1, 1, 1)
    trend = next(t for t in devices[0].trends if t.figure == "rnd_4k_write_iops")
    assert [os.path.basename(p.path) for p in trend.points] == ["n1.xml", "n2.xml", "n3.xml"]
    assert trend.points[0].value == pytest.approx(0.5 * trend.points[1].value)
    with sqlite3.connect(where) as db:
        assert db.execute("SELECT COUNT(*) FROM files").fetchone() == (3,)
    # the same directory named another way: the index still holds
    monkeypatch.chdir(tmp_path.parent)
    devices, _, stats = collect([tmp_path.name])
    assert (stats.added, stats.unchanged) == (0, 3)
    assert trend.points[0].path == str(tmp_path / "n1.xml")
    assert devices[0].trends[0].points[0].path == os.path.join(tmp_path.name, "n1.xml")


def test_a_broken_index_is_rebuilt(tmp_path, example):
    store.save(night(example, 0, 1.0), str(tmp_path / "n0.xml"))
    (tmp_path / INDEX_NAME).write_bytes(b"not a database")
    devices, _, stats = collect([str(tmp_path)])
    assert stats.added == 1 and devices[0].runs == 1


def test_devices_are_grouped_by_serial(tmp_path, example):
    store.save(night(example, 0, 1.0, serial="A"), str(tmp_path / "a.xml"))
    store.save(night(example, 1, 1.0, serial="B"), str(tmp_path / "b.xml"))
    store.save(night(example, 2, 1.0, serial="A"), str(tmp_path / "a2.xml"))
    devices, _, _ = collect([str(tmp_path / "a.xml"), str(tmp_path / "b.xml"), str(tmp_path / "a2.xml")])
    assert [(d.key, d.runs) for d in devices] == [("serial:A", 2), ("serial:B", 1)]


# --- bad input ---------------------------------------------------------------------------------

def test_an_empty_directory(capsys, tmp_path):
    rc, out, err = history(capsys, str(tmp_path))
    assert rc == EXIT_RESULT_FILE and out == ""
    assert err.splitlines() == [f"tkperf: error: {tmp_path}: no tkperf result files"]


def test_a_named_file_that_is_not_a_result(capsys, tmp_path):
    bad = tmp_path / "junit.xml"
    bad.write_text("<testsuites/>")
    rc, out, err = history(capsys, EXAMPLE, str(bad))
    assert rc == EXIT_RESULT_FILE and out == "" and len(err.splitlines()) == 1 and "junit.xml" in err


def test_a_missing_path(capsys, tmp_path):
    rc, _, err = history(capsys, str(tmp_path / "nope"))
    assert rc == EXIT_RESULT_FILE and len(err.splitlines()) == 1 and "nope" in err


def test_an_outdir_that_cannot_be_made(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    rc, _, err = history(capsys, EXAMPLE, "--outdir", str(tmp_path / "file" / "pages"))
    assert rc == EXIT_OUTPUT and len(err.splitlines()) == 1 and "pages" in err


def test_a_directory_of_other_xml_only(capsys, tmp_path):
    (tmp_path / "notes.xml").write_text("<notes/>")
    rc, _, err = history(capsys, str(tmp_path))
    assert rc == EXIT_RESULT_FILE and err.strip().endswith("no tkperf result files (1 other XML files)")
    (tmp_path / "notes.xml").unlink()
    (tmp_path / "junit.xml").write_text("<testsuites/>")  # a check's JUnit report: not counted as another file
    rc, _, err = history(capsys, str(tmp_path))
    assert rc == EXIT_RESULT_FILE and err.strip().endswith("no tkperf result files")


# --- pages -------------------------------------------------------------------------------------

def test_pages_and_plots(capsys, tmp_path, example):
    hostile = '<script>alert(1)</script><a href="http://evil.example/">x</a>'
    run = night(example, 0, 1.0, serial=hostile)
    run.tests = [t for t in run.tests if t.key == "tp-1024k"]
    for i in range(12):
        store.save(night(run, i, 1.0 if i < 6 else 0.7, serial=hostile), str(tmp_path / f"n{i}.xml"))
    out_dir = tmp_path / "pages"
    rc, out, _ = history(capsys, str(tmp_path), "--outdir", str(out_dir))
    assert rc == EXIT_OK and f"history pages: {out_dir / 'index.html'}" in out
    pages = sorted(p for p in os.listdir(out_dir) if p.endswith(".html"))
    svgs = sorted(p for p in os.listdir(out_dir) if p.endswith(".svg"))
    assert len(pages) == 2 and len(svgs) == 2  # index + one device; seq W and R
    for name in svgs:
        plot = (out_dir / name).read_text()
        assert plot.startswith("<svg ") and plot.rstrip().endswith("</svg>")
        lxml.etree.fromstring(plot.encode())  # well-formed
        assert "2026-" in plot  # the x axis: the runs by date (by name when few)
    for name in pages:
        text = (out_dir / name).read_text()
        assert "<script>" not in text and "evil.example/\">" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    device = next(p for p in pages if p != "index.html")
    text = (out_dir / device).read_text()
    assert text.count("<img ") == 2 and "n6.xml" in text and 'class="change"' in text
    # the runs table: each run's name, start and firmware, in time order
    runs = text[text.index("<h2>Runs</h2>"):]
    assert runs.count("<tr>") == 13 and runs.index("<code>n0</code>") < runs.index("<code>n11</code>")
    assert "No change point" not in text and "too short" not in text


# --- the nightly example -----------------------------------------------------------------------

FAKE_TKPERF = """#!/bin/sh
# tkperf, but `ssd run` copies $TKPERF_FAKE_RESULT where the run would write its result (no fio)
if [ "$1" = ssd ] && [ "$2" = run ]; then
    while [ $# -gt 0 ]; do
        case "$1" in --outdir) out=$2 ;; --name) name=$2 ;; esac
        shift
    done
    exec cp "$TKPERF_FAKE_RESULT" "$out/$name.xml"
fi
exec "{python}" -m tkperf "$@"
"""


def _nightly_env(tmp_path, example):
    """(env, run_night, good result, bad result): the example job with a fake
    ``tkperf ssd run`` that copies a result; one test (TP), two figures."""
    import subprocess
    import sys
    import time

    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "tkperf").write_text(FAKE_TKPERF.replace("{python}", sys.executable))
    (bindir / "tkperf").chmod(0o755)
    good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
    one_test = copy.deepcopy(example)
    one_test.tests = [t for t in one_test.tests if t.key == "tp-1024k"]  # two figures, two plots: quick
    store.save(night(one_test, 40, 1.0), str(good))
    store.save(night(one_test, 40, 0.5), str(bad))  # every MB/s halved
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path), "TKPERF_DEVICE": "/dev/null",
           "TKPERF_OUTDIR": str(tmp_path / "nightly"), "TKPERF_NIGHTS": "3", "PYTHONPATH": ROOT}
    script = os.path.join(ROOT, "examples", "nightly", "tkperf-nightly")

    def run_night(result, *argv: str, **extra: str) -> subprocess.CompletedProcess:
        if not argv:
            time.sleep(1.05)  # the script names a night by the second it starts
        return subprocess.run(["bash", script, *argv], env=dict(env, TKPERF_FAKE_RESULT=str(result), **extra),
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return env, run_night, good, bad


@pytest.mark.docs  # builds whole documents: the docs tier
def test_the_nightly_example_keeps_a_regression_red_until_it_is_accepted(tmp_path, example):
    """The first nights are not judged (a JUnit of skipped cases); a red night
    is not a normal night: the next one is judged against the same normal
    nights and stays red, saying since when; --accept makes the red nights
    the new level, judged from there on; the history page marks the red nights."""
    _, run_night, good, bad = _nightly_env(tmp_path, example)
    outdir = tmp_path / "nightly"
    for _ in range(2):  # no night is judged before TKPERF_MIN_NIGHTS (2 here) normal ones are in
        proc = run_night(good, TKPERF_MIN_NIGHTS="2")
        assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr
    first_junit = lxml.etree.parse(str(next(outdir.glob("nightly-*/junit.xml")))).getroot()
    assert first_junit.get("skipped") == first_junit.get("tests") == "2" and first_junit.get("failures") == "0"
    assert first_junit.get("name").startswith("tkperf check: EXAMPLE SSD serial SN-HISTORY, night 2026-02-10")
    reds = []
    for k in (1, 2):  # the same regression, two nights: red on both
        proc = run_night(bad, TKPERF_MIN_NIGHTS="2")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "REGRESSION" in proc.stdout and "tp-1024k/seq_" in proc.stdout  # a halved MB/s beyond the noise
        reds.append(sorted(outdir.glob("nightly-*"))[-1])
        assert proc.stdout.startswith(f"tkperf nightly: REGRESSION against the last 2 normal nights, red since "
                                      f"{reds[0].name} ({k} night(s));")
        assert "tkperf-nightly --accept" in proc.stdout
    nights = (outdir / "good-nights").read_text().splitlines()
    assert len(nights) == 2 and all(os.path.isfile(n) for n in nights)  # the red nights are not normal ones
    assert len((outdir / "red-nights").read_text().splitlines()) == 2
    summary = json.loads((reds[1] / "summary.json").read_text()) if (reds[1] / "summary.json").exists() else None
    assert summary is None  # the fake run writes no summary; check --summary is tested in test_check
    page = (outdir / "history" / "index.html").read_text()
    assert "EXAMPLE SSD (serial SN-HISTORY)" in page and ">4</td>" in page  # four results
    assert "junit.xml" not in page  # a night's JUnit report is not a skipped file
    device = next(p for p in (outdir / "history").glob("*.html") if p.name != "index.html").read_text()
    assert "2 nights red by the night's check" in device and device.count("<tr class=\"change\"><td") == 2
    assert device.count("<td>RED: ") == 2 and device.count("<td>not judged</td>") == 2
    assert (outdir / INDEX_NAME).is_file()
    # the second red night's JUnit says, for a CI dashboard, that it is red since the first
    suite = lxml.etree.parse(str(reds[1] / "junit.xml")).getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert (props["red_since_result"], props["red_nights"]) == (str(reds[0] / f"{reds[0].name}.xml"), "2")
    assert all(f.get("message").endswith(", 2 nights") for f in suite.iter("failure"))
    # every trend's plot marks the two red nights (runs 3 and 4) and no other, filled where its figure regressed
    failed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    svgs = sorted((outdir / "history").glob("*.svg"))
    assert len(svgs) == 2 and failed
    for svg in svgs:
        mark = "red-figure" if any(f in svg.name for f in failed) else "red-night"
        root = lxml.etree.parse(str(svg)).getroot()
        marks = root.findall("{http://www.w3.org/2000/svg}circle[@data-run]")
        assert [(m.get("class"), m.get("data-run")) for m in marks] == [(mark, "3"), (mark, "4")]
        assert len(root.findall(f"{{http://www.w3.org/2000/svg}}circle[@class='legend-{mark}']")) == 1

    proc = run_night(bad, "--accept")
    assert proc.returncode == 0 and proc.stdout.startswith(
        f"tkperf nightly: accepted 2 red night(s) since {reds[0] / reds[0].name}.xml"), proc.stdout + proc.stderr
    assert not (outdir / "red-nights").exists()
    assert (outdir / "good-nights").read_text().splitlines()[2].startswith("# accepted ")
    proc = run_night(bad, TKPERF_MIN_NIGHTS="2")  # the new level: judged against the two accepted nights
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr
    assert lxml.etree.parse(str(sorted(outdir.glob("nightly-*"))[-1] / "junit.xml")).getroot().get("skipped") == "0"


@pytest.mark.docs  # builds whole documents: the docs tier
def test_the_nightly_example_tells_a_new_change_point_once(tmp_path, example):
    """Results already in the folder hold a step: the job's next night tells the
    change point (though the night is not judged), the night after stays silent."""
    _, run_night, _, bad = _nightly_env(tmp_path, example)
    old = tmp_path / "nightly" / "old"
    old.mkdir(parents=True)
    run = copy.deepcopy(example)
    run.tests = [t for t in run.tests if t.key == "tp-1024k"]
    for i in range(8):
        store.save(night(run, i, 1.0 if i < 4 else 0.5), str(old / f"n{i}.xml"))
    proc = run_night(bad)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("tkperf nightly: the history found 2 new change point(s)"), proc.stdout
    assert f"from {old / 'n4.xml'}" in proc.stdout and "tp-1024k/seq_" in proc.stdout
    proc = run_night(bad)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr


def test_a_short_series_says_so_and_skipped_files_are_named(capsys, tmp_path, example):
    """Four runs: too few for any change point (3 a level), which the text,
    the page and the plot say instead of 'no change point'; a file that is
    not a result is named on the index page; a run's report is linked."""
    run = copy.deepcopy(example)
    run.tests = [t for t in run.tests if t.key == "tp-1024k"]
    for i in range(4):
        store.save(night(run, i, 1.0), str(tmp_path / f"n{i}.xml"))
    (tmp_path / "n2.html").write_text("<html>the report of n2</html>")
    (tmp_path / "junit.xml").write_text("<?xml version='1.0'?>\n<testsuites/>")  # a check's: not listed
    (tmp_path / "other.xml").write_text("<other/>")
    out_dir = tmp_path / "pages"
    rc, out, _ = history(capsys, str(tmp_path), "--outdir", str(out_dir))
    assert rc == EXIT_OK and "series too short for a change point" in out
    assert f"skipped 1 XML files that are not tkperf results: {tmp_path / 'other.xml'}" in out
    index = (out_dir / "index.html").read_text()
    assert "Skipped: 1 XML file" in index and "other.xml" in index and "junit.xml" not in index
    rc, out, _ = history(capsys, str(tmp_path), "--outdir", str(out_dir))  # the same from the index
    assert "junit.xml" not in out and "junit.xml" not in (out_dir / "index.html").read_text()
    device = next(p for p in os.listdir(out_dir) if p.endswith(".html") and p != "index.html")
    text = (out_dir / device).read_text()
    assert "Series too short for a change point: 4 runs" in text and "No change point" not in text
    assert '<a href="../n2.html">report</a>' in text and text.count(">report</a>") == 1


def test_a_trend_plot_marks_the_red_nights_only_also_without_markers():
    """Beyond MARKERS runs the points have no markers, but a red night still
    has its ring (filled where the plot's figure regressed), with its legend entry."""
    from tkperf.render import trendcharts

    n = trendcharts.MARKERS + 30
    nan = float("nan")
    spec = trendcharts.TrendChart("t", "IOPS", tuple(100.0 + i % 3 for i in range(n)), (nan,) * n, (nan,) * n,
                                  red=(7, n - 1), failed=(n - 1,))
    root = lxml.etree.fromstring(trendcharts.svg(spec).encode())
    marks = root.findall("{http://www.w3.org/2000/svg}circle[@data-run]")
    assert [(m.get("class"), m.get("data-run")) for m in marks] == [("red-night", "8"), ("red-figure", str(n))]
    assert {c.get("class") for c in root.iter("{http://www.w3.org/2000/svg}circle")} == \
        {"red-night", "red-figure", "legend-red-night", "legend-red-figure"}
    plain = lxml.etree.fromstring(trendcharts.svg(dataclasses.replace(spec, red=(), failed=())).encode())
    assert not [c for c in plain.iter("{http://www.w3.org/2000/svg}circle") if c.get("class")]


@pytest.mark.docs  # builds whole documents: the docs tier
def test_a_change_point_at_a_step_of_the_host_is_said_to_be_and_the_job_tells_only_the_drives(
        capsys, tmp_path, example):
    """The emulated SSD's idle share is a trend of its own; a figure's change
    point at its step says so (text, JSON); where the host path sets the
    figure (the IOPS test's 4k reads and 65:35 mix) the idle share is taken
    out of it before its steps are looked for, so a step the host's explains
    is none; the nightly job does not tell the host's own step; the 4k
    writes' and TP's steps it tells, with the host's step beside them."""
    _, run_night, _, bad = _nightly_env(tmp_path, example)
    old = tmp_path / "nightly" / "old"
    old.mkdir(parents=True)
    run = copy.deepcopy(example)
    run.tests = [t for t in run.tests if t.key in ("iops", "tp-1024k")]
    for i in range(10):  # the drive and the host's idle share both step at the sixth night
        n = night(run, i, 1.0 if i < 5 else 0.5)
        n.facts = dict(n.facts, simdrive_host={"replies": 1000, "late_replies": 0, "late_share": 0.0,
                                               "idle_share": (0.30 if i < 5 else 0.20) + 0.002 * (i % 2)})
        store.save(n, str(old / f"n{i}.xml"))
    rc, out, _ = history(capsys, str(old))
    assert "  host/simdrive_idle_share: last 20.2 %" in out
    said = [line for line in out.splitlines() if line.startswith("    change at run 6 ")]
    assert len(said) == 4 and all("the host's idle share on the emulated SSD stepped at run 6" in s for s in said[:3])
    assert not any("follows the host, not the drive" in s for s in said)
    rc, out, _ = history(capsys, str(old), "--json")
    trends = {t["figure"]: t for t in json.loads(out)["devices"][0]["trends"]}
    assert trends["rnd_4k_read_iops"]["changes"] == [] and trends["rnd_4k_mixed_iops"]["changes"] == []
    assert [(c["host_step"], c["follows_host"]) for c in trends["seq_write_mb_s"]["changes"]] == [(5, False)]
    with open(os.path.join(ROOT, "tkperf", "model", "data", "history.schema.json"), encoding="utf-8") as fh:
        import jsonschema
        jsonschema.validate(json.loads(out), json.load(fh))
    proc = run_night(bad)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    told = proc.stdout.splitlines()
    assert told[0].startswith("tkperf nightly: the history found 3 new change point(s)"), proc.stdout
    assert sorted(line.split(":")[0].strip() for line in told[1:]) == [
        "iops/rnd_4k_write_iops", "tp-1024k/seq_read_mb_s", "tp-1024k/seq_write_mb_s"]
    assert all("may follow the host, not the drive" in line for line in told[1:])


def test_the_recorded_nights_benchmark_runs():
    """benchmarks/history_real.py (docs/history.rst) holds the change points to
    39 recorded nights; here that it runs, one window, and finds the host's steps."""
    import subprocess
    import sys

    bench = os.path.join(ROOT, "benchmarks", "history_real.py")
    proc = subprocess.run([sys.executable, bench, "--tiny"], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "  0 change point(s) in 12 figures: 0 at a step of the host's idle share, 0 of them of a figure the " \
           "host path sets (the nightly job does not tell those)" in lines
    assert sum(line.startswith("  windows of 20 nights: series without a change point") for line in lines) == 2


@pytest.mark.docs  # builds whole documents: the docs tier
def test_the_nightly_example_leaves_out_what_a_loaded_host_set(tmp_path, example):
    """A night whose emulated SSD was idle more than on every normal night, its
    4k reads 40% slower: the job stays green, the night's JUnit has the reads
    as a skipped host-limited case, and the night is kept out of the baseline
    (host-limited-nights): the same reads on an ordinary night after it are red."""
    _, run_night, _, _ = _nightly_env(tmp_path, example)
    one = copy.deepcopy(example)
    one.tests = [t for t in one.tests if t.key in ("iops", "tp-1024k")]

    def result(name: str, idle: float, reads: float, i: int) -> str:
        run = night(one, i, 1.0 + 0.01 * (i % 3))
        t = run.test("iops")
        t.rounds = [dataclasses.replace(r, workloads=tuple(
            dataclasses.replace(w, read=_scale(w.read, reads)) if w.name == "rnd-4k-100-0" else w
            for w in r.workloads)) for r in t.rounds]
        run.facts = dict(run.facts, simdrive_host={"replies": 1000, "late_replies": 0, "late_share": 0.0,
                                                   "idle_share": idle})
        path = tmp_path / f"{name}.xml"
        store.save(run, str(path))
        return str(path)
    for i, idle in enumerate((0.22, 0.30, 0.26)):
        proc = run_night(result(f"good{i}", idle, 1.0, i), TKPERF_MIN_NIGHTS="3")
        assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr
    proc = run_night(result("starved", 0.40, 0.6, 3), TKPERF_MIN_NIGHTS="3")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr
    night_dir = sorted((tmp_path / "nightly").glob("nightly-*"))[-1]
    cases = {c.get("name"): c for c in lxml.etree.parse(str(night_dir / "junit.xml")).iter("testcase")}
    assert cases["rnd_4k_read_iops"].find("skipped").get("type") == "host-limited"
    assert cases["rnd_4k_write_iops"].find("skipped") is None
    out = tmp_path / "nightly"  # not a normal night: kept out of the baseline
    assert (out / "host-limited-nights").read_text().splitlines() == [str(night_dir / f"{night_dir.name}.xml")]
    assert len((out / "good-nights").read_text().splitlines()) == 3
    device = next(p for p in (out / "history").glob("*.html") if p.name != "index.html").read_text()
    assert device.count("<td>ok (2 host-limited)</td>") == 1  # the runs table says so (4k reads, 65:35)
    proc = run_night(result("slow", 0.26, 0.6, 4), TKPERF_MIN_NIGHTS="3")
    assert proc.returncode == 1 and "iops/rnd_4k_read_iops -40" in proc.stdout, proc.stdout + proc.stderr
