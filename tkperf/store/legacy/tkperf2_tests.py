"""The tests of an original TKperf file as tkperf test runs.

Every matrix is checked against the shape TKperf's source gives it before a
number is taken; each number then lands in the workload tkperf's own test
type would have measured it in (``rnd-4k-0-100``, ``seq-1024k-w`` ...), so
the test types' views, headline figures, ``show``, ``check`` and
``compare`` work on imported runs unchanged.  Units: IOPS as IOPS, TP from
fio's KB/s (1024 bytes) to bytes per second, latencies in microseconds as
TKperf kept them.  The element texts stay in the test's data as
``tkperf2.<element>``, so nothing the file held is lost.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.errors import ResultFileError
from tkperf.model.names import WSAT_SERIES, iops_matrix_params, iops_workload, tp_workload, wsat_workload
from tkperf.model.results import IoStats, PurgeRecord, Round, TestRun, Workload, format_bs, mix_label
from tkperf.model.series import Series
from tkperf.store.legacy.tkperf2 import OldTest

K = 1024
IOPS_BS = (1024 * K, 128 * K, 64 * K, 32 * K, 16 * K, 8 * K, 4 * K, 512)
IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
LAT_BS = (8 * K, 4 * K, 512)
LAT_MIXES = (100, 65, 0)
TP_BS = (1024 * K, 64 * K, 8 * K, 4 * K, 512)
HDD_IOPS_BS = (64 * K, 16 * K, 4 * K)
HDD_IOPS_MIXES = (100, 50, 0)
HDD_TP_BS = (1024 * K, 4 * K)
#: TKperf's limits: 25 rounds until steady, WSAT one-minute rounds for 24 h, 128 HDD zones.
MAX_ROUNDS = 25
WSAT_MAX = 60 * 24
HDD_ROUNDS = 128
#: Seconds per workload where the file records none (TKperf 1.x fixed it; 2.x's -rt default).
DEFAULT_RUNTIME = 60
#: Larger figures (IOPS, KB/s, us) are no measurement: they would overflow on the way to bytes.
LARGEST = 1e15
WSAT_COLUMNS = ("fio_s", "io_bytes", "iops", "lat_min_us", "lat_max_us", "lat_mean_us")

NOT_RECORDED = "not recorded"
#: The purge before an SSD test: TKperf ran one, its file says neither how nor whether it worked.
PURGE = PurgeRecord(requested="secure erase (TKperf, before the test)", method=NOT_RECORDED, seconds=0.0,
                    pts_purge=False,
                    note="not recorded: original TKperf files keep neither the method nor the outcome")


@dataclass(frozen=True)
class Settings:
    """What one test ran with: TC, QD, seconds per workload (and whether the file says so)."""

    numjobs: Optional[int]
    iodepth: Optional[int]
    runtime: int
    runtime_recorded: bool


@dataclass(frozen=True)
class FileSteady:
    """A test's own steady-state record, rounds counted from 0 as TKperf did."""

    rounds: Tuple[int, ...]
    values: Tuple[float, ...]
    slope: Optional[Tuple[float, float]]
    average: Optional[float]
    reached: Optional[bool]


@dataclass
class Imported:
    """One tkperf test made from a TKperf test, and what to hold its steady state against:
    the file's record, the workload and metric TKperf tracked, and the unit factor."""

    test: TestRun
    steady: Optional[FileSteady] = None
    tracked: str = ""
    metric: str = ""
    scale: float = 1.0


class Check:
    """Shape checks of one test element; every failure names the element."""

    def __init__(self, source: str, test: OldTest) -> None:
        self.source, self.t = source, test

    def fail(self, name: str, msg: str) -> ResultFileError:
        return ResultFileError(f"{self.source}: {self.t.where(name)} {msg}")

    def need(self, name: str) -> object:
        if name not in self.t.values:
            raise self.fail("", f"has no <{name}>")
        return self.t.values[name]

    def seq(self, value: object, name: str, what: str, counts: Sequence[int] = (), lo: int = 1,
            hi: int = 0, unit: str = "entries") -> list:
        if not isinstance(value, list):
            raise self.fail(name, f"{what} is not a JSON array")
        n = len(value)
        if counts and n not in counts:
            raise self.fail(name, f"{what} has {n} {unit}; TKperf writes {' or '.join(map(str, counts))}")
        if not counts and not lo <= n <= hi:
            raise self.fail(name, f"{what} has {n} {unit}; TKperf writes {lo} to {hi}")
        return value

    def number(self, value: object, name: str, what: str, signed: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(name, f"{what} is {json.dumps(value)[:40]}, not a number")
        if not math.isfinite(value) or abs(value) > LARGEST:
            raise self.fail(name, f"{what} is not a finite number fio could have reported")
        if value < 0 and not signed:
            raise self.fail(name, f"{what} is negative ({value})")
        return float(value)

    def count(self, name: str, lo: int = 0) -> Optional[int]:
        """An optional whole number element (numjobs, iodepth, runtime, rndnr)."""
        v = self.t.values.get(name)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise self.fail(name, f"is {json.dumps(v)[:40]}, not a whole number of at least {lo}")
        return v

    def numbers(self, value: object, name: str, what: str, counts: Sequence[int] = (), lo: int = 1,
                hi: int = 0, signed: bool = False) -> List[float]:
        items = self.seq(value, name, what, counts, lo, hi, "values")
        return [self.number(v, name, f"{what}, value {i}", signed) for i, v in enumerate(items, 1)]

    def last_round(self, n_rounds: int, allowed: Sequence[int]) -> None:
        """``rndnr`` must be one of ``allowed`` for ``n_rounds`` rounds (TKperf
        counted from 0; 1.x WSAT and HDD stored the count)."""
        v = self.count("rndnr")
        if v is not None and v not in allowed:
            raise self.fail("rndnr", f"is {v}, but <roundmat> holds {n_rounds} rounds")


def file_steady(chk: Check, n_rounds: int) -> Optional[FileSteady]:
    """The test's own steady-state record; None when it holds none."""
    v = chk.t.values
    reached_key = "reachstdystate" if "reachstdystate" in v else "reachStdyState"
    if not any(k in v for k in ("stdyrounds", "stdyvalues", "stdyslope", "stdyavg", reached_key)):
        return None
    rounds = chk.seq(v.get("stdyrounds", []), "stdyrounds", "the window", lo=0, hi=n_rounds, unit="rounds")
    for r in rounds:
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < n_rounds:
            raise chk.fail("stdyrounds", f"names round {json.dumps(r)[:40]}; <roundmat> holds rounds 0 "
                                         f"to {n_rounds - 1}")
    values = chk.numbers(v.get("stdyvalues", []), "stdyvalues", "the window's values", lo=0, hi=n_rounds)
    if len(values) != len(rounds):
        raise chk.fail("stdyvalues", f"has {len(values)} values for {len(rounds)} rounds in <stdyrounds>")
    slope_list = chk.numbers(v.get("stdyslope", []), "stdyslope", "the line", lo=0, hi=2 * MAX_ROUNDS,
                             signed=True)
    if len(slope_list) % 2:
        raise chk.fail("stdyslope", f"has {len(slope_list)} values, not [slope, intercept] pairs")
    # Some 2.0 versions appended every check's pair; the last one is the verdict's.
    slope = (slope_list[-2], slope_list[-1]) if slope_list else None
    avg = v.get("stdyavg")
    average = None if avg is None else chk.number(avg, "stdyavg", "the average")
    reached = v.get(reached_key)
    if reached is not None and not isinstance(reached, bool):
        raise chk.fail(reached_key, f"is {json.dumps(reached)[:40]}, not true or false")
    return FileSteady(tuple(rounds), tuple(values), slope, average, reached)


def settings(chk: Check, cmd: Dict[str, int]) -> Settings:
    """TC, QD and runtime of a test: its elements, else the command line."""
    nj = chk.count("numjobs", 1)
    iod = chk.count("iodepth", 1)
    rt = chk.count("runtime", 1)
    return Settings(nj if nj is not None else cmd.get("numjobs"), iod if iod is not None else cmd.get("iodepth"),
                    rt if rt is not None else cmd.get("runtime", DEFAULT_RUNTIME), rt is not None)


def raw_data(t: OldTest, names: Sequence[str] = ()) -> Dict[str, str]:
    """The element texts as written, under ``tkperf2.<element>``."""
    return {f"tkperf2.{k}": text for k, text in t.texts.items() if not names or k in names}


def split_iops(total: float, mix: int) -> Tuple[float, float]:
    """TKperf kept read + write IOPS; split by the nominal mix so that read + write
    gives back exactly the total (the larger share is computed, the other subtracted)."""
    if mix >= 50:
        read = total * mix / 100
        return read, total - read
    write = total * (100 - mix) / 100
    return total - write, write


_NO_IO = IoStats()


def _workload(name: str, rw: str, bs: int, mix: int, s: Settings, read: IoStats = _NO_IO,
              write: IoStats = _NO_IO) -> Workload:
    """A workload at the test's TC/QD (0 where not recorded) and seconds."""
    return Workload(name=name, rw=rw, bs=bs, rwmixread=mix, numjobs=s.numjobs or 0, iodepth=s.iodepth or 0,
                    runtime_ms=s.runtime * 1000, read=read, write=write)


def _test(type_: str, key: str, tracking: Tuple[str, str, str], params: Dict[str, str], stop: str) -> TestRun:
    return TestRun(type=type_, key=key, tracking_workload=tracking[0], tracking_metric=tracking[1],
                   tracking_label=tracking[2], status="complete", stop_reason=stop,
                   params={k: v for k, v in params.items() if v})


def _oio(s: Settings) -> Dict[str, str]:
    return {"numjobs": str(s.numjobs or ""), "iodepth": str(s.iodepth or ""), "runtime": str(s.runtime)}


def _stop(fs: Optional[FileSteady], n: int) -> str:
    if fs is not None and fs.reached:
        return "steady state (TKperf's own check)"
    if n >= MAX_ROUNDS:
        return f"max rounds ({MAX_ROUNDS})"
    return f"{n} rounds; the file does not say why TKperf stopped"


def _matrix(chk: Check, what: str, mixes: Sequence[int], sizes: Sequence[int], cell: int, hi: int) -> list:
    """rounds x mixes x block sizes (x ``cell`` values, 0: a number); block
    sizes: all, or without 512 (TKperf drops it on 4K-native drives)."""
    rounds = chk.seq(chk.need("roundmat"), "roundmat", "the list of rounds", lo=1, hi=hi, unit="rounds")
    cols: Optional[int] = None
    out = []
    for r, rnd in enumerate(rounds, 1):
        rows = chk.seq(rnd, "roundmat", f"round {r}", counts=(len(mixes),), unit=f"R/W mixes ({what})")
        mat: list = []  # per R/W mix: a figure per block size, or a list of them (several counts)
        for mix, row in zip(mixes, rows):
            here = f"round {r}, R/W {mix_label(mix)}"
            allowed = (len(sizes), len(sizes) - 1) if sizes[-1] == 512 else (len(sizes),)
            row = chk.seq(row, "roundmat", here, counts=allowed, unit="block sizes")
            if cols is not None and len(row) != cols:
                raise chk.fail("roundmat", f"{here} has {len(row)} block sizes, the rows before it {cols}")
            cols = len(row)
            if cell:
                mat.append([chk.numbers(c, "roundmat", f"{here}, {format_bs(bs)}", counts=(cell,))
                            for bs, c in zip(sizes, row)])
            else:
                mat.append([chk.number(c, "roundmat", f"{here}, {format_bs(bs)}") for bs, c in zip(sizes, row)])
        out.append(mat)
    return out


def iops_test(chk: Check, s: Settings) -> Imported:
    mats = _matrix(chk, "IOPS", IOPS_MIXES, IOPS_BS, 0, MAX_ROUNDS)
    sizes = IOPS_BS[:len(mats[0][0])]
    chk.last_round(len(mats), (len(mats) - 1,))
    fs = file_steady(chk, len(mats))
    test = _test("iops", "iops", (iops_workload(4096, 0), "write.iops", "RND 4k 0/100 IOPS"),
                 {**iops_matrix_params(sizes, IOPS_MIXES, 0, 0, s.runtime), **_oio(s)}, _stop(fs, len(mats)))
    for i, mat in enumerate(mats, 1):
        ws = []
        for mix, row in zip(IOPS_MIXES, mat):
            for bs, total in zip(sizes, row):
                r, w = split_iops(total, mix)
                ws.append(_workload(iops_workload(bs, mix), "randrw", bs, mix, s, IoStats(iops=r), IoStats(iops=w)))
        test.rounds.append(Round(i, "", 0.0, 0.0, tuple(ws)))
    test.purge, test.data = PURGE, raw_data(chk.t)
    # TKperf tracked the next-to-last block size at 0/100: 4k, or 8k once 512 was dropped.
    return Imported(test, fs, iops_workload(sizes[-2], 0), "write.iops")


def _lat_stats(v: Sequence[float], ios: int) -> IoStats:
    return IoStats(ios=ios, lat_min_us=v[0], lat_max_us=v[1], lat_mean_us=v[2])


def lat_test(chk: Check, s: Settings) -> Imported:
    mats = _matrix(chk, "LAT", LAT_MIXES, LAT_BS, 3, MAX_ROUNDS)
    sizes = LAT_BS[:len(mats[0][0])]
    chk.last_round(len(mats), (len(mats) - 1,))
    fs = file_steady(chk, len(mats))
    one = Settings(1, 1, s.runtime, s.runtime_recorded)  # TKperf ran LAT at TC1/QD1, whatever it stored
    test = _test("lat", "lat", (iops_workload(4096, 0), "write.lat_mean_us",
                                "RND 4k 0/100 mean response time (us)"),
                 iops_matrix_params(sizes, LAT_MIXES, 1, 1, s.runtime), _stop(fs, len(mats)))
    for i, mat in enumerate(mats, 1):
        ws = []
        for mix, row in zip(LAT_MIXES, mat):
            for bs, v in zip(sizes, row):
                # [min, max, mean] in us; for 65/35 TKperf kept 0.65 x read + 0.35 x write:
                # both directions get that figure, weighted by the nominal shares.
                read = _lat_stats(v, mix) if mix else IoStats()
                write = _lat_stats(v, 100 - mix) if mix < 100 else IoStats()
                ws.append(_workload(iops_workload(bs, mix), "randrw", bs, mix, one, read, write))
        test.rounds.append(Round(i, "", 0.0, 0.0, tuple(ws)))
    test.purge, test.data = PURGE, raw_data(chk.t)
    return Imported(test, fs, iops_workload(sizes[-2], 0), "write.lat_mean_us")


def _bw(kbs: float) -> IoStats:
    return IoStats(bw_bytes=kbs * K)


def _tp_lists(chk: Check, sizes: Sequence[int], hi: int, fixed: bool) -> Tuple[List[List[List[float]]], int]:
    """Per block size [read KB/s per round, write KB/s per round]; every list as long as the first."""
    allowed = (len(sizes),) if fixed else (len(sizes), len(sizes) - 1)
    per_bs = chk.seq(chk.need("roundmat"), "roundmat", "the list of block sizes", counts=allowed,
                     unit=f"block sizes ({', '.join(format_bs(b) for b in sizes)})")
    out, n = [], 0
    for bs, entry in zip(sizes, per_bs):
        pair = chk.seq(entry, "roundmat", f"{format_bs(bs)}", counts=(2,), unit="lists (read, write)")
        lists = [chk.numbers(lst, "roundmat", f"{format_bs(bs)} {side} KB/s", counts=(n,) if n else (),
                             lo=1, hi=hi) for side, lst in zip(("read", "write"), pair)]
        n = n or len(lists[0])
        if len(lists[1]) != n:
            raise chk.fail("roundmat", f"{format_bs(bs)} has {len(lists[0])} read and {len(lists[1])} write rounds")
        out.append(lists)
    return out, n


def tp_tests(chk: Check, s: Settings) -> List[Imported]:
    lists, n = _tp_lists(chk, TP_BS, MAX_ROUNDS, False)
    chk.last_round(n, (n - 1,))
    fs = file_steady(chk, n)
    out = []
    for bs, (reads, writes) in zip(TP_BS, lists):
        name = format_bs(bs)
        w_name, r_name = tp_workload(bs, "w"), tp_workload(bs, "r")
        test = _test("tp", f"tp-{name}", (w_name, "write.bw_bytes", f"SEQ {name} 100% W MB/s"),
                     {"block_size": name, "access": "sequential", **_oio(s)},
                     _stop(fs, n) if bs == TP_BS[0] else f"{n} rounds, as many as 1024k (TKperf judged 1024k only)")
        for i, (r, w) in enumerate(zip(reads, writes), 1):
            test.rounds.append(Round(i, "", 0.0, 0.0, (_workload(w_name, "write", bs, 0, s, write=_bw(w)),
                                                       _workload(r_name, "read", bs, 100, s, read=_bw(r)))))
        test.purge = PURGE
        test.data = {"tkperf2.roundmat": json.dumps([reads, writes])}
        # TKperf judged steady state on 1024k writes and ran the other sizes as many rounds.
        if bs == TP_BS[0]:
            test.data.update(raw_data(chk.t, [k for k in chk.t.texts if k != "roundmat"]))
        out.append(Imported(test, fs if bs == TP_BS[0] else None, w_name, "write.bw_bytes", float(K)))
    return out


def wsat_test(chk: Check, s: Settings) -> Imported:
    pair = chk.seq(chk.need("roundmat"), "roundmat", "[IOPS per round, latencies per round]", counts=(2,),
                   unit="lists")
    iops = chk.numbers(pair[0], "roundmat", "IOPS per round", lo=1, hi=WSAT_MAX)
    lats = chk.seq(pair[1], "roundmat", "latencies per round", counts=(len(iops),), unit="rounds")
    lats = [chk.numbers(v, "roundmat", f"round {i} latencies [min, max, mean]", counts=(3,))
            for i, v in enumerate(lats, 1)]
    n = len(iops)
    chk.last_round(n, (n - 1, n) if n == WSAT_MAX else (n - 1,))
    name = wsat_workload("random", 4096)
    stop = "time limit (24 h of one-minute rounds)" if n >= WSAT_MAX else "TGBW limit (4x the capacity)"
    test = _test("wsat", "wsat", (name, "write.iops", "RND 4k 100% W IOPS per interval"),
                 {"block_size": "4k", "access": "random", "numjobs": str(s.numjobs or ""),
                  "iodepth": str(s.iodepth or ""), "interval": str(s.runtime), "time_limit": str(24 * 3600),
                  "tgbw": "4x", "steady_stop": "false"}, stop)
    # TKperf kept no bytes per round: 4 KiB x IOPS x seconds is what a round wrote.
    rows = [(float(s.runtime), v * s.runtime * 4096, v, lat[0], lat[1], lat[2]) for v, lat in zip(iops, lats)]
    test.series[WSAT_SERIES] = Series.from_rows(WSAT_SERIES, WSAT_COLUMNS, rows, digits=None)
    test.purge, test.data = PURGE, raw_data(chk.t)
    return Imported(test)
