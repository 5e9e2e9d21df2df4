"""Workload-independent preconditioning (WIPC): SEQ 128KiB 100% W over
``loops`` times the user capacity, recorded with its duration and bandwidth."""
from __future__ import annotations

from tkperf.fio.backend import FioBackend
from tkperf.fio.jobs import FioJob
from tkperf.model.results import DeviceInfo, WipcRecord

WIPC_BS = 128 * 1024
# fio is called hung during WIPC only if it writes slower than this.
SLOWEST_PLAUSIBLE_BPS = 1e6


def wipc_job(loops: int, iodepth: int) -> FioJob:
    # One job: several jobs writing "sequentially" would interleave their streams.
    return FioJob(name="wipc-seq-128k-w", rw="write", bs=WIPC_BS, numjobs=1, iodepth=iodepth,
                  loops=loops)


def wipc(runner: FioBackend, dev: DeviceInfo, loops: int, iodepth: int, what: str) -> WipcRecord:
    job = wipc_job(loops, iodepth)
    timeout = loops * dev.size_bytes / SLOWEST_PLAUSIBLE_BPS + 60
    (w,), wall = runner.run([job], what=f"{what} WIPC", timeout=timeout)
    seconds = w.runtime_ms / 1000.0 if w.runtime_ms else wall
    return WipcRecord(loops=loops, bs=WIPC_BS, iodepth=iodepth, numjobs=1,
                      bytes_written=w.write.io_bytes, seconds=seconds, bw_bytes=w.write.bw_bytes)
