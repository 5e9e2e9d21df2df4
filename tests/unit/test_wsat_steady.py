"""WSAT's stop rules as the PTS has them: by default the time or TGBW limit
only; with ``--wsat-steady`` also steady state, judged on points
``--wsat-steady-spacing`` apart (each the mean IOPS of its block of
intervals), never on the last adjacent intervals.

The stream is driven here by made-up fio status reports (no fio, no
device); the end-to-end runs are in test_run_e2e.py.
"""
from __future__ import annotations

from typing import Callable, List, Sequence

import pytest

from tkperf import store
from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.kit import options
from tkperf.kit.progress import Progress
from tkperf.kit.shapes import Stream, blank_test, spaced_steady
from tkperf.model.results import TestRun
from tkperf.testtypes.writesat import WORKLOAD, WriteSaturationTest
from tkperf.testtypes.writesat import view as wsat_view
from tkperf.testtypes.writesat.settings import WsatSettings

MiB = 1024 * 1024
CAPACITY = 256 * MiB
BLOCK = 4096

#: Flat for the last 8 intervals, but 10 intervals a point, the points fall.
FALLING_THEN_FLAT = [1000.0] * 10 + [800.0] * 10 + [600.0] * 10 + [400.0] * 10 + [300.0] * 2 + [200.0] * 8


def wsat_opts(**given) -> options.RunOptions:
    return options.build({"tests": ("wsat",), **given})


def wsat_plan(**given):
    (plan,) = WriteSaturationTest().plan(wsat_opts(**given), CAPACITY)
    return plan


# --- the spaced verdict ----------------------------------------------------------

def test_spaced_points_are_block_means_named_by_their_last_interval():
    values = [float(v) for v in range(1, 31)]  # 30 intervals, 3 a point
    s = spaced_steady(values, 3, 5)
    assert s.rounds == (18, 21, 24, 27, 30)
    assert s.values == (17.0, 20.0, 23.0, 26.0, 29.0)
    # The line is per interval: it passes through (30, 29) with slope 1.
    assert s.slope == pytest.approx(1.0) and s.intercept + 30 * s.slope == pytest.approx(29.0)
    assert s.slope_excursion == pytest.approx(12.0)  # over the window's 12 intervals
    assert not s.steady


def test_a_block_still_filling_is_no_point():
    s = spaced_steady([100.0] * 14, 3, 5)
    assert s.rounds == (3, 6, 9, 12) and not s.steady  # 4 whole blocks, window 5
    assert spaced_steady([100.0] * 15, 3, 5).steady


def test_steady_when_the_spaced_points_are():
    # Noisy intervals (+-30 % from one to the next) whose blocks of 10 agree.
    noisy = [1300.0 if i % 2 else 700.0 for i in range(50)]
    assert not spaced_steady(noisy, 1, 5).steady
    s = spaced_steady(noisy, 10, 5)
    assert s.steady and s.values == (1000.0,) * 5 and s.rounds == (10, 20, 30, 40, 50)


def test_not_steady_when_only_the_last_adjacent_intervals_are_flat():
    assert spaced_steady(FALLING_THEN_FLAT, 1, 5).steady  # the old rule would stop here
    s = spaced_steady(FALLING_THEN_FLAT, 10, 5)
    assert not s.steady and s.rounds == (10, 20, 30, 40, 50)
    assert s.values == (1000.0, 800.0, 600.0, 400.0, 220.0)


def test_one_interval_apart_is_the_plain_rule_over_intervals():
    values = [13705.0, 14639.0, 14747.0, 14678.0, 13927.0]
    s = spaced_steady([9000.0, 9000.0] + values, 1, 5)
    assert s.steady and s.rounds == (3, 4, 5, 6, 7) and s.values == tuple(values)


def test_spacing_needs_a_whole_interval():
    with pytest.raises(ValueError):
        spaced_steady([1.0], 0, 5)


# --- the stop rules ----------------------------------------------------------------

def stream(**kw) -> Stream:
    job = FioJob(name=WORKLOAD, rw="randwrite", bs=BLOCK, runtime=3600)
    return Stream(job, 1, **kw)


def test_no_steady_stop_by_default():
    s = stream(stop_bytes=10 * CAPACITY, steady_after_bytes=CAPACITY)
    steady = s.verdict([100.0] * 20, 5)
    assert steady.steady
    assert s.stop_reason(steady, 2 * CAPACITY, 5) == ""
    assert s.stop_reason(steady, 10 * CAPACITY, 5).startswith("TGBW reached")


def test_steady_stop_waits_for_a_drive_fill_and_names_its_rule():
    s = stream(steady_stop=True, steady_after_bytes=CAPACITY, steady_spacing_s=1)
    steady = s.verdict([100.0] * 5, 5)
    assert s.stop_reason(steady, CAPACITY - 1, 5) == ""
    assert s.stop_reason(steady, CAPACITY, 5) == "steady state (20/10 on 5 points 1 s apart)"


def test_spacing_rounds_to_whole_intervals():
    job = FioJob(name=WORKLOAD, rw="randwrite", bs=BLOCK, runtime=3600)
    assert Stream(job, 60, steady_spacing_s=1800).steady_every == 30
    assert Stream(job, 60, steady_spacing_s=1000).steady_every == 17
    assert Stream(job, 60, steady_spacing_s=10).steady_every == 1
    assert Stream(job, 60).steady_every == 1  # no spacing: adjacent intervals
    assert "30 min apart" in Stream(job, 60, steady_spacing_s=1800).steady_rule(5)


# --- the stream, fed made-up fio reports ---------------------------------------------

class FakeWriter:
    def __init__(self) -> None:
        self.rows: List[int] = []

    def append(self, series_id: str, index: int, row) -> None:
        self.rows.append(index)

    def sync(self) -> None:
        pass


class FakeFio:
    """Feeds one cumulative status report per made-up interval (1 s of run time each)."""

    live_intervals = True  # as fio on this host: reports as they are made

    def __init__(self, iops: Sequence[float]) -> None:
        self.iops = iops
        self.fed = 0

    def stream(self, job: FioJob, interval_s: int, what: str, on_report: Callable[[dict], bool],
               timeout: float, histograms: bool = False) -> None:
        ios = 0.0
        for i, value in enumerate(self.iops, 1):
            ios += value
            self.fed = i
            report = {"jobs": [{"jobname": job.name, "write": {
                "runtime": 1000 * i, "total_ios": ios, "io_bytes": ios * job.bs, "lat_ns": {"mean": 1e5}}}]}
            if on_report(report):
                return


class FakeRunner:
    def __init__(self, opts: options.RunOptions, iops: Sequence[float]) -> None:
        self.opts = opts
        self.fio = FakeFio(iops)
        self.writer = FakeWriter()
        self.progress = Progress()
        self.phase = ""
        self.saves = 0
        self.health_checks = 0

    def save(self) -> None:
        self.saves += 1

    def health_check(self) -> None:
        self.health_checks += 1


def run_stream(iops: Sequence[float], **given) -> TestRun:
    given.setdefault("wsat_capture", 0)  # the stream alone (the capture after it: test_wsat_capture.py)
    opts = wsat_opts(wsat_time=3600, wsat_interval=1, wsat_tgbw="1000", **given)
    (plan,) = WriteSaturationTest().plan(opts, CAPACITY)
    test = blank_test()
    test.tracking_metric = plan.tracking.metric
    test.params = dict(plan.params)
    plan.shape.run(FakeRunner(opts, iops), plan, test)
    return test


# 65536 IOPS of 4 KiB a second: one 256 MiB drive fill a second.
FLAT = [65536.0] * 40


def test_stream_runs_on_by_default():
    t = run_stream(FLAT)
    assert t.stop_reason == "time limit"  # the made-up fio ran out of reports, as at its runtime
    assert len(t.series["intervals"]) == len(FLAT)
    assert t.params["steady_stop"] == "false" and t.params["steady_spacing"] == "1800"
    assert t.steady is not None and not t.steady.rounds  # no 30-minute point in 40 s


def test_stream_with_wsat_steady_stops_on_spaced_points():
    t = run_stream(FLAT, wsat_steady=True, wsat_steady_spacing=4)
    assert t.stop_reason == "steady state (20/10 on 5 points 4 s apart)"
    assert len(t.series["intervals"]) == 20  # 5 points of 4 intervals
    assert t.steady.steady and t.steady.rounds == (4, 8, 12, 16, 20)
    assert t.params["steady_stop"] == "true" and t.params["steady_spacing"] == "4"


def test_stream_with_wsat_steady_goes_on_while_the_points_fall():
    falling = [v * 65.536 for v in FALLING_THEN_FLAT]
    t = run_stream(falling, wsat_steady=True, wsat_steady_spacing=10)
    assert t.stop_reason == "time limit" and len(t.series["intervals"]) == len(falling)
    assert not t.steady.steady and t.steady.rounds == (10, 20, 30, 40, 50)
    # Judged on adjacent 1-second intervals (the old rule) it stops long before.
    t1 = run_stream(falling, wsat_steady=True, wsat_steady_spacing=1)
    assert t1.stop_reason.startswith("steady state") and len(t1.series["intervals"]) < 20


# --- options, params and old files -----------------------------------------------------

def test_defaults_and_quick():
    o = wsat_opts()
    assert o.of(WsatSettings).steady is False and o.of(WsatSettings).steady_spacing == 1800
    q = options.build({"tests": ("wsat",)}, quick=True)
    assert q.of(WsatSettings).steady is False and q.of(WsatSettings).steady_spacing == 1


def test_plan_discloses_the_rule():
    plan = wsat_plan(wsat_steady=True, wsat_steady_spacing=1800)
    assert plan.shape.steady_stop and plan.shape.steady_every == 30
    assert plan.params["steady_stop"] == "true" and plan.params["steady_spacing"] == "1800"
    off = wsat_plan()
    assert not off.shape.steady_stop and off.params["steady_stop"] == "false"


@pytest.mark.parametrize("flags, want", [([], None), (["--wsat-steady"], True),
                                         (["--no-wsat-steady"], False)])
def test_cli_switches(flags, want):
    """``--no-wsat-steady`` still parses; it sets the default (False)."""
    from tkperf.cli import build_parser

    args = build_parser().parse_args(["ssd", "run", "/dev/null", "--tests", "wsat", *flags])
    assert args.wsat_steady is want
    assert args.wsat_steady_spacing is None
    assert build_parser().parse_args(["ssd", "run", "/dev/null", "--wsat-steady-spacing", "1s"]
                                     ).wsat_steady_spacing == "1s"


def test_spacing_option_is_checked():
    assert wsat_opts(wsat_steady_spacing=options.parse_duration("30m")).of(WsatSettings).steady_spacing == 1800
    with pytest.raises(UsageError, match="out of range"):
        wsat_opts(wsat_steady_spacing=0)


def test_old_result_options_still_load():
    # Written before --wsat-steady: wsat_steady=true was the old default
    # (it stopped at steady state), and there was no spacing.
    new = wsat_opts().to_dict()
    old = {k: v for k, v in new.items() if k != "wsat_steady_spacing"}
    old["wsat_steady"] = "true"
    o = options.RunOptions.from_dict(old)
    assert o.of(WsatSettings).steady is True and o.of(WsatSettings).steady_spacing == 1800
    assert options.RunOptions.from_dict(new) == wsat_opts()


def test_example_files_load_and_keep_their_words():
    # An example as tkperf wrote it before the spaced rule (format 1): it stopped at steady state.
    run = store.load("tests/data/format1/example-ssd.xml")
    assert options.RunOptions.from_dict(run.options).of(WsatSettings).steady is True
    t = run.test("wsat")
    assert "steady_spacing" not in t.params  # from before the spacing
    assert wsat_view.steady_rule(t, 5) == "20/10 over 5 intervals"
    assert wsat_view.window_start(t, t.steady) == t.steady.first_round
    assert wsat_view.stop_rules(t).endswith(", steady state")


def test_report_words_of_a_spaced_rule():
    t = run_stream(FLAT, wsat_steady=True, wsat_steady_spacing=4)
    words = wsat_view._steady_words(t, 5)
    assert words.startswith("20/10 on 5 points 4.0 s apart")
    assert words.endswith("reached in intervals 1-20")
    assert wsat_view.wsat_summary(t).tail_label == "steady-state window (intervals 1-20)"
    assert wsat_view.stop_rules(t) == "time 60.0 min, TGBW 1000, steady state (points 4.0 s apart)"
    assert wsat_view.stop_rules(run_stream(FLAT[:3])) == "time 60.0 min, TGBW 1000"
