"""Mistakes a newcomer makes, each answered with what to do instead.

* ``tkperf ssd /dev/sdb`` or ``tkperf ssd intel320 /dev/sdb`` (the
  original TKperf's command line), a device named without ``/dev/``
  (``nvme0n1``) and a run on a block device by a user who is not root are
  answered by the run command itself (:mod:`tkperf.cli.run`);
* the confirmation prompt names the file systems found on the device;
* an interrupted run is told the exact ``tkperf resume`` command (but for
  a throw-away target, ``tkperf demo``'s: the demo is run again).
"""
from __future__ import annotations

import os
from typing import List

from tkperf import programs
from tkperf.engine.opening import resume_command as resume_command
from tkperf.engine.opening import throwaway_target as throwaway_target
from tkperf.model.results import DeviceInfo
from tkperf.target.identity import split_target


def filesystems(path: str) -> List[str]:
    """The file systems and other signatures on the device at ``path`` and its
    partitions: blkid's low-level probe of the device itself (it needs no
    udev database), then lsblk's FSTYPE column of its partitions."""
    found: List[str] = []
    if not os.path.exists(path):
        return found
    blkid = programs.output([programs.require("blkid"), "-p", "-o", "value", "-s", "TYPE", path])
    lsblk = programs.output([programs.require("lsblk"), "-n", "-o", "FSTYPE", path])
    for line in blkid.splitlines() + lsblk.splitlines():
        name = line.strip()
        if name and name not in found:
            found.append(name)
    return found


def on_device(dev: DeviceInfo) -> str:
    """' It holds: ext4, swap.' for the confirmation prompt, or ''."""
    if dev.kind != "block" or split_target(dev.path) is not None:
        return ""
    try:
        names = filesystems(dev.resolved)
    except Exception:  # noqa: BLE001 - a missing blkid must not block the prompt
        return ""
    return f" It holds: {', '.join(names)}." if names else ""
