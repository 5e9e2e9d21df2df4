"""Ctrl-C of a parallel run of the suite leaves nothing behind.

A pytest run of two tests in two workers (one holding a loop device, one an
emulated SSD: tests/lab/interrupt_victims.py) is interrupted with SIGINT
(Ctrl-C) or SIGTERM (kill, a CI runner's time-out) to
its controlling process alone, in the middle of both tests: xdist then ends its workers
without their finalizers, and tests/lab/suite.py's sweep must undo what
they made.  Checked against the kernel's own lists (``losetup``,
/proc/self/mounts, /run/tkperf-simdrive, the processes carrying the run's
tag), for what that run made only."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import suite
from conftest import simdrive_missing

ROOT = Path(__file__).resolve().parents[2]
#: one test holding a loop device, one an emulated SSD, each until interrupted
VICTIMS = ["tests/lab/interrupt_victims.py"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_ctrl_c_of_a_parallel_run_leaves_nothing_behind(sig, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root: loop devices and emulated SSDs")
    why = simdrive_missing()
    if why:
        pytest.skip(why)
    base = tmp_path / "run"
    ledger = str(base / "simdrives-made.txt")
    # SIGINT as a terminal's pytest has it: a suite started in the background
    # by a shell without job control (cron, CI, nohup ... &) ignores SIGINT,
    # its workers and their children too, and so would this run
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                             "--basetemp", str(base), *VICTIMS], cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    tag = str(proc.pid)
    try:
        made = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            made = suite.leftovers(str(base), ledger, tag, clean=False)
            if any(m.startswith("loop device") for m in made) and any(m.startswith("emulated SSD") for m in made):
                break
            time.sleep(0.5)
        assert proc.poll() is None, "the run ended before both tests had made their devices:\n" + proc.stdout.read()
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = suite.leftovers(str(base), ledger, tag, clean=False)
    suite.leftovers(str(base), ledger, tag, clean=True)  # never leave them to the next run
    assert "Interrupted" in out or "KeyboardInterrupt" in out, out
    assert not left, f"an interrupted run left {left} (it had made {made})\n{out}"
