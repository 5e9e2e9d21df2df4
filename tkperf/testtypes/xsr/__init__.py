"""Cross-stimulus recovery (PTS-E XSR): how a drive moves from one
workload to another and back.

After the purge (no WIPC: the first phase preconditions the drive itself),
three continuous fio jobs run one right after the other, at TC1/QD32
(``--xsr-tc``, ``--xsr-qd``):

1. SEQ 1024KiB 100% W for ``--xsr-seq1`` (8 h),
2. RND 8KiB 100% W for ``--xsr-rnd`` (6 h),
3. SEQ 1024KiB 100% W for ``--xsr-seq2`` (8 h),

each reported every ``--xsr-interval`` (60 s) and cut into intervals as it
runs (:mod:`~tkperf.testtypes.xsr.stream`).  The figures
(:mod:`~tkperf.testtypes.xsr.analysis`): each phase's level (the median
MB/s of its last quarter), the time each phase took to settle within
±``--xsr-settle-band`` (10%) of its level, above all after the two
transitions, and the second SEQ level as a share of the first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Mapping

from tkperf import api
from tkperf.pts import MAX_NUMJOBS, duration, enterprise_only
from tkperf.testtypes.xsr.analysis import RND, SEQ1, SEQ2, WORKLOADS, analyse
from tkperf.testtypes.xsr.stream import Phase, XsrStream

SEQ_BS = 1024 * 1024
RND_BS = 8 * 1024
#: The PTS's phase lengths (seconds), interval and OIO.
PTS_SEQ1_S, PTS_RND_S, PTS_SEQ2_S = 8 * 3600, 6 * 3600, 8 * 3600
PTS_INTERVAL_S = 60
PTS_TC, PTS_QD = 1, 32
MAX_TIME = 366 * 86400
#: The phases' job names, in the order they run.
JOB_NAMES = {SEQ1: "xsr-seq-1024k-w-1", RND: "xsr-rnd-8k-w", SEQ2: "xsr-seq-1024k-w-2"}
LABELS = {SEQ1: "SEQ 1024KiB W (1)", RND: "RND 8KiB W", SEQ2: "SEQ 1024KiB W (2)"}
#: The duration option of each phase.
FLAGS = {SEQ1: "--xsr-seq1", RND: "--xsr-rnd", SEQ2: "--xsr-seq2"}


def parse_band(text: str, flag: str) -> float:
    """'10', '10%', '12.5' -> percent, more than 0 and less than 100."""
    t = (text or "").strip().rstrip("%").strip()
    try:
        value = float(t)
    except ValueError:
        raise api.UsageError(f"{flag} {text!r} is not a percentage like 10 or 12.5%") from None
    if not 0 < value < 100:
        raise api.UsageError(f"{flag} {text!r} is out of range (more than 0, less than 100 percent)")
    return value


def band_text(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class XsrSettings:
    """The values of XSR's options (typed; ``opts.of(XsrSettings)``)."""

    option_prefix: ClassVar[str] = "xsr_"

    #: Seconds.
    seq1: int
    #: Seconds.
    rnd: int
    #: Seconds.
    seq2: int
    #: Seconds.
    interval: int
    tc: int
    qd: int
    #: Percent.
    settle_band: float


class XsrShape(XsrStream):
    """The XSR stream, whose first figure is the first SEQ phase's level."""

    def first_figures(self, headline: api.Headline, test: api.TestRun) -> List[api.Figure]:
        """The first interval after the purge, beside the first SEQ phase's level."""
        a = analyse(test)
        if a is None or not a.phases or a.phases[0].kind != SEQ1:
            return []
        return [api.Figure("seq1_level_mb_s", "SEQ 1024k W", a.phases[0].first_mb_s, "MB/s", "higher", "{:,.1f}")]


class CrossStimulusRecoveryPts(api.PtsRules):
    """CrossStimulusRecovery's SNIA PTS rules."""

    oio = api.OIO_FIXED

    def deviations(self, kind: api.TestType, options_: Mapping[str, str], revision) -> List[str]:
        v = api.stored_values(kind, options_)
        out = enterprise_only("XSR", revision)
        times = [int(v[f"xsr_{k}"]) for k in (SEQ1, RND, SEQ2)]
        if times != [PTS_SEQ1_S, PTS_RND_S, PTS_SEQ2_S]:
            out.append("XSR phases run " + ", ".join(f"{WORKLOADS[k]} {duration(float(t))}" for k, t in
                                                     zip((SEQ1, RND, SEQ2), times))
                       + " instead of 8 h, 6 h and 8 h")
        if int(v["xsr_interval"]) != PTS_INTERVAL_S:
            out.append(f"XSR reports every {int(v['xsr_interval'])} s instead of every {PTS_INTERVAL_S} s")
        if (int(v["xsr_tc"]), int(v["xsr_qd"])) != (PTS_TC, PTS_QD):
            out.append(f"XSR runs at TC{v['xsr_tc']}/QD{v['xsr_qd']} instead of TC{PTS_TC}/QD{PTS_QD}")
        return out


class CrossStimulusRecoveryTest(api.TestType):
    pts = CrossStimulusRecoveryPts()
    name = "xsr"
    title = "Cross Stimulus Recovery"
    short = "XSR"
    order = 75
    view = "tkperf.testtypes.xsr.view:CrossStimulusRecoveryView"
    options = api.OptionSet(XsrSettings, (
        api.Option("xsr_seq1", (FLAGS[SEQ1],), "XSR: the first SEQ 1024KiB W phase (default 8h; 10s with --quick)",
                   parse=api.parse_duration, default=PTS_SEQ1_S, quick=10,
                   check=api.in_range(1, MAX_TIME, FLAGS[SEQ1]), metavar="DURATION"),
        api.Option("xsr_rnd", (FLAGS[RND],), "XSR: the RND 8KiB W phase (default 6h; 10s with --quick)",
                   parse=api.parse_duration, default=PTS_RND_S, quick=10,
                   check=api.in_range(1, MAX_TIME, FLAGS[RND]), metavar="DURATION"),
        api.Option("xsr_seq2", (FLAGS[SEQ2],), "XSR: the second SEQ 1024KiB W phase (default 8h; 10s with --quick)",
                   parse=api.parse_duration, default=PTS_SEQ2_S, quick=10,
                   check=api.in_range(1, MAX_TIME, FLAGS[SEQ2]), metavar="DURATION"),
        api.Option("xsr_interval", ("--xsr-interval",), "XSR reporting interval (default 60s; 1s with --quick)",
                   parse=api.parse_duration, default=PTS_INTERVAL_S, quick=1,
                   check=api.in_range(1, 3600, "--xsr-interval"), metavar="DURATION"),
        api.Option("xsr_tc", ("--xsr-tc",), "XSR thread count TC, fio numjobs (default 1)", parse=api.parse_count,
                   default=PTS_TC, check=api.in_range(1, MAX_NUMJOBS, "--xsr-tc"), metavar="TC"),
        api.Option("xsr_qd", ("--xsr-qd",), "XSR queue depth QD per thread (default 32)", parse=api.parse_count,
                   default=PTS_QD, check=api.in_range(1, api.MAX_IODEPTH, "--xsr-qd"), metavar="QD"),
        api.Option("xsr_settle_band", ("--xsr-settle-band",),
                   "XSR: a phase has settled once every later interval stays within this many percent "
                   "of its level (default 10)", parse=parse_band, format=band_text,
                   default=10.0, metavar="PCT"),
    ))

    # --- running ---------------------------------------------------------------
    def phases(self, opts: api.Options) -> List[Phase]:
        cfg = opts.of(XsrSettings)
        tc, qd = cfg.tc, cfg.qd
        times = {SEQ1: cfg.seq1, RND: cfg.rnd, SEQ2: cfg.seq2}
        out = []
        for kind in (SEQ1, RND, SEQ2):
            rw, bs = ("randwrite", RND_BS) if kind == RND else ("write", SEQ_BS)
            job = api.FioJob(name=JOB_NAMES[kind], rw=rw, bs=bs, runtime=times[kind], numjobs=tc, iodepth=qd)
            out.append(Phase(job, LABELS[kind], kind))
        return out

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        # A phase shorter than the interval is one short interval (fio's final report).
        cfg = opts.of(XsrSettings)
        interval = cfg.interval
        params = {"access": "SEQ 1024KiB W, then RND 8KiB W, then SEQ 1024KiB W",
                  "block_size": "1024k,8k,1024k", "mixes": "0/100", "numjobs": str(cfg.tc),
                  "iodepth": str(cfg.qd), "interval": str(interval), "seq1": str(cfg.seq1),
                  "rnd": str(cfg.rnd), "seq2": str(cfg.seq2),
                  "settle_band_pct": band_text(cfg.settle_band)}
        return [api.Plan(key=self.name, shape=XsrShape(tuple(self.phases(opts)), interval), params=params,
                         wipc=False)]

    # --- reading results -------------------------------------------------------------
    def headline(self, test: api.TestRun) -> List[api.Figure]:
        a = analyse(test)
        if a is None:
            return []
        out: List[api.Figure] = []
        for kind, key, label in ((SEQ1, "seq1_level_mb_s", "SEQ 1 level"), (RND, "rnd_level_mb_s", "RND 8k level"),
                                 (SEQ2, "seq2_level_mb_s", "SEQ 2 level")):
            value = a.level_of(kind)
            if value is not None:
                out.append(api.Figure(key, label, value, "MB/s", "higher", "{:,.1f}"))
            rnd = a.of(RND) if kind == RND else None
            if rnd is not None and rnd.level_iops is not None:
                out.append(api.Figure("rnd_level_iops", "RND 8k level", rnd.level_iops, "IOPS"))
        recovery = a.recovery_pct()
        if recovery is not None:
            out.append(api.Figure("seq_recovery_pct", "SEQ 2 / SEQ 1", recovery, "%", "higher", "{:,.1f}"))
        for kind, key, label in ((RND, "rnd_settle_s", "RND settled after"),
                                 (SEQ2, "seq2_settle_s", "SEQ 2 settled after")):
            p = a.of(kind)
            if p is not None and p.settle.settled and p.settle.time_s is not None:
                out.append(api.Figure(key, label, p.settle.time_s, "s", "lower"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(RND_BS, SEQ_BS)
