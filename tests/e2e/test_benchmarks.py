"""Every script under benchmarks/ runs, in its small mode (``--tiny``: the
same code paths, seconds instead of minutes), so a moved module or a
changed signature breaks the suite, not a reader's afternoon.  The scripts
are found by globbing: a new benchmark is covered the day it is added, and
one without ``--tiny`` fails here.  Their figures are printed, not judged:
speed is the benchmark's business, not a test's (docs/testing.rst)."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TRACEFS_LOCK, simdrive_missing

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))

#: Benchmarks that trace block I/O through the kernel's one tracefs take
#: turns with the tracefs test files (tests/conftest.py).
TRACEFS = {"rwsw.py", "replay_fidelity.py", "exact_timing.py", "daylong.py"}  # they capture, or replay traced
#: Benchmarks that bring emulated SSDs up.
SIMDRIVE = {"simdrive.py"}


def test_every_benchmark_is_found():
    assert len(BENCHMARKS) >= 15, [b.name for b in BENCHMARKS]


@pytest.mark.parametrize("script", BENCHMARKS, ids=[b.stem for b in BENCHMARKS])
def test_benchmark_runs_in_its_small_mode(script, tmp_path):
    text = script.read_text()
    assert '"--tiny"' in text or "--tiny" in text.split('"""')[1], f"{script.name} has no --tiny mode"
    if script.name in SIMDRIVE:
        why = simdrive_missing()
        if why:
            pytest.skip(why)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path), MPLCONFIGDIR=str(tmp_path / "mpl"))
    with open(TRACEFS_LOCK, "a") as lock:
        if script.name in TRACEFS:
            fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([sys.executable, str(script), "--tiny"], cwd=str(ROOT), capture_output=True,
                              text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"{script.name} --tiny exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.strip(), f"{script.name} --tiny printed no figures"
    assert "Traceback" not in proc.stderr, proc.stderr
