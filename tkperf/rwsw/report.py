"""The report of a capture (``tkperf report N.xml``): its facts (with what
the application saw: response times, flushes, FUA, discards, lost events,
and the dominant streams' coverage of the I/Os and the bytes), the
cumulative workload (streams by share), the stream map over time (each
dominant stream's share per step), the queue depth and the response time
over time, as reST,
HTML and PDF like every tkperf report (:func:`tkperf.render.documents.publish`).

The figures follow the Real World Storage Workload PTS's presentation of a
capture (SNIA RWSW PTS for Datacenter Storage, SNIA Technical Position of
25 May 2018: cumulative workload, IO streams map over time, queue depth
over time); docs/rwsw.rst says how tkperf departs from it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence

import numpy as np

from tkperf.durations import duration
from tkperf.render import blocks as b
from tkperf.render import parallel
from tkperf.render.documents import ReportResult, publish, safe_name
from tkperf.rwsw import devicereport
from tkperf.rwsw.model import Capture, Stream, dominant
from tkperf.rwsw.summary import COVERAGE_WARN, NOT_RECORDED, lat_text, loss_text, top_streams

SPEC = ("SNIA Real World Storage Workload (RWSW) Performance Test Specification for Datacenter Storage "
        "(SNIA Technical Position, 25 May 2018)")
#: Streams shown by name in the charts: the dominant ones (80% of the I/Os), at most this many.
MAX_CHART_STREAMS = 8


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def _chart_streams(c: Capture) -> List[Stream]:
    keys = {s.key for s in dominant(c.streams, 0.8)}
    return [s for s in c.streams if s.key in keys][:MAX_CHART_STREAMS]


def facts_blocks(c: Capture) -> list:
    ios = sum(s.ios for s in c.streams)
    rows = [("Name", c.name), ("Device", c.device), ("Device size", f"{c.size:,} bytes"), *(
                (("Host", c.host),) if c.host else ()),
            ("Recorded with", {"tracefs": "the kernel's block tracepoints (tracefs)",
                               "blktrace": "blktrace", "import": "imported blkparse output",
                               "combined": f"combined from {len(c.sources)} captures (--as {c.combined})"}.get(
                                   c.source, c.source)),
            ("Started (UTC)", c.started), ("Duration", duration(c.duration)),
            ("Steps", f"{len(c.steps)} of {duration(c.step)}"), ("I/Os", f"{ios:,}"),
            ("IOPS", f"{c.iops:,.0f}"), ("Throughput", f"{c.mbps:,.1f} MB/s"),
            ("Queue depth (mean outstanding I/Os)", f"{c.qd:.2f}")]
    seen = c.seen
    if seen is None:
        rows.append(("Response times, flushes, FUA, discards, lost events",
                     f"{NOT_RECORDED} (a capture of an earlier tkperf)"))
    else:
        rows += [("Response time (issue to completion at the block layer)", lat_text(seen.lat)),
                 ("Response time of reads", lat_text(seen.read)),
                 ("Response time of writes", lat_text(seen.write)),
                 ("Flushes", f"{seen.flushes:,}"), ("FUA writes", f"{seen.fua:,}"),
                 ("Discards", f"{seen.discards:,} ({seen.discard_bytes:,} bytes)"),
                 ("Events lost by the trace buffer",
                  f"{NOT_RECORDED} (an import)" if seen.lost_events is None else f"{seen.lost_events:,}")]
        if c.steps_touched_by_loss or seen.lost_events:
            rows.append(("Steps touched by lost events", loss_text(c.steps_touched_by_loss, len(c.steps))))
    if c.coverage_ios_pct is not None and c.coverage_bytes_pct is not None:
        rows.append(("Dominant streams' coverage", f"{c.coverage_ios_pct:.1f}% of the I/Os, "
                                                   f"{c.coverage_bytes_pct:.1f}% of the bytes"))
    if c.stopped_at is not None:
        rows.append(("Stopped early", f"by {c.stopped_by} after {duration(c.stopped_at)}; what was recorded "
                                      "until then is kept"))
    rows.append(("I/Os kept for exact replay", c.iolog or "no"))
    return [b.Title(f"Real-world workload capture {c.name}"),
            b.Paragraph(f"The block I/O of {c.device} as captured by tkperf capture, told as IO streams (an IO "
                        "stream is one combination of random or sequential access, read or write, and transfer "
                        f"size) per time step and in total, after the IO Capture of the {SPEC}. An I/O is "
                        "sequential when it starts where a recent run of I/Os of the same direction ended "
                        "(tkperf help rwsw). Steps are numbered from 1."),
            b.table(("Fact", "Value"), rows, stub_columns=1)] + coverage_blocks(c)


def coverage_blocks(c: Capture) -> list:
    """A warning when the dominant streams hold less than 80% of the I/Os or of the bytes."""
    ios, nbytes = c.coverage_ios_pct, c.coverage_bytes_pct
    if ios is None or nbytes is None or (ios >= COVERAGE_WARN and nbytes >= COVERAGE_WARN):
        return []
    low = " and ".join(w for w, v in (("I/Os", ios), ("bytes", nbytes)) if v < COVERAGE_WARN)
    return [b.Paragraph(f"Coverage: the dominant streams hold {ios:.1f}% of the I/Os and {nbytes:.1f}% of the "
                        f"bytes, below {COVERAGE_WARN:.0f}% of the {low}: a replay or test workload made of them "
                        "alone leaves out that much of what the application did (the streams left out are in "
                        "the table of IO streams).")]


def cumulative_blocks(c: Capture) -> list:
    out: list = [b.Heading("Cumulative workload", 1, room_cm=10)]
    if not c.streams:
        return out + [b.Paragraph("No I/O was seen during the capture.")]
    shown = [s for s in c.streams if s.share >= 0.01][:12] or list(c.streams[:1])
    grid = b.Grid(rows=tuple(s.key for s in shown), row_keys=tuple(float(s.bs) for s in shown),
                  cols=("I/Os", "bytes"), values=tuple((100 * s.share, 100 * s.byte_share) for s in shown),
                  unit="%", row_title="IO stream", col_title="share of")
    top = dominant(c.streams, 0.8)
    out.append(b.Chart("cumulative-workload.png", b.BarsChart(
        panels=(b.Panel(grid, "Streams of the whole capture", "Share (%)"),), legend_title="share of"),
        f"The IO streams of the whole capture with at least 1% of the I/Os, by their share of the I/Os and "
        f"of the bytes. The {len(top)} dominant stream{'s' if len(top) != 1 else ''} (the fewest making up "
        f"80% of the I/Os): {', '.join(s.key for s in top)}."))
    rows = [(s.key, f"{s.ios:,}", _pct(s.share), _pct(s.byte_share)) for s in c.streams if s.share >= 0.001]
    rest = [s for s in c.streams if s.share < 0.001]
    if rest:
        rows.append((f"{len(rest)} more stream" + ("s" if len(rest) != 1 else ""), f"{sum(s.ios for s in rest):,}",
                     _pct(sum(s.share for s in rest)), _pct(sum(s.byte_share for s in rest))))
    out.append(b.table(("IO stream", "I/Os", "Share of I/Os (%)", "Share of bytes (%)"), rows,
                       title="IO streams of the whole capture", stub_columns=1))
    return out


def _starts(c: Capture) -> np.ndarray:
    return np.array([st.start for st in c.steps], dtype=float)


def stream_map_blocks(c: Capture) -> list:
    out: list = [b.Heading("IO stream map over time", 1, room_cm=10)]
    streams = _chart_streams(c)
    if streams and c.steps:
        curves = []
        for s in streams:
            share = [next((x.share for x in st.streams if x.key == s.key), 0.0) for st in c.steps]
            curves.append(b.Curve(s.key, _starts(c), 100 * np.array(share, dtype=float)))
        out.append(b.Chart("stream-map.png", b.XYChart(
            curves=tuple(curves), xlabel="Step start", ylabel="Share of the step's I/Os (%)", time_axis=True,
            ylim=(0.0, 100.0)),
            f"Each dominant stream's share of the I/Os per step of {duration(c.step)}, the step drawn at its "
            "start."))
    rows = []
    for st in c.steps:
        lat = st.seen.lat if st.seen is not None else None
        nr = "n.r." if st.seen is None else "-"
        cov = ("-" if st.coverage_ios_pct is None or st.coverage_bytes_pct is None
               else f"{st.coverage_ios_pct:.0f} / {st.coverage_bytes_pct:.0f}")
        number = f"{st.number} !" if st.touched_by_loss else str(st.number)
        rows.append((number, duration(st.start) if st.start else "0 s", duration(st.duration),
                     f"{st.iops:,.0f}", f"{st.mbps:,.1f}", f"{st.qd:.2f}",
                     nr if lat is None else f"{lat.mean_us:,.0f}", nr if lat is None else f"{lat.p99_us:,.0f}",
                     "n.r." if st.seen is None else f"{st.seen.flushes:,}", cov,
                     top_streams(st.streams, 3, 1, "; ")))
    out.append(b.table(("Step", "Start", "Length", "IOPS", "MB/s", "QD", "Mean RT (µs)", "p99 RT (µs)", "Flushes",
                        "Coverage I/Os / bytes (%)", "Largest streams"), rows,
                       title="Steps (RT: response time, issue to completion at the block layer; n.r.: not "
                             "recorded; -: none" + (LOSS_MARK if c.steps_touched_by_loss else "") + ")",
                       widths=(5, 8, 8, 8, 7, 6, 8, 8, 7, 9, 30)))
    return out


def response_time_blocks(c: Capture) -> list:
    timed = [st for st in c.steps if st.seen is not None and st.seen.lat is not None]
    if not timed:
        return []
    starts = np.array([st.start for st in timed], dtype=float)
    mean = np.array([st.seen.lat.mean_us for st in timed if st.seen and st.seen.lat], dtype=float)
    p99 = np.array([st.seen.lat.p99_us for st in timed if st.seen and st.seen.lat], dtype=float)
    return [b.Heading("Response time over time", 1, room_cm=10),
            b.Chart("response-time.png", b.XYChart(
                curves=(b.Curve("mean", starts, mean), b.Curve("99th percentile", starts, p99)),
                xlabel="Step start", ylabel="Response time (µs)", time_axis=True),
                "The response time of the step's reads and writes at the device, from issue to completion at "
                "the block layer: the mean and the 99th percentile per step (steps without a completed I/O "
                "left out).")]


def queue_depth_blocks(c: Capture) -> list:
    out: list = [b.Heading("Queue depth over time", 1, room_cm=10)]
    if c.steps:
        out.append(b.Chart("queue-depth.png", b.XYChart(
            curves=(b.Curve("queue depth", _starts(c), np.array([st.qd for st in c.steps], dtype=float)),),
            xlabel="Step start", ylabel="Mean outstanding I/Os", time_axis=True),
            "The mean number of I/Os outstanding at the device (issued, not yet completed) per step: the "
            "demand intensity the application put on the device."))
    return out


LOSS_MARK = "; !: the step's figures miss events the trace buffer lost"


def capture_stamp(c: Capture) -> b.Stamp:
    """What names the capture report's plots outside it (:class:`~tkperf.render.blocks.Stamp`):
    the capture, its start and its device (text from the capture file: drawn and escaped as text)."""
    line = f"capture {c.name} {c.started[:16].replace('T', ' ')} · {c.device}"
    return b.Stamp(line=line, title=line,
                   desc=f"capture {c.name} of {c.device} ({c.source}), started {c.started}, "
                        f"{duration(c.duration)} in {len(c.steps)} steps")


def report_blocks(c: Capture) -> list:
    blocks = (facts_blocks(c) + devicereport.sources_blocks(c) + cumulative_blocks(c) + stream_map_blocks(c)
              + queue_depth_blocks(c) + response_time_blocks(c) + devicereport.device_blocks(c))
    stamp = capture_stamp(c)
    return [replace(x, stamp=stamp) if isinstance(x, b.Chart) and x.stamp is None else x for x in blocks]


def build_report(c: Capture, outdir: str, formats: Sequence[str], png: bool = False,
                 drawers: Optional[parallel.Drawers] = None) -> ReportResult:
    """``outdir/<name>.rst|.html|.pdf`` and the plots of the capture ``c``."""
    return publish(report_blocks(c), outdir, safe_name(c.name), formats, png, drawers)
