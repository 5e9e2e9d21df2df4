"""Issue 34 (PTS verdicts, round 3): WSAT's steady stop, one rule for the
OIO, what the header calls a departure the verdict counts, the PTS 2.0 IOPS
header's tracking variables, a test range the device cannot hold, and a
comparison that sets only like beside like.  (The DIRTH/CBW preconditioning,
pre-writes, fill floor and sweep order: tests/e2e/test_dirth_rounds.py.)"""
from __future__ import annotations

import dataclasses

import pytest

from tkperf.cli import main
from tkperf.kit import options, registry
from tkperf.kit.base import OIO_FIXED, OIO_OPERATOR, OIO_SWEEP
from tkperf.kit.registry import get
from tkperf.model import pts
from tkperf.model.pts import REVISIONS
from tkperf.model.results import DeviceInfo, HostInfo, RunResult, TestRun
from tkperf.verdict import conformance

GiB = 1 << 30
BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD")


def stored(tests, pts_id=None, quick=False, **given) -> dict:
    return options.build({"tests": tests, **given}, quick=quick, pts=pts_id).to_dict()


def dry_run(tmp_path, capsys, *argv, size="20g") -> str:
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", size, "--dry-run", *argv]) == 0
    return capsys.readouterr().out


# --- item 1: a WSAT stopped by steady state on points other than 30 min apart -------------------

def _wsat(reason: str, spacing: int) -> TestRun:
    return TestRun("wsat", "wsat", "wsat-rnd-4k-0-100", "write.iops", "", status="complete", stop_reason=reason,
                   params={"steady_spacing": str(spacing)})


@pytest.mark.parametrize("spacing, named", [(60, True), (1, True), (30 * 60, False), (45 * 60, True)])
def test_wsat_steady_stop_off_30_minutes_may_be_and_was_a_deviation(spacing, named, tmp_path, capsys):
    opts = stored(("wsat",), wsat_steady=True, wsat_steady_spacing=spacing)
    kind = get("wsat")
    # before the run: it may be (the dry run), said alone
    planned = kind.pts.planned_deviations(kind, opts, REVISIONS["pts-e-2.0"])
    steady_words = [d for d in planned if d.startswith("WSAT steady-state stop on points")]
    assert bool(steady_words) is named
    if named:
        assert steady_words[0].endswith("instead of the PTS's 30 min: a deviation if it ends the run")
    # after it: it was, when the stop reason is steady state
    said = kind.pts.result_deviations(kind, _wsat("steady state (20/10 on 5 points 1 min apart)", spacing), opts,
                                  REVISIONS["pts-e-2.0"], 10 * GiB)
    assert bool(said) is named
    if named:
        assert said == [f"wsat: stopped at steady state judged on points {pts_duration(spacing)} apart, not the "
                        "PTS's 5 points 30 min apart (an early stop can hide a later write cliff)"]
    # a run the TGBW limit ended is not judged by its steady-state spacing
    assert kind.pts.result_deviations(kind, _wsat("TGBW reached (40.00 GB)", spacing), opts, REVISIONS["pts-e-2.0"],
                                  10 * GiB) == []


def pts_duration(seconds: int) -> str:
    from tkperf.durations import duration

    return duration(float(seconds), rough=True)


def test_wsat_steady_stop_deviation_in_the_dry_run(tmp_path, capsys):
    out = dry_run(tmp_path, capsys, "--tests", "wsat", "--wsat-steady", "--wsat-steady-spacing", "1m")
    assert "WSAT steady-state stop on points 60 s apart instead of the PTS's 30 min" in out
    out = dry_run(tmp_path, capsys, "--tests", "wsat", "--wsat-steady")
    assert "steady-state stop" not in out.split("# NOT PTS-conformant")[-1]


# --- item 6: one rule for the OIO -----------------------------------------------------------------

RULES = {"iops": OIO_OPERATOR, "wsat": OIO_OPERATOR, "hir": OIO_OPERATOR, "lat": OIO_FIXED, "tp": OIO_FIXED,
         "xsr": OIO_FIXED, "dirth": OIO_SWEEP, "cbw": OIO_SWEEP}


#: The real-world types follow the SNIA RWSW PTS, whose rules they carry
#: (their departures); it sets no OIO rule of the SSS PTS.
RWSW = {"replay", "rwsw-wsat", "rwsw-dirth"}


def test_every_pts_test_has_its_oio_rule():
    pts_types = {n for n, k in registry.types().items() if k.pts is not None}
    assert pts_types == set(RULES) | RWSW
    assert {registry.get(n).pts.oio for n in RWSW} == {""}  # type: ignore[union-attr]
    assert {n: registry.get(n).pts.oio for n in RULES} == RULES  # type: ignore[union-attr]
    assert all(not hasattr(k, "oio") for k in registry.types().values())  # the OIO rule is a PTS rule


#: For each test, an OIO other than tkperf's default, given as its options.
OTHER_OIO = {
    "iops": {"numjobs": 1, "iodepth": 1},
    "wsat": {"numjobs": 1, "iodepth": 1},
    "hir": {"hir_qd": 1},
    "tp": {"tp_oio": (1, 64)},
    "xsr": {"xsr_tc": 2, "xsr_qd": 4},
}


@pytest.mark.parametrize("test", sorted(OTHER_OIO))
def test_an_oio_of_the_operators_choice_is_disclosed_a_fixed_one_is_judged(test):
    base = conformance.of_settings(stored((test,)), BLOCK)
    assert base.conformant, base.deviations
    c = conformance.of_settings(stored((test,), **OTHER_OIO[test]), BLOCK)
    if RULES[test] == OIO_OPERATOR:
        assert c.conformant, c.deviations
    else:
        assert len(c.deviations) == 1 and "instead of TC1/QD32" in c.deviations[0], c.deviations


def test_lat_runs_at_tc1_qd1_whatever_the_run_oio():
    opts = options.build({"tests": ("lat",), "numjobs": 8, "iodepth": 64})
    for plan in get("lat").plan(opts, 1 << 34):
        jobs = plan.shape.round_jobs(plan_blank(), 1)
        assert jobs and all((j.numjobs, j.iodepth) == (1, 1) for j in jobs)


def plan_blank():
    from tkperf.kit.shapes import blank_test

    return blank_test()


# --- item 7: what the header calls a departure, the verdict counts ----------------------------------

def test_cbw_alignment_is_disclosed_not_judged():
    # JESD219's rule could not be established: no deviation for it (issue 43 item 6), the header says it
    from tkperf.testtypes.cbw.view import ALIGNMENT

    for rev in ("pts-e-2.0", "pts-e-1.1"):
        assert conformance.of_settings(stored(("cbw",), rev), BLOCK).conformant
    assert "512 B aligned" in ALIGNMENT and "not judged in the conformance verdict" in ALIGNMENT


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_a_response_time_limit_other_than_5_ms_is_a_deviation(test):
    got = conformance.of_settings(stored((test,), **{f"{test}_rt_limit": 50_000}), BLOCK).deviations
    assert got[0] == (f"{test.upper()} max and mid points chosen under a mean response time of 50ms instead of 5ms "
                      "(the PTS 2.0 implementation's limit)")
    assert len(got) == 1
    assert conformance.of_settings(stored((test,), **{f"{test}_rt_limit": 5000}), BLOCK).deviations == ()


# --- item 9: the PTS 2.0 IOPS header names all three tracking variables ------------------------------

def test_pts_2_0_iops_header_names_every_tracking_variable():
    from tkperf.report import header

    (plan,) = get("iops").plan(options.build({"tests": ("iops",)}), 1 << 34)
    test = TestRun("iops", "iops", plan.tracking.workload, plan.tracking.metric, plan.tracking.label,
                   params=dict(plan.params))
    run = RunResult(name="r", started="", device=BLOCK, host=HostInfo(), options=stored(("iops",)), tests=[test])
    line = dict(header.round_fields(run, test))["Tracking"]
    for words in ("RND 4k 0/100 IOPS", "RND 64k 65/35 IOPS", "RND 1024k 100/0 IOPS", "each must hold 20/10"):
        assert words in line, line
    (old,) = get("iops").plan(options.build({"tests": ("iops",)}, pts="pts-e-1.1"), 1 << 34)
    t11 = dataclasses.replace(test, params=dict(old.params), tracking_label=old.tracking.label)
    assert dict(header.round_fields(run, t11))["Tracking"] == old.tracking.label  # 1.1 tracks one


# --- item 9: a device smaller than the PTS-C 1.1 test range ------------------------------------------

def test_a_test_range_larger_than_the_device_is_named_at_the_size_used(tmp_path, capsys):
    small = dataclasses.replace(BLOCK, size_bytes=512 * 1024 * 1024)
    # in the revision's 2,048 ActiveRange segments: whole 4 KiB segments of what the active range holds
    (said,) = conformance.of_settings(stored(("iops",), "pts-c-1.1", active_range=80, test_range=8 * GiB),
                                      small).deviations
    assert said == ("test range 8 GiB asked, but the device's active range holds only 427,819,008 bytes: the "
                    "tests use 427,819,008 bytes instead of the SNIA PTS-C 1.1 test range")  # 2,048 x 204 KiB
    # as one span (a file target can only be that)
    c = conformance.of_settings(stored(("iops",), "pts-c-1.1", active_range=80, test_range=8 * GiB,
                                       ar_segments=1), small)
    used = pts.tested_bytes(small.size_bytes, 80, 8 * GiB)
    assert used == 409 * 1024 * 1024  # 80% of 512 MiB, down to whole MiB
    (segments, said) = c.deviations
    assert said == (f"test range 8 GiB asked, but the device's active range holds only {used:,} bytes: the tests "
                    f"use {used:,} bytes instead of the SNIA PTS-C 1.1 test range")
    assert "not the 2,048 ActiveRange segments" in segments
    # the dry run's header line gives the same size, in the same words
    out = dry_run(tmp_path, capsys, "--pts", "pts-c-1.1", "--tests", "iops", "--active-range", "80",
                  "--test-range", "8g", "--ar-segments", "1", size="512m")
    assert f"test range {used:,} bytes" in out and said in out
    # the report header too
    from tkperf.report import header

    run = RunResult(name="r", started="", device=small, host=HostInfo(),
                    options=stored(("iops",), "pts-c-1.1", active_range=80, test_range=8 * GiB, ar_segments=1),
                    tests=[])
    line = dict(header.setup_fields(run, TestRun("iops", "iops", "", "", "")))["Active range"]
    assert f"tests over the first {used:,} bytes (--test-range 8 GiB, more than the active range holds)" in line


def test_a_pts_c_2_0_test_range_names_one_size_in_header_and_verdict():
    c = conformance.of_settings(stored(("iops",), "pts-c-2.0", test_range=8 * GiB), BLOCK)
    (said,) = c.deviations
    assert said.startswith("tests use the first 8 GiB of the LBA range")
    small = dataclasses.replace(BLOCK, size_bytes=2 * GiB)
    (said,) = conformance.of_settings(stored(("iops",), "pts-c-2.0", test_range=8 * GiB), small).deviations
    used = pts.tested_bytes(2 * GiB, 75, 8 * GiB)
    assert said == (f"test range 8 GiB asked, but the device's active range holds only {pts.range_text(used)}: "
                    f"the tests use {pts.range_text(used)}")


# --- item 8: compare sets like beside like --------------------------------------------------------

def _figures(definition, value):
    from tkperf.report import page

    return [page.SummaryFigure(key, group, pattern, unit, value if key == "seq_write_mb_s" else None,
                               "somewhere", definition if key == "seq_write_mb_s" else "")
            for key, group, pattern, unit in page.SUMMARY_LAYOUT]


def test_compare_never_sets_two_definitions_in_one_row(monkeypatch):
    from tkperf.report import compare, page

    runs = [RunResult(name=n, started="", device=BLOCK, host=HostInfo(), options={}, tests=[]) for n in "abc"]
    given = {"a": _figures("TP: steady-state window average", 3453.9),
             "b": _figures("XSR: level of the first SEQ 1024KiB W phase after a purge, no WIPC "
                           "(not a steady-state window)", 3659.5),
             "c": _figures("TP: steady-state window average", 3500.0)}
    monkeypatch.setattr(page, "summary_figures", lambda run: given[run.name])
    rows = [r for r in compare.summary_rows(runs) if r[0].startswith("Throughput")]
    tp = [r for r in rows if "[TP: steady-state window average]" in r[0]]
    xsr = [r for r in rows if "[XSR: level of the first SEQ 1024KiB W phase" in r[0]]
    assert len(tp) == 1 and len(xsr) == 1
    assert tp[0][1] == [3453.9, None, 3500.0] and xsr[0][1] == [None, 3659.5, None]
    text = "\n".join(compare.terminal_table(runs))
    tp_line = next(line for line in text.splitlines() if "[TP:" in line)
    xsr_line = next(line for line in text.splitlines() if "[XSR:" in line)
    assert "+1.3" in tp_line  # c against a: the same definition
    assert "+6.0" not in xsr_line and "%" not in xsr_line.split("]")[-1]


def test_each_summary_figure_carries_its_definition():
    import os

    from tkperf import store
    from tkperf.report import page

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = store.load(os.path.join(os.path.dirname(here), "examples", "example-ssd.xml"))
    figures = {f.key: f for f in page.summary_figures(run)}
    assert figures["seq_write_mb_s"].definition == "TP: steady-state window average"
    assert figures["fob_iops"].definition == "WSAT: first interval after the purge (FOB)"
    xsr = store.load(os.path.join(here, "data", "golden", "inputs", "xsr.xml"))  # a real --quick XSR run
    got = {f.key: f for f in page.summary_figures(xsr)}["seq_write_mb_s"]
    assert got.value is not None and got.definition.startswith("XSR: level of the first SEQ 1024KiB W phase")
