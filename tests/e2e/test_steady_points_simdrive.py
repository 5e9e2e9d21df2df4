"""Issue 55 item 5 on the emulated SSD (``tkperf simdrive``): a steady-state
point of a test tracked in 30-minute stretches is the IOPS of the last
one-minute test period of each stretch, fio's own count of that period.

To keep the runs to seconds the measured period is one second here
(``tkperf.kit.longrounds.POINT_S``, read when the plan is made, as the
one-minute period is in a real run): WSAT's points 2 s apart each take the
last 1 s interval, and HIR's 2 s rounds are a 1 s job and a measured 1 s
job in one fio process.  What the stored result holds is checked against
fio's own counts in it."""
from __future__ import annotations

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.kit import longrounds
from tkperf.model.steadystate import spaced_steady
from tkperf.testtypes.hir import REST_JOB, STEADY_JOB
from tkperf.testtypes.hir.analysis import baseline


@pytest.fixture
def second_points(monkeypatch):
    monkeypatch.setattr(longrounds, "POINT_S", 1)


@needs_fio
def test_wsat_points_are_the_last_measured_interval_of_each_stretch(simdrive, tmp_path, second_points):
    drive = simdrive(capacity="32M")
    out = tmp_path / "out"
    rc = main(["ssd", "run", drive.path, "--tests", "wsat", "--name", "w", "--outdir", str(out), "--yes", "--quiet",
               "--no-report", "--write-cache", "keep", "--wsat-interval", "1", "--wsat-time", "10",
               "--wsat-tgbw", "40x", "--wsat-steady", "--wsat-steady-spacing", "2s", "--wsat-capture", "0",
               "--numjobs", "1",
               "--iodepth", "8"])
    assert rc in (0, 1), rc
    (t,) = store.load(str(out / "w.xml")).tests
    assert t.params["steady_point"] == "last-minute" and t.params["steady_point_s"] == "1"
    iops = t.series[next(iter(t.series))].column("iops")  # fio's own counts per interval
    assert len(iops) >= 10
    s = t.steady
    assert s is not None and s.rounds and all(r % 2 == 0 for r in s.rounds)
    # each point is the stored IOPS of the interval that ends it, not its 2 s stretch's mean
    assert s.values == tuple(float(iops[r - 1]) for r in s.rounds)
    assert s == spaced_steady(iops, 2, 5, 1)
    means = spaced_steady(iops, 2, 5)
    assert means.values == tuple(float(iops[r - 2:r].mean()) for r in s.rounds)


@needs_fio
def test_hir_rounds_track_fios_count_of_their_last_measured_period(simdrive, tmp_path, second_points):
    drive = simdrive(capacity="32M")
    out = tmp_path / "out"
    rc = main(["ssd", "run", drive.path, "--tests", "hir", "--name", "h", "--outdir", str(out), "--yes", "--quiet",
               "--no-report", "--quick", "--write-cache", "keep", "--hir-round", "2", "--max-rounds", "5",
               "--hir-qd", "8", "--hir-idle", "1", "--hir-cycles", "1", "--hir-return", "1"])
    assert rc in (0, 1), rc
    (t,) = store.load(str(out / "h.xml")).tests
    assert t.params["steady_point"] == "last-minute" and t.params["steady_point_s"] == "1"
    rounds = [r for r in t.rounds if r.workload(STEADY_JOB) is not None]
    assert len(rounds) == 5
    for r in rounds:  # one fio process: the rest of the round, then the measured period
        assert [w.name for w in r.workloads] == [REST_JOB, STEADY_JOB]
        rest, measured = r.workloads
        assert measured.write.ios > 0 and rest.write.ios > 0  # the planned lengths: tests/unit/test_steady_points.py
    tracked = [v for _, v in t.tracking_values()]
    assert tracked == [r.workload(STEADY_JOB).write.iops for r in rounds]
    assert t.steady is not None and t.steady.values == tuple(tracked[-5:])
    assert baseline(t) == pytest.approx(sum(tracked[-5:]) / 5)
