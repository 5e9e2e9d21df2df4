"""Several targets of one command, checked and named before any run starts
(:mod:`tkperf.cli.multirun` runs them)."""
from __future__ import annotations

import dataclasses
import os
import stat
from collections import Counter
from typing import Dict, List, Sequence, Tuple

from tkperf.cli import common
from tkperf.cli import remote as remote_cli
from tkperf.kit.options import RunOptions
from tkperf.engine.request import RemoteSettings, RunRequest
from tkperf.engine.session import fio_settings
from tkperf.errors import UsageError
from tkperf.model.results import DeviceInfo
from tkperf.remote import fio_host, split_target
from tkperf.target.side import TargetSide


@dataclasses.dataclass
class Planned:
    """A target as the command line gave it (``arg``), checked and named."""

    arg: str
    dev: DeviceInfo
    opts: RunOptions
    name: str
    is_file: bool
    side: TargetSide


def _is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _identity(dev: DeviceInfo, side: TargetSide) -> Tuple[str, object]:
    if side.host:
        return "remote", (fio_host(side.host), dev.resolved)
    if dev.kind == "block":
        return "block", os.stat(dev.resolved).st_rdev
    return "file", os.path.realpath(dev.resolved)


def plan_targets(request: RunRequest, open_run) -> List[Planned]:
    """Every target checked as a run of it alone would be, and named: the
    default name of each device, with the device's own name appended where
    two defaults are the same (two drives of one model: ``MODEL-nvme1n1``)
    and ``-2``, ``-3`` where they still are (``x.img``, ``x.img-2``);
    ``--name PREFIX`` goes in front of each (``PREFIX-loop0``).  The remote
    ones among them hold an SSH session each: :func:`close_sides`.
    ``open_run(request, device, size)`` opens one of them
    (:func:`tkperf.cli.runargs.open_run`)."""
    prefix = common.check_name(request.name) if request.name else ""
    planned: List[Planned] = []
    seen: Dict[object, str] = {}
    try:
        for arg in request.devices:
            is_file = split_target(arg) is None and not _is_block(arg)
            one = dataclasses.replace(request, devices=(arg,), name=None, outdir=None)
            # --size is for the file targets among them
            dev, name, _, _, _, side = open_run(one, arg, request.size if is_file else None)
            planned.append(Planned(arg, dev, request.options, name, is_file, side))
            ident = _identity(dev, side)
            if ident in seen:
                raise UsageError(f"{arg} and {seen[ident]} are the same target: give each target once")
            seen[ident] = arg
    except BaseException:
        close_sides(planned)
        raise
    counts = Counter(p.name for p in planned)
    for p in planned:
        own = common.default_name(dataclasses.replace(p.dev, kind="file"))  # nvme1n1, sdb, x.img
        if counts[p.name] > 1 and own != p.name:
            p.name = f"{p.name}-{own}"
    used: set = set()
    for p in planned:
        base = (f"{prefix}-{p.name}" if prefix else p.name)[:120]  # room for "-N" within 128
        name, n = base, 2
        while name in used:
            name, n = f"{base}-{n}", n + 1
        used.add(name)
        p.name = common.check_name(name)
    return planned


def close_sides(planned: Sequence[Planned]) -> None:
    for p in planned:
        p.side.close()


def check_fio_servers(remote: RemoteSettings, planned: Sequence[Planned]) -> None:
    """Every test host's fio server answers with this host's fio (RemoteError
    refuses the whole command); each host once, before any run starts."""
    seen = set()
    for p in planned:
        if p.side.host and fio_host(p.side.host) not in seen:
            seen.add(fio_host(p.side.host))
            remote_cli.backend(p.side, fio_settings(p.dev, p.opts), ".", remote)
