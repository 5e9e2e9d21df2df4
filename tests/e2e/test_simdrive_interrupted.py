"""``tkperf simdrive up`` killed at each of its steps (issue 44 item 1):
what it made is found again and removed, by ``simdrive down NAME`` and by
the next ``up``.  The kill is SIGKILL, which no handler sees, at a
test-only pause point (``TKPERF_SIMDRIVE_TEST_PAUSE``): after the runtime
directory is made, after the mount point, after the server started, after
the loop device is attached but before it is recorded, and once the drive
is ready but before ``up`` says so; ``down`` killed after the detach,
after stopping the server and after the unmount is run again."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import simdrive_missing
from tkperf.simdrive import control

pytestmark = pytest.mark.skipif(bool(simdrive_missing()), reason=simdrive_missing() or "")
STEPS = ("made", "mnt", "server", "attached", "ready")


def _killed_at(step: str, name: str) -> None:
    env = dict(os.environ, TKPERF_SIMDRIVE_TEST_PAUSE=step)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "simdrive", "up", "--capacity", "64m", "--name", name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.strip() == f"paused at {step}".encode(), line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _traces(name: str):
    """What is left of drive ``name``: its directory, loop devices over its
    file, its FUSE mount, its server process."""
    rundir = os.path.join(control.BASE, name)
    loops = control._loops_over(rundir)
    with open("/proc/self/mounts", encoding="utf-8") as fh:
        mounted = [line for line in fh if f" {rundir}/mnt " in line]
    servers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if b"tkperf.simdrive" in argv and os.fsencode(rundir) in argv:
            servers.append(pid)
    return os.path.exists(rundir), loops, mounted, servers


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tkperf", "simdrive", *argv], capture_output=True, timeout=120)


GONE = (False, [], [], [])


@pytest.mark.parametrize("step", STEPS)
def test_down_removes_a_drive_whose_up_was_killed(step):
    """xdist runs other emulated-SSD tests beside this file, and each of
    their ``up``s first sweeps a half-made drive whose ``up`` is gone (what
    it must do: test_the_next_up_removes_a_half_made_drive), which can come
    before this test's ``down``: then the kill is tried again, three times;
    swept each time, the drive must still be gone without a trace."""
    name = f"killed-{step}"
    for _ in range(3):
        _killed_at(step, name)
        left = _traces(name)
        if left == GONE:
            continue  # swept already
        assert left[0], f"up killed at {step} left no directory: nothing to find"
        if step in ("attached", "ready"):
            assert left[1], "the loop device was attached"
        done = _run("down", name)
        if done.returncode == 4 and b"is not an emulated SSD" in done.stderr and _traces(name) == GONE:
            continue  # swept while down started
        assert done.returncode == 0, done.stderr
        break
    assert _traces(name) == GONE


@pytest.mark.parametrize("step", ["server", "attached"])
def test_the_next_up_removes_a_half_made_drive(step):
    """The kill leaves the directory and its ``up`` file; the next ``up``
    (any name) sees that process gone and takes the drive down first."""
    name = f"half-{step}"
    _killed_at(step, name)
    assert _traces(name)[0]
    other = _run("up", "--capacity", "64m", "--name", f"next-{step}")
    try:
        assert other.returncode == 0, other.stderr
        assert _traces(name) == (False, [], [], [])
    finally:
        _run("down", f"next-{step}")


def test_an_up_under_way_is_not_swept():
    """A drive whose ``up`` is still running (its process alive, same start
    time) is left alone by another ``up``."""
    env = dict(os.environ, TKPERF_SIMDRIVE_TEST_PAUSE="attached")
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "simdrive", "up", "--capacity", "64m", "--name",
                             "underway"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr is not None and proc.stderr.readline().strip() == b"paused at attached"
        assert control.sweep() == []
        assert _traces("underway")[1]  # its loop device still attached
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        _run("down", "underway")
    assert _traces("underway") == (False, [], [], [])


@pytest.mark.parametrize("step", ["detached", "stopped", "unmounted"])
def test_a_down_killed_half_way_is_finished_by_the_next(step):
    name = f"down-{step}"
    made = _run("up", "--capacity", "64m", "--name", name)
    assert made.returncode == 0, made.stderr
    env = dict(os.environ, TKPERF_SIMDRIVE_TEST_PAUSE=step)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "simdrive", "down", name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr is not None and proc.stderr.readline().strip() == f"paused at {step}".encode()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _traces(name)[0]  # killed before it removed the directory
    done = _run("down", name)
    assert done.returncode == 0, done.stderr
    assert _traces(name) == (False, [], [], [])
