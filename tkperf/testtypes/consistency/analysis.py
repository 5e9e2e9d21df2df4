"""A stored consistency test as numpy arrays, and its figures.

What counts where (docs/test-consistency.rst):

* ``rnd4k``: the write cliff and the steady part are found in the one
  stream; the response-time figures cover the whole stream (SanDisk's
  2000 s are the measurement, a cliff's stalls included).
* ``jedec``: the write cliff is looked for in the preconditioning (it
  starts from the purge); the steady part and the response-time figures are
  the 40/60 phases (the JEDEC enterprise workload proper, IBM's 2012 paper's plots),
  and the 100% write phases get figures of their own.

Nothing here imports matplotlib: ``show`` and ``check`` read the figures.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from tkperf import api
from tkperf.pts import phase_rows
from tkperf.pts.stream.phases import MAX_SERIES, SERIES
from tkperf.testtypes.consistency import figures as fg

#: Phase kinds, as the plan names them.
STIMULUS, PRECONDITION, WRITE, MIXED = "stimulus", "precondition", "write", "mixed"
KIND_TITLES = {STIMULUS: "RND 4KiB 100% W", PRECONDITION: "preconditioning, JEDEC mix 100% W",
               WRITE: "JEDEC mix 100% W", MIXED: "JEDEC mix 40/60 R/W"}


@dataclass(frozen=True)
class PhaseSpan:
    """A phase and its rows ``start``..``stop`` (0-based, stop excluded)."""

    index: int
    label: str
    kind: str
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True, eq=False)
class Analysis:
    """Per-interval arrays of one test and everything computed from them."""

    workload: str
    interval_s: int
    end_s: np.ndarray          #: end of each interval, fio seconds since the stimulus started
    iops: np.ndarray
    ios: np.ndarray
    read_ios: np.ndarray
    lat_mean_us: np.ndarray
    phase: np.ndarray
    lat_max_us: Optional[np.ndarray]   #: per interval, both directions; nan where unknown, None without any
    read_max_us: Optional[np.ndarray]
    write_max_us: Optional[np.ndarray]
    phases: Tuple[PhaseSpan, ...]
    cliff: fg.Cliff
    cliff_start: int           #: row where the stream the cliff was looked for starts
    steady: np.ndarray         #: boolean mask of the steady part
    measured: np.ndarray       #: boolean mask of the rows the response-time figures cover
    blocks: fg.Blocks          #: every 5 s block

    @property
    def n(self) -> int:
        return int(self.iops.size)

    def spread(self, mask: Optional[np.ndarray] = None) -> Optional[fg.Spread]:
        return fg.spread(self.iops[self.steady if mask is None else mask])

    def lat_mean(self, mask: np.ndarray) -> Optional[float]:
        return fg.weighted_mean(self.lat_mean_us[mask], self.ios[mask])

    def lat_max(self, mask: np.ndarray) -> Optional[float]:
        known = self.lat_max_us[mask] if self.lat_max_us is not None else np.zeros(0)
        known = known[~np.isnan(known)]
        return float(known.max()) if known.size else None

    @property
    def maxima_rows(self) -> int:
        """Intervals with a known maximum (all of them unless the run stopped early)."""
        return 0 if self.lat_max_us is None else int(np.count_nonzero(~np.isnan(self.lat_max_us)))

    def blocks_of(self, mask: np.ndarray) -> fg.Blocks:
        """The 5 s blocks of the phases whose rows ``mask`` selects."""
        wanted = np.unique(self.phase[mask])
        return self.blocks.where(np.isin(self.blocks.phase, wanted))

    def avg_max_5s(self, mask: np.ndarray) -> Optional[float]:
        b = self.blocks_of(mask)
        known = b.lat_max_us[~np.isnan(b.lat_max_us)] if b.lat_max_us is not None else np.zeros(0)
        return float(known.mean()) if known.size else None

    def kind_mask(self, *kinds: str) -> np.ndarray:
        wanted = [p.index for p in self.phases if p.kind in kinds]
        return np.isin(self.phase, wanted)

    @property
    def steady_label(self) -> str:
        """The steady part in words."""
        if self.workload == "jedec":
            return "the 40/60 phases"
        first = int(np.argmax(self.steady)) if np.any(self.steady) else self.n
        return f"intervals {first + 1}-{self.n}"


def _phases(test: api.TestRun, phase: np.ndarray) -> Tuple[PhaseSpan, ...]:
    out: List[PhaseSpan] = []
    for index, label, kind in phase_rows(test):
        rows = np.flatnonzero(phase == index)
        if rows.size:
            out.append(PhaseSpan(index, label, kind, int(rows[0]), int(rows[-1]) + 1))
    return tuple(out)


def _interval(test: api.TestRun) -> int:
    text = test.params.get("interval", "1")
    return int(text) if text.isdigit() and int(text) > 0 else 1


_CACHE: OrderedDict[tuple, Tuple[object, Analysis]] = OrderedDict()
_CACHE_SIZE = 8


def analyse(test: api.TestRun) -> Optional[Analysis]:
    """The test's arrays and figures; None before its first interval."""
    s = test.series.get(SERIES)
    if s is None or not len(s):
        return None
    m = test.series.get(MAX_SERIES)
    key = (id(test), id(s), len(s), id(m), len(m) if m is not None else -1)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is s:
        return hit[1]
    result = _analyse(test)
    _CACHE[key] = (s, result)  # the series is held, so its id is not reused while cached
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


def _analyse(test: api.TestRun) -> Analysis:
    s = test.series[SERIES]
    workload = test.params.get("workload", "rnd4k")
    interval = _interval(test)
    end_s = np.cumsum(s.column("fio_s"))
    iops, ios, phase = s.column("iops"), s.column("ios"), s.column("phase").astype(np.int64)
    lat_mean = s.column("lat_mean_us")
    n = int(iops.size)
    m = test.series.get(MAX_SERIES)
    read_max = write_max = lat_max = None
    if m is not None and 0 < len(m) <= n:
        # A run stopped in a phase has the maxima of the phases before it: nan after them.
        read_max, write_max = np.full(n, np.nan), np.full(n, np.nan)
        read_max[:len(m)], write_max[:len(m)] = m.column("read_lat_max_us"), m.column("write_lat_max_us")
        lat_max = np.maximum(read_max, write_max)
    phases = _phases(test, phase)
    if workload == "jedec":
        pre = [p for p in phases if p.kind == PRECONDITION]
        start, stop = (pre[0].start, pre[0].stop) if pre else (0, 0)
        measured = np.isin(phase, [p.index for p in phases if p.kind == MIXED])
        steady = measured
    else:
        start, stop = 0, n
        measured = np.ones(n, dtype=bool)
        steady = np.zeros(n, dtype=bool)
    cliff = fg.write_cliff(iops[start:stop], end_s[start:stop] - (end_s[start - 1] if start else 0.0))
    if workload != "jedec":
        steady[fg.steady_start(n, cliff):] = True
    per_block = max(1, fg.BLOCK_S // interval)
    blocks = fg.blocks(end_s, ios, lat_mean, lat_max, phase, per_block)
    return Analysis(workload, interval, end_s, iops, ios, s.column("read_ios"), lat_mean, phase, lat_max,
                    read_max, write_max, phases, cliff, start, steady, measured, blocks)


def cliff_words(a: Analysis) -> str:
    """When the write cliff happened, in words."""
    c = a.cliff
    where = "of the preconditioning" if a.workload == "jedec" else "of the stimulus"
    if not c.found:
        return c.reason
    return (f"at {c.time_s:,.0f} s {where} (interval {a.cliff_start + c.index + 1}): the IOPS fell from "
            f"{c.initial:,.0f} to {c.final:,.0f}; the {c.window}-interval rolling median first fell "
            f"below the midpoint {c.midpoint:,.0f} there")
