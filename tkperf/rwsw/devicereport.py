"""The report's sections of a capture of several devices and of a combined
capture (:mod:`tkperf.rwsw.report`): each device's figures beside the
whole's, per step, and the captures a combined one was made of."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from tkperf.durations import duration
from tkperf.render import blocks as b
from tkperf.rwsw.figures import Seen, Stream
from tkperf.rwsw.model import Capture
from tkperf.rwsw.summary import NOT_RECORDED, P99_NOTE


def _reads(streams: Sequence[Stream]) -> str:
    ios = sum(s.ios for s in streams)
    return f"{100 * sum(s.ios for s in streams if s.rw == 'read') / ios:.0f}" if ios else "-"


def _rt(seen: Optional[Seen]) -> tuple:
    if seen is None:
        return "n.r.", "n.r.", "n.r."
    lat = seen.lat
    return ("-" if lat is None else f"{lat.mean_us:,.0f}", "-" if lat is None else f"{lat.p99_us:,.0f}",
            f"{seen.flushes:,}")


def _largest(streams: Sequence[Stream], n: int = 2) -> str:
    return "; ".join(f"{s.key} {100 * s.share:.1f}%" for s in streams[:n]) or "no I/O"


def sources_blocks(c: Capture) -> list:
    if not c.sources:
        return []
    how = ("one after the other in time (days)" if c.combined == "days"
           else "side by side from a common start (hosts)")
    rows = [(s.file, s.name, s.host or NOT_RECORDED, s.devices, s.started, duration(s.duration),
             duration(s.at) if s.at else "0 s") for s in c.sources]
    return [b.Heading("Sources", 1),
            b.Paragraph(f"This capture combines {len(c.sources)} captures {how} (tkperf capture --combine). Its "
                        f"counts, bytes, shares, queue depths, mean and largest response times add up exactly; "
                        f"its {P99_NOTE}."),
            b.table(("File", "Capture", "Host", "Devices", "Started (UTC)", "Length", "Begins at"), rows,
                    title="The captures combined", stub_columns=1)]


def device_blocks(c: Capture) -> list:
    """Each device's figures, in total and per step, and its IOPS over time."""
    if not c.devices:
        return []
    rows = [(d.label, f"{d.size:,}", f"{d.ios:,}", f"{d.iops:,.0f}", f"{d.mbps:,.1f}", _reads(d.streams),
             f"{d.qd:.2f}", *_rt(d.seen), _largest(d.streams)) for d in c.devices]
    out: list = [
        b.Heading("Devices", 1, room_cm=10),
        b.Paragraph(f"The capture holds {len(c.devices)} devices on one timeline: the figures above are of "
                    "all of them together, those here of each device's own requests (its streams, its queue "
                    "depth, its response times, the flushes it was sent). In the capture's I/O log the "
                    "devices' addresses lie end to end, in this order."),
        b.table(("Device", "Size (bytes)", "I/Os", "IOPS", "MB/s", "Reads (%)", "QD", "Mean RT (µs)", "p99 RT (µs)",
                 "Flushes", "Largest streams"), rows, title="Each device in total", stub_columns=1)]
    if c.steps:
        starts = np.array([st.start for st in c.steps], dtype=float)
        out.append(b.Chart("device-iops.png", b.XYChart(
            curves=tuple(b.Curve(d.label, starts, np.array([st.iops for st in d.steps], dtype=float))
                         for d in c.devices),
            xlabel="Step start", ylabel="IOPS", time_axis=True),
            f"Each device's IOPS per step of {duration(c.step)}, the step drawn at its start."))
    steps = []
    for k, st in enumerate(c.steps):
        for d in c.devices:
            one = d.steps[k]
            ios = sum(s.ios for s in one.streams)
            steps.append((str(st.number), d.label, f"{ios:,}", f"{sum(s.ios * s.bs for s in one.streams) / 1e6:,.1f}",
                          _reads(one.streams), f"{one.qd:.2f}", *_rt(one.seen), _largest(one.streams)))
    out.append(b.table(("Step", "Device", "I/Os", "MB", "Reads (%)", "QD", "Mean RT (µs)", "p99 RT (µs)", "Flushes",
                        "Largest streams"), steps,
                       title="Each device per step (RT: response time, issue to completion at the block layer; "
                             "n.r.: not recorded; -: none)"))
    return out
