"""HDD sequential throughput by position: SEQ 1024KiB 100% W, then 100% R,
in zones across the whole disk from the outer tracks (LBA 0 on common
drives) to the inner ones.

An HDD's outer tracks hold more sectors per revolution than its inner ones,
so its sequential rate falls from the first LBA to the last, often to about
half: the zone effect is what this test shows.  The active range (the whole
disk by default) is cut into ``--zones`` zones; zone i of N starts at
``i * range / N`` aligned down to 1 MiB and reaches to the next zone's
start.  In each zone fio writes (reads) sequentially for ``--zone-time``
seconds at TC 1/QD 4, wrapping inside the zone, never into the next one.

One fio process per direction runs every zone as a stonewalled job, outer
to inner, without a pause; the write sweep comes first so that the read
sweep reads back written data.  The loop shape is
:class:`~tkperf.kit.shapes.Phases` without idle time: a phase per
direction and pass.  There is no steady state: a drive's sequential rate
depends on where it reads, not on what it did before, so the sweep is a
curve over position, not a loop until steady.  ``--zone-passes`` repeats
the sweep for repeatability; the report then shows each zone's spread.

Each zone's offset and size are kept in the test's data (``zone.K.offset``,
``zone.K.size``) with the capacity the positions refer to (``zones.capacity``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Dict, List, Optional, Sequence, Tuple

from tkperf import api
from tkperf.pts import Estimate, TargetError, mb, stored
from tkperf.pts import hdd_zone as zone_name

if TYPE_CHECKING:  # pragma: no cover
    from tkperf.pts import PlanLike, RunContext

MiB = 1024 * 1024
ZONES = 100
MAX_ZONES = 1000
ZONE_S = 5
BS = MiB
QD = 4
#: The two directions, in the order run: (word in job names, fio rw, label).
DIRECTIONS: Tuple[Tuple[str, str, str], ...] = (("w", "write", "W"), ("r", "read", "R"))


def zone_bounds(span: int, zones: int, align: int = MiB) -> List[Tuple[int, int]]:
    """(offset, size) of ``zones`` adjoining zones of the first ``span`` bytes:
    zone i starts at ``i * end / zones`` aligned down to ``align`` (``end``:
    ``span`` aligned down) and reaches to the next zone's start."""
    end = span // align * align
    starts = [i * end // zones // align * align for i in range(zones)] + [end]
    out = [(a, z - a) for a, z in zip(starts, starts[1:])]
    if any(size < align for _, size in out):
        raise TargetError(f"--zones {zones}: the target's {span:,} bytes make zones smaller than "
                          f"{align // MiB} MiB; use at most --zones {max(1, end // align)}")
    return out


def sizes_text(bounds: Sequence[Tuple[int, int]]) -> str:
    """The zones' sizes in words: '32 MiB' or '2 to 3 MiB'."""
    lo, hi = min(s for _, s in bounds) / MiB, max(s for _, s in bounds) / MiB
    return f"{lo:,.0f} MiB" if lo == hi else f"{lo:,.0f} to {hi:,.0f} MiB"


def parse_zone_name(name: str) -> Optional[Tuple[int, str]]:
    """``zone-017-r`` -> (17, 'r'); None for any other name."""
    parts = name.split("-")
    if len(parts) == 3 and parts[0] == "zone" and parts[1].isdigit() and parts[2] in ("w", "r"):
        return int(parts[1]), parts[2]
    return None


def sweep_jobs(bounds: Sequence[Tuple[int, int]], side: str, rw: str, seconds: int) -> Tuple[api.FioJob, ...]:
    """Every zone, outer to inner, as a time-based job confined to its zone."""
    return tuple(api.FioJob(name=zone_name(i, side), rw=rw, bs=BS, runtime=seconds, numjobs=1, iodepth=QD,
                            offset=offset, size=size)
                 for i, (offset, size) in enumerate(bounds, 1))


@dataclass(frozen=True)
class ZoneSweeps(api.Phases):
    """:class:`Phases` that keeps the zones' placement in the test's data
    and names every phase's fio process in the dry run."""

    bounds: Tuple[Tuple[int, int], ...] = ()
    capacity: int = 0

    def run(self, ctx: RunContext, plan: PlanLike, test: api.TestRun) -> None:
        test.data["zones.capacity"] = str(self.capacity)
        for i, (offset, size) in enumerate(self.bounds, 1):
            test.data[f"zone.{i}.offset"] = str(offset)
            test.data[f"zone.{i}.size"] = str(size)
        super().run(ctx, plan, test)

    def estimate(self, opts, capacity: int) -> Estimate:
        est = super().estimate(opts, capacity)
        lines = list(est.lines) + [f"# {len(self.bounds)} zones of {sizes_text(self.bounds)}, outer "
                                   f"(offset 0) to inner (offset {self.bounds[-1][0]:,})"]
        # The job file below lists every phase's jobs; each phase is its own fio process.
        lines += [f"# phase {i} (one fio process): {p.label}" for i, p in enumerate(self.phases, 1)]
        return Estimate(tuple(lines), est.jobs, est.low_s, est.high_s)


# --- reading results ----------------------------------------------------------------------

@dataclass(frozen=True)
class Zone:
    """One zone's placement and its MB/s (decimal) per pass, by direction."""

    index: int
    offset: int
    size: int
    capacity: int
    write: Tuple[float, ...]
    read: Tuple[float, ...]

    @property
    def position_pct(self) -> float:
        """Where the zone starts, in percent of the capacity (0: outer edge)."""
        return 100.0 * self.offset / self.capacity if self.capacity else 0.0

    def passes(self, side: str) -> Tuple[float, ...]:
        return self.write if side == "w" else self.read

    def mb_s(self, side: str) -> Optional[float]:
        """Mean MB/s over the passes; None where the direction was not measured."""
        v = self.passes(side)
        return sum(v) / len(v) if v else None

    def spread_pct(self, side: str) -> Optional[float]:
        """(max - min) over the passes in percent of their mean; None for one pass."""
        v = self.passes(side)
        mean = self.mb_s(side)
        return 100.0 * (max(v) - min(v)) / mean if len(v) > 1 and mean else None

#: A zone's offset item: ``zone.N.offset``.
_ZONE_OFFSET = re.compile(r"zone\.(\d{1,6})\.offset")


def zones(test: api.TestRun) -> List[Zone]:
    """The zones of a test in order, with what was measured in each."""
    capacity = stored.whole(test, "zones.capacity")
    found: Dict[int, Dict[str, List[float]]] = {}
    for r in test.rounds:
        for w in r.workloads:
            parsed = parse_zone_name(w.name)
            if parsed is not None:
                found.setdefault(parsed[0], {"w": [], "r": []})[parsed[1]].append(mb(w.bw_bytes))
    indices = sorted(set(found) | {int(m.group(1)) for m in map(_ZONE_OFFSET.fullmatch, test.data) if m})
    return [Zone(i, stored.whole(test, f"zone.{i}.offset"), stored.whole(test, f"zone.{i}.size"),
                 capacity, tuple(found.get(i, {}).get("w", ())), tuple(found.get(i, {}).get("r", ())))
            for i in indices]


def measured(zs: Sequence[Zone], side: str) -> List[Zone]:
    return [z for z in zs if z.passes(side)]


@dataclass(frozen=True)
class ZoneSettings:
    """The values of hdd-zones's options (typed; ``opts.of(ZoneSettings)``)."""

    option_prefix: ClassVar[str] = "hdd_"

    zones: int
    #: Seconds.
    zone_time: int
    zone_passes: int


class HddZonesTest(api.TestType):
    #: Runs over the test range (``--test-range``): the HDD profile has no
    #: preconditioning, so the test range is simply the range it tests
    #: (``RunOptions.for_test``).
    uses_test_range = True
    name = "hdd-zones"
    title = "HDD throughput by zone"
    short = "HDD-ZONES"
    order = 80
    view = "tkperf.testtypes.hdd_zones.view:HddZonesView"
    default_profiles: Tuple[str, ...] = ("hdd",)
    options = api.OptionSet(ZoneSettings, (
        api.Option("hdd_zones", ("--zones",),
                   f"HDD-ZONES: zones from outer to inner, 2 to {MAX_ZONES} (default {ZONES}; --quick 8)",
                   parse=lambda text, flag: _count(text, "--zones"), default=ZONES, quick=8,
                   check=api.in_range(2, MAX_ZONES, "--zones"), metavar="N"),
        api.Option("hdd_zone_time", ("--zone-time",),
                   f"HDD-ZONES time per zone and direction: seconds or with s/m/h (default {ZONE_S}s; --quick 1s)",
                   parse=api.parse_duration, default=ZONE_S, quick=1,
                   check=api.in_range(1, 3600, "--zone-time"), metavar="DURATION"),
        api.Option("hdd_zone_passes", ("--zone-passes",),
                   "HDD-ZONES passes over all zones, for repeatability (default 1)",
                   parse=lambda text, flag: _count(text, "--zone-passes"), default=1,
                   check=api.in_range(1, 100, "--zone-passes"), metavar="N"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(ZoneSettings)
        n, seconds, passes = cfg.zones, cfg.zone_time, cfg.zone_passes
        bounds = tuple(zone_bounds(opts.test_bytes(capacity), n))
        phases = []
        for p in range(1, passes + 1):
            for side, rw, label in DIRECTIONS:
                phases.append(api.Phase(sweep_jobs(bounds, side, rw, seconds),
                                        label=f"pass {p}: SEQ {api.format_bs(BS)} 100% {label}, "
                                              f"zones 1-{n} outer to inner"))
        return [api.Plan(
            key=self.name,
            shape=ZoneSweeps(tuple(phases), bounds=bounds, capacity=capacity),
            params={"access": "sequential", "block_size": api.format_bs(BS), "numjobs": "1", "iodepth": str(QD),
                    "zones": str(n), "runtime": str(seconds), "passes": str(passes),
                    "span_bytes": str(bounds[-1][0] + bounds[-1][1])},
            wipc=False,
        )]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        """Per direction: the outermost and innermost zone's MB/s, inner in
        percent of outer, the mean over the zones and, over several passes,
        the largest spread of a zone."""
        zs = zones(test)
        out: List[api.Figure] = []
        for side, rw, label in DIRECTIONS:
            got = measured(zs, side)
            if not got:
                continue
            outer, inner = got[0].mb_s(side) or 0.0, got[-1].mb_s(side) or 0.0
            key = f"seq_{rw}"
            out += [api.Figure(f"{key}_outer_mb_s", f"{label} outer", outer, "MB/s", "higher", "{:,.1f}"),
                    api.Figure(f"{key}_inner_mb_s", f"{label} inner", inner, "MB/s", "higher", "{:,.1f}"),
                    api.Figure(f"{key}_inner_outer_pct", f"{label} inner/outer",
                               100.0 * inner / outer if outer else 0.0, "%", "", "{:,.0f}"),
                    api.Figure(f"{key}_zone_mean_mb_s", f"{label} mean of {len(got)} zones",
                               sum(z.mb_s(side) or 0.0 for z in got) / len(got), "MB/s", "higher", "{:,.1f}")]
            spreads = [s for s in (z.spread_pct(side) for z in got) if s is not None]
            if spreads:
                out.append(api.Figure(f"{key}_pass_spread_pct", f"{label} largest spread over passes",
                                      max(spreads), "%", "lower", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, BS)


def _count(text: str, flag: str) -> int:
    t = (text or "").strip()
    if not t.isdigit():
        raise api.UsageError(f"{flag} {text!r} is not a whole number")
    return int(t)
