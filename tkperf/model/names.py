"""The names built-in test types give their workloads and series in a
result file: part of the file's vocabulary, so they live with the model.

The test types name what they run with these (:mod:`tkperf.testtypes.iops`,
``throughput``, ``writesat``, ``hdd_iops``, ``hdd_zones``), and the reader
of the original TKperf's files (:mod:`tkperf.store.legacy`) gives the tests it
rebuilds the same names, so reports and comparisons treat both alike.
"""
from __future__ import annotations

from typing import Dict, Sequence

from tkperf.model.results import format_bs, mix_label

#: The series a Write Saturation test keeps its intervals in.
WSAT_SERIES = "intervals"


def iops_workload(bs: int, rwmixread: int) -> str:
    """The workload of one cell of a random-I/O matrix: ``rnd-4k-65-35``."""
    return f"rnd-{format_bs(bs)}-{rwmixread}-{100 - rwmixread}"


def iops_matrix_params(block_sizes: Sequence[int], mixes: Sequence[int], numjobs: int, iodepth: int,
                       runtime: int) -> Dict[str, str]:
    """The parameters a random-I/O matrix test (IOPS, LAT) stores."""
    return {"block_sizes": ",".join(format_bs(b) for b in block_sizes),
            "mixes": ",".join(mix_label(m) for m in mixes),
            "access": "random", "numjobs": str(numjobs), "iodepth": str(iodepth),
            "runtime": str(runtime)}


def tp_workload(bs: int, side: str) -> str:
    """``seq-1024k-w`` (side ``w``) or ``seq-1024k-r`` (side ``r``)."""
    if side not in ("w", "r"):
        raise ValueError(f"side must be w or r, not {side!r}")
    return f"seq-{format_bs(bs)}-{side}"


def wsat_workload(access: str, bs: int) -> str:
    """The stream's job name: ``wsat-rnd-4k-0-100`` (the PTS's), ``wsat-seq-128k-0-100`` ..."""
    return f"wsat-{'seq' if access == 'sequential' else 'rnd'}-{format_bs(bs)}-0-100"


def hdd_cell(bs: int, mix: int, qd: int) -> str:
    """The workload of one cell of the HDD IOPS matrix: ``rnd-4k-70-30-qd16``."""
    return f"{iops_workload(bs, mix)}-qd{qd}"


def hdd_zone(index: int, side: str) -> str:
    """The workload of zone ``index`` (1 = outermost) in one direction: ``zone-001-w``."""
    return f"zone-{index:03d}-{side}"
