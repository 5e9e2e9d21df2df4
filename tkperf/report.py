"""The report of one run: results -> figures -> reST -> HTML and PDF.

The data flow is one way and in three layers, kept apart in this file:

1. *Figures*: pure functions that read a :class:`~tkperf.results.RunResult`
   and return the numbers a reader needs (the IOPS matrix, the summary
   figures, the SNIA header ...) as :class:`~tkperf.plots.Grid` and small
   dataclasses.  Plots and tables both draw from these, so every number in a
   plot is also in a table.
2. *reST*: :class:`RstDocument` turns figures into reStructuredText and asks
   :mod:`tkperf.plots` for the PNGs it references.
3. *Rendering*: :func:`render_document` writes the ``.rst``, the
   self-contained ``.html`` (docutils, plots embedded as data URIs) and the
   ``.pdf`` (rst2pdf), each replaced atomically.

:func:`build_report` ties them together; :mod:`tkperf.compare` reuses all
three layers for several runs.
"""
from __future__ import annotations

import base64
import io
import logging
import math
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from tkperf import __version__, plots
from tkperf.errors import OutputError
from tkperf.options import REPORT_FORMATS, parse_report_formats
from tkperf.results import (
    PERCENTILES,
    RunResult,
    TestRun,
    Workload,
    format_bs,
    gb,
    mb,
    mix_label,
)
from tkperf.steadystate import DATA_EXCURSION, SLOPE_EXCURSION, SteadyState
from tkperf.store import atomic_write, ensure_dir
from tkperf.summary import headline, test_title

NA = "n/a"
# WSAT tables list every interval up to this many, else this many time bins.
WSAT_TABLE_ROWS = 24


@dataclass(frozen=True)
class ReportResult:
    """What a report build wrote (documents, then the plot directory) and what went wrong."""

    paths: Tuple[str, ...]
    warnings: Tuple[str, ...] = ()


# =============================================================================
# 1. Figures: numbers from results
# =============================================================================

def _cells(test: TestRun) -> Dict[Tuple[int, int], str]:
    """(block size, read %) -> workload name, over every round of the test."""
    out: Dict[Tuple[int, int], str] = {}
    for r in test.rounds:
        for w in r.workloads:
            out.setdefault((w.bs, w.rwmixread), w.name)
    return out


def _window_workloads(test: TestRun, name: str) -> List[Workload]:
    return [w for r in test.window_rounds() for w in r.workloads if w.name == name]


def _grid(test: TestRun, value: Callable[[str], Optional[float]], unit: str) -> plots.Grid:
    """A block size x R/W mix grid over the cells the test ran: rows smallest
    block size first, columns in PTS order (100/0 first)."""
    cells = _cells(test)
    sizes = sorted({bs for bs, _ in cells})
    mixes = sorted({mix for _, mix in cells}, reverse=True)
    values = tuple(tuple(value(cells[(bs, mix)]) if (bs, mix) in cells else None for mix in mixes)
                   for bs in sizes)
    return plots.Grid(rows=tuple(format_bs(b) for b in sizes), row_keys=tuple(float(b) for b in sizes),
                      cols=tuple(mix_label(m) for m in mixes), values=values, unit=unit)


def iops_grid(test: TestRun) -> plots.Grid:
    """The IOPS matrix: window-average IOPS (read + write) per block size and mix."""
    return _grid(test, lambda name: test.window_average(name, "iops"), "IOPS")


def lat_grids(test: TestRun) -> Tuple[plots.Grid, plots.Grid]:
    """LAT AVE (window average of the mean over both directions) and MAX
    (largest maximum in the window) per block size and mix, in microseconds."""

    def worst(name: str) -> Optional[float]:
        ws = _window_workloads(test, name)
        return max(w.lat_max_us for w in ws) if ws else None

    return (_grid(test, lambda name: test.window_average(name, "lat_mean_us"), "µs"),
            _grid(test, worst, "µs"))


@dataclass(frozen=True)
class PercentileRow:
    """Completion latency of one direction of one LAT cell over the window (µs)."""

    block_size: str
    mix: str
    direction: str
    mean_us: float
    max_us: float
    percentiles: Tuple[Optional[float], ...]


def lat_percentiles(test: TestRun) -> List[PercentileRow]:
    """Per cell and direction: the mean, the maximum and, for each of
    :data:`PERCENTILES`, the highest value any window round reported."""
    out = []
    cells = _cells(test)
    for bs, mix in sorted(cells, key=lambda c: (c[0], -c[1])):
        ws = _window_workloads(test, cells[(bs, mix)])
        for direction in ("read", "write"):
            stats = [getattr(w, direction) for w in ws if getattr(w, direction).ios > 0]
            if not stats:
                continue
            pct = []
            for p in PERCENTILES:
                vals = [v for v in (s.percentile(p) for s in stats) if v is not None]
                pct.append(max(vals) if vals else None)
            out.append(PercentileRow(
                block_size=format_bs(bs), mix=mix_label(mix), direction=direction,
                mean_us=sum(s.lat_mean_us for s in stats) / len(stats),
                max_us=max(s.lat_max_us for s in stats), percentiles=tuple(pct)))
    return out


def tp_block_size(test: TestRun) -> int:
    for r in test.rounds:
        for w in r.workloads:
            return w.bs
    text = test.params.get("block_size", "")
    m = re.fullmatch(r"(\d+)(k?)", text)
    if not m:
        return 0
    return int(m.group(1)) * (1024 if m.group(2) else 1)


def tp_grid(tests: Sequence[TestRun]) -> plots.Grid:
    """Window-average MB/s of SEQ 100% W and 100% R per TP block size."""
    tests = sorted(tests, key=tp_block_size)
    values = []
    for t in tests:
        bs = t.params.get("block_size", format_bs(tp_block_size(t)))
        row = []
        for side in ("w", "r"):
            v = t.window_average(f"seq-{bs}-{side}", "bw_bytes")
            row.append(None if v is None else mb(v))
        values.append(tuple(row))
    return plots.Grid(rows=tuple(t.params.get("block_size", format_bs(tp_block_size(t))) for t in tests),
                      row_keys=tuple(float(tp_block_size(t)) for t in tests),
                      cols=("100% W", "100% R"), values=tuple(values), unit="MB/s",
                      col_title="SEQ")


@dataclass(frozen=True)
class Metric:
    """How a tracking metric is shown: its scale to display units and the unit."""

    key: str
    scale: float
    unit: str


def metric_display(key: str) -> Metric:
    if key.endswith("bw_bytes"):
        return Metric(key, 1e-6, "MB/s")
    if "lat" in key:
        return Metric(key, 1.0, "µs")
    return Metric(key, 1.0, "IOPS")


def _tracking_mix(test: TestRun) -> Optional[int]:
    for r in test.rounds:
        w = r.workload(test.tracking_workload)
        if w is not None:
            return w.rwmixread
    m = re.fullmatch(r"rnd-[0-9k]+-(\d+)-\d+", test.tracking_workload)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Convergence:
    """Per round, the value of every workload the convergence plot shows."""

    title: str
    ylabel: str
    series: Tuple[plots.Series, ...]
    rounds: Tuple[int, ...]
    legend_title: str


def convergence(test: TestRun) -> Convergence:
    """IOPS and LAT: the tracking metric of every block size at the tracking
    mix; TP: the write and read MB/s of the block size."""
    rounds = tuple(r.index for r in test.rounds)
    series: List[plots.Series] = []
    if test.name == "tp":
        bs = test.params.get("block_size", "")
        unit = "MB/s"
        for side, label, key in (("w", "SEQ 100% W", "write.bw_bytes"), ("r", "SEQ 100% R", "read.bw_bytes")):
            ys = []
            for r in test.rounds:
                w = r.workload(f"seq-{bs}-{side}")
                ys.append(math.nan if w is None else w.metric(key) / 1e6)
            series.append(plots.Series(label, tuple(float(x) for x in rounds), tuple(ys)))
        title = f"TP {bs}: MB/s per round"
    else:
        m = metric_display(test.tracking_metric)
        unit = m.unit
        mix = _tracking_mix(test)
        cells = {bs: name for (bs, mx), name in _cells(test).items() if mx == mix}
        for bs in sorted(cells):
            ys = []
            for r in test.rounds:
                w = r.workload(cells[bs])
                ys.append(math.nan if w is None else w.metric(test.tracking_metric) * m.scale)
            series.append(plots.Series(format_bs(bs), tuple(float(x) for x in rounds), tuple(ys)))
        what = "mean latency" if unit == "µs" else "IOPS"
        title = (f"{test_title(test)}: {what} of every block size at R/W {mix_label(mix)} per round"
                 if mix is not None else f"{test_title(test)}: per round")
    return Convergence(title=title, ylabel=unit, series=tuple(series), rounds=rounds,
                       legend_title="" if test.name == "tp" else "Block size")


def steady_state(test: TestRun, window: int = 5) -> Optional[SteadyState]:
    """The recorded verdict, or one computed from the rounds (older or partial files)."""
    if test.steady is not None:
        return test.steady
    if test.tracking_values():
        return test.evaluate(window)
    return None


def verdict(test: TestRun, s: Optional[SteadyState]) -> str:
    """The steady-state verdict in words, e.g. 'steady state reached in rounds 3-7'."""
    if s is None or not s.rounds:
        return "no rounds measured"
    span = f"rounds {s.first_round}-{s.last_round}"
    if s.steady:
        return f"steady state reached in {span}"
    return f"NO steady state in {len(test.rounds)} round{'s' if len(test.rounds) != 1 else ''} (window {span})"


def window_checks(s: SteadyState) -> str:
    """The two 20/10 checks with their limits, e.g. 'range 12.0% (limit 20%), ...'."""
    rng = s.range / s.average if s.average else 0.0
    slope = s.slope_excursion / s.average if s.average else 0.0
    return (f"range {rng:.1%} of average (limit {DATA_EXCURSION:.0%}), "
            f"slope excursion {slope:.1%} (limit {SLOPE_EXCURSION:.0%})")


def short_verdict(s: SteadyState) -> str:
    """The verdict for a plot title: short enough for one line."""
    state = "Steady" if s.steady else "NOT steady"
    span = f"rounds {s.first_round}-{s.last_round}" if s.rounds else "no rounds"
    rng = s.range / s.average if s.average else 0.0
    slope = s.slope_excursion / s.average if s.average else 0.0
    return (f"{state}, {span}: range {rng:.1%} (limit {DATA_EXCURSION:.0%}), "
            f"slope excursion {slope:.1%} (limit {SLOPE_EXCURSION:.0%})")


def window_view(test: TestRun, window: int = 5) -> Optional[plots.WindowView]:
    s = steady_state(test, window)
    pairs = test.tracking_values()
    if s is None or not pairs:
        return None
    m = metric_display(test.tracking_metric)
    return plots.WindowView(
        title=f"{test_title(test)} measurement window: {_tracking_label(test)}",
        ylabel=m.unit, rounds=tuple(p[0] for p in pairs),
        values=tuple(p[1] * m.scale for p in pairs), window_rounds=tuple(s.rounds),
        window_values=tuple(v * m.scale for v in s.values), average=s.average * m.scale,
        slope=s.slope * m.scale, intercept=s.intercept * m.scale,
        verdict=short_verdict(s))


def _tracking_label(test: TestRun) -> str:
    # The runner's labels say 'us'; the report writes the unit properly.
    return test.tracking_label.replace("(us)", "(µs)")


@dataclass(frozen=True)
class WsatData:
    """A WSAT test as arrays, one element per interval."""

    seconds: np.ndarray
    written_gb: np.ndarray
    iops: np.ndarray


def wsat_data(test: TestRun) -> WsatData:
    n = len(test.rounds)
    iops = np.fromiter((r.workloads[0].write.iops if r.workloads else 0.0 for r in test.rounds),
                       dtype=float, count=n)
    written = np.fromiter((sum(w.write.io_bytes for w in r.workloads) for r in test.rounds),
                          dtype=float, count=n)
    interval = np.fromiter((r.fio_s for r in test.rounds), dtype=float, count=n)
    return WsatData(seconds=np.cumsum(interval), written_gb=np.cumsum(written) / 1e9, iops=iops)


@dataclass(frozen=True)
class WsatSummary:
    intervals: int
    duration_s: float
    written_gb: float
    first_iops: Optional[float]
    max_iops: Optional[float]
    min_iops: Optional[float]
    tail_iops: Optional[float]
    tail_label: str


def wsat_summary(test: TestRun, data: Optional[WsatData] = None) -> WsatSummary:
    d = data if data is not None else wsat_data(test)
    n = int(d.iops.size)
    s = test.steady
    if s is not None and s.steady and s.rounds:
        tail = float(sum(s.values) / len(s.values))
        label = f"steady-state window (intervals {s.first_round}-{s.last_round})"
    elif n:
        k = min(5, n)
        tail = float(d.iops[-k:].mean())
        label = f"last {k} interval{'s' if k != 1 else ''}"
    else:
        tail, label = None, "last 5 intervals"
    return WsatSummary(
        intervals=n, duration_s=float(d.seconds[-1]) if n else 0.0,
        written_gb=float(d.written_gb[-1]) if n else 0.0,
        first_iops=float(d.iops[0]) if n else None,
        max_iops=float(d.iops.max()) if n else None,
        min_iops=float(d.iops.min()) if n else None, tail_iops=tail, tail_label=label)


@dataclass(frozen=True)
class WsatBin:
    first: int
    last: int
    end_s: float
    written_gb: float
    mean_iops: float
    min_iops: float
    max_iops: float


def wsat_bins(data: WsatData, rows: int = WSAT_TABLE_ROWS) -> List[WsatBin]:
    """Every interval when there are at most ``rows``, else ``rows`` bins of
    consecutive intervals (mean, min and max IOPS of each)."""
    n = int(data.iops.size)
    if n == 0:
        return []
    edges = np.linspace(0, n, min(n, rows) + 1).astype(int)
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b <= a:
            continue
        chunk = data.iops[a:b]
        out.append(WsatBin(first=int(a) + 1, last=int(b), end_s=float(data.seconds[b - 1]),
                           written_gb=float(data.written_gb[b - 1]), mean_iops=float(chunk.mean()),
                           min_iops=float(chunk.min()), max_iops=float(chunk.max())))
    return out


# --- the one-page summary ------------------------------------------------------

@dataclass(frozen=True)
class SummaryFigure:
    """One figure of the summary page (after Figure 3 of the SNIA primer)."""

    key: str
    group: str
    pattern: str
    unit: str
    value: Optional[float]
    source: str


SUMMARY_LAYOUT: Tuple[Tuple[str, str, str, str], ...] = (
    ("fob_iops", "FOB IOPS", "RND 4KiB 100% W", "IOPS"),
    ("rnd_4k_write_iops", "Steady-state IOPS", "RND 4KiB 100% W", "IOPS"),
    ("rnd_4k_mixed_iops", "Steady-state IOPS", "RND 4KiB 65:35 RW", "IOPS"),
    ("rnd_4k_read_iops", "Steady-state IOPS", "RND 4KiB 100% R", "IOPS"),
    ("seq_write_mb_s", "Throughput", "SEQ 1024KiB 100% W", "MB/s"),
    ("seq_read_mb_s", "Throughput", "SEQ 1024KiB 100% R", "MB/s"),
    ("rnd_4k_write_lat_mean_us", "Response time AVE", "RND 4KiB 100% W", "µs"),
    ("rnd_4k_write_lat_max_us", "Response time MAX", "RND 4KiB 100% W", "µs"),
)


def _window_source(test: TestRun) -> str:
    s = steady_state(test)
    if s is None or not s.rounds:
        return f"{test_title(test)}: no rounds"
    state = "steady" if s.steady else "NOT steady"
    return f"{test_title(test)} rounds {s.first_round}-{s.last_round}, {state}"


def summary_figures(run: RunResult) -> List[SummaryFigure]:
    """The summary page's figures; ``value`` is None for what was not measured.

    FOB IOPS is the first WSAT interval (right after the purge, before any
    preconditioning); without WSAT, the first IOPS round's RND 4KiB 100% W
    (which follows the WIPC, and the source column says so).
    """
    found: Dict[str, Tuple[float, str]] = {}
    wsat = run.test("wsat")
    if wsat is not None and wsat.rounds and wsat.rounds[0].workloads:
        found["fob_iops"] = (wsat.rounds[0].workloads[0].write.iops, "WSAT interval 1, after purge")
    iops = run.test("iops")
    if iops is not None:
        for key, value in headline(iops).items():
            found[key] = (value, _window_source(iops))
        if "fob_iops" not in found and iops.rounds:
            w = iops.rounds[0].workload("rnd-4k-0-100")
            if w is not None:
                found["fob_iops"] = (w.iops, "IOPS round 1, after WIPC")
    tp = run.test("tp-1024k")
    if tp is not None:
        for key, value in headline(tp).items():
            found[key] = (value, _window_source(tp))
    lat = run.test("lat")
    if lat is not None:
        for key, value in headline(lat).items():
            found[key] = (value, _window_source(lat))
    out = []
    for key, group, pattern, unit in SUMMARY_LAYOUT:
        value, source = found.get(key, (None, "not measured"))
        out.append(SummaryFigure(key, group, pattern, unit, value, source))
    return out


@dataclass(frozen=True)
class SteadyRow:
    test: str
    status: str
    rounds: str
    window: str
    reached: str
    stop_reason: str


def steady_rows(run: RunResult) -> List[SteadyRow]:
    """Which tests reached steady state, in which rounds, and why they stopped."""
    out = []
    for t in run.tests:
        s = steady_state(t)
        if t.name == "wsat":
            rounds = f"{len(t.rounds)} intervals"
            if t.params.get("steady_stop") != "true":
                reached = "not a stop rule"
            else:
                reached = "yes" if s is not None and s.steady else "no"
        else:
            reached = "yes" if s is not None and s.steady else "NO"
            rounds = str(len(t.rounds))
        window = f"{s.first_round}-{s.last_round}" if s is not None and s.rounds else NA
        out.append(SteadyRow(test_title(t), t.status or NA, rounds, window, reached,
                             t.stop_reason or NA))
    return out


# --- the SNIA report header ------------------------------------------------------

def _desc(run: RunResult, *keys: str) -> str:
    for k in keys:
        v = run.description_fields.get(k, "").strip()
        if v:
            return v
    return ""


def _device_or_desc(run: RunResult, device_value: str, *keys: str) -> str:
    """The device's own value, else the description file's (marked so), else 'not reported'."""
    if device_value.strip():
        return device_value.strip()
    v = _desc(run, *keys)
    if v:
        return f"{v} (description file)"
    return "not reported"


def _oio(numjobs: str, iodepth: str) -> str:
    try:
        total = int(numjobs) * int(iodepth)
    except ValueError:
        return f"TC {numjobs or '?'} x QD {iodepth or '?'}"
    return f"TC {numjobs} x QD {iodepth} = OIO {total}"


def _duration(seconds: float) -> str:
    if seconds >= 3 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 180:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


@dataclass(frozen=True)
class Header:
    """The four disclosure groups of the SNIA report header, as (label, value) pairs."""

    platform: Tuple[Tuple[str, str], ...]
    device: Tuple[Tuple[str, str], ...]
    setup: Tuple[Tuple[str, str], ...]
    test: Tuple[Tuple[str, str], ...]


def platform_fields(run: RunResult) -> Tuple[Tuple[str, str], ...]:
    h = run.host
    mem = f"{h.memory_bytes / 2 ** 30:.1f} GiB" if h.memory_bytes else "not reported"
    return (
        ("Host", h.hostname or "not reported"),
        ("CPU", f"{h.cpu or 'not reported'}" + (f", {h.cores} cores" if h.cores else "")),
        ("Memory", mem),
        ("OS", h.os or "not reported"),
        ("Kernel", h.kernel or "not reported"),
        ("fio", h.fio_version or "not reported"),
        ("tkperf", run.tkperf_version or h.tkperf_version or "not reported"),
        ("Python", h.python or "not reported"),
    )


def device_fields(run: RunResult, test: Optional[TestRun] = None) -> Tuple[Tuple[str, str], ...]:
    d = run.device
    target = d.path if d.path == d.resolved or not d.resolved else f"{d.path} ({d.resolved})"
    if d.kind == "file":
        target += ": a FILE target, not a raw block device"
    out = [
        ("Vendor", _device_or_desc(run, d.vendor, "vendor", "manufacturer", "mfgr")),
        ("Model", _device_or_desc(run, d.model, "model", "model_no", "product")),
        ("Serial", _device_or_desc(run, d.serial, "serial", "serial_number", "s/n")),
        ("Firmware", _device_or_desc(run, d.firmware, "firmware", "firmware_ver", "firmware_version")),
        ("Capacity", f"{gb(d.size_bytes):,.1f} GB ({d.size_bytes:,} bytes)"),
        ("Interface", _device_or_desc(run, d.transport, "interface", "transport")),
        ("Write cache", _device_or_desc(run, d.write_cache, "write_cache", "cache")),
        ("Sectors", f"{d.logical_sector} B logical, {d.physical_sector} B physical"
                    + (", rotational" if d.rotational else "")),
        ("Target", target),
    ]
    if test is not None:
        p = test.purge
        if p is None:
            out.append(("Purge method", "none recorded"))
            out.append(("PTS PURGE", "no"))
        else:
            method = p.method + (f" ({p.command})" if p.command else "")
            out.append(("Purge method", f"{method}, requested {p.requested}, {p.seconds:.1f} s"))
            out.append(("PTS PURGE", "yes" if p.pts_purge else f"NO: {p.note or 'not a PTS PURGE'}"))
    return tuple(out)


def setup_fields(run: RunResult, test: TestRun) -> Tuple[Tuple[str, str], ...]:
    o = run.options
    refill = o.get("refill_buffers") == "true"
    out = [
        ("Data pattern", "random, refill_buffers (new data for every write)" if refill
         else "random (fio buffers, not refilled)"),
        ("Active range", "100% (preconditioning and test)"),
        ("Device class", f"{o.get('device_class', NA)} ({run.profile or 'ssd'} profile)"),
    ]
    w = test.wipc
    if w is not None:
        out += [
            ("Pre-condition 1", f"WIPC: SEQ {format_bs(w.bs)} W, {w.loops} x capacity"),
            ("WIPC OIO", _oio(str(w.numjobs), str(w.iodepth))),
            ("WIPC amount", f"{gb(w.bytes_written):,.2f} GB"),
            ("WIPC duration", f"{_duration(w.seconds)} at {mb(w.bw_bytes):,.1f} MB/s"),
        ]
    elif test.name == "wsat":
        out.append(("Pre-condition 1", "none: WSAT starts fresh after the purge"))
    elif o.get("wipc_loops") == "0":
        out.append(("Pre-condition 1", "none (--wipc-loops 0)"))
    else:
        out.append(("Pre-condition 1", "not run (test stopped before WIPC)"))
    if test.name == "wsat":
        out.append(("Pre-condition 2", "none"))
    else:
        out.append(("Pre-condition 2", "WDPC: the test loop itself, "
                    + _oio(test.params.get("numjobs", ""), test.params.get("iodepth", ""))))
    return tuple(out)


def _stimulus(test: TestRun) -> str:
    p = test.params
    if test.name in ("iops", "lat"):
        return (f"RND, R/W mix {p.get('mixes', NA)} (outer loop) x block size "
                f"{p.get('block_sizes', NA)} (inner loop)")
    if test.name == "tp":
        bs = p.get("block_size", NA)
        return f"SEQ {bs} 100% W, then SEQ {bs} 100% R"
    if test.name == "wsat":
        return f"RND {p.get('block_size', '4k')} 100% W, continuous"
    return p.get("access", NA)


def _wsat_steady(test: TestRun, s: Optional[SteadyState]) -> str:
    if test.params.get("steady_stop") != "true":
        return "not a stop rule (WSAT runs to its time or TGBW limit)"
    rule = f"20/10 over {s.window if s else 5} intervals, a stop rule after one drive fill"
    if test.stop_reason == "steady state" and s is not None:
        return f"{rule}: reached in intervals {s.first_round}-{s.last_round}"
    return f"{rule}: not reached"


def test_fields(run: RunResult, test: TestRun) -> Tuple[Tuple[str, str], ...]:
    p = test.params
    window = run.options.get("window", "5")
    s = steady_state(test, int(window) if window.isdigit() and int(window) >= 2 else 5)
    out = [("Stimulus", _stimulus(test)), ("OIO", _oio(p.get("numjobs", ""), p.get("iodepth", "")))]
    if test.name == "wsat":
        d = wsat_data(test)
        out += [
            ("Interval", f"{p.get('interval', NA)} s"),
            ("Stop rules", f"time {_duration(float(p.get('time_limit', '0') or 0))}, "
                           f"TGBW {p.get('tgbw', NA)}"
                           + (", steady state" if p.get("steady_stop") == "true" else "")),
            ("Intervals run", f"{d.iops.size} ({_duration(float(d.seconds[-1]) if d.iops.size else 0.0)}, "
                              f"{float(d.written_gb[-1]) if d.iops.size else 0.0:,.2f} GB written)"),
            ("Steady state", _wsat_steady(test, s)),
        ]
    else:
        out += [
            ("Runtime", f"{p.get('runtime', NA)} s per workload"),
            ("Rounds run", f"{len(test.rounds)} of at most {run.options.get('max_rounds', NA)}"),
            ("Tracking", _tracking_label(test)),
            ("Steady state", f"20/10 over {s.window if s else run.options.get('window', 5)} rounds: "
                             + verdict(test, s)),
        ]
    out += [
        ("Stopped by", test.stop_reason or NA),
        ("Status", test.status or NA),
        ("Started", test.started or NA),
        ("Finished", test.finished or NA),
    ]
    return tuple(out)


def snia_header(run: RunResult, test: TestRun) -> Header:
    return Header(platform=platform_fields(run), device=device_fields(run, test),
                  setup=setup_fields(run, test), test=test_fields(run, test))


# --- notes ----------------------------------------------------------------------

def run_caveats(run: RunResult) -> List[str]:
    """What a reader must know before trusting a figure, in plain words."""
    out = []
    if run.quick:
        out.append("This is a --quick smoke test (short workloads, a narrowed matrix, few rounds): "
                   "its figures are NOT a PTS-conformant measurement.")
    if run.device.kind == "file":
        out.append(f"The target {run.device.path} is a FILE, not a raw block device: the figures "
                   "describe the filesystem and host as much as any drive.")
    if run.status != "complete":
        out.append(f"The run is {run.status or 'incomplete'}: this is a partial report of what "
                   "was measured before it stopped.")
    if run.resumed:
        n = sum(1 for e in run.events if e.kind == "resume")
        out.append(f"The run was resumed {n} time{'s' if n != 1 else ''}; the run notes list when.")
    for t in run.tests:
        if t.status != "complete":
            out.append(f"{test_title(t)} is {t.status or 'incomplete'} after {len(t.rounds)} "
                       f"{'interval' if t.name == 'wsat' else 'round'}{'s' if len(t.rounds) != 1 else ''}.")
    if any(t.purge is not None and not t.purge.pts_purge for t in run.tests):
        out.append("At least one test did not start from a PTS PURGE (see each test's header).")
    return out


# =============================================================================
# 2. reST
# =============================================================================

_INLINE = re.compile(r"([\\`*_|<>\[\]])")
_BLOCK_START = re.compile(r"^(?:[-+*#:.=~^\"'(|>!@$%&,;?/]|\d+[.)]\s|[A-Za-z][.)]\s|[ivxlcdmIVXLCDM]+[.)]\s)")


def rst_escape(text: object) -> str:
    """One line of plain text made inert in reST: inline markup escaped, no
    line breaks, and nothing that starts a list, field or comment."""
    s = "".join(ch if ch.isprintable() else " " for ch in str(text))
    s = " ".join(s.split())
    s = _INLINE.sub(r"\\\1", s)
    if _BLOCK_START.match(s):
        s = "\\" + s
    return s


def list_table(headers: Sequence[str], rows: Iterable[Sequence[str]], title: str = "",
               widths: Optional[Sequence[int]] = None, stub_columns: int = 0) -> str:
    """A docutils list-table of plain-text cells (escaped); empty cells stay empty."""
    lines = [".. list-table::" + (f" {rst_escape(title)}" if title else ""), "   :header-rows: 1"]
    if widths:
        lines.append("   :widths: " + " ".join(str(int(w)) for w in widths))
    if stub_columns:
        lines.append(f"   :stub-columns: {stub_columns}")
    lines.append("")
    body = [list(r) for r in rows]
    if not body:  # docutils refuses a table without a body row
        body = [["none"] + [""] * (len(headers) - 1)]
    for row in [list(headers)] + body:
        for i, cell in enumerate(row):
            text = rst_escape(cell)
            lines.append(("   * - " if i == 0 else "     - ") + text if text else
                         ("   * -" if i == 0 else "     -"))
    return "\n".join(lines) + "\n"


def _text_width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _wrap(text: str, width: int) -> List[str]:
    """Greedy word wrap by display width; long words are cut."""
    lines: List[str] = []
    line = ""
    for word in text.split():
        while _text_width(word) > width:
            cut = width
            while _text_width(word[:cut]) > width:
                cut -= 1
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:cut])
            word = word[cut:]
        if not word:
            continue
        if not line:
            line = word
        elif _text_width(line) + 1 + _text_width(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line or not lines:
        lines.append(line)
    return lines


def grid_table(header: Sequence[Tuple[str, int]], rows: Sequence[Sequence[str]],
               max_widths: Sequence[int]) -> str:
    """A reST grid table whose header cells may span columns (``(text, span)``);
    body cells are plain text, wrapped to ``max_widths``."""
    ncols = len(max_widths)
    wrapped = [[[rst_escape(line) for line in _wrap(" ".join(str(c).split()), max_widths[i])]
                for i, c in enumerate(row)] for row in rows]
    widths = [max([1] + [_text_width(line) for row in wrapped for line in row[i]]) for i in range(ncols)]
    # A spanning header cell needs room too.
    col = 0
    for text, span in header:
        need = _text_width(rst_escape(text))
        have = sum(widths[col:col + span]) + 3 * (span - 1)
        if need > have:
            widths[col + span - 1] += need - have
        col += span

    def border(char: str) -> str:
        return "+" + "+".join(char * (w + 2) for w in widths) + "+"

    def line(cells: Sequence[Tuple[str, int]]) -> str:
        parts, c = [], 0
        for text, span in cells:
            w = sum(widths[c:c + span]) + 3 * (span - 1)
            parts.append(" " + text + " " * (w - _text_width(text)) + " ")
            c += span
        return "|" + "|".join(parts) + "|"

    out = [border("-"), line([(rst_escape(t), s) for t, s in header]), border("=")]
    for row in wrapped:
        height = max(len(c) for c in row)
        for k in range(height):
            out.append(line([(c[k] if k < len(c) else "", 1) for c in row]))
        out.append(border("-"))
    return "\n".join(out) + "\n"


def header_rst(h: Header) -> str:
    """The SNIA header as two grid tables: platform | device, set-up | test."""

    def pairs(left: Sequence[Tuple[str, str]], right: Sequence[Tuple[str, str]]) -> List[List[str]]:
        n = max(len(left), len(right))
        left = list(left) + [("", "")] * (n - len(left))
        right = list(right) + [("", "")] * (n - len(right))
        return [[a, b, c, d] for (a, b), (c, d) in zip(left, right)]

    widths = (16, 34, 16, 34)
    return (grid_table([("Test platform", 2), ("Device under test", 2)],
                       pairs(h.platform, h.device), widths) + "\n"
            + grid_table([("Set-up parameters", 2), ("Test parameters", 2)],
                         pairs(h.setup, h.test), widths))


def fmt(value: Optional[float], unit: str = "") -> str:
    """A figure as text with thousands separators; 'n/a' when not measured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    v = float(value)
    if unit in ("GB",):
        text = f"{v:,.2f}"
    elif unit in ("MB/s", "µs"):
        text = f"{v:,.1f}" if abs(v) < 100000 else f"{v:,.0f}"
    elif abs(v) >= 100:
        text = f"{v:,.0f}"
    elif abs(v) >= 1:
        text = f"{v:,.1f}"
    else:
        text = f"{v:.3g}"
    return text


def grid_rst(grid: plots.Grid, title: str, corner: str = "") -> str:
    headers = [corner or f"{grid.row_title} \\ {grid.col_title}"] + list(grid.cols)
    rows = [[r] + [fmt(v, grid.unit) for v in vals] for r, vals in zip(grid.rows, grid.values)]
    first = 14 if len(grid.cols) > 4 else 18
    return list_table(headers, rows, title=title, widths=[first] + [12] * len(grid.cols),
                      stub_columns=1)


def summary_table_rst(figures: Sequence[SummaryFigure]) -> str:
    """The summary figures as a table (the golden test pins this text)."""
    rows = [[f.group, f.pattern, fmt(f.value, f.unit), f.unit, f.source] for f in figures]
    return list_table(["Figure", "Access pattern", "Value", "Unit", "Measured in"], rows,
                      title="Summary performance data", widths=[20, 22, 14, 8, 36])


def steady_table_rst(rows: Sequence[SteadyRow]) -> str:
    body = [[r.test, r.status, r.rounds, r.window, r.reached, r.stop_reason] for r in rows]
    return list_table(["Test", "Status", "Rounds", "Window", "Steady state", "Stopped by"], body,
                      title="Steady state by test", widths=[12, 12, 14, 10, 24, 28])


class RstDocument:
    """reST text under construction plus the plots it references.

    ``plot_dir`` is where PNGs are written; ``plot_ref`` is how the reST
    refers to that directory (relative to the document).  A plot that
    cannot be drawn becomes a warning and a sentence, not a failed report.
    """

    def __init__(self, plot_dir: str, plot_ref: str) -> None:
        self.plot_dir = plot_dir
        self.plot_ref = plot_ref
        self.parts: List[str] = []
        self.plots: List[str] = []
        self.warnings: List[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text.rstrip("\n") + "\n")

    def title(self, text: str) -> None:
        t = rst_escape(text)
        bar = "=" * _text_width(t)
        self.add(f"{bar}\n{t}\n{bar}")

    def section(self, text: str, level: int = 1, room_cm: float = 0.0) -> None:
        """A section title; in the PDF, a subsection starts on a new page
        unless ``room_cm`` (default 5 cm, a plot needs 10) is left below it,
        so no heading is left alone at the end of a page."""
        t = rst_escape(text)
        if level > 1:
            points = round((room_cm or 5.0) / 2.54 * 72)
            self.add(f".. raw:: pdf\n\n   FrameBreak {points}")
        self.add(f"{t}\n{'=-~^'[level - 1] * _text_width(t)}")

    def para(self, text: str) -> None:
        self.add(rst_escape(text))

    def markup(self, text: str) -> None:
        self.add(text)

    def admonition(self, kind: str, lines: Sequence[str]) -> None:
        if not lines:
            return
        body = "\n".join(f"   * {rst_escape(x)}" if len(lines) > 1 else f"   {rst_escape(x)}" for x in lines)
        self.add(f".. {kind}::\n\n{body}")

    def figure(self, filename: str, draw: Callable[[str], object], caption: str) -> None:
        path = os.path.join(self.plot_dir, filename)
        try:
            draw(path)
        except OutputError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken plot must not cost the report
            self.warnings.append(f"plot {filename} could not be drawn: {type(exc).__name__}: {exc}")
            self.para(f"(The plot {filename} could not be drawn: {exc}.)")
            return
        self.plots.append(path)
        ref = f"{self.plot_ref}/{filename}"
        self.add(f".. figure:: {ref}\n   :width: 100%\n   :alt: {rst_escape(caption)}\n\n"
                 f"   {rst_escape(caption)}")

    def text(self) -> str:
        return "\n".join(self.parts)


def _plot_name(test: TestRun, what: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{test.key}-{what}") + ".png"


def _convergence_rst(doc: RstDocument, test: TestRun, level: int) -> None:
    conv = convergence(test)
    if not conv.rounds or not conv.series:
        return
    s = steady_state(test)
    window = tuple(s.rounds) if s is not None else ()
    doc.section("Steady-state convergence", level, room_cm=10)
    doc.figure(_plot_name(test, "convergence"),
               lambda p: plots.convergence(p, conv.series, conv.ylabel, conv.title, window,
                                           conv.legend_title),
               f"{conv.title} ({conv.ylabel}); the shaded band is the measurement window.")
    headers = ["Round"] + [f"{x.label} ({conv.ylabel})" for x in conv.series]
    rows = []
    for i, rnd in enumerate(conv.rounds):
        mark = " *" if rnd in window else ""
        rows.append([f"{rnd}{mark}"] + [fmt(None if math.isnan(x.y[i]) else x.y[i], conv.ylabel)
                                        for x in conv.series])
    doc.markup(list_table(headers, rows, title=f"{conv.title} (* = measurement window)",
                          widths=[10] + [13] * len(conv.series)))


def _window_rst(doc: RstDocument, test: TestRun, level: int) -> None:
    view = window_view(test)
    s = steady_state(test)
    if view is None or s is None:
        return
    doc.section("Measurement window", level, room_cm=10)
    doc.figure(_plot_name(test, "window"), lambda p: plots.measurement_window(p, view),
               f"{view.title}: {verdict(test, s)}; {window_checks(s)}. Bands: average ±10% "
               "and ±20%; dashed: least-squares line over the window.")
    unit = view.ylabel
    scale = metric_display(test.tracking_metric).scale
    avg = s.average
    rows = [
        ["Window", f"rounds {s.first_round}-{s.last_round}" if s.rounds else NA, ""],
        ["Average", fmt(avg * scale, unit), unit],
        ["Range (max - min)", fmt(s.range * scale, unit),
         f"{unit}; {s.range / avg:.1%} of average, limit {DATA_EXCURSION:.0%}" if avg else unit],
        ["Least-squares slope", f"{s.slope * scale:,.4g}", f"{unit} per round"],
        ["Least-squares intercept", f"{s.intercept * scale:,.6g}", unit],
        ["Slope excursion", fmt(s.slope_excursion * scale, unit),
         f"{unit}; {s.slope_excursion / avg:.1%} of average, limit {SLOPE_EXCURSION:.0%}" if avg else unit],
        ["Verdict", verdict(test, s), ""],
    ]
    for rnd, val in zip(s.rounds, s.values):
        rows.append([f"Round {rnd}", fmt(val * scale, unit), unit])
    doc.markup(list_table(["Measurement window", "Value", "Unit / check"], rows,
                          title=f"Steady-state check of {_tracking_label(test)}", widths=[26, 26, 48]))


def _open_test(doc: RstDocument, run: RunResult, test: TestRun, title: str, level: int = 1) -> bool:
    """A test's section heading and SNIA header; False (said in words) when it has no rounds."""
    doc.section(title, level)
    doc.markup(header_rst(snia_header(run, test)))
    if test.rounds:
        return True
    doc.para(f"No {'interval' if test.name == 'wsat' else 'round'} of this test completed "
             f"(status: {test.status or 'unknown'}); there are no figures to show.")
    return False


def _iops_section(doc: RstDocument, run: RunResult, test: TestRun) -> None:
    if not _open_test(doc, run, test, "IOPS"):
        return
    grid = iops_grid(test)
    src = _window_source(test)
    doc.section("IOPS by block size and R/W mix", 2)
    doc.markup(grid_rst(grid, f"Average IOPS (read + write) by block size and R/W mix %, {src}"))
    doc.figure(_plot_name(test, "iops-by-bs"),
               lambda p: plots.lines_by_block_size(p, grid, "IOPS (read + write)",
                                                   "IOPS vs block size per R/W mix"),
               f"IOPS vs block size, one line per R/W mix (read/write %), {src}.")
    doc.figure(_plot_name(test, "iops-matrix"),
               lambda p: plots.heatmap(p, grid, "IOPS: block size x R/W mix", "IOPS"),
               f"The IOPS matrix as a heat map, {src}.")
    _convergence_rst(doc, test, 2)
    _window_rst(doc, test, 2)


def _tp_section(doc: RstDocument, run: RunResult, tests: Sequence[TestRun]) -> None:
    doc.section("Throughput")
    tests = sorted(tests, key=tp_block_size)
    for t in tests:
        if not _open_test(doc, run, t, f"Throughput {t.params.get('block_size', '')}", 2):
            continue
        g = tp_grid([t])
        doc.markup(grid_rst(g, f"SEQ {t.params.get('block_size', '')} MB/s, {_window_source(t)}",
                            corner="Block size"))
        _convergence_rst(doc, t, 3)
        _window_rst(doc, t, 3)
    measured = [t for t in tests if t.rounds]
    if measured:
        g = tp_grid(measured)
        doc.section("Throughput by block size", 2, room_cm=10)
        doc.markup(grid_rst(g, "Average MB/s over each block size's measurement window",
                            corner="Block size"))
        doc.figure("tp-by-bs.png",
                   lambda p: plots.grouped_bars(p, [plots.Panel(g, "SEQ throughput by block size",
                                                                "Throughput (MB/s)")]),
                   "Sequential throughput in MB/s (decimal) per block size, 100% W and 100% R.")


def _lat_section(doc: RstDocument, run: RunResult, test: TestRun) -> None:
    if not _open_test(doc, run, test, "Latency"):
        return
    ave, worst = lat_grids(test)
    src = _window_source(test)
    doc.section("Response time by block size and R/W mix", 2)
    doc.markup(grid_rst(ave, f"AVE response time (µs) by block size and R/W mix %, {src}"))
    doc.markup(grid_rst(worst, f"MAX response time (µs) by block size and R/W mix %, {src}"))
    doc.figure(_plot_name(test, "ave-max"),
               lambda p: plots.grouped_bars(p, [plots.Panel(ave, "AVE response time", "Response time (µs)"),
                                                plots.Panel(worst, "MAX response time", "Response time (µs)")],
                                            legend_title="R/W"),
               f"AVE and MAX response time in µs per block size and R/W mix (TC1/QD1), {src}.")
    rows = [[r.block_size, r.mix, r.direction, fmt(r.mean_us, "µs"), fmt(r.max_us, "µs")]
            + [fmt(v, "µs") for v in r.percentiles] for r in lat_percentiles(test)]
    if rows:
        doc.section("Latency percentiles", 2)
        doc.markup(list_table(["BS", "R/W", "Dir", "AVE µs", "MAX µs"] + [f"{p}% µs" for p in PERCENTILES],
                              rows, widths=[8, 9, 8, 11, 11, 11, 11, 11, 11],
                              title=f"Completion latency percentiles (highest of the window rounds), {src}"))
    _convergence_rst(doc, test, 2)
    _window_rst(doc, test, 2)


def _wsat_section(doc: RstDocument, run: RunResult, test: TestRun) -> None:
    if not _open_test(doc, run, test, "Write Saturation"):
        return
    data = wsat_data(test)
    ws = wsat_summary(test, data)
    doc.section("WSAT figures", 2)
    doc.markup(list_table(["Figure", "Value", "Unit"], [
        ["Intervals", str(ws.intervals), f"of {test.params.get('interval', NA)} s"],
        ["Duration", fmt(ws.duration_s, "s"), "s"],
        ["Total data written", fmt(ws.written_gb, "GB"), "GB"],
        ["FOB IOPS (interval 1)", fmt(ws.first_iops), "IOPS"],
        ["Highest interval", fmt(ws.max_iops), "IOPS"],
        ["Lowest interval", fmt(ws.min_iops), "IOPS"],
        [f"Average of the {ws.tail_label}", fmt(ws.tail_iops), "IOPS"],
        ["Stopped by", test.stop_reason or NA, ""],
    ], title="Write saturation, RND 4KiB 100% W", widths=[40, 30, 30]))
    curve = [plots.WsatCurve(run.name, data.seconds, data.written_gb, data.iops)]
    doc.figure(_plot_name(test, "iops-vs-time"),
               lambda p: plots.wsat(p, curve, "time", title="WSAT: IOPS vs time"),
               "WSAT: IOPS of each interval against time since the purge.")
    doc.figure(_plot_name(test, "iops-vs-tgbw"),
               lambda p: plots.wsat(p, curve, "gb", title="WSAT: IOPS vs total GB written"),
               "WSAT: IOPS of each interval against the total data written (GB, decimal).")
    bins = wsat_bins(data)
    every = len(bins) == ws.intervals
    rows = [[str(b.first) if b.first == b.last else f"{b.first}-{b.last}", fmt(b.end_s, "s"),
             fmt(b.written_gb, "GB"), fmt(b.mean_iops)]
            + ([] if every else [fmt(b.min_iops), fmt(b.max_iops)]) for b in bins]
    headers = ["Interval" if every else "Intervals", "End (s)", "Written (GB)",
               "IOPS" if every else "Mean IOPS"] + ([] if every else ["Min IOPS", "Max IOPS"])
    title = ("IOPS of every interval" if every else
             f"IOPS in {len(bins)} bins of consecutive intervals (every interval is in the XML file)")
    doc.markup(list_table(headers, rows, title=title))


def _summary_section(doc: RstDocument, run: RunResult) -> None:
    d = run.device
    # A rubric, not a section: the PDF breaks pages before sections, and the
    # summary belongs on the first page with the title.
    doc.add(".. rubric:: Summary")
    model = _device_or_desc(run, d.model, "model")
    doc.para(f"{model}, {gb(d.size_bytes):,.1f} GB, tested as {d.path} on {run.host.hostname or 'an unnamed host'}"
             f" with {run.host.fio_version or 'fio'}; run {run.status or 'of unknown status'}, "
             f"started {run.started or NA}" + (f", finished {run.finished}" if run.finished else "") + ".")
    doc.admonition("warning", run_caveats(run))
    doc.markup(summary_table_rst(summary_figures(run)))
    if run.tests:
        doc.markup(steady_table_rst(steady_rows(run)))
    else:
        doc.para("No test of this run has started; there are no figures yet.")


def _two_up(pairs: Sequence[Tuple[str, str]]) -> List[List[str]]:
    """(name, value) pairs laid out in two column pairs, to halve a long table."""
    half = (len(pairs) + 1) // 2
    left, right = list(pairs[:half]), list(pairs[half:])
    right += [("", "")] * (len(left) - len(right))
    return [[a, b, c, d] for (a, b), (c, d) in zip(left, right)]


def _notes_section(doc: RstDocument, run: RunResult) -> None:
    doc.section("Run notes")
    doc.para(f"Run status: {run.status or 'unknown'}"
             + ("; resumed (see the resume records below)" if run.resumed else "")
             + ("; INTERRUPTED" if run.status == "interrupted" else "") + ".")
    caveats = run_caveats(run)
    if caveats:
        doc.admonition("warning", caveats)
    if run.events:
        rows = [[e.time, e.kind, e.test or "run", str(e.round) if e.round else "", e.message]
                for e in run.events]
        doc.markup(list_table(["Time", "Kind", "Test", "Round", "Message"], rows,
                              title="Events of the run (warnings, notes, interruptions, resumes)",
                              widths=[21, 9, 10, 8, 52]))
    else:
        doc.para("The run recorded no events.")
    if run.description.strip() or run.description_fields:
        doc.section("Description file", 2)
        if run.description_fields:
            doc.markup(list_table(["Field", "Value"], sorted(run.description_fields.items()),
                                  widths=[30, 70]))
        elif run.description.strip():
            doc.add("::\n\n" + "\n".join("   " + line for line in run.description.strip().splitlines()))
    doc.section("Run options", 2)
    doc.markup(list_table(["Option", "Value", "Option", "Value"], _two_up(sorted(run.options.items())),
                          widths=[20, 30, 20, 30],
                          title="Every option of the run as stored in the result file"))


def report_rst(run: RunResult, doc: RstDocument) -> str:
    """The whole report as reST; plots are written as a side effect into ``doc.plot_dir``."""
    doc.title(f"tkperf report: {run.name}")
    doc.para(f"SNIA Solid State Storage Performance Test Specification (PTS) tests run with fio "
             f"by tkperf {run.tkperf_version or 'unknown version'}; report built by tkperf {__version__}.")
    _summary_section(doc, run)
    _notes_section(doc, run)
    iops = run.test("iops")
    if iops is not None:
        _iops_section(doc, run, iops)
    tps = run.tests_named("tp")
    if tps:
        _tp_section(doc, run, tps)
    lat = run.test("lat")
    if lat is not None:
        _lat_section(doc, run, lat)
    wsat = run.test("wsat")
    if wsat is not None:
        _wsat_section(doc, run, wsat)
    return doc.text()


# =============================================================================
# 3. Rendering
# =============================================================================

_HTML_CSS = """
body { font-family: sans-serif; }
main { max-width: 60em; }
table { font-size: 0.9em; border-collapse: collapse; margin: 0.8em 0; }
table caption { font-weight: bold; text-align: left; padding-bottom: 0.3em; }
th, td { padding: 0.15em 0.5em; }
td { text-align: left; }
figure img, div.figure img { max-width: 100%; height: auto; }
figcaption, p.caption { font-size: 0.9em; }
div.warning, aside.admonition.warning { border-left: 4px solid #c33; padding: 0.3em 1em; }
"""

# rst2pdf stylesheet: A4, small table text so an 8-column matrix fits the page.
_PDF_STYLE = """
pageSetup:
  size: A4
  margin-top: 1.5cm
  margin-bottom: 1.5cm
  margin-left: 1.5cm
  margin-right: 1.5cm
styles:
  base:
    fontSize: 9
  table-body:
    fontSize: 7.5
    leading: 9
  table-heading:
    fontSize: 7.5
    leading: 9
  table-title:
    fontSize: 9
    spaceBefore: 4
    keepWithNext: true
  heading1:
    fontSize: 150%
  heading2:
    fontSize: 125%
  heading3:
    fontSize: 110%
  title:
    fontSize: 180%
    spaceAfter: 6
  figure:
    spaceBefore: 2
    spaceAfter: 4
  figure-caption:
    fontSize: 8
  admonition:
    fontSize: 8.5
"""


class _LogCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _docutils_settings(warnings: io.StringIO) -> Dict[str, object]:
    return {
        "_disable_config": True,  # a user's docutils.conf must not change the report
        "report_level": 2,
        "halt_level": 5,
        "warning_stream": warnings,
        "file_insertion_enabled": False,
        # Raw is only ever written by RstDocument (PDF page breaks); every text
        # from a result file is escaped, so no raw block can come from one.
        "raw_enabled": True,
        "input_encoding": "utf-8",
        "output_encoding": "utf-8",
        "embed_stylesheet": True,
        "syntax_highlight": "none",
    }


def _warnings_of(stream: io.StringIO, what: str) -> List[str]:
    return [f"{what}: {line.strip()}" for line in stream.getvalue().splitlines() if "(WARNING" in line
            or "(ERROR" in line or "(SEVERE" in line]


def parse_rst(text: str, source_path: str) -> Tuple[object, List[str]]:
    """reST -> a docutils doctree (shared by the HTML and PDF writers) and its warnings."""
    from docutils.core import publish_doctree

    stream = io.StringIO()
    doctree = publish_doctree(text, source_path=source_path,
                              settings_overrides=_docutils_settings(stream))
    return doctree, _warnings_of(stream, "reST")


def render_html(doctree: object, base_dir: str) -> Tuple[bytes, List[str]]:
    """Doctree -> one self-contained HTML file: every image becomes a data URI."""
    from docutils import nodes
    from docutils.core import publish_from_doctree
    from docutils.writers import html5_polyglot

    tree = doctree.deepcopy()  # type: ignore[attr-defined]
    warnings: List[str] = []
    for image in tree.findall(nodes.image):
        uri = image["uri"]
        if uri.startswith("data:"):
            continue
        path = uri if os.path.isabs(uri) else os.path.join(base_dir, uri)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            warnings.append(f"HTML: cannot embed {uri}: {exc.strerror}")
            continue
        image["uri"] = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    stream = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="tkperf-css-") as tmp:
        css = os.path.join(tmp, "tkperf.css")
        with open(css, "w", encoding="utf-8") as fh:
            fh.write(_HTML_CSS)
        settings = dict(_docutils_settings(stream), stylesheet_path=f"minimal.css,plain.css,{css}",
                        stylesheet_dirs=list(html5_polyglot.Writer.default_stylesheet_dirs))
        out = publish_from_doctree(tree, writer=html5_polyglot.Writer(), settings_overrides=settings)
    return out, warnings + _warnings_of(stream, "HTML")


def render_pdf(doctree: object, base_dir: str) -> Tuple[Optional[bytes], List[str]]:
    """Doctree -> PDF with rst2pdf; (None, [reason]) when rst2pdf is missing or fails.

    rst2pdf reports problems through its logger (with its own stderr
    handler); they are collected here and returned as warnings instead.
    """
    try:
        from rst2pdf.createpdf import RstToPdf
    except ImportError as exc:
        return None, [f"PDF not written: rst2pdf is not available ({exc}); "
                      "install it with 'pip install rst2pdf'"]
    collector = _LogCollector()
    logger = logging.getLogger("rst2pdf")
    saved = (list(logger.handlers), logger.propagate)
    for h in saved[0]:
        logger.removeHandler(h)
    logger.addHandler(collector)
    logger.propagate = False
    buf = io.BytesIO()
    try:
        with tempfile.TemporaryDirectory(prefix="tkperf-pdf-") as tmp:
            style = os.path.join(tmp, "tkperf.yaml")
            with open(style, "w", encoding="utf-8") as fh:
                fh.write(_PDF_STYLE)
            rc = RstToPdf(stylesheets=[style], basedir=base_dir, breaklevel=1, breakside="any", splittables=True,
                          repeat_table_rows=True, footer="###Page###").createPdf(
                doctree=doctree.deepcopy(), output=buf)  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - a failing PDF writer must not cost the other formats
        return None, [f"PDF not written: rst2pdf failed: {type(exc).__name__}: {exc}"]
    finally:
        logger.removeHandler(collector)
        for h in saved[0]:
            logger.addHandler(h)
        logger.propagate = saved[1]
    problems = [f"PDF: {m}" for m in collector.messages]
    if rc or not buf.getvalue().startswith(b"%PDF"):
        return None, ["PDF not written: rst2pdf failed"] + problems
    return buf.getvalue(), problems


def safe_name(name: str) -> str:
    """A run name fit for file names: no directories, nothing hidden."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-") or "report"


def prepare_outdir(outdir: str, plot_dirname: str) -> str:
    """Create the output and plot directories; an OutputError says why not."""
    ensure_dir(outdir, "report directory")
    return ensure_dir(os.path.join(outdir, plot_dirname), "report directory")


def _remove_stale_plots(plot_dir: str, keep: Sequence[str]) -> None:
    """Plots an earlier build wrote that this one did not (a test since removed)."""
    wanted = {os.path.basename(p) for p in keep}
    try:
        names = os.listdir(plot_dir)
    except OSError:
        return
    for name in names:
        if name.endswith(".png") and name not in wanted:
            try:
                os.unlink(os.path.join(plot_dir, name))
            except OSError:
                pass


def render_document(doc: RstDocument, text: str, outdir: str, name: str,
                    formats: Sequence[str]) -> ReportResult:
    """Write ``text`` as the chosen formats next to its plots, each file atomically."""
    paths: List[str] = []
    warnings = list(doc.warnings)
    rst_path = os.path.join(outdir, f"{name}.rst")
    if "rst" in formats:
        atomic_write(rst_path, text.encode("utf-8"))
        paths.append(rst_path)
    doctree = None
    if "html" in formats or "pdf" in formats:
        doctree, problems = parse_rst(text, rst_path)
        warnings += problems
    if "html" in formats:
        html, problems = render_html(doctree, outdir)
        warnings += problems
        path = os.path.join(outdir, f"{name}.html")
        atomic_write(path, html)
        paths.append(path)
    if "pdf" in formats:
        pdf, problems = render_pdf(doctree, outdir)
        warnings += problems
        if pdf is not None:
            path = os.path.join(outdir, f"{name}.pdf")
            atomic_write(path, pdf)
            paths.append(path)
    _remove_stale_plots(doc.plot_dir, doc.plots)
    paths.append(doc.plot_dir)
    return ReportResult(paths=tuple(paths), warnings=tuple(warnings))


def build_report(run: RunResult, outdir: str, formats: Sequence[str] = REPORT_FORMATS) -> ReportResult:
    """Build the report of ``run`` in ``outdir``: ``<name>.rst``, ``.html``,
    ``.pdf`` and the plots in ``<name>-plots/``; rebuilding replaces them.

    A missing PDF toolchain is a warning in the result, not an error; an
    output directory that cannot be written raises :class:`OutputError`.
    """
    formats = parse_report_formats(formats)
    name = safe_name(run.name)
    plot_dirname = f"{name}-plots"
    plot_dir = prepare_outdir(outdir, plot_dirname)
    doc = RstDocument(plot_dir, plot_dirname)
    text = report_rst(run, doc)
    return render_document(doc, text, outdir, name, formats)
