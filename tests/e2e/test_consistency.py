"""The consistency test type: figures on recorded fio output with known answers (tests/data/consistency),
definitions on made-up series worked out by hand, options, plans, the loop shape, runs on a loop device."""
from __future__ import annotations

import glob
import json
import math
import os
import re
import shutil

import numpy as np
import pytest

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine.runner import Runner
from tkperf.errors import EXIT_USAGE, Interrupted, UsageError
from tkperf.fio.backend import FioBackend
from tkperf.fio.output import json_objects
from tkperf.kit import options
from tkperf.model.results import DeviceInfo, HostInfo, RunResult, TestRun
from tkperf.model.series import Series
from tkperf.pts.stream import latlog
from tkperf.pts.stream.phases import COLUMNS, MAX_COLUMNS, MAX_SERIES, SERIES, PhaseCutter
from tkperf.report.generic import view_of
from tkperf.testtypes.consistency import BSSPLIT, ZONED, ConsistencyTest
from tkperf.testtypes.consistency import figures as fg
from tkperf.testtypes.consistency.analysis import analyse

KIND = ConsistencyTest()
STIMULUS = {"phase.1": "RND 4KiB 100% W", "phase.1.kind": "stimulus"}


def recorded(name: str) -> str:
    return data_path(os.path.join("consistency", name))


def reports(name: str) -> list:
    return [obj for obj, _ in json_objects(open(recorded(name)).read())]


def replay(status: str, job: str, log_prefix: str) -> TestRun:
    """A test built from recorded fio output (1 s intervals) as the loop shape builds it."""
    s = Series(SERIES, COLUMNS)
    cutter = PhaseCutter(job, 1, start=0.0)
    for cut, reads in filter(None, (cutter.feed(r, float(k)) for k, r in enumerate(reports(status), 1))):
        s.set_row(cut.index, (cut.wall_s, cut.fio_s, cut.ios, cut.io_bytes, cut.iops, cut.lat_mean_us, reads, 1))
    read, write, files = latlog.read_maxima(recorded(log_prefix), 1000.0, len(s))
    m = Series.from_rows(MAX_SERIES, MAX_COLUMNS, np.column_stack([read, write]))
    return TestRun(type="consistency", key="consistency", tracking_workload=job, tracking_metric="iops",
                   tracking_label="IOPS", params={"workload": "rnd4k", "interval": "1"},
                   series={SERIES: s, MAX_SERIES: m}, data=STIMULUS)


def raw_log_maxima(paths, count):
    """{(direction, interval): max us}, line by line from the log text, without latlog."""
    out = {}
    for t, v, d in (map(float, line.split(",")[:3]) for path in paths for line in open(path)):
        key = (int(d), min(max(math.ceil(t / 1000.0), 1), count))
        out[key] = max(out.get(key, 0.0), v / 1000.0)
    return out


# --- recorded fio output ----------------------------------------------------------------------
def test_recorded_rnd4k_figures_have_the_known_answers():
    t = replay("rnd4k-status.json", "consistency-rnd-4k-0-100", "rnd4k")
    final = reports("rnd4k-status.json")[-1]["jobs"][0]["write"]
    s = t.series[SERIES]
    assert len(s) == 15  # 15 s at 1 s intervals; fio's short last report merged into the 15th
    assert s.column("read_ios").sum() == 0 and s.column("ios").sum() == final["total_ios"]
    f = {x.key: x.value for x in KIND.headline(t)}
    # Two jobs held to rate_iops=2000 each: 4,000 IOPS every second, no cliff.
    assert f["steady_iops"] == pytest.approx(4000, rel=0.01) and f["iops_spread_pct"] < 5.0
    assert f["first_interval_iops"] == pytest.approx(4000, rel=0.05) and "write_cliff_s" not in f
    # The interval means weighted by I/O count are fio's overall mean; the largest
    # maximum of the two jobs' logs is fio's overall maximum.
    assert f["lat_mean_us"] == pytest.approx(final["lat_ns"]["mean"] / 1000.0, rel=1e-6)
    assert f["lat_max_us"] == pytest.approx(final["lat_ns"]["max"] / 1000.0)
    assert f["max_avg_lat_ratio"] == pytest.approx(final["lat_ns"]["max"] / final["lat_ns"]["mean"])
    raw = raw_log_maxima([recorded("rnd4k_lat.1.log"), recorded("rnd4k_lat.2.log")], 15)
    per = [raw.get((1, k), 0.0) for k in range(1, 16)]
    assert list(t.series[MAX_SERIES].column("write_lat_max_us")) == pytest.approx(per)
    assert f["avg_max_lat_5s_us"] == pytest.approx(sum(max(per[k:k + 5]) for k in (0, 5, 10)) / 3)


def test_recorded_mixed_phase_counts_both_directions():
    t = replay("jedec-mixed-status.json", "jedec-mixed-1", "jedec-mixed")
    final = reports("jedec-mixed-status.json")[-1]["jobs"][0]
    s = t.series[SERIES]
    rd, wr, m = final["read"], final["write"], t.series[MAX_SERIES]
    assert (s.column("ios").sum(), s.column("read_ios").sum(), s.column("io_bytes").sum()) == \
        (rd["total_ios"] + wr["total_ios"], rd["total_ios"], rd["io_bytes"] + wr["io_bytes"])
    share = s.column("read_ios") / s.column("ios")
    assert np.all((share > 0.3) & (share < 0.5))  # 40/60
    assert m.column("read_lat_max_us").max() == pytest.approx(rd["lat_ns"]["max"] / 1000.0)
    assert m.column("write_lat_max_us").max() == pytest.approx(wr["lat_ns"]["max"] / 1000.0)
    raw = raw_log_maxima([recorded("jedec-mixed_lat.1.log")], len(s))
    assert list(m.column("read_lat_max_us")) == pytest.approx([raw[(0, k)] for k in range(1, len(s) + 1)])
    mean = (rd["lat_ns"]["mean"] * rd["total_ios"] + wr["lat_ns"]["mean"] * wr["total_ios"]) \
        / (rd["total_ios"] + wr["total_ios"]) / 1000.0
    assert analyse(t).lat_mean(np.ones(len(s), dtype=bool)) == pytest.approx(mean, rel=1e-6)


# --- fio's log, parsed (made-up lines in fio's format) -------------------------------------------
def test_fio_log_lines_and_the_interval_grid():
    rows = latlog.parse_log("100, 5000, 1, 0, 0\n200, 7000, 0, 0, 0, 1\n300, 80")
    assert rows.tolist() == [[100, 5000, 1], [200, 7000, 0]]  # the torn last line is dropped
    assert latlog.parse_log("").shape == (0, 3)
    with pytest.raises(ValueError, match="x.log: not a fio log"):
        latlog.parse_log("100, 5000, 1, 0, 0\nhello\n", "x.log")
    job1 = np.array([[1000, 2000, 1], [1000, 9000, 0], [2000, 3000, 1],
                     [4700, 50000, 1],     # a window stretched by a stall ends in interval 5
                     [5003, 1000, 1]])     # the end-of-job flush goes to the last interval
    job2 = np.array([[1000, 4000, 1], [2000, 1000, 1]])
    read, write = latlog.interval_maxima([job1, job2], 1000.0, 5)
    assert write.tolist() == [4.0, 3.0, 0.0, 0.0, 50.0]  # 0: no write completed in intervals 3, 4
    assert read.tolist() == [9.0, 0.0, 0.0, 0.0, 0.0]


def test_log_files_in_job_order(tmp_path):
    for name, ns in (("x_lat.10", 10000), ("x_lat.2", 2000), ("x_lat.1", 1000), ("x_clat.1", 9 ** 9),
                     ("xy_lat.1", 9 ** 9)):
        (tmp_path / f"{name}.log").write_text(f"1000, {ns}, 1, 0, 0\n")
    prefix = str(tmp_path / "x")
    assert [os.path.basename(p) for p in latlog.log_files(prefix)] == ["x_lat.1.log", "x_lat.2.log", "x_lat.10.log"]
    read, write, files = latlog.read_maxima(prefix, 1000.0, 1)
    assert files == 3 and write.tolist() == [10.0] and read.tolist() == [0.0]


# --- the definitions, on made-up series -----------------------------------------------------------
def test_write_cliff():
    y = np.r_[np.full(100, 1000.0), np.full(100, 400.0)]
    y[[160, 170, 180, 190]] = 0.0  # stalls do not move the levels: they are medians
    c = fg.write_cliff(y, np.arange(1.0, 201.0))
    # window 5: the centred median first holds three 400s at index 100, the 101st second
    assert (c.found, c.index, c.time_s, c.initial, c.final, c.midpoint, c.window) == \
        (True, 100, 101.0, 1000.0, 400.0, 700.0, 5)
    assert fg.steady_start(200, c) == 105  # later than the half: one window after the cliff
    assert [fg.cliff_window(n) for n in (10, 2000, 86400)] == [5, 41, 61]
    noisy = 1000 * (1 + 0.2 * np.random.default_rng(5).standard_normal(400))
    noisy[150] = 0.0  # one stall is not a cliff
    assert not fg.write_cliff(noisy, np.arange(1.0, 401.0)).found
    c = fg.write_cliff(np.r_[np.full(100, 1000.0), np.full(100, 800.0)], np.arange(1.0, 201.0))
    assert not c.found and "no write cliff within the run (final level 80% of the initial)" == c.reason
    assert "too short" in fg.write_cliff(np.full(8, 10.0), np.arange(1.0, 9.0)).reason
    assert fg.steady_start(200, c) == 100


def test_spread_and_five_second_blocks():
    sp = fg.spread(np.arange(1.0, 101.0))
    # numpy's linear percentiles of 1..100: p1 = 1.99, median 50.5, p99 = 99.01
    assert (sp.low, sp.median, sp.high) == pytest.approx((1.99, 50.5, 99.01))
    assert sp.pct == pytest.approx((99.01 - 1.99) / 50.5 * 100)
    phase = np.array([1] * 7 + [2] * 3)  # phase 1 has 7 one-second intervals, phase 2 has 3
    ios = np.array([10, 10, 10, 10, 10, 99, 99, 1, 3, 0], dtype=float)
    mean = np.array([1, 1, 1, 1, 6, 50, 50, 10, 20, 0], dtype=float)
    mx = np.array([5, 9, 2, 2, 2, 70, 80, 30, 40, 0], dtype=float)
    bl = fg.blocks(np.arange(1.0, 11.0), ios, mean, mx, phase, 5)
    # phase 1: one whole block (its 2-second tail dropped); phase 2: only a part-block, kept
    assert (bl.end_s.tolist(), bl.lat_max_us.tolist(), bl.phase.tolist()) == ([5.0, 10.0], [9.0, 40.0], [1, 2])
    assert bl.lat_mean_us.tolist() == pytest.approx([2.0, 17.5])  # (4*10 + 60) / 50; (10 + 60) / 4
    assert len(fg.blocks(np.arange(1.0, 11.0), ios, mean, mx, phase, 1)) == 10


def made_up(iops, maxima=None, phases=None, workload="rnd4k", data=None, series=None) -> TestRun:
    """A made-up test of 1-second intervals with a mean of 100 us each."""
    n = len(iops)
    phase = np.ones(n) if phases is None else np.asarray(phases, dtype=float)
    rows = np.column_stack([np.ones(n), np.ones(n), iops, np.asarray(iops) * 4096, iops, np.full(n, 100.0),
                            np.zeros(n), phase])
    series = {SERIES: Series.from_rows(SERIES, COLUMNS, rows), **(series or {})}
    if maxima is not None:
        series[MAX_SERIES] = Series.from_rows(MAX_SERIES, MAX_COLUMNS, np.c_[np.zeros(len(maxima)), maxima])
    return TestRun(type="consistency", key="consistency", tracking_workload="x", tracking_metric="iops",
                   tracking_label="IOPS", params={"workload": workload, "interval": "1"}, series=series,
                   data=data or STIMULUS)


def test_headline_of_a_made_up_cliff():
    maxima = np.full(200, 300.0)
    maxima[[3, 150]] = 1300.0
    figures = KIND.headline(made_up(np.r_[np.full(100, 1000.0), np.full(100, 400.0)], maxima))
    f = {x.key: x.value for x in figures}
    assert (f["write_cliff_s"], f["steady_iops"], f["iops_spread_pct"], f["first_interval_iops"]) == \
        (101.0, 400.0, 0.0, 1000.0)
    assert (f["lat_mean_us"], f["lat_max_us"], f["max_avg_lat_ratio"]) == (100.0, 1300.0, 13.0)
    assert f["avg_max_lat_5s_us"] == pytest.approx((38 * 300 + 2 * 1300) / 40)
    assert {x.key: x.better for x in figures if x.better != "lower"} == \
        {"write_cliff_s": "", "steady_iops": "higher", "first_interval_iops": "higher"}
    t = made_up(np.r_[np.full(150, 1000.0), np.full(50, 400.0)])
    a = analyse(t)
    assert a.cliff.index == 150 and np.flatnonzero(a.steady)[0] == 155  # one window after the cliff
    f = {x.key: x.value for x in KIND.headline(t)}
    assert (f["steady_iops"], f["iops_spread_pct"], f["write_cliff_s"]) == (400.0, 0.0, 151.0)


def test_a_steady_part_of_one_interval_has_no_spread():
    # a short run whose cliff comes late (on a loop device, a loaded host's dip
    # can look like one): its steady part is the last interval alone, and p1 = p99
    # of one value is no 0% spread
    assert math.isnan(fg.spread(np.array([400.0])).pct) and fg.spread(np.array([400.0, 400.0])).pct == 0.0
    t = made_up(np.r_[np.full(15, 1000.0), np.full(5, 400.0)])
    a = analyse(t)
    assert a.cliff.found and np.count_nonzero(a.steady) == 1, (a.cliff, a.steady)
    f = {x.key: x.value for x in KIND.headline(t)}
    assert f["steady_iops"] == 400.0 and "iops_spread_pct" not in f
    from tkperf.testtypes.consistency.view import figures_table
    rows = {r[0]: r[1] for r in figures_table(a, t).rows}
    assert rows["IOPS spread (p99 - p1) / median"] == "n/a"


def test_missing_maxima():
    f = {x.key for x in KIND.headline(made_up(np.full(20, 500.0)))}
    assert "lat_mean_us" in f and not f & {"lat_max_us", "max_avg_lat_ratio", "avg_max_lat_5s_us"}
    assert KIND.headline(made_up(np.zeros(0))) == []
    # A run stopped in phase 2 has the maxima of phase 1 only.
    t = made_up(np.full(20, 500.0), np.full(10, 200.0), phases=[1] * 10 + [2] * 10,
                data={"phase.1": "a", "phase.1.kind": "stimulus", "phase.2": "b", "phase.2.kind": "stimulus"})
    a, every = analyse(t), np.ones(20, dtype=bool)
    assert (a.maxima_rows, a.lat_max(every), a.avg_max_5s(every)) == (10, 200.0, 200.0)


def test_jedec_figures_are_the_mixed_phases():
    data = {"phase.1": "preconditioning", "phase.1.kind": "precondition", "phase.2": "write 1",
            "phase.2.kind": "write", "phase.3": "40/60 1", "phase.3.kind": "mixed"}
    iops = np.r_[np.full(20, 900.0), np.full(10, 300.0), np.full(10, 500.0)]
    maxima = np.r_[np.full(20, 50.0), np.full(10, 2000.0), np.full(10, 700.0)]
    t = made_up(iops, maxima, phases=[1] * 20 + [2] * 10 + [3] * 10, workload="jedec", data=data)
    f = {x.key: x.value for x in KIND.headline(t)}
    assert (f["steady_iops"], f["avg_max_lat_5s_us"], f["lat_max_us"], f["first_interval_iops"]) == \
        (500.0, 700.0, 700.0, 900.0)
    assert (f["write_phase_iops"], f["write_phase_avg_max_lat_5s_us"]) == (300.0, 2000.0)


# --- options, plans, stored data -------------------------------------------------------------------
def build(quick=False, **given):
    return options.build({"tests": ("consistency",), **given}, quick=quick)


def test_plans():
    (plan,) = KIND.plan(build(), 1 << 30)
    job = plan.shape.phases[0].job
    assert (job.rw, job.bs, job.numjobs, job.iodepth, job.runtime) == ("randwrite", 4096, 1, 32, 2000)
    assert plan.wipc and plan.shape.interval_s == 1
    assert plan.params["latency_log"] == "write_lat_log, log_avg_msec=100, log_max_value=1"
    assert KIND.plan(build(quick=True), 1 << 30)[0].shape.phases[0].job.runtime == 20
    (plan,) = KIND.plan(build(consistency_workload="jedec", jedec_cycles=2, consistency_tc=2, consistency_qd=16,
                              jedec_write=60), 1 << 30)
    assert not plan.wipc and plan.shape.interval_s == 5
    assert [(p.kind, p.job.rw, p.job.rwmixread, p.job.runtime) for p in plan.shape.phases] == [
        ("precondition", "randwrite", 0, 86400), ("write", "randwrite", 0, 60), ("mixed", "randrw", 40, 28800),
        ("write", "randwrite", 0, 60), ("mixed", "randrw", 40, 28800)]
    section = plan.shape.jobs("/tmp/logs")[2].section()
    assert {f"bssplit={BSSPLIT}", f"random_distribution={ZONED}", "refill_buffers=1", "numjobs=2", "iodepth=16",
            "rwmixread=40", "write_lat_log=/tmp/logs/jedec-mixed-1", "log_avg_msec=500", "log_max_value=1"} \
        <= set(section)
    assert KIND.blocks(build(consistency_workload="jedec")).largest == 65536
    assert KIND.plan(build(consistency_workload="jedec", consistency_interval=1), 1 << 30)[0].shape.interval_s == 1
    est = KIND.plan(build(consistency_workload="jedec"), 1 << 30)[0].shape.estimate(None, 1 << 30)  # --dry-run
    assert "3 continuous jobs, one right after the other, reported every 5 s" in est.lines[0]
    assert est.low_s == est.high_s == pytest.approx(40 * 3600, abs=2) and "TMPDIR" in est.jobs[2].extra[-3][1]


@pytest.mark.parametrize("argv, words", [
    (["--workload", "sequential"], "--workload 'sequential': no test takes it: give rnd4k|jedec (consistency) or"),
    (["--consistency-workload", "sequential"], "--consistency-workload 'sequential': choose rnd4k or jedec"),
    (["--consistency-interval", "3"], "--consistency-interval 3 s: give 1 or 5 seconds"),
    (["--consistency-qd", "0"], "--consistency-qd 0 is out of range (1..4096)"),
    (["--consistency-tc", "two"], "--consistency-tc 'two' is not a whole number"),
    (["--jedec-cycles", "0"], "--jedec-cycles 0 is out of range (1..1000)"),
    (["--duration", "0"], "--duration '0' must be longer than 0"),
    (["--duration", "soon"], "is not a duration"),
    (["--jedec-mixed", "367d"], "--jedec-mixed 31708800 is out of range"),
])
def test_bad_options(argv, words, tmp_path, capsys):
    rc = main(["ssd", "run", str(tmp_path / "no-device"), "--tests", "consistency", "--yes", *argv])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_USAGE and words in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_options_and_stored_data():
    with pytest.raises(UsageError, match="--duration belongs to a test that is not among --tests"):
        options.build({"tests": ("wsat",), "consistency_duration": 60})
    opts = build(consistency_workload="jedec", consistency_interval=5)
    assert options.RunOptions.from_dict(opts.to_dict()) == opts and opts.to_dict()["consistency_interval"] == "5"
    assert build().to_dict()["consistency_interval"] == "auto"
    view_of(KIND).check_data(made_up(np.full(5, 10.0), np.full(5, 1.0)))
    for extra, words in (({"extra": Series("extra", ("a",))}, "unknown series extra"),
                         ({MAX_SERIES: Series.from_rows(MAX_SERIES, MAX_COLUMNS, np.zeros((6, 2)))}, "more rows")):
        with pytest.raises(ValueError, match=words):
            view_of(KIND).check_data(made_up(np.full(5, 10.0), series=extra))


# --- the loop shape, with recorded fio output instead of fio --------------------------------------
class RecordedFio(FioBackend):
    """Every phase replays the recorded rnd4k reports; fio's logs only for ``logs_for``;
    a signal after five reports of ``stop_in``."""

    version = "fio-3.33 (recorded)"

    def __init__(self, logs_for, stop_in):
        self.logs_for, self.stop_in, self.jobs = logs_for, stop_in, []

    def run(self, jobs, what, timeout=None, histograms=False):
        raise AssertionError("a consistency test runs streams only")

    def stream(self, job, interval_s, what, on_report, timeout):
        self.jobs.append(job)
        for k, report in enumerate(reports("rnd4k-status.json")):
            if job.name == self.stop_in and k == 5:
                raise Interrupted(2, "SIGINT")
            report["jobs"][0]["jobname"] = job.name
            on_report(report)
        for n in (1, 2) if job.name in self.logs_for else ():
            shutil.copy(recorded(f"rnd4k_lat.{n}.log"), dict(job.extra)["write_lat_log"] + f"_lat.{n}.log")


def test_shape_appends_intervals_and_keeps_the_maxima_it_could_read(tmp_path):
    opts = build(quick=True, consistency_workload="jedec", consistency_interval=1)
    (plan,) = KIND.plan(opts, 256 << 20)
    device = DeviceInfo(path="/dev/recorded", resolved="/dev/recorded", kind="block", size_bytes=256 << 20)
    run = RunResult(name="r", started="", device=device, host=HostInfo(), options=opts.to_dict())
    fio = RecordedFio(logs_for={"jedec-precondition"}, stop_in="jedec-mixed-1")
    runner = Runner(run=run, opts=opts, device=device, fio=fio, xml_path=str(tmp_path / "r.xml"))
    test = TestRun("consistency", "consistency", "", "iops", "", params=dict(plan.params))
    run.tests.append(test)
    with pytest.raises(Interrupted):
        plan.shape.run(runner, plan, test)
    runner.writer.close()
    assert [j.name for j in fio.jobs] == ["jedec-precondition", "jedec-write-1", "jedec-mixed-1"]
    assert all(dict(j.extra)["log_avg_msec"] == "100" for j in fio.jobs)
    # fio's logs went to a folder beside the result file, and that folder is gone
    assert all(os.path.dirname(dict(j.extra)["write_lat_log"]).startswith(str(tmp_path / ".tkperf-latlog-"))
               for j in fio.jobs)
    assert not glob.glob(str(tmp_path / ".tkperf-latlog-*"))
    # The file as the stop left it: full saves after each phase, the stopped phase's rows appended.
    saved = store.load(str(tmp_path / "r.xml")).tests[0]
    s, m = saved.series[SERIES], saved.series[MAX_SERIES]
    assert s.column("phase").tolist() == [1.0] * 15 + [2.0] * 15 + [3.0] * 5
    assert len(m) == 15  # the write phase had no log: its maxima and all after it are unknown
    assert [e.message for e in run.events] == \
        ["write 1: fio's latency log could not be read (no log file); no maximum response times from this phase on"]
    a = analyse(saved)
    assert a.maxima_rows == 15 and a.lat_max(a.measured) is None and a.lat_mean(a.measured) > 0


# --- end to end on a loop device -------------------------------------------------------------------
def run_quick(device, outdir, name, *extra):  # about 20 s of fio
    assert main(["ssd", "run", device, "--tests", "consistency", "--quick", "--yes", "--quiet", "--name", name,
                 "--outdir", str(outdir), "--report-format", "html", *extra]) == 0
    return outdir / f"{name}.xml", (outdir / f"{name}.log").read_text()


def show_json(xml, capsys) -> dict:
    capsys.readouterr()
    assert main(["show", str(xml), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["tests"][0]["headline"]


def pngs(outdir, name):
    """The plots drawn (SVG files), named as their charts are (``x.png``)."""
    found = {os.path.basename(p): os.path.getsize(p) for p in glob.glob(str(outdir / f"{name}-plots" / "*.svg"))}
    assert all(size > 5000 for size in found.values()), found
    return {os.path.splitext(p)[0] + ".png" for p in found}


@needs_fio
def test_rnd4k_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    xml, log = run_quick(loopdev, out, "c1")
    (t,) = (run := store.load(str(xml))).tests
    assert (t.type, t.status, t.stop_reason) == ("consistency", "complete", "time limit")
    assert t.wipc is not None and t.wipc.bytes_written == 2 * run.device.size_bytes
    s, m = t.series[SERIES], t.series[MAX_SERIES]
    assert 18 <= len(s) <= 21 and len(m) == len(s) and s.column("fio_s").sum() == pytest.approx(20.0, abs=0.5)
    assert np.all(s.column("iops") > 0) and np.all(s.column("read_ios") == 0) and np.all(s.column("phase") == 1)
    assert np.all(m.column("write_lat_max_us") >= s.column("lat_mean_us")) and not m.column("read_lat_max_us").any()
    assert "write_lat_log=" in log and "log_avg_msec=100" in log and "log_max_value=1" in log
    assert re.search(r"write_lat_log=" + re.escape(str(out)) + r"/\.tkperf-latlog-", log)
    assert not glob.glob(str(out / ".tkperf-latlog-*"))  # fio's logs are removed once read
    headline = show_json(xml, capsys)
    for key in ("first_interval_iops", "steady_iops", "lat_mean_us", "lat_max_us", "max_avg_lat_ratio",
                "avg_max_lat_5s_us"):
        assert headline[key] > 0, key
    # the steady part follows a cliff, which a loaded host's dip on a loop device can
    # put late: a spread where it holds two intervals or more, none for one
    steady = np.count_nonzero(analyse(t).steady)
    assert ("iops_spread_pct" in headline) == (steady > 1), (steady, headline)
    assert headline.get("iops_spread_pct", 1.0) > 0
    assert headline["lat_max_us"] == pytest.approx(m.column("write_lat_max_us").max())
    assert pngs(out, "c1") == {"consistency-iops-overall.png", "consistency-iops-zoom-stimulus.png",
                               "consistency-latency-5s-stimulus.png"}
    html = (out / "c1.html").read_text()
    assert "Performance Consistency" in html and "AvgMaxRT_5sInt" in html and "Write cliff" in html
    other = store.load(str(xml))  # a second result to compare with: the same run under another name
    other.name = "c2"
    store.save(other, str(tmp_path / "c2.xml"))
    assert main(["compare", str(xml), str(tmp_path / "c2.xml"), "--format", "rst,html", "--outdir",
                 str(tmp_path / "cmp"), "--name", "cmp", "--quiet"]) == 0
    rst = (tmp_path / "cmp" / "cmp.rst").read_text()
    assert "Performance Consistency" in rst and "headline figures, side by side" in rst and "AvgMaxRT 5s" in rst
    assert pngs(tmp_path / "cmp", "cmp") >= {"consistency-iops.png", "consistency-latency-max-5s.png"}


@needs_fio
def test_jedec_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    xml, log = run_quick(loopdev, out, "j1", "--workload", "jedec", "--consistency-interval", "1")
    (t,) = store.load(str(xml)).tests
    assert t.wipc is None and t.status == "complete" and t.stop_reason == "all phases run"
    s, m = t.series[SERIES], t.series[MAX_SERIES]
    phase, reads, ios = s.column("phase"), s.column("read_ios"), s.column("ios")
    assert sorted(set(phase.tolist())) == [1.0, 2.0, 3.0] and \
        [t.data[f"phase.{i}.kind"] for i in (1, 2, 3)] == ["precondition", "write", "mixed"]
    assert np.all(reads[phase < 3] == 0)  # preconditioning and the write phase only write
    mixed = phase == 3
    assert 0.3 < reads[mixed].sum() / ios[mixed].sum() < 0.5  # 40/60
    assert len(m) == len(s) and m.column("read_lat_max_us")[mixed].max() > 0
    for line in (f"bssplit={BSSPLIT}", f"random_distribution={ZONED}", "rw=randrw", "rwmixread=40",
                 "refill_buffers=1", "[jedec-precondition]", "[jedec-write-1]", "[jedec-mixed-1]"):
        assert line in log, line
    assert 6000 < s.column("io_bytes").sum() / ios.sum() < 9500  # the transfer-size mix: about 7.8 KiB per I/O
    headline = show_json(xml, capsys)
    assert headline["write_phase_iops"] > 0 and headline["steady_iops"] > 0
    assert pngs(out, "j1") == {"consistency-iops-overall.png", "consistency-iops-zoom-mixed.png",
                               "consistency-iops-zoom-write.png", "consistency-latency-5s-mixed.png",
                               "consistency-latency-5s-write.png", "consistency-latency-5s-precondition.png"}
