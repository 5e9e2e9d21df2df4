"""The points of a DIRTH or CBW sweep and the three shown in detail.

Under tkperf's shorter structure a point is what the one sweep measured.
Under the PTS 2.0 implementation's structure (every round a pre-write and
the whole sweep, until TC32/QD32 is steady) a point's IOPS, MB/s and mean
response time are means over the steady-state window's rounds, its MAX
the mean of the rounds' maxima, and the max, mid and min points carry the
workload of their own capture (a pre-write, then minutes at the point)
whose histogram and percentiles the report shows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.model.results import Round, Workload

# --- the points --------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    """One measured sweep point."""

    tc: int
    qd: int
    iops: float
    lat_mean_us: float
    #: The workload whose histogram and percentiles the point shows: the
    #: sweep's, or under the PTS 2.0 structure the point's capture (None
    #: for a point without one).
    workload: Optional[Workload] = None
    #: Under the PTS 2.0 structure, the window means of MB/s and of the
    #: rounds' maxima (the figures above are window means too).
    mb_s: Optional[float] = None
    lat_max_us: Optional[float] = None

    @property
    def oio(self) -> int:
        return self.tc * self.qd

    @property
    def label(self) -> str:
        return f"TC{self.tc}/QD{self.qd}"


@dataclass(frozen=True)
class Choice:
    """The max, mid and min points; ``under_limit`` is False when no point
    had a mean response time within the limit (max is then the point with
    the lowest mean response time)."""

    max: Point
    mid: Point
    min: Point
    limit_us: float
    under_limit: bool

    def named(self) -> Tuple[Tuple[str, Point], ...]:
        return (("max", self.max), ("mid", self.mid), ("min", self.min))


RULE = ("The max point is the point with the highest IOPS among those whose mean response time is "
        "at most the limit ({limit}); the min point is the one with the lowest OIO (TC1/QD1 when "
        "measured); the mid point is, among the points within the limit other than the max and min "
        "points (when there are any), the one whose IOPS are nearest the middle of the min and max "
        "points' IOPS. Ties go to the lower OIO, then the lower TC. When no point is within the "
        "limit, the max point is the one with the lowest mean response time and the mid point is "
        "chosen among all points.")


def _low(p: Point) -> Tuple[int, int]:
    return (p.oio, p.tc)


def choose_points(points: Sequence[Point], limit_us: float) -> Choice:
    """The max, mid and min points of a sweep by the rule :data:`RULE`."""
    if not points:
        raise ValueError("no sweep points to choose from")
    low = min(points, key=_low)
    eligible = [p for p in points if p.lat_mean_us <= limit_us]
    if eligible:
        top = min(eligible, key=lambda p: (-p.iops, _low(p)))
    else:
        top = min(points, key=lambda p: (p.lat_mean_us, _low(p)))
    middle = (low.iops + top.iops) / 2.0
    pool = [p for p in (eligible or points) if p is not top and p is not low] or (eligible or list(points))
    mid = min(pool, key=lambda p: (abs(p.iops - middle), _low(p)))
    return Choice(max=top, mid=mid, min=low, limit_us=float(limit_us), under_limit=bool(eligible))



#: A capture's workload name: ``cap-max-rnd-4k-0-100-tc32-qd32``; its pre-write's ``pre-max-...``.
CAPTURE = re.compile(r"cap-(max|mid|min)-.*-tc(\d+)-qd(\d+)")
_POINT = re.compile(r".*-tc(\d+)-qd(\d+)")


def capture_name(role: str, point: str) -> str:
    """The capture of sweep point ``point`` as the ``role`` point."""
    return f"cap-{role}-{point}"


def captured(rnd: Optional[Round]) -> Dict[Tuple[int, int], Workload]:
    """(TC, QD) -> the capture workload of each captured point."""
    out: Dict[Tuple[int, int], Workload] = {}
    for w in rnd.workloads if rnd is not None else ():
        m = CAPTURE.fullmatch(w.name)
        if m:
            out[(int(m.group(2)), int(m.group(3)))] = w
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


#: The start of a pre-write's workload name (``pre-rnd-4k-0-100-tc32-qd32``, ``pre-max-...``).
PREWRITE = "pre-"


def window_points(rounds: Sequence[Round], captures: Optional[Round] = None) -> List[Point]:
    """The points of a sweep repeated in ``rounds`` (the window), each the
    mean of its rounds, in the order of the last round (pre-writes left
    out); a captured point carries its capture."""
    if not rounds:
        return []
    caps = captured(captures)
    out = []
    for w in rounds[-1].workloads:
        m = _POINT.fullmatch(w.name)
        if w.name.startswith(PREWRITE) or not m:
            continue
        same = [x for x in (r.workload(w.name) for r in rounds) if x is not None]
        tc, qd = int(m.group(1)), int(m.group(2))
        out.append(Point(tc, qd, _mean([x.iops for x in same]), _mean([x.lat_mean_us for x in same]),
                         caps.get((tc, qd)), _mean([x.bw_bytes / 1e6 for x in same]),
                         _mean([x.lat_max_us for x in same])))
    return out
