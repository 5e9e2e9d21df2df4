"""The HDD mode tests of an original TKperf file: IOPS and TP over 128 zones
of the disk (a round is one zone, outer to inner), as tkperf's ``hdd-iops``
and ``hdd-zones`` tests.

``hdd-iops`` averages over every zone (its window is all rounds, and its
20/10 verdict says whether the zones agree); ``hdd-zones`` gets each zone's
place as TKperf computed it (capacity / zones, aligned down to 4 KiB) and
one instance per block size: ``hdd-zones`` (1024k, comparable with tkperf's
own) and ``hdd-zones-4k``.
"""
from __future__ import annotations

import json
from typing import List, Tuple

from tkperf.model.names import hdd_cell as cell_name
from tkperf.model.names import hdd_zone as zone_name
from tkperf.model.results import IoStats, Round, format_bs
from tkperf.model.steadystate import evaluate
from tkperf.store.legacy.tkperf2_tests import (
    HDD_IOPS_BS,
    HDD_IOPS_MIXES,
    HDD_ROUNDS,
    HDD_TP_BS,
    Check,
    Imported,
    Settings,
    _bw,
    _matrix,
    _oio,
    _test,
    _tp_lists,
    _workload,
    raw_data,
    split_iops,
)


def hdd_iops_test(chk: Check, s: Settings) -> Imported:
    mats = _matrix(chk, "HDD IOPS", HDD_IOPS_MIXES, HDD_IOPS_BS, 0, HDD_ROUNDS)
    chk.last_round(len(mats), (len(mats), len(mats) - 1))
    qd = s.iodepth or 0
    params = {"block_sizes": "4k,16k,64k", "mixes": "100/0,50/50,0/100", "depths": str(qd),
              "access": "random", **_oio(s)}
    test = _test("hdd-iops", "hdd-iops", (cell_name(4096, 100, qd), "read.iops", f"RND 4k 100/0 QD{qd} IOPS"),
                 params, f"all {len(mats)} zones (TKperf: a round is one zone of the disk)")
    for i, mat in enumerate(mats, 1):
        ws = []
        for mix, row in zip(HDD_IOPS_MIXES, mat):
            for bs, total in zip(HDD_IOPS_BS, row):
                r, w = split_iops(total, mix)
                ws.append(_workload(cell_name(bs, mix, qd), "randrw", bs, mix, s, IoStats(iops=r), IoStats(iops=w)))
        test.rounds.append(Round(i, "", 0.0, 0.0, tuple(ws)))
    # The figures are averages over every zone: the window is all rounds.
    pairs = test.tracking_values()
    test.steady = evaluate([p[0] for p in pairs], [p[1] for p in pairs], max(2, len(pairs)))
    test.data = raw_data(chk.t)
    return Imported(test)


def zone_placement(capacity: int, zones: int) -> List[Tuple[int, int]]:
    """Where TKperf put its HDD zones: the capacity / zones, aligned down to 4 KiB, back to back."""
    if capacity <= 0:  # an unknown capacity: where the zones were cannot be said
        return []
    step = capacity // zones
    step -= step % 4096
    return [(i * step, step) for i in range(zones)]


def hdd_tp_tests(chk: Check, s: Settings, capacity: int) -> List[Imported]:
    lists, n = _tp_lists(chk, HDD_TP_BS, HDD_ROUNDS, True)
    placed = zone_placement(capacity, n)
    out = []
    for bs, (reads, writes) in zip(HDD_TP_BS, lists):
        name = format_bs(bs)
        key = "hdd-zones" if bs == HDD_TP_BS[0] else f"hdd-zones-{name}"
        test = _test("hdd-zones", key, ("", "", ""),
                     {"access": "sequential", "block_size": name, **_oio(s), "zones": str(n), "passes": "1",
                      "span_bytes": str(placed[-1][0] + placed[-1][1])}, f"all {n} zones")
        for index, (side, rw, values) in enumerate((("w", "write", writes), ("r", "read", reads)), 1):
            ws = tuple(_workload(zone_name(z, side), rw, bs, 0 if side == "w" else 100, s,
                                 **{rw: _bw(v)}) for z, v in enumerate(values, 1))
            test.rounds.append(Round(index, "", 0.0, 0.0, ws))
        test.data = {"zones.capacity": str(capacity), "tkperf2.roundmat": json.dumps([reads, writes]),
                     "phase.1": f"SEQ {name} 100% W of every zone (TKperf read, then wrote, each zone in turn)",
                     "phase.2": f"SEQ {name} 100% R of every zone (TKperf read, then wrote, each zone in turn)"}
        for z, (offset, size) in enumerate(placed, 1):
            test.data[f"zone.{z}.offset"], test.data[f"zone.{z}.size"] = str(offset), str(size)
        out.append(Imported(test))
    return out
