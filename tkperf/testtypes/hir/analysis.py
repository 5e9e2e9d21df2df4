"""The host idle recovery figures, read from a stored test.

* **Baseline**: the steady-state IOPS of RND 4KiB W, the average of the
  tracking figure over the measurement window (the steady-state window, or
  the last rounds when steady state was not reached).
* **Write-period IOPS** of an idle setting: the mean over its write
  periods of each period's I/Os over the set write time (the lead-in of the
  first period not counted; a period cut short counts over its own length
  and is left out of the mean).
* **Recovery gain**: that mean over the baseline, as a percentage above
  it (+100% = twice the baseline).
* **Host-visible IOPS**: the write-period IOPS times write / (write +
  idle): what the host got over the cycle, idle time included.
* **Return level**: the mean IOPS of the last quarter (at least one) of
  the return's intervals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from tkperf import api
from tkperf.pts import stored
from tkperf.testtypes.hir import iopslog
from tkperf.testtypes.hir.shape import LOGGED, PERIODS, RETURN, setting_rounds


@dataclass(frozen=True, eq=False)
class SettingResult:
    """One idle setting as measured: its write periods (arrays, one entry per
    period) and its return intervals."""

    number: int
    idle_s: int
    round_index: int
    start_s: np.ndarray
    length_s: np.ndarray
    gap_s: np.ndarray
    iops: np.ndarray
    kind: np.ndarray
    return_end_s: np.ndarray
    return_iops: np.ndarray
    logged: Tuple[float, float]

    @property
    def counted(self) -> np.ndarray:
        """The periods of the mean: whole ones and the lead-in's last part."""
        return self.kind != iopslog.PART

    @property
    def periods(self) -> int:
        return int(np.count_nonzero(self.counted))

    @property
    def mean_iops(self) -> Optional[float]:
        v = self.iops[self.counted]
        return float(v.mean()) if v.size else None

    def host_iops(self, write_s: float) -> Optional[float]:
        m = self.mean_iops
        return None if m is None else m * write_s / (write_s + self.idle_s)

    def gain_pct(self, baseline: Optional[float]) -> Optional[float]:
        m = self.mean_iops
        if m is None or not baseline:
            return None
        return (m / baseline - 1.0) * 100.0

    @property
    def return_level(self) -> Optional[float]:
        v = self.return_iops
        if not v.size:
            return None
        return float(v[-max(1, v.size // 4):].mean())

    @property
    def return_start_s(self) -> float:
        """When the return began, seconds since the setting's start."""
        if not self.return_end_s.size:
            return float("nan")
        first = float(self.return_end_s[0])
        step = float(self.return_end_s[1] - self.return_end_s[0]) if self.return_end_s.size > 1 else 0.0
        return first - step if step > 0 else first

    def whole_lengths(self) -> np.ndarray:
        """Measured lengths of the whole write periods (lead-in and cut-short ones left out)."""
        return self.length_s[self.kind == iopslog.WHOLE]


def baseline(test: api.TestRun) -> Optional[float]:
    """The steady-state IOPS of the test's rounds (its measurement window)."""
    if not test.tracking_workload:
        return None
    return test.window_average(test.tracking_workload, test.tracking_metric)


def _logged(test: api.TestRun, key: str) -> Tuple[float, float]:
    got = stored.pair(test, key)
    return got if got is not None else (float("nan"), float("nan"))


def settings(test: api.TestRun) -> List[SettingResult]:
    """Every idle setting the test measured, in the order it ran."""
    periods, back = test.series.get(PERIODS), test.series.get(RETURN)
    have = {r.index for r in test.rounds}
    out = []
    for k, idle, index in setting_rounds(test):
        if index not in have:
            continue
        if periods is not None and len(periods):
            mine = periods.column("setting") == k
            p = {c: periods.column(c)[mine] for c in periods.columns}
        else:
            p = {c: np.zeros(0) for c in ("start_s", "length_s", "gap_s", "iops", "kind")}
        if back is not None and len(back):
            mine = back.column("setting") == k
            r_end, r_iops = back.column("end_s")[mine], back.column("iops")[mine]
        else:
            r_end = r_iops = np.zeros(0)
        out.append(SettingResult(k, idle, index, p["start_s"], p["length_s"], p["gap_s"], p["iops"],
                                 p["kind"].astype(np.int64), r_end, r_iops,
                                 _logged(test, f"{LOGGED}{k}")))
    return out


def write_s(test: api.TestRun) -> float:
    text = test.params.get("write", "")
    return float(text) if text.isdigit() and int(text) > 0 else 5.0


def cycles(test: api.TestRun) -> int:
    text = test.params.get("cycles", "")
    return int(text) if text.isdigit() else 0


def steady_round_indices(test: api.TestRun) -> List[int]:
    """The rounds of the steady-state loop (those with the tracking job)."""
    return [r.index for r in test.rounds if r.workload(test.tracking_workload) is not None]
