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

Only what tkperf can prove it made is undone.  An instance is removed
only by tkperf's exact name (``tkperf-capture-PID-STARTTIME``) with its
owner gone.  A mount is recorded with its identity (the mount's ID in
``/proc/self/mountinfo`` and, where the kernel has it, its unique ID from
``statx``, never reused until the next boot) and unmounted only while that
same mount is still there: a tracefs that someone mounted again at the
same point after tkperf's was unmounted is theirs, and is left, said
once (:attr:`Recorder.problems`).  A registry that is damaged (a link, a
directory or anything else where a file of tkperf's belongs, or a lock
that cannot be taken) is an :class:`~tkperf.errors.OutputError`, one line
and exit 8, never an internal error; what this capture mounted is
unmounted on the way out all the same.

The kernel issues a partition's requests to its disk with the disk's
sectors: a partition is recorded as its disk's events in the partition's
sector range (:func:`device_facts`).
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import logging
import os
import re
import stat
import struct
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import OutputError, TargetError, TkperfError, ToolError, UsageError
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
LOCK = "lock"
#: A registration's name: an owner tag ``PID-STARTTIME`` (a bare pid: an older tkperf's).
TAG_RE = re.compile(r"[1-9][0-9]*(-[0-9]+)?")
#: tkperf's instances, exactly: ``tkperf-capture-`` and an owner tag.
INSTANCE_RE = re.compile(re.escape(PREFIX) + TAG_RE.pattern)


owner_tag = programs.owner_tag


def _alive(tag: str) -> bool:
    """Whether the capture of owner tag ``tag`` (or a bare pid, of an older tkperf) still runs."""
    if "-" in tag:
        return programs.owner_alive(tag)
    return tag.isdigit() and os.path.exists(f"/proc/{tag}")


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISCHR, "a device")):
        if test(mode):
            return what
    return "not a regular file"


def _damaged(path: str, why: str) -> OutputError:
    """The one-line error of a damaged registry (exit 8)."""
    return OutputError(f"the capture registry {STATE_DIR} is damaged: {path} is {why}; not using it "
                       f"(remove {STATE_DIR} when no capture runs)")


def _open_entry(name: str, flags: int) -> int:
    """A file of the registry, opened without following a link, and only
    when it is a regular file of root's (a FIFO is not waited on)."""
    path = os.path.join(STATE_DIR, name)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        if flags & os.O_CREAT:  # the registry's folder went away under it
            raise _damaged(path, "gone with its folder") from None
        raise
    except OSError as exc:
        try:
            why = _kind(os.lstat(path).st_mode)
        except OSError:
            why = f"unusable ({exc.strerror})"
        raise _damaged(path, why if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO)
                       else f"unusable ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != 0:
        os.close(fd)
        raise _damaged(path, _kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else "another user's")
    return fd


def _write_entry(name: str, text: str, append: bool = False) -> None:
    fd = _open_entry(name, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC))
    try:
        os.write(fd, text.encode("utf-8"))
    except OSError as exc:
        raise _damaged(os.path.join(STATE_DIR, name), f"not writable ({exc.strerror})") from None
    finally:
        os.close(fd)


def _read_entry(name: str) -> Optional[str]:
    """The text of a registry file, None when there is none."""
    try:
        fd = _open_entry(name, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(1 << 20).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _remove_entry(name: str) -> None:
    path = os.path.join(STATE_DIR, name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise _damaged(path, _kind(st.st_mode))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _damaged(path, f"not removable ({exc.strerror})") from None


class _Shared:
    """The registry of captures under way, locked (``flock``) while held;
    an OutputError when it is damaged."""

    def __enter__(self) -> str:
        try:
            os.mkdir(STATE_DIR, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise OutputError(f"cannot create the capture registry {STATE_DIR}: {exc.strerror}") from None
        st = os.lstat(STATE_DIR)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise OutputError(f"{STATE_DIR} is not a directory of root's closed to others; not using it")
        self.fd = _open_entry(LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as exc:
            os.close(self.fd)
            raise _damaged(os.path.join(STATE_DIR, LOCK), f"not lockable ({exc.strerror})") from None
        return STATE_DIR

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # and the lock with it


def _users() -> List[str]:
    """The owner tags of the captures registered (other names are not a capture's)."""
    try:
        names = os.listdir(STATE_DIR)
    except OSError as exc:
        raise _damaged(STATE_DIR, f"unreadable ({exc.strerror})") from None
    return [n for n in names if TAG_RE.fullmatch(n)]


@dataclass(frozen=True)
class Mount:
    """A mount as tkperf recorded it when it made it: where, the kind of
    file system, its ID in ``/proc/self/mountinfo`` (reused once it is
    gone) and its unique ID (``statx``'s ``STATX_MNT_ID_UNIQUE``, Linux
    6.8 on; None where the kernel has none)."""

    point: str
    kind: str
    mount_id: int
    unique: Optional[int]

    def line(self) -> str:
        return json.dumps({"point": self.point, "kind": self.kind, "mount_id": self.mount_id,
                           "unique": self.unique}) + "\n"

    @staticmethod
    def parse(line: str) -> Optional[Mount]:
        """A recorded line; None for one that does not say which mount (an older tkperf's: a path)."""
        try:
            d = json.loads(line)
            m = Mount(str(d["point"]), str(d["kind"]), int(d["mount_id"]),
                      None if d.get("unique") is None else int(d["unique"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        return m


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mountinfo() -> List[Tuple[int, str, str]]:
    """(mount ID, mount point, file system type) of every mount, in the kernel's order."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            head, sep, tail = line.partition(" - ")
            fields = head.split()
            if sep and len(fields) >= 5 and fields[0].isdigit() and tail.split():
                out.append((int(fields[0]), _unescape(fields[4]), tail.split()[0]))
    return out


STATX_MNT_ID_UNIQUE = 0x4000
_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STX_MNT_ID_OFFSET = 0x90  # struct statx: __u64 stx_mnt_id


def _unique_mount_id(point: str) -> Optional[int]:
    """The unique ID of the mount at ``point`` (never reused until the next
    boot), None where the C library or the kernel has none."""
    try:
        statx = ctypes.CDLL(None, use_errno=True).statx
    except (OSError, AttributeError):
        return None
    statx.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    statx.restype = ctypes.c_int
    buf = ctypes.create_string_buffer(256)
    if statx(_AT_FDCWD, os.fsencode(point), _AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, buf) != 0:
        return None
    mask, = struct.unpack_from("=I", buf.raw, 0)
    if not mask & STATX_MNT_ID_UNIQUE:
        return None
    unique, = struct.unpack_from("=Q", buf.raw, _STX_MNT_ID_OFFSET)
    return int(unique)


def mount_at(point: str) -> Optional[Mount]:
    """The mount on top at ``point`` now, None when nothing is mounted there."""
    on_top = [m for m in _mountinfo() if m[1] == point]
    if not on_top:
        return None
    mount_id, _, kind = on_top[-1]
    return Mount(point, kind, mount_id, _unique_mount_id(point))


def still_there(recorded: Mount) -> bool:
    """Whether the mount tkperf recorded is the one at its point now: the
    same ID and kind, and the same unique ID where it was recorded."""
    now = mount_at(recorded.point)
    return now is not None and now.kind == recorded.kind and now.mount_id == recorded.mount_id \
        and (recorded.unique is None or now.unique == recorded.unique)


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

    def __init__(self, dev: DeviceFacts, also: Sequence[DeviceFacts] = ()) -> None:
        self.dev = dev
        #: Every device traced (a capture of several: ``also``), in one instance with one filter.
        self.devs = (dev, *also)
        self.mounted: List[Mount] = []  # the mounts to unmount now, in the order they were made
        self.own: List[Mount] = []      # what this process mounted (unmounted, if the registry fails)
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
        if os.path.isdir(TRACEFS):
            self._mount("tracefs", TRACEFS)
            return TRACEFS
        self._mount("debugfs", DEBUGFS)
        return os.path.join(DEBUGFS, "tracing")

    def _mount(self, kind: str, point: str) -> None:
        """Mount ``kind`` at ``point`` and note which mount that is (also
        when a signal cut ``mount`` short after the kernel made it)."""
        mount = programs.require("mount")
        before = mount_at(point)
        try:
            programs.run([mount, "-t", kind, "nodev", point], timeout=30, what=f"mount {kind}")
        finally:
            made = mount_at(point)
            if made is not None and made.kind == kind and made != before:
                self.mounted.append(made)
                self.own.append(made)

    @staticmethod
    def _remove_stale(instances: Optional[str]) -> None:
        """What captures whose process is gone (killed with SIGKILL, which
        nothing can catch) left: their registration and their instance (its
        events disabled, removed), told by the owner tag, so a pid reused
        by another process does not keep it.  Under the registry's lock."""
        for tag in _users():
            if not _alive(tag):
                _remove_entry(tag)
        if instances is None or not os.path.isdir(instances):
            return
        for name in os.listdir(instances):
            tag = name[len(PREFIX):]
            if not INSTANCE_RE.fullmatch(name) or _alive(tag):
                continue  # another tool's instance, or a capture that runs
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
                _write_entry(self.tag, f"{self.tag}\n")
                self.registered = True
                try:
                    root = self.root = self._tracing_dir()
                finally:
                    if self.mounted:  # mounted for every capture: the last to end unmounts it
                        _write_entry(MOUNTED, "".join(m.line() for m in self.mounted), append=True)
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
            wanted = " || ".join(f"dev == {k}" for k in dict.fromkeys(d.kernel_dev for d in self.devs))
            for e in EVENTS:
                _write(os.path.join(base, "events", "block", e, "filter"), f"{wanted}\n")
            for e in EVENTS:
                _write(os.path.join(base, "events", "block", e, "enable"), "1\n")
            log.info("capture: tracefs instance %s, events %s filtered to dev %s",
                     base, ", ".join(EVENTS), ", ".join(f"{d.major}:{d.minor}" for d in self.devs))
        except BaseException:
            self._close_quietly()
            raise
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:  # what stopped the capture is what the user hears of
            self._close_quietly()

    def _close_quietly(self) -> None:
        try:
            self.close()
        except TkperfError as err:
            log.error("%s", err)
            self.problems.append(str(err))

    def close(self) -> None:
        """Disable the events, remove the instance, unmount what was mounted
        (each step tried); a damaged registry is raised once this process's
        own mounts are unmounted."""
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
        damaged: Optional[TkperfError] = None
        if self.registered:
            try:
                with _Shared():
                    self.registered = False
                    _remove_entry(self.tag)
                    self._remove_stale(self._instances())
                    if not _users():  # the last capture: what any of them mounted goes
                        self._unmount_shared()
            except TkperfError as err:  # a damaged registry: no one can hand our mount on
                damaged = err
                self.mounted = [m for m in self.own if m not in self.mounted] + self.mounted
        self._unmount()
        if damaged is not None:
            raise damaged

    def _unmount_shared(self) -> None:
        """What the captures mounted, as they recorded it: each to unmount
        while it is the same mount; one that is not (someone mounted
        tracefs again at its point) is left, and said."""
        text = _read_entry(MOUNTED)
        if text is None:
            return
        _remove_entry(MOUNTED)
        for line in dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()):
            recorded = Mount.parse(line)
            if recorded is None:
                point = line if line.startswith("/") else repr(line[:80])
                if any(p == line for p, _ in _mounts()):
                    self.problems.append(f"{point} stays mounted: its record, of an older tkperf, does not say "
                                         "which mount a capture made, and a mount is only undone when it is "
                                         "tkperf's own")
                continue
            now = mount_at(recorded.point)
            if now is None:
                log.info("capture: %s, mounted for a capture, was unmounted already", recorded.point)
            elif still_there(recorded):
                if recorded not in self.mounted:
                    self.mounted.append(recorded)
            else:
                self.problems.append(f"{recorded.point} stays mounted: the {now.kind} mounted there now (mount "
                                     f"{now.mount_id}) is not the one a capture mounted (mount "
                                     f"{recorded.mount_id}), so it is someone else's")

    def _unmount(self) -> None:
        while self.mounted:
            recorded = self.mounted.pop()
            point = recorded.point
            if not still_there(recorded):  # gone, or another mount is on top now: not ours to undo
                if mount_at(point) is not None:
                    self.problems.append(f"{point} stays mounted: the mount there now is not the one this "
                                         "capture made")
                continue
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

    def record(self, seconds: float, out: Callable[[], int], stop: Callable[[], bool] = lambda: False,
               started: Callable[[], None] = lambda: None) -> None:
        """Read the instance's events for ``seconds`` (or until ``stop()``) into the
        file ``out()`` gives before each drain (a capture moves on to a new part of its
        recording between drains): the binary pages of every CPU's ``trace_pipe_raw``, four
        times a second; ``started()`` is called once the start mark is written (a replay's
        meter waits for it, in another thread, before fio begins)."""
        assert self.instance is not None and self.root is not None
        self.layout = rawtrace.read_layout(self.root, self.instance)
        per_cpu = os.path.join(self.instance, "per_cpu")
        for name in sorted(os.listdir(per_cpu)):
            if name.startswith("cpu") and name[3:].isdigit():
                self.pipes[int(name[3:])] = os.open(os.path.join(per_cpu, name, "trace_pipe_raw"),
                                                    os.O_RDONLY | os.O_NONBLOCK)
        self._mark("start")
        started()
        end = time.monotonic() + seconds
        while True:  # the time checked after each drain too: the end mark is not late by a drain's time
            self._mark("drain")  # no event of a later drain is older (rawtrace.Stream hands on what is before)
            self._drain(out())
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
        while self._drain(out()):
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
