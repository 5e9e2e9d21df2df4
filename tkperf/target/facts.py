"""Everything tkperf can learn about a target without writing to it.

:func:`collect` gathers facts from several sources, each optional, and
returns one JSON-able dictionary keyed by source:

``target``        what tkperf resolved (path, kind, transport, size, identity)
``lsblk``         ``lsblk -J -b -d`` of the device
``sysfs``         the queue settings (scheduler, rotational, max sectors, write
                  cache ...), the device's own attributes, a loop device's backing file
``file``          for a file target: size, allocated bytes, the filesystem holding it
``hdparm``        ``hdparm -I`` (ATA): identity, features, ATA security state
``nvme_id_ctrl``  ``nvme id-ctrl -o json`` (NVMe): identity, Format/Sanitize capabilities
``nvme_id_ns``    ``nvme id-ns -o json`` (NVMe): namespace size and LBA formats
``sg_inq``        ``sg_inq`` (SCSI/SAS): standard INQUIRY
``sg_readcap``    ``sg_readcap --long --readonly`` (SCSI/SAS): capacity, protection
``smartctl``      ``smartctl -j -a``: a SMART summary (health, temperature, wear)
``missing``       ``[{"tool", "package"}]``: programs not installed (never fatal)
``errors``        ``[{"source", "command", "message"}]``: programs that failed here
``notes``         plain sentences (e.g. why no drive tool applies)

Sources are chosen by transport: ATA tools only for SATA/ATA, nvme-cli only
for NVMe, sg3-utils only for SCSI/SAS/USB; loop devices and file targets get
lsblk and sysfs (or the file's facts) only.  Every program is read-only:
``hdparm -I``, ``nvme id-*``, ``sg_inq`` and ``smartctl -a`` only query, and
``sg_readcap`` is told ``--readonly``.
"""
from __future__ import annotations

import datetime
import json
import logging
import os
import stat
import subprocess
from typing import Callable, Dict, List, Optional, Tuple, Union

from tkperf import programs
from tkperf.errors import TargetError, TkperfError, ToolError
from tkperf.model.results import DeviceInfo
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import control as simdrive
from tkperf.target import device, identity, kinds, parsers
from tkperf.target.writecache import WriteCache, transport_kind

log = logging.getLogger("tkperf")
SYS_BLOCK = "/sys/class/block"
TOOL_TIMEOUT_S = 60.0
LSBLK_COLUMNS = ("NAME,PATH,KNAME,TYPE,SIZE,MODEL,VENDOR,SERIAL,REV,WWN,TRAN,SUBSYSTEMS,HCTL,ROTA,RM,RO,"
                 "LOG-SEC,PHY-SEC,MIN-IO,OPT-IO,ALIGNMENT,DISC-GRAN,DISC-MAX,DISC-ZERO,SCHED,RQ-SIZE,"
                 "FSTYPE,MOUNTPOINT")
QUEUE_FILES = ("scheduler", "rotational", "max_sectors_kb", "max_hw_sectors_kb", "write_cache", "fua",
               "logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
               "read_ahead_kb", "nr_requests", "nomerges", "rq_affinity", "add_random",
               "discard_granularity", "discard_max_bytes", "write_zeroes_max_bytes", "zoned")
DEVICE_FILES = ("vendor", "model", "rev", "serial", "firmware_rev", "wwid", "transport", "address",
                "queue_depth", "state")
LOOP_FILES = ("backing_file", "offset", "sizelimit", "dio", "autoclear")

#: The sources of each transport family (see :func:`tkperf.target.writecache.transport_kind`).
SOURCES_BY_KIND: Dict[str, Tuple[str, ...]] = {
    "ata": ("hdparm", "smartctl"),
    "nvme": ("nvme_id_ctrl", "nvme_id_ns", "smartctl"),
    "scsi": ("sg_inq", "sg_readcap", "smartctl"),
}


class _Failed(Exception):
    """A program ran and failed, or printed what no parser understands."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command


def _read(path: str) -> str:
    return device.read_text(path)


def _value(text: str) -> object:
    return int(text) if text.isdigit() else text


def _files(directory: str, names: Tuple[str, ...]) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            out[name] = _value(_read(path))
    return out


# --- the target ----------------------------------------------------------------


def _describe(path: str) -> Union[DeviceInfo, str]:
    """A block device's DeviceInfo, or the resolved path of a regular file;
    anything else is a TargetError (exit 4)."""
    where = identity.resolve(path)  # the kernel's walk, not the text's
    resolved, st = where.real, where.st
    if st is None:  # not reached: without may_create a missing path is a TargetError
        raise TargetError(f"{path}: no such device or file")
    if stat.S_ISBLK(st.st_mode):
        try:
            return device.resolve(path)
        except ToolError:  # no lsblk: what sysfs knows is enough to go on
            return _sysfs_device(path, resolved, st)
    if stat.S_ISREG(st.st_mode):
        return resolved
    raise TargetError(f"{path}: neither a block device nor a regular file")


def _sysfs_device(path: str, resolved: str, st: os.stat_result) -> DeviceInfo:
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    name = os.path.basename(sysdir)
    sectors = _read(os.path.join(sysdir, "size"))
    if not sectors.isdigit() or int(sectors) == 0:
        raise TargetError(f"{path}: has size 0 (no medium, or a loop device with no file?)")
    transport = "nvme" if name.startswith("nvme") else "loop" if name.startswith("loop") else ""
    if transport == "loop" and simdrive.backing_rundir(_read(os.path.join(sysdir, "loop", "backing_file"))):
        transport = EMULATED
    return DeviceInfo(path=path, resolved=resolved, kind="block", size_bytes=int(sectors) * 512,
                      transport=transport, devnum=f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}",
                      **identity.block_ids(name, sysdir, resolved)._asdict())


#: The identity fields of :class:`DeviceInfo` ``info`` shows when a target has them.
IDENTITY_KEYS = ("wwn", "eui64", "nguid", "nsid", "inode")


def _target(info: DeviceInfo) -> Dict[str, object]:
    out: Dict[str, object] = {
        "path": info.path, "resolved": info.resolved, "kind": info.kind, "transport": info.transport,
        "size_bytes": info.size_bytes, "vendor": info.vendor, "model": info.model, "serial": info.serial,
        "firmware": info.firmware, "rotational": info.rotational}
    # what tells this drive from another of the same model (the run checks them on resume)
    out.update({key: getattr(info, key) for key in IDENTITY_KEYS if getattr(info, key)})
    try:  # what the target is: whole disk, namespace, partition, dm, md, loop, file
        out["target_kind"] = kinds.classify(info.path).as_dict()
    except TkperfError as exc:
        out["target_kind"] = {"error": str(exc)}
    return out


def file_facts(resolved: str) -> Dict[str, object]:
    """Size, allocated bytes and the mounted filesystem that holds a file."""
    try:
        st = os.stat(resolved)
    except OSError:
        return {"exists": False}
    out: Dict[str, object] = {"exists": True, "size_bytes": st.st_size, "allocated_bytes": st.st_blocks * 512}
    devnum = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    best = ""
    for line in _read("/proc/self/mountinfo").splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[2] != devnum or "-" not in parts:
            continue
        mount = parts[4]
        inside = resolved == mount or resolved.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best = mount
            sep = parts.index("-")
            out.update(mount_point=mount, fstype=parts[sep + 1] if len(parts) > sep + 1 else "",
                       source=parts[sep + 2] if len(parts) > sep + 2 else "")
    return out


def sysfs_facts(info: DeviceInfo) -> Dict[str, object]:
    """Queue settings and device attributes of a block device from sysfs
    (a partition's queue is its disk's)."""
    st = os.stat(info.resolved)
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    name = os.path.basename(sysdir)
    disk_dir = sysdir if os.path.isdir(os.path.join(sysdir, "queue")) else os.path.dirname(sysdir)
    sectors = _read(os.path.join(sysdir, "size"))
    out: Dict[str, object] = {"name": name, "disk": os.path.basename(disk_dir),
                              "size_bytes": int(sectors) * 512 if sectors.isdigit() else None,
                              "read_only": _read(os.path.join(sysdir, "ro")) == "1",
                              "removable": _read(os.path.join(disk_dir, "removable")) == "1"}
    queue = _files(os.path.join(disk_dir, "queue"), QUEUE_FILES)
    schedulers = str(queue.get("scheduler", "")).split()
    selected = [s.strip("[]") for s in schedulers if s.startswith("[")]
    queue["scheduler"] = selected[0] if selected else (schedulers[0] if schedulers else "")
    queue["schedulers"] = [s.strip("[]") for s in schedulers]
    if "rotational" in queue:
        queue["rotational"] = queue["rotational"] == 1
    out["queue"] = queue
    dev_files = _files(os.path.join(disk_dir, "device"), DEVICE_FILES)
    if dev_files:
        out["device"] = {k: v.strip() if isinstance(v, str) else v for k, v in dev_files.items()}
    loop = _files(os.path.join(disk_dir, "loop"), LOOP_FILES)
    if loop:
        out["loop"] = loop
    return out


def lsblk_facts(info: DeviceInfo) -> Dict[str, object]:
    """``lsblk -J -b -d`` of the device itself (no partitions)."""
    argv = [programs.require("lsblk"), "-J", "-b", "-d", "-o", LSBLK_COLUMNS, info.resolved]
    text = _run(argv).stdout
    try:
        devs = json.loads(text).get("blockdevices", [])
    except ValueError:
        raise _Failed(programs.command_line(argv), "printed no JSON") from None
    return {k: v for k, v in (devs[0] if devs else {}).items() if v is not None}


# --- the drive tools -------------------------------------------------------------


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return lines[-1].strip() if lines else ""


def _run(argv: List[str], ok: Callable[[int], bool] = lambda rc: rc == 0) -> subprocess.CompletedProcess:
    """A query run to its end; _Failed with the program's last line when
    ``ok`` says its exit code means failure."""
    command = programs.command_line(argv)
    try:
        proc = programs.run(argv, timeout=TOOL_TIMEOUT_S, check=False, what=os.path.basename(argv[0]))
    except (TkperfError, OSError) as exc:
        raise _Failed(command, str(exc)) from None
    if not ok(proc.returncode):
        last = _last_line(proc)
        raise _Failed(command, f"exit code {proc.returncode}" + (f": {last}" if last else ""))
    return proc


def _parsed(argv: List[str], parse: Callable[[str], Dict[str, object]],
            ok: Callable[[int], bool] = lambda rc: rc == 0) -> Dict[str, object]:
    proc = _run(argv, ok)
    try:
        return parse(proc.stdout)
    except ValueError as exc:
        stderr = (proc.stderr or "").strip().splitlines()
        detail = f" ({stderr[-1].strip()})" if stderr else ""
        raise _Failed(programs.command_line(argv), f"{exc}{detail}") from None


def _smartctl_ok(rc: int) -> bool:
    # smartctl's exit status is a bit mask: bits 0 and 1 mean the command line
    # did not parse or the device could not be opened; the higher bits report
    # the drive's state and come with valid JSON.
    return rc & 0b11 == 0


def _source(name: str, info: DeviceInfo) -> Dict[str, object]:
    dev = info.resolved
    if name == "hdparm":
        return _parsed([programs.require("hdparm"), "-I", dev], parsers.hdparm_identify)
    if name == "nvme_id_ctrl":
        return _parsed([programs.require("nvme"), "id-ctrl", dev, "-o", "json"], parsers.nvme_id_ctrl)
    if name == "nvme_id_ns":
        return _parsed([programs.require("nvme"), "id-ns", dev, "-o", "json"], parsers.nvme_id_ns)
    if name == "sg_inq":
        return _parsed([programs.require("sg_inq"), dev], parsers.sg_inq)
    if name == "sg_readcap":
        return _parsed([programs.require("sg_readcap"), "--long", "--readonly", dev], parsers.sg_readcap)
    if name == "smartctl":
        return _parsed([programs.require("smartctl"), "-j", "-a", dev], parsers.smartctl, _smartctl_ok)
    raise ValueError(f"unknown facts source {name!r}")


TOOLS = {"write_cache": "hdparm/nvme/sdparm", "hdparm": "hdparm", "nvme_id_ctrl": "nvme", "nvme_id_ns": "nvme",
         "sg_inq": "sg_inq", "sg_readcap": "sg_readcap", "smartctl": "smartctl", "lsblk": "lsblk"}


class _Collector:
    def __init__(self) -> None:
        self.facts: Dict[str, object] = {}
        self.missing: List[Dict[str, str]] = []
        self.errors: List[Dict[str, str]] = []
        self.notes: List[str] = []

    def add(self, name: str, get: Callable[[], Dict[str, object]]) -> None:
        try:
            self.facts[name] = get()
        except ToolError:
            tool = TOOLS[name]
            if all(m["tool"] != tool for m in self.missing):
                self.missing.append({"tool": tool, "package": programs.PACKAGES.get(tool, tool)})
        except _Failed as exc:
            self.errors.append({"source": name, "command": exc.command, "message": str(exc)})
        except OSError as exc:  # sysfs vanished under us (device unplugged)
            self.errors.append({"source": name, "command": "", "message": f"{exc.strerror}: {exc.filename}"})

    def result(self) -> Dict[str, object]:
        return {**self.facts, "missing": self.missing, "errors": self.errors, "notes": self.notes}


def collect(dev: Union[DeviceInfo, str]) -> Dict[str, object]:
    """The facts of a target: a DeviceInfo (as a run resolved it) or a path.

    A path must be a block device or a regular file, else TargetError.
    Missing programs and programs that fail on this device are listed under
    ``missing`` and ``errors``; nothing here is fatal and nothing writes."""
    c = _Collector()
    info = _describe(dev) if isinstance(dev, str) else dev
    c.facts["time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if isinstance(info, str):
        size = os.stat(info).st_size
        c.facts["target"] = {"path": dev, "resolved": info, "kind": "file", "transport": "file",
                             "size_bytes": size}
        c.facts["file"] = file_facts(info)
        c.notes.append("a file target: drive tools do not apply")
        return c.result()
    c.facts["target"] = _target(info)
    if info.kind == "file":
        c.facts["file"] = file_facts(info.resolved)
        c.notes.append("a file target: drive tools do not apply")
        return c.result()
    c.add("lsblk", lambda: lsblk_facts(info))
    c.add("sysfs", lambda: sysfs_facts(info))
    kind = transport_kind(info)
    if info.transport == EMULATED:
        c.add("simdrive", lambda: simdrive_facts(info))
    if not kind:
        what = ("a loop device" if info.transport == "loop" else "an emulated SSD" if info.transport == EMULATED
                else f"transport '{info.transport or 'unknown'}'")
        c.notes.append(f"{what}: no drive identity tool applies")
    for name in SOURCES_BY_KIND.get(kind, ()):
        c.add(name, lambda name=name: _source(name, info))  # type: ignore[misc]
    if kind:
        c.add("write_cache", lambda: write_cache_facts(info))
    return c.result()


def _simdrive_rundir(info: DeviceInfo) -> Optional[str]:
    """The runtime directory of the emulated SSD behind ``info``'s loop device (by its backing file), or None."""
    name = os.path.basename(os.path.realpath(info.resolved))
    return simdrive.backing_rundir(_read(f"/sys/block/{name}/loop/backing_file"))


def simdrive_facts(info: DeviceInfo) -> Dict[str, object]:
    """An emulated SSD's model: its parameters and counters now (``tkperf
    simdrive stats``), so a run records what it was measured on."""
    rundir = _simdrive_rundir(info)
    if not rundir:
        raise _Failed("tkperf simdrive stats", f"{info.path}: its emulated SSD is gone")
    try:
        doc = simdrive.stats(rundir)
    except TkperfError as exc:
        raise _Failed("tkperf simdrive stats", str(exc)) from None
    return {k: v for k, v in doc.items() if k not in ("pid", "pending_replies")}


class SimdriveHold:
    """For an emulated SSD: what tells its drive, after each fio process
    (call it), that the time until the next one is the host's, not idle
    time for its background GC (``tkperf.simdrive.model.Drive.hold``), and
    at the run's end (:meth:`release`) that idle time is the drive's again.
    A drive that cannot be told is logged once; the run goes on (its
    figures then carry the gaps as idle time, as before)."""

    def __init__(self, info: DeviceInfo) -> None:
        self.rundir = _simdrive_rundir(info)
        self.said = False
        self.held = False

    def _tell(self, ask: Callable[[str], bool]) -> bool:
        try:
            if self.rundir and ask(self.rundir):
                return True
            why = "its server does not know the request" if self.rundir else "its emulated SSD is gone"
        except TkperfError as exc:
            why = str(exc)
        if not self.said:
            self.said = True
            log.warning("emulated SSD: the gap between two fio processes not marked as the host's (%s)", why)
        return False

    def __call__(self) -> None:
        self.held = self._tell(simdrive.hold) or self.held

    def release(self) -> None:
        if self.held:
            self.held = not self._tell(simdrive.release)


def write_cache_facts(dev: DeviceInfo) -> Dict[str, object]:
    """The write cache as the drive reports it now (read only: 'keep'
    changes nothing): state WCE, WCD or '' (unknown), the command that read
    it, and what tkperf noted (no volatile write cache, a failed read)."""
    notes: List[str] = []
    cache = WriteCache(dev, "keep", lambda kind, text: notes.append(text))
    cache.start()
    return {"state": cache.state, "read_by": cache.found.how, "notes": notes}
