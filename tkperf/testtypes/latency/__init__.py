"""Latency: random I/O at OIO 1 (TC1/QD1), 3 mixes x 3 block sizes, in rounds
until the RND 4KiB 0/100 mean response time is steady (PTS test 3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable, List, Optional, Tuple

from tkperf import api
from tkperf.pts import format_mixes as mixes_text
from tkperf.pts import (
    histogram,
    matrix_jobs,
    nonempty,
    parse_mixes,
    tracking_cell,
    tracking_figure,
)
from tkperf.pts import iops_matrix_params as matrix_params
from tkperf.pts import iops_workload as workload_name

#: What the PTS tables' MAX is (both open PTS implementations,
#: docs/method.rst "LAT AVE and MAX"): the per-round maximum response times averaged over the
#: measurement window.  The slowest single I/O of the window is the other
#: figure, shown as "largest" (:func:`largest_us`).
MAX_RULE = "mean of the per-round maxima over the window"
#: What the PTS tables' AVE is: the per-round mean response times averaged
#: over the window (each round's mean weighted by its I/O count inside it).
AVE_RULE = "mean of the per-round means over the window"


def mean_of_maxima(values: Iterable[float]) -> Optional[float]:
    """The PTS MAX of a cell: its per-round maxima averaged; None without rounds."""
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def largest_us(values: Iterable[float]) -> Optional[float]:
    """The slowest single I/O of the window: the largest per-round maximum."""
    vals = list(values)
    return max(vals) if vals else None


BLOCK_SIZES: Tuple[int, ...] = (8192, 4096, 512)
MIXES: Tuple[int, ...] = (100, 65, 0)


@dataclass(frozen=True)
class LatencySettings:
    """The values of latency's options (typed; ``opts.of(LatencySettings)``)."""

    option_prefix: ClassVar[str] = "lat_"

    #: Block sizes in bytes.
    bs: Tuple[int, ...]
    #: Read shares in percent.
    mixes: Tuple[int, ...]


class LatencyPts(api.PtsRules):
    """Latency's SNIA PTS rules."""

    oio = api.OIO_FIXED

    def deviations(self, kind: api.TestType, options, revision) -> List[str]:
        v = api.stored_values(kind, options)
        sizes, mixes = tuple(v["lat_bs"]), tuple(v["lat_mixes"])
        if set(sizes) == set(BLOCK_SIZES) and set(mixes) == set(MIXES):
            return []
        return [f"LAT matrix narrowed to {api.format_block_sizes(sorted(sizes, reverse=True))} x "
                f"{mixes_text(sorted(mixes, reverse=True))} (the PTS runs 8k,4k,512 x 100/0,65/35,0/100)"]


class LatencyTest(api.TestType):
    pts = LatencyPts()
    #: Runs over the test range (``--test-range``, in its ActiveRange segments):
    #: SNIA defines them for IOPS, TP and LAT; every other test runs over the
    #: whole active range (``RunOptions.for_test``).
    uses_test_range = True
    name = "lat"
    title = "Latency"
    short = "LAT"
    default_profiles = ("ssd",)
    order = 30
    view = "tkperf.testtypes.latency.view:LatencyView"
    options = api.OptionSet(LatencySettings, (
        api.Option("lat_bs", ("--lat-bs",), "LAT block sizes (default: 8k,4k,512)",
                   parse=api.parse_block_sizes, format=api.format_block_sizes, default=BLOCK_SIZES,
                   quick=(4096,), check=nonempty("--lat-bs"), metavar="SIZES"),
        api.Option("lat_mixes", ("--lat-mix",), "LAT R/W mixes (default: 100/0,65/35,0/100)",
                   parse=parse_mixes, format=mixes_text, default=MIXES, quick=(100, 0),
                   check=nonempty("--lat-mixes"), metavar="MIXES"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(LatencySettings)
        bs, mix = tracking_cell(cfg.bs, cfg.mixes)
        return [api.Plan(
            key=self.name,
            shape=api.Rounds(matrix_jobs(cfg.bs, cfg.mixes, opts.runtime, 1, 1)),
            tracking=api.Tracking(workload_name(bs, mix), "write.lat_mean_us" if mix == 0 else "lat_mean_us",
                                  f"RND {api.format_bs(bs)} {api.mix_label(mix)} mean response time (us)"),
            params=matrix_params(cfg.bs, cfg.mixes, 1, 1, opts.runtime),
            histograms=True,
        )]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        name = workload_name(4096, 0)
        v = test.window_average(name, "write.lat_mean_us")
        if v is None:
            return tracking_figure(test)
        ws = [w for r in test.window_rounds() for w in r.workloads if w.name == name]
        maxima = [w.write.lat_max_us for w in ws]
        out = [api.Figure("rnd_4k_write_lat_mean_us", "4k W lat AVE", v, "us", "lower", "{:,.1f}"),
               api.Figure("rnd_4k_write_lat_max_us", "MAX", mean_of_maxima(maxima) or 0.0,
                          "us", "lower", "{:,.1f}"),
               api.Figure("rnd_4k_write_lat_largest_us", "largest", largest_us(maxima) or 0.0,
                          "us", "lower", "{:,.1f}")]
        bins = histogram.merge(*(w.write.bins for w in ws))
        for p in ("99.9", "99.99"):  # from the window's histogram, where the I/O count supports it
            value = histogram.percentile_us(bins, float(p))
            if value is not None and histogram.supported(histogram.total(bins), p):
                out.append(api.Figure(f"rnd_4k_write_lat_p{p.replace('.', '_')}_us", f"{p}%", value, "us",
                                      "lower", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(min(opts.of(LatencySettings).bs), max(opts.of(LatencySettings).bs))
