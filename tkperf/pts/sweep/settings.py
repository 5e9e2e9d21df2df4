"""The options a TC x QD sweep test shares, as typed values.

DIRTH, CBW and rwsw-dirth sweep thread counts and queue depths and share
these options under their own prefix (``--dirth-tc``, ``--cbw-tc``): each
type's settings subclass :class:`SweepSettings` (``opts.of(DirthSettings)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, Tuple

from tkperf.pts.sweep import structure as st


@dataclass(frozen=True)
class SweepSettings:
    """The options a sweep test (DIRTH, CBW) shares; the subclass names the prefix."""

    option_prefix: ClassVar[str] = ""

    #: Thread counts (fio numjobs).
    tc: Tuple[int, ...]
    #: Queue depths per thread (fio iodepth).
    qd: Tuple[int, ...]
    #: Seconds per sweep point.
    time: int
    #: Mean response time limit of the max IOPS point, in microseconds.
    rt_limit: int
    #: Seconds per steady-state round.
    round: int
    #: Round structure: auto, pts-2.0 or steady-sweep.
    structure: str
    #: Seconds of the pts-2.0 structure's pre-write, capture pre-write and capture.
    prewrite: int
    capture_prewrite: int
    capture: int
    #: Seconds of each round of the pts-2.0 structure's workload-dependent preconditioning.
    wdpc_round: int


@dataclass(frozen=True)
class Captures:
    """Under the PTS 2.0 structure: the timing of the captures (seconds)."""

    prewrite_s: int
    capture_prewrite_s: int
    capture_s: int
    #: The workload-dependent preconditioning's round.
    wdpc_round_s: int = st.WDPC_ROUND_S


def captures_of(cfg: SweepSettings, revision_id: str) -> Optional[Captures]:
    """The captures of a run's plan: None under the steady-sweep structure."""
    if st.resolve(cfg.structure, revision_id) != st.PTS20:
        return None
    return Captures(cfg.prewrite, cfg.capture_prewrite, cfg.capture, cfg.wdpc_round)
