"""Drive health before and after a run: SMART / NVMe smart-log snapshots,
what changed in between, and the drive's temperature during the run.

A snapshot is the drive's counters under tkperf's names (:data:`UNITS`), from
``nvme smart-log`` and ``nvme id-ctrl`` (thresholds) on NVMe, else ``smartctl
-j -a``.  Loop devices and file targets have none; a missing tool or a failing
query is logged, never raised.  docs/health.rst says what is read, in which units.
"""
from __future__ import annotations

import json
import logging
import re
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import TkperfError, ToolError
from tkperf.model.results import DeviceInfo, HealthSnapshot, now_iso
from tkperf.target.writecache import transport_kind, unreachable

log = logging.getLogger("tkperf")

Values = Tuple[Tuple[str, float], ...]
#: Reads a device's health: (source, values), or None when it reports nothing.
Reader = Callable[[DeviceInfo], Optional[Tuple[str, Values]]]

#: tkperf's names in report order, with their units.  ``*_unit_bytes`` is the
#: resolution of the matching byte counter (NVMe data units: 512,000 bytes).
UNITS: Dict[str, str] = {
    "host_written_bytes": "bytes", "media_written_bytes": "bytes", "host_read_bytes": "bytes",
    "host_program_pages": "pages", "ftl_program_pages": "pages", "media_errors": "", "error_log_entries": "",
    "critical_warning": "", "smart_failed": "", "percentage_used": "%", "available_spare": "%",
    "temperature_c": "°C", "temp_warning_c": "°C", "temp_critical_c": "°C", "warning_temp_minutes": "min",
    "critical_temp_minutes": "min", "thermal_throttle_events": "", "thermal_throttle_seconds": "s",
    "power_on_hours": "h", "unsafe_shutdowns": "", "host_written_unit_bytes": "bytes",
    "media_written_unit_bytes": "bytes"}
#: Counters whose change during the run :func:`deltas` reports.
COUNTERS: Tuple[str, ...] = tuple(n for n in UNITS if n not in (
    "critical_warning", "smart_failed", "temperature_c", "temp_warning_c", "temp_critical_c",
    "host_written_unit_bytes", "media_written_unit_bytes"))
#: What a temperature sample keeps.
HEAT_NAMES: Tuple[str, ...] = ("temperature_c", "warning_temp_minutes", "critical_temp_minutes",
                               "thermal_throttle_events", "thermal_throttle_seconds", "critical_warning")
NVME_DATA_UNIT = 512_000  # the spec: thousands of 512-byte units, rounded up
KELVIN = 273  # nvme-cli's own conversion
TOOL_TIMEOUT_S = 30.0
SAMPLE_EVERY_S = 60.0
MAX_FAILED_SAMPLES = 3


# --- numbers as the tools print them ----------------------------------------

def number(value: object) -> Optional[float]:
    """A number from tool JSON: an int, a float, ``{"value": n}``, or a string,
    also with thousands separators (nvme-cli 2.3 prints 128-bit values as strings)."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, dict) and "value" in value:
        return number(value["value"])
    if isinstance(value, str):
        m = re.match(r"\s*([-+]?\d[\d,'\s\u202f_]*(?:\.\d+)?)", value)
        if m:
            return float(re.sub(r"[,'\s\u202f_]", "", m.group(1)))
    return None


def _kelvin(value: object) -> Optional[float]:
    """°C from nvme-cli's temperature: Kelvin as a number, or a string with its unit."""
    t = number(value)
    if t is None or t <= 0:
        return None
    if isinstance(value, str) and re.search(r"\d\s*°?\s*C\b", value):
        return t
    return t - KELVIN


def _load(text: str, what: str) -> dict:
    data = json.loads(text)  # a JSONDecodeError is a ValueError saying where
    if not isinstance(data, dict):
        raise ValueError(f"{what}: not a JSON object")
    return data


def _ordered(found: Mapping[str, float]) -> Values:
    return tuple((name, float(found[name])) for name in UNITS if name in found)


def _obj(data: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _put(out: Dict[str, float], name: str, value: Optional[float]) -> None:
    if value is not None and name not in out:
        out[name] = value


# --- NVMe ----------------------------------------------------------------------

#: (tkperf name, key): nvme-cli's key and smartctl's where they differ.
_NVME_KEYS = (("percentage_used", "percent_used"), ("percentage_used", "percentage_used"),
              ("available_spare", "avail_spare"), ("available_spare", "available_spare"),
              ("critical_warning", "critical_warning"), ("media_errors", "media_errors"),
              ("error_log_entries", "num_err_log_entries"), ("warning_temp_minutes", "warning_temp_time"),
              ("critical_temp_minutes", "critical_comp_time"), ("power_on_hours", "power_on_hours"),
              ("unsafe_shutdowns", "unsafe_shutdowns"))


def _nvme_log(data: Mapping[str, object], celsius: bool) -> Dict[str, float]:
    """The SMART / Health log as nvme-cli (Kelvin) or smartctl (°C) names it."""
    out: Dict[str, float] = {}
    for key, name in (("data_units_written", "host_written_bytes"), ("data_units_read", "host_read_bytes")):
        units = number(data.get(key))
        if units is not None:
            out[name] = units * NVME_DATA_UNIT
    if "host_written_bytes" in out:
        out["host_written_unit_bytes"] = NVME_DATA_UNIT
    temp = data.get("temperature")
    _put(out, "temperature_c", number(temp) if celsius else _kelvin(temp))
    for name, key in _NVME_KEYS:
        _put(out, name, number(data.get(key)))
    for name, keys in (("thermal_throttle_events", ("thm_temp1_trans_count", "thm_temp2_trans_count")),
                       ("thermal_throttle_seconds", ("thm_temp1_total_time", "thm_temp2_total_time"))):
        counts = [number(data.get(k)) for k in keys if k in data]
        if counts and None not in counts:
            out[name] = sum(counts)  # type: ignore[arg-type]
    return out


def from_nvme_smart_log(json_text: str) -> Values:
    """Values from ``nvme smart-log DEV -o json`` (nvme-cli 1.x and 2.x)."""
    return _ordered(_nvme_log(_load(json_text, "nvme smart-log"), celsius=False))


def from_nvme_id_ctrl(json_text: str) -> Values:
    """The temperature thresholds of ``nvme id-ctrl DEV -o json``: WCTEMP and
    CCTEMP (Kelvin; 0 means not reported)."""
    data = _load(json_text, "nvme id-ctrl")
    out: Dict[str, float] = {}
    _put(out, "temp_warning_c", _kelvin(data.get("wctemp")))
    _put(out, "temp_critical_c", _kelvin(data.get("cctemp")))
    return _ordered(out)


# --- smartctl ------------------------------------------------------------------

_UNIT_BYTES = {"gib": 2**30, "mib": 2**20, "kib": 2**10, "gb": 1e9, "mb": 1e6}
_HOST_WRITES = re.compile(r"^(Total_LBAs_Written|(Total_)?(Host|Lifetime)_Writes(_\w+)?|Total_Writes_\w+)$", re.I)
_HOST_READS = re.compile(r"^(Total_LBAs_Read|(Total_)?(Host|Lifetime)_Reads(_\w+)?|Total_Reads_\w+)$", re.I)
_MEDIA = re.compile(r"(NAND|Flash|TLC|SLC|MLC)", re.I)
_ERRORS = ("Reported_Uncorrect", "Uncorrectable_Error_Cnt")
_UNSAFE = ("Unsafe_Shutdown_Count", "Unexpect_Power_Loss_Ct", "POR_Recovery_Count")
#: Wear attributes whose normalized value counts down from 100 (percent left).
_WEAR = ("Percent_Lifetime_Remain", "SSD_Life_Left", "Remaining_Lifetime_Perc", "Media_Wearout_Indicator",
         "Wear_Leveling_Count")


def attribute_unit(name: str, block: float) -> Optional[float]:
    """Bytes per raw count of an ATA attribute, from the unit in its name as
    smartctl's drive database spells it (``Host_Writes_32MiB``,
    ``Flash_Writes_GiB``, ``NAND_GB_Written_TLC``); LBAs count logical blocks;
    None when the name gives no unit."""
    m = re.search(r"(?:^|_)(\d*)(GiB|MiB|KiB|GB|MB)(?=_|$)", name)
    if m:
        return int(m.group(1) or 1) * _UNIT_BYTES[m.group(2).lower()]
    return block if "LBA" in name.upper() else None


def _ata(table: Sequence[Mapping[str, object]], block: float) -> Dict[str, float]:
    by_name = {str(a.get("name", "")): a for a in table if isinstance(a, dict)}
    out = _ata_bytes(by_name, block)
    for name, attrs in (("host_program_pages", ("Host_Program_Page_Count",)), ("media_errors", _ERRORS),
                        ("ftl_program_pages", ("FTL_Program_Page_Count",)), ("unsafe_shutdowns", _UNSAFE)):
        for attr in attrs:
            if attr in by_name:
                _put(out, name, _raw(by_name[attr]))
    for attr in _WEAR:
        left = number(by_name[attr].get("value")) if attr in by_name else None
        if left is not None and 0 <= left <= 100:
            out["percentage_used"] = 100 - left
            break
    return out


def _raw(a: Mapping[str, object]) -> Optional[float]:
    return number(_obj(a, "raw").get("value"))


def _ata_bytes(by_name: Mapping[str, Mapping[str, object]], block: float) -> Dict[str, float]:
    """The bytes the host wrote and read and the media wrote, from the ATA attributes whose names give a unit."""
    out: Dict[str, float] = {}
    for role, pattern in (("host_written", _HOST_WRITES), ("host_read", _HOST_READS)):
        for n in (n for n in by_name if pattern.match(n)):  # the first in the table with a unit
            unit, count = attribute_unit(n, block), _raw(by_name[n])
            if unit is not None and count is not None:
                out[f"{role}_bytes"] = count * unit
                if role == "host_written":
                    out["host_written_unit_bytes"] = unit
                break
    media = [(u, c) for n, a in by_name.items() if _MEDIA.search(n) and "writ" in n.lower()
             for u, c in [(attribute_unit(n, block), _raw(a))] if u is not None and c is not None]
    if media:  # e.g. TLC and SLC writes reported apart: the media wrote both
        out["media_written_bytes"] = sum(u * c for u, c in media)
        out["media_written_unit_bytes"] = max(u for u, _ in media)
    return out


def _scsi(data: Mapping[str, object]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    counters = _obj(data, "scsi_error_counter_log")
    for direction, name in (("write", "host_written_bytes"), ("read", "host_read_bytes")):
        gb = number(_obj(counters, direction).get("gigabytes_processed"))
        if gb is not None:
            out[name] = gb * 1e9
    if "host_written_bytes" in out:
        out["host_written_unit_bytes"] = 1e6  # smartctl prints GB to three decimals
    errors = [number(_obj(counters, d).get("total_uncorrected_errors")) for d in ("read", "write", "verify")
              if d in counters]
    if errors and None not in errors:
        out["media_errors"] = sum(errors)  # type: ignore[arg-type]
    _put(out, "percentage_used", number(data.get("scsi_percentage_used_endurance_indicator")))
    return out


def from_smartctl(json_text: str) -> Values:
    """Values from ``smartctl -j -a DEV`` of an ATA, NVMe or SCSI drive."""
    data = _load(json_text, "smartctl -j")
    run = _obj(data, "smartctl")
    status = int(number(run.get("exit_status")) or 0)
    if status & 3:  # bit 0: bad command line, bit 1: the device could not be opened
        messages = run.get("messages")
        said = [m.get("string", "") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
        raise ValueError("smartctl: " + ("; ".join(s for s in said if s) or f"exit status {status}"))
    out = _nvme_log(_obj(data, "nvme_smart_health_information_log"), celsius=True)
    table = _obj(data, "ata_smart_attributes").get("table")
    parts = [_ata(table, number(data.get("logical_block_size")) or 512.0) if isinstance(table, list) else {},
             _scsi(data)]
    for name, value in [item for part in parts for item in part.items()]:
        _put(out, name, value)
    temp, limits = _obj(data, "temperature"), _obj(data, "nvme_composite_temperature_threshold")
    _put(out, "temperature_c", number(temp.get("current")))
    for name, box, key in (("temp_warning_c", limits, "warning"), ("temp_critical_c", limits, "critical"),
                           ("temp_warning_c", temp, "op_limit_max"), ("temp_critical_c", temp, "critical_limit_max"),
                           ("temp_critical_c", temp, "limit_max"), ("temp_critical_c", temp, "drive_trip")):
        _put(out, name, number(box.get(key)) or None)  # 0: not reported
    _put(out, "power_on_hours", number(_obj(data, "power_on_time").get("hours")))
    passed = _obj(data, "smart_status").get("passed")
    if isinstance(passed, bool):
        out["smart_failed"] = 0.0 if passed else 1.0
    return _ordered(out)


# --- reading a device ------------------------------------------------------------

def _output(argv: List[str], what: str, check: bool = True) -> str:
    # LC_ALL=C: nvme-cli groups digits by the locale (1.234.567 in de_DE)
    env = [programs.require("env"), "LC_ALL=C"]
    return programs.run(env + argv, timeout=TOOL_TIMEOUT_S, check=check, what=what).stdout


def _read_nvme(tool: str, dev: DeviceInfo, thresholds: bool) -> Values:
    found = dict(from_nvme_smart_log(_output([tool, "smart-log", dev.resolved, "-o", "json"], "nvme smart-log")))
    if thresholds:
        try:
            found.update(from_nvme_id_ctrl(_output([tool, "id-ctrl", dev.resolved, "-o", "json"], "nvme id-ctrl")))
        except (TkperfError, OSError, ValueError) as exc:
            log.info("health: no temperature thresholds of %s: %s", dev.path, exc)
    return _ordered(found)


def _read_smartctl(tool: str, dev: DeviceInfo, thresholds: bool) -> Values:
    argv = [tool, "-j", "-a"] + (["-l", "scttempsts"] if transport_kind(dev) == "ata" else []) + [dev.resolved]
    return from_smartctl(_output(argv, "smartctl", check=False))


def read_health(dev: DeviceInfo, thresholds: bool = True) -> Optional[Tuple[str, Values]]:
    """(source, values) of the drive behind ``dev``: nvme-cli for NVMe (smartctl
    when nvme-cli is missing), smartctl for ATA and SCSI; None, logged, when
    the device has no SMART data, a tool is missing or reports nothing."""
    kind = transport_kind(dev)
    if not kind:
        log.info("health: no SMART data on %s (%s)", dev.path, unreachable(dev))
        return None
    readers = ([("nvme", _read_nvme)] if kind == "nvme" else []) + [("smartctl", _read_smartctl)]
    missing = []
    for tool, reader in readers:
        try:
            path = programs.require(tool)
        except ToolError as exc:
            missing.append(str(exc))
            continue
        try:
            values = reader(path, dev, thresholds)
            problem = "" if values else "no health counters in its output"
        except (TkperfError, OSError, ValueError) as exc:
            values, problem = (), str(exc)
        if problem:
            log.warning("health: %s gave no health data for %s: %s", tool, dev.path, problem)
            return None
        return ("nvme smart-log" if tool == "nvme" else "smartctl"), values
    log.warning("health: no health snapshot of %s: %s", dev.path, "; ".join(missing))
    return None


def snapshot(dev: DeviceInfo, when: str) -> Optional[HealthSnapshot]:
    """The drive's health now (``when``: before, after); None when it reports nothing."""
    got = read_health(dev)
    return HealthSnapshot(time=now_iso(), when=when, source=got[0], values=got[1]) if got else None


# --- what changed ------------------------------------------------------------------

def deltas(before: HealthSnapshot, after: HealthSnapshot) -> Dict[str, float]:
    """The change of every counter both snapshots have, and the run's write
    amplification: media (NAND) bytes over host bytes written in between
    (``write_amplification``, with ``_low``/``_high`` bounds from the counters'
    resolution), else Micron's (host + FTL pages) / host pages."""
    out = {n: a - b for n in COUNTERS for b, a in [(before.value(n), after.value(n))]
           if a is not None and b is not None}
    host, media = out.get("host_written_bytes"), out.get("media_written_bytes")
    pages, ftl = out.get("host_program_pages"), out.get("ftl_program_pages")
    if host is not None and media is not None and host > 0:
        out["write_amplification"] = media / host
        uh, um = (max(before.value(n) or 0.0, after.value(n) or 0.0)
                  for n in ("host_written_unit_bytes", "media_written_unit_bytes"))
        if host > uh:  # each counter is off by at most one unit at each end
            out["write_amplification_low"] = max(media - um, 0.0) / (host + uh)
            out["write_amplification_high"] = (media + um) / (host - uh)
    elif pages is not None and ftl is not None and pages > 0:
        out["write_amplification"] = (pages + ftl) / pages
    return out


_GROWTH = (("throttle", "thermal_throttle_events", "the drive throttled for heat ({:.0f} thermal transitions)"),
           ("warning_time", "warning_temp_minutes", "{:.0f} min above the drive's warning temperature"),
           ("critical_time", "critical_temp_minutes", "{:.0f} min above the drive's critical temperature"))


def heat_findings(baseline: Optional[HealthSnapshot], now: HealthSnapshot,
                  thresholds: Optional[HealthSnapshot] = None) -> Dict[str, str]:
    """What the drive's heat counters say happened since ``baseline``, by kind
    (throttle, warning_time, critical_time, over_critical or over_warning,
    critical_bit); the thresholds are read from ``thresholds``, else ``baseline``."""
    out: Dict[str, str] = {}
    for kind, name, text in _GROWTH:
        a, b = now.value(name), baseline.value(name) if baseline is not None else None
        if a is not None and b is not None and a > b:
            out[kind] = text.format(a - b)
    ref, temp = thresholds or baseline, now.value("temperature_c")
    for kind, name, word in (("over_critical", "temp_critical_c", "critical"),
                             ("over_warning", "temp_warning_c", "warning")):
        limit = ref.value(name) if ref is not None else None
        if temp is not None and limit is not None and temp >= limit:
            out[kind] = f"drive temperature {temp:.0f} °C reached its {word} threshold {limit:.0f} °C"
            break
    if int(now.value("critical_warning") or 0) & 2:
        out["critical_bit"] = "the drive reports a temperature critical warning"
    return out


class HeatWatch:
    """Temperature samples during a run, at most one every ``every_s`` seconds,
    appended to ``health`` (the run's ``RunResult.health``), whose latest
    ``before`` snapshot is the baseline of the heat counters.  :meth:`sample`
    returns a warning text the first time each kind of finding shows."""

    def __init__(self, health: List[HealthSnapshot], every_s: float = SAMPLE_EVERY_S,
                 clock: Callable[[], float] = time.monotonic, read: Optional[Reader] = None) -> None:
        self.health, self.every_s, self.clock = health, every_s, clock
        self.read: Reader = read or (lambda dev: read_health(dev, thresholds=False))
        self._next = clock() + every_s
        self.warned: set = set()
        self.failures = 0  # readings in a row that gave nothing

    @property
    def active(self) -> bool:
        """False once the drive failed to answer :data:`MAX_FAILED_SAMPLES` times in a row."""
        return self.failures < MAX_FAILED_SAMPLES

    def sample(self, dev: DeviceInfo, force: bool = False) -> Optional[str]:
        """Read the drive if a sample is due (or ``force``); a warning text or None."""
        now = self.clock()
        if not self.active or (not force and now < self._next):
            return None
        self._next = now + self.every_s
        got = self.read(dev)
        heat = tuple((n, v) for n, v in got[1] if n in HEAT_NAMES) if got is not None else ()
        if not heat:
            self.failures += 1
            if not self.active:
                log.warning("health: temperature sampling of %s stopped: %d readings in a row gave nothing",
                            dev.path, self.failures)
            return None
        self.failures = 0
        return self._warning(HealthSnapshot(time=now_iso(), when="sample", source=got[0],  # type: ignore[index]
                                            values=heat))

    def _warning(self, snap: HealthSnapshot) -> Optional[str]:
        """Record the sample ``snap``; the findings not warned of before, as a warning text, or None."""
        earlier = [s for s in self.health if s.when == "before"] or [s for s in self.health if s.when == "sample"][:1]
        limits = [s for s in self.health if s.value("temp_warning_c") or s.value("temp_critical_c")]
        self.health.append(snap)
        found = heat_findings(earlier[-1] if earlier else None, snap, limits[-1] if limits else None)
        new = [text for kind, text in found.items() if kind not in self.warned]
        self.warned.update(found)
        if not new:
            return None
        temp = snap.value("temperature_c")
        return "heat: " + "; ".join(new) + (f" (now {temp:.0f} °C)" if temp is not None else "")
