"""``--dry-run``: the fio job files and the estimated duration, touching nothing."""
from __future__ import annotations

from typing import List

from tkperf.fio import FioSettings, job_file
from tkperf.options import RunOptions
from tkperf.precondition import wipc_job
from tkperf.results import DeviceInfo
from tkperf.tests_pts import all_specs

# fio leaves about this much between stonewalled workloads (its scheduler
# polls every 100 ms), measured with fio 3.33; used only for the estimate.
FIO_GAP_S = 0.3


def _hours(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def describe(dev: DeviceInfo, opts: RunOptions, settings: FioSettings) -> List[str]:
    lines: List[str] = [f"# dry run: nothing is written to {dev.path} "
                        f"({dev.size_bytes / 1e9:.1f} GB, {dev.kind})", ""]
    low = high = 0.0
    wipc_bytes = 0
    for spec in all_specs(opts):
        lines.append(f"# --- {spec.key}: purge ({opts.purge})"
                     + (f", WIPC {opts.wipc_loops}x capacity" if spec.wipc and opts.wipc_loops else ""))
        if spec.wipc and opts.wipc_loops:
            wipc_bytes += opts.wipc_loops * dev.size_bytes
            lines.append(job_file(settings, [wipc_job(opts.wipc_loops, opts.iodepth)]))
        if spec.stream:
            lines.append(f"# one continuous job, reported every {opts.wsat_interval} s, stopping at "
                         f"{_hours(opts.wsat_time)} or {opts.tgbw_bytes(dev.size_bytes) / 1e9:.1f} GB "
                         "written" + (" or steady state" if opts.wsat_steady else ""))
            high += opts.wsat_time
            low += min(opts.wsat_time, opts.window * opts.wsat_interval)
        else:
            per_round = sum(j.runtime + FIO_GAP_S for j in spec.jobs)
            first = min(opts.window, opts.max_rounds)
            lines.append(f"# each round: {len(spec.jobs)} workloads, about {_hours(per_round)}; "
                         f"{first} to {opts.max_rounds} rounds")
            low += first * per_round
            high += opts.max_rounds * per_round
        lines.append(job_file(settings, spec.jobs))
    lines.append(f"# estimated duration: {_hours(low)} to {_hours(high)} of fio workloads, plus the "
                 f"purges and {wipc_bytes / 1e9:.1f} GB of preconditioning writes "
                 f"({_hours(wipc_bytes / 500e6)} at 500 MB/s)")
    return lines
