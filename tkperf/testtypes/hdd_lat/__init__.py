"""HDD random-access latency: RND 4KiB 100% R and 100% W at TC 1/QD 1, in
rounds until the mean response times repeat (the 20/10 rule as a
repeatability check, as for ``hdd-iops``).

At QD 1 a drive cannot reorder anything: every read waits for a seek and,
on average, half a revolution, which is what this test measures.  Writes
may be absorbed by the drive's volatile write cache (the header discloses
its state).  Every workload keeps its response-time histogram (fio json+),
so the report shows the average, the 99th percentile and the maximum, and
tkperf's latency QoS part (nines table, histogram, confidence plot).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Optional, Tuple

from tkperf import api
from tkperf.pts import (
    MAX_RUNTIME,
    histogram,
    nonempty,
    side_label,
    side_word,
)
from tkperf.pts import hdd_cell_jobs as cell_jobs
from tkperf.pts import hdd_repeat_plan as repeat_plan
from tkperf.pts import hdd_tracked_cells as tracked_cells
from tkperf.pts import hdd_window_cells as window_cells

BLOCK_SIZES: Tuple[int, ...] = (4096,)
#: Random read and random write: the two directions of random access.
MIXES: Tuple[int, ...] = (100, 0)
CELL_S = 60
#: The percentiles the headline figures quote, where the I/O count supports them.
HEADLINE_PERCENTILES: Tuple[str, ...] = ("99", "99.9")


def direction(mix: int) -> str:
    return "read" if mix == 100 else "write"


def merged_bins(ws: List[api.Workload], side: str) -> histogram.Bins:
    """The response-time histogram of one direction over ``ws`` (the window)."""
    return histogram.merge(*(getattr(w, side).bins for w in ws))


def percentile(ws: List[api.Workload], side: str, p: str) -> Optional[float]:
    """Percentile ``p`` of one direction over the window, from the merged
    histograms; None where the I/O count does not support it (or without bins)."""
    bins = merged_bins(ws, side)
    if not bins or not histogram.supported(histogram.total(bins), p):
        return None
    return histogram.percentile_us(bins, float(p))


def response_times(ws: List[api.Workload], side: str) -> Tuple[float, float, int]:
    """(mean weighted by I/O count, maximum, I/Os) of one direction over ``ws``."""
    stats = [getattr(w, side) for w in ws if getattr(w, side).ios]
    ios = sum(s.ios for s in stats)
    mean = sum(s.lat_mean_us * s.ios for s in stats) / ios if ios else 0.0
    return mean, max((s.lat_max_us for s in stats), default=0.0), ios


@dataclass(frozen=True)
class HddLatencySettings:
    """The values of hdd-lat's options (typed; ``opts.of(HddLatencySettings)``)."""

    option_prefix: ClassVar[str] = "hdd_lat_"

    #: Block sizes in bytes.
    bs: Tuple[int, ...]
    #: Seconds.
    time: int


class HddLatencyTest(api.TestType):
    #: Runs over the test range (``--test-range``): the HDD profile has no
    #: preconditioning, so the test range is simply the range it tests
    #: (``RunOptions.for_test``).
    uses_test_range = True
    name = "hdd-lat"
    title = "HDD random-access latency"
    short = "HDD-LAT"
    order = 82
    view = "tkperf.testtypes.hdd_lat.view:HddLatencyView"
    default_profiles: Tuple[str, ...] = ("hdd",)
    options = api.OptionSet(HddLatencySettings, (
        api.Option("hdd_lat_bs", ("--hdd-lat-bs",), "HDD-LAT block sizes (default 4k)",
                   parse=api.parse_block_sizes, format=api.format_block_sizes, default=BLOCK_SIZES,
                   check=nonempty("--hdd-lat-bs"), metavar="SIZES"),
        api.Option("hdd_lat_time", ("--hdd-lat-time",),
                   "HDD-LAT time per workload (random R, random W at QD1): seconds or with s/m/h "
                   "(default 60s, enough I/Os for a 99th percentile per round; --quick 1s)",
                   parse=api.parse_duration, default=CELL_S, quick=1,
                   check=api.in_range(1, MAX_RUNTIME, "--hdd-lat-time"), metavar="DURATION"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(HddLatencySettings)
        sizes = cfg.bs
        params = {"block_sizes": api.format_block_sizes(sorted(sizes)), "mixes": "100/0,0/100", "access": "random",
                  "numjobs": "1", "iodepth": "1", "runtime": str(cfg.time)}
        return [repeat_plan(self.name, api.Rounds(cell_jobs(sizes, MIXES, (1,), cfg.time)),
                            tracked_cells(sizes, MIXES, (1,)), "lat_mean_us", "mean response time (us)",
                            params, histograms=True)]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        """Per direction at 4KiB (else the smallest block size): AVE, the
        supported percentiles of :data:`HEADLINE_PERCENTILES` and MAX."""
        cells = window_cells(test)
        sizes = {bs for bs, _, _ in cells}
        if not sizes:
            return []
        bs = 4096 if 4096 in sizes else min(sizes)
        out: List[api.Figure] = []
        for mix in MIXES:
            ws = cells.get((bs, mix, 1), [])
            mean, worst, ios = response_times(ws, direction(mix))
            if not ios:
                continue
            key = f"rnd_{api.format_bs(bs)}_{side_word(mix)}_lat"
            text = f"{api.format_bs(bs)} {side_label(mix)}"
            out.append(api.Figure(f"{key}_mean_us", f"{text} AVE", mean, "us", "lower", "{:,.1f}"))
            for p in HEADLINE_PERCENTILES:
                v = percentile(ws, direction(mix), p)
                if v is not None:
                    out.append(api.Figure(f"{key}_p{p.replace('.', '_')}_us", f"{text} {p}%", v, "us",
                                          "lower", "{:,.1f}"))
            out.append(api.Figure(f"{key}_max_us", f"{text} MAX", worst, "us", "lower", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, max(opts.of(HddLatencySettings).bs))
