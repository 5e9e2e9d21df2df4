"""XSR (cross-stimulus recovery): transitions, levels and settle times on recorded fio output (tests/data/xsr,
see its README) replayed through the loop shape; the definitions on made-up series; options, plans, stored
data; the test end to end on a loop device (result data, report and comparison sections, ``show --json``)."""
from __future__ import annotations

import glob
import json
import os
import statistics
from dataclasses import replace

import numpy as np
import pytest

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine.runner import Runner
from tkperf.errors import EXIT_USAGE, Interrupted, UsageError
from tkperf.fio.backend import FioBackend
from tkperf.fio.output import json_objects
from tkperf.kit import options
from tkperf.kit.registry import get
from tkperf.kit.rules import steps_of
from tkperf.model import pts
from tkperf.model.results import DeviceInfo, HostInfo, PurgeRecord, RunResult, TestRun
from tkperf.model.series import Series
from tkperf.render import blocks as b
from tkperf.report.context import ReportContext
from tkperf.report.generic import view_of
from tkperf.testtypes.xsr import JOB_NAMES, LABELS, CrossStimulusRecoveryTest, view
from tkperf.testtypes.xsr.analysis import analyse, level, settle, smoothed, window_rows
from tkperf.testtypes.xsr.stream import COLUMNS, SERIES, XsrStream

KIND = CrossStimulusRecoveryTest()
KINDS = ("seq1", "rnd", "seq2")
MiB = 1024 * 1024


def reports(kind: str) -> list:
    return [obj for obj, _ in json_objects(open(data_path(f"xsr/{kind}-status.json")).read())]


def raw_intervals(kind: str):
    """(fio seconds, MB/s) of every 1 s interval of a recorded phase, from the
    reports' running totals, the short last report merged into the interval
    before it (as the interval cutter does), without tkperf's code."""
    marks = [(0.0, 0.0)]
    for r in reports(kind):
        (job,) = r["jobs"]
        ms, done = float(job["write"]["runtime"]), float(job["write"]["io_bytes"])
        if ms > marks[-1][0]:
            marks.append((ms, done))
    if len(marks) > 2 and marks[-1][0] - marks[-2][0] < 500:
        del marks[-2]
    return [((b[0] - a[0]) / 1000.0, (b[1] - a[1]) / (b[0] - a[0]) * 1000.0 / 1e6) for a, b in zip(marks, marks[1:])]


def brute_settle(seconds, values, band_pct):
    """The settle time by the words of the definition, one candidate at a time."""
    n, last = len(values), -(-len(values) // 4)  # the last quarter, rounded up
    lvl = statistics.median(values[n - last:])
    smooth = [statistics.median(values[max(0, i - 2):i + 3]) for i in range(n)]
    for k in range(n):
        if all(abs(v - lvl) <= band_pct * lvl / 100 for v in smooth[k:]):
            return sum(seconds[:k]) if k <= n - last else None
    return None


# --- the loop shape, with recorded fio output instead of fio ---------------------------------------
class RecordedFio(FioBackend):
    """Each phase replays its recorded reports; a signal after ``stop_after`` reports of ``stop_in``."""

    version = "fio-3.33 (recorded)"

    def __init__(self, stop_in: str = "", stop_after: int = 0) -> None:
        self.stop_in, self.stop_after, self.jobs = stop_in, stop_after, []

    def run(self, jobs, what, timeout=None, histograms=False):
        raise AssertionError("an XSR test runs streams only")

    def stream(self, job, interval_s, what, on_report, timeout):
        self.jobs.append(job)
        kind = next(k for k, name in JOB_NAMES.items() if name == job.name)
        for k, report in enumerate(reports(kind)):
            if job.name == self.stop_in and k == self.stop_after:
                raise Interrupted(2, "SIGINT")
            on_report(report)


def replay(tmp_path, fio: RecordedFio, band: float = 10.0):
    """The recorded phases run through XSR's own plan and shape; the result as saved."""
    opts = options.build({"tests": ("xsr",), "xsr_seq1": 12, "xsr_rnd": 12, "xsr_seq2": 12, "xsr_interval": 1,
                          "xsr_settle_band": band})
    (plan,) = KIND.plan(opts, 256 * MiB)
    device = DeviceInfo(path="/dev/recorded", resolved="/dev/recorded", kind="block", size_bytes=256 * MiB)
    run = RunResult(name="r", started="", device=device, host=HostInfo(), options=opts.to_dict())
    runner = Runner(run=run, opts=opts, device=device, fio=fio, xml_path=str(tmp_path / "r.xml"))
    test = TestRun("xsr", "xsr", "", "", "", params=dict(plan.params))
    run.tests.append(test)
    try:
        plan.shape.run(runner, plan, test)
        test.status = "complete"
    except Interrupted:
        test.status = "interrupted"
    runner.save()
    runner.writer.close()
    return store.load(str(tmp_path / "r.xml")).tests[0]


def test_recorded_phases_and_transitions(tmp_path):
    fio = RecordedFio()
    t = replay(tmp_path, fio)
    assert [j.name for j in fio.jobs] == [JOB_NAMES[k] for k in KINDS]
    assert [(j.rw, j.bs, j.numjobs, j.iodepth) for j in fio.jobs] == \
        [("write", MiB, 1, 32), ("randwrite", 8192, 1, 32), ("write", MiB, 1, 32)]
    assert t.stop_reason == "all phases run" and [t.data[f"phase.{i}.kind"] for i in (1, 2, 3)] == list(KINDS)
    view_of(KIND).check_data(t)
    raw = {k: raw_intervals(k) for k in KINDS}
    assert [len(raw[k]) for k in KINDS] == [12, 12, 12]  # 12 s at 1 s; fio's short last report merged
    s, a = t.series[SERIES], analyse(t)
    assert s.column("phase").tolist() == [1.0] * 12 + [2.0] * 12 + [3.0] * 12
    assert a.mb_s.tolist() == pytest.approx([mb for k in KINDS for _, mb in raw[k]], rel=1e-9)
    # The transitions: where the phase before ended on fio's clock (its final report's run time).
    ends = [reports(k)[-1]["jobs"][0]["write"]["runtime"] / 1000.0 for k in KINDS]
    assert [p.begin_s for p in a.phases] == pytest.approx([0.0, ends[0], ends[0] + ends[1]])
    assert a.end_s[-1] == pytest.approx(sum(ends))
    levels = {k: statistics.median([mb for _, mb in raw[k][-3:]]) for k in KINDS}  # the last quarter: 3 of 12
    f = {x.key: x for x in KIND.headline(t)}
    assert [f[f"{k}_level_mb_s"].value for k in KINDS] == pytest.approx([levels[k] for k in KINDS])
    assert f["seq_recovery_pct"].value == pytest.approx(levels["seq2"] / levels["seq1"] * 100)
    assert f["rnd_level_iops"].value == pytest.approx(statistics.median(s.column("iops")[21:24]))
    assert {k: x.better for k, x in f.items()} == {
        "seq1_level_mb_s": "higher", "rnd_level_mb_s": "higher", "rnd_level_iops": "higher",
        "seq2_level_mb_s": "higher", "seq_recovery_pct": "higher", "rnd_settle_s": "lower", "seq2_settle_s": "lower"}
    (fob,) = steps_of(KIND).fob(KIND.headline, replace(t, purge=PurgeRecord(requested="auto", method="discard",
                                                                            seconds=0.1, pts_purge=False)))
    assert (fob.key, fob.value) == ("seq1_level_mb_s", pytest.approx(raw["seq1"][0][1]))
    assert steps_of(KIND).fob(KIND.headline, t) == []  # no purge recorded: no FOB
    assert view_of(KIND).summary(t)["seq_write_mb_s"].value == pytest.approx(levels["seq1"])


@pytest.mark.parametrize("band, rows, seconds", [  # the answers written in tests/data/xsr/README.rst
    (10.0, [0, 0, 0], [0.0, 0.0, 0.0]),             # within 10% from the first interval
    (5.0, [4, 0, 5], [3.875, 0.0, 4.876]),
    (3.0, [4, 5, None], [3.875, 4.897, None]),       # SEQ 2 did not settle
])
def test_recorded_settle_times(tmp_path, band, rows, seconds):
    t = replay(tmp_path, RecordedFio(), band)
    a = analyse(t)
    assert [p.settle.row for p in a.phases] == rows
    for k, p, want in zip(KINDS, a.phases, seconds):
        assert brute_settle(*zip(*raw_intervals(k)), band) == (None if want is None else pytest.approx(want))
        assert p.settle.time_s == (None if want is None else pytest.approx(want))
    f = {x.key: x.value for x in KIND.headline(t)}
    for k, want in zip(("rnd", "seq2"), seconds[1:]):
        assert f.get(f"{k}_settle_s") == (None if want is None else pytest.approx(want))


def test_interrupted_run_keeps_the_phases_before(tmp_path):
    t = replay(tmp_path, RecordedFio(stop_in=JOB_NAMES["seq2"], stop_after=5))
    phases = t.series[SERIES].column("phase").tolist()
    assert t.status == "interrupted" and phases == [1.0] * 12 + [2.0] * 12 + [3.0] * 5
    seq2 = analyse(t).of("seq2")  # a phase cut short has no last quarter: no figures
    assert not seq2.complete and seq2.level_mb_s is None and not seq2.settle.settled
    assert {x.key for x in KIND.headline(t)} == {"seq1_level_mb_s", "rnd_level_mb_s", "rnd_level_iops", "rnd_settle_s"}


# --- the definitions, on made-up series --------------------------------------------------------------
def test_level_window_level_and_smoothing():
    assert [window_rows(n) for n in (0, 1, 2, 4, 5, 8, 9, 480, 360)] == [0, 1, 1, 1, 2, 2, 3, 120, 90]
    assert level(np.array([1.0, 2, 3, 4, 5, 6, 7, 100])) == 53.5  # median of the last 2 of 8
    assert level(np.array([9.0, 1, 5, 3])) == 3.0 and level(np.zeros(0)) is None
    assert smoothed(np.array([1.0, 9, 2, 8, 3, 7])).tolist() == [2.0, 5.0, 3.0, 7.0, 5.0, 7.0]
    assert smoothed(np.array([4.0])).tolist() == [4.0] and smoothed(np.zeros(0)).size == 0
    # The settle time adds up the intervals' own lengths.
    got = settle(np.array([10.0, 20, 100, 100, 100, 100, 100, 100]), np.array([0.5, 1.5, 1, 1, 1, 1, 1, 1]), 100, 10)
    assert (got.row, got.time_s) == (2, 2.0)


@pytest.mark.parametrize("values, band, row, seconds", [
    ([100, 100, 100, 100], 10, 0, 0.0),            # within the band from the start
    # smoothed: 150 130.5 111 100 ...: 111 is out (11%), 100 in
    ([300, 150, 111, 90, 100, 100, 100, 100], 10, 3, 3 * 60.0),
    ([100] * 5 + [120] + [100] * 2, 10, 0, 0.0),   # one stray interval is smoothed away
    ([100] * 4 + [120, 120] + [100] * 6, 10, 0, 0.0),  # so are two
    ([100] * 5 + [120, 120, 120] + [100] * 4, 10, 8, 8 * 60.0),  # three in a row move the median: settled after
    ([100] * 6 + [150, 150], 10, None, None),      # the last quarter leaves the band: did not settle
    ([100] * 7 + [150], 10, None, None),           # level 125: nothing is within 10% of it
    ([100] * 7 + [150], 40, 0, 0.0),               # a wider band
    ([90, 90, 90, 100, 100, 100, 100, 100], 10, 0, 0.0),  # 90 is exactly 10% below: the edge counts as in
    ([50.0], 10, 0, 0.0),
])
def test_settle_definition(values, band, row, seconds):
    v = np.array(values, dtype=float)
    got = settle(v, np.full(v.size, 60.0), level(v), band)
    assert (got.row, got.time_s, got.settled) == (row, seconds, row is not None)


def made_up(phases, status="complete", interval=60, band="10") -> TestRun:
    """A made-up test: per phase, a list of MB/s per ``interval`` seconds."""
    rows = []
    for index, values in enumerate(phases, 1):
        for v in values:
            bs = 8192 if index == 2 else MiB
            rows.append([interval, interval, v * 1e6 * interval / bs, v * 1e6 * interval, v * 1e6 / bs, 900.0, 0,
                         index])
    data = {}
    for i, k in enumerate(KINDS[:len(phases)], 1):
        data.update({f"phase.{i}": LABELS[k], f"phase.{i}.kind": k})
    return TestRun("xsr", "xsr", "", "", "", params={"interval": str(interval), "settle_band_pct": band},
                   series={SERIES: Series.from_rows(SERIES, COLUMNS, np.array(rows, dtype=float))}, data=data,
                   status=status)


def test_headline_of_a_made_up_run():
    t = made_up([[800, 1000, 1000, 1000], [900, 400, 250, 200, 200, 200, 200, 200],
                 [300, 500, 700, 950, 940, 950, 950, 950]])
    f = {x.key: x.value for x in KIND.headline(t)}
    assert f == pytest.approx({"seq1_level_mb_s": 1000.0, "rnd_level_mb_s": 200.0, "rnd_level_iops": 200e6 / 8192,
                               "seq2_level_mb_s": 950.0, "seq_recovery_pct": 95.0, "rnd_settle_s": 180.0,
                               "seq2_settle_s": 180.0})
    assert [p.begin_s for p in analyse(t).phases] == [0.0, 240.0, 720.0] and analyse(t).phases[0].settle.time_s == 0
    t = made_up([[1000] * 4, [200] * 7 + [205], [950] * 4], band="1")  # RND never within 1%: no figure for it
    f = {x.key: x.value for x in KIND.headline(t)}
    assert "rnd_settle_s" not in f and f["seq2_settle_s"] == 0.0 and f["rnd_level_mb_s"] == 202.5
    empty = TestRun("xsr", "xsr", "", "", "", series={SERIES: Series(SERIES, COLUMNS)})
    assert KIND.headline(empty) == [] and steps_of(KIND).fob(KIND.headline,
                                                             empty) == [] and view_of(KIND).summary(empty) == {}


def cells(blocks) -> str:
    """Every table row (cells joined by ' | '), paragraph and heading of ``blocks``, one a line."""
    rows = [" | ".join(r) for x in blocks if isinstance(x, b.Table) for r in x.rows]
    return "\n".join(rows + [x.text for x in blocks if isinstance(x, (b.Paragraph, b.Heading))])


def test_report_section_on_a_made_up_run():
    """RND settles after 3 of 8 intervals, SEQ 2 does not settle (its last quarter leaves the band)."""
    t = made_up([[800, 1000, 1000, 1000], [900, 400, 250, 200, 200, 200, 200, 200],
                 [300, 500, 700, 950, 950, 950, 950, 700]])
    t.purge = PurgeRecord(requested="auto", method="discard", seconds=0.1, pts_purge=False)
    device = DeviceInfo(path="/dev/x", resolved="/dev/x", kind="block", size_bytes=256 * MiB)
    run = RunResult(name="r", started="", device=device, host=HostInfo(), options=build().to_dict(), tests=[t])
    blocks = view.report_section(ReportContext(run), [t])
    charts = {c.filename: c.spec for c in b.charts(blocks)}
    assert set(charts) == {"xsr-throughput.png", "xsr-transition-rnd.png", "xsr-transition-seq2.png"}
    overall = charts["xsr-throughput.png"]
    assert overall.time_axis and overall.vlines == (("RND starts", 240.0), ("SEQ 2 starts", 720.0))
    phases, lvl = overall.curves[:3], overall.curves[3]
    assert [c.y.tolist() for c in phases] == [[800, 1000, 1000, 1000], [900, 400, 250, 200, 200, 200, 200, 200],
                                              [300, 500, 700, 950, 950, 950, 950, 700]]
    assert [c.x.tolist() for c in phases][1] == [300.0, 360.0, 420.0, 480.0, 540.0, 600.0, 660.0, 720.0]
    # Each level spans its phase's last quarter: SEQ 1 interval 4, RND 7-8, SEQ 2 7-8 (median 825).
    assert np.array_equal(lvl.x, [180, 240, np.nan, 600, 720, np.nan, 1080, 1200], equal_nan=True)
    assert np.array_equal(lvl.y, [1000, 1000, np.nan, 200, 200, np.nan, 825, 825], equal_nan=True)
    rnd = charts["xsr-transition-rnd.png"]
    assert rnd.curves[0].x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0] and "minutes" in rnd.xlabel
    assert [v for _, v in rnd.hlines] == pytest.approx([220.0, 200.0, 180.0])
    assert rnd.vlines == (("settled after 3.0 min", 3.0),)
    seq2 = charts["xsr-transition-seq2.png"]
    assert seq2.vlines == () and [v for _, v in seq2.hlines] == pytest.approx([907.5, 825.0, 742.5])
    text = cells(blocks)
    for line in ("RND settled after | 180 | s | lower", "SEQ 2 settled after | did not settle | s | lower",
                 "2: RND 8KiB W | 8 | 8.0 min | 900.0 | 200.0 | 24,414 | 200.0 - 900.0 | 3.0 min (interval 4)",
                 "1: SEQ 1024KiB W (1) | 4 | 4.0 min | 800.0 | 1,000.0 | 954 | 800.0 - 1,000.0 | 0 s (from its first",
                 "SEQ 1 -> RND | 4.0 min | 1,000.0 | 900.0 (450% of the new level) | 200.0 | 3.0 min (interval 4)",
                 "RND -> SEQ 2 | 12.0 min | 200.0 | 300.0 (36% of the new level) | 825.0 | did not settle",
                 "SEQ 1 first interval (FOB) | 800.0 | MB/s | higher",
                 "SEQ 2 | 8 | 8.0 min | 700.0 | 700.0 | 700.0 | 668"):
        assert line in text, line
    assert "of every interval of the phase stays within ±10% of the phase's level" in text


# --- options, plans, stored data -------------------------------------------------------------------
def build(quick=False, **given):
    return options.build({"tests": ("xsr",), **given}, quick=quick)


def test_plans():
    (plan,) = KIND.plan(build(), 1 << 30)
    shape = plan.shape
    assert isinstance(shape, XsrStream) and not plan.wipc and plan.tracking is None and shape.interval_s == 60
    assert [(p.kind, p.job.rw, p.job.bs, p.job.numjobs, p.job.iodepth, p.job.runtime) for p in shape.phases] == [
        ("seq1", "write", MiB, 1, 32, 8 * 3600), ("rnd", "randwrite", 8192, 1, 32, 6 * 3600),
        ("seq2", "write", MiB, 1, 32, 8 * 3600)]
    assert [plan.params[k] for k in ("numjobs", "iodepth", "interval", "settle_band_pct")] == ["1", "32", "60", "10"]
    est = shape.estimate(build(), 1 << 30)  # --dry-run
    assert "3 continuous jobs, one right after the other, reported every 60 s" in est.lines[0]
    assert est.low_s == est.high_s == pytest.approx(22 * 3600, abs=2) and len(est.jobs) == 3
    assert all("write_lat_log" not in dict(j.extra) for j in est.jobs)
    (plan,) = KIND.plan(build(quick=True), 1 << 30)
    assert [p.job.runtime for p in plan.shape.phases] == [10, 10, 10] and plan.shape.interval_s == 1
    (plan,) = KIND.plan(build(xsr_tc=2, xsr_qd=8, xsr_rnd=120, xsr_interval=5, xsr_settle_band=12.5), 1 << 30)
    assert [(p.job.numjobs, p.job.iodepth, p.job.runtime) for p in plan.shape.phases][1] == (2, 8, 120)
    assert plan.params["settle_band_pct"] == "12.5" and {p.job.numjobs for p in plan.shape.phases} == {2}
    assert KIND.blocks(build()).largest == MiB and get("xsr") is not None and "ssd" not in KIND.default_profiles


def test_deviations():
    default = build().to_dict()
    assert KIND.pts.deviations(KIND, default, pts.get("pts-e-1.1")) == []
    assert KIND.pts.deviations(KIND, default, pts.get("pts-c-1.1")) == ["XSR is a PTS-E test, not part of PTS-C 1.1"]
    quick = build(quick=True, xsr_qd=16).to_dict()
    assert KIND.pts.deviations(KIND, quick, pts.get("pts-e-2.0")) == [
        "XSR phases run SEQ 1024KiB W 10 s, RND 8KiB W 10 s, SEQ 1024KiB W 10 s instead of 8 h, 6 h and 8 h",
        "XSR reports every 1 s instead of every 60 s", "XSR runs at TC1/QD16 instead of TC1/QD32"]


@pytest.mark.parametrize("argv, words", [
    (["--xsr-seq1", "0"], "--xsr-seq1 '0' must be longer than 0"),
    (["--xsr-rnd", "soon"], "is not a duration"),
    (["--xsr-seq2", "367d"], "--xsr-seq2 31708800 is out of range"),
    (["--xsr-interval", "2h"], "--xsr-interval 7200 is out of range (1..3600)"),
    (["--xsr-qd", "0"], "--xsr-qd 0 is out of range (1..4096)"),
    (["--xsr-tc", "two"], "--xsr-tc 'two' is not a whole number"),
    (["--xsr-settle-band", "100"], "--xsr-settle-band '100' is out of range"),
    (["--xsr-settle-band", "ten"], "--xsr-settle-band 'ten' is not a percentage"),
])
def test_bad_options(argv, words, tmp_path, capsys):
    rc = main(["ssd", "run", str(tmp_path / "no-device"), "--tests", "xsr", "--yes", *argv])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_USAGE and words in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_options_round_trip_and_stored_data():
    with pytest.raises(UsageError, match="--xsr-rnd belongs to a test that is not among --tests"):
        options.build({"tests": ("wsat",), "xsr_rnd": 60})
    opts = build(xsr_settle_band=7.5, xsr_interval=30)
    assert options.RunOptions.from_dict(opts.to_dict()) == opts and opts.to_dict()["xsr_settle_band"] == "7.5"
    view_of(KIND).check_data(made_up([[100] * 4, [50] * 4, [100] * 4]))
    swapped = np.array([[1, 1, 1, 1, 1, 1, 0, p] for p in (1, 3, 2)], dtype=float)
    cases = [
        (TestRun("xsr", "xsr", "", "", "", series={SERIES: Series(SERIES, ("a",))}), "has columns a"),
        (TestRun("xsr", "xsr", "", "", "", series={"extra": Series("extra", ("a",))}), "unknown series extra"),
        (TestRun("xsr", "xsr", "", "", "", series={SERIES: Series.from_rows(SERIES, COLUMNS, swapped)}),
         "number the phases 1, 2, 3 in order"),
        (TestRun("xsr", "xsr", "", "", "", data={"phase.1.kind": "rnd"}), "the phases are rnd, None, None"),
    ]
    for test, words in cases:
        with pytest.raises(ValueError, match=words):
            view_of(KIND).check_data(test)


# --- end to end on a loop device -------------------------------------------------------------------
def pngs(directory, name):
    found = {os.path.basename(p): os.path.getsize(p) for p in glob.glob(str(directory / f"{name}-plots" / "*.svg"))}
    assert all(size > 5000 for size in found.values()), found
    return set(found)


@needs_fio
def test_xsr_end_to_end(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["ssd", "run", loopdev, "--tests", "xsr", "--dry-run", "--jobs", "--xsr-seq1", "4s", "--xsr-rnd", "4s",
                 "--xsr-seq2", "4s", "--xsr-interval", "1s"]) == 0
    dry = capsys.readouterr().out
    assert "3 continuous jobs, one right after the other, reported every 1 s" in dry and "[xsr-rnd-8k-w]" in dry
    assert main(["ssd", "run", loopdev, "--tests", "xsr", "--quick", "--yes", "--quiet", "--name", "x1",
                 "--outdir", str(out), "--report-format", "rst,html", "--xsr-seq1", "4s", "--xsr-rnd", "4s",
                 "--xsr-seq2", "4s"]) == 0
    (t,) = store.load(str(xml := out / "x1.xml")).tests
    assert (t.type, t.status, t.stop_reason, t.wipc) == ("xsr", "complete", "all phases run", None)
    assert t.purge is not None and t.purge.method not in ("", "none")
    view_of(KIND).check_data(t)
    s = t.series[SERIES]
    # 4 s at 1 s: 4 intervals, 3 when a short tail was merged; fio's reports
    # come late on a loaded host, so the count is not held, fio's own time is
    phase = s.column("phase")
    assert all(np.count_nonzero(phase == i) >= 2 for i in (1, 2, 3))
    for i in (1, 2, 3):
        assert s.column("fio_s")[phase == i].sum() == pytest.approx(4.0, abs=0.25), i
    assert np.all(s.column("io_bytes") > 0) and np.all(s.column("read_ios") == 0)
    assert s.column("fio_s").sum() == pytest.approx(12.0, abs=0.5)
    # Per I/O: 1 MiB in the SEQ phases, 8 KiB in the RND phase.
    per_io = s.column("io_bytes") / s.column("ios")
    assert np.all(np.abs(per_io[phase == 2] - 8192) < 0.05 * 8192)
    assert np.all(np.abs(per_io[phase != 2] - MiB) < 0.1 * MiB)
    log = (out / "x1.log").read_text()
    for line in ("[xsr-seq-1024k-w-1]", "[xsr-rnd-8k-w]", "[xsr-seq-1024k-w-2]", "rw=randwrite", "bs=8k", "bs=1024k",
                 "iodepth=32", "--status-interval=1"):
        assert line in log, line
    assert "write_lat_log" not in log
    capsys.readouterr()
    assert main(["show", str(xml), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["tests"]
    a = analyse(t)
    want = {**{f"{k}_level_mb_s": a.level_of(k) for k in KINDS}, "seq_recovery_pct": a.recovery_pct()}
    assert all(v > 0 for v in want.values()) and {k: shown["headline"][k] for k in want} == pytest.approx(want)
    for kind in ("rnd", "seq2"):  # a noisy loop device may not settle within 10%: then no figure
        got = a.of(kind).settle
        assert shown["headline"].get(f"{kind}_settle_s") == (pytest.approx(got.time_s) if got.settled else None)
    assert shown["fob"] == {"seq1_level_mb_s": pytest.approx(a.phases[0].first_mb_s)}
    assert pngs(out, "x1") == {"xsr-throughput.svg", "xsr-transition-rnd.svg", "xsr-transition-seq2.svg"}
    rst = (out / "x1.rst").read_text()
    for words in ("Cross Stimulus Recovery", "XSR figures", "Settle time: the time from the start of a phase",
                  "the median of the 5 intervals centred on it", "Throughput across the transitions",
                  "The transitions", "SEQ 1 -\\> RND", "Every phase", "Throughput per interval", "SEQ 2 / SEQ 1",
                  "none: XSR starts from the purge"):
        assert words in rst, words
    store.save(replace(store.load(str(xml)), name="x2"), str(tmp_path / "x2.xml"))  # the same run, renamed
    assert main(["compare", str(xml), str(tmp_path / "x2.xml"), "--format", "rst,html", "--outdir",
                 str(tmp_path / "cmp"), "--name", "cmp", "--quiet"]) == 0
    cmp = (tmp_path / "cmp" / "cmp.rst").read_text()
    for words in ("Cross Stimulus Recovery", "headline figures, side by side", "SEQ 2 level", "XSR phases of every run",
                  "the red lines mark the transitions"):
        assert words in cmp, words
    assert pngs(tmp_path / "cmp", "cmp") >= {"xsr-throughput.svg"}
