"""The one way tkperf runs another program.

Every child gets an argument list (never a shell string), is logged before
it starts, runs in its own session so a signal to tkperf does not reach it
unasked, is tracked so an interrupted run can stop it, and is killed if
anything goes wrong while tkperf waits for it.

Programs are found where PATH says, then where Debian installs them
(:data:`SYSTEM_DIRS`: cron's ``PATH=/usr/bin:/bin`` has no ``sbin``), never
in the current folder (a relative entry of PATH is skipped); every child
gets that PATH.  A Python child (:func:`python_module`) runs the tkperf
package this process runs, in isolated mode: nothing from the folder it
was started in, nor ``PYTHONPATH`` or the user's site packages, is loaded.
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set

from tkperf.errors import TkperfError, ToolError, ToolTimeout

log = logging.getLogger("tkperf")

PR_SET_PDEATHSIG = 1

_children: Set[subprocess.Popen] = set()
_children_lock = threading.Lock()

PACKAGES = {
    "fio": "fio",
    "lsblk": "util-linux",
    "blkid": "util-linux",
    "blkdiscard": "util-linux",
    "dmsetup": "dmsetup",
    "losetup": "util-linux",
    "fallocate": "util-linux",
    "hdparm": "hdparm",
    "nvme": "nvme-cli",
    "sg_format": "sg3-utils",
    "sg_inq": "sg3-utils",
    "sg_readcap": "sg3-utils",
    "smartctl": "smartmontools",
    "env": "coreutils",
}


#: Where Debian installs programs, searched after PATH's own folders: a root
#: crontab's default ``PATH=/usr/bin:/bin`` holds none of the ``sbin`` folders
#: (losetup, blkid, blkdiscard, dmsetup, hdparm, nvme).
SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def search_path(path: Optional[str] = None) -> str:
    """The folders programs are found in, as a PATH: those of ``path`` (by
    default the environment's PATH) in their order, without relative ones
    (an empty entry or ``.`` is the current folder, which may be anyone's),
    then each folder of :data:`SYSTEM_DIRS` they lack."""
    if path is None:
        path = os.environ.get("PATH", os.defpath)
    dirs: List[str] = []
    for d in [*path.split(os.pathsep), *SYSTEM_DIRS]:
        d = os.path.normpath(d) if os.path.isabs(d) else ""
        if d and d not in dirs:
            dirs.append(d)
    return os.pathsep.join(dirs)


def child_env(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """``env`` (by default this process's environment) with the PATH of
    :func:`search_path`: what every child tkperf starts gets."""
    out = dict(os.environ if env is None else env)
    out["PATH"] = search_path(out.get("PATH", os.defpath))
    return out


def find(tool: str) -> Optional[str]:
    """Absolute path of ``tool`` (PATH's folders first, then :data:`SYSTEM_DIRS`), or None."""
    return shutil.which(tool, path=search_path())


def require(tool: str) -> str:
    """Absolute path of ``tool``, or a ToolError naming the package that has it."""
    path = find(tool)
    if path is None:
        pkg = PACKAGES.get(tool, tool)
        raise ToolError(f"'{tool}' not found on PATH; install it (Debian package {pkg})")
    return path


#: The folder of the tkperf package this process runs (a checkout's or site-packages').
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def python_module(module: str, *args: str) -> List[str]:
    """The command line of ``python -m MODULE ARGS`` (``module``: tkperf or one
    of its modules) running this process's tkperf.  Not ``python -m``, which
    puts the current folder first on sys.path (a ``tkperf/`` planted there
    would run as root): isolated mode (``-I``: neither the current folder nor
    the script's, no ``PYTHON*`` variable, no user site packages) and
    :mod:`tkperf.bootstrap`, which loads the package it is in by its path."""
    return [sys.executable, "-I", os.path.join(PACKAGE_DIR, "bootstrap.py"), module, *args]


def command_line(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when tkperf dies, even by SIGKILL,
    so a killed run never leaves fio writing to the device."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_starting = threading.local()


def starting() -> bool:
    """Whether this thread is inside :func:`signals_held` (forking a child in
    :func:`start`, making a temporary file): a signal handler must not raise
    there -- an exception raised in Python's fork hooks is lost -- but hand
    its work to :func:`defer`."""
    return getattr(_starting, "depth", 0) > 0


def defer(action: Callable[[], None]) -> None:
    """Run ``action`` (a signal handler's raise) when :func:`signals_held`'s block is done."""
    _starting.deferred = action


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """A block that a signal handler's raise must not cut in two: the raise
    (see :func:`starting`) waits until the block is done.  Forking a child
    (its fork hooks lose an exception), or making a temporary file (a raise
    between the file's creation and the name reaching its owner leaves it
    behind)."""
    _starting.depth = getattr(_starting, "depth", 0) + 1
    try:
        yield
    finally:
        _starting.depth -= 1
        action = getattr(_starting, "deferred", None) if _starting.depth == 0 else None
        if action is not None:
            _starting.deferred = None
            action()  # the handler's raise; an interruption outranks the block's own error


def start(argv: Sequence[str], **kwargs) -> subprocess.Popen:
    """Start a tracked child in its own session; the command line goes to the log first.
    A signal that arrives while the child is forked takes effect right after
    it is tracked (so the clean-up stops it)."""
    log.info("run: %s", command_line(argv))
    kwargs["env"] = child_env(kwargs.get("env"))
    with signals_held():
        proc = subprocess.Popen(list(argv), start_new_session=True, preexec_fn=_die_with_parent, **kwargs)
        with _children_lock:
            _children.add(proc)
    return proc


def daemon(argv: Sequence[str], **kwargs) -> subprocess.Popen:
    """Start a child meant to outlive tkperf (the emulated SSD's server):
    logged, in its own session, neither tracked nor killed when tkperf dies."""
    log.info("run (stays running): %s", command_line(argv))
    kwargs["env"] = child_env(kwargs.get("env"))
    return subprocess.Popen(list(argv), start_new_session=True, **kwargs)


def forget(proc: subprocess.Popen) -> None:
    with _children_lock:
        _children.discard(proc)


def kill(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the child's whole process group (fio forks a process per job)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_all(timeout: float = 10.0) -> None:
    """Stop every tracked child: SIGTERM, then SIGKILL for what is left after ``timeout``."""
    with _children_lock:
        procs = list(_children)
    for p in procs:
        kill(p, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(p, signal.SIGKILL)
            p.wait()
        forget(p)


#: Closing lines that say only that a tool failed (dmsetup, lvm): the line before says why.
GENERIC_LAST_LINES = frozenset({"Command failed.", "Command failed"})


def run(argv: Sequence[str], timeout: Optional[float] = None, check: bool = True,
        what: str = "", stdin_text: Optional[str] = None) -> subprocess.CompletedProcess:
    """Run to completion and capture output; a non-zero exit raises a TkperfError with stderr,
    running past ``timeout`` a ToolTimeout.
    ``stdin_text``: what the program reads on its standard input (else tkperf's own)."""
    piped = {"stdin": subprocess.PIPE} if stdin_text is not None else {}
    proc = start(argv, **piped, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 errors="replace")  # a tool may print bytes of any encoding (sg_format did)
    try:
        out, err = proc.communicate(input=stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        proc.communicate()
        raise ToolTimeout(f"{what or argv[0]} did not finish within {timeout:.0f} s") from None
    except BaseException:
        kill(proc)
        proc.wait()
        raise
    finally:
        forget(proc)
    if check and proc.returncode != 0:
        tail = [line for line in (err or out or "").strip().splitlines() if line.strip()]
        if len(tail) > 1 and tail[-1].strip() in GENERIC_LAST_LINES:
            tail.pop()  # dmsetup's reason is the line before its "Command failed."
        detail = tail[-1] if tail else f"exit code {proc.returncode}"
        raise ToolError(f"{what or os.path.basename(argv[0])} failed: {detail}")
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def output(argv: List[str], timeout: float = 60.0) -> str:
    """stdout of a quick query command, or '' if it fails (for optional facts)."""
    try:
        return run(argv, timeout=timeout).stdout
    except (TkperfError, OSError):
        return ""


def start_ticks(pid: int) -> Optional[int]:
    """When process ``pid`` started, in clock ticks since boot (field 22 of
    ``/proc/PID/stat``), None when it is gone: a pid the kernel gave to
    another process since has another start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            rest = fh.read().rsplit(b")", 1)[1].split()
        return int(rest[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_tag(pid: int) -> str:
    """``PID-STARTTIME`` of a process, '' when it is gone: what names the
    state a process leaves for others to sweep (a device-mapper map, a
    capture's registration), so that a pid the kernel reused is no owner."""
    started = start_ticks(pid)
    return "" if started is None else f"{pid}-{started}"


def owner_alive(tag: str) -> bool:
    """Whether the process of owner tag ``tag`` (``PID-STARTTIME``) still runs."""
    pid = tag.split("-")[0]
    return pid.isdigit() and owner_tag(int(pid)) == tag
