"""fio's JSON is untrusted: every figure tkperf keeps is checked before it
becomes a result.

A fio binary, or a fio server on a test host, may print ``NaN``,
``Infinity`` or ``1e999`` (which Python's :mod:`json` reads as infinity), a
negative latency, a report without ``iops``, or figures that cannot all be
true at once.  Such a report is a fio failure (:class:`~tkperf.errors.FioError`,
exit 6) naming the workload and the field, never a "complete" round.

What is checked, per job and direction (``read``, ``write``, ``trim``):

* every number anywhere in the job is finite (:func:`decoder` marks
  ``NaN``/``Infinity`` and numbers out of a double's range, so that the
  message can name where they stood) and none tkperf reads is negative;
* the fields tkperf reads are there with the right types: ``jobname``,
  ``read`` and ``write``, and in each direction ``total_ios``, ``io_bytes``
  (or ``io_kbytes``), ``runtime``, ``iops`` and ``bw_bytes`` (or ``bw``);
* counts, bytes, run time and rates agree as fio computes them (its
  ``stat.c``: ``iops = total_ios * 1000 / runtime``, ``bw_bytes = io_bytes *
  1000 / runtime``, ``io_kbytes = io_bytes / 1024``), within rounding; a
  direction without I/O has no bytes and no rate (a 100% write job's read
  side is all zeros, which is valid); fio leaves the rates 0 when the run
  time is 0 ms;
* latencies (``lat_ns``, ``clat_ns``, ``slat_ns``; fio 2's ``lat`` ... in
  us): min, max, mean, stddev non-negative and min <= mean <= max when
  there was I/O; percentiles non-negative and not decreasing; ``json+``
  latency bins non-negative integer counts at non-negative integer times;
* every planned workload is reported, none that was not planned, and none
  more often than its number of jobs (clones reported apart).

fio's own quirks stay valid: text before the JSON, a job that fio ended
with an error (its ``error`` is what is reported, by the caller), run time
0 for a direction without I/O.
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterator, NoReturn, Optional, Tuple

from tkperf.errors import FioError

DIRECTIONS: Tuple[str, ...] = ("read", "write", "trim")
LATENCY_KINDS: Tuple[str, ...] = ("lat", "clat", "slat")
#: A count or byte total beyond this is not one fio made (2**63: fio's are 64-bit).
MAX_COUNT = 1 << 63
#: Relative slack for figures fio derives from others (its doubles, printed
#: to six decimals, and integer divisions).
REL_TOL = 1e-3


class NonNumber(float):
    """A number token that is not a finite double (``NaN``, ``Infinity``,
    ``1e999``, an integer of more digits than any count): kept as the float
    it would be (so that nothing reading a live report breaks) and marked,
    so that :func:`check_job` can name it."""

    token = ""

    def __new__(cls, value: float, token: str) -> NonNumber:
        obj = super().__new__(cls, value)
        obj.token = token
        return obj


def _constant(token: str) -> NonNumber:
    return NonNumber(float(token.replace("Infinity", "inf")), token)


def _float(token: str) -> float:
    value = float(token)
    return value if math.isfinite(value) else NonNumber(value, token)


def _int(token: str) -> Any:
    return int(token) if len(token.lstrip("-")) <= 20 else NonNumber(math.inf, token[:24] + "...")


def decoder() -> json.JSONDecoder:
    """A JSON decoder for fio's output that marks what is not a finite
    number (:class:`NonNumber`) instead of reading it as NaN or infinity."""
    return json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=_int)


def _numbers(obj: object, path: str) -> Iterator[Tuple[str, object]]:
    """(path, value) of every number in ``obj``, however deep."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _numbers(value, f"{path}.{key}" if path else str(key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _numbers(value, f"{path}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, obj


class _Job:
    """The checks of one job's report; ``fail`` raises the one-line FioError."""

    def __init__(self, job: dict, name: str, what: str) -> None:
        self.job, self.name, self.what = job, name, what

    def fail(self, field: str, problem: str) -> NoReturn:
        where = f" of {self.what}" if self.what else ""
        raise FioError(f"fio's JSON is inconsistent in workload {self.name}{where}: {field} {problem}")

    def number(self, obj: dict, key: str, path: str, integer: bool = False,
               required: bool = True) -> Optional[float]:
        if key not in obj:
            if required:
                self.fail(f"{path}.{key}", "is missing")
            return None
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            self.fail(f"{path}.{key}", f"is not {'an integer' if integer else 'a number'} ({_shown(value)})")
        if value < 0:
            self.fail(f"{path}.{key}", f"is negative ({value})")
        if value >= MAX_COUNT:
            self.fail(f"{path}.{key}", f"is out of range ({value})")
        return float(value)

    def agree(self, path: str, got: float, want: float, slack: float = 1.0) -> None:
        if abs(got - want) > max(slack, REL_TOL * abs(want)):
            self.fail(path, f"is {got:g} but fio's own counts give {want:g}")

    def direction(self, d: str) -> None:
        side = self.job.get(d)
        if not isinstance(side, dict):
            self.fail(d, "is missing" if side is None else "is not an object")
        ios = self.number(side, "total_ios", d, integer=True) or 0.0
        runtime = self.number(side, "runtime", d, integer=True) or 0.0
        iops = self.number(side, "iops", d) or 0.0
        io_bytes = self.number(side, "io_bytes", d, integer=True, required="io_kbytes" not in side)
        kbytes = self.number(side, "io_kbytes", d, integer=True, required=False)
        if io_bytes is None:
            io_bytes = (kbytes or 0.0) * 1024
        elif kbytes is not None:
            self.agree(f"{d}.io_kbytes", kbytes, float(int(io_bytes) // 1024))
        bw_bytes = self.number(side, "bw_bytes", d, required="bw" not in side)
        bw_kib = self.number(side, "bw", d, required=False)
        if bw_bytes is None:
            bw_bytes = (bw_kib or 0.0) * 1024
        elif bw_kib is not None:
            self.agree(f"{d}.bw", bw_kib, bw_bytes / 1024.0)
        if ios == 0:
            for field, value in (("io_bytes", io_bytes), ("iops", iops), ("bw_bytes", bw_bytes)):
                if value:
                    self.fail(f"{d}.{field}", f"is {value:g} with no I/O counted (total_ios 0)")
        elif io_bytes < ios:
            self.fail(f"{d}.io_bytes", f"is {io_bytes:g}, less than one byte for each of {ios:g} I/Os")
        if runtime:
            self.agree(f"{d}.iops", iops, ios * 1000.0 / runtime, slack=0.01)
            self.agree(f"{d}.bw_bytes", bw_bytes, io_bytes * 1000.0 / runtime, slack=1024.0)
        elif iops or bw_bytes:
            self.fail(f"{d}.iops", f"is {iops:g} over a run time of 0 ms")
        for kind in LATENCY_KINDS:
            self.latency(side, d, kind, int(ios))

    def latency(self, side: dict, d: str, kind: str, ios: int) -> None:
        key = f"{kind}_ns" if f"{kind}_ns" in side else kind
        lat = side.get(key)
        path = f"{d}.{key}"
        if lat is None:
            if kind == "lat" and ios and key not in side:
                self.fail(f"{d}.lat_ns", "is missing")
            return
        if not isinstance(lat, dict):
            self.fail(path, "is not an object")
        need = kind == "lat" and ios > 0
        figures = {s: self.number(lat, s, path, required=need and s != "stddev")
                   for s in ("min", "max", "mean", "stddev")}
        samples = self.number(lat, "N", path, integer=True, required=False)
        lo, hi, mean = figures["min"], figures["max"], figures["mean"]
        if ios and lo is not None and hi is not None and mean is not None and samples != 0:
            if lo > hi:
                self.fail(f"{path}.min", f"({lo:g}) is larger than its max ({hi:g})")
            slack = 1e-6 * hi + 1e-3
            if not lo - slack <= mean <= hi + slack:
                self.fail(f"{path}.mean", f"({mean:g}) is not between its min ({lo:g}) and max ({hi:g})")
        self.percentiles(lat.get("percentile"), f"{path}.percentile")
        self.bins(lat.get("bins"), f"{path}.bins")

    def percentiles(self, pct: object, path: str) -> None:
        if pct is None:
            return
        if not isinstance(pct, dict):
            self.fail(path, "is not an object")
        points = []
        for key in pct:
            try:
                p = float(key)
            except ValueError:
                p = math.nan
            if not 0.0 <= p <= 100.0:
                self.fail(f"{path}.{_shown(key)}", "is not a percentile (0 to 100)")
            points.append((p, self.number(pct, key, path) or 0.0, key))
        points.sort()
        for (_, a, _), (_, b, key) in zip(points, points[1:]):
            if b < a:
                self.fail(f"{path}.{key}", f"({b:g}) is smaller than a lower percentile ({a:g})")

    def bins(self, bins: object, path: str) -> None:
        if bins is None:
            return
        if not isinstance(bins, dict):
            self.fail(path, "is not an object")
        for key in bins:
            if not (isinstance(key, str) and key.isdigit() and len(key) <= 20):
                self.fail(f"{path}.{_shown(key)}", "is not a latency in ns")
            self.number(bins, key, path, integer=True)

    def check(self) -> None:
        for path, value in _numbers(self.job, ""):
            if isinstance(value, float) and not math.isfinite(value):
                token = value.token if isinstance(value, NonNumber) else repr(value)
                self.fail(path, f"is not a finite number ({token})")
        error = self.job.get("error", 0)
        if isinstance(error, bool) or not isinstance(error, int) or not 0 <= error < 4096:
            self.fail("error", f"is not an error number ({_shown(error)})")
        if error:
            return  # fio ended the job with an error: that is what the caller reports
        for cpu in ("usr_cpu", "sys_cpu", "job_runtime"):
            if self.job.get(cpu) is not None:  # fio always writes them; tkperf reads null as 0
                self.number(self.job, cpu, "job", required=False)
        for d in DIRECTIONS:
            if d in self.job or d != "trim":
                self.direction(d)


def _shown(value: object) -> str:
    text = json.dumps(value)[:40] if not isinstance(value, str) else repr(value[:40])
    return text


def check_job(job: object, what: str = "", name: Optional[str] = None) -> str:
    """Check one job of fio's report (:mod:`this module <tkperf.fio.checks>`);
    returns its name.  Raises FioError naming the workload and the field."""
    if not isinstance(job, dict):
        raise FioError(f"fio's JSON is inconsistent{' in ' + what if what else ''}: a job is not an object")
    jobname = job.get("jobname")
    if not isinstance(jobname, str) or not jobname:
        shown = name or "?"
        raise FioError(f"fio's JSON is inconsistent in workload {shown}{' of ' + what if what else ''}: "
                       f"jobname is {'missing' if jobname is None else 'not a name'}")
    _Job(job, jobname, what).check()
    return jobname


def check_report(report: dict, specs: Dict[str, dict], what: str = "") -> None:
    """Check every job of one report against the workloads tkperf planned
    (``specs``: name -> spec with ``numjobs``): each present, none unplanned,
    none more often than its jobs."""
    jobs = report.get("jobs", [])
    if not isinstance(jobs, list):
        raise FioError("fio's JSON has no 'jobs' list")
    seen: Dict[str, int] = {}
    of = f" of {what}" if what else ""
    for job in jobs:
        name = job.get("jobname") if isinstance(job, dict) else None
        if not isinstance(name, str) or name not in specs:
            raise FioError(f"fio reported a job tkperf did not start: {_shown(name or '')}")
        check_job(job, what)
        seen[name] = seen.get(name, 0) + 1
        allowed = specs[name].get("numjobs", 1)
        if seen[name] > max(int(allowed) if isinstance(allowed, int) else 1, 1):
            raise FioError(f"fio's JSON is inconsistent in workload {name}{of}: jobname is reported "
                           f"{seen[name]} times, for {allowed} job(s)")
    missing = [n for n in specs if n not in seen]
    if missing:
        raise FioError(f"fio's report lacks workload {missing[0]}{of}")


def check_stream_report(report: dict, what: str = "") -> dict:
    """Check every job of one ``--status-interval`` report (as
    :func:`check_job`); returns ``report``."""
    jobs = report.get("jobs")
    if not isinstance(jobs, list):
        raise FioError(f"fio's JSON is inconsistent{' in ' + what if what else ''}: a report has no 'jobs' list")
    for job in jobs:
        check_job(job, what)
    return report
