"""Captures combined into one workload (``tkperf capture --combine A.xml B.xml
--as days|hosts --name N``, docs/rwsw.rst, "Combining captures").

``--as days``: one after the other in time, in the order given -- the days
(or hours) of one workload: the combined capture's steps are the first
capture's, then the second's, and so on, each step as it was captured; the
captures must be of as many devices, the first's names kept (each source
names its own).  ``--as hosts``: side by side from a common start -- the
hosts (or drives) of one workload: step N of the combined capture is step N
of every capture together, and every device of every capture is a device of
the combined one.  Both need the same ``--step``.

What cannot be made exact from the captures' figures is said: a 99th
percentile of I/Os of several captures together (a day's, or a step of
several hosts) is not kept in either, so the combined one is the largest of
theirs, an upper bound (for a mixture, at the largest of the parts' 99th
percentiles each part has at least 99% of its I/Os done; :data:`tkperf.rwsw.summary.P99_NOTE`).
Counts, bytes, shares, IOPS, MB/s, queue depths, mean and largest response
times, flushes, FUA writes, discards and lost events add up exactly.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.errors import UsageError
from tkperf.rwsw.figures import Device, Latency, Seen, Source, Step, Stream
from tkperf.rwsw.model import MAX_DEVICES, Capture
from tkperf.rwsw.several import joined

HOW = ("days", "hosts")


def _streams(groups: Sequence[Sequence[Stream]]) -> Tuple[Stream, ...]:
    """Streams of several parts together, by key: I/Os added, shares of the sum (bytes: I/Os x transfer size)."""
    ios: Dict[Tuple[str, str, int], int] = {}
    flushes: Dict[Tuple[str, str, int], Optional[int]] = {}
    for group in groups:
        for s in group:
            k = (s.access, s.rw, s.bs)
            ios[k] = ios.get(k, 0) + s.ios
            before = flushes.get(k, 0)
            flushes[k] = None if s.flushes is None or before is None else before + s.flushes
    total = sum(ios.values())
    nbytes = sum(n * k[2] for k, n in ios.items())
    out = [Stream(access=k[0], rw=k[1], bs=k[2], ios=n, share=n / total if total else 0.0,
                  byte_share=n * k[2] / nbytes if nbytes else 0.0, flushes=flushes[k] if k[1] == "write" else None)
           for k, n in ios.items() if n]
    out.sort(key=lambda s: (-s.ios, s.key))
    return tuple(out)


def _latency(lats: Sequence[Optional[Latency]]) -> Optional[Latency]:
    have = [x for x in lats if x is not None]
    if not have:
        return None
    n = sum(x.ios for x in have)
    return Latency(ios=n, mean_us=sum(x.mean_us * x.ios for x in have) / n, p99_us=max(x.p99_us for x in have),
                   max_us=max(x.max_us for x in have))


def _seen(seens: Sequence[Optional[Seen]]) -> Optional[Seen]:
    """What the application saw in several parts together; None where any part did not record it."""
    if not seens or any(s is None for s in seens):
        return None
    got = [s for s in seens if s is not None]
    lost = [s.lost_events for s in got]
    return Seen(lat=_latency([s.lat for s in got]), read=_latency([s.read for s in got]),
                write=_latency([s.write for s in got]), flushes=sum(s.flushes for s in got),
                fua=sum(s.fua for s in got), discards=sum(s.discards for s in got),
                discard_bytes=sum(s.discard_bytes for s in got),
                lost_events=None if any(x is None for x in lost) else sum(x or 0 for x in lost),
                loss_touched=any(s.loss_touched for s in got))


def _empty(index: int, start: float, duration: float, recorded: bool) -> Step:
    seen = Seen(None, None, None, 0, 0, 0, 0, 0) if recorded else None
    return Step(index=index, start=start, duration=duration, streams=(), qd=0.0, iops=0.0, mbps=0.0, seen=seen)


def _step(index: int, start: float, parts: Sequence[Step], duration: float) -> Step:
    """Steps of several parts at one time as one step of ``duration``."""
    streams = _streams([p.streams for p in parts])
    ios = sum(s.ios for s in streams)
    nbytes = sum(s.ios * s.bs for s in streams)
    return Step(index=index, start=start, duration=duration, streams=streams,
                qd=sum(p.qd * p.duration for p in parts) / duration, iops=ios / duration,
                mbps=nbytes / duration / 1e6, seen=_seen([p.seen for p in parts]))


def _totals(steps: Sequence[Step], duration: float) -> Dict[str, object]:
    """The whole's streams, queue depth, IOPS, MB/s and what was seen, from its steps."""
    streams = _streams([st.streams for st in steps])
    return {"streams": streams, "qd": sum(st.qd * st.duration for st in steps) / duration,
            "iops": sum(s.ios for s in streams) / duration,
            "mbps": sum(s.ios * s.bs for s in streams) / duration / 1e6}


def _source(path: str, c: Capture, at: float) -> Source:
    return Source(file=os.path.basename(path), name=c.name, host=c.host,
                  devices=", ".join(d.label for d in c.parts), started=c.started, duration=c.duration, at=at)


def check(paths: Sequence[str], caps: Sequence[Capture], how: str) -> None:
    """A UsageError (exit 2) for what cannot be combined: fewer than two, one
    given twice, steps of different lengths, days of different device counts,
    hosts of more than :data:`MAX_DEVICES` devices together."""
    if how not in HOW:
        raise UsageError(f"--as {how!r}: choose days (one after the other) or hosts (side by side)")
    if len(caps) < 2:
        raise UsageError("--combine needs two captures or more")
    real = [os.path.realpath(p) for p in paths]
    for i, p in enumerate(real):
        if p in real[:i]:
            raise UsageError(f"{paths[i]}: given twice")
    for p, c in zip(paths[1:], caps[1:]):
        if abs(c.step - caps[0].step) > 1e-9 * caps[0].step:
            raise UsageError(f"{p}: steps of {c.step:g} s, {paths[0]} of {caps[0].step:g} s: combine captures of "
                             "one --step")
        if how == "days" and len(c.parts) != len(caps[0].parts):
            raise UsageError(f"{p}: {len(c.parts)} device(s), {paths[0]} {len(caps[0].parts)}: days of one workload "
                             "are of the same devices (--as hosts puts devices side by side)")
    if how == "hosts":
        _check_hosts(paths, caps)


def _check_hosts(paths: Sequence[str], caps: Sequence[Capture]) -> None:
    """Side by side: at most :data:`MAX_DEVICES` devices, and not one host's same device twice."""
    labels = [(p, d.label) for p, c in zip(paths, caps) for d in c.parts if d.host]
    for i, (p, label) in enumerate(labels):
        other = next((q for q, x in labels[:i] if x == label), None)
        if other is not None:
            raise UsageError(f"{p}: {label} is in {other} too: --as hosts puts different devices side by side "
                             "(--as days puts captures of one device one after the other)")
    if sum(len(c.parts) for c in caps) > MAX_DEVICES:
        raise UsageError(f"{sum(len(c.parts) for c in caps)} devices together: a capture holds at most "
                         f"{MAX_DEVICES}")


def days(paths: Sequence[str], caps: Sequence[Capture], name: str, iolog: Optional[str]) -> Capture:
    """The captures one after the other in time (:mod:`this module <tkperf.rwsw.combine>`)."""
    at, starts = 0.0, []
    for c in caps:
        starts.append(at)
        at += c.duration
    steps: List[Step] = []
    for c, t in zip(caps, starts):
        steps += [replace(st, index=len(steps) + i, start=t + st.start) for i, st in enumerate(c.steps)]
    devices: List[Device] = []
    offset = 0
    for i, first in enumerate(caps[0].parts):
        mine = [c.parts[i] for c in caps]
        own: List[Step] = []
        for d, t in zip(mine, starts):
            own += [replace(st, index=len(own) + k, start=t + st.start) for k, st in enumerate(d.steps)]
        size = max(d.size for d in mine)
        devices.append(Device(name=first.name, size=size, offset=offset, steps=tuple(own),
                              seen=_seen([d.seen for d in mine]), host=first.host,
                              **_totals(own, at)))  # type: ignore[arg-type]
        offset += size
    return _capture(paths, caps, name, iolog, "days", at, tuple(steps), devices, starts)


def hosts(paths: Sequence[str], caps: Sequence[Capture], name: str, iolog: Optional[str]) -> Capture:
    """The captures side by side from a common start (:mod:`this module <tkperf.rwsw.combine>`)."""
    n = max(len(c.steps) for c in caps)
    step = caps[0].step
    recorded = all(st.seen is not None for c in caps for st in c.steps)
    grid = []
    for k in range(n):
        durations = [c.steps[k].duration for c in caps if k < len(c.steps)]
        grid.append((k * step, max(durations)))
    duration = max(c.duration for c in caps)
    devices: List[Device] = []
    offset = 0
    for c in caps:
        for d in c.parts:
            own = tuple(d.steps[k] if k < len(d.steps) else _empty(k, s, length, recorded)
                        for k, (s, length) in enumerate(grid))
            devices.append(replace(d, offset=offset, steps=own))
            offset += d.size
    steps = tuple(_step(k, s, [d.steps[k] for d in devices], length) for k, (s, length) in enumerate(grid))
    return _capture(paths, caps, name, iolog, "hosts", duration, steps, devices, [0.0] * len(caps))


def _capture(paths: Sequence[str], caps: Sequence[Capture], name: str, iolog: Optional[str], how: str,
             duration: float, steps: Tuple[Step, ...], devices: List[Device], starts: Sequence[float]) -> Capture:
    hosts_ = {c.host for c in caps}
    first = min(caps, key=lambda c: c.started) if how == "hosts" else caps[0]
    return Capture(name=name, device=joined([d.label for d in devices]) if len(devices) > 1 else devices[0].name,
                   size=sum(d.size for d in devices), source="combined", started=first.started, duration=duration,
                   step=caps[0].step, steps=steps, iolog=iolog, seen=_seen([c.seen for c in caps]),
                   host=hosts_.pop() if len(hosts_) == 1 else None,
                   devices=tuple(devices) if len(devices) > 1 else (), combined=how,
                   sources=tuple(_source(p, c, t) for p, c, t in zip(paths, caps, starts)),
                   **_totals(steps, duration))  # type: ignore[arg-type]
