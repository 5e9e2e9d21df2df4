"""The device an original TKperf file describes: model, serial, firmware,
vendor, write cache and, above all, the capacity, from the ``devinfo``
text TKperf kept (its filtered hdparm, sginfo/sg_readcap, nvme id-ctrl or
udevadm lines, or the text of a description file given with ``-dsc``).

The capacity comes from the file where it can be known: a size in bytes,
hdparm's whole-MB line or its LBA48 sector count, or the capacity a
description file states (the nominal one, in the units it gives).  A file
that holds none takes the capacity the user gives (``--capacity`` of
``show``, ``report``, ``import``, ``compare`` and ``check``, set for the
command by :func:`given_capacity`); without one the capacity is unknown
(size 0): the file is read and every figure that needs the capacity says so.
"""
from __future__ import annotations

import contextlib
import re
from contextvars import ContextVar
from typing import Dict, Iterator, Optional, Tuple

from tkperf.errors import UsageError

#: The smallest capacity a description may state (below it, a 'size' line is something else).
MIN_NOMINAL = 10 ** 6

_FIELDS = (  # (field, pattern) over devinfo lines; the first match of a field wins
    ("model", r"Model Number:\s*(.*)"), ("serial", r"Serial Number:\s*(.*)"),
    ("firmware", r"Firmware Revision:\s*(.*)"), ("mb", r"device size with M = 1000\*1000:\s*(\d+)\s*MBytes"),
    ("cache", r"write-caching\s*=\s*([01])\b"),
    ("vendor", r"(?:E:\s*)?ID_VENDOR=(.*)"), ("model", r"(?:E:\s*)?ID_MODEL=(.*)"),
    ("serial", r"(?:E:\s*)?ID_SERIAL_SHORT=(.*)"), ("bytes", r"Device Size \(bytes\):\s*(\d+)"),
    ("vendor", r"Vendor:\s*(.*)"), ("model", r"Product:\s*(.*)"), ("firmware", r"Revision Level:\s*(.*)"),
    ("serial", r"Serial Number\s+'?([^']*)'?"), ("cache", r"Write Cache Enabled\s+([01])\b"),
    ("bytes", r"Device size:\s*(\d+)\s*bytes"),
    ("model", r"mn\s*:\s*(.*)"), ("serial", r"sn\s*:\s*(.*)"), ("firmware", r"fr\s*:\s*(.*)"),
    ("bytes", r"tnvmcap\s*:\s*(\d+)\s*$"), ("transport", r"Device Interface:\s*(\S+)"),
    # a description file (-dsc) holds what its author wrote: smartctl's lines, hdparm's
    # sector count, or a capacity in words (the drive's nominal size)
    ("bytes", r"(?:User Capacity|Total NVM Capacity|Namespace 1 Size/Capacity):\s*([\d,.']+)\s*bytes?\b"),
    ("sectors", r"LBA48\s+user addressable sectors:\s*(\d+)"),
    ("sector", r"Logical\s+Sector size:\s*(\d+)\s*bytes"),
    ("nominal", r"(?i)(?:capacity|user capacity|size|disk size|drive size)\s*[:=]\s*"
                r"([\d.,]+\s*(?:[kmgtp]i?b?|bytes?)\b.*)"),
)
#: Units a description file may give a capacity in (decimal, as drives are sold; KiB .. binary).
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "k": 10 ** 3, "kb": 10 ** 3, "m": 10 ** 6, "mb": 10 ** 6,
          "g": 10 ** 9, "gb": 10 ** 9, "t": 10 ** 12, "tb": 10 ** 12, "p": 10 ** 15, "pb": 10 ** 15,
          "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40, "pib": 2 ** 50}


def device_facts(devinfo: str) -> Dict[str, str]:
    """Model, serial, firmware, vendor, capacity and write cache from the
    device text TKperf kept (its filtered hdparm, sginfo/sg_readcap, nvme
    id-ctrl or udevadm lines; a description file rarely matches)."""
    out: Dict[str, str] = {}
    for raw in devinfo.splitlines():
        line = raw.strip()
        for name, pattern in _FIELDS:
            m = re.match(pattern, line)
            if m and m.group(1).strip() and name not in out:
                out[name] = m.group(1).strip()
                break
    return out


def _nominal(text: str) -> int:
    """Bytes of '480 GB', '1.6TB', '1,920 GB' or '500107862016 bytes' (0: not a capacity)."""
    m = re.match(r"([\d.,]+)\s*([a-z]+)", text.strip().lower())
    if not m or m.group(2) not in _UNITS:
        return 0
    number = m.group(1).replace(",", "")
    try:
        value = float(number)
    except ValueError:
        return 0
    return int(round(value * _UNITS[m.group(2)])) if MIN_NOMINAL <= value * _UNITS[m.group(2)] < 1e18 else 0


#: Where the capacity came from when nothing says it: the figures that need it are unknown.
UNKNOWN = ("unknown: the original TKperf file does not record it (no size line in its <devinfo>), so the "
           "figures that need it are shown as unknown; give it with --capacity SIZE (e.g. --capacity 480g)")


def capacity(facts: Dict[str, str], source: str, given: Optional[int] = None) -> Tuple[int, str]:
    """(bytes, where the figure came from): what the file holds, else ``given``
    (``--capacity``); else (0, :data:`UNKNOWN`)."""
    digits = re.sub(r"[,.']", "", facts.get("bytes", ""))
    if digits.isdigit() and int(digits) > 0:
        return int(digits), "devinfo, in bytes"
    if "mb" in facts and int(facts["mb"]) > 0:
        return int(facts["mb"]) * 1000 * 1000, "devinfo: hdparm's 'device size with M = 1000*1000' (whole MB)"
    if "sectors" in facts and int(facts["sectors"]) > 0:
        sector = int(facts.get("sector") or 512)
        return int(facts["sectors"]) * sector, f"devinfo: hdparm's LBA48 sector count x {sector} bytes"
    nominal = _nominal(facts.get("nominal", ""))
    if nominal > 0:
        return nominal, f"devinfo: the description's '{facts['nominal'][:40]}' (the nominal capacity)"
    if given:
        return given, "--capacity (the file does not record it)"
    return 0, UNKNOWN



#: The capacity the user gave (``--capacity``) for files that do not record one;
#: set for one command by :func:`given_capacity`.
_GIVEN: ContextVar[Optional[int]] = ContextVar("tkperf2_capacity", default=None)


@contextlib.contextmanager
def given_capacity(size: Optional[int]) -> Iterator[None]:
    """Within the block, original TKperf files without a capacity take ``size`` bytes."""
    token = _GIVEN.set(size)
    try:
        yield
    finally:
        _GIVEN.reset(token)


def parse_capacity(text: str, what: str = "--capacity") -> int:
    """Bytes of a capacity as a user gives it: '480g', '1.6t', '960197124096';
    k, m, g, t, p are decimal, as drives are sold; kib .. pib binary."""
    size = _nominal(text if re.search(r"[a-zA-Z]", text or "") else f"{text} bytes")
    if size <= 0:
        raise UsageError(f"{what} {text!r} is not a capacity like 480g, 1.6t or 960197124096 "
                         "(at least 1 MB)")
    return size
