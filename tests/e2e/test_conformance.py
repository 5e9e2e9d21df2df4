"""The conformance verdict: a run is PTS-conformant only when every parameter
matches the revision it follows; each deviation, alone, is named.

Settings are judged from the options a run stores (as the dry run and every
report do); what only results show (a purge that is not a PTS PURGE, no
steady state, a resumed run, the write cache state recorded) from a result.
"""
from __future__ import annotations

import json

import pytest

from conftest import needs_fio
from tkperf.cli import main
from tkperf.kit import options
from tkperf.model import pts
from tkperf.model.results import DeviceInfo, Event, HostInfo, IoStats, PurgeRecord, Round, RunResult, TestRun, Workload
from tkperf.model.steadystate import evaluate
from tkperf.pts.matrix.plan import variable_verdicts
from tkperf.testtypes import iops
from tkperf.verdict import conformance

BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD")
PTS_TESTS = ("iops", "tp", "lat", "wsat")


def full(**overrides) -> dict:
    """The stored options of a run with every PTS parameter (and ``overrides``)."""
    given = {"tests": PTS_TESTS, **{k: v for k, v in overrides.items() if k not in ("pts", "quick")}}
    return options.build(given, quick=overrides.get("quick", False), pts=overrides.get("pts")).to_dict()


@pytest.mark.parametrize("rev", list(pts.REVISIONS))
def test_full_parameters_are_conformant(rev):
    c = conformance.of_settings(full(pts=rev), BLOCK)
    assert c.conformant, c.deviations
    assert c.as_dict() == {"conformant": True, "deviations": [], "verdict": f"PTS-conformant ({c.revision})",
                           "pts_run": True}
    assert c.revision == pts.REVISIONS[rev].title


# Each deviation alone: (options given, words the one deviation must contain).
ALONE = [
    ({"runtime": 30}, "30 s each instead of 60 s"),
    ({"max_rounds": 10}, "at most 10 rounds per test instead of 25"),
    ({"max_rounds": 60}, "at most 60 rounds per test instead of 25"),
    ({"wipc_loops": 1}, "WIPC writes 1x the active range instead of 2x"),
    ({"purge": "discard"}, "not a PTS PURGE"),
    ({"purge": "none"}, "no PURGE"),
    ({"active_range": 50}, "active range 50% instead of the 100%"),
    ({"write_cache": "on"}, "requires WCD"),
    ({"write_cache": "keep"}, "kept as found"),
    ({"iops_bs": (4096, 65536)}, "IOPS matrix narrowed"),
    ({"tp_oio": (1, 128)}, "TP at TC1/QD128 instead of TC1/QD32"),
    ({"wsat_interval": 30}, "WSAT reports every 30 s instead of the PTS's 60 s"),
    ({"wsat_time": 3600}, "WSAT time limit 60 min is below 24 h: a deviation if it ends the run"),
    ({"wsat_tgbw": "1x"}, "WSAT TGBW limit 1x may be below 4x the capacity"),
    ({"wsat_tgbw": "800"}, "WSAT TGBW limit 800 GB may be below 4x the capacity"),
    ({"iops_mixes": (65, 100)}, "the tracking variable becomes RND 4k 65/35"),
]


@pytest.mark.parametrize("given,words", ALONE, ids=[w for _, w in ALONE])
def test_each_setting_deviation_alone_is_named(given, words):
    c = conformance.of_settings(full(**given), BLOCK)
    assert not c.conformant
    assert any(words in d for d in c.deviations), c.deviations
    # a narrowed matrix may also lose PTS 2.0 tracking figures; nothing else may appear
    others = [d for d in c.deviations if words not in d and "IOPS steady state tracks" not in d]
    assert others == []


def test_quick_and_file_target_are_named():
    quick = conformance.of_settings(full(quick=True), BLOCK)
    assert any("--quick" in d for d in quick.deviations)
    file_target = conformance.of_settings(full(), DeviceInfo(path="/tmp/f", resolved="/tmp/f", kind="file",
                                                             size_bytes=1 << 30))
    assert file_target.deviations == ("the target is a file, not a raw block device",)


def test_client_revision_wants_its_own_active_range_and_cache():
    c = conformance.of_settings(full(pts="pts-c-2.0", active_range=100, write_cache="off"), BLOCK)
    assert any("active range 100% instead of the 75%" in d for d in c.deviations)
    assert any("requires WCE" in d for d in c.deviations)


def _workload(name: str, value: float) -> Workload:
    stats = IoStats(iops=value, bw_bytes=value * 4096, io_bytes=int(value * 4096), ios=int(value))
    return Workload(name=name, rw="randrw", bs=4096, rwmixread=0, numjobs=4, iodepth=32, runtime_ms=60000,
                    read=IoStats(), write=stats)


def result(**option_overrides) -> RunResult:
    """A complete, conformant-looking IOPS run: steady, ATA secure erase, WCD."""
    t = TestRun(type="iops", key="iops", tracking_workload="rnd-4k-0-100", tracking_metric="write.iops",
                tracking_label="RND 4k 0/100 IOPS", status="complete", stop_reason="steady state",
                purge=PurgeRecord("auto", "ata-secure-erase", 30.0, True, "hdparm ...", ""))
    for i, v in enumerate((100.0, 101.0, 99.0, 100.0, 100.5), 1):
        t.rounds.append(Round(index=i, started="", wall_s=60.3, fio_s=60.0,
                              workloads=(_workload("rnd-4k-0-100", v),)))
    t.steady = t.evaluate()
    opts = full(**option_overrides)
    opts["tests"] = "iops"
    return RunResult(name="r", started="", device=BLOCK, host=HostInfo(), options=opts, status="complete",
                     tests=[t])


def test_a_result_with_full_parameters_is_conformant():
    c = conformance.of_run(result())
    assert c.conformant, c.deviations


def test_result_deviations_each_alone():
    not_steady = result()
    not_steady.tests[0].steady = evaluate([1, 2, 3, 4, 5], [100, 50, 100, 50, 100])
    assert not not_steady.tests[0].steady.steady
    # one tracked variable: named too (issue 43 item 9)
    assert conformance.of_run(not_steady).deviations == (
        "iops: no steady state within 5 rounds (not steady: RND 4k 0/100 IOPS)",)
    from tkperf.report import summary

    assert summary.as_dict(not_steady)["tests"][0]["not_steady_variables"] == ["RND 4k 0/100 IOPS"]

    weak_purge = result()
    weak_purge.tests[0].purge = PurgeRecord("auto", "discard", 0.1, False, "blkdiscard", "not a PTS PURGE")
    assert conformance.of_run(weak_purge).deviations == (
        "purged by discard, which is not a PTS PURGE (iops)",)

    resumed = result()
    resumed.events.append(Event("", "resume", "resumed after an interruption", "iops", 2))
    assert conformance.of_run(resumed).deviations == ("the run was interrupted and resumed (iops)",)

    cached = result()
    cached.device = DeviceInfo(**{**BLOCK.__dict__, "write_cache": "WCE"})
    assert conformance.of_run(cached).deviations == (
        "write cache was WCE during the run (SNIA PTS 2.0.2, enterprise requires WCD)",)

    unknown = result()
    unknown.device = DeviceInfo(**{**BLOCK.__dict__, "write_cache": ""})
    assert conformance.of_run(unknown).deviations == (
        "write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)",)


def test_a_window_after_round_25_is_not_a_pts_steady_state(tmp_path, capsys):
    from tkperf import store
    from tkperf.report import summary, words

    late = result(max_rounds=60)
    t = late.tests[0]
    t.rounds[:] = [Round(index=i, started="", wall_s=60.3, fio_s=60.0,
                         workloads=(_workload("rnd-4k-0-100", 100.0 if i > 25 else 50.0 * (i % 2 + 1)),))
                   for i in range(1, 31)]
    t.steady = t.evaluate()
    assert t.steady.steady and t.steady.rounds == (26, 27, 28, 29, 30)
    assert conformance.of_run(late).deviations == (
        "at most 60 rounds per test instead of 25",
        "iops: steady state only in rounds 26-30, after round 25: not a PTS steady state")
    assert "NOT a PTS steady state" in words.test_verdict(t)
    assert "NOT a PTS steady state" in words.verdict(t, t.steady)
    path = tmp_path / "late.xml"
    store.save(late, str(path))
    assert main(["show", str(path), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["tests"]
    assert entry["steady"] is True and entry["pts_steady"] is False
    ontime = summary.as_dict(result())["tests"][0]
    assert ontime["pts_steady"] is True


def _wsat_result(stop_reason: str, status: str = "complete", **option_overrides) -> RunResult:
    from tkperf.kit.shapes import STREAM_COLUMNS
    from tkperf.model.series import Series
    from tkperf.testtypes.writesat import SERIES

    run = result(**option_overrides)
    run.options["tests"] = "wsat"
    series = Series(SERIES, STREAM_COLUMNS)
    for i in range(3):
        series.set_row(i + 1, (60.0, 60.0, 600000, 600000 * 4096, 10000.0, 100.0))
    t = TestRun(type="wsat", key="wsat", tracking_workload="wsat-rnd-4k-0-100", tracking_metric="write.iops",
                tracking_label="RND 4k 100% W IOPS per interval", status=status, stop_reason=stop_reason,
                purge=PurgeRecord("auto", "ata-secure-erase", 30.0, True, "hdparm ...", ""),
                series={SERIES: series})
    run.tests = [t]
    return run


@pytest.mark.parametrize("given,stop,named", [
    ({}, "time limit", None),                              # 24 h reached
    ({}, "TGBW reached (1600.00 GB)", None),               # 4x reached
    ({"wsat_time": 3600}, "TGBW reached (1600.00 GB)", None),  # 4x reached within the shorter time
    ({"wsat_time": 3600}, "time limit", "wsat: stopped by its time limit of 60 min, before 24 h or 4x"),
    ({"wsat_tgbw": "1x"}, "TGBW reached (400.00 GB)", "wsat: stopped by its TGBW limit of 1x, before 24 h"),
    ({"wsat_tgbw": "1x"}, "time limit", None),             # 24 h came first
    ({"wsat_tgbw": "1600"}, "TGBW reached (1600.00 GB)", None),  # 1600 GB is 4x a 400 GB drive
    ({"wsat_tgbw": "800"}, "TGBW reached (800.00 GB)", "wsat: stopped by its TGBW limit of 800 GB"),
    ({"wsat_interval": 30}, "time limit", "WSAT reports every 30 s instead of the PTS's 60 s"),
])
def test_wsat_is_judged_by_what_stopped_it(given, stop, named):
    c = conformance.of_run(_wsat_result(stop, **given))
    if named is None:
        assert c.conformant, c.deviations
    else:
        assert len(c.deviations) == 1 and named in c.deviations[0], c.deviations


def test_a_test_type_that_is_not_pts_is_named():
    run = result()
    run.options["tests"] = "iops,nosuch"
    assert "test type 'nosuch' is not installed, its settings cannot be checked" in \
        conformance.of_run(run).deviations


# --- PTS 2.0 IOPS: three tracking figures, all must be steady ---------------------------------

def _matrix_round(index: int, w4k: float, m64k: float, r1m: float) -> Round:
    def wl(name, iops_w, iops_r):
        return Workload(name=name, rw="randrw", bs=4096, rwmixread=0, numjobs=4, iodepth=32,
                        runtime_ms=60000, read=IoStats(iops=iops_r), write=IoStats(iops=iops_w))
    return Round(index=index, started="", wall_s=60.0, fio_s=60.0,
                 workloads=(wl("rnd-4k-0-100", w4k, 0.0), wl("rnd-64k-65-35", m64k * 0.35, m64k * 0.65),
                            wl("rnd-1024k-100-0", 0.0, r1m)))


def _iops_test(rounds) -> TestRun:
    opts = options.build({"tests": ("iops",)}, pts="pts-e-2.0")
    (plan,) = iops.IopsTest().plan(opts, 1 << 40)
    t = TestRun(type="iops", key="iops", tracking_workload=plan.tracking.workload,
                tracking_metric=plan.tracking.metric, tracking_label=plan.tracking.label,
                params=dict(plan.params))
    t.rounds.extend(rounds)
    return t, plan


def test_pts_2_0_iops_needs_all_three_figures_steady():
    # 4k W and 1024k R are flat; 64k 65/35 swings by half: not steady.
    swinging = [_matrix_round(i, 30000.0, 5000.0 if i % 2 else 2500.0, 900.0) for i in range(1, 6)]
    t, plan = _iops_test(swinging)
    assert t.params["also_tracking"] == "rnd-64k-65-35:iops,rnd-1024k-100-0:iops"
    assert t.evaluate(5).steady  # the 4k figure alone would pass
    verdict = plan.steady_state(t, 5)
    assert not verdict.steady
    names = [w for w, _, v in variable_verdicts(t, 5) if not v.steady]
    assert names == ["rnd-64k-65-35"]
    # the verdict, show and the conformance list name the variable that failed (issue 19)
    from tkperf.render.blocks import Chart, Heading, Table
    from tkperf.report import summary, words
    from tkperf.report.context import ReportContext
    from tkperf.report.steady import window_blocks

    t.steady, t.status = verdict, "complete"
    assert words.test_verdict(t) == "NO steady state in 5 rounds (not steady: RND 64k 65/35 IOPS)"
    run = result()
    run.tests = [t]
    run.options["tests"] = "iops"
    assert "iops: no steady state within 5 rounds (not steady: RND 64k 65/35 IOPS)" in \
        conformance.of_run(run).deviations
    assert summary.as_dict(run)["tests"][0]["not_steady_variables"] == ["RND 64k 65/35 IOPS"]
    # one window chart and table per variable, each with its own verdict
    blocks = window_blocks(ReportContext(run), t, 2)
    assert [c.filename for c in blocks if isinstance(c, Chart)] == [
        "iops-window-rnd-4k-0-100.png", "iops-window-rnd-64k-65-35.png", "iops-window-rnd-1024k-100-0.png"]
    tables = [x for x in blocks if isinstance(x, Table)]
    assert [x.title for x in tables] == ["Steady-state check of RND 4k 0/100 IOPS",
                                         "Steady-state check of RND 64k 65/35 IOPS",
                                         "Steady-state check of RND 1024k 100/0 IOPS"]
    verdicts = [dict((r[0], r[1]) for r in x.rows)["Verdict"] for x in tables]
    assert verdicts[0].startswith("steady state reached") and verdicts[2].startswith("steady state reached")
    assert verdicts[1].startswith("NO steady state")
    assert any(isinstance(x, Heading) and x.text == "Measurement window: RND 64k 65/35 IOPS" for x in blocks)
    flat = [_matrix_round(i, 30000.0, 5000.0, 900.0) for i in range(1, 6)]
    t2, plan2 = _iops_test(flat)
    assert plan2.steady_state(t2, 5).steady


@pytest.mark.parametrize("rev", list(pts.REVISIONS))
def test_tp_runs_one_job_at_qd32_in_every_revision(rev):
    from tkperf.testtypes.throughput import ThroughputTest

    opts = options.build({"tests": ("tp",)}, pts=rev)
    for plan in ThroughputTest().plan(opts, 1 << 40):
        jobs = (plan.shape.jobs_for.write, plan.shape.jobs_for.read)
        assert [(j.numjobs, j.iodepth) for j in jobs] == [(1, 32), (1, 32)]
        assert (plan.params["numjobs"], plan.params["iodepth"]) == ("1", "32")


def test_a_file_from_before_tp_oio_is_judged_by_what_tp_ran():
    old = full()
    del old["tp_oio"]  # TP then ran one job at QD numjobs x iodepth = 128
    assert "TP at TC1/QD128 instead of TC1/QD32 (SNIA PTS 2.0.2, enterprise)" in \
        conformance.of_settings(old, BLOCK).deviations


def test_pts_1_1_iops_tracks_one_figure():
    opts = options.build({"tests": ("iops",)}, pts="pts-e-1.1")
    (plan,) = iops.IopsTest().plan(opts, 1 << 40)
    assert "also_tracking" not in plan.params and plan.judge is None


# --- the user's view -----------------------------------------------------------------------------

@needs_fio
def test_dry_run_says_conformant_or_lists_deviations(loopdev, capsys):
    # a loop device: the discard purge and the unreachable write cache are known before the run
    assert main(["ssd", "run", loopdev, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "# verdict on this target: NOT PTS-conformant (SNIA PTS 2.0.2, enterprise): 2 deviations" in out
    assert "#   - write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)" in out
    assert main(["ssd", "run", loopdev, "--dry-run", "--pts", "PTS-C-1.1", "--runtime", "20"]) == 0
    out = capsys.readouterr().out
    assert "# verdict on this target: NOT PTS-conformant (SNIA PTS-C 1.1): 3 deviations" in out
    assert "#   - workloads run 20 s each instead of 60 s" in out


def test_show_json_has_pts_and_conformance(tmp_path, capsys):
    from tkperf import store

    path = tmp_path / "r.xml"
    store.save(result(runtime=30), str(path))
    assert main(["show", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pts"] == "pts-e-2.0"
    assert data["conformance"] == {"conformant": False,
                                   "deviations": ["workloads run 30 s each instead of 60 s"],
                                   "verdict": "NOT PTS-conformant (SNIA PTS 2.0.2, enterprise): 1 deviation",
                                   "pts_run": True}
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NOT PTS-conformant (SNIA PTS 2.0.2, enterprise): 1 deviation" in out
    assert "- workloads run 30 s each instead of 60 s" in out


@pytest.mark.parametrize("argv,message", [
    (["--pts", "pts-x-9"], "unknown PTS revision 'pts-x-9'"),
    (["--pts", "pts-c-2.0", "--class", "enterprise"], "--class enterprise contradicts --pts pts-c-2.0"),
    (["--active-range", "0"], "--active-range"),
])
def test_bad_revision_options(argv, message, tmp_path, capsys):
    assert main(["ssd", "run", str(tmp_path / "f"), "--size", "64m", "--dry-run", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# --- issue 43: reused random buffers, imported TKperf results, WSAT's window -------------------------

REUSED = ("data pattern: fio's random buffers reused (scrambled, not refilled: mostly, not wholly incompressible) "
          "instead of the PTS's random data; refill_buffers makes it wholly incompressible")


@pytest.mark.parametrize("tests, profile, named", [
    (("iops",), "ssd", True), (("cbw", "iops"), "ssd", True),  # IOPS writes the run's buffers
    (("cbw",), "ssd", False),  # every CBW job refills its own buffers
    (("hdd-iops",), "hdd", False),  # not a PTS run at all: said once as such
])
def test_reused_random_buffers_are_a_deviation(tests, profile, named):
    given = options.build({"tests": tests, "refill_buffers": False}).to_dict()
    assert given["refill_buffers"] == "false"
    found = conformance.of_settings(given, BLOCK, profile).deviations
    assert (REUSED in found) is named, found
    # the default refills: no such deviation
    default = options.build({"tests": tests}).to_dict()
    assert default["refill_buffers"] == "true" and REUSED not in conformance.of_settings(default, BLOCK,
                                                                                         profile).deviations
    # a file that does not record the option is not judged on it
    del given["refill_buffers"]
    assert REUSED not in conformance.of_settings(given, BLOCK, profile).deviations


def test_imported_tkperf_results_carry_their_replay_caveats_whole():
    run = result()
    run.tests.append(TestRun("wsat", "wsat", "wsat-rnd-4k-0-100", "write.iops", "", status="complete"))
    run.tests.append(TestRun("tp", "tp-1024k", "seq-1024k-w", "write.bw_bytes", "", status="complete"))
    run.tests.append(TestRun("lat", "lat", "rnd-4k-0-100", "write.lat_mean_us", "", status="complete"))
    assert conformance.imported_caveats(run) == []  # tkperf's own run
    run.facts = {"imported": {"tool": "TKperf", "version": "2.2"}}
    iops_words = ("iops: each round of the original TKperf ran every workload as a new fio process with fio's "
                  "default randrepeat=1, so its random workloads repeat the same offsets every round")
    wsat_words = ("wsat: the original TKperf's WSAT measures no write cliff: each of its rounds is a new fio "
                  "process with fio's default randrepeat=1 (and no norandommap), so every round rewrites round 1's "
                  "offsets in the same order (on tkperf's emulated SSD: 4.2 capacities written, 91.9% of the LBAs "
                  "touched, no garbage collection, every round at burst speed); its figures are not random-write "
                  "saturation")
    assert conformance.imported_caveats(run) == [iops_words, wsat_words, iops_words.replace("iops:", "lat:", 1)]
    assert conformance.of_run(run).deviations[1:] == (iops_words, wsat_words, iops_words.replace("iops:", "lat:", 1))
    run.facts = {"imported": {"tool": "OtherTool"}}
    assert conformance.imported_caveats(run) == []


def test_the_25_round_rule_is_for_round_tests_only():
    late = result()
    t = late.tests[0]
    t.steady = evaluate(list(range(22, 27)), [100.0] * 5)
    assert conformance.late_window(t)  # rounds 22-26: after round 25
    t.steady = evaluate(list(range(21, 26)), [100.0] * 5)
    assert not conformance.late_window(t)  # ends at round 25 exactly
    wsat = TestRun("wsat", "wsat", "wsat-rnd-4k-0-100", "write.iops", "", status="complete")
    wsat.steady = evaluate(list(range(22, 27)), [100.0] * 5)
    assert not conformance.late_window(wsat)  # interval numbers, not rounds
    t.steady = None
    assert not conformance.late_window(t)
