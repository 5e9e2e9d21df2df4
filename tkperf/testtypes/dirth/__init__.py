"""Demand intensity / response-time histogram (PTS-E DIRTH).

The default stimulus is RND 8KiB 65:35, the PTS 2.0 implementation's
default ("DIRTH - OLTP"; Alan-ADATA/SSS-PTS-TEST, ``web/t_test.php``:
``dirth_rw`` 65, ``dirth_bs`` 8192, a "test operator choice"; the title in
``test/lib/BlockStorageTestDirth.php``): :data:`DEFAULT_BS`,
:data:`DEFAULT_MIXES`, :func:`stimulus_source`.

Per R/W mix (an instance each, key ``dirth-8k-65-35``): purge, WIPC, then
one of two round structures (:mod:`tkperf.pts.sweep.structure`).  ``pts-2.0`` (the default
under the 2.0 revisions): the workload dependent preconditioning (100%
writes at the highest OIO until steady), then rounds of a pre-write (100%
writes) at the highest OIO and the whole sweep over every TC x QD point
(``--dirth-time`` each, TC outer and QD inner, both high to low, one fio
process) until the highest-OIO point is steady, then a pre-write at the
point's own TC and QD and a capture at each of the max, mid and min points
(:class:`~tkperf.kit.composite.SweepRounds`).  ``steady-sweep``: RND
``--dirth-bs`` at the highest OIO in rounds of ``--dirth-round`` until its
IOPS are steady (20/10), then at once one sweep, every point keeping its
response-time histogram (:class:`~tkperf.kit.composite.SteadyThenSweep`).

TC (thread count) is fio's ``numjobs`` and QD (queue depth per thread) is
fio's ``iodepth``: OIO = TC x QD.  (One public implementation swapped
them.)

Three points of the sweep are shown in detail (``choose_points``): the
max point, the highest IOPS with a mean response time within
``--dirth-rt-limit``; the min point, the lowest OIO; the mid point, the
point under the limit whose IOPS are nearest the middle of the two.

The sweep is not DIRTH's alone: ``sweep_options``, ``sweep_plan`` and
``SweepTest`` of :mod:`tkperf.api` (:mod:`tkperf.pts.sweep.plan`) take the
workload and the names as arguments; the enterprise composite workload
test (:mod:`tkperf.testtypes.cbw`) sweeps its JEDEC mix with them, and
this module gives them DIRTH's RND workload.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar, List, Tuple

from tkperf import api
from tkperf.pts import (
    SweepSettings,
    SweepTest,
    captures_of,
    format_mixes,
    sweep_options,
    sweep_plan,
)
from tkperf.pts import parse_mixes as options_parse_mixes


@dataclass(frozen=True)
class DirthSettings(SweepSettings):
    """DIRTH's options (``--dirth-*``)."""

    option_prefix: ClassVar[str] = "dirth_"

    #: The block size in bytes.
    bs: int
    #: Read shares in percent, each its own test.
    mixes: Tuple[int, ...]


# --- options ----------------------------------------------------------------------------

#: The default stimulus: RND 8KiB at 65% reads, the PTS 2.0 implementation's
#: ("DIRTH - OLTP"), under every revision (the PTS texts were not available;
#: tkperf's earlier default, RND 4KiB 100% W, had no source).
DEFAULT_BS = 8192
DEFAULT_MIXES: Tuple[int, ...] = (65,)
#: Where the default comes from, as the help, the header and the docs give it.
SOURCE = ("the PTS 2.0 implementation's default, 'DIRTH - OLTP' (Alan-ADATA/SSS-PTS-TEST, web/t_test.php: "
          "dirth_rw 65, dirth_bs 8192)")


def stimulus_source(params) -> str:
    """Where a stored instance's stimulus comes from, in words: the PTS 2.0
    implementation's default, or the operator's choice (which, for RND
    4KiB 100% W in a result from before the default changed, may have been
    tkperf's earlier default)."""
    bs, mix = params.get("block_size", ""), params.get("mix", "")
    if bs == api.format_bs(DEFAULT_BS) and mix == api.mix_label(DEFAULT_MIXES[0]):
        return SOURCE
    ours = ("tkperf's earlier default or the operator's choice"
            if (bs, mix) == ("4k", api.mix_label(0)) and "stimulus_default" not in params else "the operator's choice")
    return f"{ours}; the PTS 2.0 implementation's default is RND 8KiB 65:35, 'DIRTH - OLTP'"

def parse_bs(text: str, flag: str) -> int:
    sizes = api.parse_block_sizes(text, flag)
    if len(sizes) != 1:
        raise api.UsageError(f"{flag} takes one block size, not {text.strip()!r}")
    return sizes[0]


def parse_mixes(text: str, flag: str) -> Tuple[int, ...]:
    try:
        return options_parse_mixes(text)
    except api.UsageError as exc:
        raise api.UsageError(f"{flag}: {exc}") from None



# --- the plan -----------------------------------------------------------------------------

def stem(bs: int, mix: int) -> str:
    """``rnd-8k-65-35``: the access pattern of one instance."""
    return f"rnd-{api.format_bs(bs)}-{mix}-{100 - mix}"


def instance_key(bs: int, mix: int) -> str:
    """The key of the instance of one mix: ``dirth-8k-65-35``."""
    return f"dirth-{api.format_bs(bs)}-{mix}-{100 - mix}"


def point_name(bs: int, mix: int, tc: int, qd: int) -> str:
    """The workload of one sweep point: ``rnd-8k-65-35-tc32-qd1``."""
    return f"{stem(bs, mix)}-tc{tc}-qd{qd}"


def job(bs: int, mix: int, tc: int, qd: int, runtime: int, name: str) -> api.FioJob:
    """RND ``bs`` at read share ``mix`` with TC threads (fio numjobs) of QD
    outstanding I/Os each (fio iodepth)."""
    return api.FioJob(name=name, rw="randrw", bs=bs, rwmixread=mix, runtime=runtime, numjobs=tc, iodepth=qd)


def write_job(bs: int, tc: int, qd: int, runtime: int, name: str) -> api.FioJob:
    """RND ``bs`` 100% writes with TC threads of QD outstanding I/Os each:
    DIRTH's pre-writes and preconditioning, whatever the sweep's mix."""
    return api.FioJob(name=name, rw="randwrite", bs=bs, runtime=runtime, numjobs=tc, iodepth=qd)



# --- the test type ------------------------------------------------------------------------

_TC, _QD, _TIME, _RT_LIMIT, _ROUND, *_STRUCTURE = sweep_options("dirth", "DIRTH")


class DemandIntensityTest(SweepTest):
    name = "dirth"
    title = "Demand Intensity / Response Time Histogram"
    short = "DIRTH"
    order = 70
    view = "tkperf.testtypes.dirth.view:DemandIntensityView"
    options = api.OptionSet(DirthSettings, (
        _TC, _QD,
        api.Option("dirth_bs", ("--dirth-bs",), "DIRTH block size (default 8k: with the default mix 65/35, the "
                   "PTS 2.0 implementation's default, 'DIRTH - OLTP', Alan-ADATA/SSS-PTS-TEST)", parse=parse_bs,
                   format=api.format_bs, default=DEFAULT_BS, metavar="SIZE"),
        api.Option("dirth_mixes", ("--dirth-mixes", "--dirth-mix"), "DIRTH R/W mixes as read/write, "
                   "each its own test (default 65/35, the PTS 2.0 implementation's; e.g. 0/100,100/0,70/30)",
                   parse=parse_mixes, format=format_mixes, default=DEFAULT_MIXES, metavar="MIXES"),
        _TIME, _RT_LIMIT, _ROUND, *_STRUCTURE,
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(DirthSettings)
        bs = cfg.bs
        return [sweep_plan(instance_key(bs, mix), partial(job, bs, mix), stem(bs, mix), cfg.tc, cfg.qd,
                           cfg.round, cfg.time, cfg.rt_limit, f"RND {api.format_bs(bs)} {api.mix_label(mix)}",
                           {"block_size": api.format_bs(bs), "access": "random", "mix": api.mix_label(mix),
                            "prewrite_mix": api.mix_label(0),
                            "stimulus_default": "yes" if (bs, mix) == (DEFAULT_BS, DEFAULT_MIXES[0]) else "no"},
                           capacity,
                           captures_of(cfg, opts.revision.id), partial(write_job, bs), stem(bs, 0))
                for mix in cfg.mixes]

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, opts.of(DirthSettings).bs)
