"""Bring an emulated SSD up, ask it for its counters, take it down.

Each drive has a root-only runtime directory ``/run/tkperf-simdrive/NAME``
holding ``params.json``, ``pid``, ``device``, ``server.log``,
the control socket and the FUSE mount point ``mnt``.  Nothing there is
followed as a link: the base directory must be a real directory owned by
root and closed to others, files are opened with ``O_NOFOLLOW``.

An ``up`` stopped at any point (a signal, SIGKILL too) leaves nothing that
cannot be found: its first act is to write ``up`` (its pid and start
time) into the new directory, removed when the drive is ready; :func:`down`
finds the loop device by its backing file (the drive file under ``mnt``),
whether or not ``device`` was written, and the server by its command line;
and the next ``up`` takes down every drive whose ``up`` never finished and
whose process is gone (:func:`sweep`).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import select
import signal
import socket
import stat
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

from tkperf import programs
from tkperf.errors import RefusedError, TargetError, ToolError, UsageError
from tkperf.simdrive import fuse_proto
from tkperf.simdrive.params import check_params
from tkperf.target import identity

BASE = "/run/tkperf-simdrive"
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
READY_TIMEOUT = 15.0


def available() -> str:
    """'' where an emulated SSD can be made here, else why not (one line)."""
    if os.geteuid() != 0:
        return "an emulated SSD needs root (mount and losetup)"
    if not os.path.exists("/dev/fuse"):
        return "an emulated SSD needs /dev/fuse (the fuse kernel module)"
    if programs.find("losetup") is None:
        return "an emulated SSD needs losetup (Debian package util-linux)"
    return ""


def _base(create: bool) -> str:
    """The base directory, checked: a real directory of root's, closed to others."""
    if create:
        try:
            os.mkdir(BASE, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(BASE)
    except FileNotFoundError:
        return BASE
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise RefusedError(f"{BASE} is not a directory of root's closed to others; not using it")
    return BASE


@contextlib.contextmanager
def _loops_locked() -> Iterator[None]:
    """Loop devices are bound and unbound under one lock over every tkperf
    simdrive process: a ``down`` detaches a device it found by its backing
    file, and without the lock two downs of one drive (the explicit one and
    another ``up``'s sweep) could both find it, the first detach it, an
    ``up`` bind that free number to its own drive, and the second detach
    that drive."""
    fd = os.open(os.path.join(_base(create=True), ".loops.lock"),
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(rundir: str, name: str) -> str:
    try:
        fd = os.open(os.path.join(rundir, name), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ""
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        return fh.read(4096).strip()


def _write(rundir: str, name: str, text: str) -> None:
    fd = os.open(os.path.join(rundir, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def drives() -> List[str]:
    """The runtime directories of the drives that are (or were) up."""
    base = _base(create=False)
    if not os.path.isdir(base):
        return []
    try:
        names = sorted(os.listdir(base))
    except PermissionError:
        raise ToolError(f"{base} is root's: emulated SSDs need root") from None
    out = []
    for name in names:
        path = os.path.join(base, name)
        if NAME.match(name) and stat.S_ISDIR(os.lstat(path).st_mode):
            out.append(path)
    return out


def device_of(rundir: str) -> str:
    return _read(rundir, "device")


def find(device: str) -> str:
    """The runtime directory of the drive ``device`` (its loop device or its name).

    A loop device is resolved by its current backing file, as ``ssd run``
    resolves it (:func:`backing_rundir`), never by the ``device`` a runtime
    directory recorded: after an interrupted ``down`` a stale directory may
    still name the loop device that a newer drive is bound to now."""
    if device.startswith("/"):
        real = os.path.realpath(device)
        rundir = backing_rundir(_sysfs(real, "loop/backing_file")) if os.path.basename(real).startswith("loop") \
            else None
        if rundir is not None:
            return rundir
    else:
        for rundir in drives():
            if os.path.basename(rundir) == device:
                return rundir
    raise TargetError(f"{device} is not an emulated SSD of tkperf simdrive (see tkperf simdrive list)")


def backing_rundir(backing_file: str) -> Optional[str]:
    """The runtime directory whose drive file is ``backing_file`` (a loop
    device's backing file), or None."""
    head, tail = os.path.split(backing_file.strip())
    if tail != fuse_proto.FILE_NAME.decode() or os.path.basename(head) != "mnt":
        return None
    rundir = os.path.dirname(head)
    if os.path.dirname(rundir) != BASE or not NAME.match(os.path.basename(rundir)):
        return None
    try:
        return rundir if _base(create=False) and os.path.isdir(rundir) else None
    except RefusedError:
        return None


def up(capacity: int, params: Dict[str, float], name: str = "") -> str:
    """Make the drive; its loop device once it is ready."""
    why = available()
    if why:
        raise ToolError(why)
    try:
        full = check_params(capacity, params)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if name and not NAME.match(name):
        raise UsageError(f"--name {name!r}: use 1-32 of a-z, 0-9, '_' and '-', starting with a letter or digit")
    base = _base(create=True)
    sweep()
    rundir = ""
    for candidate in [name] if name else [f"simdrive{i}" for i in range(1000)]:
        try:
            os.mkdir(os.path.join(base, candidate), 0o700)
        except FileExistsError:
            continue  # another up took it meanwhile: the next name
        name, rundir = candidate, os.path.join(base, candidate)
        _write(rundir, UP_FILE, _owner(os.getpid()))  # the intent, before anything is made
        break
    if not rundir:
        raise RefusedError(f"an emulated SSD named {name or 'simdrive0..999'} is already up "
                           f"(tkperf simdrive list; tkperf simdrive down NAME)")
    try:
        _pause("made")
        _write(rundir, "params.json", json.dumps({"capacity": capacity, "params": full}))
        os.mkdir(os.path.join(rundir, "mnt"), 0o700)
        _pause("mnt")
        _start_server(rundir)
        device = _attach(rundir)
        _pause("ready")
        os.unlink(os.path.join(rundir, UP_FILE))
    except BaseException:
        down(rundir)
        raise
    return device


#: The file of an ``up`` under way: ``PID STARTTIME`` of its process.
UP_FILE = "up"
#: Test-only: ``up`` stops at this step (``made``, ``mnt``, ``server``, ``attached``,
#: ``ready``), ``down`` at ``detached``, ``stopped``, ``unmounted``, and waits to be
#: killed there (tests/e2e/test_simdrive_interrupted.py).
_PAUSE_ENV = "TKPERF_SIMDRIVE_TEST_PAUSE"


def _pause(step: str) -> None:
    if os.environ.get(_PAUSE_ENV) == step:
        sys.stderr.write(f"paused at {step}\n")
        sys.stderr.flush()
        while True:
            time.sleep(1)


def _owner(pid: int) -> str:
    """``PID STARTTIME`` (the process's start in clock ticks since boot): a
    pid reused by another process has another start time."""
    started = programs.start_ticks(pid)
    return "" if started is None else f"{pid} {started}"


def _unfinished(rundir: str) -> bool:
    """Whether ``rundir`` is of an ``up`` that never finished and whose process is gone."""
    text = _read(rundir, UP_FILE)
    if not os.path.lexists(os.path.join(rundir, UP_FILE)):
        return False
    pid = text.split()[0] if text.split() else ""
    return not pid.isdigit() or _owner(int(pid)) != text


def sweep() -> List[str]:
    """Take down every drive whose ``up`` was stopped half-way (its process
    gone); the names taken down."""
    done = []
    for rundir in drives():
        if _unfinished(rundir):
            try:
                down(rundir)
                done.append(os.path.basename(rundir))
            except (RefusedError, ToolError):
                pass  # still busy: the next up or down tries again
    return done


def _loops_over(rundir: str) -> List[str]:
    """The loop devices whose backing file is this drive's file, found by
    their backing file (recorded in ``device`` or not)."""
    prefix = os.path.join(rundir, "mnt") + "/"
    try:
        names = sorted(n for n in os.listdir("/sys/block") if n.startswith("loop"))
    except OSError:
        return []
    return [f"/dev/{n}" for n in names if _sysfs(f"/dev/{n}", "loop/backing_file").startswith(prefix)]


def _start_server(rundir: str) -> None:
    logfd = os.open(os.path.join(rundir, "server.log"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        # This tkperf's code only (programs.python_module), in "/": the server
        # outlives the command and keeps no one's folder busy.
        proc = programs.daemon(programs.python_module("tkperf.simdrive", rundir), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=logfd, close_fds=True, cwd="/")
    finally:
        os.close(logfd)
    _write(rundir, "pid", str(proc.pid))
    _pause("server")
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT
    line = b""
    while time.monotonic() < deadline and proc.poll() is None:
        if select.select([proc.stdout], [], [], 0.05)[0]:
            line = proc.stdout.readline()
            break
    proc.stdout.close()
    if line.strip() != b"ready":
        tail = _read(rundir, "server.log").splitlines()
        why = tail[-1] if tail else ("it did not answer" if proc.poll() is None else f"exit code {proc.returncode}")
        raise ToolError(f"the emulated SSD's server did not start: {why}")


def _attach(rundir: str) -> str:
    with _loops_locked():
        out = programs.run([programs.require("losetup"), "--find", "--show", "--direct-io=on",
                            os.path.join(rundir, "mnt", fuse_proto.FILE_NAME.decode())], timeout=30, what="losetup")
    device = out.stdout.strip()
    _pause("attached")
    _write(rundir, "device", device)
    dio = _sysfs(device, "loop/dio")
    if dio != "1":
        raise ToolError(f"loop direct I/O did not get enabled over FUSE here ({device}: dio={dio or '?'})")
    return device


def _sysfs(device: str, name: str) -> str:
    # a backing file's path may hold any bytes (another user's loop device's too)
    return identity.read_text(f"/sys/block/{os.path.basename(device)}/{name}")


def _server_pid(rundir: str) -> Optional[int]:
    """The server's pid when that process is still this drive's server; found
    by its command line when ``pid`` was not written (an ``up`` killed just
    after starting it)."""
    text = _read(rundir, "pid")
    candidates = [int(text)] if text.isdigit() else \
        [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    for pid in candidates:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if b"tkperf.simdrive" in argv and os.fsencode(rundir) in argv:
            return pid
    return None


def down(rundir: str) -> None:
    """Detach the loop device, stop the server, unmount, remove the runtime directory.
    Works whatever state the drive is in (server crashed, half made)."""
    with _loops_locked():
        for device in _loops_over(rundir):  # the recorded one and any an interrupted up did not record
            programs.run([programs.require("losetup"), "--detach", device], timeout=30, check=False,
                         what="losetup --detach")
    _pause("detached")
    pid = _server_pid(rundir)
    if pid is not None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and not _gone(pid):
                time.sleep(0.02)
            if _gone(pid):
                break
    _pause("stopped")
    mnt = os.path.join(rundir, "mnt")
    fuse_proto.unmount(mnt)
    _pause("unmounted")
    for name in ("params.json", "pid", "device", "server.log", "control", UP_FILE, "data"):  # data: older
        try:
            os.unlink(os.path.join(rundir, name))
        except FileNotFoundError:
            pass
    for d in (mnt, rundir):
        try:
            os.rmdir(d)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RefusedError(f"{d} could not be removed ({exc.strerror}): is an up of this drive still "
                               f"under way? Try tkperf simdrive down {os.path.basename(rundir)} again") from None


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended: reaped here when it is our child; otherwise
    gone, or a zombie (it has exited, closed its files and left the FUSE
    connection; only its exit status waits for its parent, init for a server
    whose ``up`` has ended, which may collect it seconds later)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def _ask(rundir: str, line: bytes) -> Dict[str, Any]:
    """One request on the server's control socket; its JSON answer."""
    name = os.path.basename(rundir)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10.0)
    try:
        sock.connect(os.path.join(rundir, "control"))
        sock.sendall(line)
        chunks = []
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        raise TargetError(f"the server of emulated SSD {name} does not answer ({exc.strerror or exc}); "
                          f"tkperf simdrive down {name} removes what is left") from None
    finally:
        sock.close()
    try:
        doc = json.loads(b"".join(chunks))
    except ValueError:
        raise TargetError(f"the server of emulated SSD {name} gave no valid answer") from None
    if not isinstance(doc, dict):
        raise TargetError(f"the server of emulated SSD {name} gave no valid answer")
    return doc


def stats(rundir: str, history: bool = False) -> Dict[str, Any]:
    """The model's counters, asked of its server."""
    doc = _ask(rundir, b"stats history\n" if history else b"stats\n")
    doc["name"] = os.path.basename(rundir)
    doc["device"] = _read(rundir, "device")
    return doc


def hold(rundir: str) -> bool:
    """Tell the drive that the time until its next command is the host's,
    not idle time (``Drive.hold``: no background GC in it); whether the
    server knew the request (an older server does not)."""
    return _ask(rundir, b"hold\n").get("held") is True


def release(rundir: str) -> bool:
    """Undo :func:`hold`: idle time from now on is the drive's again
    (``Drive.release``); whether the server knew the request."""
    return _ask(rundir, b"release\n").get("held") is False
