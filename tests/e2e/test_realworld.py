"""The real-world workload tests (issue 38, part 2): replay, rwsw-wsat and
rwsw-dirth on capture files, with real fio on loop devices the tests make.

The captures are inputs written with tkperf.rwsw.model from known streams
(tests/lab/rwsw_captures.py); what the drive delivered is read from fio's own
report of every stream job (share of the I/Os, and mean outstanding I/Os
by Little's law: IOPS x mean response time)."""
from __future__ import annotations

import errno
import io
import math
import os

import pytest

import rwsw_captures
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_RESULT_FILE, EXIT_USAGE, ResultFileError
from tkperf.rwsw import iolog, model
from tkperf.testtypes.realworld import applied
from tkperf.testtypes.realworld.delivered import BLOCK, steps
from tkperf.verdict import conformance

MiB = 1 << 20


# --- the translation, without fio ------------------------------------------------------------

def test_one_job_holds_the_dominant_streams():
    streams = model.dominant(rwsw_captures.capture().streams, 0.8)
    mix = applied.mixed_job(streams)
    reads = sum(s.share for s in streams if s.rw == "read")
    assert mix.rwmixread == round(100 * reads)
    rsplit, wsplit = mix.bssplit.split(",")
    assert sum(int(p.split("/")[1]) for p in rsplit.split(":")) == 100
    assert sum(int(p.split("/")[1]) for p in wsplit.split(":")) == 100
    assert mix.largest == max(s.bs for s in streams) and mix.smallest == min(s.bs for s in streams)


def test_flow_weights_and_depths():
    assert applied.weights([model.Stream("random", "read", 4096, 7, 0.7, 0.1),
                            model.Stream("sequential", "write", 65536, 3, 0.3, 0.9)]) == (700, 300)
    assert applied.spread([1.0, 3.0], 8) == (2, 6)
    assert sum(applied.spread([0.2, 0.5, 0.3], 10)) == 10
    # one calibration run: scaled in proportion; two: along the line through both
    assert applied.total_depth(4.0, [(4.0, 3.0)]) == pytest.approx(16 / 3)
    assert applied.total_depth(4.0, [(4.0, 3.0), (6.0, 5.0)]) == pytest.approx(5.0)


def test_iolog_is_mapped_into_the_targets_range(tmp_path):
    path = rwsw_captures.write_with_iolog(str(tmp_path), n=500)
    cap = model.load(path)
    out = io.StringIO()
    span = 64 * MiB
    m = iolog.map_iolog(iolog.iolog_path(path, cap.iolog), out, "/dev/target", span)
    lines = out.getvalue().splitlines()
    assert lines[0] == iolog.HEADER and lines[1] == "0 /dev/target add" and lines[-1].endswith("close")
    ios = [ln.split() for ln in lines if ln.split()[2] in ("read", "write")]
    assert len(ios) == m.ios == 500 and (m.reads, m.writes) == (350, 150)
    assert all(p[1] == "/dev/target" and int(p[3]) + int(p[4]) <= span for p in ios)
    assert m.moved > 0  # reads anywhere on 1 GiB: most land beyond 64 MiB and wrap
    writes = [int(p[3]) for p in ios if p[2] == "write"]
    assert writes == sorted(writes) and writes[1] - writes[0] == 65536  # sequential stays sequential


@pytest.mark.parametrize("text", ["fio version 2 iolog\n", "fio version 3 iolog\n0 f read 12 x\n",
                                  "fio version 3 iolog\n5 f read 0 4096\n1 f read 0 4096\n",
                                  "fio version 3 iolog\n0 f erase 0 4096\n"])
def test_a_bad_iolog_is_refused_in_one_line(tmp_path, text):
    src = tmp_path / "bad.iolog"
    src.write_text(text)
    with pytest.raises(ResultFileError) as exc:
        iolog.map_iolog(str(src), io.StringIO(), "/dev/target", 64 * MiB)
    assert "\n" not in str(exc.value)


# --- bad input --------------------------------------------------------------------------------

def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("content, words", [(None, "No such file"), (b"<tkperf-capture version='1'>",
                                                                        "cut short"),
                                             (b"<other/>", "not a tkperf capture")])
def test_missing_or_corrupt_capture_is_one_line_exit_7(loopdev, tmp_path, capsys, content, words):
    path = tmp_path / "w.xml"
    if content is not None:
        path.write_bytes(content)
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--rwsw-workload", str(path), "--dry-run"])
    assert rc == EXIT_RESULT_FILE
    assert words in _one_line(capsys)


def test_exact_replay_without_an_iolog_is_one_line_exit_2(loopdev, tmp_path, capsys):
    path = rwsw_captures.write(str(tmp_path))
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--replay", "exact", "--workload", path,
               "--dry-run"])
    assert rc == EXIT_USAGE
    assert "has no iolog" in _one_line(capsys)


@pytest.mark.parametrize("share", ["0", "0%", "150%", "-5", "lots"])
def test_streams_share_out_of_range_is_one_line_exit_2(tmp_path, capsys, share):
    path = rwsw_captures.write(str(tmp_path))
    rc = main(["ssd", "run", "/dev/null", "--tests", "rwsw-wsat", "--workload", path, "--streams-share", share,
               "--yes"])
    assert rc == EXIT_USAGE
    assert "--streams-share" in _one_line(capsys)


def test_no_workload_is_one_line_exit_2(loopdev, capsys):
    assert main(["ssd", "run", loopdev, "--tests", "rwsw-dirth", "--dry-run"]) == EXIT_USAGE
    assert "need --workload N.xml" in _one_line(capsys)


def test_workload_is_shared_with_consistency_and_the_value_says_whose(loopdev, tmp_path, capsys, monkeypatch):
    path = rwsw_captures.write(str(tmp_path))
    assert main(["ssd", "run", loopdev, "--dry-run", "--quick", "--tests", "replay,consistency",
                 "--workload", path, "--consistency-workload", "jedec"]) == 0
    out = capsys.readouterr().out
    assert "# replay " in out and "3 continuous jobs" in out  # jedec: preconditioning, write, mixed
    # a word of the consistency test's, with the capture given by its own flag
    assert main(["ssd", "run", loopdev, "--dry-run", "--quick", "--tests", "replay,consistency",
                 "--rwsw-workload", path, "--workload", "JEDEC"]) == 0
    out = capsys.readouterr().out
    assert "# replay " in out and "3 continuous jobs" in out
    # a capture's name that names no file is that: no such file (issue 60 item 4), as tkperf show says it
    for missing in (str(tmp_path / "missing.xml"), "missing.xml", "cap/app"):
        assert main(["ssd", "run", loopdev, "--dry-run", "--tests", "replay", "--workload", missing]) == \
            EXIT_RESULT_FILE
        assert _one_line(capsys) == f"tkperf: error: capture {missing}: {os.strerror(errno.ENOENT)}"
    # a word neither test knows
    assert main(["ssd", "run", loopdev, "--dry-run", "--tests", "replay", "--workload", "sequential"]) == EXIT_USAGE
    assert _one_line(capsys).endswith("--workload 'sequential': no test takes it: give rnd4k|jedec "
                                      "(consistency) or N.xml (replay, rwsw-wsat, rwsw-dirth), or use "
                                      "--consistency-workload / --rwsw-workload")
    assert main(["ssd", "run", loopdev, "--dry-run", "--tests", "replay", "--workload", path,
                 "--rwsw-workload", path]) == EXIT_USAGE
    assert "--workload and --rwsw-workload both give replay, rwsw-wsat, rwsw-dirth a value" in _one_line(capsys)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jedec").write_bytes(open(path, "rb").read())  # a capture named like the consistency workload
    assert main(["ssd", "run", loopdev, "--dry-run", "--tests", "replay", "--workload", "jedec"]) == EXIT_USAGE
    assert "--workload 'jedec': more than one test takes it" in _one_line(capsys)
    assert main(["ssd", "run", loopdev, "--dry-run", "--quick", "--tests", "replay", "--workload", "./jedec"]) == 0


def test_dry_run_shows_the_jobs(loopdev, tmp_path, capsys):
    path = rwsw_captures.write_with_iolog(str(tmp_path), n=100)
    assert main(["ssd", "run", loopdev, "--dry-run", "--quick", "--jobs", "--tests", "replay,rwsw-wsat,rwsw-dirth",
                 "--workload", path]) == 0
    out = capsys.readouterr().out
    assert "[st1-s0-rnd-4kib-read]" in out and "[st2-s2-seq-128kib-read]" in out
    # the captured intensity: step 1's RND 4K reads, 70% of 10,000 I/Os in 3 s, at 4096 bytes each per second
    assert f"rate={round(7000 / 3.0 * 4096)}" in out and "flow=" not in out and "calibration" not in out
    assert "new_group" in out and "stonewall=0" in out
    assert "bssplit=" in out and "percentage_random=" in out and "rwmixread=" in out
    assert main(["ssd", "run", loopdev, "--dry-run", "--quick", "--jobs", "--tests", "replay",
                 "--replay-intensity", "max", "--workload", path]) == 0
    out = capsys.readouterr().out
    assert "flow=700" in out and "new_group" in out and "stonewall=0" in out and "rate=" not in out
    assert main(["ssd", "run", loopdev, "--dry-run", "--jobs", "--tests", "replay", "--replay", "exact",
                 "--workload", path]) == 0
    out = capsys.readouterr().out
    assert "read_iolog=<cap.iolog mapped onto the target at run time>" in out and "100 I/Os" in out


# --- real runs ------------------------------------------------------------------------------------

def _run(loopdev, tmp_path, *args) -> store.RunResult:
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", *args])
    assert rc in (0, 1), rc  # 1: not conformant (the RWSW PTS, shortened), which the run says
    return store.load(str(out / "r.xml"))


@needs_fio
def test_replay_at_the_captured_intensity_holds_each_streams_rate_and_share(loopdev, tmp_path):
    path = rwsw_captures.write(str(tmp_path), step_s=5.0)
    run = _run(loopdev, tmp_path, "--tests", "replay", "--workload", path)
    (test,) = run.tests
    cap = model.load(path)
    figures = steps(test)
    assert [s.step for s in figures] == [1, 2] and test.params["intensity"] == "captured"
    deviations = conformance.of_run(run).deviations
    assert not [r for r in test.rounds if test.data[f"phase.{r.index}"].startswith("calibration")]
    for step, got in zip(cap.steps, figures):
        # measured the way the capture measures: the loop device's own block-layer counters
        assert got.source == BLOCK and got.qd > 0 and got.lat_mean_us > 0
        for w in test.rounds[got.step - 1].workloads:  # each stream job at its own captured rate
            stream = next(s for s in step.streams if s.key == test.params[f"stream.{w.name}"])
            assert w.iodepth == max(1, math.ceil(2 * step.qd * stream.share))
        # within 10% of the captured IOPS, or the verdict names the step with both figures
        named = [d for d in deviations if d.startswith(f"replay: step {got.step}: the drive served ")]
        above = [d for d in deviations if d.startswith(f"replay: step {got.step}: ran at ")]
        if got.iops < 0.9 * step.iops:
            assert named == [f"replay: step {got.step}: the drive served {got.iops:,.1f} IOPS against the captured "
                             f"{step.iops:,.1f} (mean response time {got.lat_mean_us:,.0f} µs against the captured "
                             f"{got.asked_lat_us:,.0f} µs, {BLOCK})"], (named, got.iops, step.iops)
        elif got.iops > 1.1 * step.iops:  # fio catching up on a late stretch beside a loaded host
            assert above == [f"replay: step {got.step}: ran at {got.iops:,.1f} IOPS, above the captured "
                             f"{step.iops:,.1f}"], (above, got.iops, step.iops)
        else:
            assert not named and not above, (got.iops, step.iops, named, above)
        replayed = {s.key: s.share for s in got.streams}
        for s in step.streams:  # shares held by the rates: within 3 points, or named
            if abs(replayed[s.key] - s.share) > 0.03:
                assert any(d.startswith(f"replay: step {got.step}: {s.key} made ") for d in deviations)
    # a step asked for ten times what the drive delivered is named, with both figures
    from tkperf.kit import registry as testtypes
    from tkperf.model.pts import REVISIONS

    kind = testtypes.get("replay")
    test.params["step.1.kept_iops"] = repr(10 * figures[0].iops)
    words = kind.pts.result_deviations(kind, test, {}, next(iter(REVISIONS.values())), 256 * MiB)
    assert any(w.startswith(f"replay: step 1: the drive served {figures[0].iops:,.1f} IOPS against the captured "
                            f"{10 * figures[0].iops:,.1f} (mean response time ") for w in words), words
    # ... and one that ran at ten times what it asked for
    test.params["step.1.kept_iops"] = repr(figures[0].iops / 10)
    words = kind.pts.result_deviations(kind, test, {}, next(iter(REVISIONS.values())), 256 * MiB)
    assert f"replay: step 1: ran at {figures[0].iops:,.1f} IOPS, above the captured {figures[0].iops / 10:,.1f}" \
        in words, words


@needs_fio
def test_replay_at_max_intensity_holds_each_steps_stream_shares_and_queue_depth(loopdev, tmp_path):
    # 5 s steps: on two cores shared with other work a 3 s step once came out outside 10% (load average 12)
    path = rwsw_captures.write(str(tmp_path), step_s=5.0)
    run = _run(loopdev, tmp_path, "--tests", "replay", "--workload", path, "--replay-intensity", "max")
    (test,) = run.tests
    cap = model.load(path)
    figures = steps(test)
    assert [s.step for s in figures] == [1, 2]
    deviations = conformance.of_run(run).deviations
    assert any("--replay-intensity max" in d for d in deviations)
    log_text = (tmp_path / "out" / "r.log").read_text()
    for step, got in zip(cap.steps, figures):
        # what tkperf controls: each stream's fio flow weight is its captured share, in thousandths
        job = log_text.split(f"fio job file for replay step {got.step}:\n", 1)[1].split(" INFO run: ", 1)[0]
        flows = [int(line[5:]) for line in job.splitlines() if line.startswith("flow=")]
        assert flows == [round(1000 * s.share) for s in step.streams], (got.step, flows)
        # what fio's flow control made of them, counted by fio: every dominant stream within 3 points of the
        # capture's own share, or the verdict names it with both figures (a loop device swamped by other work
        # once served a 5 s step's 8 KiB writes at 213 ms each, and the 50% stream made 32.8%)
        replayed = {s.key: s for s in got.streams}
        for key in {s.key for s in model.dominant(step.streams, 0.8)}:
            x = replayed[key]
            raw = next(s.share for s in step.streams if s.key == key)  # every stream ran: its share among them
            assert x.asked_share == pytest.approx(raw)
            named = [d for d in deviations if d.startswith(f"replay: step {got.step}: {key} made ")]
            if abs(x.share - raw) <= 0.03:
                assert not named, named
            else:
                assert named == [f"replay: step {got.step}: {key} made {100 * x.share:.1f}% of the replayed I/Os "
                                 f"against the captured {100 * raw:.1f}% of the streams that ran"], \
                    (named, x.share, raw)
        assert got.iops > 0 and got.lat_mean_us > 0 and got.source == BLOCK
        # The delivered queue depth is a measurement (the block layer's in-flight count): on two cores shared
        # with other work fio's submitting thread is sometimes starved.  Within 10% it is silent; beyond, the
        # verdict names the step, with both figures -- never a quiet miss.
        named = [d for d in deviations if f"step {got.step} ran at a queue depth" in d]
        if abs(got.qd / step.qd - 1.0) <= 0.10:
            assert not named, named
        else:
            assert named == [f"replay: step {got.step} ran at a queue depth of {got.qd:.2f} against the captured "
                             f"{got.asked_qd:.2f} ({BLOCK})"], (named, got.qd, step.qd)


@needs_fio
def test_exact_replay_issues_the_captured_ios_within_the_targets_range(loopdev, tmp_path):
    path = rwsw_captures.write_with_iolog(str(tmp_path), n=2000)
    run = _run(loopdev, tmp_path, "--tests", "replay", "--replay", "exact", "--workload", path)
    (test,) = run.tests
    (w,) = test.rounds[0].workloads
    assert (w.read.ios, w.write.ios) == (1400, 600)  # every captured I/O, no more
    assert int(test.data["exact.moved"]) > 0 and int(test.data["exact.span"]) <= 256 * MiB
    assert test.stop_reason == "capture replayed" and not w.error
    assert not os.path.exists(os.path.join(str(tmp_path), "mapped.iolog"))


@needs_fio
def test_rwsw_wsat_reaches_a_verdict(loopdev, tmp_path):
    path = rwsw_captures.write(str(tmp_path))
    run = _run(loopdev, tmp_path, "--tests", "rwsw-wsat", "--workload", path, "--rwsw-wsat-time", "6",
               "--rwsw-wsat-steady", "--rwsw-wsat-steady-spacing", "1")
    (test,) = run.tests
    assert test.status == "complete" and test.steady is not None
    assert test.stop_reason.startswith(("time limit", "TGBW", "steady state")), test.stop_reason
    assert len(test.series["intervals"]) >= 1
    assert test.params["rwmixread"] == str(applied.mixed_job(model.dominant(model.load(path).streams)).rwmixread)


@needs_fio
def test_rwsw_dirth_sweeps_the_grid_with_three_histograms(loopdev, tmp_path):
    from tkperf.pts.sweep.plan import choice, response_bins, sweep_points

    path = rwsw_captures.write(str(tmp_path))
    run = _run(loopdev, tmp_path, "--tests", "rwsw-dirth", "--workload", path,
               "--rwsw-dirth-structure", "steady-sweep", "--max-rounds", "5")
    (test,) = run.tests
    points = sweep_points(test)
    assert sorted((p.tc, p.qd) for p in points) == [(1, 1), (1, 4), (2, 1), (2, 4)]
    c = choice(test)
    assert c is not None
    for _, p in c.named():
        assert p.workload is not None and response_bins(p.workload), p.label


def test_a_missing_capture_stops_a_real_run_before_anything_is_made(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--rwsw-workload", str(tmp_path / "gone.xml"), "--yes",
               "--outdir", str(out), "--name", "x"])
    assert rc == EXIT_RESULT_FILE and "gone.xml" in _one_line(capsys)
    assert not out.exists()  # no result file, no run log: the target was not opened for the run


def test_a_corrupt_iolog_stops_an_exact_replay_before_it_runs(loopdev, tmp_path, capsys):
    path = rwsw_captures.write_with_iolog(str(tmp_path), n=50)
    with open(tmp_path / "cap.iolog", "a", encoding="ascii") as fh:
        fh.write("12 /dev/captured read 0 x\n")
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--replay", "exact", "--workload", path, "--dry-run"])
    assert rc == EXIT_RESULT_FILE and "cap.iolog: line" in _one_line(capsys)


def test_the_verdict_names_each_departure_from_the_rwsw_pts(tmp_path):
    from tkperf.kit import registry as testtypes
    from tkperf.model.pts import REVISIONS

    rev = next(iter(REVISIONS.values()))
    path = rwsw_captures.write(str(tmp_path))
    kind = testtypes.get("replay")
    replay = kind.pts.deviations(kind, {"rwsw_workload": path, "rwsw_replay_step_time": "5"}, rev)
    words = " | ".join(replay)
    for part in ("SNIA RWSW PTS", "tkperf capture", "flow control", "calibration", "offsets are fio's",
                 "runs 5 s instead of its captured duration"):
        assert part in words, part
    assert "--replay-intensity max" in words  # a result from before the option ran as fast as the drive served it
    captured = " | ".join(kind.pts.deviations(kind, {"rwsw_workload": path, "rwsw_replay_intensity": "captured"},
                                              rev))
    assert "held to its captured rate (fio rate)" in captured
    assert "calibration" not in captured and "flow control" not in captured and "intensity max" not in captured
    exact = " | ".join(kind.pts.deviations(kind, {"rwsw_workload": path, "rwsw_replay": "exact"}, rev))
    assert "iolog" in exact and "calibration" not in exact
    wsat = testtypes.get("rwsw-wsat")
    words = " | ".join(wsat.pts.deviations(wsat, {"rwsw_workload": path, "rwsw_streams_share": "90%"}, rev))
    assert "one fio job" in words and "90%" in words and "access independently" in words
    planned = " | ".join(wsat.pts.planned_deviations(wsat, {"rwsw_wsat_time": "1h"}, rev))
    assert "below 24 h" in planned
    dirth_kind = testtypes.get("rwsw-dirth")
    dirth = " | ".join(dirth_kind.pts.deviations(dirth_kind, {"rwsw_workload": path}, rev))
    assert "one fio job" in dirth and "RWSW-DIRTH" in dirth


def test_a_step_off_its_capture_is_named_in_the_verdict():
    from tkperf.kit import registry as testtypes
    from tkperf.model.pts import REVISIONS

    golden = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "golden", "inputs", "replay.xml")
    test = store.load(golden).tests[0]
    kind, rev = testtypes.get("replay"), next(iter(REVISIONS.values()))
    assert kind.pts.result_deviations(kind, test, {}, rev, 256 * MiB) == []  # the recorded run held its capture
    name = next(k[len("share."):] for k in test.params if k.startswith("share.st1-"))
    test.params.update({"step.1.qd": "40.0", f"share.{name}": "0.9"})
    words = " | ".join(kind.pts.result_deviations(kind, test, {}, rev, 256 * MiB))
    assert "step 1 ran at a queue depth of" in words and "against the captured 40.00" in words
    assert "against the captured 90.0%" in words
