"""Latency QoS end to end: LAT keeps every workload's response-time histogram
(fio json+), the report shows the nines table, histograms and confidence
plots, a comparison overlays the confidence curves, and
``--latency-histograms`` does the same for any round-based test.  The real
fio on a real loop device."""
import gzip
import json
import shutil

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.model import histogram
from tkperf.pts import iops_workload
from tkperf.testtypes.latency import capture as lat_capture

pytestmark = needs_fio

#: No report at the end of a run: the tests render the stored runs with ``tkperf report``.
FAST = ["--runtime", "1", "--wipc-loops", "1", "-nj", "1", "-iod", "4", "--yes", "--quiet", "--no-report"]


def run(target, outdir, *extra):
    argv = ["ssd", "run", *target, "--name", "t", "--outdir", str(outdir), *FAST, *extra]
    assert main(argv) == 0
    return outdir / "t.xml"


@pytest.fixture(scope="module")
def lat_result(tmp_path_factory):
    from conftest import MiB, try_loop

    base = tmp_path_factory.mktemp("lat")
    loop, why = try_loop(256 * MiB, str(base))
    if loop is None:
        pytest.skip(why)
    try:
        return run([loop.path], base / "out", "--tests", "lat", "--lat-bs", "4k", "--max-rounds", "2",
                   "--lat-capture", "2")
    finally:
        loop.__exit__(None, None, None)


def test_every_lat_workload_keeps_its_histogram(lat_result):
    t = store.load(str(lat_result)).test("lat")
    assert t.rounds
    for r in t.rounds:
        for w in r.workloads:
            for side in (w.read, w.write):
                if side.ios:
                    assert histogram.total(side.bins) == side.ios
                    # fio's own 99% from the same run agrees with the bins' reading
                    p99 = side.percentile("99")
                    assert histogram.percentile_us(side.bins, 99.0) == pytest.approx(p99, rel=1e-6)
                else:
                    assert side.bins == ()
    assert "--output-format=json+" in (lat_result.parent / "t.log").read_text()


def test_report_shows_nines_histograms_and_confidence(lat_result, tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", str(lat_result), "--outdir", str(out), "--format", "rst,html,pdf"]) == 0
    assert (out / "t.html").stat().st_size > 0 and (out / "t.pdf").stat().st_size > 0  # every format a run's is in
    rst = (out / "t.rst").read_text()
    assert "Response-time distribution (latency QoS)" in rst
    # the histograms are the capture's (RND 4k 0/100 W), not the window rounds' (no 100/0 R among them)
    assert "RND 4k 0/100 W" in rst and "RND 4k 100/0 R" not in rst and "n/s" in rst
    for name in ("lat-histogram-4k.svg", "lat-confidence-4k.svg"):
        png = out / "t-plots" / name
        assert png.stat().st_size > 10_000, name
    capsys.readouterr()
    assert main(["show", "--json", str(lat_result)]) == 0
    (t,) = json.loads(capsys.readouterr().out)["tests"]
    assert t["fob"] == {}  # round 1 follows the WIPC: not FOB (issue 19)
    assert {"rnd_4k_write_lat_mean_us", "rnd_4k_write_lat_max_us"} <= set(t["round1_after_wipc"])
    # the 99.9% of 4k writes from the capture's histogram (the run has a 2 s capture), given exactly
    # when the capture's I/O count (fio's own, stored) supports it: a loaded host may run fewer than
    # 1,000 in it, whatever the window rounds ran
    run = store.load(str(lat_result)).test("lat")
    cap = lat_capture(run)
    assert cap is not None  # the RND 4k 0/100 W capture
    ios = cap.write.ios
    assert ios > 0 and histogram.total(cap.write.bins) == ios
    assert ("rnd_4k_write_lat_p99_9_us" in t["headline"]) == histogram.supported(ios, "99.9"), ios
    if ios >= 1000:
        assert t["headline"]["rnd_4k_write_lat_p99_9_us"] >= t["headline"]["rnd_4k_write_lat_mean_us"]
    assert all(v > 0 for v in t["round1_after_wipc"].values())
    assert "Round 1 (after WIPC) and steady state" in rst and "Fresh out of box" not in rst


def _kept(xml, what):
    """fio's own JSON report of one invocation of the run (``what``: 'lat capture')."""
    run = store.load(str(xml))
    kept = run.facts["fio_output"]
    (entry,) = [f for f in kept["files"] if f["what"] == what]
    with gzip.open(xml.parent / kept["dir"] / entry["file"], "rt") as fh:
        return entry, json.load(fh)


def test_lat_capture_after_the_rounds_is_the_histograms_source(lat_result, tmp_path):
    # PTS 2.0 implementation (Alan-ADATA/SSS-PTS-TEST): a RND 4k 100% W TC1/QD1 capture after the rounds
    from tkperf.kit.composite import capture_round, steady_rounds
    from tkperf.report import qos
    from tkperf.testtypes import latency

    t = store.load(str(lat_result)).test("lat")
    cap = capture_round(t)
    assert cap is not None and cap is t.rounds[-1] and len(steady_rounds(t)) == len(t.rounds) - 1
    assert t.params["capture_s"] == "2" and t.stop_reason.startswith("capture complete after ")
    (w,) = cap.workloads
    assert w.name == latency.CAPTURE_WORKLOAD and w.rw == "randwrite" and w.bs == 4096 and w.read.ios == 0
    entry, fio = _kept(lat_result, "lat capture")
    assert entry["format"] == "json+"
    (job,) = fio["jobs"]
    # fio's own job: one thread at queue depth 1, random 4k writes
    opts = {**fio.get("global options", {}), **job["job options"]}
    assert opts["iodepth"] == "1" and opts.get("numjobs", "1") == "1" and opts["rw"] == "randwrite"
    assert opts["bs"] in ("4096", "4k")
    # every I/O fio counted is in the stored histogram
    assert job["write"]["lat_ns"]["N"] == histogram.total(w.write.bins) == w.write.ios > 0
    # the report's histogram and confidence plots come from the capture alone, and say so
    assert [d.ios for d in qos.distributions(t, [cap])] == [w.write.ios]
    out = tmp_path / "rep"
    assert main(["report", str(lat_result), "--outdir", str(out), "--format", "rst"]) == 0
    rst = (out / "t.rst").read_text()
    assert "capture after the steady-state rounds, as the PTS 2.0 implementation" in rst
    assert "Alan-ADATA/SSS-PTS-TEST" in rst and f"round {cap.index}" in rst
    assert f"{len(t.rounds) - 1} of at most 2, then the capture (round {cap.index})" in rst  # the header's rounds
    assert f"| {w.write.ios:,}" in rst.replace("\n", " ") or f"{w.write.ios:,}" in rst
    for name in ("lat-histogram-4k.svg", "lat-confidence-4k.svg"):
        assert (out / "t-plots" / name).stat().st_size > 10_000, name
    # the matrix is unchanged: the capture is no cell of the AVE/MAX tables
    from tkperf.pts import matrix_cells

    assert set(matrix_cells(t).values()) == {iops_workload(4096, m) for m in (100, 65, 0)}


def test_qos_ave_agrees_with_the_lat_ave_table(lat_result):
    # one figure, one definition: the mean of the per-round means (issue 19)
    from tkperf.report import qos
    from tkperf.testtypes.latency import view as lat_view

    t = store.load(str(lat_result)).test("lat")
    ave, _, _ = lat_view.lat_grids(t)
    dists = {(d.bs, d.rwmixread, d.direction): d for d in qos.distributions(t)}
    for mix, direction, col in ((0, "write", "0/100"), (100, "read", "100/0")):
        if col in ave.cols:
            shown = ave.values[ave.rows.index("4k")][ave.cols.index(col)]
            assert dists[(4096, mix, direction)].mean_us == pytest.approx(shown, rel=1e-9)


def test_comparison_overlays_confidence_curves(lat_result, tmp_path):
    other = tmp_path / "other.xml"
    shutil.copy(lat_result, other)
    out = tmp_path / "cmp"
    assert main(["compare", str(lat_result), str(other), "--outdir", str(out), "--format", "rst",
                 "--quiet"]) == 0
    (rst,) = out.glob("*.rst")
    text = rst.read_text()
    assert "Latency QoS (response-time confidence)" in text
    assert "RND 4k 0/100 W: response-time percentiles by run" in text
    charts = list(out.glob("*/lat-confidence-RND-4k-0-100-W.svg"))
    assert charts and charts[0].stat().st_size > 10_000


def test_latency_histograms_for_any_round_test(target, tmp_path):
    argv, _ = target
    xml = run(argv, tmp_path / "with", "--tests", "tp", "--tp-bs", "1024k", "--max-rounds", "2",
              "--latency-histograms")
    t = store.load(str(xml)).test("tp-1024k")
    assert t.rounds and all(w.write.bins or w.read.bins for r in t.rounds for w in r.workloads)
    out = tmp_path / "rep"
    assert main(["report", str(xml), "--outdir", str(out), "--format", "rst"]) == 0
    rst = (out / "t.rst").read_text()
    assert "Response-time distribution (latency QoS)" in rst and "SEQ 1024k 0/100 W" in rst
    assert "Latency histograms | kept for every workload" in rst or "kept for every workload" in rst


def test_without_the_option_other_tests_keep_no_histograms(target, tmp_path):
    argv, _ = target
    xml = run(argv, tmp_path / "without", "--tests", "tp", "--tp-bs", "1024k", "--max-rounds", "1")
    t = store.load(str(xml)).test("tp-1024k")
    assert t.rounds and not any(w.write.bins or w.read.bins for r in t.rounds for w in r.workloads)
