"""Values of run options as the command line gives them: sizes, block
sizes, read/write mixes, queue depths and durations, parsed and written
back (:mod:`tkperf.kit.options` uses them and re-exports them)."""
from __future__ import annotations

import re
from typing import Callable, List, Sequence, Tuple

from tkperf import durations
from tkperf.errors import UsageError
from tkperf.model.results import format_bs, mix_label

MAX_IODEPTH = 4096

_UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "kb": 1024, "m": 1024 ** 2, "mib": 1024 ** 2,
          "mb": 1024 ** 2, "g": 1024 ** 3, "gib": 1024 ** 3, "gb": 1024 ** 3,
          "t": 1024 ** 4, "tib": 1024 ** 4, "tb": 1024 ** 4}


def parse_size(text: str, what: str = "size") -> int:
    """'4k', '1024K', '512', '1m', '10G' -> bytes (binary units, as fio reads them)."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text or "")
    if not m or m.group(2).lower() not in _UNITS:
        raise UsageError(f"{what} {text!r} is not a size like 512, 4k, 1m or 10g")
    value = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if value <= 0:
        raise UsageError(f"{what} {text!r} must be larger than 0")
    return value


def parse_block_sizes(text: str, what: str) -> Tuple[int, ...]:
    sizes = []
    for part in (text or "").split(","):
        size = parse_size(part, f"{what} block size")
        if size % 512:
            raise UsageError(f"{what} block size {part.strip()!r} is not a multiple of 512 bytes")
        if size > 64 * 1024 * 1024:
            raise UsageError(f"{what} block size {part.strip()!r} is larger than 64m")
        if size not in sizes:
            sizes.append(size)
    return tuple(sizes)


def parse_mix(text: str, flag: str = "") -> int:
    """'65/35' (read/write) or '65' (read share) -> read percentage; an
    Option's parse as it is (its UsageError then names ``flag``)."""
    t = text.strip()
    m = re.fullmatch(r"(\d{1,3})\s*(?:/\s*(\d{1,3}))?", t)
    said = f"{flag}: " if flag else ""
    if not m:
        raise UsageError(f"{said}R/W mix {t!r} is not like 65/35 (read/write percent)")
    read = int(m.group(1))
    if read > 100 or (m.group(2) is not None and read + int(m.group(2)) != 100):
        raise UsageError(f"{said}R/W mix {t!r} does not add up to 100")
    return read


def parse_mixes(text: str, flag: str = "") -> Tuple[int, ...]:
    out = []  # an Option's parse: ``flag`` is not needed in the messages
    for part in (text or "").split(","):
        mix = parse_mix(part)
        if mix not in out:
            out.append(mix)
    return tuple(out)


def nonempty(flag: str) -> Callable[[Sequence[object]], None]:
    """An option check: the list given is not empty (the error names ``flag``)."""
    def check(value: Sequence[object]) -> None:
        if not value:
            raise UsageError(f"{flag} is empty")
    return check


def format_block_sizes(sizes: Sequence[int]) -> str:
    """(4096, 131072) -> '4k,128k': what :func:`parse_block_sizes` reads back."""
    return ",".join(format_bs(b) for b in sizes)


def format_mixes(mixes: Sequence[int]) -> str:
    """(65, 100) -> '65/35,100/0': what :func:`parse_mixes` reads back."""
    return ",".join(mix_label(m) for m in mixes)


def parse_depths(text: str, flag: str) -> Tuple[int, ...]:
    """'1,2,4,32' -> (1, 2, 4, 32): queue depths in the order given, each once."""
    out: List[int] = []
    for part in (text or "").split(","):
        p = part.strip()
        if not p:
            continue
        if not p.isdigit() or not 1 <= int(p) <= MAX_IODEPTH:
            raise UsageError(f"{flag} {p!r} is not a queue depth from 1 to {MAX_IODEPTH}")
        if int(p) not in out:
            out.append(int(p))
    check_depths(tuple(out), flag)
    return tuple(out)


def check_depths(depths: Sequence[int], flag: str) -> None:
    """An option check: at least one queue depth, each from 1 to MAX_IODEPTH."""
    if not depths:
        raise UsageError(f"{flag} names no queue depth (give e.g. 1,2,4,8)")
    for d in depths:
        if not 1 <= d <= MAX_IODEPTH:
            raise UsageError(f"{flag} {d} is not a queue depth from 1 to {MAX_IODEPTH}")


def format_depths(depths: Sequence[int]) -> str:
    """(1, 2, 4) -> '1,2,4': what :func:`parse_depths` reads back."""
    return ",".join(str(d) for d in depths)


def parse_duration(text: str, what: str = "duration") -> int:
    """'3600', '90s', '30m', '1h30m', '1.5h', '2d' -> seconds (:func:`tkperf.durations.parse`)."""
    return durations.parse(text, what)


def parse_auto_duration(text: str, flag: str) -> int:
    """'auto' -> 0 (the test works the value out), else a duration in seconds."""
    return 0 if (text or "").strip().lower() == "auto" else parse_duration(text, flag)


def format_auto_duration(value: int) -> str:
    """What :func:`parse_auto_duration` reads back: 0 -> 'auto'."""
    return "auto" if value == 0 else str(value)


#: ``--data-pattern`` words; ``compressible:PCT`` takes a percentage.
