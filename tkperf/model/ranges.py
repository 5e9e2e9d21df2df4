"""Every figure a result file holds is a number in its physical range, or the file is refused.

``xs:double`` allows ``NaN``, ``INF`` and ``-INF``, and a negative count or
latency parses as well as a positive one; Python's ``float()`` takes them
all.  A figure that is not finite or out of its range would pass every
comparison the wrong way (NaN is neither better nor worse) and make JSON
that is not JSON, so :func:`check_run` is the one place that looks at every
number of a loaded run, whatever the file's format (tkperf's current one,
format 1, an original TKperf archive: :func:`tkperf.store.loads`
calls it for each), and refuses the file with one line naming the element
and attribute (a :class:`ResultFileError`, exit 7).  The rules
(docs/resilience.rst):

* I/O figures (IOPS, bandwidth, bytes, I/O counts, every latency and
  percentile), times (seconds, milliseconds), block sizes, job and queue
  counts, capacities and sector sizes: finite and at least 0;
* percentages (a workload's read share ``rwmixread``): 0 to 100;
* steady-state values, average and range: finite and at least 0; slope,
  intercept and slope excursion: finite (they may be negative);
* a test's tracking metric: a figure tkperf measures (``write.iops``,
  ``lat_mean_us``: :meth:`Workload.is_metric`);
* drive-health values (a temperature may be below 0) and series rows:
  finite; series rows also at least 0 (every column tkperf writes is a
  count, a time, a rate or an index).

Nothing is repaired or dropped: a file with one such number is not a
result tkperf vouches for.
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Iterable, List, Optional, Tuple

import numpy as np

from tkperf.errors import ResultFileError
from tkperf.model.results import IoStats, RunResult, TestRun, Workload

#: IoStats fields that are not a single number.
_NOT_FIGURES = ("percentiles", "bins")
_IO_FIELDS = tuple(f.name for f in fields(IoStats) if f.name not in _NOT_FIGURES)
_IO_ATTRS = tuple(name.replace("_", "-") for name in _IO_FIELDS)


def _bad(value: float, low: Optional[float], high: Optional[float]) -> str:
    """Why ``value`` is not a figure in [low, high] (empty when it is)."""
    if isinstance(value, bool):
        return ""
    if not isinstance(value, (int, float)):
        return f"is {value!r}, not a number"
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {value!r}, not a finite number"
    if low is not None and value < low:
        return f"is {value!r}, below {low:g}"
    if high is not None and value > high:
        return f"is {value!r}, above {high:g}"
    return ""


def _fine(values: List[float], low: Optional[float] = 0.0, high: Optional[float] = None) -> bool:
    """The usual case at a glance: all finite (a NaN or an infinity makes the
    sum no finite number; an overflowing sum only sends them the long way)
    and within [low, high]."""
    try:
        return (not values or (math.isfinite(sum(values)) and (low is None or min(values) >= low)
                               and (high is None or max(values) <= high)))
    except TypeError:
        return False


def _check(where: str, items: Iterable[Tuple[str, float]], low: Optional[float] = 0.0,
           high: Optional[float] = None) -> None:
    pairs = list(items)
    if _fine([v for _, v in pairs], low, high):
        return
    for name, value in pairs:
        why = _bad(value, low, high)
        if why:
            raise ResultFileError(f"{where} attribute {name} {why}")


def _io(where: str, io: IoStats) -> None:
    values = [getattr(io, n) for n in _IO_FIELDS]
    if not _fine(values):
        _check(where, zip(_IO_ATTRS, values))
    percentiles = [us for _p, us in io.percentiles]
    if not _fine(percentiles):
        _check(f"{where} <percentile>", (("us", us) for us in percentiles))
    if io.bins and int(np.min(np.asarray(io.bins, dtype=np.int64))) < 0:
        _check(f"{where} <latency-bins>", (("ns/count", x) for pair in io.bins for x in pair))


def _test(where: str, t: TestRun) -> None:
    if t.tracking_metric and not Workload.is_metric(t.tracking_metric):
        raise ResultFileError(f"{where} <tracking> attribute metric is {t.tracking_metric[:40]!r}, not a figure "
                              "tkperf measures")
    for r in t.rounds:
        rw = f"{where} <round index={r.index}>"
        _check(rw, (("index", r.index), ("wall-s", r.wall_s), ("fio-s", r.fio_s)))
        for w in r.workloads:
            ww = f"{rw} <workload name={w.name!r}>"
            _check(ww, (("bs", w.bs), ("numjobs", w.numjobs), ("iodepth", w.iodepth),
                        ("runtime-ms", w.runtime_ms), ("error", w.error), ("cpu-pct", w.cpu_pct)))
            _check(ww, (("rwmixread", w.rwmixread),), 0.0, 100.0)
            _io(f"{ww} <read>", w.read)
            _io(f"{ww} <write>", w.write)
    if t.purge is not None:
        _check(f"{where} <purge>", (("seconds", t.purge.seconds),))
    if t.wipc is not None:
        wp = t.wipc
        _check(f"{where} <wipc>", (("loops", wp.loops), ("bs", wp.bs), ("iodepth", wp.iodepth),
                                   ("numjobs", wp.numjobs), ("bytes-written", wp.bytes_written),
                                   ("seconds", wp.seconds), ("bw-bytes", wp.bw_bytes)))
    if t.steady is not None:
        s = t.steady
        _check(f"{where} <steadystate>", (("average", s.average), ("range", s.range), ("window", s.window)))
        _check(f"{where} <steadystate>", (("slope", s.slope), ("intercept", s.intercept),
                                          ("slope-excursion", s.slope_excursion)), None)
        _check(f"{where} <steadystate> <point>", (("value", v) for v in s.values))
        _check(f"{where} <steadystate> <point>", (("round", v) for v in s.rounds))
    for name, series in t.series.items():
        for column in series.columns:
            values = np.asarray(series.column(column), dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
            if bad.size:
                row = int(bad[0])
                raise ResultFileError(f"{where} series {name!r} row {row + 1} column {column} is "
                                      f"{float(values[row])!r}, not a finite number of at least 0")


def check_run(run: RunResult, source: str) -> RunResult:
    """``run`` when every figure it holds is finite and in its range; else a
    ResultFileError naming ``source``, the element and the attribute."""
    d, h = run.device, run.host
    _check(f"{source}: <device>", (("size-bytes", d.size_bytes), ("logical-sector", d.logical_sector),
                                   ("physical-sector", d.physical_sector)))
    _check(f"{source}: <host>", (("cores", h.cores), ("memory-bytes", h.memory_bytes)))
    for e in run.events:
        _check(f"{source}: <event>", (("round", e.round),))
    for snap in run.health:
        _check(f"{source}: <health> <snapshot time={snap.time!r}> <value>", snap.values, None)
    for t in run.tests:
        _test(f"{source}: <test key={t.key!r}>", t)
    return run
