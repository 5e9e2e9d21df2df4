"""IntervalCutter on fio 3.33's own --status-interval reports (recorded from
real runs: tests/data/fio-3.33-status-interval*.json)."""
import copy

import pytest

from conftest import data_path
from tkperf.errors import FioError
from tkperf.fio.intervals import Cut, IntervalCutter
from tkperf.fio.output import cumulative_write, json_objects


def reports(name):
    with open(data_path(name)) as fh:
        return [obj for obj, _ in json_objects(fh.read())]


def totals(report, job):
    return cumulative_write(next(j for j in report["jobs"] if j["jobname"] == job))


@pytest.mark.parametrize("name, job", [("fio-3.33-status-interval.json", "wsat"),
                                       ("fio-3.33-status-interval-nj2.json", "w")])
def test_cuts_of_recorded_reports(name, job):
    reps = reports(name)
    assert len(reps) == 4
    tot = [totals(r, job) for r in reps]
    # fio's run times: 0.89, 1.89, 2.9 s, then its short final report (3.0 s)
    assert [t["runtime_ms"] for t in tot][-1] - tot[2]["runtime_ms"] < 500
    cutter = IntervalCutter(job, 1, start=100.0)
    cuts = [cutter.feed(r, at=100.0 + 1.01 * k) for k, r in enumerate(reps, 1)]
    assert all(isinstance(c, Cut) for c in cuts)
    assert [c.index for c in cuts] == [1, 2, 3, 3]
    assert [c.replaces for c in cuts] == [False, False, False, True]
    bounds = [dict(runtime_ms=0.0, ios=0.0, io_bytes=0.0, lat_sum=0.0)] + tot
    # the merged interval 3 is measured from the end of interval 2 to the last report
    pairs = [(0, 1), (1, 2), (2, 3), (2, 4)]
    for c, (a, b) in zip(cuts, pairs):
        d_ms = bounds[b]["runtime_ms"] - bounds[a]["runtime_ms"]
        d_ios = bounds[b]["ios"] - bounds[a]["ios"]
        assert c.fio_s == pytest.approx(d_ms / 1000.0)
        assert c.ios == int(d_ios)
        assert c.io_bytes == int(bounds[b]["io_bytes"] - bounds[a]["io_bytes"])
        assert c.iops == pytest.approx(c.ios * 1000.0 / d_ms)
        assert c.bw_bytes == pytest.approx(c.io_bytes * 1000.0 / d_ms)
        assert c.lat_mean_us == pytest.approx((bounds[b]["lat_sum"] - bounds[a]["lat_sum"]) / d_ios)
        assert c.written_total == int(bounds[b]["io_bytes"])
        assert c.wall_s == pytest.approx(1.01 * (b - a))
    assert cuts[-1].fio_s == pytest.approx((tot[3]["runtime_ms"] - tot[1]["runtime_ms"]) / 1000.0)
    assert cutter.count == 3
    # the intervals tile the stream: the rows that stand add up to everything written
    assert cuts[0].io_bytes + cuts[1].io_bytes + cuts[3].io_bytes == cuts[3].written_total


def test_reports_without_news_give_nothing():
    reps = reports("fio-3.33-status-interval.json")
    cutter = IntervalCutter("wsat", 1, start=0.0)
    assert cutter.feed({"jobs": []}, 0.5) is None
    assert cutter.feed({"jobs": [{"jobname": "other"}]}, 0.5) is None
    assert cutter.feed(reps[0], 1.0).index == 1
    assert cutter.feed(reps[0], 1.5) is None  # no new run time
    assert cutter.feed(reps[1], 2.0).index == 2


def test_a_long_interval_is_its_own():
    reps = reports("fio-3.33-status-interval.json")
    cutter = IntervalCutter("wsat", 60, start=0.0)  # every report is < 30 s after the one before
    cuts = [cutter.feed(r, float(k)) for k, r in enumerate(reps, 1)]
    assert [(c.index, c.replaces) for c in cuts] == [(1, False), (1, True), (1, True), (1, True)]
    assert cuts[-1].written_total == cuts[-1].io_bytes


def test_clones_reported_apart_are_summed():
    rep = reports("fio-3.33-status-interval.json")[1]
    two = {"jobs": [rep["jobs"][0], copy.deepcopy(rep["jobs"][0])]}
    one = IntervalCutter("wsat", 1, start=0.0).feed(rep, 1.0)
    both = IntervalCutter("wsat", 1, start=0.0).feed(two, 1.0)
    assert both.ios == 2 * one.ios and both.fio_s == one.fio_s
    assert both.lat_mean_us == pytest.approx(one.lat_mean_us)


def test_an_error_in_the_job_raises():
    rep = copy.deepcopy(reports("fio-3.33-status-interval.json")[1])
    rep["jobs"][0]["error"] = 5
    cutter = IntervalCutter("wsat", 1, start=0.0)
    with pytest.raises(FioError, match=r"I/O error 5 \(Input/output error\) in wsat"):
        cutter.feed(rep, 1.0)


def test_a_tail_whose_counts_and_latency_samples_part_is_never_a_negative_latency():
    """fio's report as it is stopped can count I/Os (``total_ios``) apart from
    its latency samples (``N``); mean x total_ios then shrinks from one report
    to the next (seen on the emulated SSD: -685,800 us in an XSR interval).
    The interval's mean then comes from the samples."""
    reps = reports("fio-3.33-status-interval.json")
    base = next(j for j in reps[1]["jobs"] if j["jobname"] == "wsat")["write"]  # the tail merges into 3
    n_base = base["lat_ns"].get("N", base["total_ios"])
    last = copy.deepcopy(reps[-1])
    wr = next(j for j in last["jobs"] if j["jobname"] == "wsat")["write"]
    wr["total_ios"] = int(base["total_ios"] * 1.05)   # 5% more I/Os counted ...
    wr["io_bytes"] = wr["total_ios"] * 4096
    wr["lat_ns"]["mean"] = base["lat_ns"]["mean"] * 0.9  # ... at a 10% lower mean: mean x total_ios shrank
    wr["lat_ns"]["N"] = int(n_base * 1.2)              # while the samples grew by a fifth
    cutter = IntervalCutter("wsat", 1, start=100.0)
    cuts = [cutter.feed(r, at=100.0 + 1.01 * k) for k, r in enumerate(reps[:-1] + [last], 1)]
    tail = cuts[-1]
    assert tail is not None and tail.replaces and tail.lat_mean_us > 0
    want = (wr["lat_ns"]["mean"] * wr["lat_ns"]["N"] - base["lat_ns"]["mean"] * n_base) / \
        (wr["lat_ns"]["N"] - n_base) / 1000.0
    assert tail.lat_mean_us == pytest.approx(want)
