"""LAT's response-time capture after its rounds (the PTS 2.0 implementation
Alan-ADATA/SSS-PTS-TEST's 20-minute RND 4k W TC1/QD1): planned by default,
skipped with --lat-capture 0 as a disclosed deviation under PTS 2.0."""
import pytest

from tkperf.errors import UsageError
from tkperf.kit import options
from tkperf.kit.composite import RoundsThenCapture
from tkperf.kit.registry import get
from tkperf.kit.shapes import Rounds
from tkperf.model.pts import REVISIONS
from tkperf.testtypes import latency


def plan(quick=False, **given):
    opts = options.build({"tests": ("lat",), "numjobs": 8, "iodepth": 64, **given}, quick=quick)
    (p,) = get("lat").plan(opts, 1 << 34)
    return p


def deviations(rev, **given):
    kind = get("lat")
    opts = options.build({"tests": ("lat",), **given}).to_dict()
    return [d for d in kind.pts.deviations(kind, opts, REVISIONS[rev]) if "capture" in d]


def test_the_capture_follows_the_rounds_at_tc1_qd1_for_20_minutes():
    p = plan()
    assert isinstance(p.shape, RoundsThenCapture) and p.params["capture_s"] == "1200"
    (job,) = p.shape.capture
    assert (job.name, job.rw, job.bs, job.numjobs, job.iodepth, job.runtime) == (
        latency.CAPTURE_WORKLOAD, "randwrite", 4096, 1, 1, 1200)
    assert not p.shape.keeps_steady_on_resume  # the capture follows the rounds without idle time
    est = p.shape.estimate(options.build({"tests": ("lat",)}), 1 << 34)
    assert est.jobs[-1] is job and est.low_s > 1200
    assert deviations("pts-e-2.0") == []


def test_quick_captures_briefly_and_zero_skips_it_as_a_deviation_under_2_0():
    assert plan(quick=True).shape.capture[0].runtime == 2
    p = plan(lat_capture=0)
    assert type(p.shape) is Rounds and "capture_s" not in p.params  # the round loop as before
    (said,) = deviations("pts-e-2.0", lat_capture=0)
    assert said.startswith("LAT response-time capture skipped") and "Alan-ADATA/SSS-PTS-TEST" in said
    assert deviations("pts-c-2.0", lat_capture=300)[0].startswith("LAT response-time capture 5 min instead")
    assert deviations("pts-e-1.1", lat_capture=0) == []  # the 1.1 revisions: no such implementation


@pytest.mark.parametrize("text, seconds", [("0", 0), ("20m", 1200), ("90s", 90)])
def test_parse_capture(text, seconds):
    assert latency.parse_capture(text, "--lat-capture") == seconds


def test_a_bad_capture_is_a_usage_error():
    with pytest.raises(UsageError):
        latency.parse_capture("soon", "--lat-capture")
