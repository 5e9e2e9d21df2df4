"""Progress on stderr: an in-place display on a terminal, plain timestamped
lines elsewhere, nothing with --quiet; the ETA range; --debug detail."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import needs_fio
from ptyrun import run_on_pty
from tkperf.kit import progress as ep
from tkperf.model.steadystate import evaluate

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d tkperf: ")
ETA_RANGE = re.compile(r"ETA \d+(\.\d+)? (s|min|h) to \d+(\.\d+)? (s|min|h)")


def argv(dev, out, *extra, max_rounds="3"):
    return [sys.executable, "-m", "tkperf", "ssd", "run", dev, "--quick", "--tests", "lat",
            "--lat-bs", "4k", "--lat-mix", "0/100", "--max-rounds", max_rounds, "--runtime", "1",
            "--wipc-loops", "0", "--purge", "none", "--yes", "--outdir", str(out), "--name", "p",
            "--no-report", *extra]


def env(**given):
    e = dict(os.environ, PYTHONPATH=REPO)
    e.update(given)
    return e


def on_pty(cmd, term):
    """Run ``cmd`` with its stderr on a pseudo-terminal; (exit code, all it wrote there)."""
    return run_on_pty(cmd, env(TERM=term, COLUMNS="100", LINES="30"))


def rounds_logged(xml_dir):
    """The round loop's rounds (not LAT's capture after them, which has no round line)."""
    from tkperf import store
    from tkperf.kit.composite import steady_rounds

    (t,) = store.load(str(xml_dir / "p.xml")).tests
    return len(steady_rounds(t))


# --- the ETA arithmetic ---------------------------------------------------------

def test_rounds_left_fills_the_window_at_least():
    assert ep.rounds_left(2, 5, 25, steady=False) == (3, 23)
    assert ep.rounds_left(0, 5, 25, steady=False) == (5, 25)
    assert ep.rounds_left(5, 5, 25, steady=False) == (1, 20)  # not steady: one more at least
    assert ep.rounds_left(9, 5, 25, steady=True) == (0, 0)
    assert ep.rounds_left(25, 5, 25, steady=False) == (0, 0)
    assert ep.rounds_left(1, 5, 3, steady=False) == (2, 2)  # max below the window


def test_round_range_counts_the_round_in_progress():
    assert ep.round_range(2, 5, 25, False, 60.0) == (180.0, 23 * 60.0)
    # round 3 running for 20 s of 60: 40 s of it, then 2 to 22 more rounds
    assert ep.round_range(2, 5, 25, False, 60.0, running_s=20.0) == (40 + 120.0, 40 + 22 * 60.0)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_eta_from_measured_rounds_plus_later_tests():
    clock = Clock()
    prog = ep.Progress(window=5, max_rounds=25, clock=clock)
    prog.run_started([ep.PlannedTest("iops", 500.0, 2500.0), ep.PlannedTest("tp", 100.0, 400.0, wipc_bytes=0),
                      ep.PlannedTest("lat", 50.0, 60.0, wipc_bytes=int(1e9))])
    prog.test_started("iops")
    prog.round_started(1, per_round_s=99.0)  # the plan's estimate, until a round is measured
    assert prog.eta() == (5 * 99.0 + 150 + 2, 25 * 99.0 + 460 + 2)  # WIPC of 1 GB at 500 MB/s
    for index, wall in ((1, 50.0), (2, 70.0)):
        prog.round_started(index, per_round_s=99.0)
        clock.now += wall
        prog.round_finished(index, 1000.0 * index, evaluate(list(range(1, index + 1)),
                                                            [1000.0 * i for i in range(1, index + 1)]), wall)
    # not steady after 2 of window 5, max 25: 3 to 23 rounds of the measured 60 s; the
    # later tests' rounds as this run's rounds ran against their plan (120 s for 198 s)
    k = 120.0 / 198.0
    assert prog.round_scale() == pytest.approx(k)
    later = (150.0 * k + 2, 460.0 * k + 2)
    assert prog.eta() == pytest.approx((3 * 60.0 + later[0], 23 * 60.0 + later[1]))
    assert "range" in prog.closeness() and "of 20%" in prog.closeness() and "of 10%" in prog.closeness()
    prog.test_finished("iops", "steady state")
    assert prog.eta() == pytest.approx(later)
    prog.test_started("tp")
    assert prog.eta() == pytest.approx(later)
    prog.run_finished()
    assert prog.eta() == (0.0, 0.0)


def test_eta_corrects_itself_from_the_measured_wipc_and_rounds():
    """issue 48 item 4: the first ETA is the plan at the assumed write rate;
    a measured WIPC sets the rate of the WIPCs to come, measured rounds the
    length of the later tests' rounds (not a stream's time limit)."""
    from tkperf.kit import writerate
    clock = Clock()
    prog = ep.Progress(window=5, max_rounds=25, clock=clock)
    tests = [ep.PlannedTest("iops", 50.0, 250.0, wipc_bytes=int(300e6)),
             ep.PlannedTest("lat", 20.0, 100.0, wipc_bytes=int(300e6)),
             ep.PlannedTest("wsat", 8.0, 8.0, rounds=False)]
    with writerate.assumed(writerate.WriteRate(30e6, "a model's speed")):
        prog.run_started(tests)  # the dry run's rate: the emulated SSD's 30 MB/s, not 500 MB/s
    assert prog.wipc_rate == 30e6
    prog.test_started("iops")
    prog.phase_started("WIPC 2x")
    assert prog.eta() == pytest.approx((50 + 10 + 20 + 10 + 8, 250 + 10 + 100 + 10 + 8))
    clock.now += 15.0
    prog.wipc_finished(int(300e6), 15.0)  # the drive writes 20 MB/s, not 30
    assert prog.wipc_rate == 20e6
    for index in (1, 2, 3, 4, 5):  # rounds planned at 10 s take 20 s
        prog.round_started(index, per_round_s=10.0)
        clock.now += 20.0
        prog.round_finished(index, 1000.0, evaluate(list(range(1, index + 1)), [1000.0] * index), 20.0)
    assert prog.round_scale() == 2.0
    prog.test_finished("iops", "steady state")
    assert prog.eta() == pytest.approx((20 * 2 + 15 + 8, 100 * 2 + 15 + 8))
    prog.test_started("lat")
    prog.round_started(1, per_round_s=4.0)  # before its first round is measured: the plan x 2
    assert prog.per_round_s == 8.0


def test_eta_of_a_round_loop_counts_what_follows_it_until_that_starts():
    clock = Clock()
    prog = ep.Progress(window=5, max_rounds=25, clock=clock)
    prog.run_started([ep.PlannedTest("dirth", 500.0, 2500.0)])
    prog.test_started("dirth")
    prog.rounds_then(300.0)  # the sweep after steady state (DIRTH, CBW) or HIR's idle settings
    prog.round_started(1, per_round_s=10.0)
    assert prog.eta() == (5 * 10.0 + 300.0, 25 * 10.0 + 300.0)
    prog.once_started("sweep over 12 points", 300.0)
    clock.now += 100.0
    assert prog.eta() == (200.0, 200.0)  # the sweep's own clock now; nothing counted twice
    prog.test_started("next")
    assert prog.after_rounds_s == 0.0


def test_stream_eta_is_the_time_limit_or_the_bytes_whichever_first():
    assert ep.stream_left(100.0, 3600.0) == 3500.0
    assert ep.stream_left(100.0, 3600.0, written=int(1e9), stop_bytes=int(3e9), rate_bps=1e7) == 200.0
    assert ep.stream_left(100.0, 150.0, written=int(1e9), stop_bytes=int(3e9), rate_bps=1e7) == 50.0


def test_eta_text():
    assert ep.eta_text(2.3 * 3600, 11.5 * 3600) == "ETA 2.3 h to 11.5 h"
    assert ep.eta_text(30, 30) == "ETA 30 s"


# --- end to end on a loop device ----------------------------------------------------

@needs_fio
def test_terminal_gets_an_in_place_display_with_an_eta_range(loopdev, tmp_path):
    rc, text = on_pty(argv(loopdev, tmp_path / "out", max_rounds="8"), "xterm-256color")
    assert rc == 0, text
    assert "\r" in text or "\x1b[" in text  # rich redraws in place
    assert "\x1b[2K" in text or "\x1b[1A" in text or "\x1b[?25l" in text, text[-2000:]
    shown = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text))
    assert re.search(r"ETA " + ETA_RANGE.pattern[4:], shown), shown[-2000:]
    assert "[lat] round 1:" in text
    assert "Traceback" not in text


@needs_fio
def test_dumb_terminal_gets_plain_lines(loopdev, tmp_path):
    rc, text = on_pty(argv(loopdev, tmp_path / "out"), "dumb")
    assert rc == 0, text
    assert "\x1b" not in text
    lines = [ln for ln in text.replace("\r\n", "\n").split("\n") if ln.strip()]
    assert lines and all(STAMP.match(ln) for ln in lines), lines
    assert len([ln for ln in lines if "] round " in ln]) == rounds_logged(tmp_path / "out")


@needs_fio
def test_pipe_gets_plain_timestamped_lines_and_debug_goes_to_the_log(loopdev, tmp_path):
    out = tmp_path / "out"
    res = subprocess.run(argv(loopdev, out, "--debug"), capture_output=True, text=True, env=env(),
                         timeout=120)
    assert res.returncode == 0, res.stderr
    err = res.stderr
    assert "\r" not in err and "\x1b" not in err
    lines = err.splitlines()
    assert all(STAMP.match(ln) for ln in lines), lines
    rounds = [ln for ln in lines if re.search(r"\[lat\] round \d+: ", ln)]
    assert len(rounds) == rounds_logged(out) and all("; ETA " in ln for ln in rounds), rounds
    log = (out / "p.log").read_text()
    evaluations = re.findall(r"DEBUG \[lat\] steady state over rounds \[[\d, ]+\]: values \[.*\]; "
                             r"average .*, range .* \(limit .*\), slope .*slope excursion", log)
    assert len(evaluations) == len(rounds)
    assert "[lat] round 1: " in log  # the progress lines are in the log as before


@needs_fio
def test_quiet_prints_nothing_and_keeps_no_debug_detail(loopdev, tmp_path):
    out = tmp_path / "out"
    res = subprocess.run(argv(loopdev, out, "--quiet"), capture_output=True, text=True, env=env(),
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    log = (out / "p.log").read_text()
    assert "[lat] round 1: " in log and "steady state over rounds" not in log


def test_stream_eta_follows_the_latest_interval_through_a_cliff():
    # 10 s at 100 MB/s, then 10 s at 10 MB/s: 3 GB to write.  The mean since the start (55 MB/s) would
    # say 49 s left; the drive writes 10 MB/s now, so 190 s are (issue 43 item 9)
    clock = Clock()
    prog = ep.Progress(window=5, max_rounds=25, clock=clock)
    prog.run_started([ep.PlannedTest("wsat", 100.0, 100.0)])
    prog.test_started("wsat")
    prog.stream_started(3600.0, int(3e9))
    written = 0
    for rate in [100e6] * 10 + [10e6] * 10:
        clock.now += 1.0
        written += int(rate)
        prog.interval(1, 0.0, written)
    assert written == int(1.1e9)
    assert prog.eta() == (190.0, 190.0)
