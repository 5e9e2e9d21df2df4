"""DIRTH (demand intensity / response-time histogram): its job plans option
by option, the steady-then-sweep shape, the max, mid and min points on
recorded fio data, and the test end to end on a loop device (result file,
report, comparison, ``show --json``).  The recorded sweep
(``data/dirth/fio-3.33-dirth-sweep.json``: fio 3.33 json+ on a 256 MiB loop
device, made and detached for it) is described in ``data/dirth/README.rst``.
"""
from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import List

import pytest
from lxml import etree

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine import resume
from tkperf.errors import EXIT_USAGE
from tkperf.fio.jobs import FioJob, FioSettings, job_file
from tkperf.fio.output import first_json_object, parse_jobs
from tkperf.kit import options
from tkperf.kit import progress as ep
from tkperf.kit.base import Plan, Tracking
from tkperf.kit.composite import SWEEP_ROUND, SteadyThenSweep, SweepRounds, steady_rounds, sweep_round
from tkperf.kit.registry import get
from tkperf.model.results import DeviceInfo, HostInfo, IoStats, Round, RunResult, TestRun, Workload
from tkperf.pts.sweep import report as sweep_view
from tkperf.pts.sweep.plan import choice, parse_tcs, sweep_order, sweep_points
from tkperf.pts.sweep.points import Point, choose_points
from tkperf.render import blocks as b
from tkperf.report.generic import view_of
from tkperf.testtypes.dirth import DemandIntensityTest, job, parse_mixes, point_name

RECORDED = data_path("dirth/fio-3.33-dirth-sweep.json")
MiB = 1024 * 1024


def plans(quick: bool = False, **given) -> List[Plan]:
    opts = options.build({"tests": ("dirth",), **given}, quick=quick)
    return get("dirth").plan(opts, 256 * MiB)


def tc_qd(job_: FioJob):
    m = re.fullmatch(r".*-tc(\d+)-qd(\d+)", job_.name)
    return int(m.group(1)), int(m.group(2))


# --- the plan, option by option -----------------------------------------------------------

def test_default_plan_is_the_pts_2_0_round_structure():
    """Every round a 5-minute TC32/QD32 pre-write, then the 49 points high to
    low; the TC32/QD32 point is tracked; 60-minute pre-writes and 10-minute
    captures follow (issue 19 item 5)."""
    (plan,) = plans()
    shape = plan.shape
    assert isinstance(shape, SweepRounds) and plan.params["structure"] == "pts-2.0"
    pre = shape.prewrite
    assert (pre.name, pre.numjobs, pre.iodepth, pre.bs, pre.rwmixread, pre.runtime) == (
        "pre-rnd-8k-0-100-tc32-qd32", 32, 32, 8192, 0, 300)
    assert len(shape.sweep) == 49 and all(j.runtime == 60 for j in shape.sweep)
    assert plan.tracking.workload == shape.sweep[0].name == "rnd-8k-65-35-tc32-qd32"
    # the default stimulus: RND 8KiB 65:35, the PTS 2.0 implementation's "DIRTH - OLTP" (issue 55 item 7)
    assert all((j.rw, j.bs, j.rwmixread) == ("randrw", 8192, 65) for j in shape.sweep)
    assert (plan.params["block_size"], plan.params["mix"], plan.params["stimulus_default"]) == ("8k", "65/35", "yes")
    assert shape.capture_seconds == 3 * (3600 + 600)
    assert (plan.params["prewrite_s"], plan.params["capture_prewrite_s"], plan.params["capture_s"]) == (
        "300", "3600", "600")
    assert "round_s" not in plan.params  # --dirth-round belongs to the shorter structure
    (old,) = plans(pts="pts-e-1.1")
    assert isinstance(old.shape, SteadyThenSweep) and old.params["structure"] == "steady-sweep"


def test_steady_sweep_plan_precondition_at_tc32_qd32_then_49_points_high_to_low():
    (plan,) = plans(dirth_structure="steady-sweep")
    assert plan.key == "dirth-8k-65-35" and plan.wipc and plan.histograms
    shape = plan.shape
    assert isinstance(shape, SteadyThenSweep)
    rest, steady = shape.steady  # the rest of the round, then its measured last minute (issue 55)
    assert (steady.numjobs, steady.iodepth, steady.bs, steady.rw, steady.rwmixread) == (32, 32, 8192, "randrw", 65)
    assert (rest.runtime, steady.runtime) == (1740, 60) and rest.name == "ss-rest-" + steady.name[3:]
    assert plan.tracking.workload == steady.name and plan.tracking.metric == "iops"
    assert len(shape.sweep) == 49 and all(j.runtime == 60 for j in shape.sweep)
    # TC outer, QD inner, both high to low, as the PTS 2.0 implementation nests its loops (issue 34)
    assert [(j.numjobs, j.iodepth) for j in shape.sweep] == [(t, q) for t in (32, 16, 8, 6, 4, 2, 1)
                                                             for q in (32, 16, 8, 6, 4, 2, 1)]
    assert plan.params["tc"] == plan.params["qd"] == "1,2,4,6,8,16,32"
    assert (plan.params["numjobs"], plan.params["iodepth"], plan.params["rt_limit_us"]) == ("32", "32", "5000")


def test_tc_is_numjobs_and_qd_is_iodepth():
    """TC and QD sets that differ, so that a swap could not go unnoticed."""
    (plan,) = plans(dirth_tc=(1, 4), dirth_qd=(2, 8, 16), dirth_structure="steady-sweep")
    steady = plan.shape.steady[0]
    pre = plans(dirth_tc=(1, 4), dirth_qd=(2, 8, 16))[0].shape.prewrite
    assert (pre.numjobs, pre.iodepth) == (4, 16)
    assert (steady.numjobs, steady.iodepth) == (4, 16)
    for j in plan.shape.sweep:
        tc, qd = tc_qd(j)
        assert (j.numjobs, j.iodepth) == (tc, qd)
        section = j.section()
        assert f"numjobs={tc}" in section and f"iodepth={qd}" in section
    assert {j.numjobs for j in plan.shape.sweep} == {1, 4}
    assert {j.iodepth for j in plan.shape.sweep} == {2, 8, 16}


def test_order_tc_outer_qd_inner_both_high_to_low():
    (plan,) = plans(dirth_tc=(4, 1, 2), dirth_qd=(2, 1, 4))
    assert [tc_qd(j) for j in plan.shape.sweep] == [
        (4, 4), (4, 2), (4, 1), (2, 4), (2, 2), (2, 1), (1, 4), (1, 2), (1, 1)]
    assert plan.params["tc"] == "1,2,4"  # stored sorted, whatever order was given


def test_no_idle_between_points():
    """Every point is a stonewalled section of the one job file of the sweep,
    with nothing that waits (thinktime, startdelay, rate limits)."""
    (plan,) = plans(quick=True)
    text = job_file(FioSettings(filename="/dev/loopX"), plan.shape.sweep)
    sections = text.split("\n\n")[1:]
    assert len(sections) == len(plan.shape.sweep) == 4
    for s in sections:
        assert "\nstonewall\n" in s
    for word in ("thinktime", "startdelay", "rate", "ramp_time", "idle"):
        assert word not in text


def test_block_size_mixes_time_and_limit():
    ps = plans(dirth_bs=8192, dirth_mixes=(100, 70), dirth_time=5, dirth_rt_limit=750, dirth_structure="steady-sweep")
    assert [p.key for p in ps] == ["dirth-8k-100-0", "dirth-8k-70-30"]
    for p, mix in zip(ps, (100, 70)):
        assert all(j.bs == 8192 and j.rwmixread == mix and j.runtime == 5 for j in p.shape.sweep)
        assert all(j.bs == 8192 for j in p.shape.steady)
        assert sum(j.runtime for j in p.shape.steady) == 1800  # --dirth-round, 30 min
        assert p.params["mix"] == f"{mix}/{100 - mix}" and p.params["rt_limit_us"] == "750"
        assert p.params["point_time"] == "5"


def test_quick_values_and_runtime_per_steady_round():
    (plan,) = plans(quick=True, dirth_round=3, dirth_structure="steady-sweep")
    assert [tc_qd(j) for j in plan.shape.sweep] == [(2, 4), (2, 1), (1, 4), (1, 1)]
    assert plan.shape.steady[0].runtime == 3 and all(j.runtime == 1 for j in plan.shape.sweep)
    assert plans(quick=True, dirth_structure="steady-sweep")[0].shape.steady[0].runtime == 1  # 30-minute rounds
    (plan,) = plans(quick=True)
    assert (plan.shape.prewrite.runtime, plan.params["capture_prewrite_s"], plan.params["capture_s"]) == (1, "1", "2")


@pytest.mark.parametrize("flag, text, words", [
    ("--dirth-tc", "0", "not a thread count from 1 to 256"),
    ("--dirth-tc", "1,two", "not a thread count"),
    ("--dirth-qd", "5000", "not a queue depth from 1 to 4096"),
    ("--dirth-bs", "4k,8k", "takes one block size"),
    ("--dirth-bs", "4000", "multiple of 512"),
    ("--dirth-mixes", "60/30", "does not add up to 100"),
    ("--dirth-time", "0", "longer than 0"),
    ("--dirth-rt-limit", "fast", "is not a response time"),
    ("--dirth-rt-limit", "0", "out of range"),
])
def test_bad_option_is_one_line_usage_error(flag, text, words, capsys):
    rc = main(["ssd", "run", "/dev/null", "--tests", "dirth", flag, text, "--yes"])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_USAGE
    assert len(err.splitlines()) == 1 and flag in err and words in err and "Traceback" not in err


@pytest.mark.parametrize("text, us", [("5ms", 5000), ("5", 5000), ("500us", 500), ("2.5ms", 2500),
                                      ("1s", 1_000_000), ("750 µs", 750)])
def test_rt_limit_values_round_trip(text, us):
    opt = next(o for o in DemandIntensityTest.options if o.field == "dirth_rt_limit")
    assert opt.parse(text, "--dirth-rt-limit") == us
    assert opt.from_text(opt.to_text(us)) == us


def test_options_round_trip_through_the_result_file_text():
    opts = options.build({"tests": ("dirth",), "dirth_tc": parse_tcs("8,2", "--dirth-tc"),
                          "dirth_mixes": parse_mixes("70/30,0/100", "--dirth-mixes")})
    assert options.RunOptions.from_dict(opts.to_dict()) == opts
    assert (opts.to_dict()["dirth_tc"], opts.to_dict()["dirth_mixes"]) == ("2,8", "70/30,0/100")


def test_deviations():
    kind, full = DemandIntensityTest(), options.build({"tests": ("dirth",)})
    assert kind.pts.deviations(kind, full.to_dict(), full.revision) == []
    said = " | ".join(kind.pts.deviations(kind, options.build({"tests": ("dirth",)}, quick=True).to_dict(),
                                          full.revision))
    assert "narrowed to TC 1,2 x QD 1,4" in said and "1 s each instead of 60 s" in said


# --- the shape -------------------------------------------------------------------------------

class RecordingFio:
    """The fio back end's stand-in: keeps each fio process asked for; a steady round gets the next ``iops``."""

    def __init__(self, iops: List[float]) -> None:
        self.iops, self.calls = list(iops), []

    def run(self, jobs, what, timeout=None, histograms=False):
        self.calls.append((tuple(jobs), histograms))
        value = self.iops.pop(0) if len(jobs) == 1 else 1000.0
        return [Workload(j.name, j.rw, j.bs, j.rwmixread, j.numjobs, j.iodepth, 1000,
                         write=IoStats(iops=value, ios=int(value), lat_mean_us=10.0 * j.numjobs * j.iodepth))
                for j in jobs], 1.0


def run_shape(iops: List[float], max_rounds: int):
    steady = job(4096, 0, 2, 4, 60, "ss-x-tc2-qd4")
    points = tuple(job(4096, 0, tc, qd, 60, f"x-tc{tc}-qd{qd}") for tc, qd in sweep_order((1, 2), (1, 4)))
    shape = SteadyThenSweep((steady,), points)
    plan = Plan(key="d", shape=shape, tracking=Tracking(steady.name, "iops", "IOPS"), histograms=True)
    events = []
    ctx = SimpleNamespace(fio=RecordingFio(iops), opts=SimpleNamespace(max_rounds=max_rounds, window=5,
                                                                       latency_histograms=False),
                          run=SimpleNamespace(events=[], facts={}), progress=ep.Progress(),
                          phase="", save=lambda: None, event=lambda *a: events.append(a), health_check=lambda: None)
    test = TestRun(type="dirth", key="d", tracking_workload=steady.name, tracking_metric="iops",
                   tracking_label="IOPS")
    shape.run(ctx, plan, test)
    return shape, ctx.fio.calls, test, events


def test_sweep_follows_steady_state_in_one_fio_process():
    shape, calls, test, events = run_shape([500, 100, 100, 101, 99, 100, 100], max_rounds=25)
    assert [c[0] for c in calls] == [shape.steady] * 6 + [shape.sweep]
    assert all(hist for _, hist in calls)  # every point keeps its histogram
    assert test.steady.steady and test.steady.rounds == (2, 3, 4, 5, 6)
    assert test.data[SWEEP_ROUND] == "7" and sweep_round(test) is test.rounds[-1]
    assert [r.index for r in steady_rounds(test)] == [1, 2, 3, 4, 5, 6]
    assert test.stop_reason == "sweep complete after steady state" and not events


def test_sweep_follows_max_rounds_without_steady_state():
    shape, calls, test, events = run_shape([100, 300, 100, 300], max_rounds=4)
    assert [len(c[0]) for c in calls] == [1, 1, 1, 1, 4]
    assert not test.steady.steady and test.data[SWEEP_ROUND] == "5"
    assert test.stop_reason == "sweep complete after max rounds"
    assert events and "no steady state within 4 rounds" in events[0][1]
    assert [(p.tc, p.qd) for p in sweep_points(test)] == [(2, 4), (2, 1), (1, 4), (1, 1)]


def test_shape_refuses_shared_names_and_tracking_outside_the_steady_rounds():
    a = job(4096, 0, 1, 1, 1, "a")
    for steady, sweep, words in (((a,), (a,), "names of their own"), ((), (a,), "needs steady jobs")):
        with pytest.raises(ValueError, match=words):
            SteadyThenSweep(steady, sweep)
    shape = SteadyThenSweep((a,), (job(4096, 0, 1, 1, 1, "b"),))
    with pytest.raises(ValueError, match="tracking figure"):
        shape.run(SimpleNamespace(), Plan("d", shape, Tracking("b", "iops", "")),
                  TestRun("dirth", "d", "b", "iops", ""))


def test_resume_redoes_a_test_interrupted_after_steady_state():
    """Steady but without its sweep is no result: unlike IOPS, resume starts it again."""
    _, _, done, _ = run_shape([100] * 5, max_rounds=25)
    done.status, done.rounds = "interrupted", done.rounds[:5]  # stopped during the sweep
    saved = RunResult(name="r", started="", device=DeviceInfo("/dev/x", "/dev/x", "block", 1 << 30),
                      host=HostInfo(), options={}, tests=[done])
    (said,) = resume.prepare(saved)
    assert done.steady.steady and "starts again with purge" in said and done.status == "interrupted"


def test_estimate_counts_steady_rounds_and_one_sweep():
    (plan,) = plans(dirth_tc=(1, 2), dirth_qd=(1,), dirth_time=30, dirth_structure="steady-sweep")
    est = plan.shape.estimate(SimpleNamespace(window=5, max_rounds=25), 256 * MiB)
    assert est.jobs == plan.shape.steady + plan.shape.sweep
    # a round is two stonewalled jobs (the rest, then the measured last minute), each counted with fio's gap
    assert est.low_s == pytest.approx(5 * 1800.6 + 2 * 30.3) and est.high_s == pytest.approx(25 * 1800.6 + 2 * 30.3)


# --- the three points, on recorded data ------------------------------------------------------

def recorded_workloads() -> List[Workload]:
    with open(RECORDED) as fh:
        report = first_json_object(fh.read())
    jobs = [job(4096, 0, tc, qd, 2, point_name(4096, 0, tc, qd)) for tc, qd in sweep_order((1, 2, 4), (1, 4, 16))]
    return parse_jobs(report, {j.name: j.spec() for j in jobs})


def recorded_points() -> List[Point]:
    return [Point(w.numjobs, w.iodepth, w.iops, w.lat_mean_us, w) for w in recorded_workloads()]


def test_recorded_file_is_what_tkperf_plans():
    """fio's own echo of the job options: the job named tcN-qdM ran numjobs=N, iodepth=M."""
    with open(RECORDED) as fh:
        jobs = json.load(fh)["jobs"]
    assert len(jobs) == 9
    for j in jobs:
        tc, qd = re.fullmatch(r".*-tc(\d+)-qd(\d+)", j["jobname"]).groups()
        assert (j["job options"]["numjobs"], j["job options"]["iodepth"]) == (tc, qd)
        assert j["write"]["lat_ns"]["bins"] and not j["read"]["total_ios"]


@pytest.mark.parametrize("limit_us, top, mid, under", [
    # all nine within 5 ms: TC4/QD4 has the most IOPS (113,517); the middle
    # of 47,084 (TC1/QD1) and 113,517 is 80,300: TC1/QD16 (80,834)
    (5000, "TC4/QD4", "TC1/QD16", True),
    # within 100 us: TC4/QD1 (78.7), TC1/QD4 (58.5), TC2/QD1 (41.8), TC1/QD1 (20.9);
    # max TC1/QD4 (68,058); middle 57,571: TC4/QD1 (50,514) beats TC2/QD1 (47,333)
    (100, "TC1/QD4", "TC4/QD1", True),
    # within 50 us only TC2/QD1 and TC1/QD1: no third point; both lie 124.5 IOPS
    # from the middle, the tie goes to the lower OIO
    (50, "TC2/QD1", "TC1/QD1", True),
    # none within 20 us (TC1/QD1 has 20.9): max is the lowest mean response
    # time, TC1/QD1; mid among all others nearest 47,084: TC2/QD1
    (20, "TC1/QD1", "TC2/QD1", False),
])
def test_max_mid_min_on_recorded_sweep(limit_us, top, mid, under):
    c = choose_points(recorded_points(), limit_us)
    assert (c.max.label, c.mid.label, c.min.label, c.under_limit) == (top, mid, "TC1/QD1", under)
    assert c.max.workload.write.bins  # the chosen point keeps its histogram


def test_min_is_the_lowest_oio_measured_and_ties_go_low():
    pts = [Point(2, 2, 900, 50), Point(4, 1, 1000, 40), Point(1, 4, 1000, 40), Point(2, 1, 500, 20),
           Point(1, 2, 400, 30)]
    c = choose_points(pts, 5000)
    assert c.min.label == "TC1/QD2"  # no TC1/QD1: of the OIO 2 points, the lower TC
    assert c.max.label == "TC1/QD4"  # 1000 IOPS twice at OIO 4: the lower TC
    assert c.mid.label == "TC2/QD1"  # middle 700: 500 and 900 are 200 away, lower OIO wins


def test_headline_figures_from_the_recorded_sweep():
    ws = recorded_workloads()
    test = TestRun(type="dirth", key="dirth-4k-0-100", tracking_workload="ss", tracking_metric="iops",
                   tracking_label="", params={"rt_limit_us": "5000"}, data={SWEEP_ROUND: "1"})
    test.rounds.append(Round(1, "", 20.0, 18.0, tuple(ws)))
    view_of(DemandIntensityTest()).check_data(test)
    figs = {f.key: f for f in DemandIntensityTest().headline(test)}
    assert set(figs) == {"max_iops", "max_iops_lat_mean_us", "max_iops_lat_99_99_us", "min_oio_lat_mean_us"}
    assert round(figs["max_iops"].value) == 113517 and "TC4/QD4" in figs["max_iops"].label
    assert figs["max_iops_lat_mean_us"].value == pytest.approx(140.6, abs=0.05)
    assert figs["max_iops_lat_99_99_us"].value == pytest.approx(4079.616)
    assert figs["min_oio_lat_mean_us"].value == pytest.approx(20.9, abs=0.05)
    assert [figs[k].better for k in ("max_iops", "max_iops_lat_mean_us", "min_oio_lat_mean_us")] == \
        ["higher", "lower", "lower"]


def test_report_says_when_no_point_is_within_the_limit():
    test = TestRun(type="dirth", key="d", tracking_workload="ss", tracking_metric="iops", tracking_label="",
                   params={"rt_limit_us": "15"}, data={SWEEP_ROUND: "1"})
    test.rounds.append(Round(1, "", 20.0, 18.0, tuple(recorded_workloads())))
    c = choice(test)
    shown = sweep_view.points_blocks(test, c)
    (note,) = [x for x in shown if isinstance(x, b.Admonition)]
    assert "No point of the sweep had a mean response time within 15 µs" in note.lines[0]
    (table,) = [x for x in shown if isinstance(x, b.Table)]
    assert [row[:2] for row in table.rows] == [("max, min", "TC1/QD1"), ("mid", "TC2/QD1")]
    assert not [x for x in sweep_view.points_blocks(test, choose_points(recorded_points(), 5000))
                if isinstance(x, b.Admonition)]


def test_check_data_refuses_a_sweep_round_that_is_not_there():
    test = TestRun("dirth", "d", "", "", "", data={SWEEP_ROUND: "3"})
    with pytest.raises(ValueError, match="names no round"):
        view_of(DemandIntensityTest()).check_data(test)


# --- end to end on a loop device -----------------------------------------------------------

# 3 rounds never fill the 5-round window: the sweep follows "max rounds" (steady: see above).
FAST = ["--quick", "--wipc-loops", "1", "--max-rounds", "3", "--yes", "--quiet", "--no-report", "--dirth-structure",
        "steady-sweep"]


def run_dirth(loop: str, out, name: str, *extra: str) -> str:
    rc = main(["ssd", "run", loop, "--tests", "dirth", "--name", name, "--outdir", str(out), *FAST, *extra])
    assert rc == 0
    return str(out / f"{name}.xml")


def check_sweep(t: TestRun, mix: int) -> None:
    steady = steady_rounds(t)
    assert len(steady) == 3 and t.purge is not None and t.wipc is not None
    for r in steady:
        (w,) = r.workloads
        assert (w.name, w.numjobs, w.iodepth, w.rwmixread) == (f"ss-rnd-4k-{mix}-{100 - mix}-tc2-qd4", 2, 4, mix)
    sweep = sweep_round(t)
    assert sweep is t.rounds[-1] and t.data[SWEEP_ROUND] == str(len(steady) + 1)
    assert set(t.steady.rounds) <= {r.index for r in steady}
    assert [(w.numjobs, w.iodepth) for w in sweep.workloads] == [(2, 4), (2, 1), (1, 4), (1, 1)]
    for w in sweep.workloads:
        assert w.iops > 0 and w.runtime_ms >= 900 and w.rwmixread == mix
        sides = [s for s in (w.read, w.write) if s.ios]
        assert len(sides) == (2 if 0 < mix < 100 else 1) and all(s.bins for s in sides)
    assert t.stop_reason == "sweep complete after max rounds"


@needs_fio
def test_dirth_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    seen = []  # (event, after-rounds seconds, ETA low) as the run reports them

    def listen(prog, event):
        if event == "round" and prog.key == "dirth-4k-0-100":
            seen.append((prog.after_rounds_s, prog.eta()[0]))

    ep.add_listener(listen)
    try:
        xml = run_dirth(loopdev, out, "a", "--dirth-bs", "4k", "--dirth-mixes", "0/100,70/30")
    finally:
        ep.remove_listener(listen)
    # while the steady-state rounds run, the ETA counts the sweep that follows (4 points of 1 s)
    assert seen and all(after >= 4.0 and low >= after for after, low in seen)
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    assert schema.validate(etree.parse(xml)), schema.error_log
    run = store.load(xml)
    assert run.status == "complete" and [t.key for t in run.tests] == ["dirth-4k-0-100", "dirth-4k-70-30"]
    for t, mix in zip(run.tests, (0, 70)):
        check_sweep(t, mix)
        view_of(DemandIntensityTest()).check_data(t)
    log = (out / "a.log").read_text()
    sweep_file = log.split("fio job file for dirth-4k-0-100 sweep:\n", 1)[1].split("\n\n\n", 1)[0]
    assert re.findall(r"\[(rnd-[^\]]+)\]", sweep_file)[:4] == [
        "rnd-4k-0-100-tc2-qd4", "rnd-4k-0-100-tc2-qd1", "rnd-4k-0-100-tc1-qd4", "rnd-4k-0-100-tc1-qd1"]
    assert "--output-format=json+" in log
    capsys.readouterr()
    assert main(["show", xml, "--json"]) == 0
    shown = {t["key"]: t["headline"] for t in json.loads(capsys.readouterr().out)["tests"]}
    for t in run.tests:
        c = choose_points(sweep_points(t), 5000)
        assert shown[t.key]["max_iops"] == pytest.approx(c.max.iops)
        assert shown[t.key]["max_iops_lat_mean_us"] == pytest.approx(c.max.lat_mean_us)
        assert shown[t.key]["min_oio_lat_mean_us"] == pytest.approx(c.min.lat_mean_us)
        assert c.min.label == "TC1/QD1"
        ios = c.max.workload.read.ios + c.max.workload.write.ios
        assert ("max_iops_lat_99_99_us" in shown[t.key]) == (ios >= 10000)
    rep = tmp_path / "rep"
    # the runs build no report of their own (FAST): this one is rendered in every format a run's is
    assert main(["report", xml, "--format", "rst,html,pdf", "--outdir", str(rep), "-q"]) == 0
    assert (rep / "a.pdf").stat().st_size > 0
    text = (rep / "a.rst").read_text()
    for words in ("Demand Intensity / Response Time Histogram", "DIRTH 4k 0/100", "DIRTH 4k 70/30",
                  "Max, mid and min points", "The max point is the point with the highest IOPS",
                  "IOPS by thread count (TC) and queue depth per thread (QD)", "Every point of the sweep",
                  "Response-time percentiles from the histograms", "Measurement window"):
        assert words in text
    plots = {p.name for p in (rep / "a-plots").iterdir()}
    for key in ("dirth-4k-0-100", "dirth-4k-70-30"):
        for what in ("iops-vs-oio", "demand-intensity", "histograms", "confidence", "convergence", "window"):
            assert f"{key}-{what}.svg" in plots
            assert (rep / "a-plots" / f"{key}-{what}.svg").stat().st_size > 5000
    assert not any("histogram-4k" in p for p in plots)  # no second, generic QoS part
    other = run_dirth(loopdev, out, "b")
    cmp_dir = tmp_path / "cmp"
    assert main(["compare", xml, other, "--format", "rst", "--outdir", str(cmp_dir), "-q"]) == 0
    text = (cmp_dir / "comparison.rst").read_text()
    assert "DIRTH 4k 0/100: the three points per run" in text and "DIRTH 4k 70/30" in text
    assert "the points of the curves below" in text
    plots = {p.name for p in (cmp_dir / "comparison-plots").iterdir()}
    assert {"dirth-4k-0-100-demand-intensity.svg", "dirth-4k-0-100-max-histograms.svg"} <= plots
