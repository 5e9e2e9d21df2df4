"""fio's JSON output -> :class:`~tkperf.model.results.Workload`; each fio quirk in one named function."""
from __future__ import annotations

import json
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from tkperf.errors import FioError
from tkperf.fio.checks import check_report, decoder
from tkperf.model import histogram
from tkperf.model.results import PERCENTILES, IoStats, Workload


def first_json_object(text: str) -> dict:
    """fio may print warnings before its JSON on stdout: skip to the first '{'."""
    start = text.find("{")
    if start < 0:
        raise FioError("fio printed no JSON", stderr=text[-2000:])
    try:
        obj, _ = decoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise FioError(f"fio printed invalid JSON ({exc.msg} at char {exc.pos})", stderr=text[-2000:]) from exc
    if not isinstance(obj, dict) or not (isinstance(obj.get("jobs"), list)
                                         or isinstance(obj.get("client_stats"), list)):
        raise FioError("fio's JSON has no 'jobs' list (nor a client's 'client_stats')")
    return obj


def json_objects(text: str, pos: int = 0) -> Iterator[Tuple[dict, int]]:
    """Consecutive JSON reports (``--status-interval``) from ``text``; yields (obj, end)."""
    dec = decoder()
    while True:
        start = text.find("{", pos)
        if start < 0:
            return
        try:
            obj, end = dec.raw_decode(text, start)
        except ValueError:
            return  # incomplete: the rest has not been printed yet
        yield obj, end
        pos = end


def _percentile_key(p: str) -> str:
    """fio writes percentiles as '99.900000'; tkperf keeps the short form '99.9'."""
    return f"{float(p):f}".rstrip("0").rstrip(".")


#: fio's three latencies, as tkperf names their figures: total (response
#: time, submission to completion), completion and submission.
LATENCIES: Tuple[str, ...] = ("lat", "clat", "slat")
_STATS: Tuple[str, ...] = ("mean", "min", "max", "stddev")


def _latency(side: dict, kind: str) -> dict:
    """One latency (``lat``, ``clat`` or ``slat``) in ns; fio 3 writes
    '<kind>_ns', fio 2.x wrote '<kind>' in usec."""
    if f"{kind}_ns" in side:
        return side[f"{kind}_ns"]
    if kind in side:
        us = side[kind]
        out = {k: us.get(k, 0) * 1000.0 for k in _STATS}
        out["percentile"] = {k: v * 1000.0 for k, v in us.get("percentile", {}).items()}
        return out
    return {}


def _latency_figures(side: dict, kind: str, ios: int) -> Dict[str, float]:
    """``<kind>_mean_us`` .. ``<kind>_stddev_us`` of one direction; all 0 without I/O."""
    ns = _latency(side, kind)
    return {f"{kind}_{stat}_us": float(ns.get(stat, 0.0)) / 1000.0 if ios else 0.0
            for stat in _STATS}


def _percentiles(side: dict) -> Tuple[Tuple[str, float], ...]:
    """The response-time percentiles tkperf keeps, in us.  fio reports them
    (under ``lat_ns``) only when run with ``lat_percentiles=1``; without it
    there are none, rather than completion-latency ones under another name."""
    pct = _latency(side, "lat").get("percentile", {}) or {}
    wanted = set(PERCENTILES)
    return tuple(
        (key, float(v) / 1000.0)
        for key, v in sorted(((_percentile_key(k), v) for k, v in pct.items()), key=lambda kv: float(kv[0]))
        if key in wanted
    )


def _bw_bytes(side: dict) -> float:
    """fio >= 3.? has bw_bytes; older JSON has only bw in KiB/s."""
    if "bw_bytes" in side:
        return float(side["bw_bytes"])
    return float(side.get("bw", 0)) * 1024.0


def _io_bytes(side: dict) -> int:
    if "io_bytes" in side:
        return int(side["io_bytes"])
    return int(side.get("io_kbytes", 0)) * 1024


def iostats(side: dict) -> IoStats:
    """One direction (fio's ``read`` or ``write``) of one job."""
    ios = int(side.get("total_ios", 0))
    figures: Dict[str, float] = {}
    for kind in LATENCIES:
        figures.update(_latency_figures(side, kind, ios))
    bins, pct = histogram.normalized(histogram.from_fio(_latency(side, "lat").get("bins")) if ios else (),
                                     _percentiles(side) if ios else (), figures.get("lat_max_us", 0.0))
    return IoStats(
        iops=float(side.get("iops", 0.0)),
        bw_bytes=_bw_bytes(side),
        io_bytes=_io_bytes(side),
        ios=ios,
        percentiles=pct,
        bins=bins,
        **figures,
    )


def _merge_latency(a: IoStats, b: IoStats, kind: str) -> Dict[str, float]:
    """One latency of two jobs: the mean weighted by I/O count, the smaller
    min of those with I/O, the larger max and stddev."""
    def get(s: IoStats, stat: str) -> float:
        return float(getattr(s, f"{kind}_{stat}_us"))

    ios = a.ios + b.ios
    mins = [get(x, "min") for x in (a, b) if x.ios]
    return {
        f"{kind}_mean_us": (get(a, "mean") * a.ios + get(b, "mean") * b.ios) / ios if ios else 0.0,
        f"{kind}_min_us": min(mins) if mins else 0.0,
        f"{kind}_max_us": max(get(a, "max"), get(b, "max")),
        f"{kind}_stddev_us": max(get(a, "stddev"), get(b, "stddev")),
    }


def _merge(a: IoStats, b: IoStats) -> IoStats:
    """Two fio jobs of one workload reported apart (no group_reporting): sum rates,
    weight the means by I/O count, take the larger max and percentiles (a bound,
    not exact); the histograms add exactly."""
    pa, pb = dict(a.percentiles), dict(b.percentiles)
    pct = tuple((k, max(pa.get(k, 0.0), pb.get(k, 0.0))) for k in PERCENTILES if k in pa or k in pb)
    figures: Dict[str, float] = {}
    for kind in LATENCIES:
        figures.update(_merge_latency(a, b, kind))
    both = histogram.merge(a.bins, b.bins) if a.bins and b.bins else ()
    if both:  # the histograms add exactly: the percentiles come from them
        both, pct = histogram.normalized(both, pct, figures["lat_max_us"])
    return IoStats(iops=a.iops + b.iops, bw_bytes=a.bw_bytes + b.bw_bytes,
                   io_bytes=a.io_bytes + b.io_bytes, ios=a.ios + b.ios, percentiles=pct,
                   bins=both or histogram.merge(a.bins, b.bins), **figures)


def _runtime_ms(job: dict) -> int:
    """How long the workload ran.  The directions' ``runtime`` is the group's
    wall time; ``job_runtime`` (fio >= 3.?) is summed over the jobs of a
    group, numjobs times too long, so it is only the fallback."""
    runtime = max(int(job.get(d, {}).get("runtime", 0)) for d in ("read", "write", "trim"))
    return runtime or int(job.get("job_runtime", 0))


def _cpu_pct(job: dict) -> float:
    """fio's CPU use in one job report: user plus system time, in percent of
    one CPU over the job's run time.  With ``group_reporting`` (as tkperf runs
    fio) fio sums both times over the group's jobs, so this is the mean per
    job of a workload with numjobs > 1: its busiest job may have used more."""
    return float(job.get("usr_cpu", 0.0) or 0.0) + float(job.get("sys_cpu", 0.0) or 0.0)


#: fio's CPU use (usr+sys, percent of one CPU per job) from which a workload
#: may have been limited by the host.  A fio job is one thread: near 100% of
#: one CPU it cannot submit or reap I/O any faster, whatever the drive could
#: do.  90 rather than 100 because the job is not busy while it starts and
#: stops, which its run time includes, and rusage counts in clock ticks.
CPU_BOUND_PCT = 90.0
#: Part of every such warning, so that a test can tell it already has one.
CPU_BOUND_MARK = "the host CPU, not the drive, may have limited the result"


def cpu_bound_warning(workloads: Sequence[Workload], sharing: object = None,
                      threshold: Optional[float] = None) -> str:
    """The warning for one round's ``workloads`` when the busiest used
    ``threshold`` (default :data:`CPU_BOUND_PCT`) percent of one CPU or more;
    '' otherwise.  ``sharing`` is the run's ``facts["host_sharing"]``: the
    warning says when other runs shared the host."""
    limit = CPU_BOUND_PCT if threshold is None else threshold
    busiest = max(workloads, key=lambda w: w.cpu_pct, default=None)
    if busiest is None or busiest.cpu_pct < limit:
        return ""
    text = (f"fio used {busiest.cpu_pct:.1f}% of one CPU per job (usr+sys) in workload "
            f"{busiest.name}: {CPU_BOUND_MARK}")
    share = sharing if isinstance(sharing, dict) else {}
    runs, cpus = share.get("runs"), share.get("host_cpus")
    if isinstance(runs, int) and runs > 1:
        text += f"; {runs} runs shared the host" + (f" and its {cpus} CPUs" if cpus else "")
    return text


def cumulative_write(job: dict, block_size: int = 0) -> Dict[str, float]:
    """The running totals of one job in a ``--status-interval`` report: run
    time (ms), write I/Os *completed*, bytes written and the sum of their
    response times (fio's total latency, us), so that two reports give one
    interval by difference.

    fio's ``total_ios`` counts I/Os as they are issued, ``io_bytes`` as they
    complete: a running job's ``total_ios`` is ahead by up to its queue
    depth, which makes a first interval high and a last one low.  So the
    I/Os are the completions: ``io_bytes / block_size`` for a job of one
    block size (exactly the bytes' count), else the number of response
    times fio sampled (``lat_ns``'s ``N``, one per completion); only a fio
    that reports neither falls back on ``total_ios``.  The response times
    are summed over those samples (``mean x N``), so a mean is weighted by
    completions (``lat_n``, the samples' count, is its divisor)."""
    wr = job.get("write", {})
    lat = _latency(wr, "lat")
    nbytes = float(_io_bytes(wr))
    samples = float(lat.get("N", 0) or 0) if "N" in lat else float(wr.get("total_ios", 0) or 0)
    if block_size > 0:
        ios = float(nbytes // block_size)
    elif "N" in lat:
        ios = samples
    else:
        ios = float(wr.get("total_ios", 0) or 0)
    mean = float(lat.get("mean", 0.0))
    return dict(runtime_ms=float(_runtime_ms(job)), ios=ios, io_bytes=nbytes,
                lat_sum=mean * samples / 1000.0, lat_n=samples)


def cumulative_write_bins(job: dict) -> Tuple[histogram.Bins, float]:
    """The running latency histogram of one job's writes in a ``json+``
    ``--status-interval`` report and its running maximum response time (us);
    ``((), 0.0)`` where fio wrote neither (plain json, no I/O yet)."""
    lat = _latency(job.get("write", {}), "lat")
    return histogram.from_fio(lat.get("bins")), float(lat.get("max", 0.0) or 0.0) / 1000.0


def _errored(job: dict) -> dict:
    """A job fio ended with an error, its figures as fio printed them if
    they read as figures, else none (the error is what counts)."""
    try:
        for d in ("read", "write"):
            iostats(job.get(d, {}))
        _runtime_ms(job), _cpu_pct(job)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return {"jobname": job["jobname"], "error": job["error"]}
    return job


def parse_jobs(report: dict, specs: Dict[str, dict], what: str = "") -> List[Workload]:
    """Workloads from one fio report, in job-file order.

    ``specs`` maps job name -> dict(rw, bs, rwmixread, numjobs, iodepth) as
    tkperf asked for them.  The report is checked first
    (:func:`tkperf.fio.checks.check_report`): a job fio reports but tkperf
    did not ask for is an error, and so is one it asked for that is missing,
    or any figure that is not finite, negative or at odds with the others
    (``what`` names the round in the message).
    """
    check_report(report, specs, what)
    merged: Dict[str, Workload] = {}
    for job in report.get("jobs", []):
        name = job["jobname"]
        spec = specs[name]
        if job.get("error"):  # fio ended it with an error (the caller says which): its
            job = _errored(job)  # figures were not checked, and are kept only if they read
        w = Workload(
            name=name, rw=spec["rw"], bs=spec["bs"], rwmixread=spec["rwmixread"],
            numjobs=spec["numjobs"], iodepth=spec["iodepth"], runtime_ms=_runtime_ms(job),
            read=iostats(job.get("read", {})), write=iostats(job.get("write", {})),
            error=int(job.get("error", 0)), cpu_pct=_cpu_pct(job),
        )
        if name in merged:  # reported apart: the busiest job's CPU use
            old = merged[name]
            w = Workload(name, w.rw, w.bs, w.rwmixread, w.numjobs, w.iodepth,
                         max(old.runtime_ms, w.runtime_ms), _merge(old.read, w.read),
                         _merge(old.write, w.write), old.error or w.error, max(old.cpu_pct, w.cpu_pct))
        merged[name] = w
    return [merged[n] for n in specs]
