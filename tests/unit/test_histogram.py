"""Response-time histograms: fio's json+ bins parsed, merged across jobs and
rounds, percentiles and the nines a sample supports, stored and read back."""
import json

import numpy as np
import pytest

from conftest import data_path
from tkperf import store
from tkperf.fio.output import parse_jobs
from tkperf.model import histogram as h
from tkperf.model.results import IoStats

RECORDED = "fio-3.33-jsonplus-randread-2jobs.json"


def recorded() -> dict:
    with open(data_path(RECORDED)) as fh:
        return json.load(fh)


def test_percentiles_from_bins_are_fios_own():
    for job in recorded()["jobs"]:
        lat = job["read"]["lat_ns"]
        bins = h.from_fio(lat["bins"])
        assert h.total(bins) == job["read"]["total_ios"]
        for p, ns in lat["percentile"].items():
            assert h.percentile_us(bins, float(p)) == pytest.approx(ns / 1000.0), p


def test_a_direction_without_io_has_no_bins():
    job = recorded()["jobs"][0]
    assert "bins" not in job["write"]["lat_ns"]  # what fio writes
    assert h.from_fio(job["write"]["lat_ns"].get("bins")) == ()


def test_two_jobs_merge_exactly():
    report = recorded()
    spec = {"x": dict(rw="randrw", bs=4096, rwmixread=100, numjobs=2, iodepth=1)}
    (w,) = parse_jobs(report, spec)
    jobs = [h.clamp(h.from_fio(j["read"]["lat_ns"]["bins"]), j["read"]["lat_ns"]["max"] / 1000.0)
            for j in report["jobs"]]
    assert w.read.bins == h.merge(*jobs)  # each job's top bin labelled with no more than its maximum
    assert h.total(w.read.bins) == w.read.ios == sum(j["read"]["total_ios"] for j in report["jobs"])
    assert w.write.bins == ()
    # the merged median lies between the two jobs' medians
    medians = sorted(h.percentile_us(b, 50) for b in jobs)
    assert medians[0] <= h.percentile_us(w.read.bins, 50) <= medians[1]


def test_known_answers():
    bins = ((1000, 90), (2000, 9), (3000, 1))
    assert h.percentile_us(bins, 50) == 1.0
    assert h.percentile_us(bins, 90) == 1.0
    assert h.percentile_us(bins, 90.5) == 2.0
    assert h.percentile_us(bins, 99) == 2.0
    assert h.percentile_us(bins, 99.5) == 3.0
    assert h.percentile_us(bins, 100) == 3.0
    x, y = h.confidence(bins)
    assert list(x) == [1.0, 2.0, 3.0] and np.allclose(y, [0.9, 0.99, 1.0])
    assert h.percentile_us((), 99) is None
    with pytest.raises(ValueError):
        h.percentile_us(bins, 0)


def test_rounds_merge_by_bin():
    a = ((1000, 5), (2000, 1))
    b = ((2000, 3), (4000, 2))
    assert h.merge(a, b) == ((1000, 5), (2000, 4), (4000, 2))
    assert h.merge(a, ()) == a


def test_nines_supported_by_the_io_count():
    assert not h.supported(99, "99") and h.supported(100, "99")
    assert not h.supported(9_999, "99.99") and h.supported(10_000, "99.99")
    assert not h.supported(999_999, "99.9999") and h.supported(1_000_000, "99.9999")
    assert h.most_supported(50) == "" and h.most_supported(250_000) == "99.999"
    rows = h.nines_rows(((1000, 8_990), (5000, 10)))  # 9,000 I/Os
    assert [(p, ok) for p, _, ok in rows] == [("99", True), ("99.9", True), ("99.99", False),
                                             ("99.999", False), ("99.9999", False)]
    assert rows[0][1] == 1.0 and rows[1][1] == 5.0


def test_text_form_round_trip_and_bad_text():
    bins = ((3696, 1), (3888, 2), (12255232, 7))
    assert h.from_text(h.to_text(bins)) == bins
    with pytest.raises(ValueError):
        h.from_text("3696-1")


def test_bins_survive_the_result_file(tmp_path):
    run = store.load(data_path("../../examples/example-ssd.xml"))
    lat = run.test("lat")
    bins = ((3696, 1), (3888, 2), (12255232, 7))
    w = lat.rounds[0].workloads[0]
    stats = IoStats(**{**w.write.__dict__, "bins": bins})
    lat.rounds[0] = lat.rounds[0].__class__(**{**lat.rounds[0].__dict__, "workloads": (
        w.__class__(**{**w.__dict__, "write": stats}),) + lat.rounds[0].workloads[1:]})
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    again = store.load(str(path))
    assert again.test("lat").rounds[0].workloads[0].write.bins == bins
    assert "<latency-bins unit=\"ns\">3696:1 3888:2 12255232:7</latency-bins>" in path.read_text()


# --- one percentile definition, never above the largest I/O (issue 35, items 3 and 4) -------------

def test_a_tie_on_a_bin_boundary_is_that_bin():
    """46,000 I/Os: 99.9% of them is exactly 45,954, reached at the 3,686.4 µs
    bin.  fio's float comparison (99.9 / 100 x 46000 = 45954.00000000001)
    names the bin above; tkperf's one definition names this one."""
    bins = ((1000, 45_900), (3_686_400, 54), (3_817_472, 46))
    assert 99.9 / 100 * 46_000 > 45_954  # what fio's arithmetic sees
    assert h.percentile_us(bins, 99.9) == 3686.4
    assert h.percentile_us(bins, 99.91) == 3817.472
    assert h.percentile_us(bins, 100) == 3817.472 and h.percentile_us(bins, 99.7) == 1.0


def test_no_percentile_above_the_largest_io():
    """fio labels the top bin 36,438 µs; the slowest I/O took 36,293.9 µs."""
    bins = ((100_000, 9_990), (36_438_000, 10))
    clamped = h.clamp(bins, 36_293.9)
    assert clamped == ((100_000, 9_990), (36_293_900, 10))
    assert h.percentile_us(clamped, 99.99) == 36_293.9
    assert all(v <= 36_293.9 for _, v, _ in h.nines_rows(bins, 36_293.9))
    assert h.clamp(bins, 0.0) == bins and h.clamp(bins, 40_000.0) == bins  # no maximum known; below it


def test_stored_percentiles_are_the_bins_own():
    """XML, CSV and report read one value: a direction's percentiles are
    computed from its (clamped) bins; without bins fio's, capped at the maximum."""
    bins = ((1000, 45_900), (3_686_400, 54), (3_900_000, 46))
    fio_list = (("99", 1.0), ("99.9", 3817.472), ("99.99", 3900.0))
    got_bins, pct = h.normalized(bins, fio_list, 3850.0)
    assert got_bins[-1] == (3_850_000, 46)
    assert pct == (("99", 1.0), ("99.9", 3686.4), ("99.99", 3850.0))
    assert h.normalized((), fio_list, 3850.0) == ((), (("99", 1.0), ("99.9", 3817.472), ("99.99", 3850.0)))


def test_a_recorded_run_has_no_percentile_above_its_maximum():
    """The recorded json+ output (two jobs): fio's top bin lies above the job's maximum."""
    report = recorded()
    assert any(max(int(k) for k in j["read"]["lat_ns"]["bins"]) > j["read"]["lat_ns"]["max"]
               for j in report["jobs"])
    spec = {"x": dict(rw="randrw", bs=4096, rwmixread=100, numjobs=2, iodepth=1)}
    (w,) = parse_jobs(report, spec)
    assert w.read.bins[-1][0] / 1000.0 <= w.read.lat_max_us
    assert all(v <= w.read.lat_max_us for _, v in w.read.percentiles)
    assert [v for _, v in w.read.percentiles] == [h.percentile_us(w.read.bins, float(p))
                                                  for p, _ in w.read.percentiles]
