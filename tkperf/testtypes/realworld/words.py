"""The words the real-world workload tests share: the public text they follow
and the departures every run of them makes."""
from __future__ import annotations

from typing import List

#: The public text (docs/rwsw-tests.rst, "Sources").
RWSW_PTS = "SNIA RWSW PTS"


def common_deviations(name: str) -> List[str]:
    """What every run of a real-world workload test departs from: it is measured
    under tkperf's PTS revision, and its capture is tkperf's own."""
    return [f"{name} follows the {RWSW_PTS} for Datacenter Storage (SNIA Technical Position, 2018), not the "
            "SNIA PTS revision this run names",
            f"{name}: the workload is a capture by tkperf capture (block-layer tracepoints or blktrace, IO "
            f"streams by access, direction and transfer size), not a capture by the {RWSW_PTS}'s reference "
            "IO capture tools"]
