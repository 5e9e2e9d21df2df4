"""Whether a result and a baseline can be compared, before any figure is:
the same tests with the same block sizes and mixes, the same device class
and capacities within a factor (:func:`not_comparable`); the same drive,
where both files name one (:func:`other_drive`, :func:`drive_text`); and
what the emulated SSD's host facts say of the result's night
(:func:`host_warnings`).  ``tkperf check`` asks these first; the figures'
verdicts are :mod:`tkperf.verdict.regression`'s (docs/check.rst)."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

from tkperf.model.results import DeviceInfo, RunResult, format_gb
from tkperf.model.shown import cut
from tkperf.simdrive import hostlimit

#: Capacities further apart than this factor are not comparable.
MAX_CAPACITY_RATIO = 2.0
#: Parameters of a test that must match (block sizes and R/W mixes).
MATCHED_PARAMS = ("block_size", "block_sizes", "mixes")


def not_comparable(result: RunResult, baseline: RunResult) -> List[str]:
    """Why the two runs cannot be compared (empty when they can)."""
    keys, base_keys = [t.key for t in result.tests], [t.key for t in baseline.tests]
    mine, theirs = set(keys), set(base_keys)
    common = [k for k in keys if k in theirs]
    if not common:
        return [f"no test in common (result: {_names(keys)}; baseline: {_names(base_keys)})"]
    reasons = []
    if mine != theirs:
        reasons.append(f"different tests (only in result: {_names([k for k in keys if k not in theirs])}; "
                       f"only in baseline: {_names([k for k in base_keys if k not in mine])})")
    reasons += _param_differences(result, baseline, common)
    reasons += _device_differences(result, baseline)
    return reasons


def by_key(run: RunResult) -> dict:
    """Each test by its key (the first of a key, as :meth:`RunResult.test` finds it)."""
    out: dict = {}
    for t in run.tests:
        out.setdefault(t.key, t)
    return out


#: The most test keys a reason names (the rest are counted).
SHOWN_KEYS = 20


def _names(keys: Sequence[str]) -> str:
    shown = ",".join(cut(k, 200) for k in keys[:SHOWN_KEYS])
    return (shown + (f" and {len(keys) - SHOWN_KEYS:,} more" if len(keys) > SHOWN_KEYS else "")) or "none"


def _param_differences(result: RunResult, baseline: RunResult, common: Sequence[str]) -> List[str]:
    out = []
    tests, base_tests = by_key(result), by_key(baseline)
    for key in common:
        mine, theirs = tests[key].params, base_tests[key].params
        for name in MATCHED_PARAMS:
            if mine.get(name, "") != theirs.get(name, ""):
                out.append(f"{cut(key, 200)}: different {name.replace('_', ' ')} "
                           f"({cut(mine.get(name, '-'), 200)} vs baseline {cut(theirs.get(name, '-'), 200)})")
    return out


def _device_differences(result: RunResult, baseline: RunResult) -> List[str]:
    out = []
    cls, base_cls = result.options.get("device_class", ""), baseline.options.get("device_class", "")
    if cls != base_cls:
        out.append(f"different device class ({cls or '-'} vs baseline {base_cls or '-'})")
    size, base_size = result.device.size_bytes, baseline.device.size_bytes
    if min(size, base_size) > 0 and max(size, base_size) > MAX_CAPACITY_RATIO * min(size, base_size):
        out.append(f"capacities more than {MAX_CAPACITY_RATIO:g}x apart "
                   f"({format_gb(size)} vs baseline {format_gb(base_size)})")
    return out


#: The device fields that name a drive: two runs whose values differ where both
#: recorded one were measured on different drives (a loop device's backing
#: file and the path are not among them: a drive made anew each night, or a
#: by-id link, keeps its name).
IDENTITY_FIELDS = ("model", "serial", "wwn", "eui64", "nguid")


def drive_text(run: RunResult) -> str:
    """The drive as a person names it: 'VENDOR MODEL serial S' (its path when it has no name)."""
    d = run.device
    name = " ".join(cut(v.strip(), 80) for v in (d.vendor, d.model) if v.strip())
    serial = f"serial {cut(d.serial.strip(), 80)}" if d.serial.strip() else ""
    wwn = f"WWN {cut(d.wwn, 80)}" if d.wwn and not serial else ""
    return " ".join(p for p in (name, serial, wwn) if p) or f"{cut(d.path, 200)} (no model or serial recorded)"


#: The model tkperf records for a loop device ('loop device over FILE'): the
#: file is made anew as often as not, so only 'loop device' names the drive.
LOOP_MODEL = "loop device"


def _identity(device: DeviceInfo, name: str) -> str:
    value = getattr(device, name).strip()
    return LOOP_MODEL if name == "model" and value.startswith(LOOP_MODEL + " ") else value


def other_drive(result: RunResult, baseline: RunResult) -> List[str]:
    """The identity fields in which the two runs' drives differ (both recorded, not equal)."""
    out = []
    for name in IDENTITY_FIELDS:
        mine, theirs = _identity(result.device, name), _identity(baseline.device, name)
        if mine and theirs and mine != theirs:
            out.append(name)
    return out


#: How far (in share points) the result's idle share may lie above every
#: baseline's before the check says the host may have limited the night.
IDLE_MARGIN = 0.02


def _host_share(run: RunResult, key: str) -> Optional[float]:
    doc = run.facts.get(hostlimit.FACT) if isinstance(run.facts, dict) else None
    value = doc.get(key) if isinstance(doc, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def host_warnings(result: RunResult, baselines: Sequence[RunResult]) -> List[str]:
    """What the emulated SSD's host facts (``simdrive_host``) say of the
    result's night: the caveat of late replies, and an idle share above
    every baseline's (fio kept the drive less busy: a loaded host starves
    the figures the host path sets, as QD 8 reads or WSAT's first interval,
    while the drive is unchanged).  Either makes the night host-limited
    (:func:`host_limited`)."""
    out = []
    late = hostlimit.caveat(result.facts.get(hostlimit.FACT) if isinstance(result.facts, dict) else None)
    if late:
        out.append(f"result: {late}")
    idle = _host_share(result, "idle_share")
    theirs = [v for v in (_host_share(b, "idle_share") for b in baselines) if v is not None]
    if idle is not None and theirs and idle > max(theirs) + IDLE_MARGIN:
        out.append(f"host-limited night: the emulated SSD was idle {idle:.0%} of the result's run, against "
                   f"{min(theirs):.0%}-{max(theirs):.0%} in the baselines: fio kept it less busy (a loaded "
                   f"host), so the figures the host path sets moved with the host, not the drive")
    return out


def host_limited(result: RunResult, baselines: Sequence[RunResult]) -> bool:
    """Whether the host limited the result's night (:func:`host_warnings`
    has something to say): then the figures the host path sets
    (:func:`host_path`) are left out of the verdict."""
    return bool(host_warnings(result, baselines))


#: The figures the host path sets on tkperf's emulated SSD, by test type:
#: the 4k reads and the 65:35 mix at the IOPS test's queue depth, whose
#: service is short enough that fio's submission and the block device's
#: round trip set the rate, and WSAT's first interval, the fresh drive's
#: burst, which takes writes as fast as the host sends them.  Over 23
#: identical nights they spread 8.7%, 5.8% and 15.3% night to night (the
#: reads' correlation with the host's load -0.56, the mix's -0.45), against
#: 0.2% for TP and 1.9% for the 4k writes, which the drive's flash sets.
HOST_PATH_FIGURES = {"iops": ("rnd_4k_read_iops", "rnd_4k_mixed_iops"), "wsat": ("first_interval_iops",)}


def host_path(test_type: str, figure: str) -> bool:
    """Whether the host path, not the drive, sets the figure on a host-limited night."""
    return figure in HOST_PATH_FIGURES.get(test_type, ())
