"""Workload-independent preconditioning (WIPC): SEQ 128KiB 100% W (PTS 2.0
TP: the test's block size) over ``loops`` times the active range, recorded
with its duration and bandwidth.  The active range reaches fio as the
[global] ``size=`` of every job file (:func:`tkperf.engine.session.fio_settings`)."""
from __future__ import annotations

from tkperf.fio.backend import FioBackend
from tkperf.fio.jobs import FioJob
from tkperf.model.results import DeviceInfo, WipcRecord, format_bs

WIPC_BS = 128 * 1024
# fio is called hung during WIPC only if it writes slower than this.
SLOWEST_PLAUSIBLE_BPS = 1e6


def wipc_job(loops: int, iodepth: int, bs: int = WIPC_BS, size: int = 0, filename: str = "") -> FioJob:
    """The WIPC job; ``size`` (bytes) when the preconditioning range is wider
    than the tests' (``--test-range``), else the [global] range; ``filename``
    the real device when the tests' [global] target is the segments' map."""
    # One job: several jobs writing "sequentially" would interleave their streams.
    # its own target: fio's filename= in the job section replaces the [global] one
    return FioJob(name=f"wipc-seq-{format_bs(bs)}-w", rw="write", bs=bs, numjobs=1, iodepth=iodepth,
                  loops=loops, size=size, extra=(("filename", filename),) if filename else ())


def wipc(runner: FioBackend, dev: DeviceInfo, loops: int, iodepth: int, what: str,
         bs: int = WIPC_BS, size: int = 0, filename: str = "") -> WipcRecord:
    job = wipc_job(loops, iodepth, bs or WIPC_BS, size, filename)
    timeout = loops * dev.size_bytes / SLOWEST_PLAUSIBLE_BPS + 60
    (w,), wall = runner.run([job], what=f"{what} WIPC", timeout=timeout)
    seconds = w.runtime_ms / 1000.0 if w.runtime_ms else wall
    return WipcRecord(loops=loops, bs=job.bs, iodepth=iodepth, numjobs=1,
                      bytes_written=w.write.io_bytes, seconds=seconds, bw_bytes=w.write.bw_bytes)
