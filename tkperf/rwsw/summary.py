"""A capture in words (``tkperf show N.xml``) and as JSON (``--json``)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Sequence

from tkperf.durations import duration
from tkperf.errors import TkperfError
from tkperf.model.files import open_to_read
from tkperf.rwsw.model import Capture, Stream, is_capture

#: ``show --json`` of a capture: its ``schema`` name and ``version``.
JSON_SCHEMA = "tkperf-capture-show"
JSON_VERSION = 1
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
            "byte_share": s.byte_share}


def as_dict(c: Capture) -> Dict[str, Any]:
    """Every figure of the capture, streams and steps with all their streams."""
    return {"schema": JSON_SCHEMA, "version": JSON_VERSION, "name": c.name, "device": c.device,
            "size": c.size, "source": c.source, "started": c.started, "duration": c.duration, "step": c.step,
            "qd": c.qd, "iops": c.iops, "mbps": c.mbps, "iolog": c.iolog,
            "streams": [_stream_dict(s) for s in c.streams],
            "steps": [{"index": st.index, "start": st.start, "duration": st.duration, "qd": st.qd,
                       "iops": st.iops, "mbps": st.mbps, "streams": [_stream_dict(s) for s in st.streams]}
                      for st in c.steps]}


def _stream_lines(streams: Sequence[Stream], indent: str) -> List[str]:
    out = []
    rest = [s for s in streams if s.share < SHOWN_SHARE]
    for s in streams:
        if s.share >= SHOWN_SHARE:
            out.append(f"{indent}{s.key:<22} {s.ios:>12,}  {100 * s.share:6.2f}%  {100 * s.byte_share:6.2f}%")
    if rest:
        out.append(f"{indent}{f'{len(rest)} more streams':<22} {sum(s.ios for s in rest):>12,}  "
                   f"{100 * sum(s.share for s in rest):6.2f}%  {100 * sum(s.byte_share for s in rest):6.2f}%")
    return out


def _top(streams: Sequence[Stream], n: int = 3) -> str:
    return ", ".join(f"{s.key} {100 * s.share:.0f}%" for s in streams[:n]) or "no I/O"


def lines(c: Capture) -> List[str]:
    """The capture's facts, its streams and one line per step."""
    ios = sum(s.ios for s in c.streams)
    out = [f"capture {c.name}: {c.device} ({c.source}), started {c.started}",
           f"  {duration(c.duration)} in {len(c.steps)} step{'s' if len(c.steps) != 1 else ''} of "
           f"{duration(c.step)}; {ios:,} I/Os, {c.iops:,.0f} IOPS, {c.mbps:,.1f} MB/s, queue depth {c.qd:.2f}",
           f"  I/Os: {c.iolog}" if c.iolog else "  I/Os: not kept (no iolog)",
           "",
           f"  {'stream':<22} {'I/Os':>12}  {'share':>7}  {'bytes':>7}"]
    out += _stream_lines(c.streams, "  ")
    out += ["", f"  {'step':>4} {'start':>8} {'IOPS':>10} {'MB/s':>9} {'QD':>7}  dominant streams"]
    for st in c.steps:
        out.append(f"  {st.index:>4} {duration(st.start) if st.start else '0 s':>8} {st.iops:>10,.0f} "
                   f"{st.mbps:>9,.1f} {st.qd:>7.2f}  {_top(st.streams)}")
    return out
