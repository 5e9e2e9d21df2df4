"""Issue 43 (PTS verdicts, round 4) on stored results: what the verdict says
of them.  The dynamic side of each item runs on the emulated SSD
(tests/e2e/test_pts_round4_simdrive.py)."""
from __future__ import annotations

import pytest

from tkperf.kit.options import build
from tkperf.kit.shapes import STREAM_COLUMNS, UNHELD
from tkperf.model.results import DeviceInfo, HostInfo, PurgeRecord, RunResult, TestRun
from tkperf.model.series import Series
from tkperf.model.steadystate import spaced_steady
from tkperf.testtypes.writesat import SERIES
from tkperf.testtypes.writesat.view import _steady_words
from tkperf.verdict import conformance

BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD")


def wsat_run(spacing_s: int, intervals: int, stop_reason: str, last_point_iops: float = 0.0) -> RunResult:
    """A WSAT of 60 s intervals with the steady-state stop on points ``spacing_s``
    apart, its IOPS flat from the middle on (steady on the last 5 points)."""
    opts = build({"tests": ("wsat",), "wsat_steady": True, "wsat_steady_spacing": spacing_s}).to_dict()
    series = Series(SERIES, STREAM_COLUMNS)
    for i in range(1, intervals + 1):
        iops = 40000.0 if i < intervals // 4 else 9000.0 + (i % 3)
        if last_point_iops and i > intervals - spacing_s // 60:
            iops = last_point_iops
        series.set_row(i, (60.0, 60.0, int(iops * 60), int(iops * 60) * 4096, iops, 100.0))
    every = spacing_s // 60
    t = TestRun(type="wsat", key="wsat", tracking_workload="wsat-rnd-4k-0-100", tracking_metric="write.iops",
                tracking_label="RND 4k 100% W IOPS per interval", status="complete", stop_reason=stop_reason,
                purge=PurgeRecord("auto", "ata-secure-erase", 30.0, True, "hdparm ...", ""),
                series={SERIES: series},
                params={"interval": "60", "steady_stop": "true", "steady_spacing": str(spacing_s),
                        "time_limit": "86400", "tgbw": "4x"})
    t.steady = spaced_steady(series.column("iops"), every, 5)
    return RunResult(name="r", started="", device=BLOCK, host=HostInfo(), options=opts, status="complete",
                     tests=[t])


def test_wsat_stopped_by_the_pts_steady_rule_is_conformant():
    # 5 points 30 min apart end at interval 150 or later: read as rounds, always "after round 25"
    run = wsat_run(30 * 60, 300, "steady state (20/10 on 5 points 30 min apart)")
    (t,) = run.tests
    assert t.steady.steady and t.steady.last_round == 300 > conformance.PTS_MAX_ROUNDS
    c = conformance.of_run(run)
    assert c.conformant, c.deviations
    assert not conformance.late_window(t)  # read as rounds, the window would end "after round 25"
    from tkperf.report import summary

    (entry,) = summary.as_dict(run)["tests"]
    assert entry["steady"] is True and entry["pts_steady"] is True and entry["stop_reason"].startswith("steady")
    assert _steady_words(t, 5).endswith("reached in intervals 151-300")


def test_wsat_steady_stop_on_other_points_is_its_one_deviation():
    run = wsat_run(60, 300, "steady state (20/10 on 5 points 60 s apart)")
    assert conformance.of_run(run).deviations == (
        "wsat: stopped at steady state judged on points 60 s apart, not the PTS's 5 points 30 min apart "
        "(an early stop can hide a later write cliff)",)


def test_a_steady_stop_the_stored_figures_do_not_hold_is_not_called_steady():
    # what the stream records when fio's final report, merged into the deciding interval, undoes 20/10
    reason = (f"{UNHELD} (20/10 on 5 points 30 min apart) on interval 300 as first measured; with fio's "
              "final report merged into it, the stored points are not steady")
    run = wsat_run(30 * 60, 300, reason, last_point_iops=4000.0)
    (t,) = run.tests
    assert not t.steady.steady
    assert conformance.of_run(run).deviations == (
        "wsat: stopped before 24 h or 4x the capacity written for a steady state that its stored figures do "
        "not hold (fio's final report, merged into the last interval, changed it)",)
    assert _steady_words(t, 5).endswith("not reached")


@pytest.mark.parametrize("reason", ["time limit", "TGBW reached (1600.00 GB)"])
def test_a_wsat_that_ran_to_its_limits_is_not_judged_by_its_window(reason):
    run = wsat_run(30 * 60, 300, reason)
    assert conformance.of_run(run).conformant


# --- item 8: imported WSATs of the original TKperf replay one LBA sequence ------------------------

def test_an_imported_tkperf_wsat_is_said_to_measure_no_cliff(tmp_path, capsys):
    import json
    import os

    from tkperf import store
    from tkperf.cli import main
    from tkperf.report import summary

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tkperf2", "ssd-2.2-apacer.xml")
    run = store.load(path)
    said = conformance.imported_caveats(run)
    assert said == [conformance.REPLAYED_ROUNDS.format(key="iops"), conformance.REPLAYED_ROUNDS.format(key="lat"),
                    conformance.REPLAYED_WSAT.format(key="wsat")]
    wsat = said[-1]
    assert wsat.startswith("wsat: the original TKperf's WSAT measures no write cliff") and "randrepeat=1" in wsat
    # the import, the terminal, the JSON and the report
    assert main(["import", path, "-o", str(tmp_path / "imported.xml")]) == 0
    assert f"  warning: {wsat}" in capsys.readouterr().out
    assert main(["show", path]) == 0
    assert wsat in capsys.readouterr().out
    assert main(["show", path, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert wsat in shown["conformance"]["deviations"] and wsat in shown["imported"]["warnings"]
    assert main(["report", path, "--format", "rst", "--outdir", str(tmp_path), "-q"]) == 0
    (rst,) = tmp_path.glob("*.rst")
    text = " ".join(rst.read_text().split())
    assert "Imported result, wsat: the original TKperf's WSAT measures no write cliff" in text
    # tkperf's own runs carry no such words
    own = wsat_run(30 * 60, 300, "time limit")
    assert conformance.imported_caveats(own) == [] and "warnings" not in summary.as_dict(own).get("imported", {})
    # an imported file without a WSAT or a random-write test of rounds: nothing to say of it
    tp_only = store.load(path)
    tp_only.tests = [t for t in tp_only.tests if t.type == "tp"]
    assert conformance.imported_caveats(tp_only) == []


# --- item 3: the PTS-C 1.1 test range as 2,048 ActiveRange segments ------------------------------
# (the layout, the map and the refusals: tests/unit/test_ar_segments.py, tests/e2e/test_ar_segments_device.py,
# the device-mapper map itself in the QEMU guest: tests/vm/test_vm.py)

def test_the_pts_c_1_1_test_range_is_its_segments_and_one_span_is_a_deviation(tmp_path, capsys):
    from tkperf.cli import main
    from tkperf.report import header

    opts = build({"tests": ("iops", "tp", "lat")}, pts="pts-c-1.1").to_dict()
    assert conformance.of_settings(opts, BLOCK).conformant  # the revision's defaults: the whole range
    given = {"tests": ("iops", "tp", "lat"), "active_range": 80, "test_range": 8 << 30}
    ranged = build(given, pts="pts-c-1.1").to_dict()  # the revision's 2,048 segments by default
    assert ranged["ar_segments"] == "2048" and int(ranged["ar_segment_seed"]) > 0
    assert conformance.of_settings(ranged, BLOCK).conformant
    span = build({**given, "ar_segments": 1}, pts="pts-c-1.1").to_dict()
    assert "ar_segments" not in span and "ar_segment_seed" not in span  # stored as before segments existed
    assert conformance.of_settings(span, BLOCK).deviations == (
        "the test range is one span at the start of the LBA range, not the 2,048 ActiveRange segments spread "
        "randomly across the active range that SNIA PTS-C 1.1 defines for IOPS, TP and LAT",)
    fewer = build({**given, "ar_segments": 64}, pts="pts-c-1.1").to_dict()
    assert conformance.of_settings(fewer, BLOCK).deviations == (
        "the test range is 64 ActiveRange segments, not the 2,048 ActiveRange segments spread "
        "randomly across the active range that SNIA PTS-C 1.1 defines for IOPS, TP and LAT",)
    # the SNIA header's "AR Segments" field: N/A over the whole active range, one span, or the segments
    run = RunResult(name="r", started="", device=BLOCK, host=HostInfo(), options=span, tests=[])
    fields = dict(header.setup_fields(run, TestRun("iops", "iops", "", "", "")))
    assert fields["AR Segments"].startswith("1: one contiguous span at the start of the LBA range")
    assert "over the first 8 GiB" in fields["Active range"]
    run.options = ranged
    fields = dict(header.setup_fields(run, TestRun("iops", "iops", "", "", "")))
    assert fields["AR Segments"] == (f"2,048 of 4 MiB spread randomly across the active range (seed "
                                     f"{ranged['ar_segment_seed']}; none touching; one device-mapper linear map)")
    assert fields["Active range"] == "80% preconditioning; tests over 8 GiB in ActiveRange segments (--test-range)"
    run.options = opts
    assert dict(header.setup_fields(run, TestRun("iops", "iops", "", "", "")))["AR Segments"].startswith("N/A")
    # the dry run says it too (one span: a file target cannot be mapped)
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", "20g", "--dry-run", "--pts", "pts-c-1.1",
                 "--tests", "iops", "--active-range", "80", "--test-range", "8g", "--ar-segments", "1"]) == 0
    assert "not the 2,048 ActiveRange segments" in capsys.readouterr().out


# --- item 9: minor labels ---------------------------------------------------------------------------------

def test_mixed_sweep_tracking_says_which_iops_and_round_1_follows_the_wdpc():
    import os

    from tkperf import store
    from tkperf.pts.sweep.header import _mixed_tracking
    from tkperf.report import summary, words

    golden = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "golden", "inputs")
    cbw = store.load(os.path.join(golden, "cbw.xml"))
    (t,) = cbw.tests
    assert _mixed_tracking(t).startswith("; read + write IOPS")
    assert "judges the point's write IOPS" in _mixed_tracking(t)
    assert words.round1_after(t) == "after WIPC and WDPC"  # PTS 2.0 CBW: the WDPC ran before round 1
    assert any("round 1, after WIPC and WDPC (not FOB)" in ln for ln in summary.lines(cbw))
    dirth = store.load(os.path.join(golden, "dirth.xml")).tests[0]
    assert _mixed_tracking(dirth) == ""  # RND 4k 0/100: write IOPS are the IOPS
    iops = store.load(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "example-ssd.xml")).test("iops")
    assert words.round1_after(iops) == "after WIPC"
