"""Enterprise composite workload (PTS-E CBW / ECW): the JEDEC enterprise mix
(JEDEC JESD219, as IBM's 2012 consistency paper runs it) under a demand-intensity sweep.

One instance (key ``cbw``): purge, WIPC, then the JEDEC mix -- fio
``bssplit`` of 512 B .. 64 KiB (:data:`BSSPLIT`),
``random_distribution=zoned:50/5:30/15:20/80`` (50% of the I/Os to the
first 5% of the range, 30% to the next 15%, 20% to the last 80%), R/W
40/60, incompressible data (fio's random buffers, refilled for every write:
``refill_buffers=1``) -- swept over TC x QD in DIRTH's round structures
(:mod:`tkperf.pts.sweep.structure`): by default under the 2.0
revisions the workload dependent preconditioning and rounds of a
pre-write (the mix's split and zones, writes only) at the highest OIO and the whole sweep
until the highest-OIO point is steady, then captures at the max, mid and
min points; else steady state at the highest OIO, then one sweep.

The job is the JEDEC job the consistency test runs too
(:func:`tkperf.pts.jedec.jedec_job`); the sweep, the max, mid
and min points, the headline figures and the report and comparison blocks
are DIRTH's, the sweep of :mod:`tkperf.api` (:mod:`tkperf.pts.sweep.plan`),
given this workload.

The mix issues 512 B I/Os at 512 B aligned offsets (fio's ``blockalign``
defaults to the smallest block size), so it needs a target with 512 B
logical sectors: on a 4Kn drive fio fails with EINVAL.  The plan does not
see the target's sector size, so this is not refused before the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Tuple

from tkperf import api
from tkperf.pts import JEDEC_BSSPLIT as BSSPLIT
from tkperf.pts import (
    JEDEC_LARGEST,
    SweepPts,
    SweepSettings,
    SweepTest,
    captures_of,
    jedec_job,
    sweep_options,
    sweep_plan,
)
from tkperf.pts import JEDEC_ZONED as ZONED

#: Read share of the JEDEC enterprise workload (R/W 40/60).
MIX = 40
#: Workload names: ``jedec-40-60-tc32-qd32``, ``ss-jedec-40-60-tc32-qd32``.
STEM = f"jedec-{MIX}-{100 - MIX}"
KEY = "cbw"
#: The smallest transfer of the mix: the target's logical sector must divide it.
SMALLEST = 512
DATA = "incompressible: fio's random buffers, refilled for every write (refill_buffers=1 in every CBW job)"


@dataclass(frozen=True)
class CbwSettings(SweepSettings):
    """CBW's options (``--cbw-*``)."""

    option_prefix: ClassVar[str] = "cbw_"


def bssplit_shares(text: str = BSSPLIT) -> Tuple[Tuple[int, int], ...]:
    """fio's ``bssplit`` as (bytes, percent) pairs: '512/4:1k/1' -> ((512, 4), (1024, 1))."""
    out = []
    for part in text.split(":"):
        size, _, share = part.partition("/")
        n = int(size[:-1]) * 1024 if size.endswith("k") else int(size)
        out.append((n, int(share)))
    return tuple(out)


def mean_transfer(text: str = BSSPLIT) -> float:
    """The mean transfer size of a ``bssplit`` in bytes (7,818 B for the JEDEC mix)."""
    pairs = bssplit_shares(text)
    return sum(n * share for n, share in pairs) / sum(share for _, share in pairs)


def cbw_job(tc: int, qd: int, runtime: int, name: str) -> api.FioJob:
    """The JEDEC mix at R/W 40/60 with TC threads (fio numjobs) of QD
    outstanding I/Os each (fio iodepth)."""
    return jedec_job(name, MIX, runtime, tc, qd)


def cbw_write_job(tc: int, qd: int, runtime: int, name: str) -> api.FioJob:
    """The JEDEC mix's block-size split and zones, 100% writes: CBW's
    pre-writes and preconditioning, as the PTS 2.0 implementation runs them."""
    return jedec_job(name, 0, runtime, tc, qd)


#: The pre-writes' and preconditioning's names: ``pre-jedec-0-100-tc32-qd32``.
WRITE_STEM = "jedec-0-100"


class CompositeWorkloadPts(SweepPts):
    """CompositeWorkload's SNIA PTS rules: the sweep's.  The offsets of the
    mix (512 B aligned) are disclosed in the header, not judged: JESD219's
    alignment rule could not be established (docs/test-cbw.rst, "Alignment")."""


class CompositeWorkloadTest(SweepTest):
    pts = CompositeWorkloadPts()
    #: Every CBW job writes new random data (refill_buffers=1), whatever the run's --no-refill-buffers.
    refills_buffers = True
    name = "cbw"
    title = "Enterprise Composite Workload (CBW)"
    short = "CBW"
    order = 75
    view = "tkperf.testtypes.cbw.view:CompositeWorkloadView"
    options = api.OptionSet(CbwSettings, sweep_options("cbw", "CBW"))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        params = {"workload": "JEDEC enterprise mix (JESD219)", "access": f"random, {ZONED}",
                  "mix": api.mix_label(MIX), "bssplit": BSSPLIT, "random_distribution": ZONED, "data": DATA,
                  "smallest_block": api.format_bs(SMALLEST), "prewrite_mix": api.mix_label(0)}
        cfg = opts.of(CbwSettings)
        return [sweep_plan(KEY, cbw_job, STEM, cfg.tc, cfg.qd, cfg.round, cfg.time,
                           cfg.rt_limit, f"JEDEC mix {api.mix_label(MIX)}", params, capacity,
                           captures_of(cfg, opts.revision.id), cbw_write_job, WRITE_STEM)]

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(SMALLEST, JEDEC_LARGEST)
