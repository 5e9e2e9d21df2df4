"""One definition of a steady-state point of a test tracked in 30-minute
stretches (issue 55 item 5): the IOPS of the LAST one-minute test period of
each stretch (SNIA SSSI, "SSD Performance - A Primer" (2013), WSAT: "5
points separated by 30 minutes"; the PTS 2.0 implementation,
Alan-ADATA/SSS-PTS-TEST, tracks the last one-minute test of each WSAT and
HIR round).  WSAT's spaced points, HIR's rounds, DIRTH/CBW's workload
dependent preconditioning and the steady-sweep rounds all take it; a round
shorter than a minute is measured whole; results from before say which
earlier definition their points follow.

Pure Python: made-up intervals and made-up fio results, no device."""
from __future__ import annotations

from types import SimpleNamespace
from typing import List

import pytest

from tkperf.fio.jobs import FioJob
from tkperf.kit import longrounds, options
from tkperf.kit.composite import WDPC_SERIES, wdpc_verdict
from tkperf.kit.progress import Progress
from tkperf.kit.registry import get
from tkperf.kit.shapes import Stream
from tkperf.model.results import IoStats, TestRun, Workload
from tkperf.model.steadystate import spaced_steady
from tkperf.pts.sweep.header import wdpc_point_words
from tkperf.testtypes.hir import REST_JOB, STEADY_JOB
from tkperf.testtypes.hir.view import round1_words
from tkperf.testtypes.writesat import view as wsat_view

MiB = 1024 * 1024
JOB = FioJob(name="w", rw="randwrite", bs=4096, runtime=3600)


def plan_of(test: str, quick: bool = False, **given):
    (plan, *_) = get(test).plan(options.build({"tests": (test,), **given}, quick=quick), 256 * MiB)
    return plan


# --- the point of spaced intervals (WSAT) ---------------------------------------------------

def test_a_point_is_the_last_intervals_of_its_block_not_the_block_mean():
    values = [float(v) for v in range(1, 31)]  # 30 intervals, 6 a point
    last = spaced_steady(values, 6, 5, 1)
    assert last.rounds == (6, 12, 18, 24, 30) and last.values == (6.0, 12.0, 18.0, 24.0, 30.0)
    two = spaced_steady(values, 6, 5, 2)
    assert two.values == (5.5, 11.5, 17.5, 23.5, 29.5)
    # 0 (and more than a block) is the earlier definition: the mean of the whole block
    assert spaced_steady(values, 6, 5, 0).values == (3.5, 9.5, 15.5, 21.5, 27.5)
    assert spaced_steady(values, 6, 5, 99).values == spaced_steady(values, 6, 5).values


def test_last_minute_points_and_block_means_can_disagree():
    # every 30-interval stretch drifts down from 1,300 to 700: block means are flat, last minutes fall
    stretch = [1300.0 - 20.0 * i for i in range(30)]
    falling = [v * f for f in (1.0, 0.9, 0.8, 0.7, 0.6) for v in stretch]
    assert not spaced_steady(falling, 30, 5, 1).steady
    flat = stretch * 5
    assert spaced_steady(flat, 30, 5).steady and spaced_steady(flat, 30, 5, 1).values == (720.0,) * 5


def test_a_stream_point_holds_at_least_a_minute_of_whole_intervals_within_its_spacing():
    assert Stream(JOB, 60, steady_spacing_s=1800, point_s=60).point_intervals == 1
    assert Stream(JOB, 7, steady_spacing_s=1800, point_s=60).point_intervals == 9  # 63 s
    assert Stream(JOB, 120, steady_spacing_s=1800, point_s=60).point_intervals == 1  # one longer interval
    assert Stream(JOB, 1, steady_spacing_s=3, point_s=3).point_intervals == 3  # --quick: the whole spacing
    assert Stream(JOB, 60, steady_spacing_s=1800).point_intervals == 0  # the earlier definition
    s = Stream(JOB, 1, steady_spacing_s=10, point_s=2)
    values = [100.0] * 8 + [50.0, 50.0]  # the block's mean is 90, its last 2 s 50
    assert s.verdict(values * 5, 5).values == (50.0,) * 5
    assert s.point_words() == ", each the IOPS of its last 2 s (2 intervals)"


def test_wsat_plan_stores_the_definition():
    plan = plan_of("wsat", wsat_steady=True)
    assert plan.params["steady_point"] == "last-minute" and plan.params["steady_point_s"] == "60"
    assert plan.shape.point_intervals == 1
    plan = plan_of("wsat", wsat_steady=True, wsat_interval=7)
    assert plan.params["steady_point_s"] == "63"
    assert plan_of("wsat", quick=True).params["steady_point_s"] == "1"  # 1 s spacing: the whole point


def _test(kind: str, params) -> TestRun:
    return TestRun(type=kind, key=kind, tracking_workload="w", tracking_metric="write.iops", tracking_label="IOPS",
                   params=dict(params))


def _wsat(params) -> TestRun:
    return _test("wsat", {"interval": "60", "steady_spacing": "1800", **params})


def test_wsat_words_name_the_definition_and_an_older_results_own():
    new = _wsat({"steady_point": "last-minute", "steady_point_s": "60"})
    words = wsat_view.steady_rule(new, 5)
    assert words.startswith("20/10 on 5 points 30.0 min apart, each the IOPS of the last minute before it")
    assert "SNIA SSSI" in words and "Alan-ADATA/SSS-PTS-TEST" in words and "last minute of each 30-minute" in words
    old = _wsat({})
    assert wsat_view.steady_rule(old, 5) == (
        "20/10 on 5 points 30.0 min apart, each the mean IOPS of the intervals it ends (this result's earlier "
        "definition; tkperf now takes each point's last minute)")
    steady = spaced_steady([1.0] * 300, 30, 5)
    assert wsat_view.window_start(new, steady) == 180 and wsat_view.window_start(old, steady) == 151


# --- the rounds of HIR, DIRTH and CBW ------------------------------------------------------

def test_a_round_is_its_rest_then_its_measured_last_minute():
    def make(runtime, name):
        return FioJob(name=name, rw="randwrite", bs=4096, runtime=runtime)

    rest, last = longrounds.split_round(make, 1800, "m", "r")
    assert (rest.name, rest.runtime, last.name, last.runtime) == ("r", 1740, "m", 60)
    assert [(j.name, j.runtime) for j in longrounds.split_round(make, 60, "m", "r")] == [("m", 60)]
    assert [(j.name, j.runtime) for j in longrounds.split_round(make, 1, "m", "r")] == [("m", 1)]  # --quick


def test_hir_rounds_track_their_last_minute():
    plan = plan_of("hir")
    rest, last = plan.shape.rounds
    assert (rest.name, rest.runtime, last.name, last.runtime) == (REST_JOB, 1740, STEADY_JOB, 60)
    assert plan.tracking.workload == STEADY_JOB and (rest.iodepth, rest.numjobs) == (last.iodepth, last.numjobs)
    assert plan.params["steady_point"] == "last-minute" and plan.params["steady_point_s"] == "60"
    quick = plan_of("hir", quick=True)
    assert [j.runtime for j in quick.shape.rounds] == [1] and quick.params["steady_point_s"] == "1"


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_preconditioning_and_steady_sweep_rounds_track_their_last_minute(test):
    pts20 = plan_of(test)
    rest, last = pts20.shape.precondition
    assert rest.name.startswith("wdpc-rest-") and (rest.runtime, last.runtime) == (1740, 60)
    assert pts20.params["wdpc_tracked_s"] == "60" and pts20.params["steady_point"] == "last-minute"
    short = plan_of(test, **{f"{test}_structure": "steady-sweep"})
    rest, last = short.shape.steady
    assert (rest.runtime, last.runtime) == (1740, 60) and short.tracking.workload == last.name
    assert rest.name.startswith("ss-rest-") and short.params["steady_point_s"] == "60"


def _workload(name: str, iops: float) -> Workload:
    return Workload(name, "randwrite", 4096, 0, 1, 1, 1000,
                    write=IoStats(iops=iops, ios=int(iops), io_bytes=int(iops) * 4096, bw_bytes=iops * 4096,
                                  lat_mean_us=100.0))


def test_the_preconditioning_series_holds_each_rounds_last_job(monkeypatch):
    """fio's stand-in gives every round's rest 9,000 IOPS and its measured period the next figure of
    ``last``: the series and the verdict hold the latter."""
    monkeypatch.setattr(longrounds, "POINT_S", 1)  # a measured second, so that a 3 s round has a rest
    plan = plan_of("dirth", quick=False, dirth_wdpc_round=3)  # 3 s rounds: 2 s rest, 1 s measured
    assert [j.runtime for j in plan.shape.precondition] == [2, 1]
    last = [5000.0, 4000.0, 3000.0, 3000.0, 3000.0, 3000.0, 3000.0]
    calls: List[List[str]] = []

    def run(jobs, what, timeout=None, histograms=False):
        calls.append([j.name for j in jobs])
        return [_workload(jobs[0].name, 9000.0), _workload(jobs[1].name, last[len(calls) - 1])], 3.0

    from tkperf.kit.composite import _precondition

    ctx = SimpleNamespace(fio=SimpleNamespace(run=run), opts=SimpleNamespace(max_rounds=7, window=5),
                          progress=Progress(), phase="", save=lambda: None, event=lambda *a: None)
    test = _test("dirth", plan.params)
    _precondition(ctx, plan, test, plan.shape.precondition)
    assert test.series[WDPC_SERIES].column("iops").tolist() == last
    v = wdpc_verdict(test, 5)
    assert v.steady and v.rounds == (3, 4, 5, 6, 7) and calls[0][0].startswith("wdpc-rest-")


def test_headers_name_the_definition_and_an_older_results_own():
    new = {"round_s": "1800", "steady_point": "last-minute", "steady_point_s": "60", "wdpc_tracked_s": "60"}
    words = longrounds.point_words(new, "the mean IOPS of the whole round")
    assert words.startswith("the IOPS of the last one-minute test period of each round; steady state on the last "
                            "minute of each 30-minute round (SNIA SSSI")
    assert wdpc_point_words(new) == words + " (the PTS 2.0 implementation tracks the first minute of these rounds)"
    short = longrounds.point_words({**new, "steady_point_s": "1"}, "x")
    assert short.startswith("the IOPS of the last 1 s of each round (shorter than a minute here, so the point is "
                            "the whole round)")
    assert wdpc_point_words({"wdpc_tracked_s": "60"}) == (
        "the IOPS of its first 60 s, as the PTS 2.0 implementation tracks it (this result's earlier definition; "
        "tkperf now tracks the last minute of each round)")
    test = _test("hir", {"round_s": "1800"})
    fields = dict(longrounds.header_fields(test.params, test))
    assert fields["Steady-state points"].startswith("the mean IOPS of the whole round (this result's earlier")
    assert round1_words(test).startswith("the mean of a whole steady-state round (30 min here)")
    test.params.update(steady_point="last-minute", steady_point_s="60")
    assert round1_words(test).startswith("the last minute of the first steady-state round (30 min here), not FOB")


def test_show_says_how_each_test_took_its_points():
    import os

    from tkperf import store
    from tkperf.report import summary

    golden = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "golden", "inputs")
    hir = store.load(os.path.join(golden, "hir.xml"))  # recorded before the one-minute points
    assert "steady-state points: the mean IOPS of the whole round (this result's earlier definition)" in [
        ln.strip() for ln in summary.lines(hir)]
    assert summary.as_dict(hir)["tests"][0]["steady_points"] == "whole-round-mean"
    dirth = store.load(os.path.join(golden, "dirth.xml"))  # PTS 2.0 structure: its preconditioning's first minute
    assert summary.as_dict(dirth)["tests"][0]["steady_points"] == "first-minute"
    lat = store.load(os.path.join(golden, "..", "..", "..", "..", "examples", "example-ssd.xml"))
    assert all("steady_points" not in t for t in summary.as_dict(lat)["tests"])  # its WSAT: no steady stop
    assert longrounds.stored_definition({"steady_spacing": "1800", "steady_stop": "true"})[0] == "block-mean"
    hir.tests[0].params.update(steady_point="last-minute", steady_point_s="60")
    assert summary.as_dict(hir)["tests"][0]["steady_points"] == "last-minute"
    assert any(ln.endswith("steady-state points: the IOPS of the last minute of each 30-minute round or stretch "
                           "(SNIA Primer; PTS 2.0 implementation)") for ln in summary.lines(hir))
