"""The PTS tests, one module each, all with the same small interface.

Each module has ``NAME`` and ``specs(opts) -> list[TestSpec]``: what to run
in every round and which figure tracks steady state.  The runner
(:mod:`tkperf.runner`) does the rest: purge, WIPC, the round loop, the
steady-state check and saving after every round.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from tkperf.fio import FioJob
from tkperf.options import RunOptions


@dataclass(frozen=True)
class TestSpec:
    """One test to run: (for TP, one block size of the test)."""
    __test__ = False  # not a pytest class, despite the name

    name: str
    key: str
    title: str
    tracking_workload: str
    tracking_metric: str
    tracking_label: str
    jobs: Tuple[FioJob, ...]
    params: Dict[str, str] = field(default_factory=dict)
    wipc: bool = True
    stream: bool = False  # WSAT: one continuous fio job reported per interval


def all_specs(opts: RunOptions) -> List[TestSpec]:
    from tkperf.tests_pts import iops, latency, throughput, writesat

    modules = {m.NAME: m for m in (iops, throughput, latency, writesat)}
    out: List[TestSpec] = []
    for name in opts.tests:
        out.extend(modules[name].specs(opts))
    return out
