"""Performance consistency (SanDisk's and IBM's papers, below): how steady a drive's
per-second performance and response times stay under continuous load.

``--workload rnd4k`` (SanDisk white paper "Performance Consistency"): after the purge and the WIPC (SEQ 128KiB,
2x the capacity, at ``--iodepth``), RND 4KiB 100% W at TC1/QD32
(``--consistency-tc``, ``--consistency-qd``) for ``--duration`` (2000 s),
one continuous fio job reported every second.

``--workload jedec`` (IBM, "SSD Architecture for Consistent Enterprise
Performance", 2012, experiment #1, shortened): after the purge
(no WIPC), the JEDEC enterprise mix (bssplit of 512 B .. 64 KiB,
``random_distribution=zoned:50/5:30/15:20/80``, new random data for every
write) at 100% W for ``--jedec-precondition`` (24 h), then
``--jedec-cycles`` times ``--jedec-write`` (8 h) at 100% W and
``--jedec-mixed`` (8 h) at 40/60 R/W; 5 s intervals.

Each interval keeps its IOPS and mean response time (live, from fio's
status reports) and its maximum response time (from fio's latency log);
see :mod:`~tkperf.pts.stream.phases` and, for the figures,
:mod:`~tkperf.testtypes.consistency.figures`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, List

from tkperf import api
from tkperf.pts import JEDEC_BSSPLIT as BSSPLIT
from tkperf.pts import (
    JEDEC_LARGEST,
    MAX_NUMJOBS,
    ConsistencyStream,
    format_auto_duration,
    jedec_job,
    log_msec,
    parse_auto_duration,
)
from tkperf.pts import JEDEC_ZONED as ZONED
from tkperf.pts.stream.phases import Phase
from tkperf.testtypes.consistency.analysis import MIXED, PRECONDITION, STIMULUS, WRITE, analyse

WORKLOADS = ("rnd4k", "jedec")
#: Intervals a run may be cut into: SanDisk's one second, IBM's five.
INTERVALS = (1, 5)
MAX_TIME = 366 * 86400
RND4K_JOB = "consistency-rnd-4k-0-100"


def _workload(text: str, flag: str) -> str:
    t = (text or "").strip().lower()
    if t not in WORKLOADS:
        raise api.UsageError(f"{flag} {text!r}: choose {' or '.join(WORKLOADS)}")
    return t


def _check_interval(value: int) -> None:
    if value != 0 and value not in INTERVALS:
        raise api.UsageError(f"--consistency-interval {value} s: give 1 or 5 seconds (or auto); "
                             "the figures per 5 s interval need one of them")


def interval_of(opts: api.Options) -> int:
    """The interval a run uses: the given one, else 1 s (rnd4k) or 5 s (jedec)."""
    cfg = opts.of(ConsistencySettings)
    return cfg.consistency_interval or (5 if cfg.consistency_workload == "jedec" else 1)


@dataclass(frozen=True)
class ConsistencySettings:
    """The values of consistency's options (typed; ``opts.of(ConsistencySettings)``)."""

    option_prefix: ClassVar[str] = ""

    #: Seconds.
    consistency_duration: int
    consistency_workload: str
    consistency_tc: int
    consistency_qd: int
    #: Seconds; 0: the PTS's.
    consistency_interval: int
    #: Seconds.
    jedec_precondition: int
    #: Seconds.
    jedec_write: int
    #: Seconds.
    jedec_mixed: int
    jedec_cycles: int


class ConsistencyShape(ConsistencyStream):
    """The consistency stream, whose first figure is its first interval."""

    def first_figures(self, headline: api.Headline, test: api.TestRun) -> List[api.Figure]:
        """The first interval after the purge (and, for rnd4k, the WIPC)."""
        a = analyse(test)
        if a is None or not a.n:
            return []
        return [api.Figure("first_interval_iops", "first interval", float(a.iops[0]), "IOPS")]


class ConsistencyTest(api.TestType):
    name = "consistency"
    title = "Performance Consistency"
    short = "CONS"
    order = 50
    view = "tkperf.testtypes.consistency.view:ConsistencyView"
    options = api.OptionSet(ConsistencySettings, (
        api.Option("consistency_duration", ("--duration", "--consistency-duration"),
                   "consistency: how long the RND 4KiB write runs (default 2000s; 20s with --quick)",
                   parse=api.parse_duration, default=2000, quick=20,
                   check=api.in_range(1, MAX_TIME, "--duration"), metavar="DURATION"),
        api.Option("consistency_workload", ("--workload", "--consistency-workload"),
                   "consistency workload: rnd4k (SanDisk's \"Performance Consistency\" test, default) or jedec "
                   "(the JEDEC JESD219 enterprise mix, as IBM's 2012 consistency paper runs it)",
                   parse=_workload, default="rnd4k", metavar="rnd4k|jedec",
                   claims=lambda text: text.strip().lower() in WORKLOADS),
        api.Option("consistency_tc", ("--consistency-tc",), "consistency thread count TC, fio numjobs (default 1)",
                   parse=api.parse_count, default=1, check=api.in_range(1, MAX_NUMJOBS, "--consistency-tc"),
                   metavar="TC"),
        api.Option("consistency_qd", ("--consistency-qd",), "consistency queue depth QD per thread (default 32)",
                   parse=api.parse_count, default=32, check=api.in_range(1, api.MAX_IODEPTH, "--consistency-qd"),
                   metavar="QD"),
        api.Option("consistency_interval", ("--consistency-interval",),
                   "consistency interval of the IOPS and the latency logs: 1s or 5s "
                   "(default auto: 1s for rnd4k, 5s for jedec)",
                   parse=parse_auto_duration, format=format_auto_duration, default=0, check=_check_interval,
                   metavar="1s|5s"),
        api.Option("jedec_precondition", ("--jedec-precondition",),
                   "jedec: preconditioning, the JEDEC mix write-only (default 24h; 8s with --quick)",
                   parse=api.parse_duration, default=24 * 3600, quick=8,
                   check=api.in_range(1, MAX_TIME, "--jedec-precondition"), metavar="DURATION"),
        api.Option("jedec_write", ("--jedec-write",), "jedec: each write-only phase (default 8h; 5s with --quick)",
                   parse=api.parse_duration, default=8 * 3600, quick=5,
                   check=api.in_range(1, MAX_TIME, "--jedec-write"), metavar="DURATION"),
        api.Option("jedec_mixed", ("--jedec-mixed",), "jedec: each 40/60 R/W phase (default 8h; 5s with --quick)",
                   parse=api.parse_duration, default=8 * 3600, quick=5,
                   check=api.in_range(1, MAX_TIME, "--jedec-mixed"), metavar="DURATION"),
        api.Option("jedec_cycles", ("--jedec-cycles",), "jedec: how many write + 40/60 pairs (default 1)",
                   parse=api.parse_count, default=1, check=api.in_range(1, 1000, "--jedec-cycles"), metavar="N"),
    ))

    # --- running ---------------------------------------------------------------
    def phases(self, opts: api.Options) -> List[Phase]:
        cfg = opts.of(ConsistencySettings)
        tc, qd = cfg.consistency_tc, cfg.consistency_qd
        if cfg.consistency_workload != "jedec":
            job = api.FioJob(name=RND4K_JOB, rw="randwrite", bs=4096, runtime=cfg.consistency_duration,
                             numjobs=tc, iodepth=qd)
            return [Phase(job, "RND 4KiB 100% W", STIMULUS)]
        out = [Phase(jedec_job("jedec-precondition", 0, cfg.jedec_precondition, tc, qd),
                     "preconditioning", PRECONDITION)]
        for k in range(1, cfg.jedec_cycles + 1):
            out += [Phase(jedec_job(f"jedec-write-{k}", 0, cfg.jedec_write, tc, qd), f"write {k}", WRITE),
                    Phase(jedec_job(f"jedec-mixed-{k}", 40, cfg.jedec_mixed, tc, qd), f"40/60 {k}", MIXED)]
        return out

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(ConsistencySettings)
        interval = interval_of(opts)
        phases = self.phases(opts)
        jedec = cfg.consistency_workload == "jedec"
        params = {"workload": cfg.consistency_workload, "numjobs": str(cfg.consistency_tc),
                  "iodepth": str(cfg.consistency_qd), "interval": str(interval),
                  "access": "random, zoned " + ZONED.split(":", 1)[1] if jedec else "random",
                  "block_size": "jedec" if jedec else "4k", "mixes": "0/100,40/60" if jedec else "0/100",
                  "latency_log": f"write_lat_log, log_avg_msec={log_msec(interval)}, log_max_value=1"}
        if jedec:
            params.update(bssplit=BSSPLIT, random_distribution=ZONED, data="refill_buffers (new random data "
                          "for every write, incompressible)", precondition=str(cfg.jedec_precondition),
                          write=str(cfg.jedec_write), mixed=str(cfg.jedec_mixed), cycles=str(cfg.jedec_cycles))
        else:
            params["duration"] = str(cfg.consistency_duration)
        return [api.Plan(key=self.name, shape=ConsistencyShape(tuple(phases), interval),
                         tracking=api.Tracking(phases[0].job.name, "iops", f"IOPS per {interval} s interval"),
                         params=params, wipc=not jedec)]

    # --- reading results -------------------------------------------------------------

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        a = analyse(test)
        if a is None:
            return []
        out = [api.Figure("first_interval_iops", "first interval", float(a.iops[0]), "IOPS")]
        sp = a.spread()
        if sp is not None:
            out.append(api.Figure("steady_iops", "steady median", sp.median, "IOPS"))
            if not math.isnan(sp.pct):  # a steady part of one interval has no spread
                out.append(api.Figure("iops_spread_pct", "spread p1-p99", sp.pct, "%", "lower", "{:,.1f}"))
        mean, peak, avg_max = a.lat_mean(a.measured), a.lat_max(a.measured), a.avg_max_5s(a.measured)
        if mean is not None:
            out.append(api.Figure("lat_mean_us", "lat AVE", mean, "us", "lower", "{:,.1f}"))
        if peak is not None:
            out.append(api.Figure("lat_max_us", "lat MAX", peak, "us", "lower", "{:,.1f}"))
            if mean:
                out.append(api.Figure("max_avg_lat_ratio", "max/avg lat", peak / mean, "", "lower", "{:,.1f}"))
        if avg_max is not None:
            out.append(api.Figure("avg_max_lat_5s_us", "AvgMaxRT 5s", avg_max, "us", "lower", "{:,.1f}"))
        if a.cliff.found:
            out.append(api.Figure("write_cliff_s", "write cliff at", a.cliff.time_s, "s", ""))
        if a.workload == "jedec":
            w = a.kind_mask(WRITE)
            ws, wmax = a.spread(w), a.avg_max_5s(w)
            if ws is not None:
                out.append(api.Figure("write_phase_iops", "100% W median", ws.median, "IOPS"))
            if wmax is not None:
                out.append(api.Figure("write_phase_avg_max_lat_5s_us", "100% W AvgMaxRT 5s", wmax, "us", "lower",
                                      "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        jedec = opts.of(ConsistencySettings).consistency_workload == "jedec"
        return api.Blocks(512 if jedec else 4096, JEDEC_LARGEST if jedec else 4096)
