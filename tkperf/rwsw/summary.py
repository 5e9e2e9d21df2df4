"""A capture in words (``tkperf show N.xml``) and as JSON (``--json``,
tkperf/model/data/capture-show.schema.json).  Steps are numbered from 1."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tkperf.durations import duration, latency
from tkperf.errors import TkperfError
from tkperf.model.files import open_to_read
from tkperf.rwsw.model import LOSS_NOTE, Capture, Device, Latency, Seen, Source, Step, Stream, is_capture

#: ``show --json`` of a capture: its ``schema`` name and ``version``.
JSON_SCHEMA = "tkperf-capture-show"
#: 3: ``host``, ``devices`` (a capture of several devices: each one's
#: figures and steps), ``combined`` and ``sources`` (a combined capture).
JSON_VERSION = 3
NOT_RECORDED = "not recorded"
#: Coverage (by I/Os or bytes, %) below which show and report warn.
COVERAGE_WARN = 80.0
#: What a combined capture's 99th percentiles are (:mod:`tkperf.rwsw.combine`).
P99_NOTE = ("99th percentiles of I/Os of several captures together are the largest of theirs, an upper bound "
            "(their response times are not kept)")
#: Streams below this share are summed into one line of the text.
SHOWN_SHARE = 0.005


def is_capture_file(path: str) -> bool:
    """Whether ``path`` is a regular file that starts as a capture does (its
    root element); anything else, unreadable or a link of another user's too
    (:func:`tkperf.model.files.open_to_read`), is left to the result reader."""
    try:
        if not os.path.isfile(path):
            return False
        fd = open_to_read(path, "capture")
    except TkperfError:
        return False
    try:
        return is_capture(os.read(fd, 4096))
    except OSError:
        return False
    finally:
        os.close(fd)


def _stream_dict(s: Stream) -> Dict[str, Any]:
    return {"key": s.key, "access": s.access, "rw": s.rw, "bs": s.bs, "ios": s.ios, "share": s.share,
            "byte_share": s.byte_share, "flushes": s.flushes}


def _lat_dict(lat: Optional[Latency]) -> Dict[str, Any]:
    if lat is None:
        return {"lat_ios": 0, "lat_mean_us": None, "lat_p99_us": None, "lat_max_us": None}
    return {"lat_ios": lat.ios, "lat_mean_us": lat.mean_us, "lat_p99_us": lat.p99_us, "lat_max_us": lat.max_us}


def seen_dict(seen: Optional[Seen]) -> Dict[str, Any]:
    """What the application saw, as ``show --json`` has it (top level and each
    step): None (null) for what a version 1 capture did not record."""
    if seen is None:
        return {"figures_recorded": False, "lat_mean_us": None, "lat_p99_us": None, "lat_max_us": None, "flushes": None,
                "fua": None, "discards": None, "discard_bytes": None, "lost_events": None, "touched_by_loss": None,
                "read": None, "write": None}
    out = {"figures_recorded": True, **_lat_dict(seen.lat)}
    del out["lat_ios"]
    out.update({"flushes": seen.flushes, "fua": seen.fua, "discards": seen.discards,
                "discard_bytes": seen.discard_bytes, "lost_events": seen.lost_events,
                "touched_by_loss": seen.loss_touched or bool(seen.lost_events),
                "read": _lat_dict(seen.read), "write": _lat_dict(seen.write)})
    return out


def _step_dict(st: Step) -> Dict[str, Any]:
    return {"number": st.number, "start": st.start, "duration": st.duration, "qd": st.qd, "iops": st.iops,
            "mbps": st.mbps, **seen_dict(st.seen), "coverage_ios_pct": st.coverage_ios_pct,
            "coverage_bytes_pct": st.coverage_bytes_pct, "streams": [_stream_dict(s) for s in st.streams]}


def _device_dict(d: Device) -> Dict[str, Any]:
    return {"name": d.name, "host": d.host, "label": d.label, "size": d.size, "offset": d.offset, "ios": d.ios,
            "qd": d.qd, "iops": d.iops, "mbps": d.mbps, **seen_dict(d.seen), "coverage_ios_pct": d.coverage_ios_pct,
            "coverage_bytes_pct": d.coverage_bytes_pct, "streams": [_stream_dict(s) for s in d.streams],
            "steps": [_step_dict(st) for st in d.steps]}


def _source_dict(s: Source) -> Dict[str, Any]:
    return {"file": s.file, "name": s.name, "host": s.host, "devices": s.devices, "started": s.started,
            "duration": s.duration, "at": s.at}


def as_dict(c: Capture) -> Dict[str, Any]:
    """Every figure of the capture, streams and steps with all their streams;
    for several devices each one's beside the whole's."""
    return {"schema": JSON_SCHEMA, "version": JSON_VERSION, "name": c.name, "device": c.device, "host": c.host,
            "devices": [_device_dict(d) for d in c.devices], "combined": c.combined,
            "sources": [_source_dict(s) for s in c.sources],
            "size": c.size, "source": c.source, "started": c.started, "duration": c.duration, "step": c.step,
            "qd": c.qd, "iops": c.iops, "mbps": c.mbps, "iolog": c.iolog, "file_integrity": c.integrity,
            "stopped_early": None if c.stopped_at is None else {"at": c.stopped_at, "by": c.stopped_by},
            **seen_dict(c.seen), "steps_touched_by_loss": list(c.steps_touched_by_loss),
            "coverage_ios_pct": c.coverage_ios_pct, "coverage_bytes_pct": c.coverage_bytes_pct,
            "streams": [_stream_dict(s) for s in c.streams],
            "steps": [_step_dict(st) for st in c.steps]}


def _us(x: float) -> str:
    return latency(x, micro="µs")  # the one unit chooser: '412.0 µs', '2.3 ms'


def lat_text(lat: Optional[Latency]) -> str:
    """``mean 412.0 µs, p99 2.3 ms, max 9.9 ms`` or why there is none."""
    if lat is None:
        return "no I/O completed"
    return f"mean {_us(lat.mean_us)}, p99 {_us(lat.p99_us)}, max {_us(lat.max_us)}"


def seen_lines(c: Capture, indent: str = "  ") -> List[str]:
    """The response times, flushes, FUA, discards, lost events and coverage of the whole capture, in words."""
    out = []
    seen = c.seen
    if seen is None:
        out.append(f"{indent}response times, flushes, FUA, discards, lost events: {NOT_RECORDED} "
                   "(a capture of an earlier tkperf)")
    else:
        out.append(f"{indent}response time (issue to completion at the block layer): {lat_text(seen.lat)}")
        out.append(f"{indent}  reads: {lat_text(seen.read)}; writes: {lat_text(seen.write)}")
        lost = NOT_RECORDED + " (an import)" if seen.lost_events is None else f"{seen.lost_events:,}"
        out.append(f"{indent}flushes {seen.flushes:,}, FUA writes {seen.fua:,}, discards {seen.discards:,} "
                   f"({seen.discard_bytes:,} bytes); events lost by the trace buffer: {lost}")
        touched = c.steps_touched_by_loss
        if touched or seen.lost_events:
            out.append(f"{indent}{loss_text(touched, len(c.steps))}")
    ios, nbytes = c.coverage_ios_pct, c.coverage_bytes_pct
    if ios is not None and nbytes is not None:
        low = ios < COVERAGE_WARN or nbytes < COVERAGE_WARN
        out.append(f"{indent}dominant streams (80% of the I/Os) cover {ios:.1f}% of the I/Os and {nbytes:.1f}% "
                   f"of the bytes" + (f"; below {COVERAGE_WARN:.0f}%: a replay of them leaves out much of the "
                                      "workload" if low else ""))
    if c.stopped_at is not None:
        out.append(f"{indent}stopped early by {c.stopped_by} after {duration(c.stopped_at)}: what was recorded "
                   "until then is kept")
    return out


def loss_text(touched: Sequence[int], steps: int) -> str:
    """What lost events did to the figures: which steps they touched (marked ``!``)."""
    if not touched:
        return "the events were lost outside the steps' time: no step's figures miss them"
    return (f"step{'s' if len(touched) > 1 else ''} {numbers_text(touched)} (of {steps}, marked !) touched by lost "
            f"events: {LOSS_NOTE}; the whole capture's figures include {'them' if len(touched) > 1 else 'it'}")


def numbers_text(numbers: Sequence[int]) -> str:
    """``1-3, 7``: step numbers in runs."""
    runs: List[List[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _stream_lines(streams: Sequence[Stream], indent: str) -> List[str]:
    out = []
    rest = [s for s in streams if s.share < SHOWN_SHARE]
    for s in streams:
        if s.share >= SHOWN_SHARE:
            out.append(f"{indent}{s.key:<22} {s.ios:>12,}  {100 * s.share:6.2f}%  {100 * s.byte_share:6.2f}%")
    if rest:
        more = f"{len(rest)} more stream" + ("s" if len(rest) != 1 else "")
        out.append(f"{indent}{more:<22} {sum(s.ios for s in rest):>12,}  "
                   f"{100 * sum(s.share for s in rest):6.2f}%  {100 * sum(s.byte_share for s in rest):6.2f}%")
    return out


def top_streams(streams: Sequence[Stream], n: int = 3, decimals: int = 0, sep: str = ", ") -> str:
    """A step's dominant streams in words: the first ``n`` (largest first)
    with their shares, 'SEQ 4KiB write 97%'; a stream whose share rounds to
    0% is not listed as if it were one of them: 'SEQ 4KiB write 100%, 1
    smaller stream'."""
    listed = [s for s in streams[:n] if round(100 * s.share, decimals) > 0]
    words = [f"{s.key} {100 * s.share:.{decimals}f}%" for s in listed]
    if len(listed) < min(n, len(streams)):
        rest = len(streams) - len(listed)
        words.append(f"{rest} smaller stream{'s' if rest != 1 else ''}")
    return sep.join(words) or "no I/O"


def _lat_cells(seen: Optional[Seen]) -> Tuple[str, str, str]:
    """The mean and p99 response time and the flushes of a step's row."""
    lat = seen.lat if seen is not None else None
    mean = "n.r." if seen is None else "-" if lat is None else f"{lat.mean_us:,.0f}"
    p99 = "n.r." if seen is None else "-" if lat is None else f"{lat.p99_us:,.0f}"
    return mean, p99, "n.r." if seen is None else f"{seen.flushes:,}"


def _read_share(streams: Sequence[Stream]) -> str:
    ios = sum(s.ios for s in streams)
    return f"{100 * sum(s.ios for s in streams if s.rw == 'read') / ios:.0f}% reads" if ios else "no I/O"


def device_lines(c: Capture, indent: str = "  ") -> List[str]:
    """A capture of several devices: each device's figures (and a combined
    capture: its sources), in words."""
    out = []
    if c.sources:
        out.append(f"{indent}combined ({c.combined}: "
                   + ("one after the other in time" if c.combined == "days" else "side by side from a common start")
                   + f") of {len(c.sources)} captures:")
        for s in c.sources:
            out.append(f"{indent}  {s.file} ({s.name}): host {s.host or NOT_RECORDED}, {s.devices}, started "
                       f"{s.started}, {duration(s.duration)}, at {duration(s.at) if s.at else '0 s'}")
        out.append(f"{indent}  its {P99_NOTE}")
    if c.devices:
        out.append(f"{indent}devices (one timeline; the whole is their sum, their addresses end to end in the iolog):")
        for d in c.devices:
            lat = d.seen.lat if d.seen is not None else None
            out.append(f"{indent}  {d.label}: {d.ios:,} I/Os, {d.iops:,.0f} IOPS, {d.mbps:,.1f} MB/s, "
                       f"{_read_share(d.streams)}, queue depth {d.qd:.2f}, {lat_text(lat)}; {top_streams(d.streams)}")
    return out


def lines(c: Capture) -> List[str]:
    """The capture's facts, its streams and one line per step (and per device in each step, for several)."""
    ios = sum(s.ios for s in c.streams)
    out = [f"capture {c.name}: {c.device} ({c.source}), started {c.started}"
           + (f" on {c.host}" if c.host else ""),
           f"  {duration(c.duration)} in {len(c.steps)} step{'s' if len(c.steps) != 1 else ''} of "
           f"{duration(c.step)}; {ios:,} I/Os, {c.iops:,.0f} IOPS, {c.mbps:,.1f} MB/s, queue depth {c.qd:.2f}",
           f"  I/Os: {c.iolog}" if c.iolog else "  I/Os: not kept (no iolog)"]
    if c.integrity:
        out.append(f"  capture file: {c.integrity}")
    out += seen_lines(c)
    out += device_lines(c)
    out += ["",
           f"  {'stream':<22} {'I/Os':>12}  {'share':>7}  {'bytes':>7}"]
    out += _stream_lines(c.streams, "  ")
    out += ["", f"  {'step':>4} {'start':>8} {'IOPS':>10} {'MB/s':>9} {'QD':>7} {'mean µs':>9} {'p99 µs':>9} "
                f"{'flushes':>8}  dominant streams"]
    for st in c.steps:
        mean, p99, flushes = _lat_cells(st.seen)
        mark = "!" if st.touched_by_loss else " "
        out.append(f" {mark}{st.number:>4} {duration(st.start) if st.start else '0 s':>8} {st.iops:>10,.0f} "
                   f"{st.mbps:>9,.1f} {st.qd:>7.2f} {mean:>9} {p99:>9} {flushes:>8}  {top_streams(st.streams)}")
        for d in c.devices:
            one = d.steps[st.index]
            mean, p99, flushes = _lat_cells(one.seen)
            ios = sum(s.ios for s in one.streams)
            out.append(f"  {'':>4} {'':>8} {one.iops:>10,.0f} {one.mbps:>9,.1f} {one.qd:>7.2f} {mean:>9} {p99:>9} "
                       f"{flushes:>8}    {d.label}: {ios:,} I/Os, {_read_share(one.streams)}; "
                       f"{top_streams(one.streams, 2)}")
    if any(st.seen is None for st in c.steps):
        out.append("  n.r.: not recorded (a capture of an earlier tkperf); -: no I/O completed in the step")
    if c.steps_touched_by_loss:
        out.append("  !: the step's figures miss events the trace buffer lost")
    return out
