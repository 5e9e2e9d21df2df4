"""Time ``tkperf history`` over a year of nightly results of one drive.

Builds N results (default 365) of one drive from one real result
(examples/example-ssd.xml, a recorded run on a loop device): night ``i``
is the example with every round's IOPS and MB/s scaled by ``1 + 2%
jitter`` (mean latency by its inverse), a step of -15% from night
N - 60 on, and its start ``i`` days after the first.  The files are
written through tkperf's own ``store.save`` (not timed).

Then, each timed in a fresh child process (as a cron job or a user
would run it, imports included):

1. the first build: ``tkperf history DIR --json`` with no index yet
   (every file parsed, the SQLite index written, change points found);
2. an update after one more night: one more file, the same command
   (the index re-reads that file only);
3. the same update with ``--outdir``: the HTML page and an SVG plot per figure.

Aims: first build under 10 s, update under 1 s.  Also checks that the
planted step is the one change point of the RND 4k W IOPS trend.

    python3 benchmarks/history.py [--nights N] [--out DIR]
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from tkperf import store  # noqa: E402
from tkperf.model.results import IoStats, RunResult  # noqa: E402

EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
START = datetime(2026, 1, 1, 1, 30, tzinfo=timezone.utc)
STEP = 0.85


def _scale(stats: IoStats, factor: float) -> IoStats:
    return dataclasses.replace(stats, iops=stats.iops * factor, bw_bytes=stats.bw_bytes * factor,
                               lat_mean_us=stats.lat_mean_us / factor)


def night(run: RunResult, i: int, factor: float) -> RunResult:
    run = copy.deepcopy(run)
    run.device = dataclasses.replace(run.device, serial="SN-BENCH-0001", model="EXAMPLE SSD")
    run.name = f"nightly-{i:03d}"
    run.started = (START + timedelta(days=i)).isoformat()
    for t in run.tests:
        t.rounds = [dataclasses.replace(r, workloads=tuple(
            dataclasses.replace(w, read=_scale(w.read, factor), write=_scale(w.write, factor))
            for w in r.workloads)) for r in t.rounds]
    return run


def write_nights(base: RunResult, folder: str, first: int, last: int, step_at: int) -> None:
    rng = np.random.default_rng(365)
    jitter = 1.0 + 0.02 * rng.standard_normal(last + 1)
    for i in range(first, last + 1):
        factor = float(jitter[i]) * (STEP if i >= step_at else 1.0)
        day = os.path.join(folder, f"nightly-{i:03d}")
        os.makedirs(day, exist_ok=True)
        store.save(night(base, i, factor), os.path.join(day, f"nightly-{i:03d}.xml"))


#: CPU seconds (user + system) of each timed child: the wall time on a shared, busy host is a multiple of it.
CPU: dict = {}


def timed(argv: list) -> tuple:
    """(seconds, stdout) of ``tkperf ARGV`` in a child process; its CPU seconds in :data:`CPU`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tkperf", *argv], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[" ".join(argv)] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if proc.returncode != 0:
        sys.exit(f"tkperf {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return seconds, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--out", help="keep the results here (default: a temporary directory, removed)")
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    if args.tiny:
        args.nights = 64  # the step is planted 60 nights before the last
    folder = args.out or tempfile.mkdtemp(prefix="tkperf-history-bench-")
    os.makedirs(folder, exist_ok=True)
    base = store.load(EXAMPLE)
    step_at = args.nights - 60
    t0 = time.perf_counter()
    write_nights(base, folder, 0, args.nights - 1, step_at)
    print(f"wrote {args.nights} results in {time.perf_counter() - t0:.1f} s (not timed below): {folder}")
    try:
        first, out = timed(["history", folder, "--json"])
        first_cpu_s = CPU[f"history {folder} --json"]
        data = json.loads(out)
        write_nights(base, folder, args.nights, args.nights, step_at)
        update, out2 = timed(["history", folder, "--json"])
        update_cpu = CPU[f"history {folder} --json"]
        write_nights(base, folder, args.nights + 1, args.nights + 1, step_at)  # one more night, with its pages
        pages_argv = ["history", folder, "--outdir", os.path.join(folder, "pages")]
        pages, _ = timed(pages_argv)
        pages_cpu = CPU[" ".join(pages_argv)]
        warm, _ = timed(["history", folder, "--json"])
    finally:
        if not args.out:
            shutil.rmtree(folder, ignore_errors=True)
    trend = next(t for t in data["devices"][0]["trends"] if t["figure"] == "rnd_4k_write_iops")
    found = [c["index"] for c in trend["changes"]]
    stats = json.loads(out2)["update"]
    first_cpu = first_cpu_s
    print(f"first build ({args.nights} results, no index):   {first:6.2f} s   (CPU {first_cpu:.2f} s; aim < 10 s)")
    print(f"update after one more night:               {update:6.2f} s   (CPU {update_cpu:.2f} s; aim < 1 s; "
          f"added {stats['added']}, unchanged {stats['unchanged']})")
    print(f"nothing new (index only):                  {warm:6.2f} s")
    print(f"update with HTML page and SVG plots:       {pages:6.2f} s   (CPU {pages_cpu:.2f} s; "
          f"one more night, {len(data['devices'][0]['trends'])} plots; aim < 1 s)")
    print(f"planted step at night {step_at}: change points of RND 4k W IOPS at {found} "
          f"({'right' if found == [step_at] else 'WRONG'})")
    every = sorted({c["index"] for t in data["devices"][0]["trends"] for c in t["changes"]})
    print(f"change points over all {len(data['devices'][0]['trends'])} trends at nights {every}")
    return 0 if found == [step_at] else 1


if __name__ == "__main__":
    sys.exit(main())
