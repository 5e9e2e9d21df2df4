"""How HDD throughput by zone is shown: MB/s of SEQ 1024KiB W and R against
the position on the disk (0% the outer edge at LBA 0, 100% the inner end),
as a chart and as a table of every zone; the outer and inner figures and
their ratio; the phases run.  In a comparison: the headline figures and
the MB/s-vs-position curves of every run overlaid, per direction.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np

from tkperf import api
from tkperf.pts import HDD_SUMMARY_RANK as SUMMARY_RANK
from tkperf.pts import (
    NA,
    NO_PREPARATION,
    Chart,
    Header,
    duration,
    figures_blocks,
    fmt,
    gb,
    hdd_comparison,
    snia_header,
    stored,
    test_sections,
)
from tkperf.testtypes.hdd_zones import BS, DIRECTIONS, HddZonesTest, Zone, measured, parse_zone_name, sizes_text, zones

POSITION_LABEL = "Position on the disk (% of capacity: 0 = outer edge, LBA 0; 100 = inner end)"
POSITION_TICKS = (0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0)
NO_STEADY = ("not applicable: one sweep over positions, not a loop until steady; an HDD's sequential "
             "rate depends on where it reads, not on its write history")
ABOUT = ("An HDD's outer tracks hold more sectors per revolution than its inner ones, so its sequential "
         "rate falls from the first LBA (outer edge on common drives) to the last. Each zone is a "
         "stretch of the disk starting at the position shown; fio writes (reads) it sequentially for "
         "the time per zone, wrapping inside the zone, and the zones run back to back from outer to "
         "inner without a pause, writes first, then reads.")


def zones_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    p = test.params
    zs = zones(test)
    passes = p.get("passes", "1")
    middle = [
        ("Zones", f"{p.get('zones', NA)} from outer to inner over {gb(stored.whole(test, 'span_bytes')):,.1f} GB; "
                  "zone i of N starts at i/N of the range, aligned to 1 MiB"),
        ("Zone size", sizes_text([(z.offset, z.size) for z in zs]) if zs else NA),
        ("Time per zone", f"{duration(stored.number(test, 'runtime'), rough=True)} per direction, "
                          "time based, wrapping inside the zone"),
        ("Passes", f"{passes}: each a write sweep, then a read sweep, each one fio process"
         + ("; a zone's spread over the passes shows the repeatability" if passes != "1" else "")),
        ("Phases run", f"{len(test.rounds)} of {2 * int(passes) if passes.isdigit() else NA}"),
        ("Steady state", NO_STEADY),
    ]
    stimulus = (f"SEQ {p.get('block_size', NA)} 100% W, then SEQ {p.get('block_size', NA)} 100% R, "
                "zone by zone from outer to inner")
    return snia_header(ctx.run, test, stimulus, middle, without_wipc=NO_PREPARATION, wdpc="none")


def _curve(label: str, zs: Sequence[Zone], side: str) -> api.Curve:
    got = measured(zs, side)
    return api.Curve(label, np.array([z.position_pct for z in got]),
                     np.array([z.mb_s(side) or math.nan for z in got]))


def position_chart(curves: Sequence[api.Curve], title: str) -> api.XYChart:
    return api.XYChart(tuple(curves), POSITION_LABEL, "MB/s (decimal)", title, xticks=POSITION_TICKS)


def zone_table(test: api.TestRun, zs: Sequence[Zone]) -> api.Table:
    """Every zone: where it is and its MB/s per direction (and spread over passes)."""
    passes = max((len(z.passes(s)) for z in zs for s, _, _ in DIRECTIONS), default=0)
    headers = ["Zone", "Start (GB)", "Position (%)"] + [f"{label} MB/s" for _, _, label in DIRECTIONS]
    if passes > 1:
        headers += [f"{label} spread (%)" for _, _, label in DIRECTIONS]
    rows = []
    for z in zs:
        row = [str(z.index), f"{gb(z.offset):,.2f}", f"{z.position_pct:.1f}"]
        row += [fmt(z.mb_s(side), "MB/s") for side, _, _ in DIRECTIONS]
        if passes > 1:
            row += [fmt(z.spread_pct(side)) for side, _, _ in DIRECTIONS]
        rows.append(row)
    what = f"mean of {passes} passes, spread = (max - min) / mean" if passes > 1 else "one pass"
    return api.table(headers, rows, title=f"{test.key}: MB/s of every zone, outer to inner ({what})",
                     widths=[10, 16, 16] + [16] * (len(headers) - 3))


def phases_table(test: api.TestRun) -> api.Table:
    rows = []
    for r in test.rounds:
        moved = sum(w.read.io_bytes + w.write.io_bytes for w in r.workloads)
        rows.append([str(r.index), test.data.get(f"phase.{r.index}", f"phase {r.index}"),
                     str(len(r.workloads)), fmt(r.fio_s, "s"), f"{gb(moved):,.2f}"])
    return api.table(["Phase", "What", "Zones", "fio time (s)", "GB moved"], rows,
                     title="Phases in the order run (each one fio process)", widths=[8, 50, 10, 16, 16])


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, HddZonesTest.title, zones_header, measured_blocks)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something."""
    out: list = []
    zs = zones(test)
    curves = [_curve(label, zs, side) for side, _, label in DIRECTIONS if measured(zs, side)]
    out += figures_blocks(HddZonesTest(), test)
    out += [api.Heading("MB/s vs position on the disk", 2, room_cm=10), api.Paragraph(ABOUT),
            ctx.chart(test, "mbs-vs-position", position_chart(curves, f"{test.key}: MB/s vs position"),
                      "Sequential MB/s (1 MB = 10^6 bytes) of each zone at its starting position, "
                      "0% the outer edge (LBA 0), 100% the inner end; W and R."),
            zone_table(test, zs), phases_table(test)]
    return out


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    out, tests = hdd_comparison(HddZonesTest(), ctx, runs, labels)
    if not out:
        return []
    per_run = [zones(t) if t is not None else [] for t in tests]
    for side, rw, label in DIRECTIONS:
        by_pos: List[Dict[float, Optional[float]]] = [
            {round(z.position_pct, 1): z.mb_s(side) for z in measured(zs, side)} for zs in per_run]
        positions = sorted({p for found in by_pos for p in found})
        if not positions:
            continue
        grid = ctx.by_runs([(f"{p:.1f}", p) for p in positions],
                           lambda i, j: by_pos[j].get(positions[i]),  # noqa: B023 - called here, at once
                           "MB/s", "Position (%)")
        curves = [_curve(run_label, zs, side) for run_label, zs in zip(ctx.labels, per_run) if measured(zs, side)]
        out += [api.Heading(f"SEQ 100% {label}: MB/s vs position", 2, room_cm=10),
                Chart(f"hdd-zones-{rw}-vs-position.png",
                      position_chart(curves, f"SEQ 100% {label}: MB/s vs position, every run"),
                      f"SEQ 100% {label} MB/s of each zone at its position (0% outer, 100% inner), "
                      "every run overlaid."),
                ctx.grid_table(grid, f"SEQ 100% {label}: MB/s by position (% of capacity), n/a where a run "
                               "has no zone there")]
    return out


class HddZonesView(api.View):
    """How HddZones results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def instance_title(self, test: api.TestRun) -> str:
        bs = test.params.get("block_size", api.format_bs(BS))
        return self.kind.short if bs == api.format_bs(BS) else f"{self.kind.short} {bs}"

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        """The SEQ 1024KiB lines: the mean over the zones (outer to inner)."""
        if test.params.get("block_size", api.format_bs(BS)) != api.format_bs(BS):
            return {}  # another block size (an imported TKperf file's 4k zones)
        figures = {f.key: f for f in self.kind.headline(test)}
        out = {}
        for rw in ("write", "read"):
            f = figures.get(f"seq_{rw}_zone_mean_mb_s")
            if f is not None:
                out[f"seq_{rw}_mb_s"] = api.SummaryValue(f.value, "HDD-ZONES: mean of the zones, outer to inner",
                                                         SUMMARY_RANK)
        return out

    def check_data(self, test: api.TestRun) -> None:
        if test.series:
            raise ValueError("an HDD-ZONES test keeps its sweeps as rounds, not as a series")
        for r in test.rounds:
            for w in r.workloads:
                parsed = parse_zone_name(w.name)
                if parsed is None or w.rw != {"w": "write", "r": "read"}[parsed[1]]:
                    raise ValueError(f"phase {r.index} has a workload {w.name!r} that HDD-ZONES does not run")
                if f"zone.{parsed[0]}.offset" not in test.data:
                    raise ValueError(f"zone {parsed[0]} was measured but its offset is not stored")
        for k, v in test.data.items():
            if k.startswith("zone") and not v.isdigit():
                raise ValueError(f"data {k}={v!r} is not a byte count")
