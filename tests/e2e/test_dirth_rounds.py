"""DIRTH and CBW under the PTS 2.0 implementation's round structure (issue 19 item 5):
every round a pre-write at the highest OIO and the whole sweep, until the
highest-OIO point is steady; the points' figures are window means; then a
pre-write and a capture at each of the max, mid and min points, whose
histograms the report shows.  The other structure (steady-sweep) is in
tests/e2e/test_dirth.py and tests/e2e/test_cbw.py."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import List, Optional, Sequence

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.kit import options
from tkperf.kit.composite import (
    CAPTURE_ROUND,
    WDPC_SERIES,
    WDPC_STOP,
    SweepRounds,
    capture_round,
    steady_rounds,
    wdpc_verdict,
)
from tkperf.kit.progress import Progress
from tkperf.kit.registry import get
from tkperf.model.pts import REVISIONS
from tkperf.model.results import DeviceInfo, HostInfo, IoStats, RunResult, TestRun, Workload
from tkperf.pts.sweep.plan import choice, sweep_points
from tkperf.pts.sweep.points import choose_points, window_points
from tkperf.report.context import ReportContext
from tkperf.testtypes.dirth import view
from tkperf.verdict import conformance

MiB = 1024 * 1024
BLOCK = DeviceInfo("/dev/nvme0n1", "/dev/nvme0n1", "block", 1 << 34)
GRID = [(2, 4), (2, 1), (1, 4), (1, 1)]  # TC outer, QD inner, both high to low (issue 34)


def plan_of(test: str = "dirth", quick: bool = True, **given):
    (plan, *_) = get(test).plan(options.build({"tests": (test,), **given}, quick=quick), 256 * MiB)
    return plan


class RoundFio:
    """fio's stand-in: round r gives point (TC, QD) IOPS base(TC, QD) x factor[r]; captures get bins.
    The workload-dependent preconditioning's rounds (recorded apart, in ``pre_calls``) take their
    factors from ``wdpc`` (then 1.0: steady from its round 5)."""

    def __init__(self, factors: List[float], wdpc: Sequence[float] = ()) -> None:
        self.factors, self.calls = list(factors), []
        self.wdpc, self.pre_calls = list(wdpc), []

    def run(self, jobs, what, timeout=None, histograms=False):
        if "preconditioning" in what:
            self.pre_calls.append(([j.name for j in jobs], histograms))
            f = self.wdpc.pop(0) if self.wdpc else 1.0
        else:
            self.calls.append(([j.name for j in jobs], histograms))
            f = self.factors.pop(0) if self.factors and not what.endswith("captures") else 1.0
        out = []
        for j in jobs:
            iops = 1000.0 * j.numjobs * j.iodepth ** 0.5 * f
            lat = 40.0 * j.numjobs * j.iodepth / f
            bins = ((int(lat * 1000), 5000),) if histograms else ()
            out.append(Workload(j.name, j.rw, j.bs, j.rwmixread, j.numjobs, j.iodepth, 1000,
                                write=IoStats(iops=iops, ios=5000, io_bytes=64 * MiB, bw_bytes=iops * j.bs,
                                              lat_mean_us=lat,
                                              lat_max_us=lat * 10, bins=bins)))
        return out, 1.0


def run_rounds(factors: List[float], max_rounds: int = 25, test_type: str = "dirth", wdpc: Sequence[float] = (),
               events: Optional[list] = None, **given):
    plan = (plan_of(test_type, dirth_rt_limit=200, **given) if test_type == "dirth" else plan_of(test_type, **given))
    fio = RoundFio(factors, wdpc)
    events = [] if events is None else events
    ctx = SimpleNamespace(fio=fio, opts=SimpleNamespace(max_rounds=max_rounds, window=5, latency_histograms=False),
                          run=SimpleNamespace(events=[], facts={}), progress=Progress(), phase="",
                          save=lambda: None, event=lambda *a: events.append(a), health_check=lambda: None)
    test = TestRun(type=test_type, key=plan.key, tracking_workload=plan.tracking.workload, tracking_metric="iops",
                   tracking_label=plan.tracking.label, params=dict(plan.params))
    plan.shape.run(ctx, plan, test)
    test.pre_calls = fio.pre_calls  # type: ignore[attr-defined]  # for the tests of the preconditioning
    return plan, fio.calls, test


def test_every_round_is_the_prewrite_and_the_sweep_then_captures_at_three_points():
    # round 1 fast (the burst), then steady from round 2; window rounds 2-6
    plan, calls, test = run_rounds([1.5, 1.0, 1.0, 1.02, 0.98, 1.0])
    shape = plan.shape
    assert isinstance(shape, SweepRounds)
    names = [shape.prewrite.name] + [j.name for j in shape.sweep]
    assert names[0] == "pre-rnd-8k-0-100-tc2-qd4"
    assert [c for c in calls[:-1]] == [(names, False)] * 6  # the rounds keep no histograms
    assert test.steady.steady and test.steady.rounds == (2, 3, 4, 5, 6)
    assert test.data[CAPTURE_ROUND] == "7" and capture_round(test) is test.rounds[-1]
    assert [r.index for r in steady_rounds(test)] == [1, 2, 3, 4, 5, 6]
    assert test.stop_reason == "captures complete after steady state"
    # the three points are chosen from the window means, each after its own pre-write, with histograms
    caps, hist = calls[-1]
    assert hist
    means = window_points(test.rounds[1:6])
    c = choose_points(means, 200)
    expected = []
    for role, p in c.named():  # each capture's pre-write at the captured point's own TC/QD (issue 34)
        expected += [f"pre-{role}-rnd-8k-0-100-tc{p.tc}-qd{p.qd}", f"cap-{role}-rnd-8k-65-35-tc{p.tc}-qd{p.qd}"]
    assert caps == expected and len(caps) == 6
    assert (c.max.label, c.mid.label, c.min.label) == ("TC2/QD1", "TC1/QD4", "TC1/QD1")  # TC2/QD4: 320 us > 200


def test_points_are_window_means_and_the_three_carry_their_captures():
    _, _, test = run_rounds([1.5, 1.0, 1.0, 1.2, 0.9, 1.0])
    points = sweep_points(test)
    assert [(p.tc, p.qd) for p in points] == GRID
    window = [r for r in test.rounds if r.index in test.steady.rounds]
    assert len(window) == 5 and 1 not in test.steady.rounds
    top = points[0]
    ws = [r.workload("rnd-8k-65-35-tc2-qd4") for r in window]
    assert top.iops == pytest.approx(sum(w.iops for w in ws) / 5)
    assert top.lat_mean_us == pytest.approx(sum(w.lat_mean_us for w in ws) / 5)
    assert top.lat_max_us == pytest.approx(sum(w.lat_max_us for w in ws) / 5)
    assert top.mb_s == pytest.approx(sum(w.bw_bytes for w in ws) / 5 / 1e6)
    c = choice(test)
    for _, p in c.named():
        assert p.workload is not None and p.workload.name.startswith("cap-") and p.workload.write.bins
    assert all(p.workload is None for p in points if p.label not in {c.max.label, c.mid.label, c.min.label})
    heads = {f.key: f.value for f in get("dirth").headline(test)}
    assert heads["max_iops"] == pytest.approx(c.max.iops)
    assert heads["max_oio_iops"] == pytest.approx(top.iops)  # the tracked TC2/QD4 point's window mean


def test_without_steady_state_the_captures_follow_max_rounds():
    _, calls, test = run_rounds([1.0, 2.0, 1.0], max_rounds=3)
    assert not test.steady.steady and test.stop_reason == "captures complete after max rounds"
    assert len(calls) == 4 and calls[-1][1] and test.data[CAPTURE_ROUND] == "4"


def test_estimate_counts_rounds_of_prewrite_and_sweep_then_the_captures():
    plan = plan_of(quick=False, dirth_tc=(1, 2), dirth_qd=(1,), dirth_time=30)
    est = plan.shape.estimate(SimpleNamespace(window=5, max_rounds=25), 256 * MiB)
    per_round = 300.3 + 2 * 30.3 + (60.3 + 1740.3)  # the preconditioning's round: 1 min tracked, 29 min more
    assert est.jobs[:2] == plan.shape.precondition and est.jobs[2] is plan.shape.prewrite and len(est.jobs) == 5
    assert est.low_s == pytest.approx(5 * per_round + 3 * (3600 + 600))
    assert est.high_s == pytest.approx(25 * per_round + 3 * (3600 + 600))
    assert "workload dependent preconditioning" in est.lines[0]


def test_shape_refuses_tracking_outside_the_sweep_and_shared_names():
    plan = plan_of()
    with pytest.raises(ValueError, match="names of their own"):
        SweepRounds(plan.shape.sweep[0], plan.shape.sweep, plan.shape.captures, 1.0)
    bad = SimpleNamespace(tracking=SimpleNamespace(workload=plan.shape.prewrite.name), key="k")
    with pytest.raises(ValueError, match="a point of the sweep"):
        plan.shape.run(SimpleNamespace(), bad, TestRun("dirth", "k", "", "iops", ""))


# --- conformance --------------------------------------------------------------------------------

def stored(test: str, rev: str = "pts-e-2.0", **given) -> dict:
    return options.build({"tests": (test,), **given}, pts=rev).to_dict()


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_structure_deviations(test):
    kind, up = get(test), test.upper()
    always: list = []  # CBW's offsets: disclosed, not judged (issue 43 item 6)
    assert kind.pts.deviations(kind, stored(test), REVISIONS["pts-e-2.0"]) == always
    assert kind.pts.deviations(kind, stored(test, "pts-e-1.1"), REVISIONS["pts-e-1.1"]) == always  # auto: steady-sweep
    (said, *rest) = kind.pts.deviations(kind, stored(test, **{f"{test}_structure": "steady-sweep"}),
                                        REVISIONS["pts-e-2.0"])
    assert rest == always
    assert said.startswith(f"{up} uses tkperf's shorter structure") and "PTS 2.0 round structure" in said
    short = stored(test, **{f"{test}_prewrite": 60, f"{test}_capture_prewrite": 600, f"{test}_capture": 600})
    assert kind.pts.deviations(kind, short, REVISIONS["pts-e-2.0"]) == [
        f"{up} pre-write of each round of 60 s instead of 5 min (the PTS 2.0 implementation)",
        f"{up} pre-write before each capture of 10 min instead of 60 min (the PTS 2.0 implementation)"] + always
    # a result file from before the option ran the steady-sweep structure
    older = {k: v for k, v in stored(test).items() if not k.startswith(f"{test}_structure")}
    assert any("shorter structure" in d for d in kind.pts.deviations(kind, older, REVISIONS["pts-e-2.0"]))
    assert conformance.of_settings(stored(test), BLOCK).deviations == tuple(always)


def test_bad_structure_is_one_line(capsys):
    assert main(["ssd", "run", "/dev/null", "--tests", "dirth", "--dirth-structure", "fast", "--yes"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--dirth-structure 'fast' is not one of auto, pts-2.0, steady-sweep" in err


# --- the report ----------------------------------------------------------------------------------

def _run(test: TestRun) -> RunResult:
    return RunResult(name="r", started="", device=DeviceInfo("/dev/x", "/dev/x", "block", 256 * MiB),
                     host=HostInfo(), options=stored(test.type), tests=[test])


def test_cbw_report_says_what_the_pts_2_0_structure_did():
    from tkperf.testtypes.cbw import view as cbw_view

    _, _, test = run_rounds([1.0] * 5, test_type="cbw")
    ctx = ReportContext(_run(test))
    params = dict(cbw_view.cbw_header(ctx, test).test)
    assert params["Stimulus"].startswith("JEDEC enterprise mix, R/W 40/60, incompressible: the workload dependent "
                                         "preconditioning (100% writes at the highest OIO until steady), then rounds "
                                         "of a pre-write")
    assert params["Preconditioning"].endswith("until 20/10 holds: 5 rounds, steady (rounds 1-5)")
    assert "then the sweep, TC 1,2 x QD 1,4" in params["Rounds"] and "1 s" in params["Rounds"]
    assert "(round 6)" in params["Captures"] and "2 s at the point" in params["Captures"]
    assert params["Structure"].startswith("the PTS 2.0 implementation's")
    assert "Sweep" not in params and "Runtime" not in params
    (issued,) = [blk for blk in cbw_view.mix_blocks(ctx, test, sweep_points(test)) if hasattr(blk, "rows")][1:]
    assert issued.title.endswith("in the last steady-state round") and len(issued.rows) == 4
    assert all(row[1] != "n/a" for row in issued.rows)


@needs_fio
def test_dirth_pts_2_0_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--tests", "dirth", "--name", "a", "--outdir", str(out), "--quick",
               "--wipc-loops", "1", "--max-rounds", "2", "--yes", "--quiet", "--no-report"])
    assert rc == 0
    xml = str(out / "a.xml")
    run = store.load(xml)
    (t,) = run.tests
    assert t.params["structure"] == "pts-2.0" and [r.index for r in steady_rounds(t)] == [1, 2]
    # the workload dependent preconditioning ran first: 2 rounds (--max-rounds 2) of real random writes
    pre = t.series[WDPC_SERIES]
    assert pre.column("round").tolist() == [1, 2] and all(pre.column("iops") > 0) and all(pre.column("io_bytes") > 0)
    assert t.data[WDPC_STOP] == "max rounds"
    assert any("workload dependent preconditioning: no steady state" in e.message for e in run.events)
    assert "dirth-8k-65-35: workload dependent preconditioning not steady within 2 rounds" in (
        conformance.of_run(run).deviations)
    for r in steady_rounds(t):
        assert [w.name for w in r.workloads] == ["pre-rnd-8k-0-100-tc2-qd4"] + [
            f"rnd-8k-65-35-tc{tc}-qd{qd}" for tc, qd in GRID]
        assert all(not w.write.bins for w in r.workloads)
    caps = capture_round(t)
    assert caps is t.rounds[-1] and len(caps.workloads) == 6
    c = choice(t)
    for role, p in c.named():
        assert p.workload.name == f"cap-{role}-rnd-8k-65-35-tc{p.tc}-qd{p.qd}" and p.workload.write.bins
        assert p.workload.runtime_ms >= 1900  # --quick: 2 s captures
    capsys.readouterr()
    assert main(["show", xml, "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["tests"]
    assert shown["headline"]["max_iops"] == pytest.approx(c.max.iops)
    rep = tmp_path / "rep"
    # the run built no report of its own: this one is rendered in every format a run's is
    assert main(["report", xml, "--format", "rst,html,pdf", "--outdir", str(rep), "-q"]) == 0
    assert (rep / "a.html").stat().st_size > 0 and (rep / "a.pdf").stat().st_size > 0
    text = (rep / "a.rst").read_text()
    for words in ("IOPS and ART are means over the measurement", "come from each point's capture",
                  "means over the measurement window's", "pre-write before each capture of 1 s",
                  "Workload dependent preconditioning rounds", "workload dependent, before the rounds",
                  "Workload dependent preconditioning: measurement window",
                  "workload dependent preconditioning rounds of 1 s instead of 30 min"):
        assert words in " ".join(text.split()), words
    head = dict(view.dirth_header(ReportContext(run), t).test)
    assert "(round 3)" in head["Captures"] and head["Steady-state rounds"] == "2 of at most 2"
    assert head["Preconditioning"].endswith("until 20/10 holds: 2 rounds, NOT steady (rounds 1-2)")
    assert (rep / "a-plots").is_dir() and any("wdpc-window" in f.name for f in (rep / "a-plots").iterdir())


# --- issue 34: the workload dependent preconditioning, the pre-writes, the fill floor, the order -------

def test_preconditioning_runs_before_the_sweep_rounds_until_its_own_steady_state():
    # the preconditioning's IOPS fall for two rounds (the write cliff), then hold: steady on rounds 3-7
    plan, calls, test = run_rounds([1.0] * 5, wdpc=[3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    pre = test.pre_calls
    assert len(pre) == 7 and all(c == (["wdpc-rnd-8k-0-100-tc2-qd4"], False) for c in pre)  # --quick: a 1 s round
    series = test.series[WDPC_SERIES]
    assert series.column("round").tolist() == [1, 2, 3, 4, 5, 6, 7]
    v = wdpc_verdict(test, 5)
    assert v.steady and v.rounds == (3, 4, 5, 6, 7) and test.data[WDPC_STOP] == "steady state"
    assert get("dirth").pts.result_deviations(get("dirth"), test, {}, REVISIONS["pts-e-2.0"], 0) == []
    # the sweep rounds come after it and are numbered from 1
    assert [r.index for r in steady_rounds(test)] == [1, 2, 3, 4, 5] and calls[0][0][0] == "pre-rnd-8k-0-100-tc2-qd4"
    job = plan.shape.precondition[0]
    assert (job.rw, job.numjobs, job.iodepth, job.rwmixread) == ("randwrite", 2, 4, 0)


def test_preconditioning_without_steady_state_is_said_and_the_rounds_follow():
    events: list = []
    _, calls, test = run_rounds([1.0] * 5, max_rounds=6, wdpc=[1.0, 2.0, 1.0, 2.0, 1.0, 2.0], events=events)
    assert len(test.pre_calls) == 6 and test.data[WDPC_STOP] == "max rounds"
    assert not wdpc_verdict(test, 5).steady
    assert get("dirth").pts.result_deviations(get("dirth"), test, {}, REVISIONS["pts-e-2.0"], 0) == [
        "dirth-8k-65-35: workload dependent preconditioning not steady within 6 rounds"]
    assert any("workload dependent preconditioning: no steady state within 6 rounds" in e[1] for e in events)
    assert len(calls) == 6  # 5 sweep rounds (steady), then the captures


def test_a_full_round_tracks_its_last_minute():
    # issue 55: the last minute of each 30-minute round, as every test tracked in 30-minute stretches
    plan = plan_of(quick=False)
    rest, last = plan.shape.precondition
    assert (last.name, last.runtime, last.numjobs, last.iodepth) == ("wdpc-rnd-8k-0-100-tc32-qd32", 60, 32, 32)
    assert (rest.name, rest.runtime) == ("wdpc-rest-rnd-8k-0-100-tc32-qd32", 30 * 60 - 60)
    assert plan.params["wdpc_round_s"] == "1800" and plan.params["wdpc_tracked_s"] == "60"


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_a_shorter_preconditioning_round_is_named_alone(test):
    kind, up = get(test), test.upper()
    always: list = []
    got = kind.pts.deviations(kind, stored(test, **{f"{test}_wdpc_round": 600}), REVISIONS["pts-e-2.0"])
    assert got == [f"{up} workload dependent preconditioning rounds of 10 min instead of 30 min "
                   "(the PTS 2.0 implementation)"] + always
    plan = plan_of(test, quick=False, **{f"{test}_wdpc_round": 600})
    assert sum(j.runtime for j in plan.shape.precondition) == 600


def test_mixed_dirth_prewrites_and_preconditioning_are_all_writes():
    plan = plan_of(dirth_mixes=(65,))
    shape = plan.shape
    assert shape.sweep[0].rwmixread == 65 and shape.sweep[0].rw == "randrw"
    for j in (shape.prewrite,) + shape.precondition:
        assert j.rw == "randwrite" and j.rwmixread == 0 and "-0-100-" in j.name
    _, calls, test = run_rounds([1.0] * 5, dirth_mixes=(65,))
    caps = calls[-1][0]
    pres = [n for n in caps if n.startswith("pre-")]
    assert len(pres) == 3 and all("-rnd-8k-0-100-" in n for n in pres)


def test_cbw_prewrites_are_the_jedec_split_and_zones_writes_only():
    from tkperf.testtypes.consistency import BSSPLIT, ZONED

    plan = plan_of("cbw")
    shape = plan.shape
    assert shape.sweep[0].rwmixread == 40
    for j in (shape.prewrite,) + shape.precondition:
        extra = dict(j.extra)
        assert j.rw == "randwrite" and extra["bssplit"] == BSSPLIT and extra["random_distribution"] == ZONED
    plan2, calls, _ = run_rounds([1.0] * 5, test_type="cbw")
    capture_jobs = plan2.shape.captures
    assert capture_jobs is not None
    (pre_max, cap_max) = calls[-1][0][:2]
    assert pre_max.startswith("pre-max-jedec-0-100-") and cap_max.startswith("cap-max-jedec-40-60-")
    assert pre_max.rsplit("-", 2)[1:] == cap_max.rsplit("-", 2)[1:]  # the point's own TC/QD


def test_the_fill_floor_counts_only_the_tests_own_writes_after_the_wipc():
    from tkperf.kit.longrounds import FillFloor, written_by_the_test
    from tkperf.model.results import WipcRecord

    _, _, test = run_rounds([1.0] * 5)
    own = written_by_the_test(test)
    # every fake workload writes 64 MiB: 5 preconditioning rounds + 5 sweep rounds of 5 jobs + 6 capture jobs
    assert own == (5 + 5 * 5 + 6) * 64 * MiB
    test.wipc = WipcRecord(2, 128 * 1024, 32, 1, 10 * own, 1.0, 1.0)  # a WIPC of ten fills does not count
    assert not FillFloor(own + 1)(test, 5).steady
    assert FillFloor(own)(test, 5).steady


def test_sweep_order_tc_outer_qd_inner_both_high_to_low():
    from tkperf.pts.sweep.plan import sweep_order

    assert sweep_order((1, 2, 32), (1, 8, 32)) == [(32, 32), (32, 8), (32, 1), (2, 32), (2, 8), (2, 1),
                                                    (1, 32), (1, 8), (1, 1)]
    plan = plan_of(quick=False)
    assert [j.name for j in plan.shape.sweep[:8]] == [f"rnd-8k-65-35-tc32-qd{q}" for q in (32, 16, 8, 6, 4, 2, 1)] + [
        "rnd-8k-65-35-tc16-qd32"]


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_dry_run_names_the_workload_dependent_preconditioning(test, tmp_path, capsys):
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", "20g", "--dry-run", "--jobs", "--tests", test]) == 0
    out = capsys.readouterr().out
    assert "# workload dependent preconditioning: rounds of the first 2 job(s) below" in out
    assert f"[wdpc-{'rnd-8k' if test == 'dirth' else 'jedec'}-0-100-tc32-qd32]" in out
    if test == "dirth":  # the default stimulus, RND 8KiB 65:35 (issue 55 item 7): every sweep point
        points = re.findall(r"^\[rnd-8k-65-35-tc\d+-qd\d+\]\nstonewall\nrw=randrw\nbs=8k\n(?:.*\n){2}rwmixread=65$",
                            out, re.M)
        assert len(points) == 49 and "rnd-4k" not in out
    assert out.index("[wdpc-") < out.index("[pre-")
