"""fio job files: FioJob (one job section) and FioSettings (the [global] section).

A round is one fio process whose job sections are separated by
``stonewall``, so its workloads run back to back with no idle gap.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import List, Sequence, Tuple

from tkperf.errors import ToolError
from tkperf.model.results import PERCENTILES, format_bs


@dataclass(frozen=True)
class FioJob:
    """One job section: what tkperf asks fio to do for one workload."""

    name: str
    rw: str
    bs: int
    rwmixread: int = 0
    runtime: int = 0          # seconds, time based; 0 = run until size/loops are done
    numjobs: int = 1
    iodepth: int = 1
    loops: int = 1
    size: int = 0             # bytes; 0 = the whole target (or the active range)
    offset: int = 0           # bytes from the start of the target where the job begins
    extra: Tuple[Tuple[str, str], ...] = ()
    #: False: ``runtime`` is only a limit, and the job ends sooner when its
    #: ``io_size`` is done (see :meth:`stopping_after`).
    time_based: bool = True

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", self.name):
            raise ValueError(f"job name {self.name!r} is not a plain word")
        if self.rw not in ("read", "write", "randread", "randwrite", "randrw", "rw", "trim", "randtrim"):
            raise ValueError(f"unknown rw {self.rw!r}")
        if self.numjobs < 1 or self.iodepth < 1 or self.bs < 1:
            raise ValueError("numjobs, iodepth and bs must be positive")
        if self.offset < 0 or self.size < 0:
            raise ValueError("offset and size must not be negative")

    @property
    def planned_seconds(self) -> float:
        return float(self.runtime)

    def stopping_after(self, total_bytes: int) -> FioJob:
        """This job, ended by fio itself once its threads have moved about
        ``total_bytes``, or at its runtime if that comes first.

        ``io_size`` counts each thread's bytes.  The job is no longer time
        based: fio 3.33 ignores ``number_ios`` (and ``io_size``) when
        ``time_based`` is set and runs to the runtime regardless."""
        per_thread = max(1, -(-total_bytes // (self.bs * self.numjobs))) * self.bs
        return replace(self, time_based=False, extra=self.extra + (("io_size", str(per_thread)),))

    def one_block_size(self) -> int:
        """The job's block size when every I/O has it (0 when ``bssplit`` or a
        range of sizes in ``extra`` mixes sizes): completed bytes over it
        count completed I/Os exactly (:func:`tkperf.fio.output.cumulative_write`)."""
        mixed = {"bssplit", "bsrange", "blocksize_range", "blocksize", "bs", "bs_unaligned"}
        return 0 if any(k in mixed for k, _ in self.extra) or "," in str(self.bs) else int(self.bs)

    def spec(self) -> dict:
        """What the parser needs to label fio's report of this job."""
        read_share = {"read": 100, "randread": 100, "write": 0, "randwrite": 0, "trim": 0,
                      "randtrim": 0}.get(self.rw, self.rwmixread)
        return dict(rw=self.rw, bs=self.bs, rwmixread=read_share, numjobs=self.numjobs,
                    iodepth=self.iodepth)

    def section(self) -> List[str]:
        lines = [f"[{self.name}]", "stonewall", f"rw={self.rw}", f"bs={format_bs(self.bs)}",
                 f"numjobs={self.numjobs}", f"iodepth={self.iodepth}"]
        if self.rw in ("randrw", "rw"):
            lines.append(f"rwmixread={self.rwmixread}")
        if self.runtime:
            lines += [f"runtime={self.runtime}"] + (["time_based=1"] if self.time_based else [])
        if self.loops != 1:
            lines.append(f"loops={self.loops}")
        if self.offset:
            lines.append(f"offset={self.offset}")
        if self.size:
            lines.append(f"size={self.size}")
        lines += [f"{k}={v}" if v != "" else k for k, v in self.extra]
        return lines


@dataclass(frozen=True)
class FioSettings:
    """Options every job of a run shares."""

    filename: str
    refill_buffers: bool = False
    #: Bytes of the target every job may touch (the active range); 0: all of it.
    #: A job's own ``size`` replaces it.
    size: int = 0
    extra: Tuple[Tuple[str, str], ...] = field(default_factory=tuple)

    def global_section(self) -> List[str]:
        """The [global] section's lines."""
        lines = ["[global]", "ioengine=libaio", "direct=1", f"filename={self.filename}",
                 "group_reporting=1", "norandommap=1", "randrepeat=0",
                 # threads, not forked processes: one process to stop, and it dies with tkperf
                 "thread=1",
                 # percentiles of the response time (total latency), not only of completion
                 "lat_percentiles=1",
                 "percentile_list=" + ":".join(PERCENTILES)]
        if self.refill_buffers:
            lines.append("refill_buffers=1")
        if self.size:
            lines.append(f"size={self.size}")
        lines += [f"{k}={v}" if v != "" else k for k, v in self.extra]
        return lines


def job_file(settings: FioSettings, jobs: Sequence[FioJob]) -> str:
    lines = settings.global_section()
    for job in jobs:
        lines.append("")
        lines += job.section()
    return "\n".join(lines) + "\n"


def parse_version(text: str) -> Tuple[int, int]:
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    if not m:
        raise ToolError(f"cannot tell fio's version from {text.strip()!r}")
    return int(m.group(1)), int(m.group(2))
