"""The suite's own rules, loaded by tests/conftest.py: what a test's folder
says it needs, the guard that keeps pure-Python tests pure, and the sweep
that leaves nothing behind when a run is interrupted.

* ``tests/unit/``: pure Python (no fio, no loop device, no emulated SSD, no
  server); unmarked, the fast tier: ``pytest -m "not e2e and not vm and not docs"``.
* ``tests/docs/``: pure Python too, but each builds whole documents (reports
  as PDF and HTML, history pages); marked ``docs`` (as is a test of
  ``tests/unit/`` that builds one: ``@pytest.mark.docs``).
* ``tests/e2e/``: the real fio on loop devices, the emulated SSD, servers on
  loopback addresses, installs into fresh venvs; marked ``e2e``.
* ``tests/vm/``: the QEMU guest with emulated drive controllers; ``vm``.

A test file directly under ``tests/`` is run as ``e2e`` (it belongs in one
of the four folders; ``tests/unit/test_suite_layout.py`` says which is
missing one).

The sweep: the controlling pytest process tags its environment with
``TKPERF_TESTRUN`` (its pid), which its xdist workers and every process
they start inherit, and keeps a ledger of the emulated SSDs the
``simdrive`` fixture brings up.  When pytest ends, however it ends
(Ctrl-C of a parallel run included: xdist then kills a worker in the
middle of a test, whose finalizers never run), it takes down the emulated
SSDs of its ledger, ends the processes carrying its tag, unmounts what is
mounted under its base temporary directory, detaches the loop devices
whose backing file lies there and removes the tracefs instances of
captures whose process is gone.  Other pytest sessions on the machine
(other base temporary directories, other tags) are never touched.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, List

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

#: tests/<folder>/ -> the marker its tests carry ('' for none)
FOLDERS: Dict[str, str] = {"unit": "", "docs": "docs", "e2e": "e2e", "vm": "vm"}

#: Folders of pure-Python tests (no device, drive, server or fio).
PURE = frozenset({"unit", "docs"})

#: Fixtures that make a device, a drive or a server: an end-to-end test's.
E2E_FIXTURES = frozenset({"loopdev", "target", "simdrive", "ssh_lab", "fio_servers", "old_fio",
                          "ssh_refusing_config"})

#: Programs a pure-Python test may not start (in its own process).
E2E_PROGRAMS = frozenset({"fio", "losetup", "mount", "umount", "blkdiscard", "sshd", "pgbench",
                          "qemu-system-x86_64", "vng"})

TAG = "TKPERF_TESTRUN"
LEDGER = "TKPERF_TESTRUN_LEDGER"


def folder_of(path: Path) -> str:
    """'unit', 'docs', 'e2e', 'vm', or '' for a test file outside the four folders."""
    try:
        rel = Path(path).resolve().relative_to(TESTS)
    except ValueError:
        return ""
    return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in FOLDERS else ""


def interruptible() -> None:
    """SIGINT back to Python's KeyboardInterrupt when the suite was started
    with it ignored (``pytest ... &`` from a script or a shell without job
    control: POSIX has a background job ignore SIGINT, and every program a
    test starts would inherit that).  The tests that send a real Ctrl-C to
    a tkperf they start, or check the handler tkperf leaves in place, need
    it as a user at a terminal has it."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def mark_by_folder(items: Iterable[pytest.Item]) -> None:
    for item in items:
        folder = folder_of(item.path)
        marker = FOLDERS[folder] if folder else "e2e"
        if marker and not item.get_closest_marker(marker):
            item.add_marker(marker)


def guard_unit(item: pytest.Item) -> None:
    """A test under tests/unit/ asking for a device, drive or server fails
    here, before the fixture makes it."""
    folder = folder_of(item.path)
    if folder not in PURE:
        return
    wanted = sorted(set(getattr(item, "fixturenames", ())) & E2E_FIXTURES)
    if wanted:
        pytest.fail(f"{item.nodeid}: a test under tests/{folder}/ is pure Python, but it uses the fixture "
                    f"{', '.join(wanted)}: move its file to tests/e2e/", pytrace=False)


class _PurePopen(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, args, *a, **kw):  # noqa: ANN001
        argv0 = args if isinstance(args, (str, bytes, os.PathLike)) else (list(args) or [""])[0]
        name = os.path.basename(os.fsdecode(argv0)).split()[0] if argv0 else ""
        if name in E2E_PROGRAMS:
            raise AssertionError(f"a test under tests/unit/ started {name}: it is an end-to-end test "
                                 f"(move its file to tests/e2e/)")
        super().__init__(args, *a, **kw)


@pytest.fixture(autouse=True)
def _unit_stays_pure(request):
    """Under tests/unit/, starting fio, losetup, mount ... fails the test.
    (Not through ``monkeypatch``: an autouse fixture asking for it would set
    it up first and so undo a test's own PATH changes only after the other
    fixtures' teardowns, which need the real PATH to detach a loop device.)"""
    if folder_of(request.node.path) not in PURE:
        yield
        return
    real = subprocess.Popen
    subprocess.Popen = _PurePopen  # type: ignore[misc]
    try:
        yield
    finally:
        subprocess.Popen = real  # type: ignore[misc]


# ---------------------------------------------------------------------------
# What an interrupted run leaves behind

def tag_run(config: pytest.Config) -> None:
    """In the controlling process (not an xdist worker): the tag and ledger."""
    if hasattr(config, "workerinput"):
        return  # a worker keeps its controller's tag (a pytest run inside a test makes its own)
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    os.environ[TAG] = str(os.getpid())
    os.environ[LEDGER] = str(base / "simdrives-made.txt")
    config.stash[_BASE] = str(base)
    if getattr(config.option, "numprocesses", None):
        # SIGTERM (kill, a CI runner's time-out; the only signal that stops a
        # suite started in the background, which ignores SIGINT) ends the
        # controller as Ctrl-C does, so the sweep runs; it runs no test itself
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


_BASE = pytest.StashKey[str]()


def note_simdrive(name: str) -> None:
    """Written before ``simdrive up`` runs, so an interrupted up is swept too."""
    ledger = os.environ.get(LEDGER)
    if ledger:
        with open(ledger, "a") as fh:
            fh.write(name + "\n")


def sweep(config: pytest.Config) -> List[str]:
    """Undo what this run left behind; what was undone, one line each."""
    if hasattr(config, "workerinput") or os.environ.get(TAG) != str(os.getpid()) or _BASE not in config.stash:
        return []
    return leftovers(config.stash[_BASE], os.environ.get(LEDGER, ""), str(os.getpid()), clean=True)


def _tagged_pids(tag: str) -> List[int]:
    pids = []
    needle = f"{TAG}={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def _mounts_under(base: str) -> List[str]:
    points = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            point = line.split()[1].replace("\\040", " ")
            if point == base or point.startswith(base + "/"):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def _loops_under(base: str) -> List[str]:
    out = subprocess.run(["losetup", "--list", "--json", "-O", "NAME,BACK-FILE"], capture_output=True,
                         text=True, errors="surrogateescape", timeout=30)  # a backing file's name: any bytes
    if out.returncode != 0 or not out.stdout.strip():
        return []
    loops = []
    for dev in json.loads(out.stdout).get("loopdevices", []):
        back = (dev.get("back-file") or "").replace(" (deleted)", "")
        if back.startswith(base + "/"):
            loops.append(dev["name"])
    return loops


def leftovers(base: str, ledger: str, tag: str, clean: bool) -> List[str]:
    """What a run (base temporary directory, ledger, tag) left: emulated
    SSDs, processes, mounts, loop devices, dead captures' tracefs
    instances; with ``clean``, each one undone."""
    found = []
    names = []
    if ledger and os.path.exists(ledger):
        with open(ledger) as fh:
            names = [n for n in fh.read().split() if n]
    for name in dict.fromkeys(names):
        if os.path.isdir(os.path.join("/run/tkperf-simdrive", name)):
            found.append(f"emulated SSD {name}")
            if clean:
                subprocess.run([sys.executable, "-m", "tkperf", "simdrive", "down", name], capture_output=True,
                               timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    pids = _tagged_pids(tag)
    found += [f"process {pid}" for pid in pids]
    if clean and pids:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
                time.sleep(0.1)
    for point in _mounts_under(base):
        found.append(f"mount {point}")
        if clean:
            subprocess.run(["umount", "-l", point], capture_output=True, timeout=60)
    for loop in _loops_under(base):
        found.append(f"loop device {loop}")
        if clean:
            subprocess.run(["losetup", "-d", loop], capture_output=True, timeout=60)
    for instances in ("/sys/kernel/tracing/instances", "/sys/kernel/debug/tracing/instances"):
        if os.path.isdir(instances):
            dead = [n for n in os.listdir(instances) if n.startswith("tkperf-capture-")
                    and n[len("tkperf-capture-"):].isdigit() and not os.path.exists(f"/proc/{n[15:]}")]
            found += [f"tracefs instance {n}" for n in dead]
            if clean and dead:
                from tkperf.rwsw.tracing import Recorder
                Recorder._remove_stale(instances)
            break
    return found
