"""The kernel's tracing state shared by concurrent captures (issue 44 item 2):
the tracefs mount that a capture makes is undone by the last capture to
end, whatever the order in which two or three captures end, by their
duration or by a signal; a SIGKILLed capture's instance and registration
are removed by the next capture, also when its pid now belongs to another
process (the owner is its pid and start time).  Real captures of a loop
device, each its own ``tkperf capture`` process; tracefs is unmounted
first (and mounted again afterwards when it was)."""
from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from typing import List, Sequence

import pytest

from conftest import needs_fio
from tkperf.rwsw import tracing

pytestmark = [needs_fio, pytest.mark.skipif(os.geteuid() != 0, reason="tkperf capture needs root")]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tracefs_mounts() -> List[str]:
    with open("/proc/self/mounts") as fh:
        return sorted(line.split()[1] for line in fh if line.split()[2] in ("tracefs", "debugfs"))


def _instances() -> List[str]:
    d = os.path.join(tracing.TRACEFS, "instances")
    return sorted(n for n in os.listdir(d) if n.startswith(tracing.PREFIX)) if os.path.isdir(d) else []


def _registered() -> List[str]:
    return sorted(n for n in os.listdir(tracing.STATE_DIR) if n != "lock") if os.path.isdir(tracing.STATE_DIR) \
        else []


@pytest.fixture
def unmounted():
    """tracefs not mounted while the test runs (as on a machine where no one
    traced yet), mounted again afterwards if it was."""
    before = _tracefs_mounts()
    if tracing.TRACEFS in before:
        if _instances():
            pytest.skip("tracefs is in use by a capture")
        if subprocess.run(["umount", tracing.TRACEFS], capture_output=True).returncode != 0:
            pytest.skip("tracefs is in use here; cannot unmount it for the test")
    if tracing.TRACEFS in _tracefs_mounts():
        pytest.skip("tracefs is mounted twice here")
    yield
    if tracing.TRACEFS in before and tracing.TRACEFS not in _tracefs_mounts():
        subprocess.run(["mount", "-t", "tracefs", "nodev", tracing.TRACEFS], check=False)


def _capture(dev: str, seconds: float, outdir, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tkperf", "capture", dev, "--duration", str(seconds),
                             "--name", name, "--outdir", str(outdir), "-q"],
                            env=dict(os.environ, PYTHONPATH=ROOT), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _wait_registered(n: int) -> None:
    deadline = time.monotonic() + 60
    while len(_instances()) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_instances()) >= n, "the captures never set up their instances"


def _clean() -> None:
    assert _tracefs_mounts() == [] and _instances() == [] and _registered() == []


def _start(dev: str, durations: Sequence[float], outdir) -> List[subprocess.Popen]:
    """Captures started one after the other, each once the one before has
    its instance (the first has mounted tracefs before the next starts)."""
    procs = []
    for i, seconds in enumerate(durations):
        procs.append(_capture(dev, seconds, outdir, f"c{i}"))
        _wait_registered(i + 1)
    return procs


def _said(p: subprocess.Popen) -> str:
    return p.stderr.read().decode() if p.stderr else ""


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))) + [(0, 1), (1, 0)],
                         ids=lambda o: "-".join(map(str, o)))
def test_the_last_capture_to_end_unmounts_tracefs(order, loopdev, tmp_path, unmounted):
    """Two or three captures (the first mounts tracefs) stopped by SIGINT in
    ``order``: tracefs stays mounted while one still runs, and the last to
    end unmounts it; none says something stays mounted; nothing is left."""
    procs = _start(loopdev, [120] * len(order), tmp_path)
    for k, i in enumerate(order):
        procs[i].send_signal(signal.SIGINT)
        procs[i].wait(timeout=60)
        assert "stays mounted" not in _said(procs[i])
        if k < len(order) - 1:  # the others still trace: their mount and instances stay
            assert tracing.TRACEFS in _tracefs_mounts() and len(_instances()) == len(order) - k - 1
    _clean()


@pytest.mark.parametrize("mounter_first", [True, False])
def test_captures_ending_by_their_duration(mounter_first, loopdev, tmp_path, unmounted):
    """Two captures ending by their own duration, the one that mounted
    tracefs first or last: both exit 0 with no note, and nothing is left."""
    procs = _start(loopdev, [15, 120] if mounter_first else [120, 3], tmp_path)
    early, late = (procs[0], procs[1]) if mounter_first else (procs[1], procs[0])
    early.wait(timeout=120)
    assert early.returncode == 0 and "stays mounted" not in _said(early)
    assert tracing.TRACEFS in _tracefs_mounts() and len(_instances()) == 1
    late.send_signal(signal.SIGTERM)
    late.wait(timeout=60)
    assert "stays mounted" not in _said(late)
    _clean()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
@pytest.mark.parametrize("stopped", ["first", "second"])
def test_a_signalled_capture_leaves_nothing_to_the_last(sig, stopped, loopdev, tmp_path, unmounted):
    """Of two captures, the one that mounted tracefs (first) or the other is
    stopped by a signal while the other runs on: when the survivor ends,
    nothing is left (a SIGKILLed one's instance is removed by the survivor)."""
    first = _capture(loopdev, 60, tmp_path, "first")
    _wait_registered(1)
    second = _capture(loopdev, 60 if stopped == "second" else 4, tmp_path, "second")
    _wait_registered(2)
    victim, survivor = (first, second) if stopped == "first" else (second, first)
    victim.send_signal(sig)
    victim.wait(timeout=60)
    if sig == signal.SIGKILL:
        assert len(_instances()) == 2  # nothing could clean up after it
    if stopped == "second":  # the first, which mounted tracefs, is ended by a signal too
        survivor.send_signal(signal.SIGTERM)
    survivor.wait(timeout=120)
    _clean()


def test_an_instance_whose_pid_was_reused_is_removed(loopdev, tmp_path, unmounted):
    """A capture killed long ago whose pid now belongs to another process (pid 1
    here, started at another time): its instance and registration are removed
    by the next capture, which then exits with nothing left."""
    subprocess.run(["mount", "-t", "tracefs", "nodev", tracing.TRACEFS], check=True)
    stale = f"1-{int(tracing.owner_tag(1).split('-')[1]) + 12345}"
    os.mkdir(os.path.join(tracing.TRACEFS, "instances", tracing.PREFIX + stale))
    os.makedirs(tracing.STATE_DIR, mode=0o700, exist_ok=True)
    with open(os.path.join(tracing.STATE_DIR, stale), "w") as fh:
        fh.write(stale + "\n")
    with open(os.path.join(tracing.STATE_DIR, tracing.MOUNTED), "a") as fh:
        fh.write(tracing.mount_at(tracing.TRACEFS).line())  # as the killed capture had mounted it
    proc = _capture(loopdev, 1, tmp_path, "next")
    proc.wait(timeout=120)
    assert proc.returncode == 0
    _clean()
