"""Run in a private mount namespace by tests/e2e/test_tracefs_ownership.py:
what a capture's tracefs mount record may undo (issue 54 item 3).

    unshare --mount --propagation private python tracefs_ns.py SCENARIO WORKDIR [DEVICE]

Every mount made here lives in this process's own mount namespace and
goes with it: the machine's tracefs (``/sys/kernel/tracing``) is neither
used nor touched.  The copies of the machine's tracefs and debugfs mounts
the namespace starts with are unmounted in it first (the machine keeps
them), and tkperf's tracefs point and registry are folders of WORKDIR.
Tracefs instances are the kernel's, shared by every mount: an instance
this script makes is removed in a ``finally``.  It prints one JSON
document: what the scenario saw.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import re
import signal
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tkperf.cli import main  # noqa: E402
from tkperf.errors import TkperfError  # noqa: E402
from tkperf.rwsw import tracing  # noqa: E402

SCENARIO, WORK = sys.argv[1], sys.argv[2]
DEVICE = sys.argv[3] if len(sys.argv) > 3 else ""
POINT = os.path.join(WORK, "tracing")
STATE = os.path.join(WORK, "state")
#: Another tool's tracefs instance, named as tkperf's begin (instances are the kernel's, seen by every
#: process: this one's own name).
FOREIGN = f"tkperf-capture-backup-of-{os.getpid()}"
#: The owner tags of the captures this script killed.
KILLED: list = []
#: Any device number will do for a Recorder that records nothing.
NOWHERE = tracing.DeviceFacts(path="/dev/null", major=7, minor=1000, first_sector=0, sectors=2048)


def sh(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True)


def _mountinfo() -> list:
    """(mount ID, mount point, type) of this namespace's mounts (read here, not by tkperf)."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            head, _, tail = line.partition(" - ")
            fields = head.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            out.append((int(fields[0]), point, tail.split()[0]))
    return out


def _unique(point: str):
    """statx's STATX_MNT_ID_UNIQUE of the mount at ``point`` (None: the kernel has none)."""
    statx = ctypes.CDLL(None, use_errno=True).statx
    statx.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    buf = ctypes.create_string_buffer(256)
    if statx(-100, os.fsencode(point), 0x100, 0x4000, buf) != 0:
        return None
    return struct.unpack_from("=Q", buf.raw, 0x90)[0] if struct.unpack_from("=I", buf.raw, 0)[0] & 0x4000 else None


def mount_at(point: str):
    """The mount on top at ``point``, as a dict (None: nothing is mounted there)."""
    on_top = [m for m in _mountinfo() if m[1] == point]
    return {"kind": on_top[-1][2], "mount_id": on_top[-1][0], "unique": _unique(point)} if on_top else None


def tracing_mounts() -> list:
    return [point for _id, point, kind in _mountinfo() if kind in ("tracefs", "debugfs")]


def setup() -> None:
    for point in reversed(tracing_mounts()):  # this namespace's copies only
        sh("umount", "-l", point)
    assert tracing_mounts() == [], tracing_mounts()
    os.makedirs(POINT, exist_ok=True)
    tracing.TRACEFS = POINT
    tracing.DEBUGFS = os.path.join(WORK, "no-debugfs")
    tracing.STATE_DIR = STATE


def mount_tracefs() -> dict:
    sh("mount", "-t", "tracefs", "nodev", POINT).check_returncode()
    m = mount_at(POINT)
    assert m is not None
    return m


def killed_capture() -> str:
    """A capture that set up (and mounted tracefs for) its instance and was
    then killed with SIGKILL: its owner tag."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            tracing.Recorder(NOWHERE).__enter__()
        finally:
            os.kill(os.getpid(), signal.SIGKILL)
    tag = tracing.owner_tag(pid)
    KILLED.append(tag)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    return tag


def registry() -> list:
    return sorted(os.listdir(STATE)) if os.path.isdir(STATE) else []


def instances() -> list:
    """This script's captures' instances (other processes' captures may run meanwhile)."""
    where = os.path.join(POINT, "instances")
    mine = {tracing.PREFIX + tracing.owner_tag(os.getpid())} | {tracing.PREFIX + tag for tag in KILLED}
    return sorted(n for n in os.listdir(where) if n in mine) if os.path.isdir(where) else []


def one_capture() -> dict:
    """A capture that sets up and ends (the Recorder, nothing recorded)."""
    try:
        with tracing.Recorder(NOWHERE) as rec:
            seen = {"mounted": mount_at(POINT), "instance": os.path.basename(rec.instance or "")}
    except TkperfError as exc:
        return {"error": str(exc), "type": type(exc).__name__}
    return {**seen, "problems": rec.problems}


@contextlib.contextmanager
def foreign_instance():
    """Another tool's tracefs instance, named as tkperf's begin."""
    path = os.path.join(POINT, "instances", FOREIGN)
    os.mkdir(path)
    try:
        yield path
    finally:
        if os.path.isdir(path):
            os.rmdir(path)


def scenario_remounted() -> dict:
    """A killed capture mounted tracefs; the administrator unmounted it and
    mounted tracefs again at the same point for another tool (the kernel
    may give the new mount the old one's ID).  The next capture ends."""
    tag = killed_capture()
    ours = mount_at(POINT)
    sh("umount", POINT).check_returncode()
    theirs = mount_tracefs()
    with foreign_instance() as other:
        got = one_capture()
        got["foreign_instance_kept"] = os.path.isdir(other)
    return {"killed": tag, "ours": ours, "theirs": theirs, "capture": got,
            "after": mount_at(POINT), "registry": registry(), "instances": instances()}


def scenario_still_ours() -> dict:
    """A killed capture's mount is still there: the next capture, the last
    to end, unmounts it (the record proves it is the one a capture made)."""
    tag = killed_capture()
    ours = mount_at(POINT)
    got = one_capture()
    return {"killed": tag, "ours": ours, "capture": got, "after": mount_at(POINT),
            "registry": registry()}


def scenario_old_record() -> dict:
    """A record of an older tkperf (only the path) and a tracefs mounted
    there by someone: the capture leaves it, and says why."""
    theirs = mount_tracefs()
    os.makedirs(STATE, mode=0o700, exist_ok=True)
    with open(os.path.join(STATE, tracing.MOUNTED), "w") as fh:
        fh.write(POINT + "\n")
    got = one_capture()
    return {"theirs": theirs, "capture": got, "after": mount_at(POINT),
            "registry": registry()}


def scenario_damaged_while_running() -> dict:
    """The registry's ``mounted`` file becomes a directory while a capture
    (which mounted tracefs) runs: its end is one error, and its mount goes."""
    rec = tracing.Recorder(NOWHERE).__enter__()
    during = mount_at(POINT)
    os.unlink(os.path.join(STATE, tracing.MOUNTED))
    os.mkdir(os.path.join(STATE, tracing.MOUNTED))
    try:
        rec.__exit__(None, None, None)
        error = None
    except TkperfError as exc:
        error = {"type": type(exc).__name__, "text": str(exc), "exit": exc.exit_code}
    return {"during": during, "error": error, "after": mount_at(POINT), "problems": rec.problems}


DAMAGE = {
    "lock-link": lambda: os.symlink(os.path.join(WORK, "victim"), os.path.join(STATE, "lock")),
    "lock-dir": lambda: os.mkdir(os.path.join(STATE, "lock")),
    "lock-fifo": lambda: os.mkfifo(os.path.join(STATE, "lock")),
    "mounted-dir": lambda: os.mkdir(os.path.join(STATE, tracing.MOUNTED)),
    "mounted-link": lambda: os.symlink(os.path.join(WORK, "victim"), os.path.join(STATE, tracing.MOUNTED)),
    "own-entry-dir": lambda: os.mkdir(os.path.join(STATE, tracing.owner_tag(os.getpid()))),
    "dead-entry-dir": lambda: os.mkdir(os.path.join(STATE, f"1-{int(tracing.owner_tag(1).split('-')[1]) + 1}")),
}


def scenario_damaged(kind: str) -> dict:
    """``tkperf capture DEVICE`` with the registry damaged as ``kind`` says,
    nothing mounted before: the exit, what it said, what is mounted after."""
    os.makedirs(STATE, mode=0o700)
    DAMAGE[kind]()
    out, err = io.StringIO(), io.StringIO()
    outdir = os.path.join(WORK, "out")
    os.mkdir(outdir)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["capture", DEVICE, "--duration", "1", "--name", "c", "--outdir", outdir])
    return {"rc": rc, "err": err.getvalue().splitlines(), "after": tracing_mounts(), "written": os.listdir(outdir),
            "victim": os.path.exists(os.path.join(WORK, "victim")), "instances": instances()}


if __name__ == "__main__":
    setup()
    try:
        if SCENARIO.startswith("damaged-") and SCENARIO != "damaged-while-running":
            result = scenario_damaged(SCENARIO[len("damaged-"):])
        else:
            result = globals()["scenario_" + SCENARIO.replace("-", "_")]()
    finally:  # what a failed scenario left of its captures' instances: the kernel's, shared
        mounted = mount_at(POINT) is not None
        if not mounted:
            sh("mount", "-t", "tracefs", "nodev", POINT)
        for name in [FOREIGN] + [tracing.PREFIX + tag for tag in KILLED]:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(POINT, "instances", name))
        if not mounted:
            sh("umount", POINT)
    print(json.dumps(result))
