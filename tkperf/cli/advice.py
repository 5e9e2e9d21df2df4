"""Mistakes a newcomer makes, each answered with what to do instead.

* ``tkperf ssd /dev/sdb`` or ``tkperf ssd intel320 /dev/sdb`` (the
  original TKperf's command line) is told the command of this tkperf;
* a device named without ``/dev/`` (``nvme0n1``) is told its full path;
* a run on a block device by a user who is not root is told to use sudo;
* the confirmation prompt names the file systems found on the device;
* an interrupted run is told the exact ``tkperf resume`` command (but for
  a throw-away target, ``tkperf demo``'s: the demo is run again).
"""
from __future__ import annotations

import os
import stat
from typing import List, Optional, Sequence

from tkperf import programs
from tkperf.engine.opening import can_write
from tkperf.engine.opening import command_words as _command
from tkperf.engine.opening import resume_command as resume_command
from tkperf.engine.opening import throwaway_target as throwaway_target
from tkperf.errors import TargetError, UsageError
from tkperf.model.results import DeviceInfo
from tkperf.target.devpath import split_target

PROFILES = ("ssd", "hdd")


def habit(argv: Sequence[str]) -> None:
    """A UsageError for ``tkperf ssd DEVICE ...`` and TKperf 2's ``tkperf ssd
    NAME DEVICE ...``, naming the command that does it here."""
    if len(argv) < 2 or argv[0] not in PROFILES or argv[1] == "run" or argv[1].startswith("-"):
        return
    profile, rest = argv[0], list(argv[1:])
    if len(rest) >= 2 and not rest[0].startswith("/") and rest[1].startswith("/dev/"):
        # TKperf 2: tkperf ssd TESTNAME DEVICE [options]; the test name is --name now
        suggestion = [profile, "run", rest[1], "--name", rest[0], *rest[2:]]
    else:
        suggestion = [profile, "run", *rest]
    raise UsageError(f"tkperf {profile} needs an action: tkperf {_command(suggestion)}")


def full_path(path: str, size: Optional[int]) -> None:
    """A TargetError (the exit code of any missing target) for a device named
    without ``/dev/`` (``nvme0n1``), when no such file is here to be a file
    target and ``/dev/NAME`` exists."""
    if size is not None or "/" in path or split_target(path) is not None or os.path.lexists(path):
        return
    dev = os.path.join("/dev", path)
    if os.path.exists(dev):
        raise TargetError(f"{path}: no such file here; the device is {dev} (give the full path)")


def need_root_for(path: str, words: Sequence[str]) -> None:
    """:func:`need_root` for a target named on the command line, before it is
    opened (several targets: before any run starts)."""
    if split_target(path) is not None or can_write(path):
        return
    try:
        is_block = stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return  # not there: the target's own error says so
    if is_block:
        raise UsageError(f"{path}: testing a block device needs root: run as root or with sudo "
                         f"(sudo tkperf {_command(words)})")


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
