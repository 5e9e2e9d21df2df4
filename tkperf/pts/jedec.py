"""The JEDEC enterprise workload (JESD219, as IBM's 2012 consistency paper
runs it) as fio runs it: its transfer-size mix, its zones and one job of
it.  The consistency test's ``jedec`` workload and CBW run it."""
from __future__ import annotations

from tkperf.fio.jobs import FioJob

#: The JEDEC enterprise workload's transfer-size mix (JESD219), as fio's bssplit (size/percent).
JEDEC_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
#: 50% of the I/O to 5% of the range, 30% to 15%, 20% to 80%.
JEDEC_ZONED = "zoned:50/5:30/15:20/80"
#: The largest transfer of the mix.
JEDEC_LARGEST = 64 * 1024


def jedec_job(name: str, mix: int, runtime: int, tc: int, qd: int) -> FioJob:
    """The JEDEC enterprise workload at read share ``mix`` (0 or 40)."""
    return FioJob(name=name, rw="randrw" if mix else "randwrite", bs=4096, rwmixread=mix, runtime=runtime,
                  numjobs=tc, iodepth=qd,
                  extra=(("bssplit", JEDEC_BSSPLIT), ("random_distribution", JEDEC_ZONED), ("refill_buffers", "1")))
