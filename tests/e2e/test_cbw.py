"""CBW (enterprise composite workload): its fio job plan option by option,
fio's own echo of that plan and the mix it issued (recorded), the max, mid
and min points and headline figures on recorded data, and the test end to
end on a loop device (result file, report section with plots, comparison
section, ``show --json``, ``check``).  The recorded sweep
(``data/cbw/fio-3.33-cbw-sweep.json``: fio 3.33 json+ on a 256 MiB loop
device, made and detached for it) is described in ``data/cbw/README.rst``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from typing import Dict, List

import pytest
from lxml import etree

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_TARGET, EXIT_USAGE
from tkperf.fio.jobs import FioJob, FioSettings, job_file
from tkperf.fio.output import first_json_object, parse_jobs
from tkperf.kit import options
from tkperf.kit.base import Plan
from tkperf.kit.composite import SWEEP_ROUND, SteadyThenSweep, steady_rounds, sweep_round
from tkperf.kit.registry import get
from tkperf.model.pts import REVISIONS
from tkperf.model.results import Round, TestRun, Workload
from tkperf.pts.sweep.plan import sweep_points
from tkperf.pts.sweep.points import Point, choose_points
from tkperf.report.context import ReportContext
from tkperf.report.generic import view_of
from tkperf.testtypes.cbw import CbwSettings, CompositeWorkloadTest, bssplit_shares, mean_transfer, view

RECORDED = data_path("cbw/fio-3.33-cbw-sweep.json")
MiB = 1024 * 1024
# The words, written out here so that a changed constant fails the tests.
JEDEC_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
JEDEC_ZONED = "zoned:50/5:30/15:20/80"
#: 0.04 x 512 + 0.01 x (1k + 1.5k + 2k + 2.5k + 3k + 3.5k) + 0.67 x 4k + 0.10 x 8k + 0.07 x 16k + 0.03 x (32k + 64k)
JEDEC_MEAN_BYTES = 7818.24


def plans(quick: bool = False, **given) -> List[Plan]:
    opts = options.build({"tests": ("cbw",), **given}, quick=quick)
    return get("cbw").plan(opts, 256 * MiB)


def tc_qd(job_: FioJob):
    m = re.fullmatch(r"(?:ss-|ss-rest-|pre-)?jedec-40-60-tc(\d+)-qd(\d+)", job_.name)
    return int(m.group(1)), int(m.group(2))


def section_options(job_: FioJob) -> Dict[str, str]:
    """The job section's ``key=value`` lines (every line but the name and ``stonewall``)."""
    lines = job_.section()
    assert lines[0] == f"[{job_.name}]" and lines[1] == "stonewall"
    return dict(line.split("=", 1) for line in lines[2:])


# --- the plan, option by option -----------------------------------------------------------

def test_default_plan_steady_at_tc32_qd32_then_49_points_high_to_low():
    (plan,) = plans(cbw_structure="steady-sweep")
    assert plan.key == "cbw" and plan.wipc and plan.histograms
    shape = plan.shape
    assert isinstance(shape, SteadyThenSweep)
    rest, steady = shape.steady  # the rest of the round, then its measured last minute (issue 55)
    assert (steady.numjobs, steady.iodepth, steady.rw, steady.rwmixread, steady.runtime) == (32, 32, "randrw", 40, 60)
    assert (rest.numjobs, rest.iodepth, rest.rw, rest.rwmixread, rest.runtime) == (32, 32, "randrw", 40, 1740)
    assert plan.tracking.workload == steady.name and plan.tracking.metric == "iops"
    assert plan.tracking.label == "JEDEC mix 40/60 TC32/QD32 IOPS"
    assert len(shape.sweep) == 49 and all(j.runtime == 60 for j in shape.sweep)
    # TC outer, QD inner, both high to low, as the PTS 2.0 implementation nests its loops (issue 34)
    order = [(j.numjobs, j.iodepth) for j in shape.sweep]
    assert order == [(t, q) for t in (32, 16, 8, 6, 4, 2, 1) for q in (32, 16, 8, 6, 4, 2, 1)]
    assert {(j.numjobs, j.iodepth) for j in shape.sweep} == {(t, q) for t in (1, 2, 4, 6, 8, 16, 32)
                                                            for q in (1, 2, 4, 6, 8, 16, 32)}
    p = plan.params
    assert (p["tc"], p["qd"], p["numjobs"], p["iodepth"]) == ("1,2,4,6,8,16,32", "1,2,4,6,8,16,32", "32", "32")
    assert (p["mix"], p["bssplit"], p["random_distribution"]) == ("40/60", JEDEC_BSSPLIT, JEDEC_ZONED)
    assert (p["point_time"], p["rt_limit_us"], p["runtime"], p["round_s"]) == ("60", "5000", "1800", "1800")


def test_every_job_is_the_jedec_mix_option_by_option():
    """Steady job and every point: the same JEDEC section but for name, TC, QD and runtime."""
    (plan,) = plans(cbw_structure="steady-sweep")
    (pts20,) = plans()
    for j in plan.shape.steady + plan.shape.sweep:
        tc, qd = tc_qd(j)
        assert section_options(j) == {
            "rw": "randrw", "rwmixread": "40", "bs": "4k",  # bssplit decides the sizes (see the e2e test)
            "bssplit": JEDEC_BSSPLIT, "random_distribution": JEDEC_ZONED, "refill_buffers": "1",
            "numjobs": str(tc), "iodepth": str(qd), "runtime": str(j.runtime), "time_based": "1"}
    # the PTS 2.0 pre-write and preconditioning: the same split and zones, writes only (issue 34)
    for j in (pts20.shape.prewrite,) + pts20.shape.precondition:
        assert section_options(j) == {
            "rw": "randwrite", "bs": "4k", "bssplit": JEDEC_BSSPLIT, "random_distribution": JEDEC_ZONED,
            "refill_buffers": "1", "numjobs": "32", "iodepth": "32", "runtime": str(j.runtime), "time_based": "1"}


def test_bssplit_is_the_seed_004_transfer_size_mix():
    shares = dict(bssplit_shares())
    assert shares == {512: 4, 1024: 1, 1536: 1, 2048: 1, 2560: 1, 3072: 1, 3584: 1, 4096: 67, 8192: 10,
                      16384: 7, 32768: 3, 65536: 3}
    assert mean_transfer() == pytest.approx(JEDEC_MEAN_BYTES)
    assert CompositeWorkloadTest().blocks(options.build({"tests": ("cbw",)})).largest == 65536


def test_tc_is_numjobs_and_qd_is_iodepth():
    """TC and QD sets that differ, so that a swap could not go unnoticed."""
    (plan,) = plans(cbw_tc=(1, 4), cbw_qd=(2, 8, 16), cbw_structure="steady-sweep")
    steady = plan.shape.steady[0]
    assert (steady.numjobs, steady.iodepth) == (4, 16)
    for j in plan.shape.sweep:
        tc, qd = tc_qd(j)
        assert (j.numjobs, j.iodepth) == (tc, qd)
        assert (section_options(j)["numjobs"], section_options(j)["iodepth"]) == (str(tc), str(qd))
    assert {j.numjobs for j in plan.shape.sweep} == {1, 4}
    assert {j.iodepth for j in plan.shape.sweep} == {2, 8, 16}


def test_order_tc_outer_qd_inner_both_high_to_low():
    (plan,) = plans(cbw_tc=(4, 1, 2), cbw_qd=(2, 1, 4))
    assert [tc_qd(j) for j in plan.shape.sweep] == [
        (4, 4), (4, 2), (4, 1), (2, 4), (2, 2), (2, 1), (1, 4), (1, 2), (1, 1)]
    assert plan.params["tc"] == "1,2,4"  # stored sorted, whatever order was given


def test_quick_values_and_runtime_per_steady_round():
    (plan,) = plans(quick=True, cbw_round=3, cbw_structure="steady-sweep")
    assert [tc_qd(j) for j in plan.shape.sweep] == [(2, 4), (2, 1), (1, 4), (1, 1)]
    assert plan.shape.steady[0].runtime == 3 and all(j.runtime == 1 for j in plan.shape.sweep)
    (plan,) = plans(cbw_time=7, cbw_rt_limit=750)
    assert all(j.runtime == 7 for j in plan.shape.sweep) and plan.params["rt_limit_us"] == "750"


def test_no_idle_between_points_and_nothing_compressible():
    (plan,) = plans(quick=True)
    text = job_file(FioSettings(filename="/dev/loopX"), plan.shape.sweep)
    sections = text.split("\n\n")[1:]
    assert len(sections) == len(plan.shape.sweep) == 4
    assert all("\nstonewall\n" in s and "\nrefill_buffers=1" in s for s in sections)
    for word in ("thinktime", "startdelay", "rate", "ramp_time", "idle", "buffer_compress", "zero_buffers",
                 "dedupe", "buffer_pattern"):
        assert word not in text


@pytest.mark.parametrize("flag, text, words", [
    ("--cbw-tc", "0", "not a thread count from 1 to 256"),
    ("--cbw-tc", "1,two", "not a thread count"),
    ("--cbw-qd", "5000", "not a queue depth from 1 to 4096"),
    ("--cbw-time", "0", "longer than 0"),
    ("--cbw-rt-limit", "fast", "is not a response time"),
    ("--cbw-rt-limit", "0", "out of range"),
])
def test_bad_option_is_one_line_usage_error(flag, text, words, capsys):
    rc = main(["ssd", "run", "/dev/null", "--tests", "cbw", flag, text, "--yes"])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_USAGE
    assert len(err.splitlines()) == 1 and flag in err and words in err and "Traceback" not in err


def test_options_round_trip_and_belong_to_cbw(capsys):
    kind = CompositeWorkloadTest()
    given = {o.field: o.parse(text, o.flags[0]) for o, text in zip(kind.options, ("8,2", "16", "90s", "2.5ms"))}
    opts = options.build({"tests": ("cbw",), **given})
    cfg = opts.of(CbwSettings)
    assert (cfg.tc, cfg.qd, cfg.time, cfg.rt_limit) == ((2, 8), (16,), 90, 2500)
    assert options.RunOptions.from_dict(opts.to_dict()) == opts
    assert (opts.to_dict()["cbw_tc"], opts.to_dict()["cbw_rt_limit"]) == ("2,8", "2500us")
    rc = main(["ssd", "run", "/dev/null", "--tests", "dirth", "--cbw-tc", "1", "--yes"])
    assert rc == EXIT_USAGE and "--cbw-tc belongs to a test that is not among --tests" in capsys.readouterr().err


def test_deviations():
    kind, full = CompositeWorkloadTest(), options.build({"tests": ("cbw",)})
    # the defaults: none (the offsets are disclosed in the header, not judged: issue 43 item 6)
    assert kind.pts.deviations(kind, full.to_dict(), full.revision) == []
    said = " | ".join(kind.pts.deviations(kind, options.build({"tests": ("cbw",)}, quick=True).to_dict(),
                                          full.revision))
    assert "CBW sweep narrowed to TC 1,2 x QD 1,4" in said and "CBW sweep points run 1 s each instead of 60 s" in said
    assert kind.pts.deviations(kind, full.to_dict(), REVISIONS["pts-c-1.1"]) == [
        "CBW is a PTS-E test, not part of PTS-C 1.1"]
    limit = kind.pts.deviations(kind, options.build({"tests": ("cbw",), "cbw_rt_limit": 50000}).to_dict(),
                                full.revision)
    assert limit == ["CBW max and mid points chosen under a mean response time of 50ms instead of 5ms "
                     "(the PTS 2.0 implementation's limit)"]


def test_dry_run_describes_the_plan(tmp_path, capsys):
    img = tmp_path / "t.img"
    assert main(["ssd", "run", str(img), "--size", "256m", "--tests", "cbw", "--dry-run",
                 "--cbw-structure", "steady-sweep", "--jobs"]) == 0
    out = capsys.readouterr().out
    assert not img.exists() or img.stat().st_size == 0
    assert "rounds of the first 2 jobs below" in out and "then the other 49 jobs below as one sweep" in out
    names = re.findall(r"^\[(.*jedec[^\]]*)\]$", out, re.M)
    assert names[:4] == ["ss-rest-jedec-40-60-tc32-qd32", "ss-jedec-40-60-tc32-qd32", "jedec-40-60-tc32-qd32",
                         "jedec-40-60-tc32-qd16"]
    assert names[-1] == "jedec-40-60-tc1-qd1" and len(names) == 51
    assert out.count(f"bssplit={JEDEC_BSSPLIT}") == 51 and out.count(f"random_distribution={JEDEC_ZONED}") == 51
    assert "# total: 3.3 h to 13.3 h" in out  # 5 to 25 rounds of 30 min, then 49 min


# --- on recorded fio output -------------------------------------------------------------------

def recorded():
    with open(RECORDED) as fh:
        report = first_json_object(fh.read())
    (plan,) = plans(quick=True, cbw_time=2)
    return report, plan


def recorded_workloads() -> List[Workload]:
    report, plan = recorded()
    return parse_jobs(report, {j.name: j.spec() for j in plan.shape.sweep})


def recorded_test(limit_us: int = 5000) -> TestRun:
    test = TestRun(type="cbw", key="cbw", tracking_workload="ss", tracking_metric="iops", tracking_label="",
                   params={"rt_limit_us": str(limit_us), "bssplit": JEDEC_BSSPLIT}, data={SWEEP_ROUND: "1"})
    test.rounds.append(Round(1, "", 8.0, 8.0, tuple(recorded_workloads())))
    return test


def test_recorded_file_is_what_tkperf_plans():
    """fio's own echo of every job's options is the planned section, option by option."""
    report, plan = recorded()
    # recorded when the sweep ran by OIO (TC2/QD4, TC1/QD4, TC2/QD1, TC1/QD1); tkperf now nests TC outer
    # and QD inner (issue 34), so the jobs are matched by name: each one's options are still the plan's
    planned = {j.name: j for j in plan.shape.sweep}
    assert sorted(j["jobname"] for j in report["jobs"]) == sorted(planned)
    for echoed in report["jobs"]:
        assert echoed["job options"] == section_options(planned[echoed["jobname"]]) and echoed["error"] == 0
    assert report["global options"]["direct"] == "1" and report["global options"]["ioengine"] == "libaio"


def test_fio_issued_the_jedec_mix():
    """Mean transfer size and read share per point, as the report's table shows them."""
    table = view.issued_table([Point(w.numjobs, w.iodepth, w.iops, w.lat_mean_us, w) for w in recorded_workloads()],
                              mean_transfer())
    assert "40% reads, a mean transfer of 7,818 B" in table.title
    assert [row[0] for row in table.rows] == ["TC2/QD4", "TC2/QD1", "TC1/QD4", "TC1/QD1"]  # the plan's order
    for row in table.rows:
        assert abs(float(row[2]) - 40.0) < 2.0  # read share of the I/Os
        assert abs(float(row[3].replace(",", "")) - JEDEC_MEAN_BYTES) < 0.05 * JEDEC_MEAN_BYTES  # not 4096


@pytest.mark.parametrize("limit_us, top, mid, under", [
    # all four within 5 ms: TC2/QD4 has the most IOPS (38,647); the middle of
    # 7,007 (TC1/QD1) and 38,647 is 22,827: TC1/QD4 (27,937) beats TC2/QD1 (13,914)
    (5000, "TC2/QD4", "TC1/QD4", True),
    # within 150 us: all but TC2/QD4 (205.4); max TC1/QD4 (27,937), mid the one left, TC2/QD1
    (150, "TC1/QD4", "TC2/QD1", True),
    # none within 100 us: max is the lowest mean response time, TC1/QD1 (140.3)
    (100, "TC1/QD1", "TC2/QD1", False),
])
def test_max_mid_min_on_recorded_sweep(limit_us, top, mid, under):
    c = choose_points(sweep_points(recorded_test(limit_us)), limit_us)
    assert (c.max.label, c.mid.label, c.min.label, c.under_limit) == (top, mid, "TC1/QD1", under)
    assert c.max.workload.read.bins and c.max.workload.write.bins


def test_headline_figures_from_the_recorded_sweep():
    test = recorded_test()
    view_of(CompositeWorkloadTest()).check_data(test)
    figs = {f.key: f for f in CompositeWorkloadTest().headline(test)}
    assert set(figs) == {"max_iops", "max_iops_lat_mean_us", "max_iops_lat_99_99_us", "min_oio_lat_mean_us"}
    assert round(figs["max_iops"].value) == 38647 and "TC2/QD4" in figs["max_iops"].label
    assert figs["max_iops_lat_mean_us"].value == pytest.approx(205.44, abs=0.01)
    assert figs["max_iops_lat_99_99_us"].value == pytest.approx(6848.512)
    assert figs["min_oio_lat_mean_us"].value == pytest.approx(140.30, abs=0.01)
    assert [figs[k].better for k in ("max_iops", "max_iops_lat_mean_us", "max_iops_lat_99_99_us",
                                     "min_oio_lat_mean_us")] == ["higher", "lower", "lower", "lower"]


def test_mix_table_and_zones_in_words():
    rows = view.mix_table(recorded_test()).rows
    assert rows[0] == ("512 B", "4%") and ("1.5 KiB", "1%") in rows and rows[-1] == ("64 KiB", "3%")
    assert view.zones_text(JEDEC_ZONED) == ("50% of the I/Os to the first 5% of the range, 30% to the next 15%, "
                                            "20% to the last 80%")


# --- end to end on a loop device -----------------------------------------------------------

# 3 rounds never fill the 5-round window: the sweep follows "max rounds".
FAST = ["--quick", "--wipc-loops", "1", "--max-rounds", "3", "--yes", "--quiet", "--no-report", "--cbw-structure",
        "steady-sweep"]


def run_cbw(loop: str, out, name: str, *extra: str) -> str:
    rc = main(["ssd", "run", loop, "--tests", "cbw", "--name", name, "--outdir", str(out), *FAST, *extra])
    assert rc == 0
    return str(out / f"{name}.xml")


def check_result(t: TestRun) -> None:
    steady = steady_rounds(t)
    assert len(steady) == 3 and t.purge is not None and t.wipc is not None
    for r in steady:
        (w,) = r.workloads
        assert (w.name, w.numjobs, w.iodepth, w.rwmixread) == ("ss-jedec-40-60-tc2-qd4", 2, 4, 40)
    sweep = sweep_round(t)
    assert sweep is t.rounds[-1] and t.data[SWEEP_ROUND] == "4"
    assert [(w.numjobs, w.iodepth) for w in sweep.workloads] == [(2, 4), (2, 1), (1, 4), (1, 1)]
    for w in t.rounds:
        for x in w.workloads:
            ios = x.read.ios + x.write.ios
            assert x.iops > 0 and x.read.ios and x.write.ios and x.read.bins and x.write.bins
            assert 0.30 < x.read.ios / ios < 0.50  # R/W 40/60
            # the JEDEC mix's mean transfer (7,818 B), far from the job's nominal bs=4k
            assert abs((x.read.io_bytes + x.write.io_bytes) / ios - JEDEC_MEAN_BYTES) < 0.15 * JEDEC_MEAN_BYTES
    assert t.stop_reason == "sweep complete after max rounds"


@needs_fio
def test_cbw_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    xml = run_cbw(loopdev, out, "a")
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    assert schema.validate(etree.parse(xml)), schema.error_log
    run = store.load(xml)
    assert run.status == "complete" and [t.key for t in run.tests] == ["cbw"]
    (t,) = run.tests
    check_result(t)
    view_of(CompositeWorkloadTest()).check_data(t)
    log = (out / "a.log").read_text()
    sweep_file = log.split("fio job file for cbw sweep:\n", 1)[1].split("\n\n\n", 1)[0]
    assert re.findall(r"\[(jedec-[^\]]+)\]", sweep_file) == [
        "jedec-40-60-tc2-qd4", "jedec-40-60-tc2-qd1", "jedec-40-60-tc1-qd4", "jedec-40-60-tc1-qd1"]
    assert sweep_file.count(f"bssplit={JEDEC_BSSPLIT}\nrandom_distribution={JEDEC_ZONED}\nrefill_buffers=1") == 4
    assert "--output-format=json+" in log
    capsys.readouterr()
    assert main(["show", xml, "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["tests"]
    c = choose_points(sweep_points(t), 5000)
    assert shown["key"] == "cbw" and c.min.label == "TC1/QD1"
    assert shown["headline"]["max_iops"] == pytest.approx(c.max.iops)
    assert shown["headline"]["max_iops_lat_mean_us"] == pytest.approx(c.max.lat_mean_us)
    assert shown["headline"]["min_oio_lat_mean_us"] == pytest.approx(c.min.lat_mean_us)
    assert shown["headline"]["max_oio_iops"] == pytest.approx(t.window_average(t.tracking_workload, "iops"))
    assert shown["fob"] == {}  # round 1 follows the WIPC (issue 19)
    assert shown["round1_after_wipc"] == {"max_oio_iops": pytest.approx(t.rounds[0].workloads[0].iops)}
    rep = tmp_path / "rep"
    # the runs build no report of their own (FAST): this one is rendered in every format a run's is
    assert main(["report", xml, "--format", "rst,html,pdf", "--outdir", str(rep), "-q"]) == 0
    assert (rep / "a.pdf").stat().st_size > 0
    text = (rep / "a.rst").read_text()
    for words in ("Enterprise Composite Workload (CBW)", "Max, mid and min points",
                  "The max point is the point with the highest IOPS",
                  "CBW: IOPS by thread count (TC) and queue depth per thread (QD)", "Every point of the sweep",
                  "Response-time percentiles from the histograms", "The JEDEC transfer-size mix (fio bssplit)",
                  "The mix as issued per point", "Measurement window"):
        assert words in text
    head = view.cbw_header(ReportContext(run), t)
    setup, params = dict(head.setup), dict(head.test)
    assert setup["Data pattern"].startswith("incompressible") and "refill_buffers=1" in setup["Data pattern"]
    assert params["Stimulus"].startswith("JEDEC enterprise mix, R/W 40/60, incompressible")
    assert f"bssplit={JEDEC_BSSPLIT}" in params["Transfer sizes"] and "4Kn" in params["Smallest transfer"]
    assert params["Access"].startswith(f"random, random_distribution={JEDEC_ZONED}: 50% of the I/Os")
    assert params["OIO"] == "TC 2 x QD 4 = OIO 8" and "4 points of 1 s in round 4" in params["Sweep"]
    plots = {p.name for p in (rep / "a-plots").iterdir()}
    for what in ("iops-vs-oio", "demand-intensity", "histograms", "confidence", "convergence", "window"):
        # an SVG: text and paths, smaller than its PNG was
        assert (rep / "a-plots" / f"cbw-{what}.svg").stat().st_size > 5000
    assert not any("histogram-" in p for p in plots)  # no second, generic QoS part
    other = run_cbw(loopdev, out, "b")
    cmp_dir = tmp_path / "cmp"
    assert main(["compare", xml, other, "--format", "rst", "--outdir", str(cmp_dir), "-q"]) == 0
    text = (cmp_dir / "comparison.rst").read_text()
    assert "Enterprise Composite Workload (CBW)" in text and "CBW: the three points per run" in text
    assert "CBW: the points of the curves below" in text
    plots = {p.name for p in (cmp_dir / "comparison-plots").iterdir()}
    assert {"cbw-demand-intensity.svg", "cbw-max-histograms.svg"} <= plots
    capsys.readouterr()
    main(["check", other, "--baseline", xml, "--tolerance", "1000", "--json"])
    checked = {c["figure"] for c in json.loads(capsys.readouterr().out)["figures"] if c["test"] == "cbw"}
    assert {"max_iops", "max_iops_lat_mean_us", "min_oio_lat_mean_us", "max_oio_iops"} <= checked


@pytest.fixture
def loopdev_4kn(tmp_path):
    """A fresh 256 MiB loop device with 4096 B logical sectors (4Kn), always detached."""
    losetup = shutil.which("losetup")
    if os.geteuid() != 0 or losetup is None:
        pytest.skip("needs root and losetup for a loop device")
    backing = tmp_path / "4kn.img"
    with open(backing, "wb") as fh:
        fh.truncate(256 * MiB)
    made = subprocess.run([losetup, "--find", "--show", "--direct-io=on", "--sector-size", "4096", str(backing)],
                          capture_output=True, text=True, timeout=60)
    if made.returncode != 0:
        pytest.skip(f"no 4Kn loop device could be made: {made.stderr.strip()}")
    path = made.stdout.strip()
    try:
        yield path
    finally:
        subprocess.run([losetup, "--detach", path], capture_output=True, timeout=60)


@needs_fio
def test_a_4kn_target_is_refused_before_anything_is_written(loopdev_4kn, tmp_path, capsys):
    """The mix issues 512 B I/Os, which a 4 KiB logical sector refuses: tkperf
    says so up front (exit 4), before the purge, and writes no result."""
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev_4kn, "--tests", "cbw", "--name", "k", "--outdir", str(out), "--quick",
               "--wipc-loops", "0", "--yes", "--quiet", "--no-report"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_TARGET
    assert not any("Traceback" in line for line in err)
    (last,) = [line for line in err if line.startswith("tkperf: error:")]
    assert "512 B transfers" in last and "4096 B logical sectors" in last
    assert not (out / "k.xml").exists()
    # the same target takes a test whose transfers are whole sectors
    assert main(["ssd", "run", loopdev_4kn, "--tests", "lat", "--lat-bs", "4k", "--dry-run", "--yes"]) == 0
