"""``--dry-run``: the fio job files and the estimated duration, touching nothing."""
from __future__ import annotations

from typing import List

from tkperf.engine.options import RunOptions
from tkperf.engine.precondition import WIPC_BS, wipc_job
from tkperf.engine.runner import plan_all
from tkperf.engine.shapes import duration_rough
from tkperf.fio.jobs import FioSettings, job_file
from tkperf.model import pts
from tkperf.model.results import DeviceInfo


def describe(dev: DeviceInfo, opts: RunOptions, settings: FioSettings) -> List[str]:
    rev = opts.revision
    lines: List[str] = [f"# dry run: nothing is written to {dev.path} "
                        f"({dev.size_bytes / 1e9:.1f} GB, {dev.kind})",
                        f"# {rev.title}: OIO TC{opts.numjobs}/QD{opts.iodepth}, active range "
                        f"{opts.active_range}%" + (f", test range {pts.range_text(opts.test_bytes(dev.size_bytes))}"
                                                   if opts.test_range else "")
                        + f", write cache {opts.write_cache}", ""]
    low = high = 0.0
    wipc_bytes = 0
    for _, plan in plan_all(opts, dev.size_bytes):
        wipc = plan.wipc and opts.wipc_loops > 0
        lines.append(f"# --- {plan.key}: purge ({opts.purge})"
                     + (f", WIPC {opts.wipc_loops}x the active range" if wipc else ""))
        if wipc:
            wipc_bytes += opts.wipc_loops * opts.active_bytes(dev.size_bytes)
            lines.append(job_file(settings, [wipc_job(opts.wipc_loops, opts.iodepth, plan.wipc_bs or WIPC_BS,
                                                      opts.wipc_size(dev.size_bytes))]))
        est = plan.shape.estimate(opts, dev.size_bytes)
        lines.extend(est.lines)
        low += est.low_s
        high += est.high_s
        lines.append(job_file(settings, est.jobs))
    lines.append(f"# estimated duration: {duration_rough(low)} to {duration_rough(high)} of fio workloads, plus the "
                 f"purges and {wipc_bytes / 1e9:.1f} GB of preconditioning writes "
                 f"({duration_rough(wipc_bytes / 500e6)} at 500 MB/s)")
    return lines
