"""How CBW results are shown: the sweep's sections of :mod:`tkperf.api`
given this test type and its own SNIA header -- the max, mid and min
points, IOPS and mean response time by TC and QD, IOPS vs OIO, the
demand-intensity curve, the response-time histograms and confidence plot
of the three points, every point of the sweep and the steady state before
it -- plus the JEDEC mix: the transfer sizes asked for, and the mean
transfer size and read share each point issued.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, Sequence

from tkperf import api
from tkperf.pts import (
    NA,
    Header,
    SweepView,
    steady_rounds,
    sweep_header,
)
from tkperf.pts.sweep.header import stimulus_words as sweep_stimulus_words
from tkperf.pts.sweep.header import structure as sweep_structure
from tkperf.pts.sweep.points import PREWRITE as SWEEP_PREWRITE
from tkperf.pts.sweep.points import Point as SweepPoint
from tkperf.pts.sweep.report import compare_section as sweep_compare_section
from tkperf.pts.sweep.report import report_section as sweep_report_section
from tkperf.pts.sweep.structure import PTS20 as SWEEP_PTS20
from tkperf.testtypes.cbw import DATA, MIX, CompositeWorkloadTest, bssplit_shares, mean_transfer


def _size(n: int) -> str:
    """512 B, 1.5 KiB, 64 KiB: JESD219's sizes."""
    return f"{n:,} B" if n < 1024 else f"{n / 1024:g} KiB"


def zones_text(distribution: str) -> str:
    """'zoned:50/5:30/15:20/80' -> '50% of the I/Os to the first 5% of the range, 30% to the next 15%, ...'."""
    parts = [z.split("/") for z in distribution.split(":")[1:]]
    if not parts or any(len(z) != 2 for z in parts):
        return distribution or NA
    words = [f"{io}% of the I/Os to the first {lba}% of the range" if i == 0 else
             f"{io}% to the {'last' if i == len(parts) - 1 else 'next'} {lba}%" for i, (io, lba) in enumerate(parts)]
    return ", ".join(words)


def cbw_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    p = test.params
    mix = p.get("mix", NA)
    extra = (
        ("Transfer sizes", f"fio bssplit={p.get('bssplit', NA)} (size/percent; mean "
         f"{mean_transfer(p['bssplit']) if 'bssplit' in p else 0:,.0f} B)"),
        ("Access", f"random, random_distribution={p.get('random_distribution', NA)}: "
         + zones_text(p.get("random_distribution", ""))),
        ("Smallest transfer", f"{p.get('smallest_block', NA)} B at 512 B aligned offsets: the target needs "
         "512 B logical sectors (a 4Kn drive cannot run this mix)"),
        ("Alignment", ALIGNMENT),
    )
    stimulus, wdpc = sweep_stimulus_words(test, f"JEDEC enterprise mix, R/W {mix}, incompressible",
                                          f"the JEDEC mix {mix}")
    head = sweep_header(ctx, test, stimulus, wdpc, extra)
    # Every CBW job refills its buffers, whatever the run's --refill-buffers says.
    setup = tuple(("Data pattern", p.get("data", DATA)) if k == "Data pattern" else (k, v) for k, v in head.setup)
    return replace(head, setup=setup)


#: What the header says of the offsets of the mix (docs/test-cbw.rst, "Alignment").
ALIGNMENT = ("every transfer at a 512 B aligned offset: fio aligns a bssplit mix to its smallest size, so "
             "most transfers of 4 KiB and more are not 4 KiB aligned (87% in a fio run on a loop "
             "device); JESD219's own alignment rule could not be established, so it is disclosed here, not "
             "judged in the conformance verdict")


def mix_table(test: api.TestRun) -> api.Table:
    pairs = bssplit_shares(test.params["bssplit"]) if "bssplit" in test.params else ()
    rows = [[_size(n), f"{share}%"] for n, share in pairs]
    return api.table(["Transfer size", "Share of I/Os"], rows, title="The JEDEC transfer-size mix (fio bssplit)",
                     widths=[30, 30])


def issued_table(points: Sequence[SweepPoint], expected_bytes: float) -> api.Table:
    """What every point issued: its read share of the I/Os and its mean transfer size."""
    rows = []
    for p in points:
        w = p.workload
        ios = (w.read.ios + w.write.ios) if w is not None else 0
        if w is None or not ios:
            rows.append([p.label, NA, NA, NA])
            continue
        rows.append([p.label, f"{ios:,}", f"{100.0 * w.read.ios / ios:.1f}",
                     f"{(w.read.io_bytes + w.write.io_bytes) / ios:,.0f}"])
    return api.table(["Point", "I/Os", "Read share %", "Mean transfer B"], rows,
                     title=f"The mix as issued per point (asked for: {MIX}% reads, a mean transfer of "
                     f"{expected_bytes:,.0f} B)", widths=[22, 22, 22, 22])


def last_round_points(test: api.TestRun) -> List[SweepPoint]:
    """Under the PTS 2.0 structure, the sweep points of the last round as they ran (pre-write left out)."""
    rounds = steady_rounds(test)
    return [SweepPoint(w.numjobs, w.iodepth, w.iops, w.lat_mean_us, w)
            for w in (rounds[-1].workloads if rounds else ()) if not w.name.startswith(SWEEP_PREWRITE)]


def mix_blocks(ctx: api.ReportContext, test: api.TestRun, points: Sequence[SweepPoint]) -> list:
    expected = mean_transfer(test.params["bssplit"]) if "bssplit" in test.params else 0.0
    pts20 = sweep_structure(test) == SWEEP_PTS20
    table = issued_table(last_round_points(test) if pts20 else points, expected)
    if pts20:
        table = replace(table, title=table.title + ", in the last steady-state round")
    return [api.Heading("The JEDEC mix", 3), mix_table(test), table]


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return sweep_report_section(ctx, tests, CompositeWorkloadTest(), cbw_header, mix_blocks)


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> List:
    return sweep_compare_section(ctx, runs, labels, CompositeWorkloadTest())


class CompositeWorkloadView(SweepView):
    """How CompositeWorkload results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def instance_title(self, test: api.TestRun) -> str:
        return self.kind.short

    def check_data(self, test: api.TestRun) -> None:
        super().check_data(test)
        text = test.params.get("bssplit")
        if text is None:
            return
        try:
            pairs = bssplit_shares(text)
        except ValueError:
            raise ValueError(f"param bssplit {text[:40]!r} is not fio's SIZE/PERCENT:... form") from None
        if not pairs or any(n <= 0 or not 0 <= share <= 100 for n, share in pairs) or \
                not 0 < sum(share for _n, share in pairs) <= 100:
            raise ValueError(f"param bssplit {text[:40]!r} has a size of 0 or shares that do not add up to 1-100%")
