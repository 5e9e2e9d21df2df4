"""What is tested: resolve the target, read its facts, refuse what is unsafe.

A target is a block device (the normal case) or a regular file with an
explicit size (demos, and hosts where no loop device can be made).  Before
anything writes to a block device, :func:`safety_problems` lists the reasons
it may be in use: mounted (itself or a partition), holders (device mapper,
md, LVM), swap, a RAID/LVM member signature, or the disk holding ``/``.
"""
from __future__ import annotations

import json
import os
import stat
from typing import Dict, List, Optional, Set

from tkperf import programs
from tkperf.errors import RefusedError, TargetError
from tkperf.model.results import DeviceInfo
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import control as simdrive
from tkperf.target import identity

SYS_BLOCK = "/sys/class/block"
MIN_SIZE = 16 * 1024 * 1024
IN_USE_FSTYPES = {"linux_raid_member", "LVM2_member", "zfs_member", "ceph_bluestore",
                  "bcache", "isw_raid_member", "ddf_raid_member", "swap"}


#: A small file's text (sysfs, procfs), stripped; '' when it cannot be read.
read_text = identity.read_text


_read = read_text


def _dev_numbers(path: str) -> str:
    st = os.stat(path)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def _sys_name(devnum: str) -> str:
    link = f"/sys/dev/block/{devnum}"
    return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else ""


def _partitions(name: str) -> List[str]:
    base = os.path.join(SYS_BLOCK, name)
    out = []
    try:
        for entry in os.listdir(base):
            if entry.startswith(name) and os.path.exists(os.path.join(base, entry, "partition")):
                out.append(entry)
    except OSError:
        pass
    return out


def _parent_disk(name: str) -> str:
    """The whole disk a partition belongs to (the name itself for a disk)."""
    path = os.path.realpath(os.path.join(SYS_BLOCK, name))
    if os.path.exists(os.path.join(path, "partition")):
        return os.path.basename(os.path.dirname(path))
    return name


def _base_disks(name: str, seen: Optional[Set[str]] = None) -> Set[str]:
    """The physical disks under ``name``, following device-mapper/md slaves."""
    seen = seen if seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    slaves_dir = os.path.join(SYS_BLOCK, name, "slaves")
    try:
        slaves = os.listdir(slaves_dir)
    except OSError:
        slaves = []
    if not slaves:
        return {_parent_disk(name)}
    out: Set[str] = set()
    for s in slaves:
        out |= _base_disks(s, seen)
    return out


def root_disks() -> Set[str]:
    """Disks that hold the root filesystem (empty if / is not on a block device)."""
    disks: Set[str] = set()
    st = os.stat("/")
    name = _sys_name(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if name:
        disks |= _base_disks(name)
    # / on btrfs or overlay reports an anonymous st_dev: read the mount table too.
    for line in _read("/proc/self/mountinfo").splitlines():
        parts = line.split()
        if len(parts) > 4 and parts[4] == "/":
            sep = parts.index("-") if "-" in parts else -1
            source = parts[sep + 2] if sep > 0 and len(parts) > sep + 2 else ""
            if source.startswith("/dev/") and os.path.exists(source):
                try:
                    n = _sys_name(_dev_numbers(source))
                except OSError:
                    n = ""
                if n:
                    disks |= _base_disks(n)
            n = _sys_name(parts[2])
            if n:
                disks |= _base_disks(n)
    return disks


def _mounted_devnums() -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in _read("/proc/self/mountinfo").splitlines():
        parts = line.split()
        if len(parts) > 4:
            out.setdefault(parts[2], parts[4])
    return out


def _swaps() -> Set[str]:
    names = set()
    for line in _read("/proc/swaps").splitlines()[1:]:
        dev = line.split()[0] if line.split() else ""
        if dev.startswith("/dev/") and os.path.exists(dev):
            try:
                names.add(_sys_name(_dev_numbers(dev)))
            except OSError:
                pass
    return names


def lsblk(path: str) -> dict:
    """``lsblk -J`` facts of one device and its partitions (empty dict if lsblk fails)."""
    cols = "NAME,PATH,SIZE,TYPE,FSTYPE,MOUNTPOINT,MODEL,SERIAL,REV,VENDOR,ROTA,TRAN,LOG-SEC,PHY-SEC,WWN"
    text = programs.output([programs.require("lsblk"), "-J", "-b", "-o", cols, path])
    try:
        devs = json.loads(text).get("blockdevices", []) if text else []
    except ValueError:
        devs = []
    return devs[0] if devs else {}


def signature(dev: str) -> str:
    """The on-disk signature type (ext4, swap, LVM2_member ...) by a low-level
    probe of the device itself, so it works without a udev database."""
    if not os.path.exists(dev):
        return ""
    text = programs.output([programs.require("blkid"), "-p", "-o", "export", dev])
    for line in text.splitlines():
        if line.startswith("TYPE="):
            return line[5:].strip()
    return ""


def _str(value: object) -> str:
    return "" if value is None else str(value).strip()


def safety_problems(info: DeviceInfo) -> List[str]:
    """Reasons writing to this block device could destroy data in use (empty = none found)."""
    if info.kind != "block":
        return []
    name = _sys_name(_dev_numbers(info.resolved))
    problems: List[str] = []
    names = [name] + _partitions(name)
    mounted = _mounted_devnums()
    for n in names:
        devnum = _read(os.path.join(SYS_BLOCK, n, "dev"))
        if devnum in mounted:
            what = "it is" if n == name else f"its partition {n} is"
            problems.append(f"{info.path}: {what} mounted on {mounted[devnum]}")
    swaps = _swaps()
    for n in names:
        if n in swaps:
            problems.append(f"{info.path}: {'it' if n == name else n} is in use as swap")
    for n in names:
        try:
            holders = os.listdir(os.path.join(SYS_BLOCK, n, "holders"))
        except OSError:
            holders = []
        if holders:
            problems.append(f"{info.path}: {'it' if n == name else n} is held by {', '.join(sorted(holders))}")
    for n in names:
        fstype = signature(f"/dev/{n}")
        if fstype in IN_USE_FSTYPES:
            problems.append(f"{info.path}: {'it' if n == name else n} carries a {fstype} signature")
    roots = root_disks()
    if _parent_disk(name) in roots or name in roots:
        problems.append(f"{info.path}: it holds the root filesystem /")
    return problems


def check_safe(info: DeviceInfo, force: bool) -> List[str]:
    """Raise RefusedError for the first problem unless ``force``; return the problems."""
    problems = safety_problems(info)
    if problems and not force:
        raise RefusedError(f"refusing to write: {problems[0]} (pass --force if you really mean it)")
    return problems


def resolve(path: str, size: Optional[int] = None) -> DeviceInfo:
    """Facts of the target at ``path`` (a block device, or a regular file with
    ``size``), the path resolved by the kernel (:mod:`tkperf.target.identity`)."""
    if not path:
        raise TargetError("no target device given")
    where = identity.resolve(path, may_create=size is not None)
    st = where.st
    if st is None:  # a file target still to be created
        return _file_target(path, where.real, size or 0, None)
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(f"{path}: is a directory, not a block device")
    if stat.S_ISCHR(st.st_mode):
        raise TargetError(f"{path}: is a character device; tkperf tests block devices "
                          "(for NVMe use the namespace, e.g. /dev/nvme0n1)")
    if stat.S_ISREG(st.st_mode):
        if size is None:
            raise TargetError(f"{path}: is a regular file; give --size to test a file target")
        return _file_target(path, where.real, size, st)
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{path}: not a block device")
    if size is not None:
        raise TargetError("--size is only for file targets; a block device is tested whole")
    return _block_target(path, where.real, where.devnum)


def _file_target(path: str, resolved: str, size: int, st: Optional[os.stat_result]) -> DeviceInfo:
    if size < MIN_SIZE:
        raise TargetError(f"{path}: --size {size} is below the {MIN_SIZE // 2**20} MiB minimum")
    return DeviceInfo(path=path, resolved=resolved, kind="file", size_bytes=size,
                      logical_sector=512, physical_sector=512, model="file target",
                      transport="file", inode=identity.inode_of(st, resolved) if st is not None else "")


def prepare_file_target(info: DeviceInfo) -> None:
    """Create or extend the file of a file target to its size (sparse)."""
    try:
        with open(info.resolved, "ab") as fh:
            if os.fstat(fh.fileno()).st_size < info.size_bytes:
                fh.truncate(info.size_bytes)
    except OSError as exc:
        raise TargetError(f"{info.path}: cannot create the file target: {exc.strerror}") from None


def _block_target(path: str, resolved: str, devnum: str) -> DeviceInfo:
    name = _sys_name(devnum)
    if not name:
        raise TargetError(f"{path}: block device {devnum} is not in /sys/dev/block")
    sysdir = os.path.join(SYS_BLOCK, name)
    sectors = _read(os.path.join(sysdir, "size"))
    size = int(sectors) * 512 if sectors.isdigit() else 0
    if size <= 0:
        raise TargetError(f"{path}: has size 0 (no medium, or a loop device with no file?)")
    facts = lsblk(resolved)
    devdir = os.path.join(sysdir, "device")
    model = _str(facts.get("model")) or _read(os.path.join(devdir, "model"))
    serial = _str(facts.get("serial")) or _read(os.path.join(devdir, "serial"))
    firmware = (_str(facts.get("rev")) or _read(os.path.join(devdir, "firmware_rev"))
                or _read(os.path.join(devdir, "rev")))
    vendor = _str(facts.get("vendor")) or _read(os.path.join(devdir, "vendor"))
    transport = _str(facts.get("tran"))
    if not transport:
        if name.startswith("nvme"):
            transport = "nvme"
        elif name.startswith("loop"):
            transport = "loop"
        elif os.path.isdir(os.path.join(devdir, "scsi_disk")):
            # owned by the SCSI disk driver (virtio-scsi, some HBAs report no
            # transport): a SCSI disk, which sdparm and sg_format reach
            transport = "scsi"
    if name.startswith("loop") and not model:
        backing = _read(os.path.join(sysdir, "loop", "backing_file"))
        model = "loop device" + (f" over {backing}" if backing else "")
        rundir = simdrive.backing_rundir(backing) if backing else None
        if rundir:  # tkperf simdrive's emulated SSD: what it is, not the loop device
            transport, vendor, model = EMULATED, "tkperf", "emulated SSD (tkperf simdrive)"
            serial = os.path.basename(rundir)
    rota = _read(os.path.join(sysdir, "queue", "rotational"))
    ids = identity.block_ids(name, sysdir, resolved, _str(facts.get("wwn")))
    return DeviceInfo(
        path=path, resolved=resolved, kind="block", size_bytes=size,
        logical_sector=int(_read(os.path.join(sysdir, "queue", "logical_block_size")) or 512),
        physical_sector=int(_read(os.path.join(sysdir, "queue", "physical_block_size")) or 512),
        vendor=vendor, model=model, serial=serial, firmware=firmware,
        rotational=rota == "1", transport=transport,
        # sysfs queue/write_cache only says whether a volatile cache exists
        # (for NVMe), not whether it is on: the session reads the drive
        # itself (tkperf.target.writecache) and fills this in.
        write_cache="", devnum=devnum, **ids._asdict(),
    )


def check_still(info: DeviceInfo) -> None:
    """TargetError unless ``info.resolved`` still names the device node (or the
    file) that was resolved: checked before fio or a purge opens it by path."""
    if info.kind == "block" and info.devnum:
        now = identity.resolve(info.resolved).devnum
        if now != info.devnum:
            raise TargetError(f"{info.path}: {info.resolved} is now device {now or '(none)'}, not the "
                              f"{info.devnum} the run resolved; stopped before writing to it")
    elif info.kind == "file" and info.inode:
        st = identity.resolve(info.resolved).st
        if st is None or identity.inode_of(st, info.resolved) != info.inode:
            raise TargetError(f"{info.path}: {info.resolved} is no longer the file the run made or "
                              "resolved (replaced or linked elsewhere); stopped before writing to it")


def open_exclusive(info: DeviceInfo) -> Optional[int]:
    """Hold the block device open with O_EXCL for the run (the kernel then refuses
    mounts and other exclusive openers); None for file targets."""
    if info.kind != "block":
        return None
    try:
        fd = os.open(info.resolved, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        raise RefusedError(f"{info.path}: cannot open exclusively ({exc.strerror}); "
                           "something else is using it") from None
    if info.devnum and not identity.same_node(fd, info.devnum):
        os.close(fd)
        raise TargetError(f"{info.path}: {info.resolved} is no longer the device {info.devnum} "
                          "that was resolved; nothing was written")
    return fd
