"""PURGE: put the drive back to fresh-out-of-box before a test.

``auto`` picks the family by transport (:func:`choose`) and then the method
by what the drive reports: ATA SECURITY ERASE (enhanced where supported,
:mod:`tkperf.target.purge_ata`) for SATA/ATA (also an ATA drive behind a
SAS HBA), NVMe Format with user-data erase or Sanitize
(:mod:`tkperf.target.purge_nvme`) for NVMe, SCSI FORMAT UNIT (sg_format,
keeping the protection type the disk has) for SAS/SCSI.  Anything else
falls back to a whole-device discard, which is *not* a PTS PURGE (the
controller may keep its mapping state); the record and the report say so.
``--purge-cmd 'TOOL ... {device}'`` runs a vendor tool instead (method
``cmd``, never counted as a PTS PURGE: tkperf cannot tell what it did).

Every purge is recorded with the method, the command lines, the time it
took and a verification: where the device promises zeros afterwards
(deallocated blocks that read as zeros: loop devices and files, ATA RZAT,
NVMe DLFEAT, SCSI LBPRZ; a normal ATA erase) tkperf reads 64 MiB at 16
places and says whether they were all zeros.
"""
from __future__ import annotations

import errno
import logging
import mmap
import os
import re
import shlex
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from tkperf import programs
from tkperf.errors import TkperfError, UsageError
from tkperf.model.results import DeviceInfo, PurgeRecord
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import control as simdrive
from tkperf.target import kinds, parsers, purge_ata, purge_nvme
from tkperf.target.device import read_text as device_read

log = logging.getLogger("tkperf")

METHODS = ("auto",) + purge_ata.VARIANTS + purge_nvme.VARIANTS + ("scsi", "discard", "none")
PTS_METHODS = set(purge_ata.VARIANTS) | set(purge_nvme.VARIANTS) | {"scsi"}
FAMILY = {**{m: "ata" for m in purge_ata.VARIANTS}, **{m: "nvme" for m in purge_nvme.VARIANTS},
          "scsi": "scsi", "discard": "discard", "none": "none", "cmd": "cmd"}
#: ``--purge-cmd TEMPLATE`` travels in the run options as ``cmd:TEMPLATE``.
CMD_PREFIX = "cmd:"
# Secure erase of a large HDD can take many hours; FORMAT UNIT likewise.
PURGE_TIMEOUT_S = 48 * 3600
VERIFY_BYTES = 64 * 1024 * 1024
VERIFY_PLACES = 16
ALIGN = 4096
NOT_PROMISED = ("not checked: the device does not promise zeros after discard "
                "(queue/discard_zeroes_data / DRAT/RZAT, NVMe DLFEAT, SCSI LBPRZ)")
CMD_NOTE = "vendor command (--purge-cmd): tkperf cannot tell whether it is a PTS PURGE"
#: What a family's commands and verification promise are functions of.
Commands = Callable[[str, DeviceInfo, object], List[List[str]]]
Promise = Callable[[DeviceInfo, str, object], Tuple[bool, str]]
EMULATED_NOTE = ("emulated SSD: a whole-device discard, which its model carries out (nothing mapped, "
                 "every block erased: fresh); not a PTS PURGE")


def cmd_argv(template: str, target: str) -> List[str]:
    """The argument list of a ``--purge-cmd`` template for ``target``:
    split like a shell would (quotes), never run by one; ``{device}`` in
    any argument becomes the device path."""
    if "{device}" not in template:
        raise UsageError("--purge-cmd needs {device} where the device path goes, e.g. "
                         "--purge-cmd 'vendor-tool erase --drive {device}'")
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise UsageError(f"--purge-cmd: cannot split {template!r}: {exc}") from None
    if not words or "{device}" in words[0]:
        raise UsageError("--purge-cmd: the command must start with a program name")
    return [w.replace("{device}", target) for w in words]


def part_of_drive(dev: DeviceInfo) -> str:
    """What makes a block target only part of a drive (a partition, a
    device-mapper or md device, an NVMe namespace that shares its
    controller), in words; '' for a whole drive, or when it cannot be told."""
    if dev.kind != "block":
        return ""
    try:
        k = kinds.classify(dev.path)
    except TkperfError:
        return ""
    if k.kind in ("partition", "device-mapper", "md") or (k.kind == "nvme-namespace" and not k.whole_drive):
        return k.detail
    return ""


def choose(requested: str, dev: DeviceInfo) -> Tuple[str, str]:
    """(method or family, note) for the requested method on this device, by
    its kind and transport only (what the drive supports is read later)."""
    if requested.startswith(CMD_PREFIX):
        cmd_argv(requested[len(CMD_PREFIX):], dev.resolved)
        return "cmd", CMD_NOTE
    if requested not in METHODS:
        raise UsageError(f"unknown purge method {requested!r}; choose from {', '.join(METHODS)}")
    part = part_of_drive(dev)
    if part and requested in PTS_METHODS:
        raise UsageError(f"--purge {requested} would erase the whole drive, not only {dev.path} ({part}); "
                         "use --purge discard or none, or test the whole drive")
    if part and requested == "auto":
        return "discard", (f"{dev.path} is {part}: a drive-level PURGE would erase more than the target; "
                           "used a discard of the target, which is not a PTS PURGE")
    if requested != "auto":
        if dev.kind == "file" and requested in PTS_METHODS:
            raise UsageError(f"--purge {requested} needs a block device; {dev.path} is a file target")
        if requested == "none":
            return "none", "no purge: results do not start from FOB"
        return requested, "" if requested in PTS_METHODS else "discard is not a PTS PURGE"
    return _auto(dev)


def _auto(dev: DeviceInfo) -> Tuple[str, str]:
    """``--purge auto`` on a whole drive or a file: the PTS PURGE of its transport, else a discard."""
    tran = dev.transport.lower()
    if dev.transport == EMULATED:
        return "discard", EMULATED_NOTE
    if dev.kind == "file":
        return "discard", "file target: holes punched in the file; not a PTS PURGE"
    if tran == "nvme" or dev.resolved.startswith("/dev/nvme"):
        return "nvme", ""
    if tran in ("sata", "ata", "pata") or (dev.vendor.strip() == "ATA" and tran in ("sas", "")):
        return "ata", ""
    if tran in ("sas", "scsi", "fc", "iscsi", "spi", "srp"):
        return "scsi", ""
    return "discard", (f"transport '{dev.transport or 'unknown'}' has no PTS PURGE tkperf knows; "
                       "used a whole-device discard, which is not a PTS PURGE")


def _scsi_protection(target: str) -> List[str]:
    """sg_format options that keep the disk's protection type (sg_format's
    default formats without protection information)."""
    text = programs.output([programs.require("sg_readcap"), "--long", target])
    m = re.search(r"prot_en=(\d+),\s*p_type=(\d+)", text)
    if not m or m.group(1) == "0":
        return []
    return {"0": ["--fmtpinfo=2"], "1": ["--fmtpinfo=3"], "2": ["--fmtpinfo=3", "--pfu=1"]}.get(m.group(2), [])


def _ata_commands(method: str, dev: DeviceInfo, facts: object) -> List[List[str]]:
    return purge_ata.commands("ata-normal" if method == "ata" else method, dev.resolved)


def _nvme_commands(method: str, dev: DeviceInfo, facts: object) -> List[List[str]]:
    nvme_facts = facts if isinstance(facts, purge_nvme.NvmeFacts) else None
    return purge_nvme.commands("nvme-format" if method == "nvme" else method, dev.resolved, nvme_facts)


def _scsi_commands(method: str, dev: DeviceInfo, facts: object) -> List[List[str]]:
    # No --wait: sg_format polls the disk and returns when the format is done.
    extra = facts if isinstance(facts, list) else []
    return [[programs.require("sg_format"), "--format", "--quick", *extra, dev.resolved]]


def _discard_commands(method: str, dev: DeviceInfo, facts: object) -> List[List[str]]:
    if dev.kind == "file":
        return [[programs.require("fallocate"), "--punch-hole", "--offset", "0",
                 "--length", str(dev.size_bytes), dev.resolved]]
    blkdiscard = programs.require("blkdiscard")
    # tkperf holds the device open with O_EXCL during the run; blkdiscard
    # >= 2.36 opens it O_EXCL too unless --force (tkperf did the checks).
    force = ["--force"] if "--force" in programs.output([blkdiscard, "--help"]) else []
    return [[blkdiscard, *force, dev.resolved]]


def _no_commands(method: str, dev: DeviceInfo, facts: object) -> List[List[str]]:
    return []


def commands(method: str, dev: DeviceInfo, facts: object = None) -> List[List[str]]:
    """The argument lists that carry out ``method`` on ``dev``, in order
    (``facts``: what the drive reported, where the method depends on it)."""
    if method.startswith(CMD_PREFIX):
        return [cmd_argv(method[len(CMD_PREFIX):], dev.resolved)]
    way = WAYS.get(FAMILY.get(method, ""))
    return way.commands(method, dev, facts) if way else []


def _zeros_promised(dev: DeviceInfo) -> bool:
    """Whether discarded (deallocated, unmapped) blocks of ``dev`` read back
    as zeros, as the device or its driver promises."""
    if dev.kind == "file":
        return True
    name = os.path.basename(os.path.realpath(dev.resolved))
    backing = f"/sys/block/{name}/loop/backing_file"
    if os.path.exists(backing):  # a loop device over a file punches holes: zeros
        return os.path.isfile(device_read(backing))
    if dev.transport.lower() in ("sata", "ata", "pata") or dev.vendor.strip() == "ATA":
        return purge_ata.reads_zeros_after_trim(dev)
    if dev.transport.lower() == "nvme" or dev.resolved.startswith("/dev/nvme"):
        return purge_nvme.parse("", programs.output(
            [programs.require("nvme"), "id-ns", dev.resolved])).zeros_after_deallocate
    text = programs.output([programs.require("sg_readcap"), "--long", dev.resolved])
    return bool(re.search(r"lbprz=1", text))


def _open_for_verify(path: str) -> Tuple[int, bool]:
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0)), True
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        return os.open(path, os.O_RDONLY), False  # a file system without O_DIRECT (tmpfs)


def verify_zeros(path: str, size: int, total: int = VERIFY_BYTES, places: int = VERIFY_PLACES) -> str:
    """Read ``total`` bytes spread over ``places`` regions of ``path`` and say
    whether they are all zeros (O_DIRECT: what the device returns, not the
    page cache)."""
    chunk = max(ALIGN, (min(total, size) // places) // ALIGN * ALIGN)
    span = max(0, size - chunk)
    offsets = sorted({(i * span // max(1, places - 1)) // ALIGN * ALIGN for i in range(places)})
    fd, _direct = _open_for_verify(path)
    buf = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT needs
    bad: List[int] = []
    read = 0
    try:
        for off in offsets:
            n = os.preadv(fd, [buf], off)
            read += n
            if buf[:n].count(0) != n:
                bad.append(off)
    finally:
        os.close(fd)
        buf.close()
    what = f"read {_mib(read)} at {len(offsets)} places"
    if not bad:
        return f"{what}: all zeros"
    return f"{what}: NOT all zeros: data at {len(bad)} of them (first at byte {bad[0]})"


def _mib(n: int) -> str:
    return f"{n / 1048576:.0f} MiB" if n >= 1048576 else f"{n // 1024} KiB"


def _not_promised(dev: DeviceInfo, method: str, facts: object) -> Tuple[bool, str]:
    return False, f"not checked: {method} does not promise what the blocks read afterwards"


def _ata_promise(dev: DeviceInfo, method: str, facts: object) -> Tuple[bool, str]:
    if method == "ata-normal":
        return True, ""  # ACS: a normal SECURITY ERASE UNIT writes binary zeros
    return _not_promised(dev, method, facts)


def _nvme_promise(dev: DeviceInfo, method: str, facts: object) -> Tuple[bool, str]:
    if method in ("sanitize-block", "sanitize-crypto") and isinstance(facts, purge_nvme.NvmeFacts):
        # A sanitize deallocates; DLFEAT says what deallocated blocks read as.
        return facts.zeros_after_deallocate, ("not checked: the namespace does not promise zeros "
                                              "for deallocated blocks (DLFEAT)")
    return _not_promised(dev, method, facts)


def _discard_promise(dev: DeviceInfo, method: str, facts: object) -> Tuple[bool, str]:
    try:
        return _zeros_promised(dev), NOT_PROMISED
    except (TkperfError, OSError) as exc:
        log.warning("purge: cannot tell whether %s reads zeros after a discard: %s", dev.path, exc)
        return False, NOT_PROMISED


def _verification(promise: Promise, dev: DeviceInfo, method: str, status: str, facts: object) -> str:
    promised, why = promise(dev, method, facts)
    try:
        text = verify_zeros(dev.resolved, dev.size_bytes) if promised else why
    except OSError as exc:
        text = f"not checked: the verification read failed ({exc.strerror or exc})"
    if promised and "NOT all zeros" in text:
        log.warning("purge: %s promises zeros after the purge, but %s", dev.path, text)
    return f"{status}; {text}" if status else text


def _model_fresh(dev: DeviceInfo) -> str:
    """What an emulated SSD's model says after the purge: fresh or not, from its counters."""
    name = os.path.basename(os.path.realpath(dev.resolved))
    rundir = simdrive.backing_rundir(device_read(f"/sys/block/{name}/loop/backing_file"))
    try:
        if not rundir:
            raise TkperfError("its runtime directory is gone")
        s = simdrive.stats(rundir)
    except TkperfError as exc:
        log.warning("purge: cannot ask the emulated SSD %s for its state: %s", dev.path, exc)
        return f"emulated SSD's state NOT checked ({exc})"
    counts = (f"{s['mapped_bytes']} bytes mapped, {s['free_blocks']} of {s['physical_blocks']} blocks erased, "
              f"purges {s['purges']}")
    if s.get("fresh") is True:
        return f"emulated SSD's model is fresh ({counts})"
    log.warning("purge: the emulated SSD %s is NOT fresh after the purge (%s)", dev.path, counts)
    return f"emulated SSD's model is NOT fresh ({counts})"


def _run_all(argvs: List[List[str]], what: str) -> None:
    for argv in argvs:
        programs.run(argv, timeout=PURGE_TIMEOUT_S, what=what)


def _run_commands(requested: str, method: str, dev: DeviceInfo, facts: object) -> Tuple[List[List[str]], str]:
    """Run the method's commands (:func:`commands`) one after the other."""
    argvs = commands(method, dev, facts)
    _run_all(argvs, f"purge ({method})")
    return argvs, ""


def _run_ata(requested: str, method: str, dev: DeviceInfo, facts: object) -> Tuple[List[List[str]], str]:
    assert isinstance(facts, parsers.AtaSecurity)  # what _detect_ata found
    return purge_ata.erase(dev, method, facts, PURGE_TIMEOUT_S)


def _run_nvme(requested: str, method: str, dev: DeviceInfo, facts: object) -> Tuple[List[List[str]], str]:
    if method.startswith("sanitize-"):
        return purge_nvme.sanitize(method, dev.resolved, PURGE_TIMEOUT_S)
    return _run_commands(requested, method, dev, facts)


def _run_scsi(requested: str, method: str, dev: DeviceInfo, facts: object) -> Tuple[List[List[str]], str]:
    return _run_commands(requested, method, dev, _scsi_protection(dev.resolved))


def _run_cmd(requested: str, method: str, dev: DeviceInfo, facts: object) -> Tuple[List[List[str]], str]:
    argvs = [cmd_argv(requested[len(CMD_PREFIX):], dev.resolved)]
    _run_all(argvs, "purge command (--purge-cmd)")
    return argvs, ""


@dataclass(frozen=True)
class Detected:
    """What detection found: the method to run, what the drive reported
    that the run and the verification need, and a note that replaces the
    chooser's (a fallback's reason)."""

    method: str
    facts: object = None
    note: str = ""


def _as_chosen(requested: str, chosen: str, dev: DeviceInfo) -> Detected:
    return Detected(chosen)


def _detect_ata(requested: str, chosen: str, dev: DeviceInfo) -> Detected:
    sec = purge_ata.read_security(dev)
    if requested == "auto" and not sec.supported:
        return Detected("discard", None, "the ATA drive does not support the security feature set (no SECURITY "
                                         "ERASE); used a whole-device discard, which is not a PTS PURGE")
    return Detected(purge_ata.choose_variant(chosen, dev, sec), sec)


def _detect_nvme(requested: str, chosen: str, dev: DeviceInfo) -> Detected:
    facts = purge_nvme.read_facts(dev)
    return Detected(purge_nvme.choose_variant(chosen, dev, facts), facts)


@dataclass(frozen=True)
class Way:
    """One family of purge methods (:data:`FAMILY`): how its variant is
    detected from what the drive reports, its commands (what the dry run
    shows), how it runs (the commands, or a protocol of its own with a
    status line) and whether the blocks then promise zeros, which the
    verification read checks (None: nothing to verify)."""

    detect: Callable[[str, str, DeviceInfo], Detected]
    commands: Commands
    run: Callable[[str, str, DeviceInfo, object], Tuple[List[List[str]], str]]
    promise: Optional[Promise]


#: Every family of purge methods, one row each (:data:`FAMILY` maps a method to its row).
WAYS: Dict[str, Way] = {
    "ata": Way(_detect_ata, _ata_commands, _run_ata, _ata_promise),
    "nvme": Way(_detect_nvme, _nvme_commands, _run_nvme, _nvme_promise),
    "scsi": Way(_as_chosen, _scsi_commands, _run_scsi, _not_promised),
    "discard": Way(_as_chosen, _discard_commands, _run_commands, _discard_promise),
    "cmd": Way(_as_chosen, _no_commands, _run_cmd, _not_promised),
    "none": Way(_as_chosen, _no_commands, _run_commands, None),
}


def purge(requested: str, dev: DeviceInfo) -> PurgeRecord:
    """Carry out the purge; a failure raises TkperfError naming the command."""
    chosen, note = choose(requested, dev)
    found = WAYS[FAMILY[chosen]].detect(requested, chosen, dev)
    method, note = found.method, found.note or note
    way = WAYS[FAMILY[method]]
    if note:
        log.warning("purge: %s", note)
    log.info("purge: %s on %s", method, dev.path)
    t0 = time.monotonic()
    argvs, status = way.run(requested, method, dev, found.facts)
    seconds = time.monotonic() - t0
    if way.promise is not None and dev.transport == EMULATED:
        status = "; ".join(x for x in (status, _model_fresh(dev)) if x)
    verification = "" if way.promise is None else _verification(way.promise, dev, method, status, found.facts)
    log.info("purge %s done in %.1f s; %s", method, seconds, verification or "not checked")
    if "NOT all zeros" in verification:
        note = "; ".join(x for x in (note, "the verification read found data after the purge") if x)
    if "model is NOT fresh" in verification:
        note = "; ".join(x for x in (note, "the emulated SSD's model was not fresh after the purge") if x)
    return PurgeRecord(
        requested=requested, method=method, seconds=seconds, pts_purge=method in PTS_METHODS,
        command=" ; ".join(programs.command_line(a) for a in argvs), note=note, verification=verification,
    )
