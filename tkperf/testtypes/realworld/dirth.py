"""rwsw-dirth: the applied test workload of a capture (its dominant streams,
normalised) over DIRTH's TC x QD grid, in DIRTH's round structures, with
the max, mid and min points' response-time histograms
(docs/rwsw-tests.rst).  The pre-writes and the preconditioning are the
applied workload's writes alone (its write transfer sizes, 100% writes)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import ClassVar, List

from tkperf.api import Blocks, Options, OptionSet, Plan, TestRun, TestType, stored_values
from tkperf.pts import SweepPts, SweepSettings, SweepTest, captures_of, sweep_options, sweep_plan
from tkperf.testtypes.realworld import applied
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld import workload as wl
from tkperf.testtypes.realworld.words import common_deviations

PREFIX = "rwsw_dirth"
KEY = "rwsw-dirth"
STEM = "rwsw"
WRITE_STEM = "rwsw-w"


@dataclass(frozen=True)
class RwswDirthSettings(SweepSettings):
    """rwsw-dirth's sweep options (``--rwsw-dirth-*``)."""

    option_prefix: ClassVar[str] = PREFIX + "_"


def _write_job(mix: applied.Mixed, tc: int, qd: int, runtime: int, name: str):
    """The applied workload's writes alone: its write transfer sizes, 100% writes, flushing as its writes did."""
    return replace(wl.job(replace(mix, fsync=mix.write_fsync), tc, qd, runtime, name), rwmixread=0)


class _Prefixed:
    """The type seen under its option prefix, for the sweep's shared deviations."""

    def __init__(self, kind: TestType) -> None:
        self.name, self.short, self.options = PREFIX, kind.short, kind.options


class RwswDirthPts(SweepPts):
    """DIRTH's sweep on the RWSW PTS's applied test workload, and the departures."""

    oio = ""

    def deviations(self, kind: TestType, options, revision) -> List[str]:
        v = stored_values(kind, options)
        out = common_deviations(kind.name) + wl.workload_deviations(kind.name, options, v["rwsw_streams_share"])
        return out + SweepPts.deviations(self, _Prefixed(kind), options, revision)  # type: ignore[arg-type]

    def result_deviations(self, kind: TestType, test: TestRun, options, revision, capacity: int) -> List[str]:
        """The capture's flushes and discards (:func:`~.workload.side_deviations`), then the sweep's."""
        return wl.side_deviations(test.key, test.params) + SweepPts.result_deviations(
            self, kind, test, options, revision, capacity)


class RwswDirthTest(SweepTest):
    pts = RwswDirthPts()
    name = KEY
    title = "Real-World Workload DIRTH (applied test workload)"
    short = "RWSW-DIRTH"
    order = 92
    view = "tkperf.testtypes.realworld.dirthview:RwswDirthView"
    options = OptionSet(RwswDirthSettings, (ro.WORKLOAD, ro.STREAMS_SHARE) + sweep_options(PREFIX, "RWSW-DIRTH"))

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        cfg = opts.of(RwswDirthSettings)
        cap, streams = wl.dominant(opts)
        mix = wl.mixed(streams, cap)
        return [sweep_plan(KEY, partial(wl.job, mix), STEM, cfg.tc, cfg.qd, cfg.round, cfg.time, cfg.rt_limit,
                           "applied workload", {**wl.params(opts, cap, streams, mix), "prewrite_mix": "0/100"},
                           capacity, captures_of(cfg, opts.revision.id), partial(_write_job, mix), WRITE_STEM)]

    def blocks(self, opts: Options) -> Blocks:
        mix = wl.mixed(wl.dominant(opts)[1])
        return Blocks(mix.smallest, mix.largest)
