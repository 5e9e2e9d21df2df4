"""``--dry-run``: how long the run takes and the verdict it would reach,
then (with ``--jobs``) the fio job files, touching nothing.

The summary comes first: one row per test with its purge, its WIPC, its
measurement as rounds x round time (or a stream's limits) and its time as a
range; then the total, whose lower bound is the sum of the rows' lower
bounds.  Writes whose length depends on an amount (WIPC, WSAT's TGBW, a
purge that overwrites) are timed at a stated write rate
(:mod:`tkperf.kit.writerate`: the emulated SSD's model speed, or an
assumed 500 MB/s), and the summary says which.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from tkperf.engine.runner import settings_for
from tkperf.fio.jobs import FioSettings, job_file
from tkperf.kit import registry, writerate
from tkperf.kit.options import RunOptions
from tkperf.kit.precondition import WIPC_BS, wipc_job
from tkperf.kit.shapes import Estimate, duration_rough
from tkperf.model import pts, segments
from tkperf.model.results import DeviceInfo, format_gb
from tkperf.target import armap
from tkperf.target import purge as purge_mod

#: Purge methods that write the whole device (their time is its size at the stated rate).
OVERWRITING = ("ata", "ata-normal", "sanitize-overwrite", "scsi")


@dataclass(frozen=True)
class TestTime:
    """One row of the summary: a test's purge, WIPC and measurement, in seconds."""

    key: str
    purge: str
    purge_high_s: float
    wipc_bytes: int
    measure: str
    low_s: float
    high_s: float

    #: The write rate the WIPC is timed at (bytes/s).
    rate_bps: float = writerate.DEFAULT.bps

    @property
    def wipc_s(self) -> float:
        return self.wipc_bytes / self.rate_bps

    @property
    def total_low_s(self) -> float:
        return self.wipc_s + self.low_s

    @property
    def total_high_s(self) -> float:
        return self.purge_high_s + self.wipc_s + self.high_s


def purge_method(opts: RunOptions, dev: DeviceInfo) -> str:
    """The purge a test of this run starts with, as ``--purge auto`` picks it here."""
    if opts.purge.startswith(purge_mod.CMD_PREFIX):
        return "vendor cmd"
    try:
        return purge_mod.choose(opts.purge, dev)[0]
    except Exception:  # a refusal is said by the run's own checks
        return opts.purge


def measurement(est: Estimate) -> str:
    """A shape's estimate in a few words: rounds x round time (and what
    follows the rounds: LAT's capture), or its first line."""
    if est.rounds[1]:
        count = f"{est.rounds[0]}" if est.rounds[0] == est.rounds[1] else f"{est.rounds[0]} to {est.rounds[1]}"
        text = f"{count} rounds x {duration_rough(est.round_s)} ({len(est.jobs)} workloads)"
        after = est.low_s - est.rounds[0] * est.round_s
        return text + (f" + {duration_rough(after)} after" if after >= 1.0 else "")
    return est.lines[0].lstrip("# ") if est.lines else ""


def times(dev: DeviceInfo, opts: RunOptions) -> List[TestTime]:
    """Every test's row of the summary, in run order."""
    method = purge_method(opts, dev)
    # a discard or a crypto erase takes seconds; an overwrite, the device at the stated rate
    rate = writerate.bps()
    purge_high = dev.size_bytes / rate if method in OVERWRITING else 0.0
    out = []
    for name, plan in registry.plan_all(opts, dev.size_bytes):
        est = plan.shape.estimate(opts.for_test(registry.get(name)), dev.size_bytes)
        wipc = opts.wipc_loops * opts.active_bytes(dev.size_bytes) if plan.wipc and opts.wipc_loops > 0 else 0
        out.append(TestTime(plan.key, method, purge_high, wipc, measurement(est), est.low_s, est.high_s, rate))
    return out


def summary(dev: DeviceInfo, opts: RunOptions, profile: str = "ssd") -> Tuple[List[str], List[TestTime]]:
    """The summary lines (without the verdict) and the rows they show; the
    HDD profile's settings are not headed by a PTS revision (none applies)."""
    rows = times(dev, opts)
    lines = _heading(dev, opts, profile) + ["#"] + _row_lines(rows) + _total_lines(rows)
    return lines, rows


def _heading(dev: DeviceInfo, opts: RunOptions, profile: str) -> List[str]:
    """The summary's first lines: the device, the run's settings and where each test runs."""
    title = "HDD profile (not a SNIA PTS run)" if profile == "hdd" else opts.revision.title
    transport = f", {dev.transport}" if dev.transport not in ("", dev.kind) else ""
    lines: List[str] = [f"# dry run: nothing is written to {dev.path} "
                        f"({format_gb(dev.size_bytes)}, {dev.kind}{transport})",
                        f"# {title}: OIO TC{opts.numjobs}/QD{opts.iodepth}, active range "
                        f"{opts.active_range}%" + (f", test range {pts.range_text(opts.test_bytes(dev.size_bytes))}"
                                                   if opts.test_range else "")
                        + (f" in {opts.ar_segments:,} ActiveRange segments (seed {opts.ar_segment_seed})"
                           if opts.segmented else "")
                        + f", write cache {opts.write_cache}"]
    narrowed = [n for n in opts.tests if opts.uses_test_range(registry.get(n))]
    whole = [n for n in opts.tests if n not in narrowed]
    if opts.segmented and narrowed:
        lay = opts.segment_layout(dev.size_bytes)
        lines.append(f"# {', '.join(narrowed)}: fio runs on {armap.map_path()}, a device-mapper map of "
                     f"{lay.count:,} segments of {segments.size_text(lay.size)} spread randomly across the active "
                     "range, none touching; the WIPC, purge and health readings use the device itself")
    if opts.test_range and whole:
        lines.append(f"# {', '.join(whole)}: over the whole active range, on the device itself (SNIA defines "
                     "the test range for IOPS, TP and LAT)")
    if opts.purge.startswith(purge_mod.CMD_PREFIX):
        lines.append(f"# each test's purge runs the vendor command {opts.purge}")
    return lines


def _row_lines(rows: List[TestTime]) -> List[str]:
    """The table: a header line, then one line per test."""
    width = max([len(r.key) for r in rows] + [4])
    lines = [f"# {'test':<{width}}  {'purge':<14} {'WIPC':<18} {'time':<17} measurement"]
    for r in rows:
        wipc = f"{format_gb(r.wipc_bytes)}, {duration_rough(r.wipc_s)}" if r.wipc_bytes else "-"
        span = duration_rough(r.low_s) if r.low_s == r.high_s else \
            f"{duration_rough(r.low_s)} to {duration_rough(r.high_s)}"
        lines.append(f"# {r.key:<{width}}  {r.purge:<14} {wipc:<18} {span:<17} {r.measure}")
    return lines


def _total_lines(rows: List[TestTime]) -> List[str]:
    """The total as a range, and the write rate that times the writes of a set amount."""
    low = sum(r.total_low_s for r in rows)
    high = sum(r.total_high_s for r in rows)
    wipc_total = sum(r.wipc_bytes for r in rows)
    purge_total = sum(r.purge_high_s for r in rows)
    lines = [f"# total: {duration_rough(low)} to {duration_rough(high)} "
             f"(lower bound: each test's fewest rounds and its WIPC; upper bound: the most rounds"
             + (f", the purges' overwrites ({duration_rough(purge_total)})" if purge_total else "")
             + " and the WIPC)"]
    amounts = ([f"WIPC {format_gb(wipc_total)} in all"] if wipc_total else []) \
        + [f"{r.key}'s byte limit" for r in rows if "GB written" in r.measure] \
        + (["the purges' overwrites"] if purge_total else [])
    if amounts:
        lines.append(f"# writes of a set amount ({', '.join(amounts)}) are timed at "
                     f"{writerate.current().text()}")
    return lines


def job_files(dev: DeviceInfo, opts: RunOptions, settings: FioSettings) -> List[str]:
    """Every test's fio job files (``--jobs``): the WIPC, then the measurement."""
    lines: List[str] = []
    for name, plan in registry.plan_all(opts, dev.size_bytes):
        mine = opts.for_test(registry.get(name))
        own = settings_for(settings, dev, opts, mine)
        wipc = plan.wipc and mine.wipc_loops > 0
        lines.append(f"# --- {plan.key}: purge ({opts.purge})"
                     + (f", WIPC {opts.wipc_loops}x the active range" if wipc else "")
                     + (f"; over {_range_words(dev, mine)}" if opts.test_range else ""))
        if wipc:
            lines.append(job_file(own, [wipc_job(mine.wipc_loops, mine.iodepth, plan.wipc_bs or WIPC_BS,
                                                 mine.wipc_size(dev.size_bytes),
                                                 dev.resolved if mine.segmented else "")]))
        est = plan.shape.estimate(mine, dev.size_bytes)
        lines.extend(est.lines)
        lines.append(job_file(own, est.jobs))
    return lines


def _range_words(dev: DeviceInfo, mine: RunOptions) -> str:
    """What one test of a run with a test range covers, as the plan says it."""
    if not mine.test_range:
        return f"the whole active range ({pts.range_text(mine.test_bytes(dev.size_bytes))}): " \
               "the test range is for the tests SNIA defines it for"
    return f"the test range ({pts.range_text(mine.test_bytes(dev.size_bytes))}" \
           + (f" in {mine.ar_segments:,} ActiveRange segments)" if mine.segmented else " at the start)")
