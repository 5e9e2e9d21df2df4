"""Issue 19 (items 4-10): the round structure and ranges the PTS gives each
test, judged in the dry run (job files and the conformance verdict) and,
where the placement of I/O is the point, in short real fio runs.
"""
from __future__ import annotations

import pytest

from tkperf.cli import main
from tkperf.engine import options
from tkperf.engine.shapes import blank_test
from tkperf.model import conformance, pts
from tkperf.model.results import DeviceInfo

GiB = 1 << 30
BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD")


def stored(tests, pts_id=None, quick=False, **given) -> dict:
    return options.build({"tests": tests, **given}, quick=quick, pts=pts_id).to_dict()


def dry_run(tmp_path, capsys, *argv) -> str:
    """The dry run's output on a 20 GB file target (sparse; nothing is written)."""
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", "20g", "--dry-run", *argv]) == 0
    return capsys.readouterr().out


# --- item 7: TP at the revision's TC1/QD32 -----------------------------------------------------

@pytest.mark.parametrize("rev", list(pts.REVISIONS))
def test_tp_runs_at_tc1_qd32_by_default(rev):
    from tkperf.testtypes import get

    opts = options.build({"tests": ("tp",)}, pts=rev)
    for plan in get("tp").plan(opts, 1 << 34):
        jobs = plan.shape.round_jobs(blank_test(), 1)
        assert {(j.numjobs, j.iodepth) for j in jobs} == {(1, 32)}, rev  # was (1, TC x QD) = (1, 128)
        assert (plan.params["numjobs"], plan.params["iodepth"]) == ("1", "32")
    assert conformance.of_settings(stored(("tp",), rev), BLOCK).conformant


def test_tp_oio_in_the_dry_run_and_its_deviation(tmp_path, capsys):
    out = dry_run(tmp_path, capsys, "--tests", "tp")
    tp_jobs = out.split("[seq-1024k-w]")[1].split("\n\n")[0]
    assert "numjobs=1" in tp_jobs and "iodepth=32" in tp_jobs and "iodepth=128" not in out
    c = conformance.of_settings(stored(("tp",), tp_iodepth=128), BLOCK)
    assert c.deviations == ("TP runs at TC1/QD128 instead of TC1/QD32 (SNIA PTS 2.0.2, enterprise)",)


# --- item 10: PTS-C 1.1 preconditions over 80% and tests 8 GiB ---------------------------------

def test_pts_c_1_1_two_ranges_are_conformant():
    c = conformance.of_settings(stored(("iops",), "pts-c-1.1", active_range=80, test_range=8 * GiB), BLOCK)
    assert c.conformant, c.deviations
    for ar in (80, 90, 100):
        assert conformance.of_settings(stored(("iops",), "pts-c-1.1", active_range=ar), BLOCK).conformant


@pytest.mark.parametrize("rev,given,words", [
    ("pts-c-1.1", {"active_range": 70}, "active range 70% instead of the 80% to 100% SNIA PTS-C 1.1 requires"),
    ("pts-c-1.1", {"active_range": 80, "test_range": 4 * GiB}, "first 4 GiB of the LBA range instead of"),
    ("pts-e-2.0", {"test_range": 8 * GiB}, "first 8 GiB of the LBA range instead of the whole preconditioned"),
    ("pts-e-1.1", {"active_range": 80}, "active range 80% instead of the 100% SNIA PTS-E 1.1 requires"),
])
def test_each_range_deviation_alone(rev, given, words):
    c = conformance.of_settings(stored(("iops",), rev, **given), BLOCK)
    assert len(c.deviations) == 1 and words in c.deviations[0], c.deviations


def test_two_ranges_reach_fio_wipc_over_80_percent_tests_over_8_gib(tmp_path, capsys):
    out = dry_run(tmp_path, capsys, "--pts", "pts-c-1.1", "--tests", "tp", "--active-range", "80",
                  "--test-range", "8g")
    size = 20 * GiB
    active = size * 80 // 100 // (1 << 20) * (1 << 20)
    assert f"size={8 * GiB}" in out.split("[global]")[1].split("\n\n")[0]  # the tests' range
    wipc = out.split("[wipc-seq-128k-w]")[1].split("\n\n")[0]
    assert f"size={active}" in wipc and "loops=2" in wipc  # the preconditioning range
    assert "active range 80%, test range 8589934592 bytes" in out
    assert "tests use the first" not in out and "active range 80% instead" not in out


def test_bad_test_range_is_one_line(tmp_path, capsys):
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", "1g", "--dry-run", "--test-range", "lots"]) == 2
    assert "--test-range 'lots' is not a size" in capsys.readouterr().err


# --- item 5: the PTS 2.0 DIRTH/CBW grid is TC and QD 32, 16, 8, 6, 4, 2, 1 ----------------------

@pytest.mark.parametrize("test", ["dirth", "cbw"])
@pytest.mark.parametrize("rev", ["pts-e-2.0", "pts-e-1.1"])
def test_the_pts_grid_is_no_deviation(test, rev):
    from tkperf.testtypes import get

    opts = options.build({"tests": (test,)}, pts=rev)
    (plan, *_) = get(test).plan(opts, 1 << 34)
    assert len(plan.shape.sweep) == 49 and plan.params["tc"] == plan.params["qd"] == "1,2,4,6,8,16,32"
    assert conformance.of_settings(stored((test,), rev), BLOCK).conformant


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_the_1_1_grid_under_pts_2_0_is_named(test):
    grid = (1, 2, 4, 8, 16, 32)
    c = conformance.of_settings(stored((test,), **{f"{test}_tc": grid, f"{test}_qd": grid}), BLOCK)
    assert len(c.deviations) == 1 and "the PTS 2.0 grid is TC and QD 32, 16, 8, 6, 4, 2, 1" in c.deviations[0]
    assert conformance.of_settings(stored((test,), "pts-e-1.1", **{f"{test}_tc": grid, f"{test}_qd": grid}),
                                   BLOCK).conformant
