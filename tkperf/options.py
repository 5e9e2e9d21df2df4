"""Run options: parsing of sizes, mixes and durations, the profiles, validation.

Everything a run does is decided here before the device is touched, and
every option is stored in the result file as text so a report can disclose
it and ``--resume`` can check it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Dict, Mapping, Sequence, Tuple

from tkperf.errors import TargetError, UsageError
from tkperf.results import TEST_NAMES, format_bs, mix_label

IOPS_BS: Tuple[int, ...] = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8192, 4096, 512)
IOPS_MIXES: Tuple[int, ...] = (100, 95, 65, 50, 35, 5, 0)
LAT_BS: Tuple[int, ...] = (8192, 4096, 512)
LAT_MIXES: Tuple[int, ...] = (100, 65, 0)
TP_BS = {"enterprise": (1024 * 1024, 128 * 1024), "client": (1024 * 1024,)}
OIO = {"enterprise": (4, 32), "client": (2, 16)}

MAX_NUMJOBS = 256
MAX_IODEPTH = 4096
MAX_RUNTIME = 24 * 3600
MAX_ROUNDS = 1000

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


def parse_mix(text: str) -> int:
    """'65/35' (read/write) or '65' (read share) -> read percentage."""
    t = text.strip()
    m = re.fullmatch(r"(\d{1,3})\s*(?:/\s*(\d{1,3}))?", t)
    if not m:
        raise UsageError(f"R/W mix {t!r} is not like 65/35 (read/write percent)")
    read = int(m.group(1))
    if read > 100 or (m.group(2) is not None and read + int(m.group(2)) != 100):
        raise UsageError(f"R/W mix {t!r} does not add up to 100")
    return read


def parse_mixes(text: str) -> Tuple[int, ...]:
    out = []
    for part in (text or "").split(","):
        mix = parse_mix(part)
        if mix not in out:
            out.append(mix)
    return tuple(out)


def parse_duration(text: str, what: str = "duration") -> int:
    """'3600', '90s', '30m', '24h', '2d' -> seconds."""
    m = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", (text or "").lower())
    if not m:
        raise UsageError(f"{what} {text!r} is not a duration like 60, 90s, 30m or 24h")
    value = int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if value <= 0:
        raise UsageError(f"{what} {text!r} must be longer than 0")
    return value


def parse_tgbw(text: str) -> str:
    """'4x' (drive fills) or a GB figure ('800', '1.5') -> normalised text."""
    t = (text or "").strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?x", t) and float(t[:-1]) > 0:
        return t
    if re.fullmatch(r"\d+(\.\d+)?", t) and float(t) > 0:
        return t
    raise UsageError(f"--wsat-tgbw {text!r} is not a GB figure (e.g. 800) or drive fills (e.g. 4x)")


def tgbw_bytes(tgbw: str, capacity: int) -> int:
    if tgbw.endswith("x"):
        return int(float(tgbw[:-1]) * capacity)
    return int(float(tgbw) * 1e9)


REPORT_FORMATS: Tuple[str, ...] = ("rst", "html", "pdf")


def parse_report_formats(formats: "str | Sequence[str]") -> Tuple[str, ...]:
    """'rst,html' or ['rst', 'html'] -> ('rst', 'html'), in the order given, once each."""
    parts = formats.split(",") if isinstance(formats, str) else list(formats)
    out = []
    for part in parts:
        f = part.strip().lower()
        if f not in REPORT_FORMATS:
            raise UsageError(f"unknown report format {part.strip()!r}; choose from {', '.join(REPORT_FORMATS)}")
        if f not in out:
            out.append(f)
    if not out:
        raise UsageError("no report format chosen")
    return tuple(out)


def parse_tests(text: str) -> Tuple[str, ...]:
    names = []
    for part in (text or "").split(","):
        name = part.strip().lower()
        if name not in TEST_NAMES:
            raise UsageError(f"unknown test {part.strip()!r}; choose from {', '.join(TEST_NAMES)}")
        if name not in names:
            names.append(name)
    return tuple(n for n in TEST_NAMES if n in names)


def _int_in(value: int, lo: int, hi: int, what: str) -> int:
    if not lo <= value <= hi:
        raise UsageError(f"{what} {value} is out of range ({lo}..{hi})")
    return value


@dataclass(frozen=True)
class RunOptions:
    """Every setting of a run; ``to_dict``/``from_dict`` for the result file."""

    tests: Tuple[str, ...] = TEST_NAMES
    device_class: str = "enterprise"
    runtime: int = 60
    numjobs: int = 4
    iodepth: int = 32
    max_rounds: int = 25
    window: int = 5
    refill_buffers: bool = False
    iops_bs: Tuple[int, ...] = IOPS_BS
    iops_mixes: Tuple[int, ...] = IOPS_MIXES
    tp_bs: Tuple[int, ...] = TP_BS["enterprise"]
    lat_bs: Tuple[int, ...] = LAT_BS
    lat_mixes: Tuple[int, ...] = LAT_MIXES
    wsat_time: int = 24 * 3600
    wsat_tgbw: str = "4x"
    wsat_interval: int = 60
    wsat_steady: bool = True
    purge: str = "auto"
    wipc_loops: int = 2
    quick: bool = False

    def __post_init__(self) -> None:
        _int_in(self.runtime, 1, MAX_RUNTIME, "--runtime")
        _int_in(self.numjobs, 1, MAX_NUMJOBS, "--numjobs")
        _int_in(self.iodepth, 1, MAX_IODEPTH, "--iodepth")
        _int_in(self.max_rounds, 1, MAX_ROUNDS, "--max-rounds")
        _int_in(self.wipc_loops, 0, 100, "--wipc-loops")
        _int_in(self.wsat_interval, 1, 3600, "--wsat-interval")
        _int_in(self.wsat_time, 1, 366 * 86400, "--wsat-time")
        if not self.tests:
            raise UsageError("no tests chosen")
        if self.device_class not in OIO:
            raise UsageError(f"unknown device class {self.device_class!r}; choose enterprise or client")
        for name in ("iops_bs", "iops_mixes", "tp_bs", "lat_bs", "lat_mixes"):
            if not getattr(self, name):
                raise UsageError(f"--{name.replace('_', '-')} is empty")

    def to_dict(self) -> Dict[str, str]:
        out = {}
        for key, value in asdict(self).items():
            if key in ("iops_bs", "tp_bs", "lat_bs"):
                out[key] = ",".join(format_bs(v) for v in value)
            elif key in ("iops_mixes", "lat_mixes"):
                out[key] = ",".join(mix_label(v) for v in value)
            elif key == "tests":
                out[key] = ",".join(value)
            elif isinstance(value, bool):
                out[key] = "true" if value else "false"
            else:
                out[key] = str(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> "RunOptions":
        kwargs: Dict[str, object] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            text = data[f.name]
            if f.name in ("iops_bs", "tp_bs", "lat_bs"):
                kwargs[f.name] = parse_block_sizes(text, f.name)
            elif f.name in ("iops_mixes", "lat_mixes"):
                kwargs[f.name] = parse_mixes(text)
            elif f.name == "tests":
                kwargs[f.name] = parse_tests(text)
            elif f.type in ("bool", bool):
                kwargs[f.name] = text == "true"
            elif f.type in ("int", int):
                kwargs[f.name] = int(text)
            else:
                kwargs[f.name] = text
        return cls(**kwargs)

    def tgbw_bytes(self, capacity: int) -> int:
        return tgbw_bytes(self.wsat_tgbw, capacity)


QUICK = dict(runtime=1, max_rounds=5, iops_bs=(128 * 1024, 4096), iops_mixes=(100, 65, 0),
             tp_bs=(1024 * 1024,), lat_bs=(4096,), lat_mixes=(100, 0), wsat_time=8,
             wsat_interval=1, numjobs=1, iodepth=8, quick=True)


def build(overrides: Mapping[str, object], quick: bool = False, device_class: str = "enterprise") -> RunOptions:
    """Defaults, then the class's OIO and TP sizes, then --quick, then what the user gave."""
    if device_class not in OIO:
        raise UsageError(f"unknown device class {device_class!r}; choose enterprise or client")
    numjobs, iodepth = OIO[device_class]
    base: Dict[str, object] = dict(device_class=device_class, numjobs=numjobs, iodepth=iodepth,
                                   tp_bs=TP_BS[device_class])
    if quick:
        base.update(QUICK)
    base.update({k: v for k, v in overrides.items() if v is not None})
    return RunOptions(**base)  # type: ignore[arg-type]


def check_fits(opts: RunOptions, capacity: int) -> None:
    """The largest I/O the run issues must fit the target many times over."""
    largest = max(opts.iops_bs + opts.tp_bs + opts.lat_bs + (128 * 1024,))
    needed = largest * max(opts.numjobs, 1) * 16
    if capacity < needed:
        raise TargetError(f"the target's {capacity} bytes are too small for block size "
                         f"{format_bs(largest)} with {opts.numjobs} jobs (needs {needed} bytes)")


def differences(a: Mapping[str, str], b: Mapping[str, str]) -> Dict[str, Tuple[str, str]]:
    """Options that differ between two runs: name -> (a's value, b's value)."""
    out = {}
    for key in sorted(set(a) | set(b)):
        if a.get(key, "") != b.get(key, ""):
            out[key] = (a.get(key, ""), b.get(key, ""))
    return out


