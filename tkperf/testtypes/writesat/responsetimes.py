"""WSAT's response times: the optional per-interval plots (ART, 5 9s and
MRT against time and drive fills, from the columns a stream with
``response_times`` keeps, :mod:`tkperf.fio.intervals`) and the
response-time capture after the stream (its histogram and confidence plot,
drawn as LAT's are).  Neither exists in a result from before tkperf kept
them, and then neither is shown."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from tkperf import api
from tkperf.pts import RESPONSE_TIME_COLUMNS, capture_qos_blocks, histogram
from tkperf.testtypes.writesat import CAPTURE_SOURCE, GB_LABEL, SERIES, TIME_LABEL, capture_round

#: The per-interval response-time columns.
P5_COLUMN, MAX_COLUMN = RESPONSE_TIME_COLUMNS
#: Where the optional plots come from.
RT_SOURCE = ("PTS 2.0's revision list names them: \"WSAT Optional RTs & IOPS v Drive Fills: ART, 5 9s, MRT\"")


@dataclass(frozen=True, eq=False)
class WsatResponseTimes:
    """Per interval (arrays as :class:`WsatData`'s): the average (ART), the
    99.999% (five nines, NaN where the interval's I/O count does not support
    it) and the maximum (MRT) response time in µs."""

    average: np.ndarray
    five_nines: np.ndarray
    maximum: np.ndarray


def response_times(test: api.TestRun) -> Optional[WsatResponseTimes]:
    """The per-interval response times; None for a test that did not keep
    them (a result from before tkperf recorded them, an imported one)."""
    s = test.series.get(SERIES)
    if s is None or not len(s) or MAX_COLUMN not in s.columns or P5_COLUMN not in s.columns:
        return None
    ios = s.column("ios")
    ok = np.array([histogram.supported(int(n), "99.999") for n in ios], dtype=bool)
    p5 = np.where(ok & (s.column(P5_COLUMN) > 0), s.column(P5_COLUMN), np.nan)
    return WsatResponseTimes(average=s.column("lat_mean_us"), five_nines=p5, maximum=s.column(MAX_COLUMN))


def rt_curves(x: np.ndarray, rt: WsatResponseTimes) -> tuple:
    """ART, 5 9s (only the supported intervals) and MRT as chart curves over ``x``."""
    has = ~np.isnan(rt.five_nines)
    curves = [api.Curve("ART (average)", x, rt.average)]
    if has.any():
        curves.append(api.Curve("5 9s (99.999%)", x[has], rt.five_nines[has]))
    curves.append(api.Curve("MRT (maximum)", x, rt.maximum))
    return tuple(curves)


def response_time_blocks(ctx: api.ReportContext, test: api.TestRun, seconds: np.ndarray,
                         written_gb: np.ndarray) -> list:
    """The optional WSAT plots: ART, 5 9s and MRT per interval against time
    and against drive fills (GB written where the capacity is unknown);
    none for a result that did not keep them."""
    rt = response_times(test)
    if rt is None or not seconds.size:  # a result from before tkperf kept them: no plots
        return []
    supported = int(np.count_nonzero(~np.isnan(rt.five_nines)))
    n = int(rt.average.size)
    capacity_gb = ctx.run.device.size_bytes / 1e9
    dense = n > 200
    by_time = api.XYChart(rt_curves(seconds, rt), TIME_LABEL, "Response time (µs)",
                          "WSAT: ART, 5 9s and MRT vs time", ylog=10, time_axis=True, dots=dense,
                          ylim=(None, None))
    if capacity_gb > 0:
        x, xlabel = written_gb / capacity_gb, "Drive fills (data written / capacity)"
    else:
        x, xlabel = written_gb, GB_LABEL
    by_fills = api.XYChart(rt_curves(x, rt), xlabel, "Response time (µs)",
                           "WSAT: ART, 5 9s and MRT vs drive fills", ylog=10, dots=dense, ylim=(None, None))
    return [
        api.Heading("Response times per interval (optional: ART, 5 9s, MRT)", 2),
        api.Paragraph(
            f"The optional WSAT plots ({RT_SOURCE}): per interval, the average response time (ART), the "
            "99.999% (five nines, 5 9s) and the maximum response time (MRT), fio's total latency. They come from "
            "fio's cumulative json+ latency histograms: the difference of two reports is the exact histogram of "
            "the interval's I/Os, and the 5 9s is read from it only where the interval holds at least 100,000 "
            f"I/Os ({supported} of {n} intervals here; the others have no 5 9s point). The MRT is fio's own "
            "maximum where it rose in the interval, else the top of the interval's highest histogram bin "
            "(at most fio's bin width, 1/64 of a power of two, above its slowest I/O)."),
        ctx.chart(test, "rt-vs-time", by_time,
                  "WSAT: ART, 5 9s (supported intervals only) and MRT of each interval against time since the "
                  "purge, µs on a log scale."),
        ctx.chart(test, "rt-vs-fills", by_fills,
                  "WSAT: ART, 5 9s (supported intervals only) and MRT of each interval against "
                  + ("drive fills (data written / capacity)." if capacity_gb > 0 else "the data written (GB).")),
    ]


def capture_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The response-time histogram and confidence ("nines") plot of the
    capture after the stream (:data:`~tkperf.testtypes.writesat.CAPTURE_SOURCE`),
    drawn as LAT's are; none in a result without one (before tkperf ran it,
    or ``--wsat-capture 0``)."""
    cap = capture_round(test)
    if cap is None:
        return []
    return [api.Heading("Response-time histogram and confidence plot", 2)] + capture_qos_blocks(
        ctx, test, cap, CAPTURE_SOURCE, "right after the stream stopped", "The intervals above are the stream's alone.",
        level=3)
