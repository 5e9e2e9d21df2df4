"""rwsw-wsat: the applied test workload of a capture (its dominant streams,
normalised) run from a purge to steady state with WSAT's stop rules: one
continuous job cut into intervals, stopped at the time limit, the total
written (TGBW) or, with ``--rwsw-wsat-steady``, at steady state (20/10 on 5
points 30 minutes apart, after two drive fills) -- WSAT's rules and
defaults, under options of its own (docs/rwsw-tests.rst)."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, List

from tkperf.api import (
    Blocks,
    Figure,
    Options,
    OptionSet,
    Plan,
    PtsRules,
    Stream,
    TestRun,
    TestType,
    Tracking,
    UsageError,
    stored_values,
)
from tkperf.pts import (
    UNHELD,
    floor_bytes,
    point_params,
    point_seconds,
    tgbw_bytes,
)
from tkperf.rwsw.model import dominant as dominant_streams
from tkperf.rwsw.model import load as load_capture
from tkperf.testtypes.realworld import applied
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld import workload as wl
from tkperf.testtypes.realworld.words import common_deviations

SERIES = "intervals"
JOB = "rwsw-applied"
PTS_TIME_S = 24 * 3600
PTS_FILLS = 4
PTS_SPACING_S = 30 * 60
PTS_INTERVAL_S = 60
TAIL = 5
#: ``--rwsw-wsat-streams each``: at most this many dominant streams (the largest) run as segments of their own.
MAX_EACH = 8


def segment_key(k: int, s) -> str:
    """The test key of stream ``k``'s (0-based) own segment: ``rwsw-wsat-s1-rnd-4kib-write``."""
    return f"rwsw-wsat-s{k + 1}-{applied.job_name(0, 0, s).split('-', 2)[2]}"


def _fills(tgbw: str, capacity: int) -> float:
    if tgbw.endswith("x"):
        return float(tgbw[:-1])
    return float(tgbw) * 1e9 / capacity if capacity > 0 else 0.0


def refuse_without_writes(workload: str, streams) -> None:
    """A workload without writes cannot saturate writes: its total written (WSAT's stop) never grows."""
    if not any(s.rw == "write" for s in streams):
        raise UsageError(f"rwsw-wsat: --workload {os.path.basename(workload)}: its dominant streams hold no writes, "
                         "so WSAT's total-written stop could never fire; use rwsw-dirth or replay")


def segment_streams(streams):
    """The dominant streams that run on their own (``--rwsw-wsat-streams each``): the write streams, the
    :data:`MAX_EACH` largest (a read stream writes nothing to saturate, and WSAT measures what is written)."""
    return tuple(s for s in streams if s.rw == "write")[:MAX_EACH]


def each_deviations(name: str, v) -> List[str]:
    """``--rwsw-wsat-streams each``: what running every dominant stream on its own departs from."""
    if v.get("rwsw_wsat_streams", "mixed") != "each":
        return []
    out = [f"{name}: every dominant write stream (the {MAX_EACH} largest at most) runs as a WSAT segment of its "
           "own, each from its own purge, where the RWSW PTS's applied test workload runs the streams together"]
    try:
        cap = load_capture(v["rwsw_workload"])
        streams = dominant_streams(cap.streams, v["rwsw_streams_share"])
    except Exception:  # noqa: BLE001 - the capture may be gone when a result is read later
        return out
    writes = [s for s in streams if s.rw == "write"]
    if len(writes) > MAX_EACH:
        rest = sum(s.share for s in writes[MAX_EACH:])
        out.append(f"{name}: {len(writes) - MAX_EACH} dominant write streams beyond the {MAX_EACH} largest "
                   f"({100.0 * rest:.1f}% of the dominant streams' I/Os) have no segment")
    reads = [s.key for s in streams if s.rw == "read"]
    if reads:
        several = len(reads) > 1
        out.append(f"{name}: the dominant read stream{'s' if several else ''} {', '.join(reads)} "
                   f"{'run' if several else 'runs'} in no segment of {'their' if several else 'its'} own: WSAT "
                   "measures what is written (rwsw-dirth applies reads)")
    return out


class RwswWsatPts(PtsRules):
    """WSAT's stop rules on the RWSW PTS's applied test workload, and the departures."""

    oio = ""

    def deviations(self, kind: TestType, options, revision) -> List[str]:
        v = stored_values(kind, options)
        if v.get("rwsw_wsat_streams", "mixed") == "each":  # one stream a job: nothing of one job's mixing applies
            out = common_deviations(kind.name) + wl.workload_deviations(kind.name, options,
                                                                        v["rwsw_streams_share"])[1:]
            out += each_deviations(kind.name, v)
        else:
            out = common_deviations(kind.name) + wl.workload_deviations(kind.name, options, v["rwsw_streams_share"])
            out += self._coupling(kind.name, v)
        if v["rwsw_wsat_interval"] != PTS_INTERVAL_S:
            out.append(f"{kind.name} reports every {v['rwsw_wsat_interval']} s instead of WSAT's {PTS_INTERVAL_S} s")
        return out

    @staticmethod
    def _coupling(name: str, v) -> List[str]:
        """Where one fio job cannot hold the dominant streams exactly (:func:`~.applied.coupling_note`)."""
        if not v["rwsw_workload"]:
            return []
        try:
            cap = load_capture(v["rwsw_workload"])
        except Exception:  # noqa: BLE001 - the capture may be gone when a result is read later
            return []
        return [f"{name}: {n}" for n in applied.coupling_note(dominant_streams(cap.streams, v["rwsw_streams_share"]))]

    def planned_deviations(self, kind: TestType, options, revision) -> List[str]:
        """Before the run: limits that depart from WSAT's stop if they end the run."""
        v = stored_values(kind, options)
        out = []
        if v["rwsw_wsat_time"] < PTS_TIME_S:
            out.append(f"rwsw-wsat time limit {v['rwsw_wsat_time']} s is below 24 h: a deviation if it ends the run "
                       "before 4x the capacity is written")
        tgbw = v["rwsw_wsat_tgbw"]
        if not (tgbw.endswith("x") and float(tgbw[:-1]) >= PTS_FILLS):
            out.append(f"rwsw-wsat TGBW limit {tgbw} may be below 4x the capacity: a deviation if it ends the run "
                       "before 24 h")
        if v["rwsw_wsat_steady"] and v["rwsw_wsat_steady_spacing"] != PTS_SPACING_S:
            out.append(f"rwsw-wsat steady-state stop on points {v['rwsw_wsat_steady_spacing']} s apart instead of "
                       "30 min: a deviation if it ends the run")
        return out

    def result_deviations(self, kind: TestType, test: TestRun, options, revision, capacity: int) -> List[str]:
        """The capture's flushes and discards (:func:`~.workload.side_deviations`); WSAT's stop: 24 h or 4x the
        capacity written, an earlier limit that ended the run departs."""
        side = wl.side_deviations(test.key, test.params)
        if test.status != "complete":
            return side
        return side + self._stop_deviations(kind, test, options, capacity)

    def _stop_deviations(self, kind: TestType, test: TestRun, options, capacity: int) -> List[str]:
        v = stored_values(kind, options)
        reason = test.stop_reason
        if reason.startswith("time limit") and v["rwsw_wsat_time"] < PTS_TIME_S:
            return [f"{test.key}: stopped by its time limit of {v['rwsw_wsat_time']} s, before 24 h or 4x the "
                    "capacity written (WSAT's stop)"]
        if reason.startswith("TGBW") and _fills(v["rwsw_wsat_tgbw"], capacity) < PTS_FILLS:
            return [f"{test.key}: stopped by its TGBW limit of {v['rwsw_wsat_tgbw']}, before 24 h or 4x the "
                    "capacity written (WSAT's stop)"]
        spacing = test.params.get("steady_spacing", "")
        if reason.startswith("steady state") and spacing != str(PTS_SPACING_S):
            return [f"{test.key}: stopped at steady state judged on points {spacing} s apart, not 30 min"]
        if reason.startswith(UNHELD):
            return [f"{test.key}: stopped early for a steady state that its stored figures do not hold"]
        return []


class RwswWsatTest(TestType):
    pts = RwswWsatPts()
    name = "rwsw-wsat"
    title = "Real-World Workload WSAT (applied test workload)"
    short = "RWSW-WSAT"
    order = 91
    view = "tkperf.testtypes.realworld.wsatview:RwswWsatView"
    options = OptionSet(ro.RwswWsatSettings, ro.WSAT_OPTIONS)

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        cfg = opts.of(ro.RwswWsatSettings)
        cap, streams = wl.dominant(opts)
        refuse_without_writes(cfg.workload, streams)
        if cfg.wsat_streams == "each":
            each = segment_streams(streams)
            return [self._plan(opts, capacity, cap, (replace(s, share=1.0, byte_share=1.0),),
                               segment_key(k, s), {"segment": f"{k + 1} of {len(each)}", "segment_stream": s.key,
                                                   "segment_share": repr(s.share)})
                    for k, s in enumerate(each)]
        return [self._plan(opts, capacity, cap, streams, self.name, {})]

    def _plan(self, opts: Options, capacity: int, cap, streams, key: str, extra: Dict[str, str]) -> Plan:
        """One WSAT segment of ``streams`` (the applied workload, or one stream on its own)."""
        cfg = opts.of(ro.RwswWsatSettings)
        mix = wl.mixed(streams, cap)
        job = wl.job(mix, opts.numjobs, opts.iodepth, cfg.wsat_time, JOB)
        shape = Stream(job, cfg.wsat_interval, stop_bytes=tgbw_bytes(cfg.wsat_tgbw, capacity),
                       steady_stop=cfg.wsat_steady, steady_after_bytes=floor_bytes(capacity), series=SERIES,
                       steady_spacing_s=cfg.wsat_steady_spacing,
                       point_s=point_seconds(cfg.wsat_steady_spacing))
        return Plan(key=key, shape=shape, wipc=False,
                    tracking=Tracking(JOB, "iops", "applied workload IOPS per interval"),
                    params={**wl.params(opts, cap, streams, mix), "numjobs": str(opts.numjobs),
                            "iodepth": str(opts.iodepth), "interval": str(cfg.wsat_interval),
                            "time_limit": str(cfg.wsat_time), "tgbw": cfg.wsat_tgbw,
                            "steady_stop": "true" if cfg.wsat_steady else "false",
                            "steady_spacing": str(shape.steady_every * cfg.wsat_interval),
                            **point_params(shape.point_intervals * cfg.wsat_interval), **extra})

    def blocks(self, opts: Options) -> Blocks:
        mix = wl.mixed(wl.dominant(opts)[1])
        return Blocks(mix.smallest, mix.largest)

    def headline(self, test: TestRun) -> List[Figure]:
        s = test.series.get(SERIES)
        if s is None or not len(s):
            return []
        values = s.column("iops")
        tail = values[-TAIL:]
        return [Figure("first_interval_iops", "first", float(values[0]), "IOPS"),
                Figure(f"last_{TAIL}_intervals_iops", f"last {TAIL}", float(tail.sum() / tail.size), "IOPS"),
                Figure("gb_written", "written", float(s.column("io_bytes").sum()) / 1e9, "GB", "", "{:,.2f}")]
