"""A replay's verdict leaves out the steps its capture lost trace events in
(issue 57 item 3): their captured figures miss the I/Os whose events were
lost, so neither a steps replay's step verdicts nor an exact replay's (per
step and whole) nor the overall figures use them, and each says so; and an
exact replay's per-step traced figures as stored, read back and judged."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rwsw_captures
from tkperf.model.results import IoStats, Round, TestRun, Workload
from tkperf.rwsw import model, replaytrace
from tkperf.testtypes.realworld import blockstats, exact, exactlog
from tkperf.testtypes.realworld.delivered import overall, step_verdicts
from tkperf.testtypes.realworld.replay import ReplayTest, exact_verdicts

NOT_JUDGED = "step 2: not judged, the capture lost events in it (its captured figures miss the I/Os whose " \
             "events were lost)"


def _traced(data: dict, index: int, ios: int, qd: float, mean: float, p99: float) -> None:
    blockstats.store_traced(data, index, blockstats.Traced(ios=ios, busy_us=int(qd * 1e6), lat_mean_us=mean,
                                                           lat_p99_us=p99, lat_max_us=p99))


def _steps_test(touched: bool) -> TestRun:
    """Two captured steps of 1 s at 100 IOPS, QD 0.1 and 1,000 µs; the replay of step 1 like them, of step 2
    at 20x the queue depth and response time and half the rate (as a capture's lost events would make it)."""
    t = TestRun("replay", "replay", "", "", "")
    t.params.update({"intensity": "captured", "steps": "2"})
    for n, (ios, qd, mean) in enumerate(((100, 0.1, 1000.0), (50, 2.0, 20_000.0)), 1):
        t.params.update({f"step.{n}.qd": "0.1", f"step.{n}.iops": "100.0", f"step.{n}.kept_iops": "100.0",
                         f"step.{n}.lat_mean_us": "1000.0", f"step.{n}.lat_p99_us": "3000.0",
                         f"step.{n}.flushes": "40", f"stream.st{n}-s0": "RND 4KiB read",
                         f"share.st{n}-s0": "1.0"})
        t.rounds.append(Round(index=n, started="", wall_s=1.0, fio_s=1.0, workloads=(
            Workload(f"st{n}-s0", "randread", 4096, 100, 1, 1, 1000,
                     read=IoStats(iops=ios, ios=ios, io_bytes=ios * 4096, bw_bytes=ios * 4096.0,
                                  lat_mean_us=mean)),)))
        t.data[f"phase.{n}"] = f"step {n}"
        _traced(t.data, n, ios, qd, mean, 3 * mean)
    if touched:
        t.params["step.2.touched_by_loss"] = "true"
    return t


def test_a_step_the_capture_lost_events_in_is_not_judged_and_is_said_so():
    lossy = step_verdicts(_steps_test(True), 0.1, 0.03)
    assert NOT_JUDGED in lossy
    assert not [v for v in lossy if v.startswith("step 2:") and v != NOT_JUDGED], lossy
    # the same replay of a capture that lost nothing: step 2's rate, flushes and figures are judged
    whole = step_verdicts(_steps_test(False), 0.1, 0.03)
    assert NOT_JUDGED not in whole
    assert any(v.startswith("step 2: the drive served 50.0 IOPS against the captured 100.0") for v in whole), whole
    assert any(v.startswith("step 2: queue depth 2.000 against the captured 0.100 (20.00x)") for v in whole), whole


def test_the_overall_figures_leave_a_touched_step_out_and_the_verdict_names_it():
    figures = overall(_steps_test(True))
    assert figures is not None and figures.left_out == (2,)
    assert figures.iops == pytest.approx(100.0) and figures.lat_mean_us == pytest.approx(1000.0)
    kept = overall(_steps_test(False))
    assert kept is not None and kept.left_out == () and kept.iops == pytest.approx(75.0)
    kind = ReplayTest()
    words = kind.pts.result_deviations(kind, _steps_test(True), {}, None, 1 << 30)
    assert f"replay: {NOT_JUDGED}" in words
    assert "replay: step 2 left out of the replay's overall figures: the capture lost events in them" in words


def test_a_captures_loss_marks_reach_the_replays_params():
    cap = rwsw_captures.capture(step_s=2.0)
    lossy = dataclasses.replace(cap.steps[1], seen=model.Seen(lat=None, read=None, write=None, flushes=0, fua=0,
                                                              discards=0, discard_bytes=0, lost_events=0,
                                                              loss_touched=True))
    cap = dataclasses.replace(cap, steps=(cap.steps[0], lossy) + cap.steps[2:])
    params = exactlog.captured_params(cap)
    assert params["step.2.touched_by_loss"] == "true" and "step.1.touched_by_loss" not in params


# --- the exact replay, per captured step -----------------------------------------------------------

def _exact_test(steps, touched=()) -> TestRun:
    t = TestRun("replay", "replay", "", "", "")
    t.params.update({"capture_qd": "1.0", "capture_iops": "1000.0", "capture_lat_mean_us": "1000.0",
                     "capture_lat_p99_us": "3000.0"})
    for n in range(1, len(steps) + 1):
        t.params.update({f"step.{n}.qd": "1.0", f"step.{n}.lat_mean_us": "1000.0", f"step.{n}.lat_p99_us": "3000.0"})
    for n in touched:
        t.params[f"step.{n}.touched_by_loss"] = "true"
    t.rounds.append(Round(index=1, started="", wall_s=3.3, fio_s=3.2, workloads=(
        Workload("exact-replay", "randrw", 4096, 50, 1, 8, 3200,
                 read=IoStats(iops=1000.0, ios=3000, io_bytes=3000 * 4096, bw_bytes=4096e3, lat_mean_us=900.0)),)))
    t.data.update({"phase.1": "exact", "exact.length_us": "3000000", "exact.timing": "measured",
                   "exact.lag_max_us": "1000", "exact.lag_p99_us": "900", "exact.zero_us": "200000"})
    _traced(t.data, 1, 3000, 1.0, 1000.0, 3000.0)
    blockstats.store_steps(t.data, 1, blockstats.Traced(steps=tuple(
        replaytrace.StepTraced(ios=1000, qd=qd, lat_mean_us=mean, lat_p99_us=3000.0) for qd, mean in steps)))
    return t


def test_an_exact_replays_steps_are_stored_read_back_and_judged_each_on_its_own():
    t = _exact_test([(1.0, 1000.0), (3.0, 3000.0), (1.1, 1100.0)])
    assert [n for n, got in exact.step_figures(t)] == [1, 2, 3]
    assert t.data["trace.1.step.2.qd"] == "3.0" and t.data["trace.1.step.2.ios"] == "1000"
    words = exact_verdicts(t)
    assert [w for w in words if w.startswith("step ")] == [
        "step 2: the exact replay's queue depth 3.000 against the captured 1.000 (3.00x), mean response time "
        "3,000 µs against the captured 1,000 µs (3.00x) (block tracepoints, data I/Os issue to completion, as the "
        "capture measures them)"]
    # the overall figures run from the capture's time 0 (fio's runtime less its measured lead): 3,000 I/Os in 3 s
    figures = overall(t)
    assert figures is not None and figures.iops == pytest.approx(1000.0)
    # a forged per-step figure is not read (and not judged)
    t.data["trace.1.step.2.qd"] = "nan"
    assert exact.step_figures(t)[1] == (2, None)
    assert not [w for w in exact_verdicts(t) if w.startswith("step 2")]


def test_an_exact_replay_of_a_lossy_capture_judges_only_the_steps_that_lost_nothing():
    words = exact_verdicts(_exact_test([(1.0, 1000.0), (3.0, 3000.0)], touched=(2,)))
    assert NOT_JUDGED in words
    assert "the capture lost events in step 2: its whole queue depth and response times miss them, and are not " \
           "judged against the exact replay's (the other steps are, each on its own)" in words
    assert not [w for w in words if w.startswith("step 2: the exact replay's")]


def test_the_recordings_time_0_is_the_first_ios_earliest_against_their_captured_times():
    stamps = [10_000, 20_000, 30_000, 4_000_000]
    # the target issued them 5.3 s into the recording, the second 2 ms late, the last 0.5 s late
    issued = np.array([5.3 + 0.010, 5.3 + 0.022, 5.3 + 0.030, 5.3 + 4.5])
    assert replaytrace.zero_at(issued, stamps) == pytest.approx(5.3)
    assert replaytrace.zero_at(np.zeros(0), stamps) is None


def test_the_report_shows_the_exact_replays_steps_and_marks_a_touched_one():
    from tkperf.testtypes.realworld import replayview

    (tab,) = replayview.exact_steps(_exact_test([(1.0, 1000.0), (3.0, 3000.0)], touched=(2,)))
    assert tab.rows == (("1", "1,000", "1.000 / 1.000", "1,000.0 / 1,000.0", "3,000.0 / 3,000.0"),
                        ("2 !", "1,000", "1.000 / 3.000", "1,000.0 / 3,000.0", "3,000.0 / 3,000.0"))
    assert "!: the capture lost trace events in this step" in tab.title
    steps_table = [b for b in replayview.step_blocks(_steps_test(True)) if getattr(b, "rows", None)][0]
    assert [r[0] for r in steps_table.rows] == ["1", "2 !"] and "(!: the capture lost" in steps_table.title
