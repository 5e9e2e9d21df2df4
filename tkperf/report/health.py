"""The report's drive health part: the drive's counters before and after the
run, what changed (host and media writes, so the run's write amplification,
errors, wear), the temperature range and the warnings worth a reader's eye.

It reads only ``RunResult.health`` (snapshots the run took with
:mod:`tkperf.target.health`) and, to check the drive's host-write counter,
the bytes fio wrote; a report rebuilt from the result file says the same.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.model.results import HealthSnapshot, RunResult
from tkperf.render import blocks as b
from tkperf.report.words import NA, fmt, plural
from tkperf.target.health import UNITS, deltas, heat_findings

LABELS: Dict[str, str] = {
    "host_written_bytes": "Host writes", "media_written_bytes": "Media (NAND) writes",
    "host_read_bytes": "Host reads", "host_program_pages": "NAND pages programmed for the host",
    "ftl_program_pages": "NAND pages programmed by the FTL", "media_errors": "Media and data integrity errors",
    "error_log_entries": "Error log entries", "critical_warning": "Critical warning",
    "smart_failed": "SMART overall health", "percentage_used": "Percentage used (endurance)",
    "available_spare": "Available spare", "temperature_c": "Temperature",
    "temp_warning_c": "Warning temperature threshold", "temp_critical_c": "Critical temperature threshold",
    "warning_temp_minutes": "Time above warning temperature",
    "critical_temp_minutes": "Time above critical temperature",
    "thermal_throttle_events": "Thermal throttle transitions", "thermal_throttle_seconds": "Time throttled for heat",
    "power_on_hours": "Power-on hours", "unsafe_shutdowns": "Unsafe shutdowns",
    "host_written_unit_bytes": "Host write counter counts in",
    "media_written_unit_bytes": "Media write counter counts in",
}
#: NVMe critical warning bits (SMART / Health Information log, byte 0).
CRITICAL_WARNING_BITS = ("available spare below its threshold", "temperature beyond a threshold",
                         "reliability degraded by media or internal errors", "media placed in read-only mode",
                         "volatile memory backup failed", "persistent memory region read-only")
#: Counters that only grow: a smaller value after the run means another or a reset drive.
MONOTONIC = ("host_written_bytes", "media_written_bytes", "host_read_bytes", "host_program_pages",
             "ftl_program_pages", "media_errors", "power_on_hours", "unsafe_shutdowns")
#: The drive counting this share of what fio wrote, or less, is a counter in other units.
HOST_COUNT_FLOOR = 0.9


def critical_warning_text(bits: float) -> str:
    """The NVMe critical warning bits in words ('none' for 0)."""
    word = int(bits)
    said = [text for i, text in enumerate(CRITICAL_WARNING_BITS) if word & (1 << i)]
    return "; ".join(said) or ("none" if word == 0 else f"0x{word:02x}")


def temperature_range(snapshots: Sequence[HealthSnapshot]) -> Optional[Tuple[float, float]]:
    """(lowest, highest) temperature over the snapshots that have one."""
    temps = [t for t in (s.value("temperature_c") for s in snapshots) if t is not None]
    return (min(temps), max(temps)) if temps else None


def fio_written_bytes(run: RunResult) -> Tuple[float, bool]:
    """(bytes fio wrote in the run's WIPC, rounds and write-only streams, whether
    some stream could not be counted: a mixed stream's series keeps reads and
    writes together)."""
    total, partial = 0.0, False
    for t in run.tests:
        total += t.wipc.bytes_written if t.wipc is not None else 0
        total += sum(w.write.io_bytes for r in t.rounds for w in r.workloads)
        if not t.rounds and t.series:
            if t.tracking_metric.startswith("write."):
                total += sum(float(s.column("io_bytes").sum()) for s in t.series.values() if "io_bytes" in s.columns)
            else:
                partial = True
    return total, partial


def _size(nbytes: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size and nbytes % size == 0:
            return f"{nbytes / size:,.0f} {unit}"
    return f"{nbytes:,.0f} bytes"


def _num(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else fmt(value)


def _cell(name: str, value: Optional[float]) -> Tuple[str, str]:
    """(value, unit) as the table shows them."""
    unit = UNITS.get(name, "")
    if value is None:
        return NA, ""
    if name.endswith("_unit_bytes"):
        return _size(value), ""
    if unit == "bytes":
        return fmt(value / 1e9, "GB"), "GB"
    if name == "critical_warning":
        return f"0x{int(value):02x}", ""
    if name == "smart_failed":
        return ("FAILED" if value else "passed"), ""
    return _num(value), unit


def _change(name: str, d: Optional[float]) -> str:
    if d is None:
        return ""
    if UNITS.get(name) == "bytes":
        return f"{d / 1e9:+,.2f}"
    return ("+" if d > 0 else "") + _num(d)


def _pick(run: RunResult) -> Tuple[Optional[HealthSnapshot], Optional[HealthSnapshot], List[HealthSnapshot]]:
    before = next((s for s in run.health if s.when == "before"), None)
    after = next((s for s in reversed(run.health) if s.when == "after"), None)
    return before, after, [s for s in run.health if s.when == "sample"]


def health_table(before: Optional[HealthSnapshot], after: Optional[HealthSnapshot]) -> b.Table:
    """Every value either snapshot has: before, after and, for counters, the change."""
    shown = [s for s in (before, after) if s is not None]
    change = deltas(before, after) if before is not None and after is not None else {}
    rows = []
    for name in UNITS:
        values = [s.value(name) for s in shown]
        if all(v is None for v in values):
            continue
        cells = [_cell(name, v) for v in values]
        unit = next((u for _, u in cells if u), "")
        rows.append([LABELS[name]] + [c for c, _ in cells] + [_change(name, change.get(name)), unit])
    heads = [s.when.capitalize() for s in shown]
    return b.table(["Figure"] + heads + ["Change", "Unit"], rows, stub_columns=1,
                   title="The drive's counters at the start and the end of the run",
                   widths=[38] + [18] * len(heads) + [16, 10])


def _amplification(run: RunResult, d: Dict[str, float], warnings: List[str]) -> List[str]:
    out = []
    wa, media, host = d.get("write_amplification"), d.get("media_written_bytes"), d.get("host_written_bytes")
    if wa is not None and media is not None and host is not None:
        text = (f"Write amplification of the run: {wa:.2f} ({media / 1e9:,.2f} GB written to the media "
                f"for {host / 1e9:,.2f} GB the host wrote)")
        low, high = d.get("write_amplification_low"), d.get("write_amplification_high")
        if low is not None and high is not None and high - low > 0.01 * wa:
            text += f"; between {low:.2f} and {high:.2f} at the resolution of the drive's counters"
        out.append(text + ".")
    elif wa is not None:
        out.append(f"Write amplification of the run: {wa:.2f} (NAND pages programmed for the host and by the "
                   f"FTL over those for the host, the drive's page counters).")
    elif host is not None and host <= 0:
        out.append("The drive counted no host writes during the run, so no write amplification.")
    else:
        out.append("Write amplification of the run: not known; the drive reports no media (NAND) write counter "
                   "tkperf can read (NVMe drives have none in their standard SMART log).")
    if wa is not None and wa < 1:
        out.append("A write amplification below 1 means the controller compresses the data, or its media "
                   "counter counts in other units than its name says.")
    fio, partial = fio_written_bytes(run)
    if host is not None and fio > 0:
        out.append(f"fio wrote {'at least ' if partial else ''}{fio / 1e9:,.2f} GB in this run; "
                   f"the drive counted {host / 1e9:,.2f} GB of host writes.")
        if host < HOST_COUNT_FLOOR * fio:
            warnings.append("the drive counted fewer host writes than fio wrote: its host-write counter probably "
                            "counts in other units than its name says, so the drive's byte figures above (and "
                            "any write amplification from them) are not to be trusted")
    return out


def _warnings(before: Optional[HealthSnapshot], after: Optional[HealthSnapshot],
              samples: Sequence[HealthSnapshot], d: Dict[str, float]) -> List[str]:
    out = _state_warnings(before, after) + _error_warnings(d) + _heat_warnings(before, after, samples)
    out += [f"{LABELS[n].lower()} went down during the run ({_change(n, d[n])}): is it the same drive, or was "
            "the counter reset?" for n in MONOTONIC if d.get(n, 0) < 0]
    return out


def _state_warnings(before: Optional[HealthSnapshot], after: Optional[HealthSnapshot]) -> List[str]:
    """The drive's own alarms after the run: its critical warning and its SMART verdict."""
    out = []
    warning_after = after.value("critical_warning") if after is not None else None
    if warning_after:
        was = before.value("critical_warning") if before is not None else None
        out.append(f"critical warning after the run: {critical_warning_text(warning_after)}"
                   + (" (already set before it)" if was else ""))
    if after is not None and after.value("smart_failed"):
        out.append("SMART overall health after the run: FAILED")
    return out


def _error_warnings(d: Dict[str, float]) -> List[str]:
    """New media errors and error log entries during the run."""
    out = []
    n = d.get("media_errors", 0)
    if n > 0:
        out.append(f"{n:,.0f} new media and data integrity error{'s' if n != 1 else ''} during the run")
    n = d.get("error_log_entries", 0)
    if n > 0:
        out.append(f"{n:,.0f} new {'entry' if n == 1 else 'entries'} in the drive's error log during the run")
    return out


def _heat_warnings(before: Optional[HealthSnapshot], after: Optional[HealthSnapshot],
                   samples: Sequence[HealthSnapshot]) -> List[str]:
    """What the drive's temperature did during the run: time over its limits, throttling, a critical bit."""
    limits = next((s for s in (before, after) if s is not None and
                   (s.value("temp_warning_c") or s.value("temp_critical_c"))), None)
    heat = [s for s in list(samples) + [after] if s is not None]
    findings: Dict[str, str] = {}
    if heat:  # counters: their total at the end; thresholds: the hottest reading
        hottest = max(heat, key=lambda s: s.value("temperature_c") or -300.0)
        findings = {k: v for k, v in heat_findings(before, heat[-1], limits).items() if k.endswith("_time")
                    or k == "throttle"}
        findings.update({k: v for k, v in heat_findings(before, hottest, limits).items() if k.startswith("over_")})
        if any(int(s.value("critical_warning") or 0) & 2 for s in samples):
            findings["critical_bit"] = "the drive reported a temperature critical warning during the run"
    return list(findings.values())


def health_blocks(run: RunResult) -> list:
    """The report's health part; nothing when the run took no snapshot."""
    if not run.health:
        return []
    before, after, samples = _pick(run)
    source = (before or after or samples[0]).source
    taken = [f"{s.when} ({s.time})" for s in (before, after) if s is not None]
    out: list = [b.Heading("Drive health before and after"),
                 b.Paragraph(f"Read with {source}: " + (", ".join(taken) or "no snapshot at the start or end")
                             + f"; {plural(len(samples), 'temperature sample')} during the run.")]
    if before is None or after is None:
        out.append(b.Paragraph("The run has no snapshot at its " + ("start" if before is None else "end")
                               + " (the drive did not answer, or the run stopped first): nothing to compare."))
    if before is not None or after is not None:
        out.append(health_table(before, after))
    d = deltas(before, after) if before is not None and after is not None else {}
    warnings: List[str] = []
    if d:
        out += _wear_blocks(run, d, warnings)
    out += _temperature_blocks(run)
    warnings += _warnings(before, after, samples, d)
    out.append(b.Admonition("warning", tuple(w[0].upper() + w[1:] + "." for w in warnings)))
    return out


def _wear_blocks(run: RunResult, d: Dict[str, float], warnings: List[str]) -> list:
    """What the run wrote as the drive counted it, and its wear (warnings go to ``warnings``)."""
    out: list = [b.Paragraph(p) for p in _amplification(run, d, warnings)]
    if d.get("percentage_used", 0) > 0:
        out.append(b.Paragraph(f"The drive's endurance estimate (percentage used) rose by "
                               f"{d['percentage_used']:.0f} points during the run."))
    return out


def _temperature_blocks(run: RunResult) -> list:
    """The lowest and highest temperature read during the run, if any was."""
    temps = temperature_range(run.health)
    if temps is None:
        return []
    readings = sum(1 for s in run.health if s.value("temperature_c") is not None)
    return [b.Paragraph(f"Temperature: lowest {temps[0]:.0f} °C, highest {temps[1]:.0f} °C over "
                        f"{plural(readings, 'reading')}.")]
