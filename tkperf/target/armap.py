"""The ActiveRange segments as one device: a device-mapper linear map.

fio cannot address 2,048 equal segments itself (``random_distribution=
zoned_abs`` takes at most 256 ranges and whole percentages), so a run with
``--ar-segments N`` (N > 1) maps the segments of its layout
(:mod:`tkperf.model.segments`), in order, into one contiguous device
``/dev/mapper/tkperf-ar-PID-STARTTIME`` with ``dmsetup create``; every test
workload runs on that device, while the WIPC, the PURGE and the health
readings keep the real device.

The map is shared kernel state: it is removed when the run ends, fails or
is interrupted (``dmsetup remove``, retried while the device is busy), and
a run that starts removes the maps of runs whose process is gone (killed
with SIGKILL), told by the owner tag ``PID-STARTTIME`` in the name (the
process's start in clock ticks since boot: a reused pid has another).
Only what tkperf can prove it made is removed: a name of exactly that
pattern (``tkperf-ar-backup`` is someone else's) whose owner is gone.
Each such map is tried once per tkperf process, one ``dmsetup remove``
of at most :data:`STALE_REMOVE_S` within a sweep of at most
:data:`SWEEP_BUDGET_S`; one that stays (busy: something holds it) is
left, and said once, in one line (:func:`unsaid`).

While the map exists the kernel holds the real device for it exclusively
(no mount, no other exclusive opener), so the run's own ``O_EXCL`` hold
(:func:`tkperf.target.device.open_exclusive`) moves from the real device
to the mapped one for that time (:class:`Hold`).
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
from typing import Dict, Iterator, List, Optional

from tkperf import programs
from tkperf.errors import RefusedError, ToolError, UsageError
from tkperf.model import segments
from tkperf.model.results import DeviceInfo
from tkperf.target import device

log = logging.getLogger("tkperf")

PREFIX = "tkperf-ar-"
MAPPER = "/dev/mapper"
CONTROL = "/dev/mapper/control"
SYS_BLOCK = "/sys/block"
#: ``dmsetup remove`` of a busy map (udev still probing it) is tried this often, this far apart.
REMOVE_TRIES = 20
REMOVE_PAUSE_S = 0.5
#: The names tkperf gives its maps, exactly: ``tkperf-ar-PID-STARTTIME`` (:func:`map_name`).
NAME_RE = re.compile(r"tkperf-ar-([1-9][0-9]*)-([0-9]+)")
#: A stale map is tried once per process: one ``dmsetup remove`` of at most this long ...
STALE_REMOVE_S = 10.0
#: ... and all of a sweep's removals together take at most this long.
SWEEP_BUDGET_S = 30.0
ONE_SPAN = "--ar-segments 1 tests the test range as one span at the start of the LBA range (a deviation)"


owner_tag = programs.owner_tag


def map_name() -> str:
    """The name of this process's map: ``tkperf-ar-PID-STARTTIME``."""
    return PREFIX + owner_tag(os.getpid())


def map_path(name: str = "") -> str:
    return os.path.join(MAPPER, name or map_name())


def refuse_target(dev: DeviceInfo, remote: bool, count: int) -> None:
    """A UsageError where segments cannot be built on the target: a file, a
    device on a test host (the map is made on this host's kernel)."""
    where = "a file target" if dev.kind == "file" else "a target on a test host" if remote else ""
    if where:
        raise UsageError(f"--ar-segments {count:,} needs a block device on this host (a device-mapper "
                         f"map), not {where}; {ONE_SPAN}")


def require(count: int, load: bool) -> str:
    """``dmsetup``'s path when this host can map the segments, else a
    ToolError; ``load``: try ``modprobe dm-mod`` once when the kernel has
    no device-mapper yet (a dry run only asks ``modprobe --dry-run``).

    The kernel's driver is asked, not the node: ``/dev/mapper/control``
    outlives a kernel without device-mapper (libdevmapper makes it on
    first use, and a container's /dev may come with it); there a run and
    its dry run went ahead, and the run stopped at ``dmsetup create`` with
    only "Command failed."."""
    try:
        dmsetup = programs.require("dmsetup")
    except ToolError as exc:
        raise ToolError(f"--ar-segments {count:,}: {exc}; {ONE_SPAN}") from None
    why = _driver()
    if why:
        modprobe = _which("modprobe")
        if modprobe:
            argv = [modprobe, "dm-mod"] if load else [modprobe, "--dry-run", "--quiet", "dm-mod"]
            found = programs.run(argv, timeout=60, check=False, what="modprobe dm-mod").returncode == 0
            if not load and found:
                return dmsetup
            why = _driver()
            if why and not found:
                why += ", modprobe dm-mod failed"
        if why:
            raise ToolError(f"--ar-segments {count:,}: this kernel has no device-mapper ({why}); {ONE_SPAN}")
    return dmsetup


def _driver() -> str:
    """'' when the kernel's device-mapper answers on its control node, else why not."""
    try:
        fd = os.open(CONTROL, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return f"{CONTROL} is missing"
    except OSError as exc:
        return f"{CONTROL}: {exc.strerror}"
    os.close(fd)
    return ""


def _which(tool: str) -> str:
    try:
        return programs.require(tool)
    except ToolError:
        return ""


def _maps() -> List[str]:
    """The device-mapper devices' names (``/sys/block/dm-N/dm/name``)."""
    out: List[str] = []
    try:
        nodes = os.listdir(SYS_BLOCK)
    except OSError:
        return out
    for node in nodes:
        try:
            with open(os.path.join(SYS_BLOCK, node, "dm", "name"), encoding="utf-8", errors="replace") as fh:
                out.append(fh.read().rstrip("\n"))  # the name exactly: "x " is not "x"
        except OSError:
            continue
    return out


def is_own(name: str) -> bool:
    """Whether ``name`` is one tkperf gives its maps (exactly ``tkperf-ar-PID-STARTTIME``)."""
    return NAME_RE.fullmatch(name) is not None


#: The stale maps this process tried and left, with why (tried once per process).
_left: Dict[str, str] = {}
#: What was left and not yet said (:func:`unsaid`).
_unsaid: List[str] = []


def sweep() -> List[str]:
    """Remove the maps of tkperf runs whose process is gone (killed with
    SIGKILL), before a run on this host checks its target: such a map
    still holds its device.  Nothing is run when there is none."""
    stale = _stale()
    if not stale:
        return []
    dmsetup = _which("dmsetup")
    if not dmsetup:
        _leave({name: "dmsetup is missing" for name in stale})
        return []
    return remove_stale(dmsetup)


def _stale() -> List[str]:
    """The maps tkperf made whose run is gone, not tried by this process yet."""
    return [n for n in _maps() if is_own(n) and not programs.owner_alive(n[len(PREFIX):]) and n not in _left]


def remove_stale(dmsetup: str) -> List[str]:
    """Remove the maps of tkperf runs whose process is gone, each tried
    once, within :data:`SWEEP_BUDGET_S`; their names.  What stays is said
    once (:func:`unsaid`) and not tried again by this process."""
    gone: List[str] = []
    left: Dict[str, str] = {}
    deadline = time.monotonic() + SWEEP_BUDGET_S
    for name in _stale():
        budget = min(STALE_REMOVE_S, deadline - time.monotonic())
        why = _remove_once(dmsetup, name, budget) if budget > 0 else "not tried: the sweep's time was up"
        if why:
            left[name] = why
            continue
        log.info("removed the map %s of a run that was killed", name)
        gone.append(name)
    _leave(left)
    return gone


def _remove_once(dmsetup: str, name: str, timeout: float) -> str:
    """One ``dmsetup remove NAME`` of at most ``timeout`` seconds: '' when
    the map is gone, else why it stays."""
    try:
        done = programs.run([dmsetup, "remove", name], timeout=max(timeout, 1.0), check=False,
                            what=f"dmsetup remove {name}")
    except ToolError as exc:  # it did not finish in its time
        return str(exc)
    if done.returncode == 0 or name not in _maps():
        return ""
    tail = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    if len(tail) > 1 and tail[-1] in programs.GENERIC_LAST_LINES:
        tail.pop()  # dmsetup's reason is the line before its "Command failed."
    return f"dmsetup remove failed: {tail[-1] if tail else f'exit code {done.returncode}'}"


def _leave(left: Dict[str, str]) -> None:
    if not left:
        return
    _left.update(left)
    line = (f"left {len(left)} device-mapper map{'s' if len(left) > 1 else ''} of killed tkperf runs, "
            "each still holding its device: " + "; ".join(f"{n} ({why})" for n, why in left.items())
            + "; remove by hand (dmsetup remove NAME) once nothing uses it")
    log.warning("%s", line)
    _unsaid.append(line)


def unsaid() -> List[str]:
    """The lines about left maps not yet said (each is said once): the
    caller tells the user; a sweep before the run's log exists logs nowhere."""
    lines = list(_unsaid)
    del _unsaid[:]
    return lines


def remove(dmsetup: str, name: str) -> None:
    """``dmsetup remove NAME``, tried again while the device is busy."""
    for attempt in range(REMOVE_TRIES):
        done = programs.run([dmsetup, "remove", name], timeout=60, check=False, what="dmsetup remove")
        if done.returncode == 0 or name not in _maps():
            return
        if attempt + 1 < REMOVE_TRIES:
            time.sleep(REMOVE_PAUSE_S)
    tail = (done.stderr or done.stdout or "").strip().splitlines()
    raise ToolError(f"dmsetup remove {name} failed {REMOVE_TRIES} times: {tail[-1] if tail else 'busy'}")


def create(dmsetup: str, dev: DeviceInfo, lay: segments.Layout, name: str) -> str:
    """Make the map of ``lay`` on ``dev`` as ``name``; its path, once the node exists."""
    major, minor = (int(x) for x in dev.devnum.split(":"))
    programs.run([dmsetup, "create", name], stdin_text=segments.dm_table(lay, major, minor), timeout=120,
                 what="dmsetup create")
    path = map_path(name)
    try:
        for _ in range(100):  # udev makes the node; without udev dmsetup made it already
            if os.path.exists(path):
                break
            time.sleep(0.1)
        else:
            programs.run([dmsetup, "mknodes", name], timeout=60, what="dmsetup mknodes")
        if _size(path) != lay.total:
            raise ToolError(f"{path} holds {_size(path):,} bytes, not the {lay.total:,} of the segments")
    except BaseException:
        remove(dmsetup, name)
        raise
    return path


def _size(path: str) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def _held_elsewhere(dev: DeviceInfo) -> bool:
    """Whether something else holds ``dev`` exclusively (a mount, a RAID,
    another exclusive opener), which is why a map cannot be made on it:
    the kernel's EBUSY for an ``O_EXCL`` open, not dmsetup's words (the C
    library's text for the errno, in the user's language)."""
    try:
        fd = os.open(dev.resolved, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        return exc.errno == errno.EBUSY
    os.close(fd)
    return False


class Hold:
    """The run's ``O_EXCL`` hold on its device, which :meth:`mapped` moves
    to the map for as long as the map exists (the kernel holds the real
    device for the map then)."""

    def __init__(self, dev: DeviceInfo) -> None:
        self.dev = dev
        self.fd: Optional[int] = None

    def __enter__(self) -> Hold:
        self.fd = device.open_exclusive(self.dev)
        return self

    def __exit__(self, *exc: object) -> None:
        self._let_go()

    def _let_go(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    @contextlib.contextmanager
    def mapped(self, lay: segments.Layout, count: int) -> Iterator[str]:
        """The map of ``lay`` while the block runs (its path); removed
        however the block ends, and the real device held again."""
        dmsetup = require(count, load=True)
        remove_stale(dmsetup)
        name = map_name()
        device.check_still(self.dev)
        self._let_go()
        try:
            path = create(dmsetup, self.dev, lay, name)
        except BaseException as exc:  # also a signal while dmsetup ran: no map is left behind
            if name in _maps():
                remove(dmsetup, name)
            if isinstance(exc, ToolError) and _held_elsewhere(self.dev):
                raise RefusedError(f"{self.dev.path}: cannot map its segments ({exc}); something else "
                                   "is using it") from None
            raise
        ended = False
        try:
            fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
            try:
                yield path
                ended = True
            finally:
                os.close(fd)
        finally:
            self._unmap(dmsetup, name, ended)

    def _unmap(self, dmsetup: str, name: str, raise_failure: bool) -> None:
        """Remove the map and hold the device again; a map that cannot be
        removed is an error of its own only when nothing else ended the run."""
        try:
            remove(dmsetup, name)
            log.info("removed the map %s", name)
        except ToolError as exc:
            log.error("%s; remove it by hand: dmsetup remove %s", exc, name)
            if raise_failure:
                raise
            return
        try:
            self.fd = device.open_exclusive(self.dev)
        except Exception as exc:  # noqa: BLE001 - the run is over; its outcome is the one to report
            log.warning("%s: not held exclusively again after the map was removed: %s", self.dev.path, exc)
