"""What a target is: a whole disk, an NVMe namespace, a partition, a
device-mapper or md (software RAID) device, a loop device, another virtual
block device, or a file; and what that means for the results.

:func:`classify` follows symlinks (``/dev/disk/by-id/...``,
``/dev/mapper/...``) to the device node and reads the kernel's view of it in
sysfs (``/sys/class/block/NAME``: ``partition``, ``dm/``, ``md/``, ``nsid``,
``loop/``, ``slaves/``).  It changes nothing and needs no root, except that
a device-mapper table is read with ``dmsetup`` where it is installed and
permitted.  The result goes into the run's facts (``run.facts["target"]``,
:meth:`TargetKind.as_dict`) and its warnings into the run's events, so the
report says what was measured.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import asdict, dataclass, replace
from typing import List, Optional, Tuple

from tkperf import programs
from tkperf.errors import TargetError, TkperfError
from tkperf.model.results import format_gb
from tkperf.simdrive import control as simdrive
from tkperf.target import device, identity

SYS = "/sys"
#: Every kind :func:`classify` gives, as docs/description.rst lists them.
KINDS = ("disk", "nvme-namespace", "partition", "device-mapper", "md", "loop", "virtual", "file")
#: Partitions should start on this boundary (bytes) or better.
ALIGN = 4096

#: What a device-mapper device is, by the prefix its creator gives the uuid.
DM_UUID_KINDS = (
    ("LVM-", "LVM logical volume"),
    ("CRYPT-", "dm-crypt (encrypted) device"),
    ("mpath-", "multipath device"),
    ("part", "partition mapping (kpartx)"),
    ("VDO-", "VDO (deduplicating, compressing) volume"),
    ("stratis-", "Stratis volume"),
)


@dataclass(frozen=True)
class TargetKind:
    """What a target is.

    ``kind`` is one of :data:`KINDS`; ``detail`` says it in one line for the
    report; ``warnings`` are what the kind means for the results (empty for
    a whole disk).  ``path`` is the path as given and ``resolved`` the node
    it leads to; ``name`` is the kernel's name ('' for a file); ``parent`` the
    whole disk of a partition, or the controller (or subsystem) of an NVMe
    namespace; ``members`` the devices under a device-mapper or md device;
    ``whole_drive`` is true only when the target is all of one drive, so that
    a drive-level PURGE (ATA, NVMe, SCSI) erases nothing else.
    """

    kind: str
    detail: str
    warnings: Tuple[str, ...] = ()
    path: str = ""
    resolved: str = ""
    name: str = ""
    parent: str = ""
    members: Tuple[str, ...] = ()
    whole_drive: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown target kind {self.kind!r}")

    def as_dict(self) -> dict:
        """Plain JSON values, for ``run.facts["target"]``."""
        d = asdict(self)
        d["warnings"] = list(self.warnings)
        d["members"] = list(self.members)
        return d


def _read(path: str) -> str:
    return device.read_text(path)


def _int(path: str) -> Optional[int]:
    text = _read(path)
    return int(text) if text.isdigit() else None


def _gb(sectors: Optional[int]) -> str:
    return format_gb(sectors * 512) if sectors else "size unknown"


def _listdir(path: str) -> List[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def classify(path: str) -> TargetKind:
    """What the target at ``path`` is.  A path that does not exist is a
    file target still to be created (as :func:`tkperf.target.device.resolve`
    takes it); a directory, a character device or a missing directory is a
    :class:`~tkperf.errors.TargetError`."""
    where = identity.resolve(path, may_create=True)  # the kernel's walk, not the text's
    resolved, st = where.real, where.st
    if st is None:
        return _given_as(_file(resolved, None), path, resolved)
    if stat.S_ISREG(st.st_mode):
        return _given_as(_file(resolved, st), path, resolved)
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(f"{path}: is a directory, not a block device")
    if stat.S_ISCHR(st.st_mode):
        raise TargetError(f"{path}: is a character device; tkperf tests block devices "
                          "(for NVMe use the namespace, e.g. /dev/nvme0n1)")
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{path}: is neither a block device nor a regular file")
    devnum = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    name = os.path.basename(os.path.realpath(os.path.join(SYS, "dev", "block", devnum)))
    if not os.path.isdir(os.path.join(SYS, "class", "block", name)):
        raise TargetError(f"{path}: block device {devnum} is not in {SYS}/class/block")
    kind = classify_block(name)
    if kind.kind == "device-mapper":
        kind = _with_dm_table(kind, st)
    return _given_as(kind, path, resolved)


def _given_as(kind: TargetKind, path: str, resolved: str) -> TargetKind:
    """Record how the user named the target: a /dev/disk/by-id link (or any
    other symlink) is kept next to the node it leads to."""
    detail = kind.detail
    if resolved not in (path, os.path.join(os.getcwd(), path)):
        detail += f"; given as {path} -> {resolved}"
    return replace(kind, path=path, resolved=resolved, detail=detail)


def _file(resolved: str, st: Optional[os.stat_result]) -> TargetKind:
    where = _filesystem_of(os.path.dirname(resolved) if st is None else resolved)
    what = "regular file" if st is not None else "file (created for the run)"
    return TargetKind(
        kind="file", detail=f"{what} {resolved}" + (f" on {where}" if where else ""),
        warnings=("a file target measures the file system and the device under it, not a raw drive: "
                  "for demos and smoke tests only",))


def _filesystem_of(path: str) -> str:
    """'ext4 (/dev/vda1)' for the file system holding ``path`` ('' if unknown)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return ""
    devnum = f"{os.major(dev)}:{os.minor(dev)}"
    for line in _read("/proc/self/mountinfo").splitlines():
        parts = line.split()
        if len(parts) > 4 and parts[2] == devnum and "-" in parts:
            sep = parts.index("-")
            if len(parts) > sep + 2:
                return f"{parts[sep + 1]} ({parts[sep + 2]})"
    return ""


def classify_block(name: str, sys_root: str = SYS) -> TargetKind:
    """What the block device the kernel calls ``name`` is, from the sysfs
    tree at ``sys_root`` alone."""
    block = os.path.join(sys_root, "class", "block", name)
    if not os.path.isdir(block):
        raise TargetError(f"{name}: not a block device in {sys_root}/class/block")
    dev = f"/dev/{name}"
    if os.path.exists(os.path.join(block, "partition")):
        return _partition(name, block, sys_root)
    if os.path.isdir(os.path.join(block, "dm")):
        return _device_mapper(name, block)
    if os.path.isdir(os.path.join(block, "md")):
        return _md(name, block)
    if name.startswith("loop") or os.path.isdir(os.path.join(block, "loop")):
        backing = _read(os.path.join(block, "loop", "backing_file"))
        rundir = simdrive.backing_rundir(backing) if backing and sys_root == SYS else None
        if rundir:
            return TargetKind(
                kind="loop", name=name,
                detail=f"emulated SSD {os.path.basename(rundir)} (tkperf simdrive): loop device {dev} with "
                       "direct I/O over the file of an FTL model",
                warnings=(f"{dev} is an emulated SSD: results describe tkperf's FTL model (its parameters "
                          "are in the run's facts under simdrive), not a drive",))
        return TargetKind(
            kind="loop", name=name,
            detail=f"loop device {dev}" + (f" over the file {backing}" if backing else " (no file attached)"),
            warnings=(f"{dev} is a loop device: results describe the file, the file system and the "
                      "disk under it, not a drive",))
    if os.path.exists(os.path.join(block, "nsid")) or re.fullmatch(r"nvme\d+n\d+", name):
        return _nvme_namespace(name, block)
    sectors = _int(os.path.join(block, "size"))
    if "/devices/virtual/" in os.path.realpath(block):
        return TargetKind(
            kind="virtual", name=name, detail=f"virtual block device {dev} ({_gb(sectors)}), no hardware under it",
            warnings=(f"{dev} is a virtual block device (a RAM disk, network or software device): "
                      "results describe its driver, not a drive",))
    return TargetKind(kind="disk", name=name, detail=f"whole disk {dev} ({_gb(sectors)})", whole_drive=True)


def _partition(name: str, block: str, sys_root: str) -> TargetKind:
    parent = os.path.basename(os.path.dirname(os.path.realpath(block)))
    number = _read(os.path.join(block, "partition"))
    start = _int(os.path.join(block, "start"))
    sectors = _int(os.path.join(block, "size"))
    parent_dir = os.path.join(sys_root, "class", "block", parent)
    parent_sectors = _int(os.path.join(parent_dir, "size"))
    detail = (f"partition {number} of /dev/{parent} ({_gb(sectors)} of {_gb(parent_sectors)}"
              + (f", from sector {start}" if start is not None else "") + ")")
    warnings = [f"/dev/{name} is a partition: results differ from the whole device /dev/{parent}, "
                "whose other partitions and unpartitioned space are neither purged nor preconditioned "
                "and keep the drive's mapping as it was; test the whole device for PTS results"]
    physical = _int(os.path.join(parent_dir, "queue", "physical_block_size")) or 512
    boundary = max(ALIGN, physical)
    if start is not None and (start * 512) % boundary:
        warnings.append(f"/dev/{name} starts at sector {start}, not on a {boundary // 1024} KiB "
                        "boundary: misaligned I/O lowers the results")
    return TargetKind(kind="partition", name=name, detail=detail, warnings=tuple(warnings), parent=parent)


def _device_mapper(name: str, block: str) -> TargetKind:
    dm_name = _read(os.path.join(block, "dm", "name")) or name
    uuid = _read(os.path.join(block, "dm", "uuid"))
    what = next((words for prefix, words in DM_UUID_KINDS if uuid.startswith(prefix)), "device-mapper device")
    members = tuple(_listdir(os.path.join(block, "slaves")))
    under = ", ".join(f"/dev/{m}" for m in members) or "no devices"
    warnings = [f"/dev/{name} ({dm_name}) is a {what}: results describe the mapping over {under} "
                "and the host's work for it, not one drive"]
    if uuid.startswith("CRYPT-"):
        warnings.append(f"/dev/{name} encrypts on the host: CPU speed and the cipher shape the results")
    if uuid.startswith("part"):
        warnings.append(f"/dev/{name} maps part of {under}: results differ from the whole device")
    return TargetKind(kind="device-mapper", name=name, detail=f"{what} {dm_name} (/dev/{name}) over {under}",
                      warnings=tuple(warnings), members=members)


def _with_dm_table(kind: TargetKind, st: os.stat_result) -> TargetKind:
    """Add the device-mapper targets (linear, striped, crypt ...) from
    ``dmsetup table``, where dmsetup is installed and may read it."""
    try:
        dmsetup = programs.require("dmsetup")
    except TkperfError:
        return kind
    text = programs.output([dmsetup, "table", "-j", str(os.major(st.st_rdev)), "-m", str(os.minor(st.st_rdev))])
    types: List[str] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] not in types:
            types.append(parts[2])
    if not types:
        return kind
    return replace(kind, detail=f"{kind.detail}, table: {', '.join(types)}")


def _md(name: str, block: str) -> TargetKind:
    md = os.path.join(block, "md")
    level = _read(os.path.join(md, "level")) or "unknown level"
    disks = _read(os.path.join(md, "raid_disks"))
    state = _read(os.path.join(md, "array_state"))
    sync = _read(os.path.join(md, "sync_action"))
    degraded = _int(os.path.join(md, "degraded"))
    chunk = _int(os.path.join(md, "chunk_size"))
    members = tuple(_listdir(os.path.join(block, "slaves")))
    under = ", ".join(f"/dev/{m}" for m in members) or "no devices"
    facts = [f"{disks} devices" if disks else "", f"chunk {chunk // 1024} KiB" if chunk else "",
             f"state {state}" if state else ""]
    detail = f"md RAID {level} /dev/{name} over {under}" + \
        (f" ({', '.join(f for f in facts if f)})" if any(facts) else "")
    warnings = [f"/dev/{name} is an md {level} array: results describe the array over {under} and md's "
                "layout, not one drive; a drive-level PURGE cannot reach the members through it, so "
                "purge them before building the array for fresh-out-of-box results"]
    if sync and sync not in ("idle", "frozen"):
        warnings.append(f"/dev/{name} is busy ({sync}): its background I/O disturbs the results; wait until "
                        f"/sys/block/{name}/md/sync_action says idle")
    if degraded:
        warnings.append(f"/dev/{name} is degraded ({degraded} device{'s' if degraded > 1 else ''} missing)")
    return TargetKind(kind="md", name=name, detail=detail, warnings=tuple(warnings), members=members)


def _nvme_namespace(name: str, block: str) -> TargetKind:
    nsid = _read(os.path.join(block, "nsid")) or "?"
    home = os.path.dirname(os.path.realpath(block))
    owner = os.path.basename(home)
    siblings = [e for e in _listdir(home) if re.fullmatch(r"nvme\d+n\d+", e) and e != name]
    transport = _nvme_transport(block, home)
    of = f"subsystem {owner}" if owner.startswith("nvme-subsys") else f"controller {owner}"
    detail = f"NVMe namespace {nsid} (/dev/{name}) of {of}"
    if transport:
        detail += f", transport {transport}"
    warnings = []
    if siblings:
        detail += f", one of {len(siblings) + 1} namespaces"
        warnings.append(f"/dev/{name} is one of {len(siblings) + 1} namespaces of {owner} "
                        f"({', '.join(sorted(siblings + [name]))}): the others share the drive's flash and "
                        "spare area, so their data and use change the results, and an NVMe Format or "
                        "Sanitize may erase them too (see FNA and SANICAP in nvme id-ctrl)")
    local = transport in ("", "pcie")
    if not local:
        warnings.append(f"/dev/{name} is reached over NVMe/{transport}: results include the fabric "
                        "and the remote target, not the drive alone")
    return TargetKind(kind="nvme-namespace", name=name, detail=detail, warnings=tuple(warnings),
                      parent=owner, whole_drive=local and not siblings)


def _nvme_transport(block: str, home: str) -> str:
    """pcie, tcp, rdma, fc or loop: the controller's, or with native NVMe
    multipath (the namespace under nvme-subsysN) those of the subsystem's
    controllers, joined when the paths differ."""
    own = _read(os.path.join(block, "device", "transport"))
    if own:
        return own
    found: List[str] = []
    for entry in _listdir(home):
        if re.fullmatch(r"nvme\d+", entry):
            t = _read(os.path.join(home, entry, "transport"))
            if t and t not in found:
                found.append(t)
    return "+".join(found)
