"""PURGE: put the drive back to fresh-out-of-box before a test.

``auto`` picks the PTS PURGE command the transport understands: ATA
SECURITY ERASE (hdparm) for SATA/ATA, NVMe Format with user-data erase
(nvme-cli) for NVMe, SCSI FORMAT UNIT (sg_format) for SAS/SCSI.  Anything
else falls back to a whole-device discard, which is *not* a PTS PURGE (the
controller may keep its mapping state); the record and the report say so.
"""
from __future__ import annotations

import logging
import re
import time
from typing import List, Tuple

from tkperf import programs
from tkperf.errors import TargetError, UsageError
from tkperf.model.results import DeviceInfo, PurgeRecord

log = logging.getLogger("tkperf")

METHODS = ("auto", "ata", "nvme", "scsi", "discard", "none")
PTS_METHODS = {"ata", "nvme", "scsi"}
ATA_PASSWORD = "tkperf"
# Secure erase of a large HDD can take many hours; FORMAT UNIT likewise.
PURGE_TIMEOUT_S = 48 * 3600


def choose(requested: str, dev: DeviceInfo) -> Tuple[str, str]:
    """(method, note) for the requested method on this device."""
    if requested not in METHODS:
        raise UsageError(f"unknown purge method {requested!r}; choose from {', '.join(METHODS)}")
    if requested != "auto":
        if dev.kind == "file" and requested in PTS_METHODS:
            raise UsageError(f"--purge {requested} needs a block device; {dev.path} is a file target")
        note = "" if requested in PTS_METHODS or requested == "none" else "discard is not a PTS PURGE"
        if requested == "none":
            note = "no purge: results do not start from FOB"
        return requested, note
    tran = dev.transport.lower()
    if dev.kind == "file":
        return "discard", "file target: holes punched in the file; not a PTS PURGE"
    if tran == "nvme" or dev.resolved.startswith("/dev/nvme"):
        return "nvme", ""
    if tran in ("sata", "ata", "pata"):
        return "ata", ""
    if tran in ("sas", "fc", "iscsi", "spi", "srp"):
        return "scsi", ""
    return "discard", (f"transport '{dev.transport or 'unknown'}' has no PTS PURGE tkperf knows; "
                       "used a whole-device discard, which is not a PTS PURGE")


def commands(method: str, dev: DeviceInfo) -> List[List[str]]:
    """The argument lists that carry out ``method`` on ``dev``, in order."""
    target = dev.resolved
    if method == "ata":
        hdparm = programs.require("hdparm")
        return [
            [hdparm, "--user-master", "u", "--security-set-pass", ATA_PASSWORD, target],
            [hdparm, "--user-master", "u", "--security-erase", ATA_PASSWORD, target],
        ]
    if method == "nvme":
        return [[programs.require("nvme"), "format", target, "--ses=1", "--force"]]
    if method == "scsi":
        return [[programs.require("sg_format"), "--format", "--quick", "--wait", target]]
    if method == "discard":
        if dev.kind == "file":
            return [[programs.require("fallocate"), "--punch-hole", "--offset", "0",
                     "--length", str(dev.size_bytes), target]]
        blkdiscard = programs.require("blkdiscard")
        # tkperf holds the device open with O_EXCL during the run; blkdiscard
        # >= 2.36 opens it O_EXCL too unless --force (tkperf did the checks).
        force = ["--force"] if "--force" in programs.output([blkdiscard, "--help"]) else []
        return [[blkdiscard, *force, target]]
    return []


def _ata_frozen(dev: DeviceInfo) -> bool:
    text = programs.output([programs.require("hdparm"), "-I", dev.resolved])
    return bool(re.search(r"^\s*frozen\s*$", text, re.M)) and not re.search(r"not\s+frozen", text)


def purge(requested: str, dev: DeviceInfo) -> PurgeRecord:
    """Carry out the purge; a failure raises TkperfError naming the command."""
    method, note = choose(requested, dev)
    if note:
        log.warning("purge: %s", note)
    if method == "ata" and _ata_frozen(dev):
        raise TargetError(f"{dev.path}: ATA security is frozen, secure erase is impossible now "
                          "(suspend and resume the host, or hot-plug the drive), or use --purge discard")
    argvs = commands(method, dev)
    t0 = time.monotonic()
    for argv in argvs:
        programs.run(argv, timeout=PURGE_TIMEOUT_S, what=f"purge ({method})")
    seconds = time.monotonic() - t0
    log.info("purge %s done in %.1f s", method, seconds)
    return PurgeRecord(
        requested=requested, method=method, seconds=seconds,
        pts_purge=method in PTS_METHODS, command=" ; ".join(programs.command_line(a) for a in argvs),
        note=note,
    )

