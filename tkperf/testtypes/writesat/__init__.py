"""Write Saturation: after a purge (no WIPC), RND 4KiB 100% W without pause,
cut into intervals, until the time limit or the TGBW limit (PTS test 4).

Steady state is optional, as in the PTS (an early stop hides later write
cliffs): with ``--wsat-steady`` the test also stops once the 20/10 rule
holds on the last 5 points ``--wsat-steady-spacing`` apart (30 minutes),
each point the IOPS of the last minute of intervals before it (with
1-minute intervals: the last interval; :mod:`tkperf.kit.longrounds`),
checked only after two drive fills (FOB's plateau).  The verdict on those
points is recorded either way; the params disclose the rule
(``steady_stop``, ``steady_spacing`` in seconds, ``steady_min_fills``,
``steady_point`` and ``steady_point_s``: the seconds each point measured)
and the stop reason names it.

Every interval also keeps its average, 99.999% ("five nines", where the
interval's I/O count supports it) and maximum response time, for the
optional plots PTS 2.0's revision list names ("WSAT Optional RTs & IOPS v
Drive Fills: ART, 5 9s, MRT"): fio reports json+ and each interval's
figures come from the difference of its cumulative histograms
(:mod:`tkperf.fio.intervals`).

After the stream ends (time, TGBW or steady state), right after it in its
own fio process, one response-time capture of RND 4KiB 100% W at TC1/QD1
(``--wsat-capture``, 20 minutes by default) from which the report's
response-time histogram and confidence plots come.  The PTS 2.0 text is not
at hand; the capture follows the PTS 2.0 implementation,
Alan-ADATA/SSS-PTS-TEST on GitHub (test/lib/BlockStorageTestWsat.php, which
runs the same 20-minute TC1/QD1 capture with a latency log after WSAT as
test/lib/BlockStorageTestLatency.php does after LAT).  Its histogram (fio's
json+ ``lat_ns`` bins, every I/O counted) is kept as the series
:data:`CAPTURE_SERIES`, one row a bin, and its mean and maximum in the
test's data (``capture.*``): the stream's intervals and steady points are
not touched, and a result from before the capture loads unchanged.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import List, Optional

from tkperf import api
from tkperf.pts import (
    CAPTURE_S,
    CAPTURE_WORKLOAD,
    FILLS,
    FIO_GAP_S,
    MIN_FILLS,
    UNHELD,
    WSAT_SERIES,
    Estimate,
    capture_deviation,
    capture_job,
    duration,
    floor_bytes,
    parse_capture,
    parse_tgbw,
    point_params,
    point_seconds,
    progress_of,
    stored_seconds,
    tgbw_bytes,
)
from tkperf.pts import wsat_workload as workload_name
from tkperf.testtypes.writesat.settings import WsatSettings

WORKLOAD = "wsat-rnd-4k-0-100"
ACCESS = ("random", "sequential")


def _access(text: str, flag: str) -> str:
    t = text.strip().lower()
    if t not in ACCESS:
        raise api.UsageError(f"{flag} {text!r}: choose random or sequential")
    return t


def _one_size(text: str, flag: str) -> int:
    sizes = api.parse_block_sizes(text, flag)
    if len(sizes) != 1:
        raise api.UsageError(f"{flag} takes one block size, not {text!r}")
    return sizes[0]


def stimulus(params) -> str:
    """The stimulus in words from a test's params: 'RND 4k 100% W'."""
    access = "SEQ" if params.get("access") == "sequential" else "RND"
    return f"{access} {params.get('block_size', '4k')} 100% W"
SERIES = WSAT_SERIES
#: The PTS's WSAT: 1-minute intervals, stopped at 24 h or 4x the capacity written.
PTS_INTERVAL_S = 60
PTS_TIME_S = 24 * 3600
PTS_FILLS = 4
#: The PTS's optional WSAT steady state: 5 points 30 minutes apart.
PTS_STEADY_SPACING_S = 30 * 60


def effective_spacing(spacing_s: int, interval_s: int) -> int:
    """The spacing a run judges on: whole intervals, at least one (as :class:`Stream` rounds it)."""
    return max(1, round(spacing_s / interval_s)) * interval_s


def _tgbw_words(tgbw: str) -> str:
    return tgbw if tgbw.endswith("x") else f"{tgbw} GB"


def _tgbw_reaches_pts(tgbw: str, capacity) -> bool:
    """Whether a TGBW limit is at least 4x the capacity (``capacity`` None:
    unknown, so only a limit in drive fills can be judged)."""
    if tgbw.endswith("x"):
        return float(tgbw[:-1]) >= PTS_FILLS
    if capacity is None or capacity <= 0:
        return False
    return tgbw_bytes(tgbw, capacity) >= PTS_FILLS * capacity
#: Intervals averaged for the "last 5" headline figure.
TAIL = 5


def iops(test: api.TestRun):
    """IOPS of every interval (a numpy array; empty before the first)."""
    import numpy as np

    s = test.series.get(SERIES)
    return s.column("iops") if s is not None else np.zeros(0)


progress = logging.getLogger("tkperf.progress")

#: The axis labels of WSAT's charts.
TIME_LABEL = "Time"
GB_LABEL = "Total data written (GB, decimal)"
#: The series holding the capture's response-time histogram, one row a fio bin.
CAPTURE_SERIES = "capture"
CAPTURE_COLUMNS = ("lat_ns", "ios")
#: What the capture is, in words (reports, docs).
CAPTURE_SOURCE = ("RND 4KiB W TC1/QD1 capture after the WSAT stream, as the PTS 2.0 implementation "
                  "Alan-ADATA/SSS-PTS-TEST runs it (test/lib/BlockStorageTestWsat.php)")


def capture_round(test: api.TestRun) -> Optional[api.Round]:
    """The capture as a round of one workload (for the report's histogram
    and confidence plots); None in a test without one (a result from
    before the capture, ``--wsat-capture 0``, or not measured yet)."""
    s = test.series.get(CAPTURE_SERIES)
    if s is None or not len(s) or tuple(s.columns) != CAPTURE_COLUMNS:
        return None
    bins = tuple((int(ns), int(n)) for ns, n in zip(s.column("lat_ns"), s.column("ios")))

    def number(key: str) -> float:
        try:
            return max(float(test.data.get(f"capture.{key}", "0")), 0.0)
        except ValueError:
            return 0.0

    ios = sum(n for _, n in bins)
    runtime_ms = int(number("runtime_ms"))
    write = api.IoStats(iops=ios * 1000.0 / runtime_ms if runtime_ms else 0.0, io_bytes=ios * 4096, ios=ios,
                        lat_mean_us=number("lat_mean_us"), lat_max_us=number("lat_max_us"), bins=bins)
    w = api.Workload(name=CAPTURE_WORKLOAD, rw="randwrite", bs=4096, rwmixread=0, numjobs=1, iodepth=1,
                     runtime_ms=runtime_ms, write=write)
    return api.Round(index=1, started="", wall_s=0.0,
                     fio_s=runtime_ms / 1000.0, workloads=(w,))


@dataclass(frozen=True)
class WsatStream(api.Stream):
    """The WSAT stream, whose first figure is its first interval's IOPS;
    then, with ``capture``, that job right after the stream in its own fio
    process, its response-time histogram kept as :data:`CAPTURE_SERIES`
    (the intervals and their steady points are the stream's alone)."""

    capture: Optional[api.FioJob] = None

    def run(self, ctx, plan, test: api.TestRun) -> None:
        for key in [k for k in test.data if k.startswith("capture.")]:
            del test.data[key]  # a stream starts afresh, and so does its capture
        super().run(ctx, plan, test)  # resets test.series to the stream's
        if self.capture is None:
            return
        seconds = self.capture.planned_seconds + FIO_GAP_S
        ctx.phase = "capture"
        progress_of(ctx).once_started("response-time capture", seconds)
        progress.info("[%s] response-time capture, right after the stream (%s)", plan.key, test.stop_reason)
        workloads, _ = ctx.fio.run((self.capture,), what=f"{plan.key} capture", histograms=True)
        w = next(x for x in workloads if x.name == self.capture.name)
        test.series[CAPTURE_SERIES] = api.DataSeries.from_rows(CAPTURE_SERIES, CAPTURE_COLUMNS,
                                                           [list(b) for b in w.write.bins], digits=None)
        test.data.update({"capture.runtime_ms": str(int(w.runtime_ms)),
                          "capture.lat_mean_us": repr(float(w.write.lat_mean_us)),
                          "capture.lat_max_us": repr(float(w.write.lat_max_us))})
        ctx.health_check()
        ctx.save()

    def estimate(self, opts, capacity: int) -> Estimate:
        est = super().estimate(opts, capacity)
        if self.capture is None:
            return est
        cap = self.capture.planned_seconds + FIO_GAP_S
        # on the first line, which the plan's table shows, as LAT's "+ 20 min after"
        then = f"; then the response-time capture (the last job below), about {duration(cap, rough=True)}"
        return replace(est, lines=(est.lines[0] + then,) + est.lines[1:],
                       jobs=est.jobs + (self.capture,), low_s=est.low_s + cap, high_s=est.high_s + cap)

    def first_figures(self, headline: api.Headline, test: api.TestRun) -> List[api.Figure]:
        values = iops(test)
        if not values.size:
            return []
        return [api.Figure("first_interval_iops", stimulus(test.params).replace(" 100%", ""), float(values[0]), "IOPS")]


class WriteSaturationPts(api.PtsRules):
    """WriteSaturation's SNIA PTS rules."""

    oio = api.OIO_OPERATOR

    def deviations(self, kind: api.TestType, options, revision) -> List[str]:
        v = api.settings_from(WsatSettings, api.stored_values(kind, options))
        out = []
        if v.access != "random" or v.bs != 4096:
            out.append(f"WSAT stimulus {stimulus({'access': v.access, 'block_size': api.format_bs(v.bs)})}"
                       " instead of RND 4k 100% W (a disclosed variant)")
        interval = v.interval
        if interval != PTS_INTERVAL_S:
            out.append(f"WSAT reports every {interval} s instead of the PTS's {PTS_INTERVAL_S} s")
        out += capture_deviation("WSAT", stored_seconds(options, "wsat_capture", v.capture), revision,
                                 after=" after the stream", without="the report has no WSAT response-time histogram")
        return out

    def planned_deviations(self, kind: api.TestType, options, revision) -> List[str]:
        """Before the run only what may happen can be said: a limit below the
        PTS's is a deviation if it ends the run (judged afterwards by the
        recorded stop reason, :meth:`result_deviations`)."""
        v = api.settings_from(WsatSettings, api.stored_values(kind, options))
        out = []
        if v.time < PTS_TIME_S:
            out.append(f"WSAT time limit {duration(v.time, rough=True)} is below 24 h: a deviation "
                       "if it ends the run before 4x the capacity is written")
        if not _tgbw_reaches_pts(v.tgbw, None):
            out.append(f"WSAT TGBW limit {_tgbw_words(v.tgbw)} may be below 4x the capacity: "
                       "a deviation if it ends the run before 24 h")
        spacing = effective_spacing(v.steady_spacing, v.interval)
        if v.steady and spacing != PTS_STEADY_SPACING_S:
            out.append(f"WSAT steady-state stop on points {duration(spacing, rough=True)} apart instead of the "
                       "PTS's 30 min: a deviation if it ends the run")
        return out

    def result_deviations(self, kind: api.TestType, test: api.TestRun, options, revision, capacity: int) -> List[str]:
        """Judged by what happened: the PTS's WSAT runs 24 h or until 4x the
        capacity is written; a lower limit that ended the run is a deviation,
        and so is a steady-state stop judged on points other than 30 min apart."""
        if test.status != "complete":
            return []
        v = api.settings_from(WsatSettings, api.stored_values(kind, options))
        out = []
        if revision is not None and revision.id.endswith("-2.0") and "wsat_capture" not in options \
                and capture_round(test) is None:
            out.append(f"{test.key}: recorded without the PTS 2.0 implementation's 20-minute RND 4k 100% W "
                       "TC1/QD1 response-time capture after the stream (a result from before tkperf ran it); "
                       "its report has no WSAT response-time histogram")
        return self._stop_deviations(test, v, capacity) + out

    def _stop_deviations(self, test: api.TestRun, v: WsatSettings, capacity: int) -> List[str]:
        reason = test.stop_reason
        if reason.startswith("time limit") and v.time < PTS_TIME_S:
            return [f"{test.key}: stopped by its time limit of {duration(v.time, rough=True)}, "
                    "before 24 h or 4x the capacity written (the PTS's WSAT stop)"]
        if reason.startswith("TGBW") and not _tgbw_reaches_pts(v.tgbw, capacity):
            return [f"{test.key}: stopped by its TGBW limit of {_tgbw_words(v.tgbw)}, "
                    "before 24 h or 4x the capacity written (the PTS's WSAT stop)"]
        spacing_text = test.params.get("steady_spacing", "")
        spacing = int(spacing_text) if spacing_text.isdigit() else effective_spacing(v.steady_spacing, v.interval)
        if reason.startswith("steady state") and spacing != PTS_STEADY_SPACING_S:
            return [f"{test.key}: stopped at steady state judged on points {duration(spacing, rough=True)} apart, "
                    "not the PTS's 5 points 30 min apart (an early stop can hide a later write cliff)"]
        if reason.startswith(UNHELD):
            return [f"{test.key}: stopped before 24 h or 4x the capacity written for a steady state that its "
                    "stored figures do not hold (fio's final report, merged into the last interval, changed it)"]
        return []


class WriteSaturationTest(api.TestType):
    pts = WriteSaturationPts()
    name = "wsat"
    title = "Write Saturation"
    short = "WSAT"
    default_profiles = ("ssd",)
    order = 40
    view = "tkperf.testtypes.writesat.view:WriteSaturationView"
    options = api.OptionSet(WsatSettings, (
        api.Option("wsat_time", ("--wsat-time",), "WSAT time limit: seconds or with s/m/h/d (default 24h)",
                   parse=api.parse_duration, default=24 * 3600, quick=8,
                   check=api.in_range(1, 366 * 86400, "--wsat-time"), metavar="DURATION"),
        api.Option("wsat_tgbw", ("--wsat-tgbw",),
                   "WSAT total GB written limit, or drive fills like 4x (default 4x)",
                   parse=parse_tgbw, default="4x", metavar="GB|Nx"),
        api.Option("wsat_interval", ("--wsat-interval",), "WSAT reporting interval (default 60s)",
                   parse=api.parse_duration, default=60, quick=1,
                   check=api.in_range(1, 3600, "--wsat-interval"), metavar="DURATION"),
        api.Option("wsat_access", ("--wsat-access",),
                   "WSAT access pattern: random (the PTS's) or sequential, a disclosed variant (SNIA SSSI, "
                   "'SSD Performance - A Primer', 2013, section 'WSAT')",
                   parse=_access, default="random", metavar="random|sequential"),
        api.Option("wsat_bs", ("--wsat-bs",), "WSAT block size (default 4k, the PTS's; e.g. 128k with "
                   "--wsat-access sequential)", parse=_one_size, format=api.format_bs, default=4096, metavar="SIZE"),
        api.Option("wsat_steady", ("--wsat-steady",),
                   "also stop WSAT at steady state: 20/10 on 5 points --wsat-steady-spacing apart, "
                   "checked only after two drive fills (default: run to the time or TGBW limit)",
                   switch=True, default=False),
        # Stored in the same field: old command lines keep working, and old
        # result files (wsat_steady=true: they stopped at steady state) load.
        api.Option("wsat_steady", ("--no-wsat-steady",),
                   "no steady-state stop: the default now, accepted so old command lines still work",
                   switch=False, default=False),
        api.Option("wsat_steady_spacing", ("--wsat-steady-spacing",),
                   "spacing of the points the WSAT steady state is judged on (default 30m), each the IOPS "
                   "of the last minute of intervals before it (SNIA Primer: 5 points 30 minutes apart)",
                   parse=api.parse_duration, default=30 * 60, quick=1,
                   check=api.in_range(1, 366 * 86400, "--wsat-steady-spacing"), metavar="DURATION"),
        api.Option("wsat_capture", ("--wsat-capture",),
                   "WSAT response-time capture after the stream ends: RND 4k 100% W at TC1/QD1 for this "
                   "long, the source of WSAT's histogram and confidence plots, as the PTS 2.0 implementation "
                   "Alan-ADATA/SSS-PTS-TEST runs it (default 20m; 0: none; other than 20m, a disclosed "
                   "deviation under PTS 2.0)",
                   parse=parse_capture, default=CAPTURE_S, quick=2,
                   check=api.in_range(0, 366 * 86400, "--wsat-capture"), metavar="DURATION"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        w = opts.of(WsatSettings)
        name = workload_name(w.access, w.bs)
        job = api.FioJob(name=name, rw="write" if w.access == "sequential" else "randwrite",
                         bs=w.bs, runtime=w.time,
                         numjobs=opts.numjobs, iodepth=opts.iodepth)
        params = {"block_size": api.format_bs(w.bs), "access": w.access}
        stream = WsatStream(job, w.interval, stop_bytes=w.tgbw_bytes(capacity),
                            steady_stop=w.steady, steady_after_bytes=floor_bytes(capacity), series=SERIES,
                            steady_spacing_s=w.steady_spacing, point_s=point_seconds(w.steady_spacing),
                            response_times=True, capture=capture_job(w.capture) if w.capture else None)
        if w.capture:
            params["capture_s"] = str(w.capture)
        return [api.Plan(
            key=self.name, shape=stream,
            tracking=api.Tracking(name, "write.iops", f"{stimulus(params)} IOPS per interval"),
            wipc=False,
            params={**params, "numjobs": str(opts.numjobs),
                    "iodepth": str(opts.iodepth), "interval": str(w.interval),
                    "time_limit": str(w.time), "tgbw": w.tgbw,
                    "steady_stop": "true" if w.steady else "false",
                    "steady_spacing": str(stream.steady_every * w.interval), MIN_FILLS: str(FILLS),
                    **point_params(stream.point_intervals * w.interval)},
        )]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        values = iops(test)
        if not values.size:
            return []
        s = test.series[SERIES]
        tail = values[-TAIL:]
        return [api.Figure("first_interval_iops", "first", float(values[0]), "IOPS"),
                api.Figure(f"last_{TAIL}_intervals_iops", f"last {TAIL}", float(tail.sum() / tail.size), "IOPS"),
                api.Figure("gb_written", "written", float(s.column("io_bytes").sum()) / 1e9, "GB", "",
                           "{:,.2f}")]

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, opts.of(WsatSettings).bs)
