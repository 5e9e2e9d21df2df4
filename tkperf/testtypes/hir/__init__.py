"""Host idle recovery (PTS-E HIR): how much a drive at steady state gains
from idle time between writes.

After the purge (no WIPC unless ``--hir-wipc``: both open PTS
implementations skip it for HIR, as for WSAT and XSR), RND 4KiB W (one
thread, ``--hir-qd`` outstanding I/Os) in rounds of ``--hir-round`` (30
min), each round's point the IOPS of its last minute
(:func:`~tkperf.kit.longrounds.split_round`), until they are steady (20/10) and its own random writes (the
WIPC's fill not counted) reach two drive fills (:mod:`~tkperf.kit.longrounds`): their window
average is the baseline.  Then, per idle time of
``--hir-idle`` (5, 10, 15, 25, 50 s), ``--hir-cycles`` (360) write periods
of ``--hir-write`` (5 s), each followed by that idle time, then
``--hir-return`` (360 x the write period) of continuous writes back to the
baseline.  Each setting is one fio process; the write periods and idle gaps
are fio's own (``thinktime``/``thinktime_iotime``) and their IOPS come from
fio's IOPS log: see :mod:`~tkperf.testtypes.hir.shape` and
:mod:`~tkperf.testtypes.hir.iopslog`; the figures are defined in
:mod:`~tkperf.testtypes.hir.analysis`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, List, Mapping, Tuple

from tkperf import api
from tkperf.pts import (
    FillFloor,
    enterprise_only,
    floor_bytes,
    floor_params,
    format_auto_duration,
    parse_auto_duration,
    point_params,
    point_seconds,
    round_deviation,
    round_option,
    split_round,
)
from tkperf.testtypes.hir.analysis import baseline, settings
from tkperf.testtypes.hir.shape import HostIdleShape, Setting, sample_ms

#: The PTS's idle times, write period (s) and write periods per idle time.
PTS_IDLE: Tuple[int, ...] = (5, 10, 15, 25, 50)
PTS_WRITE_S = 5
PTS_CYCLES = 360
#: fio keeps its think time in microseconds in a C int: at most about 35 min.
MAX_IDLE_S = 1800
MAX_WRITE_S = 600
MAX_CYCLES = 100_000
MAX_RETURN_S = 7 * 86400
STEADY_JOB = "hir-ss-rnd-4k-w"
#: The rest of each steady-state round before its measured last minute (:func:`~tkperf.kit.longrounds.split_round`).
REST_JOB = "hir-ss-rest-rnd-4k-w"


def parse_idles(text: str, flag: str) -> Tuple[int, ...]:
    """'5,10,15' or '5s,1m' -> idle seconds, in the order given, each once."""
    out: List[int] = []
    for part in (text or "").split(","):
        value = api.parse_duration(part, f"{flag} value")
        if not 1 <= value <= MAX_IDLE_S:
            raise api.UsageError(f"{flag} {part.strip()!r} is out of range (1s..{MAX_IDLE_S}s)")
        if value in out:
            raise api.UsageError(f"{flag} names {value} s twice")
        out.append(value)
    return tuple(out)


def idles_text(values: Tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


def _check_return(value: int) -> None:
    if value and not 1 <= value <= MAX_RETURN_S:
        raise api.UsageError(f"--hir-return {value} is out of range (1..{MAX_RETURN_S} s, or auto)")


def return_of(opts: api.Options) -> int:
    """The return's seconds: as given, else cycles x the write period."""
    cfg = opts.of(HirSettings)
    return cfg.return_ or cfg.cycles * cfg.write


def key_of(idle_s: int) -> str:
    return f"{idle_s}s"


@dataclass(frozen=True)
class HirSettings:
    """The values of HIR's options (typed; ``opts.of(HirSettings)``)."""

    option_prefix: ClassVar[str] = "hir_"

    #: Idle times in seconds.
    idle: Tuple[int, ...]
    cycles: int
    #: Seconds.
    write: int
    #: Option hir_return.
    return_: int
    qd: int
    #: Seconds.
    round: int
    wipc: bool


class HostIdleRecoveryPts(api.PtsRules):
    """HostIdleRecovery's SNIA PTS rules."""

    oio = api.OIO_OPERATOR

    def deviations(self, kind: api.TestType, options: Mapping[str, str], revision) -> List[str]:
        v = api.stored_values(kind, options)
        out = enterprise_only("HIR", revision)
        if tuple(v["hir_idle"]) != PTS_IDLE:
            out.append(f"HIR idle times {idles_text(v['hir_idle'])} s instead of {idles_text(PTS_IDLE)} s")
        if int(v["hir_cycles"]) != PTS_CYCLES:
            out.append(f"HIR runs {v['hir_cycles']} write periods per idle time instead of {PTS_CYCLES}")
        if int(v["hir_write"]) != PTS_WRITE_S:
            out.append(f"HIR write periods of {v['hir_write']} s instead of {PTS_WRITE_S} s")
        back = v["hir_return"] or int(v["hir_cycles"]) * int(v["hir_write"])
        if back != PTS_CYCLES * PTS_WRITE_S:
            out.append(f"HIR returns to baseline for {back} s instead of {PTS_CYCLES * PTS_WRITE_S} s")
        return out + round_deviation(v, "hir", "HIR")


class HostIdleRecoveryTest(api.TestType):
    pts = HostIdleRecoveryPts()
    name = "hir"
    title = "Host Idle Recovery"
    short = "HIR"
    order = 75
    view = "tkperf.testtypes.hir.view:HostIdleRecoveryView"
    options = api.OptionSet(HirSettings, (
        api.Option("hir_idle", ("--hir-idle",), "HIR idle times between write periods, each its own setting "
                   "(default 5,10,15,25,50 s; 1,2 with --quick)", parse=parse_idles, format=idles_text,
                   default=PTS_IDLE, quick=(1, 2), metavar="TIMES"),
        api.Option("hir_cycles", ("--hir-cycles",), "HIR write periods (each followed by the idle time) per idle "
                   "setting (default 360; 3 with --quick)", parse=api.parse_count, default=PTS_CYCLES, quick=3,
                   check=api.in_range(1, MAX_CYCLES, "--hir-cycles"), metavar="N"),
        api.Option("hir_write", ("--hir-write",), "HIR length of a write period (default 5s; 1s with --quick)",
                   parse=api.parse_duration, default=PTS_WRITE_S, quick=1,
                   check=api.in_range(1, MAX_WRITE_S, "--hir-write"), metavar="DURATION"),
        api.Option("hir_return", ("--hir-return",), "HIR continuous writes back to baseline after each idle "
                   "setting (default auto: cycles x the write period, 1800s; 3s with --quick)",
                   parse=parse_auto_duration, format=format_auto_duration, default=0, check=_check_return,
                   metavar="DURATION"),
        api.Option("hir_qd", ("--hir-qd",), "HIR outstanding writes of its one thread, fio iodepth (default 32)",
                   parse=api.parse_count, default=32, check=api.in_range(1, api.MAX_IODEPTH, "--hir-qd"),
                   metavar="QD"),
        round_option("hir", "HIR"),
        api.Option("hir_wipc", ("--hir-wipc",), "HIR: run the WIPC (SEQ 128KiB W, 2x) after the purge; by "
                   "default HIR skips it, as both open PTS implementations do (its own RND 4KiB W rounds "
                   "precondition the drive)", switch=True, default=False),
    ))

    # --- running ---------------------------------------------------------------
    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(HirSettings)
        qd, write = cfg.qd, cfg.write
        back = return_of(opts)
        steady = api.FioJob(name=STEADY_JOB, rw="randwrite", bs=4096, runtime=cfg.round, numjobs=1, iodepth=qd)
        # each round: the rest of it, then its measured last minute (the tracking figure)
        rounds = split_round(lambda runtime, name: dataclasses.replace(steady, name=name, runtime=runtime),
                             cfg.round, STEADY_JOB, REST_JOB)
        shape = HostIdleShape(steady, tuple(Setting(i, write, cfg.cycles, back) for i in cfg.idle), rounds)
        return [api.Plan(
            key=self.name, shape=shape, wipc=cfg.wipc,
            tracking=api.Tracking(steady.name, "write.iops", f"RND 4KiB W TC1/QD{qd} IOPS"),
            params={"block_size": "4k", "access": "random", "mix": "0/100", "numjobs": "1", "iodepth": str(qd),
                    "runtime": str(cfg.round), "idle": idles_text(cfg.idle),
                    "cycles": str(cfg.cycles), "write": str(write), "return": str(back),
                    "log_avg_msec": str(sample_ms(write)), "round_s": str(cfg.round),
                    **floor_params(capacity), **point_params(point_seconds(cfg.round)),
                    "wipc": "yes" if cfg.wipc else "no"},
            judge=FillFloor(floor_bytes(capacity)),
        )]

    # --- reading results -------------------------------------------------------------
    def headline(self, test: api.TestRun) -> List[api.Figure]:
        base = baseline(test)
        if base is None:
            return []
        out = [api.Figure("baseline_iops", "baseline", base, "IOPS")]
        for s in settings(test):
            mean = s.mean_iops
            if mean is None:
                continue
            out.append(api.Figure(f"idle_{key_of(s.idle_s)}_iops", f"idle {s.idle_s} s", mean, "IOPS"))
            gain = s.gain_pct(base)
            if gain is not None:
                out.append(api.Figure(f"gain_{key_of(s.idle_s)}_pct", f"gain idle {s.idle_s} s", gain, "%",
                                      "higher", "{:+,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, 4096)
