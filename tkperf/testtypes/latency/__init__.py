"""Latency: random I/O at OIO 1 (TC1/QD1), 3 mixes x 3 block sizes, in rounds
until the RND 4KiB 0/100 mean response time is steady (PTS test 3); then,
right after the rounds, one response-time capture of RND 4KiB 100% W at
TC1/QD1 (``--lat-capture``, 20 minutes by default) from which the
response-time histogram and confidence ("nines") plots come.

The PTS 2.0 text is not at hand; the capture follows the PTS 2.0
implementation, Alan-ADATA/SSS-PTS-TEST on GitHub
(test/lib/BlockStorageTestLatency.php: after LAT's steady state, a separate
20-minute RND 4KiB 100% write at TC1/QD1, "20min-0_100-4k-rand", for its "LAT
Response Time Histogram - Confidence Level Plots").  That implementation
builds the histogram from a per-I/O latency log; tkperf counts the same I/Os
in fio's json+ latency histogram (every I/O counted, fio's log-spaced bins;
:mod:`tkperf.model.histogram`), which stays small however many I/Os 20
minutes hold.  The AVE and MAX tables stay the window rounds' figures."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable, List, Optional, Tuple

from tkperf import api
from tkperf.pts import (
    CAPTURE_S,
    CAPTURE_WORKLOAD,
    RoundsThenCapture,
    capture_deviation,
    capture_job,
    capture_round,
    histogram,
    matrix_jobs,
    nonempty,
    parse_capture,
    parse_mixes,
    stored_seconds,
    tracking_cell,
    tracking_figure,
)
from tkperf.pts import format_mixes as mixes_text
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


#: What the capture is, in words (reports, docs).
CAPTURE_SOURCE = ("RND 4KiB W TC1/QD1 capture after the steady-state rounds, as the PTS 2.0 implementation "
                  "Alan-ADATA/SSS-PTS-TEST runs it (test/lib/BlockStorageTestLatency.php)")


def capture(test: api.TestRun) -> Optional[api.Workload]:
    """The LAT capture's workload; None in a test without one (an older
    file, ``--lat-capture 0``, or not measured yet)."""
    rnd = capture_round(test)
    return rnd.workload(CAPTURE_WORKLOAD) if rnd is not None else None


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
    #: Seconds of the response-time capture after the rounds (0: none).
    capture: int = CAPTURE_S


class LatencyPts(api.PtsRules):
    """Latency's SNIA PTS rules."""

    oio = api.OIO_FIXED

    def deviations(self, kind: api.TestType, options, revision) -> List[str]:
        v = api.stored_values(kind, options)
        sizes, mixes = tuple(v["lat_bs"]), tuple(v["lat_mixes"])
        out = capture_deviation("LAT", stored_seconds(options, "lat_capture", v["lat_capture"]), revision,
                                without="the histogram and confidence plots come from the window rounds")
        if set(sizes) == set(BLOCK_SIZES) and set(mixes) == set(MIXES):
            return out
        return out + [f"LAT matrix narrowed to {api.format_block_sizes(sorted(sizes, reverse=True))} x "
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
        api.Option("lat_capture", ("--lat-capture",),
                   "LAT response-time capture after the rounds: RND 4k 100% W at TC1/QD1 for this long, "
                   "the source of the histogram and confidence plots, as the PTS 2.0 implementation "
                   "Alan-ADATA/SSS-PTS-TEST runs it (default 20m; 0: none, a disclosed deviation)",
                   parse=parse_capture, default=CAPTURE_S, quick=2,
                   check=api.in_range(0, 366 * 86400, "--lat-capture"), metavar="DURATION"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(LatencySettings)
        bs, mix = tracking_cell(cfg.bs, cfg.mixes)
        cap = (capture_job(cfg.capture),) if cfg.capture else ()
        params = matrix_params(cfg.bs, cfg.mixes, 1, 1, opts.runtime)
        jobs = matrix_jobs(cfg.bs, cfg.mixes, opts.runtime, 1, 1)
        if cap:
            params["capture_s"] = str(cfg.capture)
        return [api.Plan(
            key=self.name,
            # without a capture, the round loop as before (kept on resume once steady)
            shape=RoundsThenCapture(jobs, cap) if cap else api.Rounds(jobs),
            tracking=api.Tracking(workload_name(bs, mix), "write.lat_mean_us" if mix == 0 else "lat_mean_us",
                                  f"RND {api.format_bs(bs)} {api.mix_label(mix)} mean response time (us)"),
            params=params,
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
        cap = capture(test)  # the capture's histogram, else (older files) the window's
        bins = cap.write.bins if cap is not None else histogram.merge(*(w.write.bins for w in ws))
        for p in ("99.9", "99.99"):  # where the I/O count supports it
            value = histogram.percentile_us(bins, float(p))
            if value is not None and histogram.supported(histogram.total(bins), p):
                out.append(api.Figure(f"rnd_4k_write_lat_p{p.replace('.', '_')}_us", f"{p}%", value, "us",
                                      "lower", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(min(opts.of(LatencySettings).bs), max(opts.of(LatencySettings).bs))
