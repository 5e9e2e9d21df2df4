"""Fixtures: real loop devices over sparse files, always detached afterwards.

A test's folder says what it needs (tests/lab/suite.py): ``tests/unit/``
pure Python, ``tests/e2e/`` (marked ``e2e``) fio, loop devices, the
emulated SSD or a server, ``tests/vm/`` (marked ``vm``) the QEMU guest; the
helpers the tests share live in ``tests/lab/``, recorded data in
``tests/data/``.

End-to-end tests need root (losetup); where no loop device can be made the
``target`` fixture falls back to a file target and says so in the test
report, as the project's standards ask.
"""
from __future__ import annotations

import contextlib
import fcntl
import glob
import io
import itertools
import json
import os
import shutil
import subprocess
import sys

import pytest

# the lab helpers; and the sample results of unit and end-to-end tests, which the others reuse
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in ("lab", "unit", "docs", "e2e")]

import suite  # noqa: E402
from suite import _unit_stays_pure  # noqa: E402,F401
from tkperf.target.loopdev import try_loop  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")
MiB = 1024 * 1024


def data_path(name: str) -> str:
    return os.path.join(DATA, name)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    suite.tag_run(config)
    suite.interruptible()


def pytest_collection_modifyitems(config, items):
    suite.mark_by_folder(items)


def pytest_collection_finish(session):
    # An xdist worker with vm tests among those selected boots the one guest
    # early, in the background (tests/lab/vm_lab.py, start_early).
    # (A worker is told by its workerinput: a pytest that a test starts inherits
    # the worker's environment, not that; a --collect-only boots nothing.)
    config = session.config
    if hasattr(config, "workerinput") and not config.option.collectonly \
            and any(item.get_closest_marker("vm") for item in session.items):
        import vm_lab

        vm_lab.start_early(config._tmp_path_factory.getbasetemp())


def pytest_sessionfinish(session):
    if "vm_lab" in sys.modules:
        sys.modules["vm_lab"].finish_early()


def pytest_runtest_setup(item):
    suite.guard_unit(item)


def pytest_unconfigure(config):
    undone = suite.sweep(config)
    if undone:
        sys.stderr.write("\ntests/conftest.py: undone after the run: " + "; ".join(undone) + "\n")


def loop_device(size, folder):
    """A fixture's loop device of ``size`` bytes over a sparse file in
    ``folder``: its path, detached when the fixture ends; skips (saying
    why) where none can be made."""
    loop, why = try_loop(size, str(folder))
    if loop is None:
        pytest.skip(f"needs a loop device: {why}")
    try:
        yield loop.path
    finally:
        loop.__exit__(None, None, None)


@pytest.fixture
def loopdev(tmp_path):
    """A fresh 256 MiB loop device; skips (saying why) where none can be made."""
    yield from loop_device(256 * MiB, tmp_path)


@pytest.fixture
def tools(monkeypatch):
    """The purge tests' stand-in for ``programs.run`` (tests/lab/purgefakes.py)."""
    from purgefakes import install_fake

    return install_fake(monkeypatch)


@pytest.fixture
def fake_disk(tmp_path):
    """The purge tests' stand-in drives: sparse files (tests/lab/purgefakes.py)."""
    from purgefakes import disk_maker

    return disk_maker(tmp_path)


@pytest.fixture
def target(tmp_path):
    """(argv fragment, kind): a loop device, or a file target where none can be made."""
    loop, why = try_loop(256 * MiB, str(tmp_path))
    if loop is None:
        sys.stderr.write(f"\nNOTE: {why}; using a file target instead of a block device\n")
        yield [str(tmp_path / "target.img"), "--size", "256m"], "file"
        return
    try:
        yield [loop.path], "block"
    finally:
        loop.__exit__(None, None, None)


def _fio_children() -> list:
    """PIDs of this process's children named fio: from /proc (each thread's
    ``children`` list), as ``pgrep -P PID -x fio`` finds them but without
    starting a process after every one of the suite's thousands of tests;
    through pgrep where the kernel has no ``children`` lists."""
    lists = glob.glob(f"/proc/{os.getpid()}/task/*/children")
    if not lists:
        if not shutil.which("pgrep"):
            return []
        return subprocess.run(["pgrep", "-P", str(os.getpid()), "-x", "fio"],
                              capture_output=True, text=True).stdout.split()
    out = []
    for path in lists:
        try:
            with open(path, encoding="ascii") as fh:
                pids = fh.read().split()
        except OSError:  # the thread ended meanwhile
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
                    if fh.read().rstrip("\n") == "fio":
                        out.append(pid)
            except OSError:  # reaped meanwhile
                continue
    return out


@pytest.fixture(autouse=True)
def _no_fio_left():
    """No test may leave a fio child of this process behind (other fio
    processes on the machine are not ours to judge)."""
    yield
    out = _fio_children()
    assert not out, f"fio processes left running: {out}"


class SimDrive:
    """An emulated SSD made by ``tkperf simdrive up`` (a real server process,
    FUSE mount and loop device); ``stats()`` is ``tkperf simdrive stats --json``
    (run by the CLI's entry in this process)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def stats(self, history: bool = False) -> dict:
        argv = ["simdrive", "stats", self.path, "--json"] + (["--history"] if history else [])
        rc, out, err = _tkperf_here(argv)
        assert rc == 0, err
        return json.loads(out)


def _tkperf_env() -> dict:
    return dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def simdrive_missing() -> str:
    """'' where emulated SSDs can be made, else why not."""
    from tkperf.simdrive.control import available
    return available()


_DRIVES = itertools.count()


@pytest.fixture
def simdrive():
    """Factory: ``simdrive(capacity="64M", op=7, units=4, ...)`` brings an
    emulated SSD up (model parameters by their names in ``tkperf simdrive
    up --help``, with ``_`` for ``-``) and returns a :class:`SimDrive`; every
    drive made is taken down at teardown.  Skips where /dev/fuse, root or
    loop direct I/O over FUSE is missing."""
    why = simdrive_missing()
    if why:
        pytest.skip(why)
    made = []

    def make(capacity: str = "64M", op: float = None, name: str = None, **params) -> SimDrive:
        argv = ["simdrive", "up", "--capacity", str(capacity)]
        if op is not None:
            argv += ["--op", str(op)]
        if name is None:
            name = f"t{os.getpid()}-{next(_DRIVES)}"
        suite.note_simdrive(name)
        argv += ["--name", name]
        for key, value in params.items():
            argv += ["--" + key.replace("_", "-"), str(value)]
        rc, out, err = _tkperf_here(argv)
        if rc != 0 and "direct I/O" in err:
            pytest.skip(err.strip())
        assert rc == 0, err
        drive = SimDrive(out.strip())
        made.append(drive)
        return drive

    try:
        yield make
    finally:
        for drive in made:
            _tkperf_here(["simdrive", "down", drive.path])


def _tkperf_here(argv: list) -> tuple:
    """(exit code, stdout, stderr) of ``tkperf ARGV`` run by the CLI's own
    entry in this process: the command line's code path without starting an
    interpreter, twice for each of the suite's emulated SSDs (``tkperf
    simdrive up`` and ``down`` as commands: tests/e2e/test_simdrive.py)."""
    from tkperf.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def fio_available() -> bool:
    return shutil.which("fio") is not None


needs_fio = pytest.mark.skipif(not fio_available(), reason="fio is not installed")


# ---------------------------------------------------------------------------
# Remote-host lab (issue 13): sshd and fio servers on 127.0.0.2 / 127.0.0.3.
# Registered here so that every test module shares one session sshd; test
# modules import only helpers (LAB_HOSTS, refusing_config, ...) from remote_lab.
from remote_lab import fio_servers, old_fio, ssh_lab, ssh_refusing_config  # noqa: E402,F401

#: Test files that trace block I/O through the kernel's one tracefs (tkperf
#: capture: it may mount tracefs, and makes and removes tracing instances).
#: Under pytest-xdist (README's ``-n 2``) their tests take turns on a lock
#: file, never running beside each other.  (xdist's ``xdist_group`` does not
#: group with pytest 9: it renames node ids through an attribute pytest 9
#: no longer reads.)  The pure-Python files that read captures (``capture
#: --import``: blkparse text, no tracefs) are not among them: a test waiting
#: for the lock is time the suite spends doing nothing.
TRACEFS_FILES = ("test_rwsw_capture.py", "test_rwsw_pgbench.py", "test_rwsw_planted.py", "test_rwsw_seen.py",
                 "test_rwsw_shared_state.py")
#: A replay is traced at the same tracepoints (issue 57: measured as the
#: capture measures): the files that replay hold the lock shared: they run
#: beside each other and the rest of the suite, never beside a capture test,
#: whose checks of tracefs' state (mounted, instances) want it to themselves.
#: (tests/e2e/test_benchmarks.py takes the lock itself for the benchmarks
#: that capture or replay.)
TRACEFS_SHARED_FILES = ("test_realworld.py", "test_realworld_replay.py", "test_realworld_replay_traced.py",
                        "test_rwsw_pgbench_replay.py", "test_rwsw_sidejobs.py")
TRACEFS_LOCK = "/run/tkperf-tests-tracefs.lock"


@pytest.fixture(autouse=True)
def _tracefs_turn(request):
    if request.node.path.name in TRACEFS_FILES:
        how = fcntl.LOCK_EX
    elif request.node.path.name in TRACEFS_SHARED_FILES:
        how = fcntl.LOCK_SH
    else:
        yield
        return
    with open(TRACEFS_LOCK, "a") as lock:
        fcntl.flock(lock, how)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _signal_handlers_put_back():
    """Each test starts with the handlers of SIGINT, SIGTERM and SIGHUP the
    worker had, whatever a test before it left (an ignored SIGINT is
    inherited by every program a later test starts)."""
    import signal as _signal
    import threading as _threading

    if _threading.current_thread() is not _threading.main_thread():
        yield
        return
    saved = {s: _signal.getsignal(s) for s in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)}
    yield
    for s, handler in saved.items():
        if handler is not None:
            _signal.signal(s, handler)
