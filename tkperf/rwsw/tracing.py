"""Recording a device's block I/O through the block tracepoints of tracefs.

The events ``block/block_rq_issue``, ``block_rq_complete`` and
``block_rq_requeue`` are
enabled in a tracefs *instance* of tkperf's own (``instances/tkperf-
capture-PID``), filtered to the device's number, and read from that
instance's ``per_cpu/cpuN/trace_pipe_raw`` (binary pages, which the kernel
need not format) into a file while the capture lasts.  The
global tracing state (``current_tracer``, the global buffer, the events
enabled there) is never touched; the instance is removed afterwards, and
a tracefs (or debugfs) that tkperf mounted is unmounted by the last
capture to end -- on any exit, also when a signal stops the capture, and
whatever the order in which concurrent captures end.  Captures under way
register in :data:`STATE_DIR` (root's, closed to others), each by its
owner tag ``PID-STARTTIME`` (the process's start in clock ticks since
boot: a reused pid has another), under a lock; a capture that mounts
tracefs says so there.  Each capture, as it starts and as it ends, first
takes away what captures that are gone (SIGKILL) left: their registration
and their instance, found by its owner tag, not only by whether the pid
exists.  The device itself is never opened.

The kernel issues a partition's requests to its disk with the disk's
sectors: a partition is recorded as its disk's events in the partition's
sector range (:func:`device_facts`).
"""
from __future__ import annotations

import errno
import fcntl
import logging
import os
import stat
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from tkperf import programs
from tkperf.errors import TargetError, ToolError, UsageError
from tkperf.rwsw import rawtrace

log = logging.getLogger("tkperf")

EVENTS = ("block_rq_issue", "block_rq_complete", "block_rq_requeue")
TRACEFS = "/sys/kernel/tracing"
DEBUGFS = "/sys/kernel/debug"
BUFFER_KB = 8192          # per CPU, in the instance only
PREFIX = "tkperf-capture-"
#: Where captures under way register (one file per capture, named by its
#: owner tag) and ``mounted`` lists what a capture mounted for them all.
STATE_DIR = "/run/tkperf-capture"
MOUNTED = "mounted"


def owner_tag(pid: int) -> str:
    """``PID-STARTTIME`` of a process, '' when it is gone."""
    started = programs.start_ticks(pid)
    return "" if started is None else f"{pid}-{started}"


def _alive(tag: str) -> bool:
    """Whether the capture of owner tag ``tag`` (or a bare pid, of an older tkperf) still runs."""
    pid = tag.split("-")[0]
    if not pid.isdigit():
        return False
    return owner_tag(int(pid)) == tag if "-" in tag else os.path.exists(f"/proc/{pid}")


class _Shared:
    """The registry of captures under way, locked (``flock``) while held."""

    def __enter__(self) -> str:
        try:
            os.mkdir(STATE_DIR, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(STATE_DIR)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise ToolError(f"{STATE_DIR} is not a directory of root's closed to others; not using it")
        self.fd = os.open(os.path.join(STATE_DIR, "lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                          0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return STATE_DIR

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # and the lock with it


def _users() -> List[str]:
    return [n for n in os.listdir(STATE_DIR) if n[:1].isdigit()]


@dataclass(frozen=True)
class DeviceFacts:
    """What the capture needs to know of the device: the disk whose
    requests are traced (major, minor), the sector range of the device on
    it, its size in bytes."""

    path: str
    major: int
    minor: int
    first_sector: int
    sectors: int

    @property
    def size(self) -> int:
        return self.sectors * 512

    @property
    def kernel_dev(self) -> int:
        """The device number as the tracepoints hold it (the kernel's dev_t: major << 20 | minor)."""
        return (self.major << 20) | self.minor


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read().strip()


def device_facts(device: str) -> DeviceFacts:
    """The block device ``device`` (``/dev/loop0``, ``loop0``); a TargetError
    when it does not exist, is not a block device, or is one whose I/O never
    reaches the block layer as requests (device-mapper, md: capture the
    devices below)."""
    path = device if os.path.exists(device) or "/" in device else os.path.join("/dev", device)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TargetError(f"{device}: {exc.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{device}: not a block device")
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    sysfs = os.path.realpath(f"/sys/dev/block/{major}:{minor}")
    try:
        sectors = int(_read(os.path.join(sysfs, "size")))
        disk, first = sysfs, 0
        if os.path.exists(os.path.join(sysfs, "partition")):
            disk = os.path.dirname(sysfs)
            first = int(_read(os.path.join(sysfs, "start")))
            major, minor = (int(x) for x in _read(os.path.join(disk, "dev")).split(":"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"{device}: its sysfs entry {sysfs} cannot be read ({exc})") from None
    if not os.path.isdir(os.path.join(disk, "mq")):
        raise TargetError(f"{device}: a device without a request queue (device-mapper, md RAID): "
                          "its I/O reaches the block layer on the devices below it; capture those")
    return DeviceFacts(path=path, major=major, minor=minor, first_sector=first, sectors=sectors)


def on_device(directory: str, dev: DeviceFacts) -> bool:
    """Whether ``directory`` is on a file system of the captured disk (writing
    there would add I/O to what is captured)."""
    st = os.stat(directory)
    key = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sysfs = os.path.realpath(f"/sys/dev/block/{key}")
    if not os.path.isdir(sysfs):
        return False
    disk = os.path.dirname(sysfs) if os.path.exists(os.path.join(sysfs, "partition")) else sysfs
    try:
        return _read(os.path.join(disk, "dev")) == f"{dev.major}:{dev.minor}"
    except OSError:
        return False


def _mounts() -> List[Tuple[str, str]]:
    """(mount point, file system type) of every mount."""
    out = []
    with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3:
                out.append((parts[1].replace("\\040", " "), parts[2]))
    return out


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(text)
    except OSError as exc:
        raise ToolError(f"cannot set {path} to {text.strip()!r}: {exc.strerror or exc}") from None


class Recorder:
    """A context manager: on entry, tracefs found or mounted and tkperf's
    instance set up with the device's filter; :meth:`record` reads the events
    into a file; on exit everything is put back as it was."""

    def __init__(self, dev: DeviceFacts) -> None:
        self.dev = dev
        self.mounted: List[str] = []   # mount points tkperf mounted, in order
        self.instance: Optional[str] = None
        self.root: Optional[str] = None
        self.layout: Optional[rawtrace.Layout] = None
        self.pipes: Dict[int, int] = {}  # CPU -> its trace_pipe_raw
        self.lost = 0
        self.problems: List[str] = []  # what could not be put back, for the user
        self.tag = ""
        self.registered = False

    @staticmethod
    def _instances() -> Optional[str]:
        """The instances directory of a tracefs mounted now, if any."""
        for point, kind in _mounts():
            for sub in ("instances", os.path.join("tracing", "instances")):
                if kind in ("tracefs", "debugfs") and os.path.isdir(os.path.join(point, sub)):
                    return os.path.join(point, sub)
        return None

    # -- set-up and clean-up ---------------------------------------------------
    def _tracing_dir(self) -> str:
        mounts = _mounts()
        for point, kind in mounts:
            if kind == "tracefs" and os.path.isdir(os.path.join(point, "instances")):
                return point
        for point, kind in mounts:
            if kind == "debugfs" and os.path.isdir(os.path.join(point, "tracing", "instances")):
                return os.path.join(point, "tracing")
        mount = programs.require("mount")
        if os.path.isdir(TRACEFS):
            programs.run([mount, "-t", "tracefs", "nodev", TRACEFS], timeout=30, what="mount tracefs")
            self.mounted.append(TRACEFS)
            return TRACEFS
        programs.run([mount, "-t", "debugfs", "nodev", DEBUGFS], timeout=30, what="mount debugfs")
        self.mounted.append(DEBUGFS)
        return os.path.join(DEBUGFS, "tracing")

    @staticmethod
    def _remove_stale(instances: Optional[str]) -> None:
        """What captures whose process is gone (killed with SIGKILL, which
        nothing can catch) left: their registration and their instance (its
        events disabled, removed), told by the owner tag, so a pid reused
        by another process does not keep it.  Under the registry's lock."""
        for tag in _users():
            if not _alive(tag):
                os.unlink(os.path.join(STATE_DIR, tag))
        if instances is None or not os.path.isdir(instances):
            return
        for name in os.listdir(instances):
            tag = name[len(PREFIX):]
            if not name.startswith(PREFIX) or _alive(tag):
                continue
            path = os.path.join(instances, name)
            for e in EVENTS:
                try:
                    _write(os.path.join(path, "events", "block", e, "enable"), "0\n")
                except ToolError:
                    pass
            try:
                os.rmdir(path)
                log.info("capture: removed the instance %s of a capture that was killed", path)
            except OSError as exc:
                log.warning("cannot remove the stale tracefs instance %s: %s", path, exc.strerror)

    def __enter__(self) -> Recorder:
        try:
            self.tag = owner_tag(os.getpid())
            with _Shared():  # registered before anything is changed: the last to end puts it back
                self._remove_stale(self._instances())
                with open(os.path.join(STATE_DIR, self.tag), "w", encoding="ascii") as fh:
                    fh.write(f"{self.tag}\n")
                self.registered = True
                try:
                    root = self.root = self._tracing_dir()
                finally:
                    if self.mounted:  # mounted for every capture: the last to end unmounts it
                        with open(os.path.join(STATE_DIR, MOUNTED), "a", encoding="utf-8") as fh:
                            fh.write("".join(f"{point}\n" for point in self.mounted))
                        self.mounted = []
                self._remove_stale(os.path.join(root, "instances"))
            events = os.path.join(root, "events", "block")
            if not all(os.path.isdir(os.path.join(events, e)) for e in EVENTS):
                raise ToolError(f"this kernel has no block tracepoints ({events}/{EVENTS[0]}): "
                                "it was built without CONFIG_BLK_DEV_IO_TRACE's events")
            base = os.path.join(root, "instances", f"{PREFIX}{self.tag}")
            self.instance = base
            try:
                os.mkdir(base)
            except OSError as exc:
                self.instance = None
                raise ToolError(f"cannot create the tracefs instance {base}: {exc.strerror}") from None
            _write(os.path.join(base, "buffer_size_kb"), f"{BUFFER_KB}\n")
            for e in EVENTS:
                _write(os.path.join(base, "events", "block", e, "filter"), f"dev == {self.dev.kernel_dev}\n")
            for e in EVENTS:
                _write(os.path.join(base, "events", "block", e, "enable"), "1\n")
            log.info("capture: tracefs instance %s, events %s filtered to dev %d:%d",
                     base, ", ".join(EVENTS), self.dev.major, self.dev.minor)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Disable the events, remove the instance, unmount what was mounted (each step tried)."""
        for fd in self.pipes.values():
            os.close(fd)
        self.pipes = {}
        if self.instance is not None:
            for e in EVENTS:
                try:
                    _write(os.path.join(self.instance, "events", "block", e, "enable"), "0\n")
                except ToolError as err:
                    log.warning("%s", err)
            for _ in range(50):
                try:
                    os.rmdir(self.instance)
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        log.warning("cannot remove the tracefs instance %s: %s", self.instance, exc.strerror)
                        break
                    time.sleep(0.1)
            self.instance = None
        if self.registered:
            with _Shared():
                try:
                    os.unlink(os.path.join(STATE_DIR, self.tag))
                except FileNotFoundError:
                    pass
                self.registered = False
                self._remove_stale(self._instances())
                if not _users():  # the last capture: what any of them mounted goes
                    self._unmount_shared()
        self._unmount()

    def _unmount_shared(self) -> None:
        path = os.path.join(STATE_DIR, MOUNTED)
        try:
            with open(path, encoding="utf-8") as fh:
                points = [line.strip() for line in fh if line.strip()]
        except FileNotFoundError:
            return
        os.unlink(path)
        mounted = {point for point, _kind in _mounts()}
        self.mounted = [p for p in dict.fromkeys(points) if p in mounted]

    def _unmount(self) -> None:
        while self.mounted:
            point = self.mounted.pop()
            for sub, kind in reversed(_mounts()):  # debugfs: the tracefs under it first
                if sub.startswith(point + "/") and kind == "tracefs":
                    programs.run([programs.require("umount"), sub], timeout=30, check=False)
            done = programs.run([programs.require("umount"), point], timeout=30, check=False, what="umount")
            if done.returncode != 0:  # another capture still reads it (EBUSY), say
                why = (done.stderr or "").strip().splitlines()
                self.problems.append(f"{point}, mounted for the capture, stays mounted: umount failed "
                                     f"({why[-1] if why else done.returncode})")

    # -- recording -------------------------------------------------------------
    def _mark(self, what: str) -> None:
        assert self.instance is not None
        _write(os.path.join(self.instance, "trace_marker"), f"tkperf-capture-{what}\n")

    def _drain(self, out: int) -> int:
        """Copy the pages each CPU's pipe holds now to ``out`` (each read behind
        its CPU and length, :data:`rawtrace.CHUNK`); bytes copied."""
        copied = 0
        for cpu, fd in self.pipes.items():
            while True:
                try:
                    data = os.read(fd, self.layout.page_size if self.layout else 4096)
                except BlockingIOError:
                    break
                if not data:
                    break
                os.write(out, rawtrace.CHUNK.pack(cpu, len(data)) + data)
                copied += len(data)
        return copied

    def record(self, seconds: float, out: int, stop: Callable[[], bool] = lambda: False) -> None:
        """Read the instance's events for ``seconds`` (or until ``stop()``) into the
        file ``out``: the binary pages of every CPU's ``trace_pipe_raw``, four times a second."""
        assert self.instance is not None and self.root is not None
        self.layout = rawtrace.read_layout(self.root, self.instance)
        per_cpu = os.path.join(self.instance, "per_cpu")
        for name in sorted(os.listdir(per_cpu)):
            if name.startswith("cpu") and name[3:].isdigit():
                self.pipes[int(name[3:])] = os.open(os.path.join(per_cpu, name, "trace_pipe_raw"),
                                                    os.O_RDONLY | os.O_NONBLOCK)
        self._mark("start")
        end = time.monotonic() + seconds
        while True:  # the time checked after each drain too: the end mark is not late by a drain's time
            self._drain(out)
            left = end - time.monotonic()
            if left <= 0 or stop():
                break
            time.sleep(min(0.25, left))
            if end - time.monotonic() <= 0:
                break
        self._mark("end")
        for e in EVENTS:
            _write(os.path.join(self.instance, "events", "block", e, "enable"), "0\n")
        time.sleep(0.05)
        while self._drain(out):
            pass
        self.lost = self._overruns()

    def _overruns(self) -> int:
        assert self.instance is not None
        lost = 0
        per_cpu = os.path.join(self.instance, "per_cpu")
        for cpu in sorted(os.listdir(per_cpu)) if os.path.isdir(per_cpu) else ():
            try:
                for line in _read(os.path.join(per_cpu, cpu, "stats")).splitlines():
                    if line.startswith("overrun:"):
                        lost += int(line.split()[1])
            except (OSError, ValueError, IndexError):
                continue
        return lost


def needs_root() -> None:
    """A UsageError unless tkperf runs as root (tracefs is root's)."""
    if os.geteuid() != 0:
        raise UsageError("tkperf capture needs root (it reads the kernel's block tracepoints): "
                         "run it as root or with sudo")
