"""Results grouped into trends: per device and test, each headline figure in time order.

Reads the index's rows (:mod:`tkperf.history.index`) and finds each
trend's change points (:mod:`tkperf.history.changepoints`); prints and
draws nothing.  :func:`as_dict` is what ``tkperf history --json`` prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.history import changepoints
from tkperf.history.index import HOST_FIGURE, HOST_TEST, FigureName, FigureRow, FileFacts, Spread
from tkperf.verdict.comparable import host_path

#: 1: the first layout of ``tkperf history --json``.
JSON_VERSION = 1


@dataclass(frozen=True)
class Point(Spread):
    """One run's value of a figure, with the spread of its window."""

    path: str
    started: str
    quick: bool

    def as_dict(self) -> dict:
        return {"path": self.path, "started": self.started, "value": self.value, "lo": self.lo,
                "hi": self.hi, "sd": self.sd, "n": self.n, "steady": self.steady, "quick": self.quick}


@dataclass(frozen=True)
class Change:
    """A change point: the level moved at ``points[index]`` (the file ``path``)."""

    index: int
    path: str
    started: str
    before: float
    after: float
    change_pct: Optional[float]
    p_value: float
    host_step: Optional[int] = None  # where the host's idle share stepped, within a run: 0-based in points
    host_path: bool = False  # a figure the host path sets, at such a step: it follows the host

    def as_dict(self) -> dict:
        return {"index": self.index, "path": self.path, "started": self.started, "before": self.before,
                "after": self.after, "change_pct": self.change_pct, "p_value": self.p_value,
                "host_step": self.host_step, "follows_host": self.host_path}

    def host_text(self) -> str:
        """What a step of the host at this change point says of it ('' when none)."""
        if self.host_step is None:
            return ""
        where = f"the host's idle share on the emulated SSD stepped at run {self.host_step + 1}"
        if self.host_path:
            return f"{where}, and the host path sets this figure: follows the host, not the drive"
        return f"{where}: may follow the host, not the drive"


@dataclass(frozen=True)
class Trend(FigureName):
    """One figure of one test of one device over its runs."""

    points: Tuple[Point, ...]
    changes: Tuple[Change, ...]

    def as_dict(self) -> dict:
        return {"test": self.test, "figure": self.figure, "label": self.label, "unit": self.unit,
                "better": self.better, "points": [p.as_dict() for p in self.points],
                "changes": [c.as_dict() for c in self.changes]}


@dataclass(frozen=True)
class Device:
    key: str
    label: str
    runs: int
    trends: Tuple[Trend, ...]
    files: Tuple[FileFacts, ...] = ()  # its results in time order (the pages' runs table)

    def as_dict(self) -> dict:
        return {"device": self.key, "label": self.label, "runs": self.runs,
                "trends": [t.as_dict() for t in self.trends]}


#: A start time the history orders by: the ISO 8601 forms tkperf writes (a
#: date, a time to the second, millisecond or microsecond, an offset or Z),
#: checked before ``datetime.fromisoformat``, which reads more on newer
#: Pythons than on 3.9 (3.11: basic format, week dates, Z; later: 24:00):
#: the order is the same on every Python.
_STARTED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
                      r"(\.[0-9]{3}|\.[0-9]{6})?([+-][0-9]{2}:[0-9]{2}|Z)?)?")


def when(f: FileFacts) -> Tuple[float, str]:
    """The sort key of a result: its start time (files without one first, by path)."""
    try:
        if not _STARTED.fullmatch(f.started):
            raise ValueError(f"not a start time tkperf writes: {f.started!r}")
        stamp = datetime.fromisoformat(f.started[:-1] + "+00:00" if f.started.endswith("Z") else f.started)
        if stamp.tzinfo is None:
            stamp = stamp.astimezone()
        return stamp.timestamp(), f.path
    except ValueError:
        return float("-inf"), f.path


def _trend(test: str, figure: str, rows: List[Tuple[FileFacts, FigureRow]],
           host: Optional[Dict[str, float]] = None) -> Trend:
    """The figure's trend; ``host`` (each file's host idle share) is taken out of
    a figure the host path sets before its steps are looked for
    (:func:`tkperf.history.changepoints.adjusted`), when every run has it."""
    points = tuple(Point(r.value, r.lo, r.hi, r.sd, r.n, r.steady, path=f.path, started=f.started, quick=f.quick)
                   for f, r in rows)
    shares = [host.get(p.path) for p in points] if host and host_path(test, figure) else []
    found = changepoints.detect([p.value for p in points],
                                host=[float(v) for v in shares if v is not None]
                                if shares and None not in shares else None)
    changes = tuple(Change(c.index, points[c.index].path, points[c.index].started, c.before, c.after,
                           c.change_pct, c.p_value) for c in found)
    last = rows[-1][1]
    return Trend(test, figure, last.label, last.unit, last.better, last.text, points, changes)


#: How many runs apart a figure's change point and a step of the host's idle share may lie to be one.
HOST_STEP_RUNS = 1


def _at_host_steps(trends: Sequence[Trend]) -> Tuple[Trend, ...]:
    """The trends with each change point that lies within :data:`HOST_STEP_RUNS`
    runs of a change point of the host's idle share (on tkperf's emulated
    SSD: fio kept the drive idle a different share of the time: the host's
    load changed) marked so, and as following the host where the host path
    sets the figure (:func:`tkperf.verdict.comparable.host_path`, by test key)."""
    host = [t for t in trends if (t.test, t.figure) == (HOST_TEST, HOST_FIGURE)]
    steps = [c.path for t in host for c in t.changes]
    if not steps:
        return tuple(trends)
    out = []
    for t in trends:
        if t in host:
            out.append(t)
            continue
        position = {p.path: i for i, p in enumerate(t.points)}  # the runs as this trend counts them
        at = [position[path] for path in steps if path in position]
        changes = []
        for c in t.changes:
            near = [i for i in at if abs(c.index - i) <= HOST_STEP_RUNS]
            changes.append(replace(c, host_step=near[0], host_path=host_path(t.test, t.figure)) if near else c)
        out.append(replace(t, changes=tuple(changes)))
    return tuple(out)


def build(results: Sequence[FileFacts]) -> List[Device]:
    """Every device (by first appearance in time), its trends in the order the tests report them."""
    ordered = sorted(results, key=when)
    devices: Dict[str, List[FileFacts]] = {}
    for f in ordered:
        devices.setdefault(f.device, []).append(f)
    out = []
    for key, files in devices.items():
        series: Dict[Tuple[str, str], List[Tuple[FileFacts, FigureRow]]] = {}
        for f in files:
            for r in f.figures:
                series.setdefault((r.test, r.figure), []).append((f, r))
        host = {f.path: r.value for f, r in series.get((HOST_TEST, HOST_FIGURE), [])}
        trends = _at_host_steps([_trend(test, fig, rows, host) for (test, fig), rows in series.items()])
        out.append(Device(key, files[-1].label, len(files), trends, tuple(files)))
    return out


def method() -> dict:
    """The change-point method and its parameters, as --json states them."""
    return {"name": "binary segmentation, CUSUM statistic, permutation test",
            "min_segment": changepoints.MIN_SEGMENT, "alpha": changepoints.ALPHA,
            "permutations": changepoints.PERMUTATIONS, "seed": changepoints.SEED}


def as_dict(devices: Sequence[Device], index: Optional[str], stats: dict) -> dict:
    """What ``tkperf history --json`` prints."""
    return {"version": JSON_VERSION, "changepoints": method(), "index": index, "update": stats,
            "devices": [d.as_dict() for d in devices]}
